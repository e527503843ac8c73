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
static const struct pkt_spec q_udp_natted = {
	TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .proto = IPPROTO_UDP,
	.sport = 40000, .dport = 53, .ttl = 63, .ip_id = 0x1234 };
static const struct pkt_spec q_udp_orig = {
	FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_UDP,
	.sport = 40000, .dport = 53, .ttl = 63, .ip_id = 0x1234 };
/* The reply as the LAN host got it, and as the WAN sent it. */
static const struct pkt_spec q_reply_lan = {
	TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST, .proto = IPPROTO_UDP,
	.sport = 53, .dport = 40000, .ttl = 56, .ip_id = 0xbeef };
static const struct pkt_spec q_reply_wan = {
	FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .proto = IPPROTO_UDP,
	.sport = 53, .dport = 40000, .ttl = 56, .ip_id = 0xbeef };
static const struct pkt_spec q_tcp_natted = {
	TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .proto = IPPROTO_TCP,
	.sport = 40100, .dport = 443, .tcp_flags = TCP_SYN, .seq = 1000,
	.ttl = 63, .ip_id = 0x0101 };
static const struct pkt_spec q_tcp_orig = {
	FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_TCP,
	.sport = 40100, .dport = 443, .tcp_flags = TCP_SYN, .seq = 1000,
	.ttl = 63, .ip_id = 0x0101 };
static const struct pkt_spec q_echo_natted = {
	TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .proto = IPPROTO_ICMP,
	.icmp_type = ICMP_ECHO, .icmp_id = LEARNED, .icmp_seq = 1, .ttl = 63 };
static const struct pkt_spec q_echo_orig = {
	FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_ICMP,
	.icmp_type = ICMP_ECHO, .icmp_id = 7, .icmp_seq = 1, .ttl = 63 };
/* Port forward: the SYN as the LAN server got it, as the client sent it. */
static const struct pkt_spec q_fwd_lan = {
	TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST, .proto = IPPROTO_TCP,
	.sport = 33333, .dport = 80, .tcp_flags = TCP_SYN, .seq = 42,
	.ttl = 59, .ip_id = 7 };
static const struct pkt_spec q_fwd_wan = {
	FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .proto = IPPROTO_TCP,
	.sport = 33333, .dport = 8080, .tcp_flags = TCP_SYN, .seq = 42,
	.ttl = 59, .ip_id = 7 };
static const struct pkt_spec q6_udp = {
	TO_WAN, .saddr = LAN6_HOST, .daddr = WAN6_GW, .proto = IPPROTO_UDP,
	.sport = 40000, .dport = 53, .ttl = 63 };

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

static const struct fixture fx_icmp_err_udp[] = {
	{ .name = "udp flow", UDP_OUT(40000, 53), .verdict = XDP_REDIRECT,
	  .reason = XNAT_FWD_SLOW, UDP_OUT_NAT(40000, 53) },
	{ .name = "port unreachable from the peer, whole packet quoted",
	  ERR_FROM_WAN(WAN_GW, 64, ICMP_DEST_UNREACH,
		       ICMP_PORT_UNREACH, 0, &q_udp_natted, &q_udp_orig) },
	{ .name = "port unreachable, 28-byte quote (RFC 792)",
	  ERR_FROM_WAN(WAN_GW, 64, ICMP_DEST_UNREACH,
		       ICMP_PORT_UNREACH, 0, &q_udp_natted, &q_udp_orig),
	  .quote_len = 28 },
	{ .name = "time exceeded from a router further out",
	  ERR_FROM_WAN("198.19.200.9", 250, ICMP_TIME_EXCEEDED,
		       ICMP_EXC_TTL, 0, &q_udp_natted, &q_udp_orig) },
	{ .name = "the flow still works", UDP_OUT(40000, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  UDP_OUT_NAT(40000, 53) },
	{ .name = "reply reaches the host", UDP_REPLY(53, 40000),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  UDP_REPLY_NAT(53, 40000) },
	{ .name = "port unreachable from the lan host about the reply",
	  ERR_FROM_LAN(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH,
		       &q_reply_lan, &q_reply_wan) },
};

static const struct fixture fx_icmp_err_tcp[] = {
	{ .name = "tcp SYN", TCP_OUT(40100, TCP_SYN, 1000, 0),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  TCP_OUT_NAT(40100, TCP_SYN, 1000, 0) },
	{ .name = "fragmentation needed, whole header quoted",
	  ERR_FROM_WAN(WAN_GW, 64, ICMP_DEST_UNREACH,
		       ICMP_FRAG_NEEDED, 1400, &q_tcp_natted, &q_tcp_orig) },
	{ .name = "fragmentation needed, 28-byte quote",
	  ERR_FROM_WAN(WAN_GW, 64, ICMP_DEST_UNREACH,
		       ICMP_FRAG_NEEDED, 1400, &q_tcp_natted, &q_tcp_orig),
	  .quote_len = 28 },
};

static const struct fixture fx_icmp_err_echo[] = {
	{ .name = "echo request id 7", ECHO_OUT(7, 1),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .learn = true,
	  ECHO_OUT_NAT(1) },
	{ .name = "time exceeded quoting the translated request",
	  ERR_FROM_WAN("198.19.200.9", 250, ICMP_TIME_EXCEEDED,
		       ICMP_EXC_TTL, 0, &q_echo_natted, &q_echo_orig) },
};

static const struct fixture fx_icmp_err_forward[] = {
	{ .name = "wan SYN to 8080", FWD_SYN },
	{ .name = "port unreachable from the forwarded server",
	  ERR_FROM_LAN(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH,
		       &q_fwd_lan, &q_fwd_wan) },
};

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
	{ .name = "ipv6 udp lan->wan", UDP6_OUT(40000, 53, 64),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  UDP6_OUT_ROUTED(40000, 53, 64) },
	{ .name = "packet too big from the wan", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST, .ttl = 64,
		  ICMP_ERR(ICMPV6_PKT_TOOBIG, 0), .icmp_seq = 1280 },
	  .in_quote = &q6_udp, FWD_ERR,
	  .out = { TO_LAN, .saddr = WAN6_GW, .daddr = LAN6_HOST, .ttl = 63,
		   ICMP_ERR(ICMPV6_PKT_TOOBIG, 0), .icmp_seq = 1280 },
	  .out_quote = &q6_udp },
};

/* Errors about flows XDP does not have are the kernel's. */
static const struct fixture fx_icmp_err_no_flow[] = {
	{ .name = "port unreachable about an unknown flow", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .in_quote = &q_udp_natted,
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
};

static const struct test tests[] = {
	{ "icmp_error_udp", true, STEPS(fx_icmp_err_udp) },
	{ "icmp_error_tcp", true, STEPS(fx_icmp_err_tcp) },
	{ "icmp_error_echo", true, STEPS(fx_icmp_err_echo) },
	{ "icmp_error_port_forward", true, STEPS(fx_icmp_err_forward) },
	{ "icmp_error_ipv6", true, STEPS(fx_icmp_err_v6) },
	{ "icmp_error_no_flow", true, STEPS(fx_icmp_err_no_flow) },
	{ "icmp_error_from_lan_router", true, STEPS(fx_icmp_err_lan_router) },
};

FIXTURE_MAIN(tests)
