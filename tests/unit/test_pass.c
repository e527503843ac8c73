// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of what the data path hands to the kernel, one test per
 * pass-up reason (fixture), and of what a kernel router never forwards
 * (multicast and broadcast, martian addresses, frames for another MAC, bad
 * IPv4 header checksums). Fixtures and runner: fixture.h.
 */
#include "fixture.h"

/* ---- Handed to the kernel ---------------------------------------------- */


/* IPv6 carrying a Fragment header (44) where UDP was. */
static size_t mut_ip6_nexthdr_frag(uint8_t *buf, size_t len)
{
	((struct pkt_v6_udp *)buf)->ip6.nexthdr = 44;
	return len;
}

static const struct fixture fx_pass[] = {
	{ .name = "pass_arp", .ingress = LAN, .build = pkt_build_arp,
	  .in = { .smac = MAC_LAN_HOST, .dmac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		  .saddr = LAN_HOST, .daddr = LAN_ROUTER },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_NOT_IP },
	{ .name = "pass_vlan", .ingress = LAN, .build = pkt_build_vlan_v4_udp,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_VLAN },
	{ .name = "pass_ip_options", .ingress = LAN,
	  .build = pkt_build_v4_opts_udp,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_IP_OPTIONS },
	/* A later fragment whose first one never passed: the kernel's. */
	{ .name = "pass_fragment_offset", .ingress = LAN,
	  .mutate = mut_frag_offset,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_FRAGMENT },
	{ .name = "pass_ttl_1", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53, .ttl = 1 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_TTL },
	{ .name = "pass_gre", .ingress = LAN, .build = pkt_build_v4_gre,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
	/* Its body (the default payload) is no IPv4 header: nothing the
	 * data path could have sent, so nothing to translate. */
	{ .name = "pass_icmp_dest_unreach", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_DEST_UNREACH,
		  .icmp_code = ICMP_PORT_UNREACH },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
	{ .name = "pass_local_lan_router", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = LAN_ROUTER,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "pass_local_wan_echo_request", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHO, .icmp_id = 99 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "pass_no_neigh", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_NONEIGH,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_NO_NEIGH },
	{ .name = "pass_ipv6_multicast", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = "ff02::1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "pass_ipv6_link_local", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "fe80::10", .daddr = "fe80::1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "pass_ipv6_hop_limit_1", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53, .ttl = 1 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_TTL },
	{ .name = "pass_no_route", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = "198.18.200.5",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_NO_ROUTE },
	{ .name = "pass_mtu_new_flow", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
		  .payload = big_payload, .payload_len = sizeof(big_payload) },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_MTU },
	{ .name = "pass_egress_hairpin", .ingress = LAN,
	  .in = { FROM_LAN2, .saddr = LAN_HOST2, .daddr = LAN_HOST,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_EGRESS },
	{ .name = "pass_ingress_not_xnat_port", .ingress = LO,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_EGRESS },
	{ .name = "pass_egress_not_xnat_port", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = "198.18.100.2",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_EGRESS },
	{ .name = "pass_egress_wan_hairpin", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = "198.19.0.7", .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_EGRESS },
	{ .name = "pass_ipv6_fragment_header", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .mutate = mut_ip6_nexthdr_frag,
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
	{ .name = "pass_ipv6_local_wan_router", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN6_GW, .daddr = "2001:2:0:2::1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "pass_echo_reply_from_lan", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHOREPLY,
		  .icmp_id = 5 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_ECHO_REPLY },
	{ .name = "pass_echo_reply_from_wan_no_flow", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHOREPLY,
		  .icmp_id = 30000 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_WAN_IN },
};

/* ---- What a kernel router never forwards ------------------------------ */

/*
 * A NAT router has a default route out of its WAN port. With one, the FIB
 * finds a unicast route for almost any destination, so everything the
 * kernel's input route (ip_route_input_slow(), ip6_rcv_core()) rejects
 * before any lookup must be caught by the program itself. These tests add
 * the default routes for their duration.
 */
#define MAC_BCAST { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }

/* IPv4 multicast and limited broadcast are for the router (mDNS, SSDP,
 * DHCP DISCOVER), as IPv6 multicast is; never NATed out of the WAN. */
static const struct fixture fx_v4_group_dst[] = {
	{ .name = "mDNS to 224.0.0.251", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST, .dmac = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb },
		  .saddr = LAN_HOST, .daddr = "224.0.0.251",
		  .proto = IPPROTO_UDP, .sport = 5353, .dport = 5353, .ttl = 255 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "SSDP to 239.255.255.250", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST, .dmac = { 0x01, 0x00, 0x5e, 0x7f, 0xff, 0xfa },
		  .saddr = LAN_HOST, .daddr = "239.255.255.250",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 1900, .ttl = 4 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "DHCP DISCOVER 0.0.0.0 to 255.255.255.255", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST, .dmac = MAC_BCAST,
		  .saddr = "0.0.0.0", .daddr = "255.255.255.255",
		  .proto = IPPROTO_UDP, .sport = 68, .dport = 67 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "to 0.0.0.0 (martian destination)", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = "0.0.0.0",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
};

/* Martian sources (RFC 1812 5.3.7; the kernel drops them as such). */
static const struct fixture fx_v4_martian_src[] = {
	{ .name = "from 127.0.0.1", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "127.0.0.1", .daddr = "198.19.99.1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "from 0.0.0.0 to a unicast address", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "0.0.0.0", .daddr = "198.19.99.1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "from multicast 224.0.0.9", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "224.0.0.9", .daddr = "198.19.99.1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "from 255.255.255.255", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "255.255.255.255", .daddr = "198.19.99.1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "from the router's own LAN address", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_ROUTER, .daddr = "198.19.99.1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "WAN SYN to the port forward from 127.0.0.1", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = "127.0.0.1", .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 40000, .dport = 8080,
		  .tcp_flags = TCP_SYN },
	  NOT_FWD },
};

/* IPv6: loopback and multicast sources (RFC 4291 2.5.3, 2.7). */
static const struct fixture fx_v6_martian_src[] = {
	{ .name = "from ::1", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "::1", .daddr = "2001:2:0:99::1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "from multicast ff0e::1", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "ff0e::1", .daddr = "2001:2:0:99::1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
};

/* RFC 1812 5.3.4: a unicast IP packet in a link-layer broadcast, or in a
 * frame for another station's MAC (promiscuous port, switch flooding), is
 * not the router's to forward; the kernel drops both (ip_forward() wants
 * PACKET_HOST). No default route needed. */
static const struct fixture fx_l2_not_for_us[] = {
	{ .name = "unicast IP in a broadcast frame", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST, .dmac = MAC_BCAST,
		  .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "frame for another host's MAC", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST, .dmac = { 0x02, 0, 0, 0, 0x01, 0x99 },
		  .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
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

static bool test_v4_martian_src(void)
{
	return with_default_routes(fx_v4_martian_src,
				   ARRAY_SIZE(fx_v4_martian_src));
}

static bool test_v6_martian_src(void)
{
	return with_default_routes(fx_v6_martian_src,
				   ARRAY_SIZE(fx_v6_martian_src));
}

static bool test_v4_bad_hdr_csum(void)
{
	return run_fixtures_each(fx_v4_bad_hdr_csum,
				 ARRAY_SIZE(fx_v4_bad_hdr_csum));
}

static bool test_l2_not_for_us(void)
{
	return run_fixtures_each(fx_l2_not_for_us, ARRAY_SIZE(fx_l2_not_for_us));
}

static const struct test tests[] = {
	{ .each = true, STEPS(fx_pass) },
	/* What a kernel router never forwards (see the fixtures). */
	{ "ipv4_multicast_broadcast_dst", true, .fn = test_v4_group_dst },
	{ "ipv4_martian_src", true, .fn = test_v4_martian_src },
	{ "ipv6_martian_src", true, .fn = test_v6_martian_src },
	{ "l2_frame_not_for_router", true, .fn = test_l2_not_for_us },
	{ "ipv4_bad_header_checksum", true, .fn = test_v4_bad_hdr_csum },
};

FIXTURE_MAIN(tests)
