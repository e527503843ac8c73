// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the benchmark's generator (user/bench/gen.c and its
 * program; the sink's own tests are in test_sink.c, the bare forwarder and
 * the microbenchmark in test_fwd.c). The binary unshares a private network namespace with a
 * veth pair gen0 (the generator's port) and sink0; everything disappears
 * with the process, and the tests also check that what they attached is
 * gone after closing.
 *
 * Frames the generator makes are checked field by field against the
 * config, with both checksums from the independent oracle (csum_oracle.h):
 * one by one with BPF_PROG_RUN (non-live, output captured), and in live
 * mode as they arrive on sink0 (through a packet socket, and through the
 * sink's counters). No test asserts anything about timing or rates.
 *
 * Run as root from the repository root. Prints "#N name:OK|FAIL", the
 * reasons on stderr, and ends with "N passed, N failed" (bench_harness.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_harness.h"
#include "check.h"
#include "pkt.h"
#include "gen.h"
#include "sink.h"
#include "log.h"
#include "xnat_bench.skel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct gen_testbed tb = { .orig_netns = -1 };
/* ---- Helpers ---------------------------------------------------------- */

static struct gen_config base_config(void)
{
	struct gen_config c = {
		.ifindex = tb.if_gen,
		.src_port = 1024,
		.dst_port = 9,
		.flows = 1,
		.sizes = { 60 },
		.weights = { 1 },
		.n_sizes = 1,
		.duration_s = 0.1,
		.cpu = tb.cpu,
	};

	memcpy(c.src_mac, mac_gen0, ETH_ALEN);
	memcpy(c.dst_mac, mac_sink0, ETH_ALEN);
	inet_pton(AF_INET, GEN_SRC, &c.src_ip);
	inet_pton(AF_INET, GEN_DST, &c.dst_ip);
	return c;
}

static struct gen_config imix_config(uint32_t flows)
{
	struct gen_config c = base_config();

	c.flows = flows;
	c.sizes[0] = 60;
	c.sizes[1] = 572;
	c.sizes[2] = 1496;
	c.weights[0] = 7;
	c.weights[1] = 4;
	c.weights[2] = 1;
	c.n_sizes = 3;
	return c;
}

static uint16_t max_size(const struct gen_config *c)
{
	uint16_t m = 0;
	int i;

	for (i = 0; i < c->n_sizes; i++)
		if (c->sizes[i] > m)
			m = c->sizes[i];
	return m;
}

/*
 * A frame the generator sent must be exactly what CFG describes: its MACs,
 * IPv4 without options, DF, TTL 64, the addresses, UDP to dst_port from
 * SPORT, lengths that match LEN, a zero payload (but for CFG's stamp in its
 * first word) and both checksums right by the oracle.
 */
static bool check_frame(const uint8_t *f, uint32_t len,
			const struct gen_config *c, uint16_t sport,
			uint32_t want_len)
{
	const struct pkt_v4_udp *p = (const void *)f;
	uint32_t i;
	bool ok = true;

	if (!ASSERT_EQ(len, want_len, "frame length") ||
	    !ASSERT_TRUE(len >= sizeof(*p), "frame holds the headers"))
		return false;
	ok &= ASSERT_TRUE(!memcmp(p->eth.h_dest, c->dst_mac, ETH_ALEN), "dst MAC");
	ok &= ASSERT_TRUE(!memcmp(p->eth.h_source, c->src_mac, ETH_ALEN), "src MAC");
	ok &= ASSERT_EQ(ntohs(p->eth.h_proto), ETH_P_IP, "ethertype");
	ok &= ASSERT_EQ(p->ip.version, 4, "IP version");
	ok &= ASSERT_EQ(p->ip.ihl, 5, "IHL");
	ok &= ASSERT_EQ(ntohs(p->ip.tot_len), len - sizeof(struct ethhdr), "tot_len");
	ok &= ASSERT_EQ(ntohs(p->ip.frag_off), 0x4000, "DF, no fragment");
	ok &= ASSERT_EQ(p->ip.ttl, 64, "TTL");
	ok &= ASSERT_EQ(p->ip.protocol, IPPROTO_UDP, "protocol");
	ok &= ASSERT_EQ(p->ip.saddr, c->src_ip, "source address");
	ok &= ASSERT_EQ(p->ip.daddr, c->dst_ip, "destination address");
	ok &= ASSERT_EQ(csum_get16(&p->ip.check), csum_oracle_ipv4_hdr(&p->ip),
			"IPv4 header checksum == oracle");
	ok &= ASSERT_TRUE(csum_oracle_ipv4_hdr_ok(&p->ip), "IPv4 checksum verifies");
	ok &= ASSERT_EQ(ntohs(p->udp.source), sport, "source port");
	ok &= ASSERT_EQ(ntohs(p->udp.dest), c->dst_port, "destination port");
	ok &= ASSERT_EQ(ntohs(p->udp.len), len - sizeof(struct ethhdr) - 20,
			"UDP length");
	i = sizeof(*p);
	if (c->stamp && len >= i + sizeof(uint16_t)) {
		uint16_t stamp;

		memcpy(&stamp, f + i, sizeof(stamp));
		ok &= ASSERT_EQ(stamp, c->stamp, "the stamp, first payload word");
		i += sizeof(stamp);
	}
	for (; i < len && f[i] == 0; i++)
		;
	ok &= ASSERT_EQ(i, len, "payload all zeros up to");
	ok &= ASSERT_EQ(csum_get16(&p->udp.check),
			csum_oracle_l4_v4(&p->ip.saddr, &p->ip.daddr, IPPROTO_UDP,
					  &p->udp, len - 34, 6),
			"UDP checksum == oracle");
	ok &= ASSERT_TRUE(csum_oracle_l4_v4_ok(&p->ip.saddr, &p->ip.daddr,
					       IPPROTO_UDP, &p->udp, len - 34),
			  "UDP checksum verifies");
	return ok;
}

/* The I-th frame of generator G (non-live), from the largest-size template
 * IN (zeros unless a test says otherwise). */
static bool gen_frame(struct gen *g, const uint8_t *in, uint32_t in_len,
		      uint8_t *out, uint32_t *out_len)
{
	uint32_t retval;

	if (!run_prog(gen_prog_fd(g), tb.if_gen, in, in_len, 1, out, out_len,
		      &retval))
		return false;
	return ASSERT_EQ(retval, XDP_TX, "generator verdict");
}

/* ---- Generator: frames (non-live) ------------------------------------- */

/* Each of these configs is refused, and nothing is attached. */
static bool test_gen_bad_config(void)
{
	struct gen_config good = base_config(), c;
	struct gen *g = NULL;
	bool ok = true;
	int i;

	for (i = 0; i < 9; i++) {
		const char *what = "";

		c = good;
		switch (i) {
		case 0: c.flows = 0; what = "0 flows"; break;
		case 1: c.src_port = 65000; c.flows = 1000;
			what = "ports beyond 65535"; break;
		case 2: c.n_sizes = 0; what = "no sizes"; break;
		case 3: c.sizes[0] = GEN_MIN_FRAME - 1;
			what = "frame shorter than its headers"; break;
		case 4: c.sizes[0] = GEN_MAX_FRAME + 1; what = "frame too big"; break;
		case 5: c.duration_s = 0; what = "no duration"; break;
		case 6: c.duration_s = 61; what = "duration over 60 s"; break;
		case 7: c.rate_pps = -1; what = "negative rate"; break;
		case 8: c.ifindex = 0; what = "no port"; break;
		}
		ok &= ASSERT_EQ(gen_open(&g, &c), -EINVAL, what);
		ok &= ASSERT_TRUE(g == NULL, "no generator returned");
	}
	ok &= ASSERT_TRUE(!xdp_attached(tb.if_lo), "nothing left on lo");
	return ok;
}

/* 64 B frames of one flow: every field and both checksums. */
static bool test_gen_frame_64(void)
{
	struct gen_config c = base_config();
	uint8_t in[PKT_MAX] = {}, out[PKT_MAX];
	struct gen *g;
	uint32_t len;
	bool ok = true;
	int i;

	if (!ASSERT_OK(gen_open(&g, &c), "gen_open"))
		return false;
	ok &= ASSERT_TRUE(xdp_attached(tb.if_lo), "generator attached to lo");
	for (i = 0; i < 3 && ok; i++) {
		ok &= gen_frame(g, in, 60, out, &len);
		ok &= ok && check_frame(out, len, &c, c.src_port, 60);
	}
	gen_close(g);
	ok &= ASSERT_TRUE(!xdp_attached(tb.if_lo), "lo clean after gen_close");
	return ok;
}

/*
 * A trial's stamp: in the first payload word of every frame, in the UDP
 * checksum (the oracle's), and what the sink tells trials apart by: a
 * frame of the trial counts, one of another trial is late.
 */
static bool test_gen_stamp(void)
{
	struct gen_config c = base_config();
	uint8_t in[PKT_MAX] = {}, out[PKT_MAX];
	uint64_t late, packets, bytes;
	struct sink *sk = NULL;
	uint32_t len, retval;
	struct gen *g;
	bool ok = true;

	c.stamp = 0xbeef;
	if (!ASSERT_OK(gen_open(&g, &c), "gen_open"))
		return false;
	for (int i = 0; i < 3 && ok; i++) {
		ok &= gen_frame(g, in, 60, out, &len);
		ok &= ok && check_frame(out, len, &c, c.src_port, 60);
	}
	gen_close(g);
	if (!ok || !ASSERT_OK(sink_open_port(&sk, tb.if_sink, c.dst_port),
			      "sink_open_port"))
		return false;
	sink_stamp(sk, 0xbeef);
	ok &= run_prog(sink_prog_fd(sk), tb.if_sink, out, len, 2, NULL, NULL,
		       &retval);
	ok &= ASSERT_EQ(retval, XDP_DROP, "this trial's frame dropped");
	sink_stamp(sk, 0xbef0);
	ok &= run_prog(sink_prog_fd(sk), tb.if_sink, out, len, 1, NULL, NULL,
		       &retval);
	ok &= ASSERT_EQ(retval, XDP_DROP, "a late frame dropped too");
	ok &= ASSERT_OK(sink_read(sk, &packets, &bytes), "sink_read");
	ok &= ASSERT_EQ(packets, 2, "the trial's frames counted");
	ok &= ASSERT_OK(sink_read_late(sk, &late), "sink_read_late");
	ok &= ASSERT_EQ(late, 1, "the other trial's frame late");
	sink_close(sk);
	return ok;
}

/*
 * imix 7:4:1 over 5 flows: frames come from the largest-size template
 * (shrunk by the program), every one valid; the sizes repeat with period 12
 * with 7, 4 and 1 of each in every period, the large one not next to
 * itself; the source ports cycle over the 5 flows.
 */
static bool test_gen_imix_flows(void)
{
	struct gen_config c = imix_config(5);
	uint8_t in[PKT_MAX] = {}, out[PKT_MAX];
	uint32_t len, sizes[60];
	struct gen *g;
	bool ok = true;
	int i, w;

	if (!ASSERT_OK(gen_open(&g, &c), "gen_open"))
		return false;
	for (i = 0; i < 60 && ok; i++) {
		ok &= gen_frame(g, in, max_size(&c), out, &len);
		sizes[i] = len;
		ok &= ok && check_frame(out, len, &c, c.src_port + i % 5, len);
		ok &= ASSERT_TRUE(len == 60 || len == 572 || len == 1496,
				  "one of the configured sizes");
	}
	for (w = 0; w + 12 <= 60 && ok; w += 12) {
		int n60 = 0, n572 = 0, n1496 = 0;

		for (i = w; i < w + 12; i++) {
			n60 += sizes[i] == 60;
			n572 += sizes[i] == 572;
			n1496 += sizes[i] == 1496;
			ok &= ASSERT_EQ(sizes[i], sizes[i % 12], "period 12");
		}
		ok &= ASSERT_EQ(n60, 7, "60 B frames per period");
		ok &= ASSERT_EQ(n572, 4, "572 B frames per period");
		ok &= ASSERT_EQ(n1496, 1, "1496 B frames per period");
	}
	/* Spread: no two 572 B frames back to back within a period. */
	for (i = 1; i < 12 && ok; i++)
		ok &= ASSERT_TRUE(!(sizes[i] == 572 && sizes[i - 1] == 572),
				  "572 B frames spread out");
	gen_close(g);
	return ok;
}

/*
 * Live-frame pages come back as the receiver left them: a template whose
 * header a router rewrote (MACs, addresses, TTL, checksums) still gives a
 * correct frame, and one shorter than the size asked for grows to it.
 */
static bool test_gen_stale_page(void)
{
	struct gen_config c = imix_config(3);
	uint8_t in[PKT_MAX] = {}, out[PKT_MAX];
	uint32_t len;
	struct gen *g;
	bool ok = true;
	int i;

	if (!ASSERT_OK(gen_open(&g, &c), "gen_open"))
		return false;
	for (i = 0; i < 12 && ok; i++) {
		/* A forwarded frame's header over the zero payload. */
		memset(in, 0, sizeof(in));
		memset(in, 0xa5, 42);
		in[12] = 0x08;
		in[22] = 3; /* TTL */
		ok &= gen_frame(g, in, max_size(&c), out, &len);
		ok &= ok && check_frame(out, len, &c, c.src_port + i % 3, len);
	}
	/* The shortest template: every size is a grow. */
	for (i = 0; i < 12 && ok; i++) {
		memset(in, 0, sizeof(in));
		ok &= gen_frame(g, in, GEN_MIN_FRAME, out, &len);
		ok &= ok && check_frame(out, len, &c, c.src_port + (12 + i) % 3, len);
	}
	gen_close(g);
	return ok;
}

/* lo's own traffic passes untouched: the generator stays attached there. */
static bool test_gen_lo_untouched(void)
{
	struct gen_config c = base_config();
	struct pkt_spec s = { .saddr = "127.0.0.1", .daddr = "127.0.0.1",
			      .proto = IPPROTO_UDP, .sport = 1, .dport = 2 };
	uint8_t in[PKT_MAX], out[PKT_MAX];
	uint32_t len, out_len, retval;
	struct gen *g;
	bool ok;

	len = pkt_build(in, &s);
	if (!ASSERT_OK(gen_open(&g, &c), "gen_open"))
		return false;
	ok = run_prog(gen_prog_fd(g), tb.if_lo, in, len, 1, out, &out_len, &retval);
	ok &= ok && ASSERT_EQ(retval, XDP_PASS, "verdict on lo");
	ok &= ok && ASSERT_TRUE(out_len == len && !memcmp(in, out, len),
				"frame unchanged");
	gen_close(g);
	return ok;
}

/* ---- Live runs ---------------------------------------------------------- */

/* A sink counting C's destination port on sink0 and a generator for C:
 * false, with neither left open, if either fails. */
static bool open_sink_and_gen(const struct gen_config *c, struct sink **sk,
			      struct gen **g)
{
	if (!ASSERT_OK(sink_open_port(sk, tb.if_sink, c->dst_port), "sink_open_port"))
		return false;
	if (!ASSERT_OK(gen_open(g, c), "gen_open")) {
		sink_close(*sk);
		return false;
	}
	return true;
}

/* One run of G, and what the sink counted: P frames of B bytes. */
static bool run_to_sink(struct gen *g, struct sink *sk, struct gen_result *r,
			uint64_t *p, uint64_t *b)
{
	bool ok = true;

	ok &= ASSERT_OK(gen_run(g, r), "gen_run");
	ok &= ASSERT_OK(sink_read(sk, p, b), "sink_read");
	ok &= ASSERT_TRUE(r->packets > 0, "frames offered");
	return ok;
}

/* What a live run's generator offered (r) and its sink counted (p frames
 * of b bytes). */
struct live {
	struct gen_result r;
	uint64_t p, b;
};

/*
 * One 0.2 s run of a generator for C into a sink on sink0, both closed
 * after: L; *OK: the run and the read went well and the run lasted its
 * duration. False, with nothing run, if either cannot be opened.
 */
static bool live_run(struct gen_config *c, struct live *l, bool *ok)
{
	struct sink *sk;
	struct gen *g;

	c->duration_s = 0.2;
	if (!open_sink_and_gen(c, &sk, &g))
		return false;
	*ok &= run_to_sink(g, sk, &l->r, &l->p, &l->b);
	*ok &= ASSERT_TRUE(l->r.seconds >= c->duration_s, "ran its duration");
	gen_close(g);
	sink_close(sk);
	return true;
}

/*
 * Paced imix over 100 flows into the sink (counting our UDP port only, so
 * the kernel's own frames do not count): every frame offered arrives, with
 * exactly the bytes offered, which in live mode also proves the sizes
 * (pages are reused, so most frames are a shrink or a grow). Offered is at
 * most rate * duration (pacing never sends ahead).
 */
static bool test_live_paced_to_sink(void)
{
	struct gen_config c = imix_config(100);
	struct live l;
	bool ok = true;

	c.rate_pps = 50000;
	if (!live_run(&c, &l, &ok))
		return false;
	ok &= ASSERT_TRUE(l.r.packets <= 10000, "no more than rate * duration");
	ok &= ASSERT_EQ(l.p, l.r.packets, "sink saw every frame offered");
	ok &= ASSERT_EQ(l.b, l.r.bytes, "sink saw the bytes offered");
	ok &= ASSERT_TRUE(!xdp_attached(tb.if_lo) && !xdp_attached(tb.if_sink),
			  "nothing left attached");
	return ok;
}

/* Unpaced, 64 B, 1000 flows: the result is consistent (60 bytes per
 * frame) and the sink agrees. */
static bool test_live_full_speed(void)
{
	struct gen_config c = base_config();
	struct live l;
	bool ok = true;

	c.flows = 1000;
	if (!live_run(&c, &l, &ok))
		return false;
	ok &= ASSERT_EQ(l.r.bytes, l.r.packets * 60, "60 bytes per frame");
	/* A veth receive ring can overflow only if its NAPI ran elsewhere;
	 * arrivals never exceed what was offered. */
	ok &= ASSERT_TRUE(l.p <= l.r.packets && l.p > 0, "sink count within offered");
	ok &= ASSERT_EQ(l.b, l.p * 60, "sink bytes");
	fprintf(stderr, "  (info) %s: %.2f Mpps offered over %.3f s on CPU %d\n",
		cur_test, l.r.packets / l.r.seconds / 1e6, l.r.seconds, c.cpu);
	return ok;
}

/*
 * What arrives on sink0 in live mode, read from a packet socket (sink0 runs
 * xdp_pass, which a veth needs to receive XDP frames): every frame is valid
 * by the oracle, the sizes are imix's and the source ports the flows'.
 */
static bool test_live_frames_valid(void)
{
	struct gen_config c = imix_config(7);
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_IP) };
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .flags = XDP_FLAGS_DRV_MODE);
	struct xnat_bench_bpf *pass = NULL;
	int sock = -1, link = -1, rcvbuf = 8 << 20, n = 0;
	uint8_t buf[PKT_MAX];
	struct gen_result r;
	struct gen *g = NULL;
	bool ok = false;

	c.rate_pps = 2000;
	c.duration_s = 0.1;
	pass = xnat_bench_bpf__open_and_load();
	if (!ASSERT_TRUE(pass, "load xdp_pass"))
		goto out;
	link = bpf_link_create(bpf_program__fd(pass->progs.xdp_pass), tb.if_sink,
			       BPF_XDP, &lopts);
	if (!ASSERT_TRUE(link >= 0, "attach xdp_pass to sink0"))
		goto out;
	sock = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_IP));
	sll.sll_ifindex = tb.if_sink;
	if (!ASSERT_TRUE(sock >= 0, "packet socket") ||
	    !ASSERT_OK(setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
				  sizeof(rcvbuf)), "SO_RCVBUFFORCE") ||
	    !ASSERT_OK(bind(sock, (struct sockaddr *)&sll, sizeof(sll)), "bind"))
		goto out;
	if (!ASSERT_OK(gen_open(&g, &c), "gen_open") ||
	    !ASSERT_OK(gen_run(g, &r), "gen_run"))
		goto out;
	ok = ASSERT_TRUE(r.packets > 0, "frames offered");
	for (;;) {
		struct pollfd pfd = { .fd = sock, .events = POLLIN };
		const struct pkt_v4_udp *p = (const void *)buf;
		ssize_t len;

		if (poll(&pfd, 1, 200) <= 0)
			break;
		len = recv(sock, buf, sizeof(buf), 0);
		if (len < (ssize_t)sizeof(*p) || p->ip.protocol != IPPROTO_UDP ||
		    ntohs(p->udp.dest) != c.dst_port)
			continue;
		/* The n-th frame: size slot n % 12, flow n % 7. */
		ok &= check_frame(buf, len, &c, ntohs(p->udp.source), len);
		ok &= ASSERT_TRUE(ntohs(p->udp.source) - c.src_port == n % 7,
				  "flows in turn");
		ok &= ASSERT_TRUE(len == 60 || len == 572 || len == 1496,
				  "an imix size");
		if (!ok)
			break;
		n++;
	}
	ok &= ASSERT_EQ(n, r.packets, "every frame arrived");
out:
	gen_close(g);
	if (sock >= 0)
		close(sock);
	if (link >= 0)
		close(link);
	xnat_bench_bpf__destroy(pass);
	ok &= ASSERT_TRUE(!xdp_attached(tb.if_lo) && !xdp_attached(tb.if_sink),
			  "nothing left attached");
	return ok;
}

/*
 * gen_run_on from a thread in another network namespace (here the one the
 * test started in) on another CPU: it sends from the generator's namespace
 * and returns the thread to its own, and to its CPUs.
 */
struct thread_run {
	struct gen *g;
	int cpu;
	int err;
	struct gen_result r;
	bool ns_back, cpus_back;
};


static ino_t thread_netns(void)
{
	struct stat st;

	return stat("/proc/thread-self/ns/net", &st) ? 0 : st.st_ino;
}

static void *thread_main(void *arg)
{
	struct thread_run *t = arg;
	cpu_set_t before, after;
	ino_t ino;

	if (setns(tb.orig_netns, CLONE_NEWNET)) {
		t->err = -errno;
		return NULL;
	}
	ino = thread_netns();
	pthread_getaffinity_np(pthread_self(), sizeof(before), &before);
	t->err = gen_run_on(t->g, t->cpu, &t->r);
	pthread_getaffinity_np(pthread_self(), sizeof(after), &after);
	t->ns_back = thread_netns() == ino;
	t->cpus_back = CPU_EQUAL(&before, &after);
	return NULL;
}

static bool test_live_other_thread(void)
{
	struct gen_config c = base_config();
	struct thread_run t = { .cpu = libbpf_num_possible_cpus() - 1 };
	struct sink *sk;
	pthread_t th;
	uint64_t p, b;
	bool ok = true;

	c.rate_pps = 20000;
	c.duration_s = 0.1;
	if (!open_sink_and_gen(&c, &sk, &t.g))
		return false;
	ok &= ASSERT_OK(pthread_create(&th, NULL, thread_main, &t), "pthread_create");
	if (ok)
		pthread_join(th, NULL);
	ok &= ASSERT_OK(t.err, "gen_run_on in the thread");
	ok &= ASSERT_TRUE(t.ns_back, "thread back in its network namespace");
	ok &= ASSERT_TRUE(t.cpus_back, "thread back on its CPUs");
	ok &= ASSERT_OK(sink_read(sk, &p, &b), "sink_read");
	ok &= ASSERT_TRUE(t.r.packets > 0, "frames offered");
	ok &= ASSERT_EQ(p, t.r.packets, "sink saw every frame offered");
	gen_close(t.g);
	sink_close(sk);
	return ok;
}

/* ---- Leftovers ----------------------------------------------------------- */

/* Every open and close above left no descriptor and no program behind. */
static bool test_nothing_left(void)
{
	bool ok = ASSERT_EQ(count_fds(), bench_fds_at_start, "open descriptors");

	ok &= ASSERT_TRUE(!xdp_attached(tb.if_lo), "lo clean");
	ok &= ASSERT_TRUE(!xdp_attached(tb.if_gen), "gen0 clean");
	ok &= ASSERT_TRUE(!xdp_attached(tb.if_sink), "sink0 clean");
	return ok;
}

/* ---- Setup and main ------------------------------------------------------ */

static int setup(void)
{
	return gen_testbed_setup(&tb);
}

static const struct bench_test tests[] = {
	{ "gen_bad_config", test_gen_bad_config },
	{ "gen_frame_64", test_gen_frame_64 },
	{ "gen_stamp", test_gen_stamp },
	{ "gen_imix_flows", test_gen_imix_flows },
	{ "gen_stale_page", test_gen_stale_page },
	{ "gen_lo_untouched", test_gen_lo_untouched },
	{ "live_paced_to_sink", test_live_paced_to_sink },
	{ "live_full_speed", test_live_full_speed },
	{ "live_frames_valid", test_live_frames_valid },
	{ "live_other_thread", test_live_other_thread },
	{ "nothing_left", test_nothing_left },
};

int main(void)
{
	return bench_tests_main("test_gen", setup, tests, ARRAY_SIZE(tests));
}
