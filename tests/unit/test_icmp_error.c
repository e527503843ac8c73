// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of ICMP errors about flows (bpf/icmp_error.h, RFC 5508):
 * errors about UDP, TCP, echo and port-forward flows translated with the
 * packet they quote, IPv6, errors about no flow, and errors from a LAN
 * router. Fixtures and runner: fixture.h.
 */
#include "fixture.h"

/* ---- ICMP errors about flows (RFC 5508) -------------------------------- */

/*
 * The packets an error quotes. A router on the WAN side saw the SNATed
 * packet (TTL already one less); after translation the LAN host must get
 * its own packet back, byte for byte as it sent it but for that TTL. The
 * quoted L4 checksum is then the one the host computed.
 */
#define QUOTED static const struct pkt_spec
#define TCP_SYN_Q(sa, da, sp, dp, sq, t, id, ...)                            \
	TCP_PKT(sa, da, sp, dp, __VA_ARGS__, .tcp_flags = TCP_SYN, .seq = sq, \
		.ttl = t, .ip_id = id)
QUOTED q_udp_natted = UDP_PKT(NAT_ADDR, WAN_GW, 40000, 53, TO_WAN, .ttl = 63, .ip_id = 0x1234);
QUOTED q_udp_orig = UDP_PKT(LAN_HOST, WAN_GW, 40000, 53, FROM_LAN, .ttl = 63, .ip_id = 0x1234);
/* The reply as the LAN host got it, and as the WAN sent it. */
QUOTED q_reply_lan = UDP_PKT(WAN_GW, LAN_HOST, 53, 40000, TO_LAN, .ttl = 56, .ip_id = 0xbeef);
QUOTED q_reply_wan = UDP_PKT(WAN_GW, NAT_ADDR, 53, 40000, FROM_WAN, .ttl = 56, .ip_id = 0xbeef);
QUOTED q_tcp_natted = TCP_SYN_Q(NAT_ADDR, WAN_GW, 40100, 443, 1000, 63, 0x0101, TO_WAN);
QUOTED q_tcp_orig = TCP_SYN_Q(LAN_HOST, WAN_GW, 40100, 443, 1000, 63, 0x0101, FROM_LAN);
QUOTED q_echo_natted = ECHO_PKT(NAT_ADDR, WAN_GW, LEARNED, 1, 63, TO_WAN);
QUOTED q_echo_orig = ECHO_PKT(LAN_HOST, WAN_GW, 7, 1, 63, FROM_LAN);
/* Port forward: the SYN as the LAN server got it, as the client sent it. */
QUOTED q_fwd_lan = TCP_SYN_Q(WAN_GW, LAN_HOST, 33333, 80, 42, 59, 7, TO_LAN);
QUOTED q_fwd_wan = TCP_SYN_Q(WAN_GW, NAT_ADDR, 33333, 8080, 42, 59, 7, FROM_WAN);
QUOTED q6_udp = UDP_PKT(LAN6_HOST, WAN6_GW, 40000, 53, TO_WAN, .ttl = 63);

#define ICMP_ERR(t, c) .icmp_type = t, .icmp_code = c
#define FWD_ERR .verdict = XDP_REDIRECT, .reason = XNAT_FWD_ICMP_ERROR, \
		.has_out = true

/* An error from SRC on the WAN side about a NATed flow, quoting QIN; the
 * LAN host must get it one hop older, quoting QOUT. */
#define ERR_FROM_WAN(src, t, type, code, sq, qin, qout)                      \
	.ingress = WAN,                                                       \
	.in = { FROM_WAN, .saddr = src, .daddr = NAT_ADDR, .ttl = t,          \
		ICMP_ERR(type, code), .icmp_seq = sq },                       \
	.in_quote = qin, FWD_ERR,                                             \
	.out = { TO_LAN, .saddr = src, .daddr = LAN_HOST, .ttl = (t) - 1,     \
		 ICMP_ERR(type, code), .icmp_seq = sq },                      \
	.out_quote = qout

/* An error from the LAN host about a flow, quoting QIN; the WAN peer must
 * get it from the NAT address, quoting QOUT. */
#define ERR_FROM_LAN(type, code, qin, qout)                                  \
	.ingress = LAN,                                                       \
	.in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .ttl = 64,      \
		ICMP_ERR(type, code) },                                       \
	.in_quote = qin, FWD_ERR,                                             \
	.out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .ttl = 63,       \
		 ICMP_ERR(type, code) },                                      \
	.out_quote = qout

/* The peer's errors about the UDP and the TCP flow below, each sent whole
 * and cut to 28 bytes. */
#define PORT_UNREACH_UDP                                                      \
	ERR_FROM_WAN(WAN_GW, 64, ICMP_DEST_UNREACH, ICMP_PORT_UNREACH, 0,     \
		     &q_udp_natted, &q_udp_orig)
#define FRAG_NEEDED_TCP                                                       \
	ERR_FROM_WAN(WAN_GW, 64, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED, 1400,   \
		     &q_tcp_natted, &q_tcp_orig)

static const struct fixture fx_icmp_err_udp[] = {
	{ "udp flow", UDP_NAT(40000, 53, SLOW, 40000) },
	{ .name = "port unreachable from the peer, whole packet quoted", PORT_UNREACH_UDP },
	{ .name = "port unreachable, 28-byte quote (RFC 792)", PORT_UNREACH_UDP, .quote_len = 28 },
	{ .name = "time exceeded from a router further out",
	  ERR_FROM_WAN("198.19.200.9", 250, ICMP_TIME_EXCEEDED,
		       ICMP_EXC_TTL, 0, &q_udp_natted, &q_udp_orig) },
	{ "the flow still works", UDP_NAT(40000, 53, FAST, 40000) },
	{ "reply reaches the host", UDP_UNNAT(53, 40000, FAST, 40000) },
	{ .name = "port unreachable from the lan host about the reply",
	  ERR_FROM_LAN(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH,
		       &q_reply_lan, &q_reply_wan) },
};
FIXTURE_TEST("icmp_error_udp", true, STEPS(fx_icmp_err_udp));

static const struct fixture fx_icmp_err_tcp[] = {
	{ "tcp SYN", TCP_OUT(40100, TCP_SYN, 1000, 0), FWD(SLOW), TCP_OUT_NAT(40100, TCP_SYN, 1000, 0) },
	{ .name = "fragmentation needed, whole header quoted", FRAG_NEEDED_TCP },
	{ .name = "fragmentation needed, 28-byte quote", FRAG_NEEDED_TCP, .quote_len = 28 },
};
FIXTURE_TEST("icmp_error_tcp", true, STEPS(fx_icmp_err_tcp));

static const struct fixture fx_icmp_err_echo[] = {
	{ "echo request id 7", ECHO_OUT(7, 1), FWD(SLOW), .learn = true, ECHO_OUT_NAT(1) },
	{ .name = "time exceeded quoting the translated request",
	  ERR_FROM_WAN("198.19.200.9", 250, ICMP_TIME_EXCEEDED,
		       ICMP_EXC_TTL, 0, &q_echo_natted, &q_echo_orig) },
};
FIXTURE_TEST("icmp_error_echo", true, STEPS(fx_icmp_err_echo));

static const struct fixture fx_icmp_err_forward[] = {
	{ .name = "wan SYN to 8080", FWD_SYN },
	{ .name = "port unreachable from the forwarded server",
	  ERR_FROM_LAN(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH,
		       &q_fwd_lan, &q_fwd_wan) },
};
FIXTURE_TEST("icmp_error_port_forward", true, STEPS(fx_icmp_err_forward));

/*
 * An error from a router inside the LAN (here a second LAN router on the
 * path to the forwarded server: fragmentation needed, which path MTU
 * discovery of the forwarded service depends on). Its private source must
 * not leave on the WAN: the kernel's NAT (nf_nat_icmp_reply_translation)
 * gives the outer header the NAT address, as for the flow's own packets;
 * a private source is dropped by source filtering (BCP 38) on the way and
 * PMTUD breaks.
 */
static const struct fixture fx_icmp_err_lan_router[] = {
	{ .name = "wan SYN to 8080", FWD_SYN },
	{ .name = "fragmentation needed from a lan router", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST2, .dmac = MAC_LAN0,
		  .saddr = LAN_HOST2, .daddr = WAN_GW, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED),
		  .icmp_seq = 1280 },
	  .in_quote = &q_fwd_lan, FWD_ERR,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .ttl = 63,
		   ICMP_ERR(ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED),
		   .icmp_seq = 1280 },
	  .out_quote = &q_fwd_wan },
};

static const struct fixture fx_icmp_err_v6[] = {
	{ "ipv6 udp lan->wan", UDP6_OUT(40000, 53, 64), FWD(SLOW), UDP6_OUT_ROUTED(40000, 53, 64) },
	{ .name = "packet too big from the wan", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST, .ttl = 64,
		  ICMP_ERR(ICMPV6_PKT_TOOBIG, 0), .icmp_seq = 1280 },
	  .in_quote = &q6_udp, FWD_ERR,
	  .out = { TO_LAN, .saddr = WAN6_GW, .daddr = LAN6_HOST, .ttl = 63,
		   ICMP_ERR(ICMPV6_PKT_TOOBIG, 0), .icmp_seq = 1280 },
	  .out_quote = &q6_udp },
};
FIXTURE_TEST("icmp_error_ipv6", true, STEPS(fx_icmp_err_v6));

/* Errors about flows XDP does not have are the kernel's. */
static const struct fixture fx_icmp_err_no_flow[] = {
	{ .name = "port unreachable about an unknown flow", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .in_quote = &q_udp_natted,
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
};
FIXTURE_TEST("icmp_error_no_flow", true, STEPS(fx_icmp_err_no_flow));
FIXTURE_TEST("icmp_error_from_lan_router", true, STEPS(fx_icmp_err_lan_router));

FIXTURE_MAIN_REGISTERED()
