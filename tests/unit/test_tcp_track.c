// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of TCP window tracking in XDP (bpf/tcp_track.h, and offload
 * mode's in test_offload_tcp.c): RST and FIN judged against the
 * receiver's window, what a blind attacker's SYNs and far-ahead segments
 * may no longer teach it, segments lost upstream, and the same behind
 * IPv6 extension headers. Forwarded frames are checked against the
 * checksum oracle (csum_oracle.h). Fixtures and runner: fixture.h.
 */
#include "fixture.h"

static bool tcp_state_is(uint16_t sport, __u8 want, const char *what)
{
	struct flow_key k = flow_key4(LAN_HOST, sport, WAN_GW, 443,
				      IPPROTO_TCP, if_lan);
	struct flow_value o, r;
	struct flow_key rk;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &k, &o), "orig entry"))
		return false;
	rk = flow_key4(WAN_GW, 443, NAT_ADDR, ntohs(o.new_sport), IPPROTO_TCP,
		       if_wan);
	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &rk, &r), "reply entry"))
		return false;
	return ASSERT_EQ(flow_tcp_state(&o, &r), want, what);
}

#define TCP_IN(dp, flags, sq, ak)                                             \
	.ingress = WAN,                                                       \
	.in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,                 \
		.proto = IPPROTO_TCP, .sport = 443, .dport = dp,              \
		.tcp_flags = flags, .seq = sq, .ack_seq = ak, .ttl = 64 }

/*
 * RFC 5961 section 3 at the router: an RST (or FIN) outside the receiver's
 * window is dropped and changes nothing; inside it closes. Established
 * only after SYN, SYN-ACK and the final ACK; a new SYN on the closed tuple
 * starts afresh.
 */
static bool test_tcp_window(void)
{
	const struct fixture steps[] = {
		{ .name = "SYN", TCP_OUT(40606, TCP_SYN, 1000, 0),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
		  .learn = true },
		{ .name = "SYN-ACK", TCP_IN(LEARNED, TCP_SYN | TCP_ACK, 5000, 1001),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST },
	};
	const struct fixture ack = { .name = "ACK",
		TCP_OUT(40606, TCP_ACK, 1001, 5001),
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST };
	struct fixture rst_far = { .name = "forged RST, far off",
		TCP_IN(LEARNED, TCP_RST, 5001 + 0x40000000, 0),
		.verdict = XDP_DROP, .reason = XNAT_DROP_TCP_WINDOW };
	struct fixture fin_far = { .name = "forged FIN, far off",
		TCP_IN(LEARNED, TCP_FIN | TCP_ACK, 5001 - 0x20000000, 1001),
		.verdict = XDP_DROP, .reason = XNAT_DROP_TCP_WINDOW };
	struct fixture rst_ok = { .name = "RST in window",
		TCP_IN(LEARNED, TCP_RST, 5001, 0),
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST };
	const struct fixture syn2 = { .name = "new SYN, same tuple",
		TCP_OUT(40606, TCP_SYN, 90000, 0),
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST };
	bool ok;

	ok = run_fixtures(steps, ARRAY_SIZE(steps));
	ok = ok && tcp_state_is(40606, FLOW_TCP_SYN_SENT,
				"SYN and SYN-ACK only: not established");
	ok = ok && run_fixture(&ack);
	ok = ok && tcp_state_is(40606, FLOW_TCP_ESTABLISHED,
				"after the final ACK: established");
	spec_resolve(&rst_far.in);
	spec_resolve(&fin_far.in);
	spec_resolve(&rst_ok.in);
	ok = ok && run_fixture(&rst_far) && run_fixture(&fin_far);
	ok = ok && tcp_state_is(40606, FLOW_TCP_ESTABLISHED,
				"after forged RST/FIN: still established");
	ok = ok && run_fixture(&rst_ok);
	ok = ok && tcp_state_is(40606, FLOW_TCP_CLOSED, "RST in window closes");
	ok = ok && run_fixture(&syn2);
	ok = ok && tcp_state_is(40606, FLOW_TCP_SYN_SENT,
				"a new SYN starts afresh");
	return ok;
}
FIXTURE_TEST("tcp_window", true, .fn = test_tcp_window);

/* ---- A blind attacker against the tracked sequence (tcp_track.h) ----- */

/* The two entries of the connection from the LAN host's SPORT. */
static bool tcp_entries(uint16_t sport, struct flow_value *o,
			struct flow_value *r)
{
	struct flow_key k = flow_key4(LAN_HOST, sport, WAN_GW, 443,
				      IPPROTO_TCP, if_lan);
	struct flow_key rk;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &k, o), "orig entry"))
		return false;
	rk = flow_key4(WAN_GW, 443, NAT_ADDR, ntohs(o->new_sport),
		       IPPROTO_TCP, if_wan);
	return ASSERT_OK(bpf_map_lookup_elem(flows_fd, &rk, r), "reply entry");
}

/* The server's tracked end (its next sequence number) is WANT. */
static bool server_end_is(uint16_t sport, uint32_t want, const char *what)
{
	struct flow_value o, r;

	return tcp_entries(sport, &o, &r) && ASSERT_EQ(r.tcp_end, want, what);
}

/* SYN, SYN-ACK (server ISN 5000) and the final ACK on SPORT. LEARNED is
 * the NAT port. The SYN-ACK carries pkt_build()'s payload: the server's
 * tracked end is then SERVER_END. */
#define SERVER_END (5001u + (uint32_t)PKT_DEFAULT_PAYLOAD_LEN)
static bool tcp_handshake(uint16_t sport)
{
	const struct fixture steps[] = {
		{ .name = "SYN", TCP_OUT(sport, TCP_SYN, 1000, 0),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
		  .learn = true },
		{ .name = "SYN-ACK", TCP_IN(LEARNED, TCP_SYN | TCP_ACK, 5000, 1001),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST },
		{ .name = "ACK", TCP_OUT(sport, TCP_ACK, 1001, 5001),
		  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST },
	};

	return run_fixtures(steps, ARRAY_SIZE(steps)) &&
	       tcp_state_is(sport, FLOW_TCP_ESTABLISHED, "handshake done");
}

/* A segment from the server (port 443) to the NAT port, forwarded. */
static bool server_sends(const char *name, uint8_t flags, uint32_t seq,
			 int verdict, int reason)
{
	struct fixture f = { .name = name,
		TCP_IN(LEARNED, flags, seq, 1001),
		.verdict = verdict, .reason = reason };

	spec_resolve(&f.in);
	return run_fixture(&f);
}

/* A sequence number a blind attacker picks, far from the server's. */
#define BLIND_SEQ (5001u + 0x40000000u)

/*
 * RFC 5961 section 4 at the router: a SYN or SYN-ACK on an established
 * connection is forwarded (the LAN host answers it with a challenge ACK)
 * but teaches the tracking nothing: neither the server's end, nor either
 * window or its scale. Before, a blind SYN set the server's end to its
 * own sequence number and a RST just after it then passed the window
 * check and closed the flow; a blind SYN-ACK cleared both window scales.
 * A SYN with RST is judged as a RST: dropped out of window.
 */
static bool test_blind_syn_teaches_nothing(void)
{
	struct flow_value o0, r0, o, r;
	bool ok = tcp_handshake(40620) && tcp_entries(40620, &o0, &r0);

	ok = ok && server_sends("blind SYN", TCP_SYN, BLIND_SEQ,
				XDP_REDIRECT, XNAT_FWD_FAST);
	ok = ok && server_sends("blind SYN-ACK", TCP_SYN | TCP_ACK,
				BLIND_SEQ + 7, XDP_REDIRECT, XNAT_FWD_FAST);
	ok = ok && tcp_entries(40620, &o, &r) &&
	     ASSERT_EQ(r.tcp_end, r0.tcp_end, "server's end after blind SYNs") &&
	     ASSERT_EQ(r.tcp_win, r0.tcp_win, "server's window after blind SYNs") &&
	     ASSERT_EQ(o.tcp_win, o0.tcp_win, "LAN host's window after blind SYNs");
	ok = ok && server_sends("blind RST after the SYN", TCP_RST,
				BLIND_SEQ + 1, XDP_DROP, XNAT_DROP_TCP_WINDOW);
	ok = ok && server_sends("blind SYN+RST", TCP_SYN | TCP_RST,
				BLIND_SEQ, XDP_DROP, XNAT_DROP_TCP_WINDOW);
	ok = ok && tcp_state_is(40620, FLOW_TCP_ESTABLISHED,
				"after blind SYN, SYN-ACK, RST: established");
	return ok;
}
FIXTURE_TEST("blind_syn_teaches_nothing", true, .fn = test_blind_syn_teaches_nothing);

/* After a blind SYN the server's own data and FIN, at its real sequence
 * numbers, still go through (before, the FIN was out of window). */
static bool test_real_fin_after_blind_syn(void)
{
	bool ok = tcp_handshake(40621);

	ok = ok && server_sends("blind SYN", TCP_SYN, BLIND_SEQ,
				XDP_REDIRECT, XNAT_FWD_FAST);
	ok = ok && server_sends("server's data", TCP_ACK, 5001, XDP_REDIRECT,
				XNAT_FWD_FAST);
	ok = ok && server_sends("server's FIN", TCP_FIN | TCP_ACK,
				5001 + PKT_DEFAULT_PAYLOAD_LEN, XDP_REDIRECT,
				XNAT_FWD_FAST);
	return ok && tcp_state_is(40621, FLOW_TCP_CLOSING, "server's FIN applied");
}
FIXTURE_TEST("real_fin_after_blind_syn", true, .fn = test_real_fin_after_blind_syn);

/*
 * Blind data segments far ahead (2^30 apart, eight cover the sequence
 * space) are forwarded, for the LAN host to drop, but do not move the
 * server's tracked end: they are beyond TCP_END_STEP_MAX and outside the
 * LAN host's window. Before, the last one's end became the server's end,
 * which the attacker knew, and its RST there closed the flow.
 */
static bool test_blind_data_no_walk(void)
{
	uint32_t base = 0x12345678u, last = 0;
	bool ok = tcp_handshake(40622);

	for (int k = 0; k < 8 && ok; k++) {
		uint32_t seq = base + (uint32_t)k * 0x40000000u;

		last = seq + PKT_DEFAULT_PAYLOAD_LEN;
		ok = server_sends("blind data segment", TCP_ACK, seq,
				  XDP_REDIRECT, XNAT_FWD_FAST);
	}
	ok = ok && server_end_is(40622, SERVER_END, "server's end after blind data");
	ok = ok && server_sends("blind RST at the last one's end", TCP_RST,
				last, XDP_DROP, XNAT_DROP_TCP_WINDOW);
	ok = ok && server_sends("blind FIN there", TCP_FIN | TCP_ACK, last,
				XDP_DROP, XNAT_DROP_TCP_WINDOW);
	return ok && tcp_state_is(40622, FLOW_TCP_ESTABLISHED,
				  "after blind data and RST: established");
}
FIXTURE_TEST("blind_data_no_walk", true, .fn = test_blind_data_no_walk);

/* The LAN host's entry as if its SYN and the server's had both carried
 * window scale 7 (RFC 7323): its 64240-byte windows are 8 MB. (pkt.h
 * builds no TCP options; the handshake's tracking is tcp_window's.) */
static bool lan_wscale7(uint16_t sport)
{
	struct flow_key k = flow_key4(LAN_HOST, sport, WAN_GW, 443,
				      IPPROTO_TCP, if_lan);
	struct flow_value o;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &k, &o), "orig entry"))
		return false;
	o.tcp_win = (7 << TCP_WIN_SHIFT_BITS) | (o.tcp_win & TCP_WIN_UNITS_MAX);
	return ASSERT_OK(bpf_map_update_elem(flows_fd, &k, &o, BPF_EXIST),
			 "scale the LAN host's window");
}

/*
 * A real bulk transfer that lost 200 kB upstream of the router: the next
 * segment is far ahead of the tracked end (beyond TCP_END_STEP_MAX) but
 * inside the LAN host's window (8 MB), so it still moves the end; the
 * server's FIN and then its RST at the new end are applied.
 */
static bool test_loss_ahead_in_window(void)
{
	uint32_t far = SERVER_END + 200000;
	uint32_t end = far + PKT_DEFAULT_PAYLOAD_LEN;
	bool ok = tcp_handshake(40623) && lan_wscale7(40623);

	ok = ok && server_sends("data", TCP_ACK, 5001, XDP_REDIRECT,
				XNAT_FWD_FAST);
	ok = ok && server_sends("data after 200 kB lost", TCP_ACK, far,
				XDP_REDIRECT, XNAT_FWD_FAST);
	ok = ok && server_end_is(40623, end, "end moved within the window");
	ok = ok && server_sends("server's FIN", TCP_FIN | TCP_ACK, end,
				XDP_REDIRECT, XNAT_FWD_FAST);
	ok = ok && tcp_state_is(40623, FLOW_TCP_CLOSING, "FIN applied");
	ok = ok && server_sends("server's RST", TCP_RST, end + 1, XDP_REDIRECT,
				XNAT_FWD_FAST);
	return ok && tcp_state_is(40623, FLOW_TCP_CLOSED, "RST applied");
}
FIXTURE_TEST("loss_ahead_in_window", true, .fn = test_loss_ahead_in_window);

/*
 * The same loss with the LAN host's unscaled 64240-byte window: the
 * segment 100 kB ahead is forwarded but does not move the end (beyond
 * that window). The retransmission of what was lost, in steps of at most
 * TCP_END_STEP_MAX, catches up with it, and the FIN after it is applied.
 */
static bool test_loss_ahead_beyond_window(void)
{
	uint32_t far = SERVER_END + 100000, mid = SERVER_END + 50000;
	uint32_t end = far + PKT_DEFAULT_PAYLOAD_LEN;
	bool ok = tcp_handshake(40624);

	ok = ok && server_sends("data 100 kB ahead", TCP_ACK, far,
				XDP_REDIRECT, XNAT_FWD_FAST);
	ok = ok && server_end_is(40624, SERVER_END, "not moved beyond the window");
	ok = ok && server_sends("retransmission, 50 kB ahead", TCP_ACK, mid,
				XDP_REDIRECT, XNAT_FWD_FAST);
	ok = ok && server_end_is(40624, mid + PKT_DEFAULT_PAYLOAD_LEN,
				 "moved by a step");
	ok = ok && server_sends("data 100 kB ahead, again", TCP_ACK, far,
				XDP_REDIRECT, XNAT_FWD_FAST);
	ok = ok && server_end_is(40624, end, "caught up");
	ok = ok && server_sends("server's FIN", TCP_FIN | TCP_ACK, end,
				XDP_REDIRECT, XNAT_FWD_FAST);
	return ok && tcp_state_is(40624, FLOW_TCP_CLOSING, "FIN applied");
}
FIXTURE_TEST("loss_ahead_beyond_window", true, .fn = test_loss_ahead_beyond_window);

/* ---- TCP behind IPv6 extension headers ----------------------------------- */

/* The IPv6 connection from the LAN host's SPORT to the WAN gateway's 443:
 * its state, and (TRACKED) that both entries track their sender. */
static bool tcp6_state_is(uint16_t sport, __u8 want, bool tracked,
			  const char *what)
{
	struct flow_key k = { .sport = htons(sport), .dport = htons(443),
			      .proto = IPPROTO_TCP, .family = XNAT_AF_INET6,
			      .ifindex = if_lan };
	struct flow_value o, r;
	struct flow_key rk;

	inet_pton(AF_INET6, LAN6_HOST, k.saddr.v6);
	inet_pton(AF_INET6, WAN6_GW, k.daddr.v6);
	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &k, &o), "orig entry"))
		return false;
	flow_reply_key(&k, &o, &rk);
	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &rk, &r), "reply entry"))
		return false;
	if (tracked &&
	    !ASSERT_TRUE(o.tcp_flags_seen & r.tcp_flags_seen & TCP_TRACK_SEEN,
			 "both senders' sequences tracked"))
		return false;
	return ASSERT_EQ(flow_tcp_state(&o, &r), want, what);
}

/* A segment of that connection: from the LAN host (OUT) or to it. */
struct seg6 {
	const char *name;
	bool out;
	uint8_t flags;
	uint32_t seq, ack;
	bool plain;  /* without the extension header */
	int verdict, reason;
};

/*
 * Send S of the connection from SPORT with the 8-byte extension header NH
 * (destination options, or an atomic fragment header) in front of its TCP
 * header; when forwarded, the frame must be the one built here: the same
 * headers, the MACs of the next hop, the hop limit one less.
 */
static bool seg6_run(const struct seg6 *s, uint16_t sport, uint8_t nh)
{
	struct pkt_spec in = TCP_PKT(LAN6_HOST, WAN6_GW, sport, 443, FROM_LAN,
				     .tcp_flags = s->flags, .seq = s->seq,
				     .ack_seq = s->ack, .ttl = 64);
	struct pkt_spec out = TCP_PKT(LAN6_HOST, WAN6_GW, sport, 443, TO_WAN,
				      .tcp_flags = s->flags, .seq = s->seq,
				      .ack_seq = s->ack, .ttl = 63);
	uint8_t frame[PKT_MAX], want[PKT_MAX], got[PKT_MAX], ext[8];
	uint32_t got_len = 0;
	size_t len, want_len;

	if (!s->out) {
		in = (struct pkt_spec)TCP_PKT(WAN6_GW, LAN6_HOST, 443, sport,
					      FROM_WAN, .tcp_flags = s->flags,
					      .seq = s->seq, .ack_seq = s->ack,
					      .ttl = 64);
		out = (struct pkt_spec)TCP_PKT(WAN6_GW, LAN6_HOST, 443, sport,
					       TO_LAN, .tcp_flags = s->flags,
					       .seq = s->seq, .ack_seq = s->ack,
					       .ttl = 63);
	}
	if (nh == PKT_NH_DEST)
		pkt_ext_destopts(ext, IPPROTO_TCP);
	else
		pkt_ext_frag(ext, IPPROTO_TCP, 0, false, htonl(sport));
	len = pkt_build(frame, &in);
	want_len = pkt_build(want, &out);
	if (!s->plain) {
		len = pkt_v6_ext_insert(frame, len, nh, ext, sizeof(ext));
		want_len = pkt_v6_ext_insert(want, want_len, nh, ext,
					     sizeof(ext));
	}
	if (!run_expect(s->name, s->out ? if_lan : if_wan, frame, len, 0,
			s->verdict, s->reason, got, &got_len))
		return false;
	if (s->verdict != XDP_REDIRECT)
		return true;
	return check_forwarded(frame, len, got, got_len) &
	       expect_bytes(got, got_len, want, want_len, s->name);
}

/*
 * The same TCP with extension headers (RFC 8200 4) as without. A forged
 * RST or FIN far outside the window is dropped as drop_tcp_window and
 * changes nothing, as the same RST without the header; an RST in window
 * is forwarded, its header untouched, and closes the connection. With
 * EXT_HANDSHAKE the handshake carries the header NH too: its SYN must
 * start tracking as a plain one does, or no segment is ever judged.
 */
static bool tcp6_window_ext(uint16_t sport, uint8_t nh, bool ext_handshake)
{
	static const struct seg6 handshake[] = {
		{ "SYN", true, TCP_SYN, 1000, 0, false, FWD(SLOW) },
		{ "SYN-ACK", false, TCP_SYN | TCP_ACK, 5000, 1001, false,
		  FWD(FAST) },
		{ "ACK", true, TCP_ACK, 1001, 5001, false, FWD(FAST) },
	}, forged[] = {
		{ "forged RST far off, without the header", false, TCP_RST,
		  5001 + 0x40000000, 0, true, DROP(TCP_WINDOW) },
		{ "forged RST far off", false, TCP_RST, 5001 + 0x40000000, 0,
		  false, DROP(TCP_WINDOW) },
		{ "forged FIN far off", false, TCP_FIN | TCP_ACK,
		  5001 - 0x20000000, 1001, false, DROP(TCP_WINDOW) },
	}, rst_ok = { "RST in window", false, TCP_RST, 5001, 0, false,
		      FWD(FAST) };
	bool ok = true, tracked;

	for (size_t i = 0; i < ARRAY_SIZE(handshake) && ok; i++) {
		struct seg6 seg = handshake[i];

		seg.plain = !ext_handshake;
		ok = seg6_run(&seg, sport, nh);
	}
	/* Reported, and the forged segments still sent: what an untracked
	 * flow lets through is the point. */
	tracked = ok && tcp6_state_is(sport, FLOW_TCP_ESTABLISHED, true,
				      "after the handshake: established");
	for (size_t i = 0; i < ARRAY_SIZE(forged) && ok; i++)
		ok = seg6_run(&forged[i], sport, nh);
	ok = ok && tcp6_state_is(sport, FLOW_TCP_ESTABLISHED, false,
				 "after forged RST/FIN: still established");
	ok = ok && seg6_run(&rst_ok, sport, nh);
	ok = ok && tcp6_state_is(sport, FLOW_TCP_CLOSED, false,
				 "RST in window closes");
	return ok && tracked;
}

static bool test_rst6_destopts(void)
{
	return tcp6_window_ext(40607, PKT_NH_DEST, false);
}
FIXTURE_TEST("rst6_behind_destopts", true, .fn = test_rst6_destopts);

static bool test_rst6_atomic_frag(void)
{
	return tcp6_window_ext(40608, PKT_NH_FRAGMENT, false);
}
FIXTURE_TEST("rst6_in_atomic_fragment", true, .fn = test_rst6_atomic_frag);

static bool test_tcp6_destopts(void)
{
	return tcp6_window_ext(40609, PKT_NH_DEST, true);
}
FIXTURE_TEST("tcp6_behind_destopts", true, .fn = test_tcp6_destopts);

static bool test_tcp6_atomic_frag(void)
{
	return tcp6_window_ext(40610, PKT_NH_FRAGMENT, true);
}
FIXTURE_TEST("tcp6_in_atomic_fragments", true, .fn = test_tcp6_atomic_frag);

FIXTURE_MAIN_REGISTERED()
