// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of offload mode's decision (bpf/offload.h, bpf/ct.h) with
 * BPF_PROG_RUN against real conntrack entries: each test inserts the
 * kernel's entry with conntrack -I in the fixture's network namespace
 * (its tuples carry the NAT the kernel chose, its mark the bits the
 * ruleset's chain would set), then sends packets: no entry (a connection
 * the kernel has not confirmed is not in its table yet), the handshake,
 * established TCP, one direction accepted, UDP one way, FIN and RST, a
 * RST closing the kernel's entry for good, the
 * entry gone or alive when its timeout is refreshed, IPv4 options and TTL
 * 1 handed up, DNS's own timeout, ICMP, IPv6, and the mark bits taken
 * from the config.
 * Fixtures and runner: fixture.h.
 */
#include <time.h>
#include "fixture.h"

#define MARK_ORIG  0x40000000u
#define MARK_REPLY 0x80000000u
#define EXT_PORT   30001 /* the kernel's masquerade port in the entries */

static int offload_fd;

/* Offload mode on, with the config's mark bits. Every miss asks
 * conntrack (XNAT_OFFLOAD_F_LOOKUP_FIRST), so that each packet below
 * tests the decision on the entry it sees; first_miss_not_looked_up
 * tests the filter that otherwise lets first misses go up unasked. */
static bool offload_config(uint32_t orig, uint32_t reply, uint32_t tcp_est)
{
	struct xnat_offload_config oc = { .mark_orig = orig,
					  .mark_reply = reply,
					  .flags = XNAT_OFFLOAD_F_LOOKUP_FIRST };
	struct xnat_config c;
	__u32 zero = 0;

	if (bpf_map_update_elem(offload_fd, &zero, &oc, BPF_ANY)) {
		fprintf(stderr, "  xnat_offload update: %s\n", strerror(errno));
		return false;
	}
	if (!config_get(&c))
		return false;
	c.flags |= XNAT_F_OFFLOAD;
	c.timeout_tcp_est = tcp_est;
	return config_set(&c);
}

/* Clean slate: no flows, no conntrack entries, the default settings. */
static bool reset(void)
{
	flows_clear();
	sh("conntrack -F >/dev/null 2>&1");
	return offload_config(MARK_ORIG, MARK_REPLY, 7440);
}

/* The kernel's entry of LAN_HOST:SPORT -> WAN_GW:443 masqueraded to
 * NAT_ADDR:EXT_PORT, in STATE, with MARK. */
static bool ct_tcp(uint16_t sport, const char *state, uint32_t mark)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "conntrack -I -p tcp -s %s -d %s --sport %u --dport 443 "
		 "-r %s -q %s --reply-port-src 443 --reply-port-dst %u "
		 "--state %s -u SEEN_REPLY,ASSURED -t 100 -m 0x%x >/dev/null 2>&1",
		 LAN_HOST, WAN_GW, sport, WAN_GW, NAT_ADDR, EXT_PORT, state,
		 mark);
	return !sh(cmd);
}

/* The entry's line in `conntrack -L`, for its mark and timeout. */
static bool ct_line(const char *filter, char *line, size_t len)
{
	char cmd[256];
	FILE *f;
	bool ok;

	snprintf(cmd, sizeof(cmd), "conntrack -L %s 2>/dev/null", filter);
	f = popen(cmd, "r");
	if (!f)
		return false;
	ok = fgets(line, len, f) != NULL;
	pclose(f);
	if (!ok)
		fprintf(stderr, "  conntrack -L %s: no entry\n", filter);
	return ok;
}

static bool ct_mark_is(const char *filter, uint32_t want)
{
	char line[512], *m;
	unsigned long mark;

	if (!ct_line(filter, line, sizeof(line)))
		return false;
	m = strstr(line, "mark=");
	mark = m ? strtoul(m + 5, NULL, 0) : ~0UL;
	if (mark != want) {
		fprintf(stderr, "  conntrack mark %lu, expected %u: %s", mark,
			want, line);
		return false;
	}
	return true;
}

/* The remaining timeout (seconds) of the entry FILTER selects, or -1. */
static long ct_timeout(const char *filter)
{
	char line[512], *t;

	if (!ct_line(filter, line, sizeof(line)))
		return -1;
	/* "udp 17 TIMEOUT src=..." or "tcp 6 TIMEOUT ESTABLISHED ..." */
	t = line + strcspn(line, "0123456789");
	t += strcspn(t, " ");
	return strtol(t, NULL, 10);
}

static bool flows_are(int n)
{
	int got = flows_count();

	if (got != n)
		fprintf(stderr, "  %d flow entries, expected %d\n", got, n);
	return got == n;
}

/* Packets of the entry ct_tcp() makes, in both directions. */
#define ORIG_ACK(sp, fl)                                                     \
	.ingress = LAN,                                                       \
	.in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,                 \
		.proto = IPPROTO_TCP, .sport = sp, .dport = 443,              \
		.tcp_flags = fl, .seq = 1000, .ack_seq = 2000, .ttl = 64,     \
		.ip_id = 0x0101 }
#define ORIG_OUT(fl)                                                         \
	.has_out = true,                                                      \
	.out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,                  \
		 .proto = IPPROTO_TCP, .sport = EXT_PORT, .dport = 443,       \
		 .tcp_flags = fl, .seq = 1000, .ack_seq = 2000, .ttl = 63,    \
		 .ip_id = 0x0101 }
#define REPLY_ACK(fl)                                                        \
	.ingress = WAN,                                                       \
	.in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,                 \
		.proto = IPPROTO_TCP, .sport = 443, .dport = EXT_PORT,        \
		.tcp_flags = fl, .seq = 2000, .ack_seq = 1000, .ttl = 60,     \
		.ip_id = 0x0202 }
#define REPLY_OUT(dp, fl)                                                    \
	.has_out = true,                                                      \
	.out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST,                  \
		 .proto = IPPROTO_TCP, .sport = 443, .dport = dp,             \
		 .tcp_flags = fl, .seq = 2000, .ack_seq = 1000, .ttl = 59,    \
		 .ip_id = 0x0202 }

#define ACK TCP_ACK

/*
 * A hand-back: F goes up untouched, counted once under its reason, and
 * (unlike any other XDP_PASS, which run_fixture() checks) takes the flow
 * off the fast path: both of its entries are gone afterwards.
 */
static bool run_handback(const struct fixture *f)
{
	struct xnat_counter before[XNAT_REASON_MAX], after[XNAT_REASON_MAX];
	uint8_t in[PKT_MAX], out[PKT_MAX];
	uint32_t len = pkt_build(in, &f->in), out_len = sizeof(out), ret = 0;
	bool ok = true;

	stats_read(before);
	if (!xdp_run(side_ifindex(f->ingress), in, len, 0, out, &out_len, &ret))
		return false;
	stats_read(after);
	if (ret != XDP_PASS) {
		check_fail("%s: verdict %s, expected XDP_PASS", f->name,
			   verdict_name(ret));
		ok = false;
	}
	for (int r = 0; r < XNAT_REASON_MAX; r++) {
		__u64 want = r == f->reason, got = after[r].packets -
						   before[r].packets;

		if (got != want) {
			check_fail("%s: counter %s moved by %llu, expected %llu",
				   f->name, reason_name(r),
				   (unsigned long long)got,
				   (unsigned long long)want);
			ok = false;
		}
	}
	if (!expect_bytes(out, out_len, in, len, "handed back, yet modified"))
		ok = false;
	return ok && flows_are(0);
}

/* No conntrack entry: a new connection, or one whose first packet the
 * kernel has not confirmed yet (only confirmed entries are in the table
 * the kfunc searches). The packet goes up untouched, nothing installed. */
static bool test_no_entry(void)
{
	static const struct fixture f = { .name = "ack without entry",
		ORIG_ACK(40001, ACK), .verdict = XDP_PASS,
		.reason = XNAT_PASS_CT_NONE };

	return reset() && run_fixture(&f) && flows_are(0);
}

/* The handshake is conntrack's: a SYN never leaves it, and an entry not
 * yet established keeps its packets up although both bits are set. */
static bool test_handshake(void)
{
	static const struct fixture f[] = {
		{ .name = "syn", ORIG_ACK(40002, TCP_SYN), .verdict = XDP_PASS,
		  .reason = XNAT_PASS_CT_TCP_STATE },
		{ .name = "ack in syn_recv", ORIG_ACK(40002, ACK),
		  .verdict = XDP_PASS, .reason = XNAT_PASS_CT_TCP_STATE },
		{ .name = "syn-ack", REPLY_ACK(TCP_SYN | ACK),
		  .verdict = XDP_PASS, .reason = XNAT_PASS_CT_TCP_STATE },
	};

	return reset() && ct_tcp(40002, "SYN_RECV", MARK_ORIG | MARK_REPLY) &&
	       run_fixtures(f, ARRAY_SIZE(f)) && flows_are(0);
}

/* Established, the ruleset has accepted the original direction only: the
 * reply stays up; the original is offloaded with the kernel's masquerade
 * (addresses, port, checksums), its mark bit consumed, then hits; once
 * the reply's bit is there the reply is offloaded too, to the LAN host's
 * own port. */
static bool test_established_one_way_then_both(void)
{
	static const struct fixture f1[] = {
		{ .name = "reply not accepted yet", REPLY_ACK(ACK),
		  .verdict = XDP_PASS, .reason = XNAT_PASS_CT_UNMARKED },
		{ .name = "orig offloaded", ORIG_ACK(40003, ACK),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_OFFLOAD,
		  ORIG_OUT(ACK) },
		{ .name = "orig hit", ORIG_ACK(40003, ACK),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
		  ORIG_OUT(ACK) },
	};
	static const struct fixture f2[] = {
		{ .name = "reply offloaded", REPLY_ACK(ACK),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_OFFLOAD,
		  REPLY_OUT(40003, ACK) },
		{ .name = "reply hit", REPLY_ACK(ACK),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
		  REPLY_OUT(40003, ACK) },
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

/* FIN from the LAN host, RST from the WAN: each takes the whole flow off
 * the fast path and goes up untouched for conntrack to see. */
static bool test_fin_rst(void)
{
	static const struct fixture both[] = {
		{ .name = "orig offloaded", ORIG_ACK(40004, ACK),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_OFFLOAD,
		  ORIG_OUT(ACK) },
		{ .name = "reply offloaded", REPLY_ACK(ACK),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_OFFLOAD,
		  REPLY_OUT(40004, ACK) },
	};
	static const struct fixture fin = { .name = "fin",
		ORIG_ACK(40004, TCP_FIN | ACK), .verdict = XDP_PASS,
		.reason = XNAT_PASS_CT_TCP_END };
	static const struct fixture rst = { .name = "rst",
		REPLY_ACK(TCP_RST | ACK), .verdict = XDP_PASS,
		.reason = XNAT_PASS_CT_TCP_END };

	if (!reset() || !ct_tcp(40004, "ESTABLISHED", MARK_ORIG | MARK_REPLY) ||
	    !run_fixtures(both, ARRAY_SIZE(both)) || !flows_are(2) ||
	    !run_handback(&fin))
		return false;
	/* The bits were consumed; the kernel would set them again. */
	if (!ct_mark_is("-p tcp --sport 40004", 0) ||
	    sh("conntrack -U -s " LAN_HOST " -p tcp --sport 40004 "
	       "-m 0xc0000000 >/dev/null 2>&1"))
		return false;
	return run_fixtures(both, ARRAY_SIZE(both)) && flows_are(2) &&
	       run_handback(&rst);
}

/*
 * A RST on the fast path ends the kernel's entry on tcp_transitory (here
 * 5 s), for good: conntrack, which missed the packets XDP carried, would
 * keep the connection established and let the next segment renew it
 * (bpf/ct.h ct_close). The next segment, although the ruleset has marked
 * the entry again (as it does for the RST itself), is not offloaded, and
 * the timeout stays short; without the fix it was 7440 s from the offload
 * and stayed so.
 */
static bool test_rst_closes(void)
{
	static const struct fixture both[] = {
		{ .name = "orig offloaded", ORIG_ACK(40015, ACK),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_OFFLOAD,
		  ORIG_OUT(ACK) },
		{ .name = "reply offloaded", REPLY_ACK(ACK),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_OFFLOAD,
		  REPLY_OUT(40015, ACK) },
	};
	static const struct fixture rst = { .name = "rst from the lan",
		ORIG_ACK(40015, TCP_RST | ACK), .verdict = XDP_PASS,
		.reason = XNAT_PASS_CT_TCP_END };
	static const struct fixture after = { .name = "segment after the rst",
		ORIG_ACK(40015, ACK), .verdict = XDP_PASS,
		.reason = XNAT_PASS_CT_TCP_STATE };
	const char *filter = "-p tcp --sport 40015";
	long t_rst = -1, t_after = -1;
	struct xnat_config c;
	bool ok;

	if (!reset() || !config_get(&c))
		return false;
	c.timeout_tcp_trans = 5;
	ok = config_set(&c) &&
	     ct_tcp(40015, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
	     run_fixtures(both, ARRAY_SIZE(both)) && flows_are(2) &&
	     ct_timeout(filter) > 100 && run_handback(&rst);
	if (ok) {
		t_rst = ct_timeout(filter);
		ok = !sh("conntrack -U -s " LAN_HOST " -p tcp --sport 40015 "
			 "-m 0xc0000000 >/dev/null 2>&1") &&
		     run_fixture(&after) && flows_are(0);
		t_after = ct_timeout(filter);
	}
	c.timeout_tcp_trans = 240;
	if (!config_set(&c) || !ok)
		return false;
	if (t_rst < 0 || t_rst > 5 || t_after < 0 || t_after > 5) {
		fprintf(stderr, "  conntrack timeout %ld after the rst, %ld after "
			"the next segment, expected <= 5\n", t_rst, t_after);
		return false;
	}
	return true;
}

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
	static const struct fixture off = { .name = "orig offloaded",
		ORIG_ACK(40005, ACK), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_OFFLOAD, ORIG_OUT(ACK) };
	static const struct fixture hit = { .name = "orig hit, refreshed",
		ORIG_ACK(40005, ACK), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST, ORIG_OUT(ACK) };
	static const struct fixture gone = { .name = "entry gone",
		ORIG_ACK(40005, ACK), .verdict = XDP_PASS,
		.reason = XNAT_PASS_CT_GONE };
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

/* UDP one way: an entry that never saw a reply, accepted in the original
 * direction, is offloaded that way; its reply direction is not. */
static bool test_udp_one_way(void)
{
	static const struct fixture f[] = {
		{ .name = "udp orig offloaded", UDP_OUT(40006, 5000),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_OFFLOAD,
		  UDP_OUT_NAT(EXT_PORT, 5000) },
		{ .name = "udp orig hit", UDP_OUT(40006, 5000),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
		  UDP_OUT_NAT(EXT_PORT, 5000) },
		{ .name = "udp reply not accepted", UDP_REPLY(5000, EXT_PORT),
		  .verdict = XDP_PASS, .reason = XNAT_PASS_CT_UNMARKED },
	};
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "conntrack -I -p udp -s %s -d %s --sport 40006 --dport 5000 "
		 "-r %s -q %s --reply-port-src 5000 --reply-port-dst %u "
		 "-t 100 -m 0x%x >/dev/null 2>&1",
		 LAN_HOST, WAN_GW, WAN_GW, NAT_ADDR, EXT_PORT, MARK_ORIG);
	return reset() && !sh(cmd) && run_fixtures(f, ARRAY_SIZE(f)) &&
	       flows_are(1);
}

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
		UDP_OUT(40000, 53), .build = pkt_build_v4_opts_udp,
		.verdict = XDP_PASS, .reason = XNAT_PASS_IP_OPTIONS };
	static const struct fixture ttl1 = { .name = "udp ttl 1",
		.ingress = LAN,
		.in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
			.proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
			.ttl = 1, .ip_id = 0x1234 },
		.verdict = XDP_PASS, .reason = XNAT_PASS_TTL };
	static const struct fixture off = { .name = "udp offloaded",
		UDP_OUT(40000, 53), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_OFFLOAD, UDP_OUT_NAT(EXT_PORT, 53) };
	static const struct fixture hit = { .name = "udp hit",
		UDP_OUT(40000, 53), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST, UDP_OUT_NAT(EXT_PORT, 53) };
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "conntrack -I -p udp -s %s -d %s --sport 40000 --dport 53 "
		 "-r %s -q %s --reply-port-src 53 --reply-port-dst %u "
		 "-t 100 -m 0x%x >/dev/null 2>&1",
		 LAN_HOST, WAN_GW, WAN_GW, NAT_ADDR, EXT_PORT, MARK_ORIG);
	return reset() && !sh(cmd) && run_fixture(&opts) &&
	       run_fixture(&ttl1) && flows_are(0) && run_fixture(&off) &&
	       run_fixture(&opts) && run_fixture(&ttl1) && flows_are(1) &&
	       run_fixture(&hit) && flows_are(1);
}

/* A UDP entry of LAN_HOST:SPORT -> WAN_GW:DPORT, masqueraded to EXT_PORT,
 * its timeout 100 s, with MARK. */
static bool ct_udp(uint16_t sport, uint16_t dport, uint32_t mark)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "conntrack -I -p udp -s %s -d %s --sport %u --dport %u "
		 "-r %s -q %s --reply-port-src %u --reply-port-dst %u "
		 "-t 100 -m 0x%x >/dev/null 2>&1",
		 LAN_HOST, WAN_GW, sport, dport, WAN_GW, NAT_ADDR, dport,
		 EXT_PORT, mark);
	return !sh(cmd);
}

/* [timeouts] udp_dns (here 30 s) and udp (300 s) set the timeout of the
 * kernel's entry: DNS (port 53) offloaded in either direction, the reply
 * judged on the connection's original ports, gets udp_dns, as the
 * ruleset's own udp_dns policy gives it; other UDP gets udp. Each entry
 * was inserted with 100 s. */
static bool test_dns_timeout(void)
{
	static const struct fixture dns_reply = { .name = "dns reply offloaded",
		UDP_REPLY(53, EXT_PORT), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_OFFLOAD, UDP_REPLY_NAT(53, 40012) };
	static const struct fixture dns = { .name = "dns offloaded",
		UDP_OUT(40013, 53), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_OFFLOAD, UDP_OUT_NAT(EXT_PORT, 53) };
	static const struct fixture other = { .name = "udp offloaded",
		UDP_OUT(40014, 5000), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_OFFLOAD, UDP_OUT_NAT(EXT_PORT, 5000) };
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
	    !ct_udp(40014, 5000, MARK_ORIG) || !run_fixture(&other))
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

/* ICMP: the kfunc cannot look it up; the kernel forwards it. */
static bool test_icmp(void)
{
	static const struct fixture f = { .name = "echo request",
		.ingress = LAN,
		.in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
			.proto = IPPROTO_ICMP, .icmp_type = 8, .icmp_id = 7,
			.icmp_seq = 1 },
		.verdict = XDP_PASS, .reason = XNAT_PASS_CT_PROTO };

	return reset() && run_fixture(&f) && flows_are(0);
}

/* IPv6: routed without NAT; the entry's tuples are each other's reverse
 * and the packet leaves unchanged but for the hop limit and MACs. */
static bool test_ipv6(void)
{
	static const struct fixture f = { .name = "ipv6 tcp offloaded",
		.ingress = LAN,
		.in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
			.proto = IPPROTO_TCP, .sport = 40007, .dport = 443,
			.tcp_flags = ACK, .seq = 1, .ack_seq = 2, .ttl = 64 },
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_OFFLOAD,
		.has_out = true,
		.out = { TO_WAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
			 .proto = IPPROTO_TCP, .sport = 40007, .dport = 443,
			 .tcp_flags = ACK, .seq = 1, .ack_seq = 2, .ttl = 63 } };
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "conntrack -I -p tcp -s %s -d %s --sport 40007 "
		 "--dport 443 --state ESTABLISHED -u SEEN_REPLY,ASSURED "
		 "-t 100 -m 0x%x >/dev/null 2>&1",
		 LAN6_HOST, WAN6_GW, MARK_ORIG);
	return reset() && !sh(cmd) && run_fixture(&f) && flows_are(1);
}

/* The bits come from [offload] ct_mark: with other bits configured, an
 * entry carrying the default ones is not accepted, and its mark is left
 * alone (the operator's bits are not xnat's to clear). */
static bool test_mark_bits_configured(void)
{
	static const struct fixture f = { .name = "other bits",
		ORIG_ACK(40008, ACK), .verdict = XDP_PASS,
		.reason = XNAT_PASS_CT_UNMARKED };

	return reset() && offload_config(0x1, 0x2, 7440) &&
	       ct_tcp(40008, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
	       run_fixture(&f) && flows_are(0) &&
	       ct_mark_is("-p tcp --sport 40008", MARK_ORIG | MARK_REPLY);
}

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
		{ .name = "first miss", UDP_OUT(40009, 5000),
		  .verdict = XDP_PASS, .reason = XNAT_PASS_CT_FIRST },
		{ .name = "second: offloaded", UDP_OUT(40009, 5000),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_OFFLOAD,
		  UDP_OUT_NAT(EXT_PORT, 5000) },
	};
	static const struct fixture unknown[] = {
		{ .name = "unknown, first", UDP_OUT(40010, 5000),
		  .verdict = XDP_PASS, .reason = XNAT_PASS_CT_FIRST },
		{ .name = "unknown, second", UDP_OUT(40010, 5000),
		  .verdict = XDP_PASS, .reason = XNAT_PASS_CT_NONE },
		{ .name = "unknown, third", UDP_OUT(40010, 5000),
		  .verdict = XDP_PASS, .reason = XNAT_PASS_CT_FIRST },
	};
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "conntrack -I -p udp -s %s -d %s --sport 40009 --dport 5000 "
		 "-r %s -q %s --reply-port-src 5000 --reply-port-dst %u "
		 "-t 100 -m 0x%x >/dev/null 2>&1",
		 LAN_HOST, WAN_GW, WAN_GW, NAT_ADDR, EXT_PORT, MARK_ORIG);
	return reset() && seen_filter_fresh() && !sh(cmd) &&
	       run_fixture(&known[0]) && flows_are(0) &&
	       ct_mark_is("-p udp --sport 40009", MARK_ORIG) &&
	       run_fixture(&known[1]) && flows_are(1) &&
	       run_fixtures(unknown, ARRAY_SIZE(unknown)) && flows_are(1);
}

/* The rest of the data path's tests run with offload off: leave it so. */
static bool test_offload_off_again(void)
{
	struct xnat_config c;

	flows_clear();
	sh("conntrack -F >/dev/null 2>&1");
	if (!config_get(&c))
		return false;
	c.flags &= ~XNAT_F_OFFLOAD;
	c.timeout_tcp_est = 7440;
	return config_set(&c);
}

static bool test_setup(void)
{
	offload_fd = bpf_map__fd(skel->maps.xnat_offload);
	if (offload_fd < 0 || system("conntrack -F >/dev/null 2>&1")) {
		fprintf(stderr, "  conntrack (conntrack-tools) is needed: scripts/deps.sh installs it\n");
		return false;
	}
	return true;
}

static const struct test tests[] = {
	{ .name = "offload_setup", .fn = test_setup },
	{ .name = "no_entry", .fn = test_no_entry },
	{ .name = "handshake", .fn = test_handshake },
	{ .name = "established_one_way_then_both",
	  .fn = test_established_one_way_then_both },
	{ .name = "fin_rst", .fn = test_fin_rst },
	{ .name = "rst_closes", .fn = test_rst_closes },
	{ .name = "refresh_alive_and_gone", .fn = test_refresh_alive_and_gone },
	{ .name = "udp_one_way", .fn = test_udp_one_way },
	{ .name = "exceptions_go_up", .fn = test_exceptions_go_up },
	{ .name = "dns_timeout", .fn = test_dns_timeout },
	{ .name = "icmp", .fn = test_icmp },
	{ .name = "ipv6", .fn = test_ipv6 },
	{ .name = "mark_bits_configured", .fn = test_mark_bits_configured },
	{ .name = "first_miss_not_looked_up",
	  .fn = test_first_miss_not_looked_up },
	{ .name = "offload_off_again", .fn = test_offload_off_again },
};

FIXTURE_MAIN(tests)
