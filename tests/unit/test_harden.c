// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of what keeps XDP's own flows away from a kernel that cannot
 * handle them, and hostile packets away from the flows: ICMP errors built
 * in XDP (bpf/icmp_gen.h), TCP window tracking (bpf/tcp_track.h), also
 * behind IPv6 extension headers, the ICMP version check, the source checks
 * on the WAN and LAN ports, and a port forward in the kernel NAT's port
 * range (fragments: test_frag.c). Every generated error is checked byte by
 * byte against checksums from csum_oracle.h. Fixtures and runner:
 * fixture.h.
 */
#include "fixture.h"

static bool ifaddrs_set(void)
{
	int fd = bpf_map__fd(skel->maps.xnat_ifaddrs);
	struct iface_addrs lan = {}, wan = {};
	__u32 k;

	inet_pton(AF_INET, LAN_ROUTER, &lan.v4);
	inet_pton(AF_INET6, "2001:2:0:1::1", lan.v6);
	inet_pton(AF_INET, NAT_ADDR, &wan.v4);
	inet_pton(AF_INET6, "2001:2:0:2::1", wan.v6);
	k = if_lan;
	if (!ASSERT_OK(bpf_map_update_elem(fd, &k, &lan, BPF_ANY), "ifaddrs lan"))
		return false;
	k = if_wan;
	return ASSERT_OK(bpf_map_update_elem(fd, &k, &wan, BPF_ANY), "ifaddrs wan");
}

/*
 * What ICMP errors of both families share: OUT goes back to IN's source
 * MAC and is HDRS bytes of IP and ICMP header followed by the quote of
 * IN's IP packet (IP_LEN bytes), cut as Linux cuts it (548 bytes at most).
 * The quote's length, or 0 when OUT's length is not that; *OK false when
 * a check fails.
 */
static size_t check_icmp_frame(const uint8_t *in, const uint8_t *out,
			       size_t out_len, size_t hdrs, size_t ip_len,
			       bool *ok)
{
	size_t qlen = ip_len > 548 ? 548 : ip_len;

	if (!ASSERT_EQ(out_len, ETH_HLEN + hdrs + qlen, "icmp frame length")) {
		*ok = false;
		return 0;
	}
	*ok &= ASSERT_OK(memcmp(out, in + ETH_ALEN, ETH_ALEN),
			 "dst mac = sender");
	return qlen;
}

/*
 * Check OUT is an ICMPv4 error TYPE/CODE (MTU for frag needed) from SRC to
 * the sender of IN, back to IN's source MAC, quoting the start of IN's IP
 * packet; every checksum recomputed here from scratch.
 */
static bool check_icmp4(const uint8_t *in, size_t in_len, const uint8_t *out,
			size_t out_len, const char *src, uint8_t type,
			uint8_t code, uint16_t mtu)
{
	const struct pkt_v4_udp *i = (const void *)in;
	const uint8_t *ip = out + ETH_HLEN, *ic = ip + 20;
	size_t qlen, icmp_len;
	struct in_addr want_src;
	bool ok = true;

	qlen = check_icmp_frame(in, out, out_len, 28, ntohs(i->ip.tot_len),
				&ok);
	if (!qlen)
		return false;
	ok &= ASSERT_OK(memcmp(out + ETH_ALEN, i->eth.h_dest, ETH_ALEN), "src mac = ours");
	inet_pton(AF_INET, src, &want_src);
	ok &= ASSERT_EQ(ip[0], 0x45, "ip version/ihl");
	ok &= ASSERT_EQ(ip[9], IPPROTO_ICMP, "ip proto");
	ok &= ASSERT_OK(memcmp(ip + 12, &want_src, 4), "ip src = router port");
	ok &= ASSERT_OK(memcmp(ip + 16, &i->ip.saddr, 4), "ip dst = sender");
	ok &= ASSERT_EQ((ip[2] << 8) | ip[3], 28 + qlen, "ip tot_len");
	ok &= ASSERT_EQ(csum_get16(ip + 10), csum_oracle_ipv4_hdr(ip),
			"ip header checksum");
	ok &= ASSERT_EQ(ic[0], type, "icmp type");
	ok &= ASSERT_EQ(ic[1], code, "icmp code");
	ok &= ASSERT_EQ((ic[6] << 8) | ic[7], mtu, "icmp next-hop mtu");
	icmp_len = 8 + qlen;
	ok &= ASSERT_EQ(csum_oracle_finish(csum_oracle_add(0, ic, icmp_len, -1)),
			0, "icmp checksum");
	ok &= ASSERT_OK(memcmp(ic + 8, in + ETH_HLEN, qlen), "quote = packet as sent");
	return ok;
}

/* The same for ICMPv6 (type 2 packet too big, 3 time exceeded). */
static bool check_icmp6(const uint8_t *in, const uint8_t *out, size_t out_len,
			const char *src, uint8_t type, uint32_t mtu)
{
	const struct pkt_v6_udp *i = (const void *)in;
	const uint8_t *ip = out + ETH_HLEN, *ic = ip + 40;
	size_t qlen;
	struct in6_addr want_src;
	uint32_t got_mtu;
	uint64_t acc;
	bool ok = true;

	qlen = check_icmp_frame(in, out, out_len, 48,
				40 + ntohs(i->ip6.payload_len), &ok);
	if (!qlen)
		return false;
	inet_pton(AF_INET6, src, &want_src);
	ok &= ASSERT_EQ(ip[0] >> 4, 6, "ip version");
	ok &= ASSERT_EQ(ip[6], IPPROTO_ICMPV6, "next header");
	ok &= ASSERT_OK(memcmp(ip + 8, &want_src, 16), "src = router port");
	ok &= ASSERT_OK(memcmp(ip + 24, &i->ip6.saddr, 16), "dst = sender");
	ok &= ASSERT_EQ(ic[0], type, "icmp6 type");
	memcpy(&got_mtu, ic + 4, 4);
	ok &= ASSERT_EQ(ntohl(got_mtu), mtu, "icmp6 mtu");
	acc = csum_oracle_pseudo(ip + 8, ip + 24, 16, IPPROTO_ICMPV6,
				 8 + qlen);
	acc = csum_oracle_add(acc, ic, 8 + qlen, -1);
	ok &= ASSERT_EQ(csum_oracle_finish(acc), 0, "icmp6 checksum");
	ok &= ASSERT_OK(memcmp(ic + 8, in + ETH_HLEN, qlen), "quote = packet as sent");
	return ok;
}

/* One packet built from a spec and run, and what came out. */
struct shot {
	uint8_t frame[PKT_MAX], got[PKT_MAX];
	size_t len;
	uint32_t got_len;
};

/* Build SPEC into S, run it on IFINDEX expecting VERDICT and REASON. */
static bool shoot(struct shot *s, const char *step, int ifindex,
		  const struct pkt_spec *spec, int verdict, int reason)
{
	s->got_len = 0;
	s->len = pkt_build(s->frame, spec);
	return run_expect(step, ifindex, s->frame, s->len, 0, verdict, reason,
			  s->got, &s->got_len);
}

/*
 * RFC 1191 / RFC 4443 3.2 from XDP: a DF packet of a known flow too big for
 * the egress port (wan0, MTU 1500) gets "fragmentation needed" with MTU
 * 1500 from the LAN port's address, sent back out of the LAN port.
 */
static bool test_frag_needed(void)
{
	struct fixture open = { .name = "open", UDP_OUT(40600, 53),
				.verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW };
	struct pkt_spec big = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
				.proto = IPPROTO_UDP, .sport = 40600, .dport = 53,
				.payload = big_payload,
				.payload_len = sizeof(big_payload) };
	struct shot s;

	if (!ifaddrs_set() || !run_fixture(&open))
		return false;
	return shoot(&s, "1508-byte DF datagram", if_lan, &big, XDP_TX,
		     XNAT_TX_ICMP_TOO_BIG) &&
	       check_icmp4(s.frame, s.len, s.got, s.got_len, LAN_ROUTER, 3, 4,
			   1500);
}
FIXTURE_TEST("frag_needed", true, .fn = test_frag_needed);

/*
 * TTL 1 on a known flow, both ways: time exceeded from the ingress port's
 * address. From the WAN the packet is for the NAT address, which the
 * kernel would deliver to itself (and answer with a port unreachable).
 */
static bool test_time_exceeded(void)
{
	struct fixture open = { .name = "open", UDP_OUT(40601, 53),
				.verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
				.learn = true };
	struct pkt_spec out1 = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
				 .proto = IPPROTO_UDP, .sport = 40601,
				 .dport = 53, .ttl = 1 };
	struct pkt_spec in1 = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
				.proto = IPPROTO_UDP, .sport = 53,
				.dport = LEARNED, .ttl = 1 };
	struct shot s;
	bool ok;

	if (!ifaddrs_set() || !run_fixture(&open))
		return false;
	ok = shoot(&s, "TTL 1 from the LAN", if_lan, &out1, XDP_TX,
		   XNAT_TX_ICMP_TIME_EXCEEDED) &&
	     check_icmp4(s.frame, s.len, s.got, s.got_len, LAN_ROUTER, 11, 0, 0);
	spec_resolve(&in1);
	ok = ok && shoot(&s, "TTL 1 from the WAN", if_wan, &in1, XDP_TX,
			 XNAT_TX_ICMP_TIME_EXCEEDED) &&
	     check_icmp4(s.frame, s.len, s.got, s.got_len, NAT_ADDR, 11, 0, 0);
	/* Without a flow the kernel's, as before. */
	out1.sport = 40602;
	ok = ok && shoot(&s, "TTL 1, no flow", if_lan, &out1, XDP_PASS,
			 XNAT_PASS_TTL);
	return ok;
}
FIXTURE_TEST("time_exceeded", true, .fn = test_time_exceeded);

/* IPv6: packet too big (routers never fragment) and hop limit 1. */
static bool test_ipv6_errors(void)
{
	struct fixture open = { .name = "open", .ingress = LAN,
		.in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
			.proto = IPPROTO_UDP, .sport = 40603, .dport = 53 },
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW };
	struct pkt_spec big = open.in, hop1 = open.in;
	struct shot s;
	bool ok;

	if (!ifaddrs_set() || !run_fixture(&open))
		return false;
	big.payload = big_payload;
	big.payload_len = sizeof(big_payload);
	ok = shoot(&s, "1528-byte IPv6 datagram", if_lan, &big, XDP_TX,
		   XNAT_TX_ICMP_TOO_BIG) &&
	     check_icmp6(s.frame, s.got, s.got_len, "2001:2:0:1::1", 2, 1500);
	hop1.ttl = 1;
	ok = ok && shoot(&s, "hop limit 1", if_lan, &hop1, XDP_TX,
			 XNAT_TX_ICMP_TIME_EXCEEDED) &&
	     check_icmp6(s.frame, s.got, s.got_len, "2001:2:0:1::1", 3, 0);
	return ok;
}
FIXTURE_TEST("ipv6_errors", true, .fn = test_ipv6_errors);

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

/*
 * A port forward whose external port lies in the kernel NAT's range (the
 * ports outside [nat] ports): the kernel's masquerade may have handed the
 * same port to one of its own connections. A reply of that connection
 * (conntrack knows it) stays the kernel's instead of being DNATed into the
 * forward; a packet of no such connection still opens the forward.
 */
static bool test_forward_in_kernel_range(void)
{
	static const struct fixture reply = { .name = "kernel's reply",
		UDP_REPLY(53, 5353), .verdict = XDP_PASS,
		.reason = XNAT_PASS_KERNEL_FLOW };
	static const struct fixture other = { .name = "forwarded",
		UDP_REPLY(54, 5353), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_SLOW, UDP_REPLY_NAT(54, 53) };
	int fd = bpf_map__fd(skel->maps.xnat_forwards);
	struct fwd_key fk = { .port = htons(5353), .proto = IPPROTO_UDP };
	struct fwd_value fv = { .port = htons(53) };
	bool ok;

	_Static_assert(5353 < PORT_MIN, "5353 must be outside the XDP range");
	inet_pton(AF_INET, LAN_HOST, &fv.addr);
	if (!ASSERT_OK(bpf_map_update_elem(fd, &fk, &fv, BPF_ANY),
		       "forward udp/5353") ||
	    !ASSERT_OK(sh("conntrack -I -p udp -s " LAN_HOST2 " -d " WAN_GW
			  " --sport 40000 --dport 53 -r " WAN_GW " -q " NAT_ADDR
			  " --reply-port-src 53 --reply-port-dst 5353 -t 100"
			  " >/dev/null 2>&1"), "conntrack -I (conntrack-tools)"))
		return false;
	ok = run_fixture(&reply) && run_fixture(&other);
	sh("conntrack -D -p udp --orig-port-src 40000 >/dev/null 2>&1");
	bpf_map_delete_elem(fd, &fk);
	return ok;
}
FIXTURE_TEST("forward_in_kernel_range", true, .fn = test_forward_in_kernel_range);

/*
 * Hosts routed behind a LAN host (a router of its own, as the bench's
 * 198.18.0.0/16 via its LAN host): their sources are routed back out of
 * lan0, where they arrive, and pass the LAN ports' source check (fib.h);
 * NATed (IPv4) or routed (IPv6) as the LAN host's own.
 */
static bool test_lan_routed_source(void)
{
	static const struct fixture steps[] = {
		{ "behind the LAN host", LAN,
		  UDP_PKT("198.18.50.7", WAN_GW, 40000, 53, FROM_LAN, .ttl = 64),
		  FWD(SLOW), .has_out = true,
		  .out = UDP_PKT(NAT_ADDR, WAN_GW, 40000, 53, TO_WAN, .ttl = 63) },
		{ "IPv6 behind the LAN host", LAN,
		  UDP_PKT("2001:2:0:50::7", WAN6_GW, 40000, 53, FROM_LAN, .ttl = 64),
		  FWD(SLOW), .has_out = true,
		  .out = UDP_PKT("2001:2:0:50::7", WAN6_GW, 40000, 53, TO_WAN, .ttl = 63) },
	};
	bool ok;

	if (!ASSERT_OK(sh("ip route add 198.18.50.0/24 via " LAN_HOST " dev lan0 && "
			  "ip -6 route add 2001:2:0:50::/64 via " LAN6_HOST " dev lan0"),
		       "routes behind the LAN host"))
		return false;
	ok = run_fixtures(steps, ARRAY_SIZE(steps));
	sh("ip route del 198.18.50.0/24; ip -6 route del 2001:2:0:50::/64");
	return ok;
}
FIXTURE_TEST("lan_routed_source", true, .fn = test_lan_routed_source);

/* IPv4 protocol 58 is no ICMPv6: an unknown protocol, the kernel's. */
static size_t mut_ip4_proto58(uint8_t *buf, size_t len)
{
	((struct pkt_v4_icmp *)buf)->ip.protocol = 58;
	return pkt_ipv4_refix(buf, len);
}

static const struct fixture fx_small[] = {
	{ "ipv4_proto_58", LAN,
	  { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_ICMP, .icmp_type = 128, .icmp_id = 9 },
	  .mutate = mut_ip4_proto58, PASS(PROTO) },
	/* rp_filter's job: a LAN source arriving on the WAN port does not
	 * open the port forward (tcp/8080 to the LAN host). */
	{ "wan_spoofed_lan_source", WAN,
	  TCP_PKT(LAN_HOST2, NAT_ADDR, 40000, 8080, FROM_WAN, .tcp_flags = TCP_SYN), DROP(SPOOFED) },
	/* And the LAN ports' (RFC 3704 strict): a source the router does
	 * not route back out of lan0 opens no flow there, whether it is the
	 * WAN's (a forged answer of a WAN server, a flow whose reply entry
	 * would catch a LAN host's own traffic), routed nowhere, or IPv6. */
	{ "lan_spoofed_wan_source", LAN,
	  UDP_PKT(WAN_GW, "198.19.0.9", 53, 45000, FROM_LAN2, .ttl = 64), DROP(SPOOFED) },
	{ "lan_unrouted_source", LAN,
	  UDP_PKT("198.18.200.7", WAN_GW, 45000, 53, FROM_LAN, .ttl = 64), DROP(SPOOFED) },
	{ "lan_spoofed_wan6_source", LAN,
	  UDP_PKT("2001:2:0:2::9", WAN6_GW, 45000, 53, FROM_LAN, .ttl = 64), DROP(SPOOFED) },
};
FIXTURE_TEST(.steps = fx_small, .nsteps = ARRAY_SIZE(fx_small), .each = true);

FIXTURE_MAIN_REGISTERED()
