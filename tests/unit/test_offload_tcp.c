// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of how offload mode ends a TCP connection it carries
 * (bpf/offload.h offload_tcp_end), with BPF_PROG_RUN against real
 * conntrack entries as in test_offload.c: a FIN or RST takes the flow off
 * the fast path, a RST closes the kernel's entry for good, and a forged
 * RST or FIN outside the receiver's window is dropped and changes
 * nothing, unless the entry is from an xnat before tracking. Fixtures
 * and runner: fixture.h; shared helpers:
 * offload_harness.h.
 */
#include "offload_harness.h"

FIXTURE_TEST(.name = "offload_setup", .fn = offload_setup);

/* FIN from the LAN host, RST from the WAN: each takes the whole flow off
 * the fast path and goes up untouched for conntrack to see. */
static bool test_fin_rst(void)
{
	static const struct fixture fin = { .name = "fin",
		ORIG_ACK(40004, TCP_FIN | ACK), PASS(CT_TCP_END) };
	static const struct fixture rst = { .name = "rst",
		REPLY_ACK(TCP_RST | ACK), PASS(CT_TCP_END) };

	if (!reset() || !ct_tcp(40004, "ESTABLISHED", MARK_ORIG | MARK_REPLY) ||
	    !offload_both(40004) || !run_handback(&fin))
		return false;
	/* The bits were consumed; the kernel would set them again. */
	if (!ct_mark_is("-p tcp --sport 40004", 0) ||
	    sh("conntrack -U -s " LAN_HOST " -p tcp --sport 40004 "
	       "-m 0xc0000000 >/dev/null 2>&1"))
		return false;
	return offload_both(40004) && run_handback(&rst);
}
FIXTURE_TEST(.name = "fin_rst", .fn = test_fin_rst);

/* The table filter (bpf/offload_filter.h) never hides an entry from a FIN
 * or RST: after a new epoch cleared the flow's bit, its FIN still finds
 * the entry and takes the flow off the fast path. */
static bool test_fin_after_epoch(void)
{
	static const struct fixture fin = { .name = "fin, bit cleared",
		ORIG_ACK(40021, TCP_FIN | ACK), PASS(CT_TCP_END) };

	return reset() && table_filter_fresh() &&
	       ct_tcp(40021, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
	       offload_both(40021) && table_filter_new_epoch() &&
	       run_handback(&fin);
}
FIXTURE_TEST(.name = "fin_after_epoch", .fn = test_fin_after_epoch);

/*
 * A clean slate with tcp_transitory at 5 s (*OK), and for
 * trans5_offloaded() the connection on SPORT offloaded both ways. False
 * only if the config cannot be read: C is then not for trans_end() to
 * set back.
 */
static bool trans5(struct xnat_config *c, bool *ok)
{
	if (!reset() || !config_get(c))
		return false;
	c->timeout_tcp_trans = 5;
	*ok = config_set(c);
	return true;
}

static bool trans5_offloaded(struct xnat_config *c, uint16_t sport, bool *ok)
{
	if (!trans5(c, ok))
		return false;
	*ok = *ok && ct_tcp(sport, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
	      offload_both(sport);
	return true;
}

/* T, the kernel entry's timeout after WHAT, is tcp_transitory's 5 s. */
static bool short_timeout(long t, const char *what)
{
	if (t >= 0 && t <= 5)
		return true;
	fprintf(stderr, "  conntrack timeout %ld after %s, expected <= 5\n", t,
		what);
	return false;
}

/* tcp_transitory back to its default; then whether OK, and T after WHAT
 * was short. */
static bool trans_end(struct xnat_config *c, bool ok, long t, const char *what)
{
	c->timeout_tcp_trans = 240;
	return config_set(c) && ok && short_timeout(t, what);
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
	static const struct fixture rst = { .name = "rst from the lan",
		ORIG_ACK(40015, TCP_RST | ACK), PASS(CT_TCP_END) };
	static const struct fixture after = { .name = "segment after the rst",
		ORIG_ACK(40015, ACK), PASS(CT_TCP_STATE) };
	const char *filter = "-p tcp --sport 40015";
	long t_rst = -1, t_after = -1;
	struct xnat_config c;
	bool ok;

	if (!trans5_offloaded(&c, 40015, &ok))
		return false;
	ok = ok && ct_timeout(filter) > 100 && run_handback(&rst);
	if (ok) {
		t_rst = ct_timeout(filter);
		ok = !sh("conntrack -U -s " LAN_HOST " -p tcp --sport 40015 "
			 "-m 0xc0000000 >/dev/null 2>&1") &&
		     run_fixture(&after) && flows_are(0);
		t_after = ct_timeout(filter);
	}
	return trans_end(&c, ok, t_rst, "the rst") &&
	       short_timeout(t_after, "the next segment");
}
FIXTURE_TEST(.name = "rst_closes", .fn = test_rst_closes);

/* A blind attacker's RSTs from the WAN side, dropped: far off, and just
 * beyond the LAN side's window. */
#define FORGED_RST_FAR                                                        \
	{ .name = "forged rst, far off",                                      \
	  REPLY_AT(TCP_RST, REPLY_NEXT + 0x40000000), DROP(TCP_WINDOW) }
#define FORGED_RST_BEYOND                                                     \
	{ .name = "forged rst, just beyond the window",                       \
	  REPLY_AT(TCP_RST | ACK, REPLY_NEXT + PEER_WIN + 1), DROP(TCP_WINDOW) }

/*
 * A blind attacker who knows the 4-tuple but not the sequence numbers
 * cannot end an offloaded connection (RFC 5961 section 3, as xdp mode,
 * bpf/tcp_track.h): a RST or FIN outside the receiver's window around the
 * next sequence number it expects, far off or just beyond the window, is
 * dropped as drop_tcp_window; both entries stay, the kernel's entry keeps
 * its state and timeout (no ct_close), and the next segment still hits.
 * The RST at the window's edge is the endpoint's to judge: it closes as
 * rst_closes does.
 */
static bool test_blind_rst_fin_dropped(void)
{
	static const struct fixture blind[] = {
		FORGED_RST_FAR,
		FORGED_RST_BEYOND,
		{ .name = "forged fin from the lan side, far behind",
		  ORIG_AT(40016, TCP_FIN | ACK, ORIG_NEXT - 0x20000000),
		  DROP(TCP_WINDOW) },
		{ .name = "orig still hits", ORIG_FWD(40016, FAST) },
		{ .name = "reply still hits", REPLY_FWD(40016, FAST) },
	};
	static const struct fixture rst = { .name = "rst at the window's edge",
		REPLY_AT(TCP_RST | ACK, REPLY_NEXT + PEER_WIN),
		PASS(CT_TCP_END) };
	const char *filter = "-p tcp --sport 40016";
	struct xnat_config c;
	long t_rst = -1;
	bool ok;

	if (!trans5_offloaded(&c, 40016, &ok))
		return false;
	ok = ok && run_fixtures(blind, ARRAY_SIZE(blind)) && flows_are(2) &&
	     ct_established(filter, 100) && run_handback(&rst);
	if (ok)
		t_rst = ct_timeout(filter);
	return trans_end(&c, ok, t_rst, "the rst in window");
}
FIXTURE_TEST(.name = "blind_rst_fin_dropped", .fn = test_blind_rst_fin_dropped);

/*
 * The receiver's window of a FIN or RST on the fast path whose receiver's
 * direction is not offloaded: conntrack's record of that receiver
 * (td_maxwin), here 8000 bytes from a real segment conntrack saw, not the
 * sender's own 64240. A RST one byte beyond it is dropped, one at its edge
 * obeyed. Were the window taken from the sender, or not judged without
 * the receiver's entry, the first would go up and end the connection.
 */
static bool test_td_maxwin_fallback(void)
{
	static const struct fixture reply = { .name = "reply, seen by conntrack", REPLY_ACK(ACK) };
	static const struct fixture orig = { .name = "orig offloaded", ORIG_FWD(40019, OFFLOAD) };
	static const struct fixture beyond = { .name = "rst just beyond 8000",
		ORIG_AT(40019, TCP_RST | ACK, ORIG_NEXT + 8001),
		DROP(TCP_WINDOW) };
	static const struct fixture edge = { .name = "rst at 8000",
		ORIG_AT(40019, TCP_RST | ACK, ORIG_NEXT + 8000),
		PASS(CT_TCP_END) };
	struct pkt_spec in = reply.in;
	const char *filter = "-p tcp --sport 40019";

	return reset() && ct_tcp(40019, "ESTABLISHED", MARK_ORIG) &&
	       ct_feed(WAN, &in, 8000, filter) && run_fixture(&orig) &&
	       flows_are(1) && run_fixture(&beyond) && flows_are(1) &&
	       ct_established(filter, 1000) && run_handback(&edge);
}

/*
 * A RST from the side the kernel still carries (its direction a miss)
 * while the other direction is offloaded (bpf/offload.h
 * offload_miss_rst): it goes up, takes the offloaded direction off the
 * fast path and closes the kernel's entry on tcp_transitory, as a RST on
 * the fast path does. Before, the reply direction stayed in XDP and the
 * kernel's entry established. The entry comes from ctnetlink, so conntrack
 * knows no sequence number of the sender: nothing to judge by, obeyed.
 */
static bool test_rst_miss_ends_other(void)
{
	static const struct fixture reply = { .name = "reply offloaded",
		REPLY_FWD(40023, OFFLOAD) };
	static const struct fixture rst = { .name = "rst from the lan, a miss",
		ORIG_ACK(40023, TCP_RST | ACK), PASS(CT_TCP_END) };
	struct xnat_config c;
	long t_rst = -1;
	bool ok;

	if (!trans5(&c, &ok))
		return false;
	ok = ok && ct_tcp(40023, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
	     run_fixture(&reply) && flows_are(1) && run_handback(&rst);
	if (ok)
		t_rst = ct_timeout("-p tcp --sport 40023");
	return trans_end(&c, ok, t_rst, "the rst");
}
FIXTURE_TEST(.name = "rst_miss_ends_other", .fn = test_rst_miss_ends_other);

/* Entry KEY's receiver window closed (0 bytes), its scale kept: the
 * tracking of a receiver that advertised a zero window. */
static bool zero_window(struct flow_key k)
{
	struct flow_value v;

	if (bpf_map_lookup_elem(flows_fd, &k, &v)) {
		fprintf(stderr, "  no flow entry to close the window of\n");
		return false;
	}
	v.tcp_win &= ~TCP_WIN_UNITS_MAX;
	return !bpf_map_update_elem(flows_fd, &k, &v, BPF_EXIST);
}

/*
 * The same RST judged: conntrack saw the LAN side's segment (its next
 * sequence number ORIG_NEXT), the offloaded reply direction's entry has
 * the WAN side's window. A forged RST far off goes up for the kernel to
 * judge and ends nothing here; so does one 1000 bytes ahead once that
 * window is closed (a zero window is judged, as on a hit, not taken for
 * no window); the one at ORIG_NEXT ends the connection.
 */
static bool test_rst_miss_judged(void)
{
	static const struct fixture seg = { .name = "orig, seen by conntrack",
		ORIG_ACK(40024, ACK) };
	static const struct fixture reply = { .name = "reply offloaded",
		REPLY_FWD(40024, OFFLOAD) };
	static const struct fixture forged = { .name = "forged rst from the lan side",
		ORIG_AT(40024, TCP_RST, ORIG_NEXT + 0x40000000),
		PASS(CT_TCP_STATE) };
	static const struct fixture ahead = { .name = "rst ahead of a zero window",
		ORIG_AT(40024, TCP_RST, ORIG_NEXT + 1000), PASS(CT_TCP_STATE) };
	static const struct fixture rst = { .name = "rst in window, a miss",
		ORIG_AT(40024, TCP_RST | ACK, ORIG_NEXT), PASS(CT_TCP_END) };
	const char *filter = "-p tcp --sport 40024";
	struct pkt_spec in = seg.in;
	struct xnat_config c;
	long t_rst = -1;
	bool ok;

	if (!trans5(&c, &ok))
		return false;
	ok = ok && ct_tcp(40024, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
	     ct_feed(LAN, &in, 64240, filter) && run_fixture(&reply) &&
	     flows_are(1) && run_fixture(&forged) && flows_are(1) &&
	     zero_window(flow_key4(WAN_GW, 443, NAT_ADDR, EXT_PORT,
				   IPPROTO_TCP, if_wan)) &&
	     run_fixture(&ahead) && flows_are(1) &&
	     ct_established(filter, 1000) && run_handback(&rst);
	if (ok)
		t_rst = ct_timeout(filter);
	return trans_end(&c, ok, t_rst, "the rst in window");
}
FIXTURE_TEST(.name = "rst_miss_judged", .fn = test_rst_miss_judged);

/* Clear TCP_TRACK_SEEN in the entry of KEY: an entry offloaded by an
 * xnat before tracking (its tcp_end slot held ct_refresh). */
static bool untrack(struct flow_key k)
{
	struct flow_value v;

	if (bpf_map_lookup_elem(flows_fd, &k, &v)) {
		fprintf(stderr, "  no flow entry to untrack\n");
		return false;
	}
	v.tcp_flags_seen &= ~TCP_TRACK_SEEN;
	v.tcp_end = 12345;
	return !bpf_map_update_elem(flows_fd, &k, &v, BPF_EXIST);
}

/*
 * A flow table pinned by an older xnat keeps its layout: its offloaded
 * entries have no tracking, so there is nothing to judge a RST by and it
 * is obeyed as before (ct_close, hand-back), as docs/ARCHITECTURE.md says.
 */
static bool test_untracked_entry_not_judged(void)
{
	static const struct fixture rst = { .name = "rst on an untracked entry",
		REPLY_AT(TCP_RST, REPLY_NEXT + 0x40000000),
		PASS(CT_TCP_END) };

	return reset() &&
	       ct_tcp(40017, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
	       offload_both(40017) &&
	       untrack(flow_key4(LAN_HOST, 40017, WAN_GW, 443, IPPROTO_TCP,
				 if_lan)) &&
	       untrack(flow_key4(WAN_GW, 443, NAT_ADDR, EXT_PORT, IPPROTO_TCP,
				 if_wan)) &&
	       run_handback(&rst);
}
FIXTURE_TEST(.name = "untracked_entry_not_judged", .fn = test_untracked_entry_not_judged);

/*
 * A blind SYN (or SYN-ACK) on an offloaded connection, from either side:
 * it goes up for the kernel to judge (conntrack ignores it, the endpoint
 * answers a challenge ACK: bpf/offload.h offload_tcp_end) and the
 * connection stays on the fast path, its tracking as it was. Before, any
 * SYN took both entries off (pass_ct_tcp_end), so one blind SYN from the
 * WAN evicted any offloaded connection, again and again.
 */
static bool test_blind_syn_stays(void)
{
	static const struct fixture syns[] = {
		{ .name = "blind syn from the wan",
		  REPLY_AT(TCP_SYN, REPLY_NEXT + 0x40000000), PASS(CT_TCP_STATE) },
		{ .name = "blind syn-ack from the wan",
		  REPLY_AT(TCP_SYN | ACK, REPLY_NEXT + 0x40000000),
		  PASS(CT_TCP_STATE) },
		{ .name = "syn from the lan host",
		  ORIG_AT(40026, TCP_SYN, 777), PASS(CT_TCP_STATE) },
		{ .name = "orig still hits", ORIG_FWD(40026, FAST) },
		{ .name = "reply still hits", REPLY_FWD(40026, FAST) },
		FORGED_RST_FAR,
	};
	static const struct fixture rst = { .name = "rst in window",
		REPLY_AT(TCP_RST | ACK, REPLY_NEXT), PASS(CT_TCP_END) };
	const char *filter = "-p tcp --sport 40026";

	return reset() && ct_tcp(40026, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
	       offload_both(40026) && run_fixtures(syns, ARRAY_SIZE(syns)) &&
	       flows_are(2) && ct_established(filter, 100) &&
	       run_handback(&rst);
}
FIXTURE_TEST(.name = "blind_syn_stays", .fn = test_blind_syn_stays);

/* The tracked end of the offloaded entry of KEY, into *END. */
static bool entry_end(struct flow_key k, uint32_t *end)
{
	struct flow_value v;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &k, &v), "flow entry"))
		return false;
	*end = v.tcp_end;
	return true;
}

#define REPLY_KEY flow_key4(WAN_GW, 443, NAT_ADDR, EXT_PORT, IPPROTO_TCP, if_wan)
#define ORIG_KEY(sp) flow_key4(LAN_HOST, sp, WAN_GW, 443, IPPROTO_TCP, if_lan)

/*
 * Blind data segments from the WAN far ahead, 2^30 apart, on the fast
 * path: forwarded, but the WAN side's tracked end stays (beyond
 * TCP_END_STEP_MAX and the LAN side's window), so the RST at the last
 * one's end is dropped and conntrack's entry stays established. Before,
 * the end followed them and that RST closed both.
 */
static bool test_blind_data_no_walk(void)
{
	struct fixture seg = { .name = "blind data segment",
		REPLY_AT(ACK, 0), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST };
	struct fixture rst = { .name = "blind rst at the last one's end",
		REPLY_AT(TCP_RST | ACK, 0), DROP(TCP_WINDOW) };
	uint32_t end0 = 0, end = 1;
	bool ok = reset() &&
		  ct_tcp(40027, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
		  offload_both(40027) && entry_end(REPLY_KEY, &end0);

	for (int k = 0; k < 8 && ok; k++) {
		seg.in.seq = 0x12345678u + (uint32_t)k * 0x40000000u;
		ok = run_fixture(&seg);
	}
	rst.in.seq = seg.in.seq + PKT_DEFAULT_PAYLOAD_LEN;
	ok = ok && entry_end(REPLY_KEY, &end) &&
	     ASSERT_EQ(end, end0, "wan side's end after blind data");
	ok = ok && run_fixture(&rst);
	return ok && flows_are(2) &&
	       ct_established("-p tcp --sport 40027", 100);
}
FIXTURE_TEST(.name = "blind_data_no_walk", .fn = test_blind_data_no_walk);

/* The LAN side's offloaded entry as if both SYNs had carried window
 * scale 7: its 64240-byte window is 8 MB. */
static bool orig_wscale7(uint16_t sport)
{
	struct flow_key k = ORIG_KEY(sport);
	struct flow_value v;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &k, &v), "orig entry"))
		return false;
	v.tcp_win = (7 << TCP_WIN_SHIFT_BITS) | (v.tcp_win & TCP_WIN_UNITS_MAX);
	return ASSERT_OK(bpf_map_update_elem(flows_fd, &k, &v, BPF_EXIST),
			 "scale the LAN side's window");
}

/*
 * A real transfer from the WAN that lost 200 kB upstream: its next
 * segment, far ahead, moves the tracked end when inside the LAN side's
 * window (offload_track_far, the receiver's offloaded entry), not when
 * beyond it; in both cases it is forwarded.
 */
static bool test_loss_ahead(void)
{
	struct fixture seg = { .name = "data 200 kB ahead",
		REPLY_AT(ACK, REPLY_NEXT + 200000), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST };
	uint32_t end0 = 0, end = 0;
	bool ok = reset() &&
		  ct_tcp(40028, "ESTABLISHED", MARK_ORIG | MARK_REPLY) &&
		  offload_both(40028) && entry_end(REPLY_KEY, &end0);

	ok = ok && run_fixture(&seg) && entry_end(REPLY_KEY, &end) &&
	     ASSERT_EQ(end, end0, "beyond the 64240-byte window: stays");
	ok = ok && orig_wscale7(40028) && run_fixture(&seg) &&
	     entry_end(REPLY_KEY, &end) &&
	     ASSERT_EQ(end, REPLY_NEXT + 200000 + PKT_DEFAULT_PAYLOAD_LEN,
		       "inside the 8 MB window: moved");
	return ok && flows_are(2);
}
FIXTURE_TEST(.name = "loss_ahead", .fn = test_loss_ahead);

FIXTURE_TEST(.name = "td_maxwin_fallback", .fn = test_td_maxwin_fallback);
FIXTURE_TEST(.name = "offload_off_again", .fn = offload_off_again);

FIXTURE_MAIN_REGISTERED()
