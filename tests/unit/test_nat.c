// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of NAT in the data path (bpf/xnat.bpf.c, slowpath.h, nat.h):
 * UDP and TCP SNAT on the slow path, the fast path and replies, ICMP echo
 * ids, unsolicited WAN traffic and the kernel's ports, port forwards,
 * hairpinning, port range edges and collisions, NAT mappings and filtering
 * (RFC 4787), a full flow table and port range, no NAT address, and a flow
 * the kernel's conntrack owns. Fixtures and runner: fixture.h.
 */
#include <net/if.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include "fixture.h"

/* ---- UDP SNAT, slow path, fast path, reply ----------------------------- */


static const struct fixture fx_udp_slow[] = {
	{ "udp lan->wan, new flow", UDP_NAT(40000, 53, SLOW, 40000) },
};
FIXTURE_TEST("udp_snat_slow", true, STEPS(fx_udp_slow));

static const struct fixture fx_udp_fast[] = {
	{ "udp lan->wan, same flow", UDP_NAT(40000, 53, FAST, 40000) },
};
FIXTURE_TEST("udp_snat_fast", false, STEPS(fx_udp_fast));

static const struct fixture fx_udp_reply[] = {
	{ "udp wan->lan reply", UDP_UNNAT(53, 40000, FAST, 40000) },
};
FIXTURE_TEST("udp_snat_reply", false, STEPS(fx_udp_reply));

/* ---- Inside port outside the range ------------------------------------- */

static const struct fixture fx_udp_port_map[] = {
	{ "udp from port 1234", UDP_NAT(1234, 53, SLOW, LEARNED), .learn = true },
	{ "udp from port 1234 again", UDP_NAT(1234, 53, FAST, LEARNED) },
	{ "reply to the mapped port", UDP_UNNAT(53, LEARNED, FAST, 1234) },
};
FIXTURE_TEST("udp_port_outside_range", true, STEPS(fx_udp_port_map));

/* ---- TCP --------------------------------------------------------------- */


static bool check_tcp_fin_seen(const uint8_t *out, size_t len)
{
	struct flow_key ok = flow_key4(LAN_HOST, 40100, WAN_GW, 443,
				       IPPROTO_TCP, if_lan);
	struct flow_key rk = flow_key4(WAN_GW, 443, NAT_ADDR, 40100,
				       IPPROTO_TCP, if_wan);
	struct flow_value ov, rv;
	bool res = true;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &ok, &ov), "orig entry") ||
	    !ASSERT_OK(bpf_map_lookup_elem(flows_fd, &rk, &rv), "reply entry"))
		return false;
	res &= ASSERT_TRUE(ov.tcp_flags_seen & XNAT_TCP_FIN, "orig saw FIN");
	res &= ASSERT_TRUE(ov.tcp_flags_seen & XNAT_TCP_SYN, "orig saw SYN");
	res &= ASSERT_TRUE(!(rv.tcp_flags_seen & XNAT_TCP_FIN),
			   "reply saw no FIN");
	res &= ASSERT_EQ(ov.dir, FLOW_DIR_ORIG, "orig dir");
	res &= ASSERT_EQ(rv.dir, FLOW_DIR_REPLY, "reply dir");
	res &= ASSERT_EQ(ov.nat, FLOW_NAT_SNAT, "orig nat");
	res &= ASSERT_EQ(ov.packets, 3, "orig packets (SYN, ACK, FIN)");
	res &= ASSERT_EQ(rv.packets, 1, "reply packets (SYN-ACK)");
	res &= ASSERT_EQ(flow_tcp_state(&ov, &rv), FLOW_TCP_CLOSING,
			 "connection state CLOSING");
	return res;
}

static const char tcp_data[] = "GET / HTTP/1.0\r\n\r\n";

static const struct fixture fx_tcp[] = {
	{ "tcp SYN lan->wan", TCP_OUT(40100, TCP_SYN, 1000, 0), FWD(SLOW),
	  TCP_OUT_NAT(40100, TCP_SYN, 1000, 0) },
	{ "tcp ACK without flow", TCP_OUT(40101, TCP_ACK, 5000, 77), PASS(TCP_MIDSTREAM) },
	{ "tcp SYN-ACK from lan without flow", TCP_OUT(40102, TCP_SYN | TCP_ACK, 5000, 77),
	  PASS(TCP_MIDSTREAM) },
	{ "tcp SYN+RST from lan without flow", TCP_OUT(40103, TCP_SYN | TCP_RST, 5000, 0),
	  PASS(TCP_MIDSTREAM) },
	{ "tcp SYN-ACK wan->lan", WAN,
	  TCP_PKT(WAN_GW, NAT_ADDR, 443, 40100, FROM_WAN, .tcp_flags = TCP_SYN | TCP_ACK, .seq = 9000,
		  .ack_seq = 1001, .ttl = 50),
	  FWD(FAST), .has_out = true,
	  .out = TCP_PKT(WAN_GW, LAN_HOST, 443, 40100, TO_LAN, .tcp_flags = TCP_SYN | TCP_ACK,
			 .seq = 9000, .ack_seq = 1001, .ttl = 49) },
	{ "tcp ACK with data on the flow", LAN,
	  TCP_PKT(LAN_HOST, WAN_GW, 40100, 443, FROM_LAN, .tcp_flags = TCP_ACK | TCP_PSH, .seq = 1001,
		  .ack_seq = 9001, .ttl = 64, .payload = tcp_data, .payload_len = sizeof(tcp_data) - 1),
	  FWD(FAST), .has_out = true,
	  .out = TCP_PKT(NAT_ADDR, WAN_GW, 40100, 443, TO_WAN, .tcp_flags = TCP_ACK | TCP_PSH,
			 .seq = 1001, .ack_seq = 9001, .ttl = 63, .payload = tcp_data,
			 .payload_len = sizeof(tcp_data) - 1) },
	{ "tcp FIN on the flow", TCP_OUT(40100, TCP_FIN | TCP_ACK, 1019, 9001), FWD(FAST),
	  TCP_OUT_NAT(40100, TCP_FIN | TCP_ACK, 1019, 9001), .check = check_tcp_fin_seen },
};
FIXTURE_TEST("tcp_snat_flags", true, STEPS(fx_tcp));

/* ---- ICMP echo --------------------------------------------------------- */

/* An echo reply of ID, SEQ, TTL between the given addresses. */
#define ECHO_REPLY_PKT(sa, da, id, sq, t, ...)                               \
	{ .saddr = sa, .daddr = da, .proto = IPPROTO_ICMP,                    \
	  .icmp_type = ICMP_ECHOREPLY, .icmp_id = id, .icmp_seq = sq,         \
	  .ttl = t, __VA_ARGS__ }

static const struct fixture fx_icmp[] = {
	{ "echo request lan->wan id 7", ECHO_OUT(7, 1), FWD(SLOW), .learn = true, ECHO_OUT_NAT(1) },
	{ "echo reply wan->lan", WAN, ECHO_REPLY_PKT(WAN_GW, NAT_ADDR, LEARNED, 1, 64, FROM_WAN),
	  FWD(FAST), .has_out = true, .out = ECHO_REPLY_PKT(WAN_GW, LAN_HOST, 7, 1, 63, TO_LAN) },
	{ "second echo request", ECHO_OUT(7, 2), FWD(FAST), ECHO_OUT_NAT(2) },
};
FIXTURE_TEST("icmp_echo_id", true, STEPS(fx_icmp));

/* Echo id 0 keys a request and a reply alike: an echo reply with id 0
 * from the LAN host is not the flow its request with id 0 opened (the
 * fuzzer's finding: it was forwarded with that flow's checksum delta, its
 * id unchanged, its checksum broken); it goes up as any reply without a
 * flow. */
static const struct fixture fx_icmp_id0[] = {
	{ "echo request id 0", ECHO_OUT(0, 1), FWD(SLOW), .learn = true, ECHO_OUT_NAT(1) },
	{ "echo reply id 0 from the lan", LAN, ECHO_REPLY_PKT(LAN_HOST, WAN_GW, 0, 1, 64, FROM_LAN),
	  PASS(ECHO_REPLY) },
	{ "second echo request id 0", ECHO_OUT(0, 2), FWD(FAST), ECHO_OUT_NAT(2) },
};
FIXTURE_TEST("icmp_echo_id_0", true, STEPS(fx_icmp_id0));

/* ---- Unsolicited and kernel ports from the WAN ------------------------- */

static const struct fixture fx_unsolicited[] = {
	{ "wan udp to nat addr port 30000, no flow", UDP_WAN_IN(53, 30000), DROP(UNSOLICITED) },
	{ "wan udp straight to the lan host", WAN,
	  UDP_PKT(WAN_GW, LAN_HOST, 53, 40000, FROM_WAN), DROP(UNSOLICITED) },
	{ "wan ipv6 udp to the lan host, no flow", WAN,
	  UDP_PKT(WAN6_GW, LAN6_HOST, 53, 40000, FROM_WAN), DROP(UNSOLICITED) },
	{ "wan tcp SYN to nat addr port 30000", WAN,
	  TCP_PKT(WAN_GW, NAT_ADDR, 4444, 30000, FROM_WAN, .tcp_flags = TCP_SYN), DROP(UNSOLICITED) },
};
FIXTURE_TEST("wan_unsolicited", true, STEPS(fx_unsolicited));

static const struct fixture fx_wan_in[] = {
	{ "wan udp to nat addr port 5000", UDP_WAN_IN(53, 5000), PASS(WAN_IN) },
};
FIXTURE_TEST("wan_kernel_port", true, STEPS(fx_wan_in));

/* ---- Port forward ------------------------------------------------------ */

static const struct fixture fx_forward[] = {
	{ .name = "wan SYN to 8080", FWD_SYN },
	{ "lan server SYN-ACK", LAN,
	  TCP_PKT(LAN_HOST, WAN_GW, 80, 33333, FROM_LAN, .tcp_flags = TCP_SYN | TCP_ACK, .seq = 700,
		  .ack_seq = 43, .ttl = 64, .ip_id = 8),
	  FWD(FAST), .has_out = true,
	  .out = TCP_PKT(NAT_ADDR, WAN_GW, 8080, 33333, TO_WAN, .tcp_flags = TCP_SYN | TCP_ACK,
			 .seq = 700, .ack_seq = 43, .ttl = 63, .ip_id = 8) },
	{ "wan ACK on the forward", WAN,
	  TCP_PKT(WAN_GW, NAT_ADDR, 33333, 8080, FROM_WAN, .tcp_flags = TCP_ACK, .seq = 43,
		  .ack_seq = 701, .ttl = 60),
	  FWD(FAST), .has_out = true,
	  .out = TCP_PKT(WAN_GW, LAN_HOST, 33333, 80, TO_LAN, .tcp_flags = TCP_ACK, .seq = 43,
			 .ack_seq = 701, .ttl = 59) },
	{ "wan ACK to 8080 without flow", WAN,
	  TCP_PKT(WAN_GW, NAT_ADDR, 33334, 8080, FROM_WAN, .tcp_flags = TCP_ACK), PASS(TCP_MIDSTREAM) },
	{ "wan udp to 8080 (forward is tcp only)", UDP_WAN_IN(33333, 8080), PASS(WAN_IN) },
};
FIXTURE_TEST("port_forward", true, STEPS(fx_forward));


/*
 * Hairpin: a LAN host reaches the port forward on the WAN address. The
 * server must see the NAT address as the source (so its reply comes back
 * through the router), and the client the NAT address and forwarded port.
 */
static const struct fixture fx_hairpin[] = {
	{ "host 2 SYN to nat addr:8080", LAN,
	  TCP_PKT(LAN_HOST2, NAT_ADDR, 5555, 8080, FROM_LAN2, .tcp_flags = TCP_SYN, .seq = 1, .ttl = 64),
	  FWD(SLOW), .learn = true, .has_out = true,
	  .out = TCP_PKT(NAT_ADDR, LAN_HOST, LEARNED, 80, TO_LAN, .tcp_flags = TCP_SYN, .seq = 1,
			 .ttl = 63) },
	{ "server SYN-ACK to nat addr", LAN,
	  TCP_PKT(LAN_HOST, NAT_ADDR, 80, LEARNED, FROM_LAN, .tcp_flags = TCP_SYN | TCP_ACK, .seq = 500,
		  .ack_seq = 2, .ttl = 64),
	  FWD(FAST), .has_out = true,
	  .out = TCP_PKT(NAT_ADDR, LAN_HOST2, 8080, 5555, TO_LAN2, .tcp_flags = TCP_SYN | TCP_ACK,
			 .seq = 500, .ack_seq = 2, .ttl = 63) },
	{ "host 2 ACK", LAN,
	  TCP_PKT(LAN_HOST2, NAT_ADDR, 5555, 8080, FROM_LAN2, .tcp_flags = TCP_ACK, .seq = 2,
		  .ack_seq = 501, .ttl = 64),
	  FWD(FAST), .has_out = true,
	  .out = TCP_PKT(NAT_ADDR, LAN_HOST, LEARNED, 80, TO_LAN, .tcp_flags = TCP_ACK, .seq = 2,
			 .ack_seq = 501, .ttl = 63) },
};

/* ---- Port range edges, port collisions, padding ---------------------- */

static const struct fixture fx_port_bounds[] = {
	/* First, with no mapping at all: the range decides whose port. */
	{ "wan to 19999, no flow: kernel's port", UDP_WAN_IN(99, 19999), PASS(WAN_IN) },
	{ "wan to 20000, no mapping: XDP's port", UDP_WAN_IN(99, 20000), DROP(UNSOLICITED) },
	{ "wan to 65535, no mapping: XDP's port", UDP_WAN_IN(99, 65535), DROP(UNSOLICITED) },
	{ "inside port 20000 (range start) kept", UDP_NAT(20000, 53, SLOW, 20000) },
	{ "inside port 65535 (range end) kept", UDP_NAT(65535, 53, SLOW, 65535) },
	{ "inside port 19999 mapped into the range", UDP_NAT(19999, 53, SLOW, LEARNED), .learn = true },
};
FIXTURE_TEST("port_range_bounds", true, STEPS(fx_port_bounds));

/*
 * Endpoint-independent mapping and address-dependent filtering (RFC 4787
 * REQ-1, REQ-8; nat.h): an inside endpoint keeps its external port towards
 * every destination; from the WAN, an address it has sent to may reach it
 * from any port, another address only with endpoint-independent filtering.
 */
static const struct fixture fx_eim_adf[] = {
	{ "host:40000 to gw:53", UDP_NAT(40000, 53, SLOW, 40000) },
	{ "host:1234 to gw:53 (port mapped)", UDP_NAT(1234, 53, SLOW, LEARNED), .learn = true },
	{ "host:1234 to gw:54 keeps the mapping", UDP_NAT(1234, 54, SLOW, LEARNED) },
	{ "gw:99 to the mapping: address known, let in", UDP_UNNAT(99, 40000, SLOW, 40000) },
	{ "host answers gw:99 on that flow", UDP_NAT(40000, 99, FAST, 40000) },
	{ "198.19.0.7 never contacted: filtered", WAN, UDP_PKT("198.19.0.7", NAT_ADDR, 53, 40000, FROM_WAN),
	  DROP(FILTERED) },
};
FIXTURE_TEST("nat_mapping_and_filtering", true, STEPS(fx_eim_adf));


/* With [nat] filtering = endpoint-independent, any remote gets in. */
static bool test_filter_eif(void)
{
	struct fixture f = {
		.name = "198.19.0.7 to the mapping, EIF", .ingress = WAN,
		.in = { FROM_WAN, .saddr = "198.19.0.7", .daddr = NAT_ADDR,
			.proto = IPPROTO_UDP, .sport = 53, .dport = 40000,
			.ttl = 57, .ip_id = 0xbeef },
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
		.has_out = true,
		.out = { TO_LAN, .saddr = "198.19.0.7", .daddr = LAN_HOST,
			 .proto = IPPROTO_UDP, .sport = 53, .dport = 40000,
			 .ttl = 56, .ip_id = 0xbeef } };
	struct xnat_config c, saved;
	bool ok;

	if (!udp_out(40000, 53, XDP_REDIRECT, XNAT_FWD_SLOW) ||
	    !config_get(&saved))
		return false;
	c = saved;
	c.flags |= XNAT_F_FILTER_EIF;
	if (!config_set(&c))
		return false;
	ok = run_fixture(&f);
	ok &= config_set(&saved);
	return ok;
}
FIXTURE_TEST("nat_filtering_endpoint_independent", true, .fn = test_filter_eif);

static bool check_not_40000(const uint8_t *out, size_t len)
{
	return ASSERT_TRUE(learned != 40000,
			   "second host got another external port");
}

/* Two inside hosts, same source port, same destination. */
static const struct fixture fx_collision[] = {
	{ "host 1 from 40000", UDP_NAT(40000, 53, SLOW, 40000) },
	{ "host 2 from 40000", LAN,
	  UDP_PKT(LAN_HOST2, WAN_GW, 40000, 53, FROM_LAN2, .ttl = 64, .ip_id = 0x1234), FWD(SLOW),
	  .learn = true, .check = check_not_40000, UDP_OUT_NAT(LEARNED, 53) },
	{ "reply to host 2", UDP_REPLY(53, LEARNED), FWD(FAST), .has_out = true,
	  .out = UDP_PKT(WAN_GW, LAN_HOST2, 53, 40000, TO_LAN2, .ttl = 56, .ip_id = 0xbeef) },
	{ "reply to host 1", UDP_UNNAT(53, 40000, FAST, 40000) },
};

/* Minimum-size frames: Ethernet padding after the IP packet is kept and
 * not counted in the IP or UDP lengths. */
#define PADDED(pl, n) .payload = pl, .payload_len = n, .pad_to = 60
static const struct fixture fx_padded[] = {
	{ "padded udp lan->wan, new flow", LAN, UDP_PKT(LAN_HOST, WAN_GW, 40400, 53, FROM_LAN, PADDED("", 0)),
	  FWD(SLOW), .has_out = true,
	  .out = UDP_PKT(NAT_ADDR, WAN_GW, 40400, 53, TO_WAN, .ttl = 63, PADDED("", 0)) },
	{ "padded udp lan->wan, same flow", LAN,
	  UDP_PKT(LAN_HOST, WAN_GW, 40400, 53, FROM_LAN, PADDED("ab", 2)), FWD(FAST), .has_out = true,
	  .out = UDP_PKT(NAT_ADDR, WAN_GW, 40400, 53, TO_WAN, .ttl = 63, PADDED("ab", 2)) },
	{ "padded tcp SYN lan->wan", LAN,
	  TCP_PKT(LAN_HOST, WAN_GW, 40401, 443, FROM_LAN, .tcp_flags = TCP_SYN, PADDED("", 0)),
	  FWD(SLOW), .has_out = true,
	  .out = TCP_PKT(NAT_ADDR, WAN_GW, 40401, 443, TO_WAN, .tcp_flags = TCP_SYN, .ttl = 63,
			 PADDED("", 0)) },
};

/* ---- Tests with their own logic --------------------------------------- */

/* A full table hands new connections to the kernel. */
static bool test_table_full(void)
{
	bool ok = true;
	int i;

	for (i = 0; i < FLOW_CONNS; i++)
		if (!udp_out(41000 + i, 53, XDP_REDIRECT, XNAT_FWD_SLOW))
			return false;
	ok &= ASSERT_EQ(flows_count(), 2 * FLOW_CONNS, "entries when full");
	/* run_expect also checks no half connection is left behind. */
	ok &= udp_out(41000 + FLOW_CONNS, 53, XDP_PASS, XNAT_PASS_TABLE_FULL);
	ok &= udp_out(41000 + FLOW_CONNS + 1, 53, XDP_PASS, XNAT_PASS_TABLE_FULL);
	/* Established flows keep working both ways. */
	ok &= udp_out(41000, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= udp_out(41000 + FLOW_CONNS - 1, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	{
		struct fixture r = { .name = "reply on a full table",
				     UDP_REPLY(53, 41003),
				     .verdict = XDP_REDIRECT,
				     .reason = XNAT_FWD_FAST,
				     UDP_REPLY_NAT(53, 41003) };

		ok &= run_fixture(&r);
	}
	/* Room again after one connection goes. */
	{
		struct flow_key ok_ = flow_key4(LAN_HOST, 41000, WAN_GW, 53,
						IPPROTO_UDP, if_lan);
		struct flow_key rk = flow_key4(WAN_GW, 53, NAT_ADDR, 41000,
					       IPPROTO_UDP, if_wan);

		ok &= ASSERT_OK(bpf_map_delete_elem(flows_fd, &ok_), "delete orig");
		ok &= ASSERT_OK(bpf_map_delete_elem(flows_fd, &rk), "delete reply");
		ok &= udp_out(41000 + FLOW_CONNS, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	}
	return ok;
}

/*
 * One slot left: the reply entry of a new connection fits, its orig entry
 * does not. The half-inserted reply must be taken out again (run_expect
 * checks the entry count is unchanged) and the table stay usable.
 */
static bool test_table_full_rollback(void)
{
	struct flow_key dummy = flow_key4("198.18.250.1", 1, "198.18.250.2", 2,
					  IPPROTO_UDP, if_wan);
	struct flow_value zero = {};
	bool ok = true;
	int i;

	if (!ASSERT_OK(bpf_map_update_elem(flows_fd, &dummy, &zero, BPF_NOEXIST),
		       "insert a lone entry"))
		return false;
	for (i = 0; i < FLOW_CONNS - 1; i++)
		if (!udp_out(41100 + i, 53, XDP_REDIRECT, XNAT_FWD_SLOW))
			return false;
	ok &= ASSERT_EQ(flows_count(), 2 * FLOW_CONNS - 1, "one slot left");
	ok &= udp_out(41199, 53, XDP_PASS, XNAT_PASS_TABLE_FULL);
	ok &= udp_out(41199, 53, XDP_PASS, XNAT_PASS_TABLE_FULL);
	ok &= udp_out(41100, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= ASSERT_OK(bpf_map_delete_elem(flows_fd, &dummy), "delete lone entry");
	ok &= udp_out(41199, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	return ok;
}

/* A one-port range: the second connection to the same destination finds
 * no free port and goes to the kernel; another destination reuses it. */
static bool test_no_port(void)
{
	struct xnat_config c, saved;
	struct fixture f = { .name = "first endpoint takes port 30000",
			     UDP_OUT(1234, 53), .verdict = XDP_REDIRECT,
			     .reason = XNAT_FWD_SLOW, UDP_OUT_NAT(30000, 53) };
	bool ok;

	if (!config_get(&saved))
		return false;
	c = saved;
	c.port_min = c.port_max = 30000;
	if (!config_set(&c))
		return false;
	ok = run_fixture(&f);
	/* Another inside endpoint: the only port is taken, and towards this
	 * peer even as an endpoint-dependent port: the kernel's NAT, with its
	 * own range, takes it. */
	ok &= udp_out(1235, 53, XDP_PASS, XNAT_PASS_NO_PORT);
	/* The same endpoint to another peer uses its mapping. */
	f.name = "same endpoint, other peer: same port";
	f.in.dport = f.out.dport = 54;
	ok &= run_fixture(&f);
	/* Towards a third peer the other endpoint shares the port as an
	 * endpoint-dependent one (tests/unit/test_scale_edm.c has the rest). */
	f.name = "other endpoint, third peer: the port, endpoint-dependent";
	f.in.sport = 1235;
	f.in.dport = f.out.dport = 55;
	f.reason = XNAT_FWD_SLOW_EDM;
	ok &= run_fixture(&f);
	ok &= ASSERT_EQ(flows_count(), 6, "entries of the three flows");
	ok &= config_set(&saved);
	return ok;
}


/*
 * A connection the kernel forwarded (its conntrack has it) stays the
 * kernel's: XDP must not open a second, differently NATed flow for it. The
 * kernel sees one real packet: conntrack is switched on with an nft rule,
 * the frame is sent into lan0 through its veth peer and waited for on
 * wan0's peer (so the entry is confirmed), then the same tuple is run
 * through the program from both sides.
 */
static bool test_kernel_flow(void)
{
	static const struct fixture lan = {
		.name = "lan packet of a kernel flow", UDP_OUT(43000, 53),
		.verdict = XDP_PASS, .reason = XNAT_PASS_KERNEL_FLOW };
	static const struct fixture wan = {
		.name = "wan reply of a kernel flow", .ingress = WAN,
		.in = { FROM_WAN, .saddr = WAN_GW, .daddr = LAN_HOST,
			.proto = IPPROTO_UDP, .sport = 53, .dport = 43000 },
		.verdict = XDP_PASS, .reason = XNAT_PASS_KERNEL_FLOW };
	struct timeval tv = { .tv_sec = 2 };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	uint8_t frame[PKT_MAX], buf[PKT_MAX];
	int tx = -1, rx = -1, i;
	struct pkt_spec in = lan.in;
	bool seen = false, ok = false;
	size_t len;

	if (sh("nft add table ip xnat_test && "
	       "nft add chain ip xnat_test forward_chain '{ type filter "
	       "hook forward priority 0; policy accept; }' && "
	       "nft add rule ip xnat_test forward_chain ct state new accept"))
		return ASSERT_TRUE(false, "nft rules for conntrack");
	tx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	rx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (!ASSERT_TRUE(tx >= 0 && rx >= 0, "packet sockets"))
		goto out;
	sll.sll_ifindex = if_nametoindex("wan0p");
	if (!ASSERT_OK(bind(rx, (struct sockaddr *)&sll, sizeof(sll)), "bind wan0p") ||
	    !ASSERT_OK(setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)),
		       "SO_RCVTIMEO"))
		goto out;
	len = pkt_build(frame, &in);
	sll.sll_ifindex = if_nametoindex("lan0p");
	if (!ASSERT_EQ(sendto(tx, frame, len, 0, (struct sockaddr *)&sll,
			      sizeof(sll)), (long long)len, "send into lan0"))
		goto out;
	/* Bounded: other frames (IPv6 ND, MLD) may come first. */
	for (i = 0; i < 64 && !seen; i++) {
		ssize_t n = recv(rx, buf, sizeof(buf), 0);
		const struct pkt_v4_udp *p = (const void *)buf;

		if (n < 0)
			break;
		seen = n >= (ssize_t)sizeof(*p) &&
		       p->eth.h_proto == htons(ETH_P_IP) &&
		       p->ip.protocol == IPPROTO_UDP &&
		       p->udp.source == htons(43000);
	}
	if (!ASSERT_TRUE(seen, "the kernel forwarded the frame to wan0"))
		goto out;
	ok = run_fixture(&lan);
	ok &= run_fixture(&wan);
out:
	if (tx >= 0)
		close(tx);
	if (rx >= 0)
		close(rx);
	sh("nft delete table ip xnat_test");
	return ok;
}

/* Set the last-seen time of the flow entry KEY to 1 ns. */
static bool flow_age(const struct flow_key *key)
{
	struct flow_value v;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, key, &v), "flow entry"))
		return false;
	v.last_seen_ns = 1;
	return ASSERT_OK(bpf_map_update_elem(flows_fd, key, &v, BPF_EXIST),
			 "flow entry update");
}

static bool flow_refreshed(const struct flow_key *key, bool want)
{
	struct flow_value v;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, key, &v), "flow entry"))
		return false;
	return want ? ASSERT_TRUE(v.last_seen_ns > 1, "entry refreshed") :
		      ASSERT_EQ(v.last_seen_ns, 1, "entry not refreshed");
}

/*
 * RFC 4787 REQ-6: outbound UDP keeps a flow (and so its mapping) alive,
 * inbound only with [nat] inbound_refresh. Checked on the entries' last
 * seen times, which the test sets back first: no clock involved.
 */
static bool test_udp_refresh(void)
{
	struct flow_key ok_ = flow_key4(LAN_HOST, 40000, WAN_GW, 53,
					IPPROTO_UDP, if_lan);
	struct flow_key rk = flow_key4(WAN_GW, 53, NAT_ADDR, 40000,
				       IPPROTO_UDP, if_wan);
	struct fixture r = { .name = "reply", UDP_REPLY(53, 40000),
			     .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
			     UDP_REPLY_NAT(53, 40000) };
	struct xnat_config c, saved;
	bool ok = true;

	if (!udp_out(40000, 53, XDP_REDIRECT, XNAT_FWD_SLOW) ||
	    !flow_age(&ok_) || !flow_age(&rk))
		return false;
	ok &= run_fixture(&r);
	ok &= flow_refreshed(&rk, false);
	ok &= udp_out(40000, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= flow_refreshed(&ok_, true);
	if (!config_get(&saved))
		return false;
	c = saved;
	c.flags |= XNAT_F_INBOUND_REFRESH;
	if (!config_set(&c))
		return false;
	ok &= run_fixture(&r);
	ok &= flow_refreshed(&rk, true);
	ok &= config_set(&saved);
	return ok;
}
FIXTURE_TEST("nat_udp_refresh_outbound_only", true, .fn = test_udp_refresh);
FIXTURE_TEST("hairpin_to_port_forward", true, STEPS(fx_hairpin));
FIXTURE_TEST("port_collision_two_hosts", true, STEPS(fx_collision));
FIXTURE_TEST("ethernet_padding", true, STEPS(fx_padded));
FIXTURE_TEST("table_full", true, .fn = test_table_full);
FIXTURE_TEST("table_full_rollback", true, .fn = test_table_full_rollback);

/* No NAT address: new LAN->WAN IPv4 connections go to the kernel. */
static bool test_no_nat_addr(void)
{
	struct xnat_config c, saved;
	bool ok;

	if (!config_get(&saved))
		return false;
	c = saved;
	c.nat_addr = 0;
	if (!config_set(&c))
		return false;
	ok = udp_out(42000, 53, XDP_PASS, XNAT_PASS_NO_NAT_ADDR);
	ok &= config_set(&saved);
	ok &= udp_out(42000, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	return ok;
}
FIXTURE_TEST("no_nat_addr", true, .fn = test_no_nat_addr);
FIXTURE_TEST("no_free_port", true, .fn = test_no_port);
/* Last: it leaves a conntrack entry behind (port 43000 only). */
FIXTURE_TEST("kernel_owns_flow", true, .fn = test_kernel_flow);

FIXTURE_MAIN_REGISTERED()
