// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the benchmark's bare forwarder (bpf/bench/xnat_fwd.bpf.c,
 * the floor the bench compares the router with) and of its
 * microbenchmark (user/bench/microbench.c). The binary unshares a private
 * network namespace with a small router (fwdin, fwdout) for the
 * forwarder; everything disappears with the process. Each forwarder case
 * is a crafted frame run by BPF_PROG_RUN whose verdict and output bytes
 * are compared with the frame built from the expected spec. No test
 * asserts anything about timing.
 *
 * Run as root from the repository root. Prints "#N name:OK|FAIL", the
 * reasons and the microbenchmark's numbers on stderr, and ends with
 * "N passed, N failed" (bench_harness.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_harness.h"
#include "check.h"
#include "pkt.h"
#include "microbench.h"
#include "xnat_fwd.skel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- The bare forwarder (bpf/bench/xnat_fwd.bpf.c) ------------------------------ */

/* Its own router in the test namespace: fwdin (198.18.10.1/24,
 * 2001:2:0:10::1/64) and fwdout (198.19.10.1/24, 2001:2:0:11::1/64), the
 * next hop 198.19.10.2 / 2001:2:0:11::2 a permanent neighbour on fwdout. */
#define MAC_FWDIN   { 0x02, 0, 0, 0, 0x10, 0x01 }
#define MAC_FWDOUT  { 0x02, 0, 0, 0, 0x11, 0x01 }
#define MAC_SENDER  { 0x02, 0, 0, 0, 0x10, 0x0a }
#define MAC_NEXTHOP { 0x02, 0, 0, 0, 0x11, 0x02 }
#define FROM_SENDER .smac = MAC_SENDER, .dmac = MAC_FWDIN
#define TO_NEXTHOP  .smac = MAC_FWDOUT, .dmac = MAC_NEXTHOP

static int if_fwdin, if_fwdout;

struct fwd_case {
	const char *name;
	struct pkt_spec in;
	int verdict;
	bool has_out;           /* else: the output is the input */
	struct pkt_spec out;
	size_t (*build)(uint8_t *buf, const struct pkt_spec *s);
	uint32_t trunc;         /* cut the frame to this many bytes */
};

/* The sender's and the next hop's addresses; UDP 1000 -> 53 between
 * them as sent and as forwarded. */
#define SND4 "198.18.10.10"
#define SND6 "2001:2:0:10::10"
#define HOP4 "198.19.10.2"
#define HOP6 "2001:2:0:11::2"
#define SENT_UDP(sa, da, ...) UDP_PKT(sa, da, 1000, 53, FROM_SENDER, __VA_ARGS__)
#define OUT_UDP(sa, da, ...) UDP_PKT(sa, da, 1000, 53, TO_NEXTHOP, __VA_ARGS__)

static const struct fwd_case fwd_cases[] = {
	{ "ipv4 udp forwarded", SENT_UDP(SND4, HOP4, .ttl = 64), XDP_REDIRECT, .has_out = true,
	  .out = OUT_UDP(SND4, HOP4, .ttl = 63) },
	{ "ipv4 tcp forwarded, TTL 2",
	  TCP_PKT(SND4, HOP4, 1000, 80, FROM_SENDER, .ttl = 2, .tcp_flags = 0x10), XDP_REDIRECT, .has_out = true,
	  .out = TCP_PKT(SND4, HOP4, 1000, 80, TO_NEXTHOP, .ttl = 1, .tcp_flags = 0x10) },
	{ "ipv6 udp forwarded", SENT_UDP(SND6, HOP6, .ttl = 64), XDP_REDIRECT, .has_out = true,
	  .out = OUT_UDP(SND6, HOP6, .ttl = 63) },
	{ "ipv4 TTL 1 to the kernel", SENT_UDP(SND4, HOP4, .ttl = 1), .verdict = XDP_PASS },
	{ "ipv6 hop limit 1 to the kernel", SENT_UDP(SND6, HOP6, .ttl = 1), .verdict = XDP_PASS },
	{ "ipv4 unresolved neighbour to the kernel", SENT_UDP(SND4, "198.19.10.3"), .verdict = XDP_PASS },
	{ "ipv4 for the router itself", SENT_UDP(SND4, "198.18.10.1"), .verdict = XDP_PASS },
	{ "ipv4 unreachable route to the kernel", SENT_UDP(SND4, "198.18.200.1"), .verdict = XDP_PASS },
	{ "ipv6 link-local destination", SENT_UDP(SND6, "fe80::1"), .verdict = XDP_PASS },
	{ "ipv6 multicast destination", SENT_UDP(SND6, "ff02::1"), .verdict = XDP_PASS },
	{ "arp to the kernel", { FROM_SENDER, .saddr = SND4, .daddr = "198.18.10.1" }, XDP_PASS,
	  .build = pkt_build_arp },
	{ "truncated ipv4 dropped", SENT_UDP(SND4, HOP4), XDP_DROP, .trunc = 30 },
};

static bool run_fwd_case(int prog_fd, const struct fwd_case *f)
{
	uint8_t in[PKT_MAX], out[PKT_MAX], want[PKT_MAX];
	uint32_t len, out_len, want_len, retval;
	bool ok;

	len = (f->build ? f->build : pkt_build)(in, &f->in);
	if (f->trunc)
		len = f->trunc;
	if (!run_prog(prog_fd, if_fwdin, in, len, 1, out, &out_len, &retval))
		return false;
	ok = ASSERT_EQ(retval, f->verdict, f->name);
	if (f->has_out) {
		want_len = pkt_build(want, &f->out);
	} else {
		memcpy(want, in, len);
		want_len = len;
	}
	ok &= ASSERT_TRUE(out_len == want_len && !memcmp(out, want, want_len),
			  f->name);
	return ok;
}

/* Every case of the table, then a port that leaves the map. */
static bool test_fwd_cases(void)
{
	const struct fwd_case *fwd4 = &fwd_cases[0];
	struct xnat_fwd_bpf *skel;
	__u32 ports[2] = { if_fwdin, if_fwdout };
	int prog_fd, map_fd, i;
	bool ok = true;

	skel = xnat_fwd_bpf__open_and_load();
	if (!ASSERT_TRUE(skel, "load xnat_fwd"))
		return false;
	prog_fd = bpf_program__fd(skel->progs.xdp_fwd);
	map_fd = bpf_map__fd(skel->maps.xdp_tx_ports);
	for (i = 0; i < 2; i++)
		ok &= ASSERT_OK(bpf_map_update_elem(map_fd, &ports[i], &ports[i],
						    BPF_ANY), "xdp_tx_ports");
	for (i = 0; i < (int)ARRAY_SIZE(fwd_cases) && ok; i++)
		ok &= run_fwd_case(prog_fd, &fwd_cases[i]);
	/* Not in xdp_tx_ports: the kernel's, untouched. */
	ok &= ASSERT_OK(bpf_map_delete_elem(map_fd, &ports[1]), "delete fwdout");
	if (ok) {
		struct fwd_case f = *fwd4;

		f.name = "egress not in xdp_tx_ports";
		f.verdict = XDP_PASS;
		f.has_out = false;
		ok &= run_fwd_case(prog_fd, &f);
	}
	xnat_fwd_bpf__destroy(skel);
	return ok;
}

/* ---- Microbenchmark ------------------------------------------------------ */

static bool test_microbench(void)
{
	struct microbench_result r;
	bool ok;
	int c;

	ok = ASSERT_OK(microbench_run(&r, 5), "microbench_run");
	for (c = 0; c < MICROBENCH_CASES; c++) {
		const struct microbench_stat *s = &r.c[c];

		fprintf(stderr, "  (info) %-13s min %4.0f median %5.1f max %5.0f "
			"net %5.1f ns/packet, %llu packets, %llu on its path\n",
			s->name ? s->name : "?", s->min_ns, s->median_ns,
			s->max_ns, s->net_ns, (unsigned long long)s->packets,
			(unsigned long long)s->on_path);
		ok &= ASSERT_TRUE(s->median_ns > 0 && s->min_ns > 0, s->name);
		ok &= ASSERT_EQ(s->packets, 5 * MICROBENCH_BATCH, "packets");
		/* fast path: fwd_fast grew by exactly its packets; fast path
		 * off: fwd_routed did; xdp_fwd redirected with TTL - 1. */
		ok &= ASSERT_EQ(s->on_path, s->packets, "packets on their path");
	}
	fprintf(stderr, "  (info) fast/floor %.2f, off/floor %.2f, off/fast %.2f "
		"(CPU %d)\n", r.fast_vs_floor, r.off_vs_floor, r.off_vs_fast,
		r.cpu);
	return ok;
}

/* ---- Leftovers ----------------------------------------------------------- */

/* Every open and close above left no descriptor and no program behind. */
static bool test_nothing_left(void)
{
	bool ok = ASSERT_EQ(count_fds(), bench_fds_at_start, "open descriptors");

	ok &= ASSERT_TRUE(!xdp_attached(if_fwdin), "fwdin clean");
	ok &= ASSERT_TRUE(!xdp_attached(if_fwdout), "fwdout clean");
	return ok;
}

/* ---- Setup and main ------------------------------------------------------ */

static int setup(void)
{
	if (unshare_net(NULL))
		return -1;
	/* No IPv6 chatter (ND, MLD) but on the router's ports. */
	write_file("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	/* The bare forwarder's router. */
	if (sh("ip link add fwdin address 02:00:00:00:10:01 type veth peer name fwdinp") ||
	    sh("ip link add fwdout address 02:00:00:00:11:01 type veth peer name fwdoutp"))
		return -1;
	write_file("/proc/sys/net/ipv6/conf/fwdin/disable_ipv6", "0");
	write_file("/proc/sys/net/ipv6/conf/fwdout/disable_ipv6", "0");
	if (sh("ip link set fwdin up && ip link set fwdinp up && "
	       "ip link set fwdout up && ip link set fwdoutp up && "
	       "ip addr add 198.18.10.1/24 dev fwdin && "
	       "ip addr add 198.19.10.1/24 dev fwdout && "
	       "ip addr add 2001:2:0:10::1/64 dev fwdin nodad && "
	       "ip addr add 2001:2:0:11::1/64 dev fwdout nodad && "
	       "ip neigh add 198.19.10.2 lladdr 02:00:00:00:11:02 dev fwdout nud permanent && "
	       "ip -6 neigh add 2001:2:0:11::2 lladdr 02:00:00:00:11:02 dev fwdout nud permanent && "
	       "ip route add unreachable 198.18.200.0/24") ||
	    router_ports("fwdin", &if_fwdin, "fwdout", &if_fwdout))
		return -1;
	return pin_this_cpu() < 0 ? -1 : 0;
}

static const struct bench_test tests[] = {
	{ "fwd_cases", test_fwd_cases },
	{ "microbench", test_microbench },
	{ "nothing_left", test_nothing_left },
};

int main(void)
{
	return bench_tests_main("test_fwd", setup, tests, ARRAY_SIZE(tests));
}
