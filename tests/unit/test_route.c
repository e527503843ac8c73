// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of forwarding in the data path (bpf/xnat.bpf.c, fib.h,
 * flow.h) apart from NAT: IPv6 routed without NAT, the fast path switched
 * off, TTL decrement, the egress MTU on the fast path and a redirect the
 * egress port refuses. Fixtures and runner: fixture.h.
 */
#include "fixture.h"

/* ---- IPv6, routed without NAT ------------------------------------------ */

/* An ICMPv6 echo of type T, id 7, seq 1, TTL TTL between SA and DA. */
#define ECHO6(sa, da, type, t, ...)                                          \
	{ .saddr = sa, .daddr = da, .proto = IPPROTO_ICMPV6, .icmp_type = type, \
	  .icmp_id = 7, .icmp_seq = 1, .ttl = t, __VA_ARGS__ }

static const struct fixture fx_ipv6[] = {
	{ "ipv6 udp lan->wan", UDP6_OUT(40000, 53, 64), FWD(SLOW), UDP6_OUT_ROUTED(40000, 53, 64) },
	{ "ipv6 udp wan->lan reply", WAN, UDP_PKT(WAN6_GW, LAN6_HOST, 53, 40000, FROM_WAN, .ttl = 64),
	  FWD(FAST), .has_out = true, .out = UDP_PKT(WAN6_GW, LAN6_HOST, 53, 40000, TO_LAN, .ttl = 63) },
	{ "ipv6 udp lan->wan again", UDP6_OUT(40000, 53, 2), FWD(FAST), UDP6_OUT_ROUTED(40000, 53, 2) },
	{ "icmpv6 echo request lan->wan", LAN, ECHO6(LAN6_HOST, WAN6_GW, ICMPV6_ECHO_REQUEST, 64, FROM_LAN),
	  FWD(SLOW), .has_out = true, .out = ECHO6(LAN6_HOST, WAN6_GW, ICMPV6_ECHO_REQUEST, 63, TO_WAN) },
	{ "icmpv6 echo reply wan->lan", WAN, ECHO6(WAN6_GW, LAN6_HOST, ICMPV6_ECHO_REPLY, 64, FROM_WAN),
	  FWD(FAST), .has_out = true, .out = ECHO6(WAN6_GW, LAN6_HOST, ICMPV6_ECHO_REPLY, 63, TO_LAN) },
};

/* ---- MTU on the fast path --------------------------------------------- */

static const struct fixture fx_mtu_fast[] = {
	{ "small packet opens the flow", UDP_NAT(40500, 53, SLOW, 40500) },
	/* DF: XDP owes the sender "fragmentation needed"; with no router
	 * address known here it can only drop (test_harden.c has the error
	 * itself). */
	{ "1508-byte packet on the flow", LAN,
	  UDP_PKT(LAN_HOST, WAN_GW, 40500, 53, FROM_LAN, .payload = big_payload,
		  .payload_len = sizeof(big_payload)),
	  DROP(ICMP_LIMIT) },
};

/* With the fast path off, hits are routed again, same bytes out. */
static bool test_fastpath_off(void)
{
	static const struct fixture o_slow = { .name = "orig slow",
		UDP_OUT(1234, 5353), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_SLOW, .learn = true };
	static const struct fixture o_fast = { .name = "orig fast",
		UDP_OUT(1234, 5353), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST };
	static const struct fixture r_fast = { .name = "reply fast",
		UDP_REPLY(5353, LEARNED), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST };
	struct fixture o_routed = o_fast, r_routed = r_fast;
	uint8_t fast_o[PKT_MAX], fast_r[PKT_MAX];
	uint8_t got_o[PKT_MAX], got_r[PKT_MAX];
	uint32_t fo_len, fr_len, go_len, gr_len;
	struct xnat_config c, saved;
	bool ok = true;

	if (!run_fixture(&o_slow) || !run_save(&o_fast, fast_o, &fo_len) ||
	    !run_save(&r_fast, fast_r, &fr_len) || !config_get(&saved))
		return false;
	c = saved;
	c.flags |= XNAT_F_FASTPATH_OFF;
	if (!config_set(&c))
		return false;
	o_routed.name = "orig routed";
	o_routed.reason = XNAT_FWD_ROUTED;
	r_routed.name = "reply routed";
	r_routed.reason = XNAT_FWD_ROUTED;
	ok &= run_save(&o_routed, got_o, &go_len) &&
	      expect_bytes(got_o, go_len, fast_o, fo_len, "orig routed == fast");
	ok &= run_save(&r_routed, got_r, &gr_len) &&
	      expect_bytes(got_r, gr_len, fast_r, fr_len, "reply routed == fast");
	/* A new flow still takes the slow path, then is routed. */
	ok &= udp_out(40800, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	ok &= udp_out(40800, 53, XDP_REDIRECT, XNAT_FWD_ROUTED);
	ok &= config_set(&saved);
	ok &= run_fixture(&o_fast);
	return ok;
}

/* TTL exactly one less, checksum right, over values with carries. */
static bool test_ttl(void)
{
	static const struct { uint8_t ttl; uint16_t id; } cases[] = {
		{ 2, 0x0000 }, { 3, 0xffff }, { 64, 0x1234 }, { 65, 0xfeff },
		{ 128, 0x00ff }, { 129, 0x8000 }, { 255, 0xffff },
		{ 255, 0x0000 }, { 17, 0xff00 },
	};
	bool ok = true;
	size_t i;

	if (!udp_out(40700, 53, XDP_REDIRECT, XNAT_FWD_SLOW))
		return false;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fixture f = { .name = "ttl", UDP_OUT(40700, 53),
				     .verdict = XDP_REDIRECT,
				     .reason = XNAT_FWD_FAST,
				     UDP_OUT_NAT(40700, 53) };
		struct fixture r = { .name = "ttl reply", UDP_REPLY(53, 40700),
				     .verdict = XDP_REDIRECT,
				     .reason = XNAT_FWD_FAST,
				     UDP_REPLY_NAT(53, 40700) };

		f.in.ttl = r.in.ttl = cases[i].ttl;
		f.out.ttl = r.out.ttl = cases[i].ttl - 1;
		f.in.ip_id = f.out.ip_id = r.in.ip_id = r.out.ip_id = cases[i].id;
		if (!run_fixture(&f) || !run_fixture(&r)) {
			check_fail("ttl %u id 0x%04x", cases[i].ttl, cases[i].id);
			ok = false;
		}
	}
	return ok;
}

/* The egress port left the devmap: the packet is dropped, not passed. */
static bool test_redirect_fail(void)
{
	__u32 key = if_wan, val = if_wan;
	bool ok;

	if (!udp_out(42100, 53, XDP_REDIRECT, XNAT_FWD_SLOW))
		return false;
	if (!ASSERT_OK(bpf_map_delete_elem(tx_fd, &key), "devmap delete"))
		return false;
	ok = udp_out(42100, 53, XDP_DROP, XNAT_DROP_REDIRECT);
	ok &= ASSERT_OK(bpf_map_update_elem(tx_fd, &key, &val, BPF_ANY),
			"devmap restore");
	ok &= udp_out(42100, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	return ok;
}

static const struct test tests[] = {
	{ "ipv6_routed", true, STEPS(fx_ipv6) },
	{ "fastpath_off", true, .fn = test_fastpath_off },
	{ "ttl_decrement", true, .fn = test_ttl },
	{ "mtu_fast_path", true, STEPS(fx_mtu_fast) },
	{ "redirect_fail", true, .fn = test_redirect_fail },
};

FIXTURE_MAIN(tests)
