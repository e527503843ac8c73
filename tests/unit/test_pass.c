// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of what the data path hands to the kernel, one test per
 * pass-up reason (fixture), and of what a kernel router never forwards
 * (multicast and broadcast, martian addresses, frames for another MAC, bad
 * IPv4 header checksums). Fixtures and runner: fixture.h.
 */
#include "fixture.h"

/* ---- Handed to the kernel ---------------------------------------------- */

#define MAC_BCAST { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }


/* IPv6 carrying a Fragment header (44) where UDP was. */
static size_t mut_ip6_nexthdr_frag(uint8_t *buf, size_t len)
{
	((struct pkt_v6_udp *)buf)->ip6.nexthdr = 44;
	return len;
}

/* UDP 40000 -> 53 (and ICMP of type T) between the case's addresses. */
#define DNS(sa, da, ...) UDP_PKT(sa, da, 40000, 53, __VA_ARGS__)
#define ECHO_TYPE(sa, da, t, ...)                                            \
	{ .saddr = sa, .daddr = da, .proto = IPPROTO_ICMP, .icmp_type = t,    \
	  __VA_ARGS__ }

static const struct fixture fx_pass[] = {
	{ "pass_arp", LAN, { .smac = MAC_LAN_HOST, .dmac = MAC_BCAST, .saddr = LAN_HOST, .daddr = LAN_ROUTER },
	  .build = pkt_build_arp, PASS(NOT_IP) },
	{ "pass_vlan", LAN, DNS(LAN_HOST, WAN_GW, FROM_LAN), .build = pkt_build_vlan_v4_udp, PASS(VLAN) },
	{ "pass_ip_options", LAN, DNS(LAN_HOST, WAN_GW, FROM_LAN), .build = pkt_build_v4_opts, PASS(IP_OPTIONS) },
	/* A later fragment whose first one never passed: the kernel's. */
	{ "pass_fragment_offset", LAN, DNS(LAN_HOST, WAN_GW, FROM_LAN), .mutate = mut_frag_offset, PASS(FRAGMENT) },
	{ "pass_ttl_1", LAN, DNS(LAN_HOST, WAN_GW, FROM_LAN, .ttl = 1), PASS(TTL) },
	{ "pass_gre", LAN, { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW }, .build = pkt_build_v4_gre, PASS(PROTO) },
	/* Its body (the default payload) is no IPv4 header: nothing the
	 * data path could have sent, so nothing to translate. */
	{ "pass_icmp_dest_unreach", WAN,
	  ECHO_TYPE(WAN_GW, NAT_ADDR, ICMP_DEST_UNREACH, FROM_WAN, .icmp_code = ICMP_PORT_UNREACH), PASS(PROTO) },
	{ "pass_local_lan_router", LAN, DNS(LAN_HOST, LAN_ROUTER, FROM_LAN), PASS(LOCAL) },
	{ "pass_local_wan_echo_request", WAN, ECHO_TYPE(WAN_GW, NAT_ADDR, ICMP_ECHO, FROM_WAN, .icmp_id = 99), PASS(LOCAL) },
	{ "pass_no_neigh", LAN, DNS(LAN_HOST, WAN_NONEIGH, FROM_LAN), PASS(NO_NEIGH) },
	{ "pass_ipv6_multicast", LAN, DNS(LAN6_HOST, "ff02::1", FROM_LAN), PASS(LOCAL) },
	{ "pass_ipv6_link_local", LAN, DNS("fe80::10", "fe80::1", FROM_LAN), PASS(LOCAL) },
	{ "pass_ipv6_hop_limit_1", LAN, DNS(LAN6_HOST, WAN6_GW, FROM_LAN, .ttl = 1), PASS(TTL) },
	{ "pass_no_route", LAN, DNS(LAN_HOST, "198.18.200.5", FROM_LAN), PASS(NO_ROUTE) },
	{ "pass_mtu_new_flow", LAN,
	  DNS(LAN_HOST, WAN_GW, FROM_LAN, .payload = big_payload, .payload_len = sizeof(big_payload)), PASS(MTU) },
	{ "pass_egress_hairpin", LAN, DNS(LAN_HOST2, LAN_HOST, FROM_LAN2), PASS(EGRESS) },
	{ "pass_ingress_not_xnat_port", LO, DNS(LAN_HOST, WAN_GW, FROM_LAN), PASS(EGRESS) },
	{ "pass_egress_not_xnat_port", LAN, DNS(LAN_HOST, "198.18.100.2", FROM_LAN), PASS(EGRESS) },
	{ "pass_egress_wan_hairpin", WAN, DNS("198.19.0.7", WAN_GW, FROM_WAN), PASS(EGRESS) },
	/* The UDP header read as a fragment header: a later fragment (offset
	 * 48) of an unknown datagram. */
	{ "pass_ipv6_fragment_header", LAN, DNS(LAN6_HOST, WAN6_GW, FROM_LAN), .mutate = mut_ip6_nexthdr_frag,
	  PASS(FRAGMENT) },
	{ "pass_ipv6_local_wan_router", WAN, DNS(WAN6_GW, "2001:2:0:2::1", FROM_WAN), PASS(LOCAL) },
	{ "pass_echo_reply_from_lan", LAN, ECHO_TYPE(LAN_HOST, WAN_GW, ICMP_ECHOREPLY, FROM_LAN, .icmp_id = 5),
	  PASS(ECHO_REPLY) },
	{ "pass_echo_reply_from_wan_no_flow", WAN,
	  ECHO_TYPE(WAN_GW, NAT_ADDR, ICMP_ECHOREPLY, FROM_WAN, .icmp_id = 30000), PASS(WAN_IN) },
};
FIXTURE_TEST(.each = true, STEPS(fx_pass));

/* ---- A packet of a known flow that XDP does not forward --------------- */

/*
 * IPv4 options on a flow XDP made (flow_hand_up, bpf/handoff.h). The
 * kernel has never seen the flow: a UDP reply goes up once XDP has given
 * conntrack the flow's entry (kernel_adopt_flow), as a segment of a TCP
 * connection's original direction would; a TCP reply cannot be given to
 * it (conntrack would call it invalid, or the router's stack would reset
 * the connection), so it is dropped and counted, and the connection goes
 * on: the same SYN-ACK without options is forwarded.
 */
/* The WAN's SYN-ACK, sent once with options and once without. */
#define SYN_ACK_40200 \
	TCP_PKT(WAN_GW, NAT_ADDR, 443, 40200, FROM_WAN, .tcp_flags = TCP_SYN | TCP_ACK, \
		.seq = 9000, .ack_seq = 1001, .ttl = 50)
static const struct fixture fx_known_flow_options[] = {
	{ "tcp SYN lan->wan", TCP_OUT(40200, TCP_SYN, 1000, 0), FWD(SLOW),
	  TCP_OUT_NAT(40200, TCP_SYN, 1000, 0) },
	{ "tcp SYN-ACK with options", WAN, SYN_ACK_40200,
	  .build = pkt_build_v4_opts, DROP(FLOW_UNHANDLED) },
	{ "tcp SYN-ACK", WAN, SYN_ACK_40200,
	  FWD(FAST), .has_out = true,
	  .out = TCP_PKT(WAN_GW, LAN_HOST, 443, 40200, TO_LAN, .tcp_flags = TCP_SYN | TCP_ACK,
			 .seq = 9000, .ack_seq = 1001, .ttl = 49) },
	{ "udp lan->wan", UDP_NAT(40201, 53, SLOW, 40201) },
	{ "udp reply with options", WAN,
	  UDP_PKT(WAN_GW, NAT_ADDR, 53, 40201, FROM_WAN, .ttl = 57),
	  .build = pkt_build_v4_opts, PASS(IP_OPTIONS) },
};

static bool test_known_flow_options(void)
{
	bool ok;

	sh("conntrack -F >/dev/null 2>&1");
	ok = run_fixtures(fx_known_flow_options, ARRAY_SIZE(fx_known_flow_options));
	/* Adopted: conntrack has the UDP flow, translated as XDP does. */
	ok = ok && ASSERT_OK(sh("conntrack -L -p udp --orig-port-src 40201 "
				"--reply-port-dst 40201 2>/dev/null | grep -q "
				"'dst=" NAT_ADDR "'"), "conntrack adopted the UDP flow");
	sh("conntrack -F >/dev/null 2>&1");
	return ok;
}
FIXTURE_TEST("known_flow_ip_options", true, .fn = test_known_flow_options);

/* ---- What a kernel router never forwards ------------------------------ */

/*
 * A NAT router has a default route out of its WAN port. With one, the FIB
 * finds a unicast route for almost any destination, so everything the
 * kernel's input route (ip_route_input_slow(), ip6_rcv_core()) rejects
 * before any lookup must be caught by the program itself. These tests add
 * the default routes for their duration.
 */
/* IPv4 multicast and limited broadcast are for the router (mDNS, SSDP,
 * DHCP DISCOVER), as IPv6 multicast is; never NATed out of the WAN. */
#define MAC_MCAST(a, b, c) .smac = MAC_LAN_HOST, .dmac = { 0x01, 0x00, 0x5e, a, b, c }
static const struct fixture fx_v4_group_dst[] = {
	{ "mDNS to 224.0.0.251", LAN,
	  UDP_PKT(LAN_HOST, "224.0.0.251", 5353, 5353, MAC_MCAST(0, 0, 0xfb), .ttl = 255), PASS(LOCAL) },
	{ "SSDP to 239.255.255.250", LAN,
	  UDP_PKT(LAN_HOST, "239.255.255.250", 40000, 1900, MAC_MCAST(0x7f, 0xff, 0xfa), .ttl = 4), PASS(LOCAL) },
	{ "DHCP DISCOVER 0.0.0.0 to 255.255.255.255", LAN,
	  UDP_PKT("0.0.0.0", "255.255.255.255", 68, 67, .smac = MAC_LAN_HOST, .dmac = MAC_BCAST), PASS(LOCAL) },
	{ "to 0.0.0.0 (martian destination)", LAN, DNS(LAN_HOST, "0.0.0.0", FROM_LAN), NOT_FWD },
};

/* Martian sources (RFC 1812 5.3.7; the kernel drops them as such). */
static const struct fixture fx_v4_martian_src[] = {
	{ "from 127.0.0.1", LAN, DNS("127.0.0.1", "198.19.99.1", FROM_LAN), NOT_FWD },
	{ "from 0.0.0.0 to a unicast address", LAN, DNS("0.0.0.0", "198.19.99.1", FROM_LAN), NOT_FWD },
	{ "from multicast 224.0.0.9", LAN, DNS("224.0.0.9", "198.19.99.1", FROM_LAN), NOT_FWD },
	{ "from 255.255.255.255", LAN, DNS("255.255.255.255", "198.19.99.1", FROM_LAN), NOT_FWD },
	{ "from the router's own LAN address", LAN, DNS(LAN_ROUTER, "198.19.99.1", FROM_LAN), NOT_FWD },
	{ "WAN SYN to the port forward from 127.0.0.1", WAN,
	  TCP_PKT("127.0.0.1", NAT_ADDR, 40000, 8080, FROM_WAN, .tcp_flags = TCP_SYN), NOT_FWD },
};

/* IPv6: loopback and multicast sources (RFC 4291 2.5.3, 2.7). */
static const struct fixture fx_v6_martian_src[] = {
	{ "from ::1", LAN, DNS("::1", "2001:2:0:99::1", FROM_LAN), NOT_FWD },
	{ "from multicast ff0e::1", LAN, DNS("ff0e::1", "2001:2:0:99::1", FROM_LAN), NOT_FWD },
};

/* RFC 1812 5.3.4: a unicast IP packet in a link-layer broadcast, or in a
 * frame for another station's MAC (promiscuous port, switch flooding), is
 * not the router's to forward; the kernel drops both (ip_forward() wants
 * PACKET_HOST). No default route needed. */
static const struct fixture fx_l2_not_for_us[] = {
	{ "unicast IP in a broadcast frame", LAN,
	  DNS(LAN_HOST, WAN_GW, .smac = MAC_LAN_HOST, .dmac = MAC_BCAST), NOT_FWD },
	{ "frame for another host's MAC", LAN,
	  DNS(LAN_HOST, WAN_GW, .smac = MAC_LAN_HOST, .dmac = { 0x02, 0, 0, 0, 0x01, 0x99 }), NOT_FWD },
};

/* RFC 1812 5.2.2: a router MUST verify the IPv4 header checksum and
 * discard the packet if it is wrong; the kernel does (ip_rcv_core()). */
static size_t mut_ip_csum_bad(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->ip.check ^= htons(0x0101);
	return len;
}

static const struct fixture fx_v4_bad_hdr_csum[] = {
	{ .name = "udp with a wrong IPv4 header checksum", .ingress = LAN,
	  MAL_UDP4, .mutate = mut_ip_csum_bad, NOT_FWD },
};

static bool with_default_routes(const struct fixture *f, size_t n)
{
	bool ok;

	if (sh("ip route add default via " WAN_GW) ||
	    sh("ip -6 route add default via " WAN6_GW))
		ok = ASSERT_TRUE(false, "default routes");
	else
		ok = run_fixtures_each(f, n);
	sh("ip route del default 2>/dev/null; ip -6 route del default 2>/dev/null; true");
	return ok;
}

static bool test_v4_group_dst(void)
{
	return with_default_routes(fx_v4_group_dst, ARRAY_SIZE(fx_v4_group_dst));
}
FIXTURE_TEST("ipv4_multicast_broadcast_dst", true, .fn = test_v4_group_dst);

static bool test_v4_martian_src(void)
{
	return with_default_routes(fx_v4_martian_src,
				   ARRAY_SIZE(fx_v4_martian_src));
}
FIXTURE_TEST("ipv4_martian_src", true, .fn = test_v4_martian_src);

static bool test_v6_martian_src(void)
{
	return with_default_routes(fx_v6_martian_src,
				   ARRAY_SIZE(fx_v6_martian_src));
}
FIXTURE_TEST("ipv6_martian_src", true, .fn = test_v6_martian_src);

static bool test_v4_bad_hdr_csum(void)
{
	return run_fixtures_each(fx_v4_bad_hdr_csum,
				 ARRAY_SIZE(fx_v4_bad_hdr_csum));
}

static bool test_l2_not_for_us(void)
{
	return run_fixtures_each(fx_l2_not_for_us, ARRAY_SIZE(fx_l2_not_for_us));
}
FIXTURE_TEST("l2_frame_not_for_router", true, .fn = test_l2_not_for_us);
FIXTURE_TEST("ipv4_bad_header_checksum", true, .fn = test_v4_bad_hdr_csum);

/*
 * The slow path is a program of its own in a one-slot array (bpf/maps.h),
 * which the loader fills before the fast path attaches. Should the slot
 * be empty anyway, a new flow goes up counted as internal, and the same
 * packet opens its flow once the slot is filled again.
 */
static const struct fixture fx_slow_path_unlinked[] = {
	{ "new flow, slot empty", LAN, DNS(LAN_HOST, WAN_GW, FROM_LAN), PASS(INTERNAL) },
};
static const struct fixture fx_slow_path_linked[] = {
	{ "new flow, slot filled", LAN, DNS(LAN_HOST, WAN_GW, FROM_LAN), FWD(SLOW) },
};

static bool test_slow_path_unlinked(void)
{
	int fd = bpf_map__fd(skel->maps.xnat_slow_path);
	int slow = bpf_program__fd(skel->progs.xdp_xnat_slow);
	__u32 zero = 0;
	bool ok;

	ok = ASSERT_OK(bpf_map_delete_elem(fd, &zero), "empty the slot");
	ok &= run_fixtures_each(fx_slow_path_unlinked,
				ARRAY_SIZE(fx_slow_path_unlinked));
	ok &= ASSERT_OK(bpf_map_update_elem(fd, &zero, &slow, BPF_ANY),
			"fill the slot");
	ok &= run_fixtures_each(fx_slow_path_linked,
				ARRAY_SIZE(fx_slow_path_linked));
	return ok;
}
FIXTURE_TEST("slow_path_unlinked", true, .fn = test_slow_path_unlinked);

FIXTURE_MAIN_REGISTERED()
