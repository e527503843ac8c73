// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of offload mode's decision (bpf/offload.h, bpf/ct.h) with
 * BPF_PROG_RUN against real conntrack entries: each test inserts the
 * kernel's entry with conntrack -I in the fixture's network namespace
 * (its tuples carry the NAT the kernel chose, its mark the bits the
 * ruleset's chain would set), then sends packets: no entry (a connection
 * the kernel has not confirmed is not in its table yet), the handshake,
 * established TCP, one direction accepted, a helper's connection, UDP
 * one way, the entry gone or alive when its timeout is refreshed, IPv4
 * options and TTL 1 handed up, DNS's own timeout, ICMP, IPv6, and the mark
 * bits taken from the config. How a TCP connection leaves the fast path
 * (FIN, RST, forged ones): test_offload_tcp.c.
 * Fixtures and runner: fixture.h; shared helpers: offload_harness.h.
 */
#include <time.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include "offload_harness.h"

FIXTURE_TEST(.name = "offload_setup", .fn = offload_setup);

/* No conntrack entry: a new connection, or one whose first packet the
 * kernel has not confirmed yet (only confirmed entries are in the table
 * the kfunc searches). The packet goes up untouched, nothing installed. */
static bool test_no_entry(void)
{
	static const struct fixture f = { .name = "ack without entry",
		ORIG_ACK(40001, ACK), PASS(CT_NONE) };

	return reset() && run_fixture(&f) && flows_are(0);
}
FIXTURE_TEST(.name = "no_entry", .fn = test_no_entry);

/* The handshake is conntrack's: a SYN never leaves it, and an entry not
 * yet established keeps its packets up although both bits are set. */
static bool test_handshake(void)
{
	static const struct fixture f[] = {
		{ .name = "syn", ORIG_ACK(40002, TCP_SYN), PASS(CT_TCP_STATE) },
		{ .name = "ack in syn_recv", ORIG_ACK(40002, ACK), PASS(CT_TCP_STATE) },
		{ .name = "syn-ack", REPLY_ACK(TCP_SYN | ACK), PASS(CT_TCP_STATE) },
	};

	return reset() && ct_tcp(40002, "SYN_RECV", MARK_ORIG | MARK_REPLY) &&
	       run_fixtures(f, ARRAY_SIZE(f)) && flows_are(0);
}
FIXTURE_TEST(.name = "handshake", .fn = test_handshake);

/* ct_tcp()'s tuples (port SPORT), for a ctnetlink query. */
static struct nf_conntrack *ct_tcp_tuples(uint16_t sport)
{
	struct nf_conntrack *ct = nfct_new();

	if (!ct)
		return NULL;
	nfct_set_attr_u8(ct, ATTR_L3PROTO, AF_INET);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, AF_INET);
	nfct_set_attr_u8(ct, ATTR_L4PROTO, IPPROTO_TCP);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, IPPROTO_TCP);
	nfct_set_attr_u32(ct, ATTR_IPV4_SRC, inet_addr(LAN_HOST));
	nfct_set_attr_u32(ct, ATTR_IPV4_DST, inet_addr(WAN_GW));
	nfct_set_attr_u32(ct, ATTR_REPL_IPV4_SRC, inet_addr(WAN_GW));
	nfct_set_attr_u32(ct, ATTR_REPL_IPV4_DST, inet_addr(NAT_ADDR));
	nfct_set_attr_u16(ct, ATTR_PORT_SRC, htons(sport));
	nfct_set_attr_u16(ct, ATTR_PORT_DST, htons(443));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(443));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(EXT_PORT));
	return ct;
}

/* Send CT to conntrack as QUERY (NFCT_Q_CREATE...), then free it. */
static bool ct_send(struct nf_conntrack *ct, enum nf_conntrack_query query,
		    const char *what)
{
	struct nfct_handle *h = nfct_open(CONNTRACK, 0);
	bool ok = ct && h && !nfct_query(h, query, ct);

	if (!ok)
		fprintf(stderr, "  conntrack, %s: %s\n", what, strerror(errno));
	if (h)
		nfct_close(h);
	if (ct)
		nfct_destroy(ct);
	return ok;
}

/* ct_tcp()'s entry, ESTABLISHED, with conntrack HELPER attached (a
 * ctnetlink create with CTA_HELP, which conntrack(8) cannot send). */
static bool ct_tcp_helper(uint16_t sport, const char *helper, uint32_t mark)
{
	struct nf_conntrack *ct = ct_tcp_tuples(sport);

	if (ct) {
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, TCP_CONNTRACK_ESTABLISHED);
		nfct_set_attr_u32(ct, ATTR_STATUS, IPS_SEEN_REPLY | IPS_ASSURED);
		nfct_set_attr_u32(ct, ATTR_TIMEOUT, 100);
		nfct_set_attr_u32(ct, ATTR_MARK, mark);
		nfct_set_attr(ct, ATTR_HELPER_NAME, helper);
	}
	return ct_send(ct, NFCT_Q_CREATE, "create with a helper");
}

/* A connection with a helper (an ALG the operator's ruleset assigned with
 * `ct helper set`: FTP, SIP...) stays in the kernel, established and
 * accepted both ways though: its helper reads its payload (FTP's PORT
 * command opens the data connection's expectation) and, with NAT,
 * rewrites it. Its mark bits stay unconsumed. (The ruleset and ctnetlink
 * both set IPS_HELPER with the helper; bpf/ct.h also reads the helper's
 * extension, for an entry that has it without the bit: ctnetlink cannot
 * clear the bit and Linux 6.0 dropped automatic assignment, so that case
 * is not made here.) */
static bool test_helper_stays_up(void)
{
	static const struct fixture f[] = {
		{ .name = "orig, ftp helper", ORIG_ACK(40030, ACK), PASS(CT_HELPER) },
		{ .name = "reply, ftp helper", REPLY_ACK(ACK), PASS(CT_HELPER) },
	};

	return reset() &&
	       ct_tcp_helper(40030, "ftp", MARK_ORIG | MARK_REPLY) &&
	       run_fixtures(f, ARRAY_SIZE(f)) && flows_are(0) &&
	       ct_mark_is("-p tcp --sport 40030", MARK_ORIG | MARK_REPLY);
}
FIXTURE_TEST(.name = "helper_stays_up", .fn = test_helper_stays_up);

/* Established, the ruleset has accepted the original direction only: the
 * reply stays up; the original is offloaded with the kernel's masquerade
 * (addresses, port, checksums), its mark bit consumed, then hits; once
 * the reply's bit is there the reply is offloaded too, to the LAN host's
 * own port. */
static bool test_established_one_way_then_both(void)
{
	static const struct fixture f1[] = {
		{ .name = "reply not accepted yet", REPLY_ACK(ACK), PASS(CT_UNMARKED) },
		{ .name = "orig offloaded", ORIG_FWD(40003, OFFLOAD) },
		{ .name = "orig hit", ORIG_FWD(40003, FAST) },
	};
	static const struct fixture f2[] = {
		{ .name = "reply offloaded", REPLY_FWD(40003, OFFLOAD) },
		{ .name = "reply hit", REPLY_FWD(40003, FAST) },
	};
	char cmd[256];

	if (!reset() || !ct_tcp(40003, "ESTABLISHED", MARK_ORIG) ||
	    !run_fixtures(f1, ARRAY_SIZE(f1)) || !flows_are(1) ||
	    !ct_mark_is("-p tcp --sport 40003", 0))
		return false;
	snprintf(cmd, sizeof(cmd),
		 "conntrack -U -s %s -p tcp --sport 40003 -m 0x%x >/dev/null 2>&1",
		 LAN_HOST, MARK_REPLY);
	return !sh(cmd) && run_fixtures(f2, ARRAY_SIZE(f2)) && flows_are(2) &&
	       ct_mark_is("-p tcp --sport 40003", 0);
}
FIXTURE_TEST(.name = "established_one_way_then_both", .fn = test_established_one_way_then_both);


/* Make the entry of the original direction due for its refresh. */
static bool refresh_due(uint16_t sport)
{
	struct flow_key k = flow_key4(LAN_HOST, sport, WAN_GW, 443,
				      IPPROTO_TCP, if_lan);
	struct flow_value v;

	if (bpf_map_lookup_elem(flows_fd, &k, &v)) {
		fprintf(stderr, "  no flow entry for port %u\n", sport);
		return false;
	}
	/* 10 units of 1.07 s: more than half of a 10 s timeout ago. */
	v.ct_refresh -= 10;
	return !bpf_map_update_elem(flows_fd, &k, &v, BPF_EXIST);
}

/* With tcp_established = 10 s, an entry refreshed 10 s ago is due: the
 * refresh finds the conntrack entry and resets its timeout to 10 s (it
 * was inserted with 100), or finds it gone (conntrack -D) and takes the
 * flow off the fast path. */
static bool test_refresh_alive_and_gone(void)
{
	static const struct fixture off = { .name = "orig offloaded", ORIG_FWD(40005, OFFLOAD) };
	static const struct fixture hit = { .name = "orig hit, refreshed", ORIG_FWD(40005, FAST) };
	static const struct fixture gone = { .name = "entry gone",
		ORIG_ACK(40005, ACK), PASS(CT_GONE) };
	long timeout;

	if (!reset() || !offload_config(MARK_ORIG, MARK_REPLY, 10) ||
	    !ct_tcp(40005, "ESTABLISHED", MARK_ORIG) || !run_fixture(&off) ||
	    !refresh_due(40005) || !run_fixture(&hit))
		return false;
	timeout = ct_timeout("-p tcp --sport 40005");
	if (timeout < 0 || timeout > 10) {
		fprintf(stderr, "  conntrack timeout %ld, expected <= 10\n",
			timeout);
		return false;
	}
	return !sh("conntrack -D -p tcp --sport 40005 >/dev/null 2>&1") &&
	       refresh_due(40005) && run_handback(&gone);
}
FIXTURE_TEST(.name = "refresh_alive_and_gone", .fn = test_refresh_alive_and_gone);

/* A UDP entry of LAN_HOST:SPORT -> WAN_GW:DPORT, masqueraded to EXT_PORT,
 * its timeout 100 s, with MARK. */
static bool ct_udp(uint16_t sport, uint16_t dport, uint32_t mark)
{
	return ct_insert("udp", sport, dport, "", mark);
}

/* UDP one way: an entry that never saw a reply, accepted in the original
 * direction, is offloaded that way; its reply direction is not. */
static bool test_udp_one_way(void)
{
	static const struct fixture f[] = {
		{ .name = "udp orig offloaded", UDP_NAT(40006, 5000, OFFLOAD, EXT_PORT) },
		{ .name = "udp orig hit", UDP_NAT(40006, 5000, FAST, EXT_PORT) },
		{ .name = "udp reply not accepted", UDP_REPLY(5000, EXT_PORT), PASS(CT_UNMARKED) },
	};

	return reset() && ct_udp(40006, 5000, MARK_ORIG) &&
	       run_fixtures(f, ARRAY_SIZE(f)) && flows_are(1);
}
FIXTURE_TEST(.name = "udp_one_way", .fn = test_udp_one_way);

/*
 * A WAN frame with a LAN connection's tuple (its source the LAN host's)
 * matches that connection in conntrack, which does not look at the port:
 * it goes up for the kernel's antispoof (pass_ct_spoofed), every time,
 * and nothing is installed, nor the connection's mark consumed; the LAN
 * host's own packet is then offloaded as before.
 */
static bool test_wan_spoof_not_installed(void)
{
	static const struct fixture spoof = { .name = "wan frame, lan tuple",
		.ingress = WAN,
		.in = UDP_PKT(LAN_HOST, WAN_GW, 40007, 5000, FROM_WAN, .ttl = 64,
			      .ip_id = 0x1234),
		PASS(CT_SPOOFED) };
	static const struct fixture orig = { .name = "udp orig offloaded",
		UDP_NAT(40007, 5000, OFFLOAD, EXT_PORT) };

	return reset() && ct_udp(40007, 5000, MARK_ORIG) &&
	       run_fixture(&spoof) && run_fixture(&spoof) && flows_are(0) &&
	       ct_mark_is("-p udp --sport 40007", MARK_ORIG) &&
	       run_fixture(&orig) && flows_are(1);
}
FIXTURE_TEST(.name = "wan_spoof_not_installed", .fn = test_wan_spoof_not_installed);

/*
 * The parser's exceptions of an offloaded flow go to the kernel, which
 * owns the connection: a UDP packet with IPv4 options (NOP, EOL: the
 * fuzzer's finding, docs/TESTING.md) was forwarded with its addresses
 * translated but its UDP header and checksum not; one with TTL 1 would
 * have left with TTL 0. Before the flow is installed and after, each goes
 * up untouched under its reason, and the flow stays on the fast path.
 */
static bool test_exceptions_go_up(void)
{
	static const struct fixture opts = { .name = "udp with options",
		UDP_OUT(40000, 53), .build = pkt_build_v4_opts,
		PASS(IP_OPTIONS) };
	static const struct fixture ttl1 = { .name = "udp ttl 1",
		.ingress = LAN,
		.in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
			.proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
			.ttl = 1, .ip_id = 0x1234 },
		PASS(TTL) };
	static const struct fixture off = { .name = "udp offloaded",
		UDP_NAT(40000, 53, OFFLOAD, EXT_PORT) };
	static const struct fixture hit = { .name = "udp hit", UDP_NAT(40000, 53, FAST, EXT_PORT) };

	return reset() && ct_udp(40000, 53, MARK_ORIG) && run_fixture(&opts) &&
	       run_fixture(&ttl1) && flows_are(0) && run_fixture(&off) &&
	       run_fixture(&opts) && run_fixture(&ttl1) && flows_are(1) &&
	       run_fixture(&hit) && flows_are(1);
}
FIXTURE_TEST(.name = "exceptions_go_up", .fn = test_exceptions_go_up);

/* [timeouts] udp_dns (here 30 s) and udp (300 s) set the timeout of the
 * kernel's entry: DNS (port 53) offloaded in either direction, the reply
 * judged on the connection's original ports, gets udp_dns, as the
 * ruleset's own udp_dns policy gives it; other UDP gets udp. Each entry
 * was inserted with 100 s. */
static bool test_dns_timeout(void)
{
	static const struct fixture dns_reply = { .name = "dns reply offloaded",
		UDP_UNNAT(53, EXT_PORT, OFFLOAD, 40012) };
	static const struct fixture dns = { .name = "dns offloaded",
		UDP_NAT(40013, 53, OFFLOAD, EXT_PORT) };
	static const struct fixture other = { .name = "udp offloaded",
		UDP_NAT(40014, 5002, OFFLOAD, EXT_PORT) };
	struct xnat_config c;
	long t1, t2, t3;

	if (!reset() || !config_get(&c))
		return false;
	c.timeout_udp_dns = 30;
	if (!config_set(&c) || !ct_udp(40012, 53, MARK_REPLY) ||
	    !run_fixture(&dns_reply))
		return false;
	t1 = ct_timeout("-p udp --orig-port-src 40012");
	/* Another connection: the reply tuple must differ. */
	sh("conntrack -D -p udp --orig-port-src 40012 >/dev/null 2>&1");
	if (!ct_udp(40013, 53, MARK_ORIG) || !run_fixture(&dns) ||
	    !ct_udp(40014, 5002, MARK_ORIG) || !run_fixture(&other))
		return false;
	t2 = ct_timeout("-p udp --orig-port-src 40013");
	t3 = ct_timeout("-p udp --orig-port-src 40014");
	c.timeout_udp_dns = 0;
	if (!config_set(&c))
		return false;
	if (t1 < 0 || t1 > 30 || t2 < 0 || t2 > 30 || t3 <= 100 || t3 > 300) {
		fprintf(stderr, "  conntrack timeouts: dns reply %ld, dns %ld "
			"(expected <= 30), other %ld (expected 101-300)\n",
			t1, t2, t3);
		return false;
	}
	return true;
}
FIXTURE_TEST(.name = "dns_timeout", .fn = test_dns_timeout);

/* ICMP: the kfunc cannot look it up; the kernel forwards it. */
static bool test_icmp(void)
{
	static const struct fixture f = { .name = "echo request",
		.ingress = LAN, .in = ECHO_PKT(LAN_HOST, WAN_GW, 7, 1, 0, FROM_LAN),
		PASS(CT_PROTO) };

	return reset() && run_fixture(&f) && flows_are(0);
}
FIXTURE_TEST(.name = "icmp", .fn = test_icmp);

/* IPv6: routed without NAT; the entry's tuples are each other's reverse
 * and the packet leaves unchanged but for the hop limit and MACs. */
static bool test_ipv6(void)
{
	static const struct fixture f = { .name = "ipv6 tcp offloaded",
		.ingress = LAN,
		.in = TCP_PKT(LAN6_HOST, WAN6_GW, 40007, 443, FROM_LAN,
			      .tcp_flags = ACK, .seq = 1, .ack_seq = 2, .ttl = 64),
		FWD(OFFLOAD), .has_out = true,
		.out = TCP_PKT(LAN6_HOST, WAN6_GW, 40007, 443, TO_WAN,
			       .tcp_flags = ACK, .seq = 1, .ack_seq = 2, .ttl = 63) };
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "conntrack -I -p tcp -s %s -d %s --sport 40007 "
		 "--dport 443 --state ESTABLISHED -u SEEN_REPLY,ASSURED "
		 "-t 100 -m 0x%x >/dev/null 2>&1",
		 LAN6_HOST, WAN6_GW, MARK_ORIG);
	return reset() && !sh(cmd) && run_fixture(&f) && flows_are(1);
}
FIXTURE_TEST(.name = "ipv6", .fn = test_ipv6);

/* The bits come from [offload] ct_mark: with other bits configured, an
 * entry carrying the default ones is not accepted, and its mark is left
 * alone (the operator's bits are not xnat's to clear). */
static bool test_mark_bits_configured(void)
{
	static const struct fixture f = { .name = "other bits",
		ORIG_ACK(40008, ACK), PASS(CT_UNMARKED) };

	return reset() && offload_config(0x1, 0x2, 7440) &&
	       ct_tcp(40008, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
	       run_fixture(&f) && flows_are(0) &&
	       ct_mark_is("-p tcp --sport 40008", MARK_ORIG | MARK_REPLY);
}
FIXTURE_TEST(.name = "mark_bits_configured", .fn = test_mark_bits_configured);

/* Empty the first-packet filter (bpf/ct_seen.h), and switch it on. */
static bool seen_filter_fresh(void)
{
	int fd = bpf_map__fd(skel->maps.xnat_ct_seen);
	struct xnat_offload_config oc;
	__u32 zero = 0;
	__u64 v = 0;

	for (__u32 i = 0; i < bpf_map__max_entries(skel->maps.xnat_ct_seen); i++)
		if (bpf_map_update_elem(fd, &i, &v, BPF_ANY))
			return false;
	if (bpf_map_lookup_elem(offload_fd, &zero, &oc))
		return false;
	oc.flags &= ~XNAT_OFFLOAD_F_LOOKUP_FIRST;
	return !bpf_map_update_elem(offload_fd, &zero, &oc, BPF_ANY);
}

/*
 * With the filter on (the default), a flow's first miss goes up without
 * a conntrack lookup (pass_ct_first, not pass_ct_none, which only a
 * lookup counts), even when conntrack has an entry that could be
 * offloaded; its second is looked up and offloaded. A flow conntrack
 * does not know is looked up on its second miss, which clears its bit,
 * so its third goes up unasked again.
 */
static bool test_first_miss_not_looked_up(void)
{
	static const struct fixture known[] = {
		{ .name = "first miss", UDP_OUT(40009, 5000), PASS(CT_FIRST) },
		{ .name = "second: offloaded", UDP_NAT(40009, 5000, OFFLOAD, EXT_PORT) },
	};
	static const struct fixture unknown[] = {
		{ .name = "unknown, first", UDP_OUT(40010, 5000), PASS(CT_FIRST) },
		{ .name = "unknown, second", UDP_OUT(40010, 5000), PASS(CT_NONE) },
		{ .name = "unknown, third", UDP_OUT(40010, 5000), PASS(CT_FIRST) },
	};

	return reset() && seen_filter_fresh() && ct_udp(40009, 5000, MARK_ORIG) &&
	       run_fixture(&known[0]) && flows_are(0) &&
	       ct_mark_is("-p udp --sport 40009", MARK_ORIG) &&
	       run_fixture(&known[1]) && flows_are(1) &&
	       run_fixtures(unknown, ARRAY_SIZE(unknown)) && flows_are(1);
}
FIXTURE_TEST(.name = "first_miss_not_looked_up", .fn = test_first_miss_not_looked_up);

/*
 * The table filter (bpf/offload_filter.h): an offloaded flow is found
 * while its bit is set. After a new epoch cleared the bits its next packet
 * goes up (its mark was consumed when it was offloaded: the kernel marks
 * it again), the one after is offloaded again onto the entry still there
 * (EEXIST, forwarded as fwd_offload), and from then on it is a hit.
 */
static bool test_table_filter_epoch(void)
{
	static const struct fixture before[] = {
		{ .name = "offloaded", UDP_NAT(40012, 5000, OFFLOAD, EXT_PORT) },
		{ .name = "a hit", UDP_NAT(40012, 5000, FAST, EXT_PORT) },
	};
	static const struct fixture after[] = {
		{ .name = "missed, up", UDP_OUT(40012, 5000), PASS(CT_UNMARKED) },
	};
	static const struct fixture again[] = {
		{ .name = "offloaded again", UDP_NAT(40012, 5000, OFFLOAD, EXT_PORT) },
		{ .name = "a hit again", UDP_NAT(40012, 5000, FAST, EXT_PORT) },
	};
	struct offloaded_epoch e;

	return reset() && table_filter_fresh() &&
	       ct_udp(40012, 5000, MARK_ORIG) &&
	       run_fixtures(before, ARRAY_SIZE(before)) && flows_are(1) &&
	       table_filter_get(&e) && ASSERT_EQ(e.set, 1, "one bit set") &&
	       table_filter_new_epoch() &&
	       run_fixtures(after, ARRAY_SIZE(after)) && flows_are(1) &&
	       !sh("conntrack -U -s " LAN_HOST " -p udp --sport 40012 "
		   "-m 0x40000000 >/dev/null 2>&1") &&
	       run_fixtures(again, ARRAY_SIZE(again)) && flows_are(1);
}
FIXTURE_TEST(.name = "table_filter_epoch", .fn = test_table_filter_epoch);

/* The filter's bits counted half set, as if many installs had been. */
static bool fill_to_half(void)
{
	struct offloaded_epoch e;

	if (!table_filter_get(&e))
		return false;
	e.set = OFFLOADED_BITS / 2;
	return table_filter_put(&e);
}

/* Dummy entries in the flow table, N of them, keys nothing sends. */
static bool table_fill(__u32 n)
{
	struct flow_value v = { .nat = FLOW_NAT_CT };
	struct flow_key k = { .family = XNAT_AF_INET, .proto = IPPROTO_UDP,
			      .ifindex = 0xffff };

	for (__u32 i = 0; i < n; i++) {
		k.saddr.v4 = htonl(0xc6120000 + i); /* 198.18.0.0/15 */
		if (!ASSERT_OK(bpf_map_update_elem(flows_fd, &k, &v, BPF_NOEXIST),
			       "a dummy entry"))
			return false;
	}
	return true;
}

/*
 * (Each connection to a port of its own: the kernel's entries share the
 * masquerade port EXT_PORT.)
 * When an install finds the bits half set: with few live entries, a new
 * epoch, every word cleared but for the new entry's bit; with an eighth
 * of the bits' worth or more, the filter goes off, every bit set (every
 * packet looks the table up), for OFFLOADED_RETRY installs, the last of
 * which starts a new epoch the same way.
 */
static bool test_table_filter_full(void)
{
	static const struct fixture one = { .name = "offloaded",
		UDP_NAT(40013, 5001, OFFLOAD, EXT_PORT) };
	static const struct fixture two = { .name = "offloaded, full",
		UDP_NAT(40014, 5002, OFFLOAD, EXT_PORT) };
	static const struct fixture two_hit = { .name = "a hit while off",
		UDP_NAT(40014, 5002, FAST, EXT_PORT) };
	static const struct fixture three = { .name = "offloaded, off",
		UDP_NAT(40015, 5003, OFFLOAD, EXT_PORT) };
	struct offloaded_epoch e;
	bool ok;

	ok = reset() && table_filter_fresh() && ct_udp(40013, 5001, MARK_ORIG) &&
	     ct_udp(40014, 5002, MARK_ORIG) && ct_udp(40015, 5003, MARK_ORIG) &&
	     fill_to_half() && run_fixture(&one) && table_filter_get(&e);
	if (!ok)
		return false;
	ok &= ASSERT_EQ(e.epoch, 1, "a new epoch");
	ok &= ASSERT_EQ(e.set, 1, "the new entry's bit alone set");
	ok &= ASSERT_EQ(e.off, 0, "on");
	ok &= ASSERT_EQ(table_filter_words_are(0), OFFLOADED_WORDS - 1,
			"every other word cleared");
	ok &= table_fill(OFFLOADED_BITS / 8) && fill_to_half() &&
	      run_fixture(&two) && table_filter_get(&e);
	ok &= ASSERT_EQ(e.epoch, 1, "no new epoch with many entries");
	ok &= ASSERT_EQ(e.off, OFFLOADED_RETRY, "off");
	ok &= ASSERT_EQ(table_filter_words_are(~0U), OFFLOADED_WORDS,
			"every bit set");
	/* Its own install set no bit: found because every bit is set. */
	ok &= run_fixture(&two_hit);
	/* Off: the next install counts down, and the last one starts an
	 * epoch. */
	e.off = 1;
	ok &= table_filter_put(&e) && run_fixture(&three) && table_filter_get(&e);
	ok &= ASSERT_EQ(e.off, 0, "on again");
	ok &= ASSERT_EQ(e.epoch, 2, "with a new epoch");
	ok &= ASSERT_EQ(e.set, 1, "the last install's bit alone set");
	ok &= ASSERT_EQ(table_filter_words_are(0), OFFLOADED_WORDS - 1,
			"every other word cleared again");
	flows_clear();
	return ok;
}
FIXTURE_TEST(.name = "table_filter_full", .fn = test_table_filter_full);

FIXTURE_TEST(.name = "offload_off_again", .fn = offload_off_again);

/* A flow table that holds an eighth of the table filter's bits in
 * entries, for table_filter_full. */
int main(void)
{
	const struct fixture_opts o = { .flow_entries = OFFLOADED_BITS / 4 };

	return fixture_main_registered(__FILE__, &o);
}
