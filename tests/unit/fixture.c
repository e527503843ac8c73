// SPDX-License-Identifier: GPL-2.0-only
/*
 * The shared fixture of the data-path unit tests (see fixture.h): the
 * program's maps, the checks every run makes, the fixture runner and the
 * test runner behind FIXTURE_MAIN. The testbed and the loaded program
 * are set up by fixture_setup.c.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "csum_oracle.h"
#include "fixture.h"
#include "loader.h"

const uint8_t mac_lan0[ETH_ALEN] = MAC_LAN0;
const uint8_t mac_wan0[ETH_ALEN] = MAC_WAN0;
const char big_payload[1480];

struct xnat_bpf *skel;
int prog_fd, flows_fd, stats_fd, config_fd, tx_fd;
int if_lan, if_wan;
int ncpus;
uint16_t learned; /* the port/id LEARNED stands for */

const char *verdict_name(int v)
{
	switch (v) {
	case XDP_ABORTED: return "XDP_ABORTED";
	case XDP_DROP: return "XDP_DROP";
	case XDP_PASS: return "XDP_PASS";
	case XDP_TX: return "XDP_TX";
	case XDP_REDIRECT: return "XDP_REDIRECT";
	}
	return "?";
}

const char *reason_name(int r)
{
	return r >= 0 && r < XNAT_REASON_MAX ? reasons[r].name : "?";
}

static void hexdump_line(const char *tag, size_t off, const uint8_t *b,
			 size_t len)
{
	size_t i;

	fprintf(stderr, "    %s %04zx:", tag, off);
	for (i = off; i < off + 16 && i < len; i++)
		fprintf(stderr, " %02x", b[i]);
	fputc('\n', stderr);
}

/* Compare frames; on a difference print the differing 16-byte lines. */
bool expect_bytes(const uint8_t *act, size_t act_len,
		  const uint8_t *exp, size_t exp_len, const char *what)
{
	size_t off, i, n = act_len > exp_len ? act_len : exp_len;
	bool ok = act_len == exp_len && !memcmp(act, exp, act_len);

	if (ok)
		return true;
	check_fail("%s: output differs from expected (length %zu, expected %zu)",
	     what, act_len, exp_len);
	for (off = 0; off < n; off += 16) {
		bool diff = false;

		for (i = off; i < off + 16 && i < n; i++)
			if (i >= act_len || i >= exp_len || act[i] != exp[i])
				diff = true;
		if (!diff)
			continue;
		hexdump_line("actual  ", off, act, act_len);
		hexdump_line("expected", off, exp, exp_len);
	}
	return false;
}

/* ---- Maps ------------------------------------------------------------- */

void stats_read(struct xnat_counter sum[XNAT_REASON_MAX])
{
	struct xnat_counter per_cpu[ncpus];
	__u32 r;
	int c;

	memset(sum, 0, sizeof(*sum) * XNAT_REASON_MAX);
	for (r = 0; r < XNAT_REASON_MAX; r++) {
		if (bpf_map_lookup_elem(stats_fd, &r, per_cpu))
			continue;
		for (c = 0; c < ncpus; c++) {
			sum[r].packets += per_cpu[c].packets;
			sum[r].bytes += per_cpu[c].bytes;
		}
	}
}

/* Entries in the flow table (bounded walk: at most max_entries + 1). */
int flows_count(void)
{
	struct flow_key key, next;
	int n = 0;

	if (bpf_map_get_next_key(flows_fd, NULL, &next))
		return 0;
	do {
		key = next;
		n++;
	} while (n <= 2 * FLOW_CONNS && !bpf_map_get_next_key(flows_fd, &key, &next));
	return n;
}

/* Delete every entry of FD, at most BOUND of them. */
void map_clear(int fd, int bound)
{
	uint8_t key[64];
	int i;

	for (i = 0; i < bound; i++) {
		if (bpf_map_get_next_key(fd, NULL, key))
			break;
		bpf_map_delete_elem(fd, key);
	}
}

/*
 * Forget all NAT state: flows, and the mappings, port owners and peers
 * (nat.h) that outlive them. Deleting flows from here does not release
 * their mappings, so both go together.
 */
void flows_clear(void)
{
	map_clear(flows_fd, bpf_map__max_entries(skel->maps.xnat_flows) + 1);
	map_clear(bpf_map__fd(skel->maps.xnat_mappings), 65536);
	map_clear(bpf_map__fd(skel->maps.xnat_ports), 65536);
	map_clear(bpf_map__fd(skel->maps.xnat_peers), 131072);
	map_clear(bpf_map__fd(skel->maps.xnat_hosts), 65536);
	port_active_clear();
}

/* Every byte of xnat_port_active back to "not known", as the loader
 * leaves it: with the ports, their marks go. */
void port_active_clear(void)
{
	ASSERT_OK(loader_port_active_clear(skel->maps.xnat_port_active),
		  "xnat_port_active cleared");
}

struct flow_key flow_key4(const char *saddr, uint16_t sport,
			  const char *daddr, uint16_t dport,
			  uint8_t proto, int ifindex)
{
	struct flow_key k = {};

	inet_pton(AF_INET, saddr, &k.saddr.v4);
	inet_pton(AF_INET, daddr, &k.daddr.v4);
	k.sport = htons(sport);
	k.dport = htons(dport);
	k.proto = proto;
	k.family = XNAT_AF_INET;
	k.ifindex = ifindex;
	return k;
}

bool config_get(struct xnat_config *c)
{
	__u32 zero = 0;

	return ASSERT_OK(bpf_map_lookup_elem(config_fd, &zero, c), "config read");
}

bool config_set(const struct xnat_config *c)
{
	__u32 zero = 0;

	return ASSERT_OK(bpf_map_update_elem(config_fd, &zero, c, BPF_ANY),
			 "config write");
}

/* ---- Running the program ---------------------------------------------- */

/*
 * One BPF_PROG_RUN of FRAME (LEN bytes) arriving on IFINDEX. LINEAR, when
 * not 0, puts only that many bytes in the linear part the program sees
 * (ctx.data_end) and the rest in fragments: the kernel refuses frames under
 * 14 bytes outright, so this is the only way to hand the program a shorter
 * Ethernet header. The output is the whole frame, fragments included.
 */
bool xdp_run(int ifindex, const uint8_t *frame, uint32_t len,
	     uint32_t linear, uint8_t *out, uint32_t *out_len,
	     uint32_t *retval)
{
	struct xdp_md ctx = {
		.data = 0,
		.data_end = linear ? linear : len,
		.ingress_ifindex = ifindex,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = len,
		.data_out = out,
		.data_size_out = PKT_MAX,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = 1,
	);
	int err;

	err = bpf_prog_test_run_opts(prog_fd, &opts);
	if (!ASSERT_OK(err, "bpf_prog_test_run_opts"))
		return false;
	*retval = opts.retval;
	*out_len = opts.data_size_out;
	return true;
}

/*
 * Run FRAME on IFINDEX and check the verdict, that the counter of REASON
 * went up by one packet and by the bytes the program saw, that no other
 * counter moved, and for XDP_PASS and XDP_DROP that the frame came back
 * unmodified and no flow was created or removed. OUT receives the output.
 * VERDICT NOT_FORWARDED with REASON ANY_REASON accepts XDP_PASS or XDP_DROP
 * with whichever single counter moved.
 */
bool run_expect(const char *step, int ifindex, const uint8_t *frame,
		uint32_t len, uint32_t linear, int verdict, int reason,
		uint8_t *out, uint32_t *out_len)
{
	struct xnat_counter before[XNAT_REASON_MAX], after[XNAT_REASON_MAX];
	uint32_t retval = ~0u, seen = linear ? linear : len;
	int r, moved = 0, flows_before = flows_count();
	char what[160];
	bool ok = true;

	stats_read(before);
	if (!xdp_run(ifindex, frame, len, linear, out, out_len, &retval))
		return false;
	stats_read(after);

	if (verdict == NOT_FORWARDED) {
		if (retval != XDP_PASS && retval != XDP_DROP) {
			check_fail("%s: verdict %s (%u), expected XDP_PASS or XDP_DROP",
			     step, verdict_name(retval), retval);
			ok = false;
		}
	} else if (retval != (uint32_t)verdict) {
		check_fail("%s: verdict %s (%u), expected %s", step,
		     verdict_name(retval), retval, verdict_name(verdict));
		ok = false;
	}
	for (r = 0; r < XNAT_REASON_MAX; r++) {
		__u64 dp = after[r].packets - before[r].packets;

		if (dp)
			moved++;
		if (reason == ANY_REASON && dp == 1 && moved == 1)
			reason = r; /* checked like an expected one below */
		else if (r != reason && dp) {
			check_fail("%s: counter %s moved by %llu, expected 0", step,
			     reason_name(r), (unsigned long long)dp);
			ok = false;
		}
	}
	if (reason == ANY_REASON) {
		check_fail("%s: no counter moved by exactly 1", step);
		return false;
	}
	if (after[reason].packets - before[reason].packets != 1) {
		check_fail("%s: counter %s moved by %llu packets, expected 1", step,
		     reason_name(reason),
		     (unsigned long long)(after[reason].packets -
					  before[reason].packets));
		ok = false;
	}
	if (after[reason].bytes - before[reason].bytes != seen) {
		check_fail("%s: counter %s moved by %llu bytes, expected %u", step,
		     reason_name(reason),
		     (unsigned long long)(after[reason].bytes -
					  before[reason].bytes), seen);
		ok = false;
	}

	/* Every redirected frame, whichever test sent it: TTL or hop limit
	 * one less, checksums valid (check_forwarded). */
	if (verdict == XDP_REDIRECT && retval == XDP_REDIRECT)
		ok &= check_forwarded(frame, len, out, *out_len);

	/* Frames the kernel gets, or that are dropped unforwarded, must be
	 * exactly what arrived (a redirect that failed has been rewritten
	 * already, on purpose: it must not reach the kernel). */
	if ((verdict == XDP_PASS || verdict == XDP_DROP ||
	     verdict == NOT_FORWARDED) && reason != XNAT_DROP_REDIRECT) {
		snprintf(what, sizeof(what), "%s: frame not forwarded, yet modified",
			 step);
		if (!expect_bytes(out, *out_len, frame, len, what))
			ok = false;
		if (flows_count() != flows_before) {
			check_fail("%s: not forwarded, yet flows were created or "
			     "removed (%d -> %d)", step, flows_before,
			     flows_count());
			ok = false;
		}
	}
	return ok;
}

int side_ifindex(enum side side)
{
	return side == LAN ? if_lan : side == WAN ? if_wan : 1 /* lo */;
}

/* Replace LEARNED in the ports and echo id of S. */
void spec_resolve(struct pkt_spec *s)
{
	if (s->sport == LEARNED)
		s->sport = learned;
	if (s->dport == LEARNED)
		s->dport = learned;
	if (s->icmp_id == LEARNED)
		s->icmp_id = learned;
}

/* The source port (or echo id) of a frame that left towards the WAN. */
bool learn_port(const uint8_t *out, size_t len, uint8_t proto)
{
	const struct pkt_v4_udp *p = (const void *)out;
	uint16_t port;

	if (!ASSERT_TRUE(len >= sizeof(struct pkt_v4_icmp), "output length"))
		return false;
	if (proto == IPPROTO_ICMP)
		port = ntohs(((const struct pkt_v4_icmp *)out)->icmp.un.echo.id);
	else
		port = ntohs(p->udp.source); /* TCP has the same first word */
	learned = port;
	return ASSERT_TRUE(port >= PORT_MIN, /* PORT_MAX is 65535 */
			   "translated port in the XDP range");
}

bool run_fixture(const struct fixture *f)
{
	struct pkt_spec in = f->in, out = f->out;
	uint8_t frame[PKT_MAX], got[PKT_MAX], want[PKT_MAX];
	uint32_t got_len = 0;
	size_t len, want_len;
	bool ok;

	spec_resolve(&in);
	if (f->in_quote) {
		struct pkt_spec q = *f->in_quote;

		spec_resolve(&q);
		len = pkt_build_icmp_error(frame, &in, &q, f->quote_len);
	} else {
		len = f->build ? f->build(frame, &in) : pkt_build(frame, &in);
	}
	if (f->mutate)
		len = f->mutate(frame, len);
	ok = run_expect(f->name, side_ifindex(f->ingress), frame, len,
			f->linear, f->verdict, f->reason, got, &got_len);
	if (!ok) {
		check_fail("step '%s' failed", f->name);
		return false;
	}
	if (f->learn)
		ok &= learn_port(got, got_len, f->in.proto);
	if (f->has_out) {
		spec_resolve(&out);
		if (f->out_quote) {
			struct pkt_spec q = *f->out_quote;

			spec_resolve(&q);
			want_len = pkt_build_icmp_error(want, &out, &q,
							f->quote_len);
		} else {
			want_len = pkt_build(want, &out);
		}
		ok &= expect_bytes(got, got_len, want, want_len, f->name);
	}
	if (f->check)
		ok &= f->check(got, got_len);
	if (!ok)
		check_fail("step '%s' failed", f->name);
	return ok;
}

bool run_fixtures(const struct fixture *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!run_fixture(&f[i]))
			return false;
	return true;
}

/* Independent cases: each on an empty table, all run, all reported. */
bool run_fixtures_each(const struct fixture *f, size_t n)
{
	bool ok = true;
	size_t i;

	for (i = 0; i < n; i++) {
		flows_clear();
		ok &= run_fixture(&f[i]);
	}
	return ok;
}
/* Send a LAN->WAN UDP packet of a new flow from SPORT; expect as given. */
bool udp_out(uint16_t sport, uint16_t dport, int verdict, int reason)
{
	struct fixture f = {
		.name = "udp lan->wan", UDP_OUT(sport, dport),
		.verdict = verdict, .reason = reason,
	};

	if (verdict == XDP_REDIRECT) {
		struct fixture g = { UDP_OUT_NAT(sport, dport) };

		f.has_out = g.has_out;
		f.out = g.out;
	}
	return run_fixture(&f);
}
/* IPv4 fragments made from a built UDP frame (frag.h's cases). */
size_t mut_frag_mf(uint8_t *buf, size_t len)
{
	/* MF, offset 0 */
	((struct pkt_v4_udp *)buf)->ip.frag_off = htons(0x2000);
	return pkt_ipv4_refix(buf, len);
}

size_t mut_frag_offset(uint8_t *buf, size_t len)
{
	/* The last fragment, offset 1480 */
	((struct pkt_v4_udp *)buf)->ip.frag_off = htons(185);
	return pkt_ipv4_refix(buf, len);
}

/* Run F and copy its output to OUT. */
bool run_save(const struct fixture *f, uint8_t *out, uint32_t *out_len)
{
	uint8_t frame[PKT_MAX];
	struct pkt_spec in = f->in;
	size_t len;

	spec_resolve(&in);
	len = pkt_build(frame, &in);
	return run_expect(f->name, side_ifindex(f->ingress), frame, len, 0,
			  f->verdict, f->reason, out, out_len);
}

/* ---- The runner ------------------------------------------------------ */

static int n_run, n_pass, n_fail, n_skip;

static void report(const char *name, bool ok)
{
	n_run++;
	if (ok)
		n_pass++;
	else
		n_fail++;
	printf("#%d %s:%s\n", n_run, name, ok ? "OK" : "FAIL");
	fflush(stdout);
}

/* A test of a known open defect failed as expected: a skip that names it
 * (it still ran, so a fix shows as OK at once). */
static void report_known(const char *name, const char *defect)
{
	n_run++;
	n_skip++;
	printf("    KNOWN OPEN DEFECT: %s\n", defect);
	printf("#%d %s:SKIP\n", n_run, name);
	fflush(stdout);
}

static void run_test(const struct test *t)
{
	unsigned int failures = check_failures;
	bool ok;

	cur_test = t->name;
	if (t->clean)
		flows_clear();
	ok = t->fn ? t->fn() : run_fixtures(t->steps, t->nsteps);
	ok &= check_failures == failures;
	if (!ok && t->known_defect)
		report_known(t->name, t->known_defect);
	else
		report(t->name, ok);
}

static void run_single(const struct fixture *f)
{
	unsigned int failures = check_failures;
	bool ok;

	cur_test = f->name;
	flows_clear();
	ok = run_fixture(f);
	report(f->name, ok && check_failures == failures);
}

/* The registered tests (FIXTURE_TEST): none in a binary without any. */
extern const struct test_reg *const __start_xnat_tests[] __attribute__((weak));
extern const struct test_reg *const __stop_xnat_tests[] __attribute__((weak));

static int reg_line_cmp(const void *a, const void *b)
{
	const struct test_reg *x = *(const struct test_reg *const *)a;
	const struct test_reg *y = *(const struct test_reg *const *)b;

	return x->line - y->line;
}

int fixture_main_registered(const char *prog, const struct fixture_opts *o)
{
	size_t i, n = __stop_xnat_tests - __start_xnat_tests;
	const struct test_reg **r = calloc(n + 1, sizeof(*r));
	struct test *t = calloc(n + 1, sizeof(*t));
	int rc;

	if (!r || !t) {
		printf("#1 setup:FAIL\n0 passed, 1 failed\n");
		return 1;
	}
	memcpy(r, __start_xnat_tests, n * sizeof(*r));
	qsort(r, n, sizeof(*r), reg_line_cmp);
	for (i = 0; i < n; i++)
		t[i] = r[i]->t;
	rc = fixture_main_opts(prog, t, n, o);
	free(r);
	free(t);
	return rc;
}

int fixture_main(const char *prog, const struct test *t, size_t n)
{
	return fixture_main_opts(prog, t, n, NULL);
}

int fixture_main_opts(const char *prog, const struct test *t, size_t n,
		      const struct fixture_opts *o)
{
	static const struct fixture_opts dflt;
	size_t i, j;

	setvbuf(stderr, NULL, _IOLBF, 0);
	if (geteuid()) {
		fprintf(stderr, "%s: must run as root\n", prog);
		printf("#1 setup:FAIL\n0 passed, 1 failed\n");
		return 1;
	}
	cur_test = "setup";
	if (fixture_testbed_opts(o ? o : &dflt)) {
		printf("#1 setup:FAIL\n0 passed, 1 failed\n");
		return 1;
	}

	for (i = 0; i < n; i++) {
		if (!t[i].each) {
			run_test(&t[i]);
			continue;
		}
		for (j = 0; j < t[i].nsteps; j++)
			run_single(&t[i].steps[j]);
	}

	if (n_skip)
		printf("%d passed, %d failed, %d skipped\n", n_pass, n_fail,
		       n_skip);
	else
		printf("%d passed, %d failed\n", n_pass, n_fail);
	xnat_bpf__destroy(skel);
	return n_fail ? 1 : 0;
}
