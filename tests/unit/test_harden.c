// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of what keeps XDP's own flows away from a kernel that cannot
 * handle them, and hostile packets away from the flows: ICMP errors built
 * in XDP (bpf/icmp_gen.h), the ICMP version check, the source checks on
 * the WAN and LAN ports, and a port forward in the kernel NAT's port range
 * (fragments: test_frag.c; TCP window tracking: test_tcp_track.c). Every
 * generated error is checked byte by byte against checksums from
 * csum_oracle.h. Fixtures and runner: fixture.h.
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
