// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-packet microbenchmark; see microbench.h for what and why.
 *
 * The testbed is the unit tests' router (tests/unit/fixture.c): lan0 and
 * wan0, veths with fixed MACs, a LAN host and the WAN gateway as permanent
 * neighbours, NAT to wan0's address. The data path's maps are filled the
 * way user/maps.c fills them; keep the two in step when a map changes.
 *
 * Every call runs the harness bpf/bench/xnat_mbench.bpf.c, which restores the
 * packet and tail-calls the program under test. The harness stays attached
 * (generic XDP on the private namespace's lo, which is down) so that calls
 * with repeat > 1 do not pay for adding it to the XDP dispatcher each time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xnat_common.h"
#include "xnat.skel.h"
#include "xnat_fwd.skel.h"
#include "xnat_bench.skel.h"
#include "xnat_mbench.skel.h"
#include "loader.h"
#include "log.h"
#include "maps.h"
#include "microbench.h"
#include "percpu.h"
#include "reasons.h"
#include "sysctl.h"

#define MB_LAN_HOST  "198.18.1.10"
#define MB_NAT_ADDR  "198.19.0.1" /* wan0's address */
#define MB_WAN_GW    "198.19.0.2"
#define MB_SPORT     40000        /* in the XDP range: kept by the NAT */
#define MB_DPORT     9
#define MB_TTL       64
#define MB_FRAME_LEN 60           /* 64 B on the wire */
#define MB_FLOWS_MAX 64           /* flow table entries */
#define MB_WARMUP    20           /* unmeasured calls per case */

static const uint8_t mac_lan0[ETH_ALEN] = { 0x02, 0, 0, 0, 0x01, 0x01 };
static const uint8_t mac_lan_host[ETH_ALEN] = { 0x02, 0, 0, 0, 0x01, 0x0a };

/* One per line for `ip -batch`: the unit tests' router, IPv4 only. */
static const char testbed_cmds[] =
	"link add lan0 address 02:00:00:00:01:01 type veth peer name lan0p\n"
	"link add wan0 address 02:00:00:00:02:01 type veth peer name wan0p\n"
	"link set lan0 up\n"
	"link set lan0p up\n"
	"link set wan0 up\n"
	"link set wan0p up\n"
	"addr add 198.18.1.1/24 dev lan0\n"
	"addr add " MB_NAT_ADDR "/24 dev wan0\n"
	"neigh add " MB_LAN_HOST " lladdr 02:00:00:00:01:0a dev lan0 nud permanent\n"
	"neigh add " MB_WAN_GW " lladdr 02:00:00:00:02:02 dev wan0 nud permanent\n";

struct mb {
	struct xnat_bpf *xnat;
	struct xnat_fwd_bpf *fwd;
	struct xnat_bench_bpf *empty; /* its xdp_pass */
	struct xnat_mbench_bpf *harness;
	int harness_link;
	int if_lan, if_wan;
	int stats_fd, config_fd;
	int nreasons, ncpus;
	struct xnat_config cfg;
	uint8_t pkt[MB_FRAME_LEN];
};

/* The router, in the current (fresh) network namespace. */
static int testbed_up(struct mb *m)
{
	FILE *ip;
	int err, rc;

	/* IPv6 off: no neighbour discovery or MLD chatter in the testbed. */
	sysctl_write("net/ipv6/conf/default/disable_ipv6", "1");
	sysctl_write("net/ipv6/conf/all/disable_ipv6", "1");
	err = sysctl_write("net/ipv4/ip_forward", "1");
	if (err) {
		pr_warn("Microbenchmark: cannot enable forwarding: %s\n",
			strerror(-err));
		return err;
	}
	ip = popen("ip -batch -", "w");
	if (!ip) {
		err = -errno;
		pr_warn("Microbenchmark: cannot run ip: %s\n", strerror(-err));
		return err;
	}
	fputs(testbed_cmds, ip);
	rc = pclose(ip);
	if (rc) {
		pr_warn("Microbenchmark: building the testbed with ip failed "
			"(status %d)\n", rc);
		return -ECHILD;
	}
	m->if_lan = if_nametoindex("lan0");
	m->if_wan = if_nametoindex("wan0");
	if (!m->if_lan || !m->if_wan) {
		pr_warn("Microbenchmark: lan0/wan0 missing after setup\n");
		return -ENODEV;
	}
	return 0;
}


static int load_xnat(struct mb *m)
{
	__u32 zero = 0;
	int fds[3], err;

	m->xnat = xnat_bpf__open();
	if (!m->xnat)
		return pr_warn_errno("Microbenchmark: failed to open the XDP object");
	err = bpf_map__set_max_entries(m->xnat->maps.xnat_flows, MB_FLOWS_MAX);
	if (!err)
		err = xnat_bpf__load(m->xnat);
	if (!err)
		err = loader_slow_path_link(m->xnat->obj, NULL);
	if (err) {
		pr_warn("Microbenchmark: failed to load the XDP program: %s\n",
			strerror(-err));
		return err;
	}
	m->stats_fd = bpf_map__fd(m->xnat->maps.xnat_stats);
	m->config_fd = bpf_map__fd(m->xnat->maps.xnat_config);
	m->nreasons = bpf_map__max_entries(m->xnat->maps.xnat_stats);

	m->cfg = (struct xnat_config){
		.port_min = 20000,
		.port_max = 65535,
		.wan_ifindex = m->if_wan,
		.timeout_tcp_est = 7440,
		.timeout_tcp_trans = 240,
		.timeout_udp = 300,
		.timeout_icmp = 60,
	};
	inet_pton(AF_INET, MB_NAT_ADDR, &m->cfg.nat_addr);
	/* Ports first, then the config (its NAT address turns NAT on). */
	fds[0] = bpf_map__fd(m->xnat->maps.xnat_ifaces);
	fds[1] = bpf_map__fd(m->xnat->maps.xnat_tx_ports);
	fds[2] = bpf_map__fd(m->xnat->maps.xnat_vlans);
	err = maps_put_port(fds, "lan0", m->if_lan, XNAT_ROLE_LAN);
	if (!err)
		err = maps_put_port(fds, "wan0", m->if_wan, XNAT_ROLE_WAN);
	if (!err && bpf_map_update_elem(m->config_fd, &zero, &m->cfg, BPF_ANY))
		err = -errno;
	if (err)
		pr_warn("Microbenchmark: filling the data path's maps: %s\n",
			strerror(-err));
	return err;
}

static int load_fwd(struct mb *m)
{
	__u32 ports[2] = { m->if_lan, m->if_wan };
	int fd, i, err;

	m->fwd = xnat_fwd_bpf__open_and_load();
	m->empty = xnat_bench_bpf__open_and_load();
	if (!m->fwd || !m->empty)
		return pr_warn_errno("Microbenchmark: failed to load xdp_fwd");
	fd = bpf_map__fd(m->fwd->maps.xdp_tx_ports);
	for (i = 0; i < 2; i++) {
		if (bpf_map_update_elem(fd, &ports[i], &ports[i], BPF_ANY)) {
			err = -errno;
			pr_warn("Microbenchmark: filling xdp_tx_ports: %s\n",
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The harness, its program slots filled and the packet in place. */
static int load_harness(struct mb *m)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .flags = XDP_FLAGS_SKB_MODE);
	int progs[MICROBENCH_CASES] = {
		[MICROBENCH_FAST] = bpf_program__fd(m->xnat->progs.xdp_xnat),
		[MICROBENCH_FP_OFF] = bpf_program__fd(m->xnat->progs.xdp_xnat),
		[MICROBENCH_FLOOR] = bpf_program__fd(m->fwd->progs.xdp_fwd),
		[MICROBENCH_EMPTY] = bpf_program__fd(m->empty->progs.xdp_pass),
		[MICROBENCH_TRACED] = bpf_program__fd(m->xnat->progs.xdp_xnat),
		[MICROBENCH_OFFLOAD] = bpf_program__fd(m->xnat->progs.xdp_xnat),
	};
	int fd, lo, err;
	__u32 c;

	_Static_assert(sizeof(m->harness->bss->mb_pkt) >= MB_FRAME_LEN,
		       "the harness restores the whole frame");
	m->harness = xnat_mbench_bpf__open_and_load();
	if (!m->harness)
		return pr_warn_errno("Microbenchmark: failed to load its harness");
	memcpy(m->harness->bss->mb_pkt, m->pkt, MB_FRAME_LEN);
	fd = bpf_map__fd(m->harness->maps.mb_progs);
	for (c = 0; c < MICROBENCH_CASES; c++) {
		if (bpf_map_update_elem(fd, &c, &progs[c], BPF_ANY)) {
			err = -errno;
			pr_warn("Microbenchmark: adding %s to the harness: %s\n",
				c == MICROBENCH_FLOOR ? "xdp_fwd" :
				c == MICROBENCH_EMPTY ? "xdp_pass" : "xdp_xnat",
				strerror(-err));
			return err;
		}
	}
	lo = if_nametoindex("lo");
	m->harness_link = lo ? bpf_link_create(bpf_program__fd(
						       m->harness->progs.xdp_mbench),
					       lo, BPF_XDP, &lopts) : -1;
	if (m->harness_link < 0) {
		err = -errno;
		pr_warn("Microbenchmark: attaching its harness to lo: %s\n",
			strerror(-err));
		return err;
	}
	return 0;
}

static uint16_t csum_finish(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t csum_words(uint32_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i += 2)
		sum += b[i] << 8 | (i + 1 < len ? b[i + 1] : 0);
	return sum;
}

/* UDP MB_LAN_HOST:MB_SPORT -> MB_WAN_GW:MB_DPORT from the LAN host to
 * lan0, 60 bytes (zero payload), with both checksums. */
static void build_packet(uint8_t *pkt)
{
	struct ethhdr *eth = (void *)pkt;
	struct iphdr ip = {};
	struct udphdr udp = {};
	uint8_t pseudo[12];
	uint16_t l4_len = MB_FRAME_LEN - sizeof(*eth) - sizeof(ip);

	memset(pkt, 0, MB_FRAME_LEN);
	memcpy(eth->h_dest, mac_lan0, ETH_ALEN);
	memcpy(eth->h_source, mac_lan_host, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);

	ip.version = 4;
	ip.ihl = 5;
	ip.tot_len = htons(sizeof(ip) + l4_len);
	ip.frag_off = htons(0x4000);
	ip.ttl = MB_TTL;
	ip.protocol = IPPROTO_UDP;
	inet_pton(AF_INET, MB_LAN_HOST, &ip.saddr);
	inet_pton(AF_INET, MB_WAN_GW, &ip.daddr);
	ip.check = htons(csum_finish(csum_words(0, &ip, sizeof(ip))));

	udp.source = htons(MB_SPORT);
	udp.dest = htons(MB_DPORT);
	udp.len = htons(l4_len);
	memcpy(pseudo, &ip.saddr, 4);
	memcpy(pseudo + 4, &ip.daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	pseudo[10] = l4_len >> 8;
	pseudo[11] = l4_len & 0xff;
	udp.check = htons(csum_finish(csum_words(csum_words(0, pseudo, 12),
						 &udp, sizeof(udp))));
	memcpy(pkt + sizeof(*eth), &ip, sizeof(ip));
	memcpy(pkt + sizeof(*eth) + sizeof(ip), &udp, sizeof(udp));
}

/* Packets counted under each reason, summed over CPUs. */
static int stats_read(struct mb *m, uint64_t *packets)
{
	struct xnat_counter sum;
	int err;

	for (__u32 r = 0; r < (__u32)m->nreasons; r++) {
		err = percpu_counter_sum(m->stats_fd, r, &sum);
		if (err)
			return err;
		packets[r] = sum.packets;
	}
	return 0;
}

/*
 * Attach or detach a tracer as `xnat trace host 198.18.99.99` does: the
 * filter matches no packet of the run (the packet is 198.18.1.10 to
 * 198.19.0.2, NATed to 198.19.0.1), so the trace costs its flag test, the
 * call and the filter's compares, and sends nothing.
 */
static int trace_set(struct mb *m, bool on)
{
	struct trace_config tc = {};
	__u32 zero = 0;

	if (on) {
		tc.active = 1;
		tc.match = XNAT_TRACE_HOST;
		tc.reasons = ~0ULL;
		tc.host_family = XNAT_AF_INET;
		inet_pton(AF_INET, "198.18.99.99", &tc.host.v4);
		tc.rate = 1000;
		tc.lease_end_ns = ~0ULL;
	}
	return bpf_map_update_elem(bpf_map__fd(m->xnat->maps.xnat_trace_cfg),
				   &zero, &tc, BPF_ANY) ? -errno : 0;
}

static int config_flags(struct mb *m, __u32 flags)
{
	__u32 zero = 0;

	m->cfg.flags = flags;
	return bpf_map_update_elem(m->config_fd, &zero, &m->cfg, BPF_ANY) ?
		       -errno : 0;
}

/*
 * One call of case C: MICROBENCH_BATCH fresh packets. *NS is the kernel's
 * time per packet. Returns 1 when the verdict and the output of the last
 * pass say it took the case's path (for the forwarding cases the TTL is
 * one less than sent: less would mean the packet was not restored), 0 when
 * not, -errno when the call failed.
 */
static int run_once(struct mb *m, enum microbench_case c, uint32_t *ns)
{
	struct xdp_md ctx = {
		.data_end = MB_FRAME_LEN,
		.ingress_ifindex = m->if_lan,
	};
	uint8_t out[MB_FRAME_LEN + 64];
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = m->pkt,
		.data_size_in = MB_FRAME_LEN,
		.data_out = out,
		.data_size_out = sizeof(out),
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = MICROBENCH_BATCH,
	);
	const struct iphdr *ip = (const void *)(out + sizeof(struct ethhdr));
	int err;

	m->harness->bss->mb_target = c;
	if (c == MICROBENCH_FP_OFF) {
		err = config_flags(m, XNAT_F_FASTPATH_OFF);
		if (err)
			return err;
	}
	if (c == MICROBENCH_TRACED) {
		err = trace_set(m, true);
		if (err)
			return err;
	}
	if (c == MICROBENCH_OFFLOAD && (err = microbench_offload(m->xnat, m->if_lan, true)))
		return err;
	err = bpf_prog_test_run_opts(bpf_program__fd(m->harness->progs.xdp_mbench),
				     &opts);
	if (err)
		err = -errno;
	if (c == MICROBENCH_FP_OFF && !err)
		err = config_flags(m, 0);
	if (c == MICROBENCH_TRACED && !err)
		err = trace_set(m, false);
	if (c == MICROBENCH_OFFLOAD && !err)
		err = microbench_offload(m->xnat, m->if_lan, false);
	if (err)
		return err;
	*ns = opts.duration;
	if (c == MICROBENCH_EMPTY)
		return opts.retval == XDP_PASS;
	return opts.retval == XDP_REDIRECT &&
	       opts.data_size_out == MB_FRAME_LEN && ip->ttl == MB_TTL - 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static const char *const case_names[MICROBENCH_CASES] = {
	[MICROBENCH_FAST] = "fast path",
	[MICROBENCH_FP_OFF] = "fast path off",
	[MICROBENCH_FLOOR] = "xdp_fwd",
	[MICROBENCH_EMPTY] = "empty",
	[MICROBENCH_TRACED] = "fast path, idle trace",
	[MICROBENCH_OFFLOAD] = "offload hit",
};

/* The first xdp_xnat pass creates the flow (slow path); then every case
 * warms its code and maps. On a failed call, *FAILED names its case. */
static int warm_up(struct mb *m, int *failed)
{
	uint32_t t;

	for (int i = 0; i < MB_WARMUP; i++)
		for (int c = 0; c < MICROBENCH_CASES; c++) {
			int ok = run_once(m, c, &t);

			if (ok < 0) {
				*failed = c;
				return ok;
			}
		}
	return 0;
}

/* CALLS timed rounds, the cases rotating within each so that none always
 * follows the same one; BAD counts calls off their path. */
static int timed_rounds(struct mb *m, uint32_t *ns[MICROBENCH_CASES],
			uint64_t bad[MICROBENCH_CASES], int calls, int *failed)
{
	for (int i = 0; i < calls; i++)
		for (int j = 0; j < MICROBENCH_CASES; j++) {
			int c = (i + j) % MICROBENCH_CASES;
			int ok = run_once(m, c, &ns[c][i]);

			if (ok < 0) {
				*failed = c;
				return ok;
			}
			bad[c] += !ok;
		}
	return 0;
}

/* Packets the trace's filter matched over the run (it must match none). */
static __u64 trace_matched(struct mb *m)
{
	int fd = bpf_map__fd(m->xnat->maps.xnat_trace_cpu);
	struct trace_cpu per[m->ncpus];
	__u64 n = 0;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, per))
		return ~0ULL;
	for (int c = 0; c < m->ncpus; c++)
		n += per[c].matched;
	return n;
}

/*
 * Packets that took the path their case is about. xdp_xnat's path is
 * proven by its counters over the whole run (fwd_fast must have grown by
 * the fast path's packets, traced or not, fwd_routed by the fast-path-off
 * ones, and nothing else at all; the trace's filter matched nothing), the
 * others' by their verdicts and output alone.
 */
static void check_paths(struct mb *m, struct microbench_result *r,
			const uint64_t *before, const uint64_t *after,
			const uint64_t bad[MICROBENCH_CASES], int calls)
{
	uint64_t other = 0;

	for (int c = 0; c < MICROBENCH_CASES; c++)
		r->c[c].on_path = (uint64_t)(calls - bad[c]) * MICROBENCH_BATCH;
	for (int i = 0; i < m->nreasons; i++) {
		if (i == XNAT_FWD_FAST || i == XNAT_FWD_ROUTED ||
		    after[i] == before[i])
			continue;
		other += after[i] - before[i];
		pr_warn("Microbenchmark: xdp_xnat counted %llu packets as %s\n",
			(unsigned long long)(after[i] - before[i]),
			i < XNAT_REASON_MAX ? reasons[i].name : "?");
	}
	if (other) {
		r->c[MICROBENCH_FAST].on_path = 0;
		r->c[MICROBENCH_FP_OFF].on_path = 0;
		r->c[MICROBENCH_TRACED].on_path = 0;
		r->c[MICROBENCH_OFFLOAD].on_path = 0;
	}
	if (after[XNAT_FWD_FAST] - before[XNAT_FWD_FAST] <
	    r->c[MICROBENCH_FAST].on_path + r->c[MICROBENCH_TRACED].on_path +
	    r->c[MICROBENCH_OFFLOAD].on_path) {
		r->c[MICROBENCH_FAST].on_path = 0;
		r->c[MICROBENCH_TRACED].on_path = 0;
		r->c[MICROBENCH_OFFLOAD].on_path = 0;
	}
	if (after[XNAT_FWD_ROUTED] - before[XNAT_FWD_ROUTED] <
	    r->c[MICROBENCH_FP_OFF].on_path)
		r->c[MICROBENCH_FP_OFF].on_path =
			after[XNAT_FWD_ROUTED] - before[XNAT_FWD_ROUTED];
	if (trace_matched(m)) {
		pr_warn("Microbenchmark: the idle trace's filter matched packets\n");
		r->c[MICROBENCH_TRACED].on_path = 0;
	}
}

/* Each case's min, median and max of CALLS timings (sorts NS). */
static void summarize(struct microbench_result *r,
		      uint32_t *ns[MICROBENCH_CASES], int calls)
{
	for (int c = 0; c < MICROBENCH_CASES; c++) {
		struct microbench_stat *s = &r->c[c];

		qsort(ns[c], calls, sizeof(*ns[c]), cmp_u32);
		s->name = case_names[c];
		s->calls = calls;
		s->packets = (uint64_t)calls * MICROBENCH_BATCH;
		s->min_ns = ns[c][0];
		s->max_ns = ns[c][calls - 1];
		s->median_ns = calls % 2 ? ns[c][calls / 2] :
				(ns[c][calls / 2 - 1] + ns[c][calls / 2]) / 2.0;
	}
}

/* The measurement proper, in the testbed: counters read around the timed
 * rounds (not the warm-up). */
static int measure(struct mb *m, struct microbench_result *r, int calls)
{
	uint64_t before[m->nreasons], after[m->nreasons];
	uint64_t bad[MICROBENCH_CASES] = {};
	uint32_t *ns[MICROBENCH_CASES] = {};
	int c, failed = 0, err = 0;

	for (c = 0; c < MICROBENCH_CASES && !err; c++) {
		ns[c] = calloc(calls, sizeof(*ns[c]));
		if (!ns[c])
			err = -ENOMEM;
	}
	if (err)
		goto out;
	err = warm_up(m, &failed);
	if (err)
		goto out_call;
	err = stats_read(m, before);
	if (err)
		goto out_stats;
	err = timed_rounds(m, ns, bad, calls, &failed);
	if (err)
		goto out_call;
	err = stats_read(m, after);
	if (err)
		goto out_stats;
	check_paths(m, r, before, after, bad, calls);
	summarize(r, ns, calls);
	goto out;

out_call:
	pr_warn("Microbenchmark: BPF_PROG_RUN of %s failed: %s\n",
		case_names[failed], strerror(-err));
	goto out;
out_stats:
	pr_warn("Microbenchmark: reading the data path's counters: %s\n",
		strerror(-err));
out:
	for (c = 0; c < MICROBENCH_CASES; c++)
		free(ns[c]);
	return err;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* Load everything into a fresh network namespace of this thread, measure
 * CALLS rounds there, unload, and come back. */
static int run_isolated(struct microbench_result *r, int calls)
{
	struct mb m = { .harness_link = -1 };
	int saved_ns, err;

	m.ncpus = libbpf_num_possible_cpus();
	if (m.ncpus <= 0) {
		pr_warn("Microbenchmark: cannot count the CPUs\n");
		return -EINVAL;
	}
	saved_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved_ns < 0) {
		err = -errno;
		pr_warn("Microbenchmark: cannot open this thread's network "
			"namespace: %s\n", strerror(-err));
		return err;
	}
	/* This thread only; the namespace goes away with the last reference
	 * (our setns back below), and the veths with it. */
	if (unshare(CLONE_NEWNET)) {
		err = -errno;
		pr_warn("Microbenchmark: cannot create a network namespace: %s\n",
			strerror(-err));
		close(saved_ns);
		return err;
	}
	err = testbed_up(&m);
	if (!err)
		err = load_xnat(&m);
	if (!err)
		err = load_fwd(&m);
	build_packet(m.pkt);
	if (!err)
		err = load_harness(&m);
	if (!err)
		err = measure(&m, r, calls);
	if (m.harness_link >= 0)
		close(m.harness_link);
	xnat_mbench_bpf__destroy(m.harness);
	xnat_fwd_bpf__destroy(m.fwd);
	xnat_bench_bpf__destroy(m.empty);
	xnat_bpf__destroy(m.xnat);
	if (setns(saved_ns, CLONE_NEWNET)) {
		int e = -errno;

		pr_warn("Microbenchmark: cannot return to the caller's network "
			"namespace: %s\n", strerror(-e));
		err = err ? err : e;
	}
	close(saved_ns);
	return err;
}

/* Net costs (less the empty program's) and their ratios; -EPROTO when a
 * case's packets left its path. */
static int conclude(struct microbench_result *r)
{
	int err = 0;

	for (int c = 0; c < MICROBENCH_CASES; c++)
		r->c[c].net_ns = c == MICROBENCH_EMPTY ? 0 :
			r->c[c].median_ns - r->c[MICROBENCH_EMPTY].median_ns;
	r->fast_vs_floor = ratio(r->c[MICROBENCH_FAST].net_ns,
				 r->c[MICROBENCH_FLOOR].net_ns);
	r->off_vs_floor = ratio(r->c[MICROBENCH_FP_OFF].net_ns,
				r->c[MICROBENCH_FLOOR].net_ns);
	r->off_vs_fast = ratio(r->c[MICROBENCH_FP_OFF].net_ns,
			       r->c[MICROBENCH_FAST].net_ns);
	r->traced_vs_fast = ratio(r->c[MICROBENCH_TRACED].net_ns,
				  r->c[MICROBENCH_FAST].net_ns);
	r->offload_vs_fast = ratio(r->c[MICROBENCH_OFFLOAD].net_ns, r->c[MICROBENCH_FAST].net_ns);
	for (int c = 0; c < MICROBENCH_CASES; c++) {
		if (r->c[c].on_path != r->c[c].packets) {
			pr_warn("Microbenchmark: %s: %llu of %llu packets took "
				"another path\n", r->c[c].name,
				(unsigned long long)(r->c[c].packets - r->c[c].on_path),
				(unsigned long long)r->c[c].packets);
			err = -EPROTO;
		}
	}
	return err;
}

int microbench_run(struct microbench_result *r, int repeat)
{
	cpu_set_t old, one;
	int err, pinned;

	memset(r, 0, sizeof(*r));
	if (repeat <= 0)
		repeat = MICROBENCH_DEFAULT_CALLS;
	if (repeat < MICROBENCH_MIN_CALLS)
		repeat = MICROBENCH_MIN_CALLS;
	if (repeat > MICROBENCH_MAX_CALLS)
		repeat = MICROBENCH_MAX_CALLS;

	/* Stay on one CPU: the counters are per CPU anyway, and a migration
	 * in the middle would mix two caches' numbers. */
	r->cpu = sched_getcpu();
	pinned = !pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
	if (pinned && r->cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(r->cpu, &one);
		pinned = !pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	}
	err = run_isolated(r, repeat);
	if (pinned)
		pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	return err ? err : conclude(r);
}
