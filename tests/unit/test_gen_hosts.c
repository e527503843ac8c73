// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generator's many-hosts mode (user/bench/gen.c, ports_per_host), as
 * the bench's many-endpoint profiles use it: frame i comes from address
 * src_ip + (flow_first + i) / ports_per_host, port src_port + the
 * remainder, to port dst_port + (flow_first + i) % n_dports, and both
 * checksums are right by the independent oracle (csum_oracle.h). Frames
 * are made one by one with BPF_PROG_RUN (non-live) in a private network
 * namespace with a veth pair, which disappears with the process.
 *
 * Run as root from the repository root; prints "#N name:OK|FAIL" and ends
 * with "N passed, N failed".
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "check.h"
#include "csum_oracle.h"
#include "pkt.h"
#include "gen.h"

static int if_gen;

/* Frame I of G must come from SADDR:SPORT and go to port DPORT. */
static bool frame_ok(struct gen *g, const char *saddr, uint16_t sport,
		     uint16_t dport)
{
	uint8_t in[PKT_MAX] = {}, out[PKT_MAX];
	struct xdp_md ctx = { .data_end = 60, .ingress_ifindex = if_gen };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_size_in = 60,
		    .data_out = out, .data_size_out = PKT_MAX, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	const struct pkt_v4_udp *p = (const void *)out;
	__be32 want;
	bool ok;

	if (!ASSERT_OK(bpf_prog_test_run_opts(gen_prog_fd(g), &opts), "run"))
		return false;
	inet_pton(AF_INET, saddr, &want);
	ok = ASSERT_EQ(opts.data_size_out, 60, "frame length");
	ok &= ASSERT_EQ(p->ip.saddr, want, "source address");
	ok &= ASSERT_EQ(ntohs(p->udp.source), sport, "source port");
	ok &= ASSERT_EQ(ntohs(p->udp.dest), dport, "destination port");
	ok &= ASSERT_TRUE(csum_oracle_ipv4_hdr_ok(&p->ip), "IPv4 checksum");
	ok &= ASSERT_TRUE(csum_oracle_l4_v4_ok(&p->ip.saddr, &p->ip.daddr,
					       IPPROTO_UDP, &p->udp, 60 - 34),
			  "UDP checksum");
	return ok;
}

/* 4 hosts of 4 ports, 3 destination ports, starting at endpoint 2. */
static bool test_gen_hosts(void)
{
	struct gen_config c = {
		.ifindex = if_gen, .src_port = 1024, .dst_port = 9,
		.flows = 14, .ports_per_host = 4, .n_dports = 3,
		.flow_first = 2, .sizes = { 60 }, .weights = { 1 },
		.n_sizes = 1, .duration_s = 0.1,
	};
	char addr[INET_ADDRSTRLEN];
	struct gen *g;
	bool ok = true;

	inet_pton(AF_INET, "198.18.64.0", &c.src_ip);
	inet_pton(AF_INET, "198.19.0.2", &c.dst_ip);
	if (!ASSERT_OK(gen_open(&g, &c), "gen_open"))
		return false;
	for (int i = 0; i < 20 && ok; i++) {
		int ep = 2 + i % 14;

		snprintf(addr, sizeof(addr), "198.18.64.%d", ep / 4);
		ok &= frame_ok(g, addr, 1024 + ep % 4, 9 + ep % 3);
	}
	gen_close(g);
	/* Endpoints past what the source ports allow are refused. */
	c.src_port = 65534;
	ok &= ASSERT_EQ(gen_open(&g, &c), -EINVAL, "ports beyond 65535");
	return ok;
}

int main(void)
{
	bool ok;

	cur_test = "setup";
	if (geteuid() || unshare(CLONE_NEWNET) ||
	    system("ip link add gen0 type veth peer name sink0 && "
		   "ip link set gen0 up && ip link set sink0 up") ||
	    !(if_gen = if_nametoindex("gen0"))) {
		printf("#1 setup:FAIL\n0 passed, 1 failed\n");
		return 1;
	}
	cur_test = "gen_hosts";
	ok = test_gen_hosts() && !check_failures;
	printf("#1 gen_hosts:%s\n%d passed, %d failed\n", ok ? "OK" : "FAIL",
	       ok, !ok);
	return ok ? 0 : 1;
}
