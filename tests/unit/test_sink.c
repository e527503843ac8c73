// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the benchmark's sink (user/bench/sink.c and its program)
 * on crafted frames run through it with BPF_PROG_RUN: what it counts and
 * drops, what it passes, and what it leaves attached. The generator's
 * stamped frames against the sink are in test_gen.c (gen_stamp).
 *
 * Run as root from the repository root. Prints "#N name:OK|FAIL", the
 * reasons on stderr, and ends with "N passed, N failed" (bench_harness.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_ether.h>
#include <linux/bpf.h>

#include "bench_harness.h"
#include "check.h"
#include "pkt.h"
#include "sink.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct gen_testbed tb = { .orig_netns = -1 };

static bool sink_expect(struct sink *s, uint64_t packets, uint64_t bytes)
{
	uint64_t p, b;

	if (!ASSERT_OK(sink_read(s, &p, &b), "sink_read"))
		return false;
	return ASSERT_EQ(p, packets, "sink packets") &
	       ASSERT_EQ(b, bytes, "sink bytes");
}

/* N runs count N frames; a repeat of N counts N. */
static bool test_sink_counts(void)
{
	struct pkt_spec s = { .saddr = GEN_SRC, .daddr = GEN_DST,
			      .proto = IPPROTO_UDP, .sport = 1024, .dport = 9,
			      .pad_to = 60 };
	uint8_t in[PKT_MAX];
	uint32_t len, retval;
	struct sink *sk;
	bool ok = true;
	int i;

	memcpy(s.smac, mac_gen0, ETH_ALEN);
	memcpy(s.dmac, mac_sink0, ETH_ALEN);
	len = pkt_build(in, &s);
	if (!ASSERT_OK(sink_open(&sk, tb.if_sink), "sink_open"))
		return false;
	ok &= ASSERT_TRUE(xdp_attached(tb.if_sink), "sink attached");
	ok &= ASSERT_TRUE(!strcmp(sink_mode(sk), "native"), "native XDP on veth");
	ok &= sink_expect(sk, 0, 0);
	for (i = 0; i < 7 && ok; i++) {
		ok &= run_prog(sink_prog_fd(sk), tb.if_sink, in, len, 1, NULL, NULL,
			       &retval);
		ok &= ASSERT_EQ(retval, XDP_DROP, "sink verdict");
	}
	ok &= sink_expect(sk, 7, 7 * len);
	ok &= run_prog(sink_prog_fd(sk), tb.if_sink, in, len, 100, NULL, NULL,
		       &retval);
	ok &= sink_expect(sk, 107, 107 * len);
	sink_close(sk);
	ok &= ASSERT_TRUE(!xdp_attached(tb.if_sink), "sink0 clean after sink_close");
	return ok;
}

/* With a port, only IPv4 UDP to it counts; the rest goes to the host. */
static bool test_sink_port_filter(void)
{
	struct pkt_spec udp9 = { .saddr = GEN_SRC, .daddr = GEN_DST,
				 .proto = IPPROTO_UDP, .sport = 1024, .dport = 9 };
	struct pkt_spec udp10 = udp9, tcp9 = udp9, arp = udp9;
	uint8_t f[4][PKT_MAX];
	uint32_t len[4], retval;
	struct sink *sk;
	bool ok = true;
	int i;

	udp10.dport = 10;
	tcp9.proto = IPPROTO_TCP;
	tcp9.tcp_flags = 0x02;
	len[0] = pkt_build(f[0], &udp9);
	len[1] = pkt_build(f[1], &udp10);
	len[2] = pkt_build(f[2], &tcp9);
	len[3] = pkt_build_arp(f[3], &arp);
	if (!ASSERT_OK(sink_open_port(&sk, tb.if_sink, 9), "sink_open_port"))
		return false;
	for (i = 0; i < 4 && ok; i++) {
		ok &= run_prog(sink_prog_fd(sk), tb.if_sink, f[i], len[i], 1, NULL,
			       NULL, &retval);
		ok &= ASSERT_EQ(retval, i ? XDP_PASS : XDP_DROP, "sink verdict");
	}
	ok &= sink_expect(sk, 1, len[0]);
	sink_close(sk);
	ok &= ASSERT_TRUE(!xdp_attached(tb.if_sink), "sink0 clean after sink_close");
	return ok;
}

static int setup(void)
{
	return gen_testbed_setup(&tb);
}

static const struct bench_test tests[] = {
	{ "sink_counts", test_sink_counts },
	{ "sink_port_filter", test_sink_port_filter },
};

int main(void)
{
	return bench_tests_main("test_sink", setup, tests, ARRAY_SIZE(tests));
}
