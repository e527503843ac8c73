// SPDX-License-Identifier: GPL-2.0-only
/*
 * [ipv6] inbound in XDP (bpf/slowpath.h slow_in6, docs/NAT.md): what IPv6
 * from the WAN may open towards a LAN host. stateful (the default): nothing;
 * echo requests (RFC 4890 4.3.1) go to the kernel, whose ruleset admits
 * them and whose conntrack holds their state, so that a WAN host cannot
 * fill the flow table with them; the rest is dropped as unsolicited;
 * open: everything, TCP by its SYN (a stray segment goes to the kernel,
 * whose ruleset decides alike). Replies of an inbound flow take the fast
 * path; IPv4 never changes (it is NATed, not routed to the LAN). Every
 * forwarded frame is compared byte for byte with one built from scratch.
 */
#include "fixture.h"

/* From the WAN host to the LAN host over IPv6, and as it leaves. */
#define IN6(p, sp, dp, fl)                                                    \
	.ingress = WAN,                                                       \
	.in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST, .proto = p,   \
		.sport = sp, .dport = dp, .tcp_flags = fl, .seq = 77,         \
		.ttl = 60 }
#define IN6_OUT(p, sp, dp, fl)                                                \
	.has_out = true,                                                      \
	.out = { TO_LAN, .saddr = WAN6_GW, .daddr = LAN6_HOST, .proto = p,    \
		 .sport = sp, .dport = dp, .tcp_flags = fl, .seq = 77,        \
		 .ttl = 59 }
#define ECHO6_IN                                                              \
	.ingress = WAN,                                                       \
	.in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST,               \
		.proto = IPPROTO_ICMPV6, .icmp_type = ICMPV6_ECHO_REQUEST,    \
		.icmp_id = 0x4242, .icmp_seq = 1, .ttl = 60 }
#define ECHO6_IN_OUT                                                          \
	.has_out = true,                                                      \
	.out = { TO_LAN, .saddr = WAN6_GW, .daddr = LAN6_HOST,                \
		 .proto = IPPROTO_ICMPV6, .icmp_type = ICMPV6_ECHO_REQUEST,   \
		 .icmp_id = 0x4242, .icmp_seq = 1, .ttl = 59 }

static bool inbound_open(bool open)
{
	struct xnat_config c;

	if (!config_get(&c))
		return false;
	c.flags &= ~XNAT_F_IPV6_OPEN;
	c.flags |= open ? XNAT_F_IPV6_OPEN : 0;
	return config_set(&c);
}

/* Each on an empty table, with inbound = stateful. */
static const struct fixture fx_stateful[] = {
	{ .name = "stateful: tcp syn dropped", IN6(IPPROTO_TCP, 6000, 22, TCP_SYN),
	  .verdict = XDP_DROP, .reason = XNAT_DROP_UNSOLICITED },
	{ .name = "stateful: udp dropped", IN6(IPPROTO_UDP, 6000, 53, 0),
	  .verdict = XDP_DROP, .reason = XNAT_DROP_UNSOLICITED },
	{ .name = "stateful: echo request to the kernel", ECHO6_IN,
	  .verdict = XDP_PASS, .reason = XNAT_PASS_ECHO_INBOUND },
	/* An echo reply without a flow is no request: the kernel's. */
	{ .name = "stateful: unsolicited echo reply to the kernel",
	  .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST,
		  .proto = IPPROTO_ICMPV6, .icmp_type = ICMPV6_ECHO_REPLY,
		  .icmp_id = 0x4243 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_WAN_IN },
};

/* Each on an empty table, with inbound = open. */
static const struct fixture fx_open[] = {
	{ .name = "open: tcp syn forwarded", IN6(IPPROTO_TCP, 6000, 22, TCP_SYN),
	  IN6_OUT(IPPROTO_TCP, 6000, 22, TCP_SYN),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW },
	{ .name = "open: udp forwarded", IN6(IPPROTO_UDP, 6000, 53, 0),
	  IN6_OUT(IPPROTO_UDP, 6000, 53, 0),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW },
	{ .name = "open: echo request forwarded", ECHO6_IN, ECHO6_IN_OUT,
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW },
	{ .name = "open: tcp ack without a flow to the kernel",
	  IN6(IPPROTO_TCP, 6000, 22, TCP_ACK),
	  .verdict = XDP_PASS, .reason = XNAT_PASS_TCP_MIDSTREAM },
	/* IPv4 is NATed: a WAN host cannot address the LAN host. */
	{ "open: ipv4 to a lan host still dropped", WAN,
	  TCP_PKT(WAN_GW, LAN_HOST, 6000, 22, FROM_WAN, .tcp_flags = TCP_SYN), DROP(UNSOLICITED) },
};

static bool test_stateful(void)
{
	return inbound_open(false) &&
	       run_fixtures_each(fx_stateful, ARRAY_SIZE(fx_stateful));
}

/*
 * stateful: a WAN host's echo requests, each with an identifier of its own,
 * open no flow; a LAN host's new connection still gets one (before, each
 * request took a flow for the ICMP timeout, and enough of them filled the
 * table: pass_table_full for the LAN).
 */
static bool test_stateful_echo_flood(void)
{
	struct fixture echo = { .name = "echo request", ECHO6_IN,
				.verdict = XDP_PASS,
				.reason = XNAT_PASS_ECHO_INBOUND };
	const struct fixture syn = { .name = "a LAN host's syn after them",
				     TCP_OUT(40900, TCP_SYN, 1000, 0),
				     TCP_OUT_NAT(40900, TCP_SYN, 1000, 0),
				     .verdict = XDP_REDIRECT,
				     .reason = XNAT_FWD_SLOW };

	if (!inbound_open(false))
		return false;
	for (int id = 1; id <= 256; id++) {
		echo.in.icmp_id = id;
		if (!run_fixture(&echo))
			return false;
	}
	if (flows_count()) {
		fprintf(stderr, "  %d flow entries after 256 echo requests, "
			"expected none\n", flows_count());
		return false;
	}
	return run_fixture(&syn);
}

static bool test_open(void)
{
	bool ok = inbound_open(true) &&
		  run_fixtures_each(fx_open, ARRAY_SIZE(fx_open));

	return inbound_open(false) && ok;
}

/*
 * A connection the WAN host opened with inbound = open: the LAN host's
 * SYN-ACK and the rest take the fast path both ways; after a switch back
 * to stateful the established flow lives on (a reload does not cut
 * connections), a new one is refused.
 */
static bool test_open_connection(void)
{
	const struct fixture steps[] = {
		{ .name = "syn", IN6(IPPROTO_TCP, 6001, 22, TCP_SYN),
		  IN6_OUT(IPPROTO_TCP, 6001, 22, TCP_SYN),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW },
		{ .name = "syn-ack", .ingress = LAN,
		  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
			  .proto = IPPROTO_TCP, .sport = 22, .dport = 6001,
			  .tcp_flags = TCP_SYN | TCP_ACK, .seq = 500,
			  .ack_seq = 78 },
		  .has_out = true,
		  .out = { TO_WAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
			   .proto = IPPROTO_TCP, .sport = 22, .dport = 6001,
			   .tcp_flags = TCP_SYN | TCP_ACK, .seq = 500,
			   .ack_seq = 78, .ttl = 63 },
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST },
	};
	const struct fixture after[] = {
		{ .name = "ack, after the switch to stateful",
		  IN6(IPPROTO_TCP, 6001, 22, TCP_ACK),
		  IN6_OUT(IPPROTO_TCP, 6001, 22, TCP_ACK),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST },
		{ .name = "a new syn, refused",
		  IN6(IPPROTO_TCP, 6002, 22, TCP_SYN),
		  .verdict = XDP_DROP, .reason = XNAT_DROP_UNSOLICITED },
	};

	if (!inbound_open(true))
		return false;
	if (!run_fixtures(steps, ARRAY_SIZE(steps))) {
		inbound_open(false);
		return false;
	}
	return inbound_open(false) && run_fixtures(after, ARRAY_SIZE(after));
}

static const struct test tests[] = {
	{ "stateful", true, .fn = test_stateful },
	{ "stateful_echo_flood", true, .fn = test_stateful_echo_flood },
	{ "open", true, .fn = test_open },
	{ "open_connection", true, .fn = test_open_connection },
};

FIXTURE_MAIN(tests)
