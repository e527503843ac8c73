/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The shared fixture of the data-path unit tests (tests/unit/test_*.c that
 * run bpf/xnat.bpf.c with BPF_PROG_RUN): the testbed, a router built in a
 * private network namespace (veth ports lan0 and wan0, addresses, permanent
 * neighbours, forwarding on) so that the program's FIB lookups see a real
 * routing table; the program loaded with its maps filled as user/maps.c
 * fills them; the packet fixtures (katran style: the input packet, a
 * struct pkt_spec of pkt.h, the ingress port, the expected verdict and
 * reason counter, and for redirects the complete expected output frame,
 * built from scratch with checksums from an independent oracle,
 * csum_oracle.h); and the runner.
 *
 * Every run checks that exactly one reason counter moved, that XDP_PASS and
 * XDP_DROP leave the frame untouched and create no flow, and that a
 * redirected IPv4 frame has TTL-1 and valid checksums.
 *
 * A test file holds one feature's tests, each registered where it is
 * written (FIXTURE_TEST), and ends with FIXTURE_MAIN_REGISTERED(); or a
 * table of them and FIXTURE_MAIN(table). The runner builds the testbed,
 * runs the tests in order, prints "#N name:OK|FAIL" (the reasons on
 * stderr) and ends with "N passed, N failed". Run as root from the
 * repository root.
 */
#ifndef XNAT_TEST_FIXTURE_H
#define XNAT_TEST_FIXTURE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "check.h"
#include "pkt.h"
#include "xnat_common.h"
#include "xnat.skel.h"
#include "reasons.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- The testbed ------------------------------------------------------ */

#define MAC_LAN0     { 0x02, 0x00, 0x00, 0x00, 0x01, 0x01 }
#define MAC_WAN0     { 0x02, 0x00, 0x00, 0x00, 0x02, 0x01 }
#define MAC_LAN_HOST { 0x02, 0x00, 0x00, 0x00, 0x01, 0x0a }
#define MAC_WAN_GW   { 0x02, 0x00, 0x00, 0x00, 0x02, 0x02 }
/* A second LAN host, without a neighbour entry: replies go to the MAC its
 * packets came from. */
#define MAC_LAN_HOST2 { 0x02, 0x00, 0x00, 0x00, 0x01, 0x0b }



/* A frame arriving from the LAN host / the WAN gateway, and the frame the
 * router sends towards them. */
#define FROM_LAN .smac = MAC_LAN_HOST, .dmac = MAC_LAN0
#define FROM_WAN .smac = MAC_WAN_GW, .dmac = MAC_WAN0
#define TO_WAN   .smac = MAC_WAN0, .dmac = MAC_WAN_GW
#define TO_LAN   .smac = MAC_LAN0, .dmac = MAC_LAN_HOST
#define FROM_LAN2 .smac = MAC_LAN_HOST2, .dmac = MAC_LAN0
#define TO_LAN2  .smac = MAC_LAN0, .dmac = MAC_LAN_HOST2

#define LAN_HOST   "198.18.1.10"
#define LAN_HOST2  "198.18.1.11"
#define LAN_ROUTER "198.18.1.1"
#define NAT_ADDR   "198.19.0.1" /* wan0's address */
#define WAN_GW     "198.19.0.2"
#define WAN_NONEIGH "198.19.0.3"
#define LAN6_HOST  "2001:2:0:1::10"
#define WAN6_GW    "2001:2:0:2::2"

#define PORT_MIN 20000
#define PORT_MAX 65535
#define FLOW_CONNS 8 /* the flow table holds 2 * FLOW_CONNS entries */

/* A port or echo id standing for "the one the router chose": the fixture
 * that learns it reads it from its output, later fixtures send to it. */
#define LEARNED 1

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

/* The VLAN 100 device's stand-in (see test_vlan.c): its subnet and host. */
#define VLAN_ID      100
#define VLAN_HOST    "198.18.3.10"
#define MAC_VLAN_HOST { 0x02, 0x00, 0x00, 0x00, 0x04, 0x0a }
/* The VLAN 200 device's stand-in (vl200): its VID and host. */
#define VLAN2_ID     200
#define VLAN2_HOST   "198.18.4.10"
#define MAC_VLAN2_HOST { 0x02, 0x00, 0x00, 0x00, 0x05, 0x0a }

extern const uint8_t mac_lan0[ETH_ALEN], mac_wan0[ETH_ALEN];
extern struct xnat_bpf *skel;
extern int prog_fd, flows_fd, stats_fd, config_fd, tx_fd;
extern int if_lan, if_wan;
extern int ncpus;
extern uint16_t learned; /* the port/id LEARNED stands for */
/* A payload as big as a 1500-byte IPv4 UDP datagram carries. */
extern const char big_payload[1480];

/* Expectations of a packet the program must not forward, when which of
 * XDP_PASS / XDP_DROP and which reason is the program's choice. */
#define NOT_FORWARDED (-1)
#define ANY_REASON (-1)


enum side { LAN, WAN, LO /* not an xnat port */ };

struct fixture {
	const char *name;
	enum side ingress;
	struct pkt_spec in;
	/* Layout of the input: pkt_build() unless set. */
	size_t (*build)(uint8_t *buf, const struct pkt_spec *s);
	/* Break the built frame; returns its new length. */
	size_t (*mutate)(uint8_t *buf, size_t len);
	uint32_t linear;        /* bytes in the linear part; 0: all */
	int verdict;
	int reason;
	/* For redirects: the whole expected output frame. */
	bool has_out;
	struct pkt_spec out;
	/* Read the router's chosen port/echo id from the output first (it
	 * must be in the XDP range); out's LEARNED fields then take it. */
	bool learn;
	/* Extra checks after the run (map contents...). */
	bool (*check)(const uint8_t *out, size_t out_len);
	/* ICMP errors: in and out are the outer headers, these the packet
	 * each quotes, cut to quote_len bytes (0: whole). */
	const struct pkt_spec *in_quote, *out_quote;
	uint16_t quote_len;
};

/* ---- Packets the tests of several files send ------------------------- */

/* UDP from the LAN host to the WAN gateway and as NAT sends it on; a
 * reply from the gateway and as NAT delivers it. */
#define UDP_OUT(sp, dp) .ingress = LAN,                                      \
	.in = UDP_PKT(LAN_HOST, WAN_GW, sp, dp, FROM_LAN, .ttl = 64, .ip_id = 0x1234)
#define UDP_OUT_NAT(sp, dp) .has_out = true,                                 \
	.out = UDP_PKT(NAT_ADDR, WAN_GW, sp, dp, TO_WAN, .ttl = 63, .ip_id = 0x1234)
#define UDP_REPLY(sp, dp) .ingress = WAN,                                    \
	.in = UDP_PKT(WAN_GW, NAT_ADDR, sp, dp, FROM_WAN, .ttl = 57, .ip_id = 0xbeef)
#define UDP_REPLY_NAT(sp, dp) .has_out = true,                               \
	.out = UDP_PKT(WAN_GW, LAN_HOST, sp, dp, TO_LAN, .ttl = 56, .ip_id = 0xbeef)

/* Ingress and packet of UDP from the WAN gateway to the NAT address. */
#define UDP_WAN_IN(sp, dp, ...)                                              \
	WAN, UDP_PKT(WAN_GW, NAT_ADDR, sp, dp, FROM_WAN, __VA_ARGS__)

/* A LAN->WAN UDP packet forwarded as REASON (SLOW, FAST...) with source
 * port NSP, and a reply the other way delivered to the LAN host's LDP. */
#define UDP_NAT(sp, dp, reason, nsp)                                         \
	UDP_OUT(sp, dp), FWD(reason), UDP_OUT_NAT(nsp, dp)
#define UDP_UNNAT(sp, dp, reason, ldp)                                       \
	UDP_REPLY(sp, dp), FWD(reason), UDP_REPLY_NAT(sp, ldp)

#define TCP_OUT(sp, flags, sq, ak) .ingress = LAN,                           \
	.in = TCP_PKT(LAN_HOST, WAN_GW, sp, 443, FROM_LAN, .tcp_flags = flags, \
		      .seq = sq, .ack_seq = ak, .ttl = 64, .ip_id = 0x0101)
#define TCP_OUT_NAT(sp, flags, sq, ak) .has_out = true,                      \
	.out = TCP_PKT(NAT_ADDR, WAN_GW, sp, 443, TO_WAN, .tcp_flags = flags, \
		       .seq = sq, .ack_seq = ak, .ttl = 63, .ip_id = 0x0101)

/* An ICMP echo request from the LAN host, and as NAT sends it on. */
#define ECHO_PKT(sa, da, id, sq, t, ...)                                     \
	{ .saddr = sa, .daddr = da, .proto = IPPROTO_ICMP,                    \
	  .icmp_type = ICMP_ECHO, .icmp_id = id, .icmp_seq = sq, .ttl = t,    \
	  __VA_ARGS__ }
#define ECHO_OUT(id, sq)                                                     \
	.ingress = LAN, .in = ECHO_PKT(LAN_HOST, WAN_GW, id, sq, 64, FROM_LAN)
#define ECHO_OUT_NAT(sq)                                                     \
	.has_out = true,                                                      \
	.out = ECHO_PKT(NAT_ADDR, WAN_GW, LEARNED, sq, 63, TO_WAN)

/* IPv6 UDP from the LAN host, routed without NAT (TTL t in, t - 1 out). */
#define UDP6_OUT(sp, dp, t)                                                  \
	.ingress = LAN,                                                       \
	.in = UDP_PKT(LAN6_HOST, WAN6_GW, sp, dp, FROM_LAN, .ttl = t)
#define UDP6_OUT_ROUTED(sp, dp, t)                                           \
	.has_out = true,                                                      \
	.out = UDP_PKT(LAN6_HOST, WAN6_GW, sp, dp, TO_WAN, .ttl = (t) - 1)

/* The first SYN of a port-forwarded connection (configs: 8080 -> the LAN
 * host's 80), as the WAN sends it and as the LAN server gets it. */
#define FWD_SYN                                                               \
	.ingress = WAN,                                                       \
	.in = TCP_PKT(WAN_GW, NAT_ADDR, 33333, 8080, FROM_WAN, \
		      .tcp_flags = TCP_SYN, .seq = 42, .ttl = 60, .ip_id = 7), \
	.verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .has_out = true,    \
	.out = TCP_PKT(WAN_GW, LAN_HOST, 33333, 80, TO_LAN, \
		       .tcp_flags = TCP_SYN, .seq = 42, .ttl = 59, .ip_id = 7)

/* A well-formed packet that the malformed tests then break. */
#define MAL_UDP4 .in = UDP_PKT(LAN_HOST, WAN_GW, 40000, 53, FROM_LAN)
#define MAL_TCP4                                                              \
	.in = TCP_PKT(LAN_HOST, WAN_GW, 40000, 443, FROM_LAN, .tcp_flags = TCP_SYN)
#define MAL_UDP6 .in = UDP_PKT(LAN6_HOST, WAN6_GW, 40000, 53, FROM_LAN)
#define MAL_ICMP4 .in = ECHO_PKT(LAN_HOST, WAN_GW, 7, 0, 0, FROM_LAN)
#define MALFORMED .verdict = XDP_DROP, .reason = XNAT_DROP_MALFORMED

/* A verdict and its reason counter on one line: PASS(TTL) is XDP_PASS
 * counted as XNAT_PASS_TTL. */
#define PASS(r) .verdict = XDP_PASS, .reason = XNAT_PASS_##r
#define DROP(r) .verdict = XDP_DROP, .reason = XNAT_DROP_##r
#define FWD(r) .verdict = XDP_REDIRECT, .reason = XNAT_FWD_##r

/* Not forwarded, whichever of XDP_PASS/XDP_DROP and reason the program
 * picks (what a kernel router never forwards). */
#define NOT_FWD .verdict = NOT_FORWARDED, .reason = ANY_REASON

/* ---- Helpers (fixture.c) --------------------------------------------- */

const char *verdict_name(int v);
const char *reason_name(int r);
/* Counters summed over the CPUs. */
void stats_read(struct xnat_counter sum[XNAT_REASON_MAX]);
int flows_count(void);
/* Delete every entry of FD, at most BOUND of them. */
void map_clear(int fd, int bound);
/* xnat_port_active all zero ("not known"), as the loader leaves it. */
void port_active_clear(void);
/* Forget all NAT state: flows, mappings, port owners, peers, bindings and
 * the hosts' counts. */
void flows_clear(void);
struct flow_key flow_key4(const char *saddr, uint16_t sport,
			  const char *daddr, uint16_t dport,
			  uint8_t proto, int ifindex);
bool config_get(struct xnat_config *c);
bool config_set(const struct xnat_config *c);
/* One BPF_PROG_RUN of FRAME on IFINDEX (see fixture.c). */
bool xdp_run(int ifindex, const uint8_t *frame, uint32_t len,
	     uint32_t linear, uint8_t *out, uint32_t *out_len,
	     uint32_t *retval);
/* Run FRAME and check verdict, counters and the untouched cases. */
bool run_expect(const char *step, int ifindex, const uint8_t *frame,
		uint32_t len, uint32_t linear, int verdict, int reason,
		uint8_t *out, uint32_t *out_len);
int side_ifindex(enum side side);
/* Compare an output frame with the expected one; a hexdump when not. */
bool expect_bytes(const uint8_t *act, size_t act_len,
		  const uint8_t *exp, size_t exp_len, const char *what);
/* Replace LEARNED in the ports and echo id of S. */
void spec_resolve(struct pkt_spec *s);
/* Learn the source port (or echo id) of a frame that left to the WAN. */
bool learn_port(const uint8_t *out, size_t len, uint8_t proto);
/* What every redirected frame must satisfy, whatever the rewrite. */
bool check_forwarded(const uint8_t *in, size_t in_len,
		     const uint8_t *out, size_t out_len);
bool run_fixture(const struct fixture *f);
/* F's steps in order, stopping at the first failure. */
bool run_fixtures(const struct fixture *f, size_t n);
/* Independent cases: each on an empty table, all run, all reported. */
bool run_fixtures_each(const struct fixture *f, size_t n);
/* Send a LAN->WAN UDP packet of a new flow from SPORT; expect as given. */
bool udp_out(uint16_t sport, uint16_t dport, int verdict, int reason);
/* Make a built IPv4 UDP frame a first fragment (MF, offset 0), or the
 * last one (offset 1480); both return the length. */
size_t mut_frag_mf(uint8_t *buf, size_t len);
size_t mut_frag_offset(uint8_t *buf, size_t len);
/* Run F and copy its output to OUT. */
bool run_save(const struct fixture *f, uint8_t *out, uint32_t *out_len);

/* ---- The test table and the runner ------------------------------------ */

struct test {
	const char *name;
	bool clean; /* empty the flow table first */
	const struct fixture *steps;
	size_t nsteps;
	bool (*fn)(void);
	/* Each of the steps is a test of its own, under its fixture's name,
	 * on an empty flow table (name and clean are then unused). */
	bool each;
	/* XXX: an open defect this test shows; a failure is reported as a
	 * skip naming it until fixed (see the comment at the test). */
	const char *known_defect;
};

#define STEPS(a) .steps = a, .nsteps = ARRAY_SIZE(a)

/* Build the testbed and load the program, without running tests (the
 * fuzzer's start); 0 or -1. */
int fixture_setup(void);
/* The same without its checks of the caller (stderr buffering, root): the
 * runner's (fixture_setup.c). */
int fixture_testbed(void);

/* What a test file may change of the testbed: the flow table's size (0:
 * 2 * FLOW_CONNS entries) and a step run after it is built (0 or -1). */
struct fixture_opts {
	unsigned int flow_entries;
	int (*setup)(void);
};
int fixture_testbed_opts(const struct fixture_opts *o);

/* Build the testbed, run the N tests of T in order, report; the exit code
 * of the binary. */
int fixture_main(const char *prog, const struct test *t, size_t n);
/* The same on a testbed changed by O. */
int fixture_main_opts(const char *prog, const struct test *t, size_t n,
		      const struct fixture_opts *o);

/*
 * A test registered where it is written, FIXTURE_TEST(name, clean, ...)
 * taking struct test's fields, instead of in a table at the end: the
 * runner (FIXTURE_MAIN_REGISTERED) runs a file's tests in the order of
 * their lines. A pointer to each goes to the section xnat_tests, as the
 * kernel's initcalls do.
 */
struct test_reg {
	int line;
	struct test t;
};

#define FIXTURE_CAT(a, b) a##b
#define FIXTURE_REG_VAR(l) FIXTURE_CAT(fixture_test_, l)
#define FIXTURE_REG_PTR(l) FIXTURE_CAT(fixture_test_ptr_, l)
#define FIXTURE_TEST(...)                                                     \
	static const struct test_reg FIXTURE_REG_VAR(__LINE__) = {            \
		__LINE__, { __VA_ARGS__ }                                     \
	};                                                                    \
	static const struct test_reg *const FIXTURE_REG_PTR(__LINE__)         \
		__attribute__((section("xnat_tests"), used)) =                \
			&FIXTURE_REG_VAR(__LINE__)

/* fixture_main_opts() over the registered tests, in line order. */
int fixture_main_registered(const char *prog, const struct fixture_opts *o);

#define FIXTURE_MAIN_REGISTERED()                                             \
	int main(void)                                                        \
	{                                                                     \
		return fixture_main_registered(__FILE__, NULL);               \
	}

#define FIXTURE_MAIN(table)                                                   \
	int main(void)                                                        \
	{                                                                     \
		return fixture_main(__FILE__, table, ARRAY_SIZE(table));      \
	}

#endif /* XNAT_TEST_FIXTURE_H */
