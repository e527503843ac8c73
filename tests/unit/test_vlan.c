// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of 802.1Q VLANs in the data path (parsing.h, flow.h
 * l2_rewrite): tagged ingress found by (port, VID), tags popped, pushed
 * and kept; a source forged across ports or VLANs (fib.h). Fixtures and
 * runner: fixture.h.
 */
#include <net/if.h>
#include "fixture.h"

/* ---- 802.1Q VLANs ------------------------------------------------------ */

/* Say that the stand-in NAME carries VID on lan0 (as user/maps.c writes a
 * VLAN device); its ifindex in *VDEV. */
static bool vlan_add(const char *name, uint16_t vid, __u32 *vdev)
{
	struct iface_info info = { .role = XNAT_ROLE_LAN, .mac = MAC_LAN0,
				   .vid = vid, .parent = if_lan };
	struct vlan_key vk = { .ifindex = if_lan, .vid = vid };

	*vdev = if_nametoindex(name);
	return ASSERT_TRUE(*vdev != 0, name) &&
	       ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_ifaces),
					     vdev, &info, BPF_ANY), "iface entry") &&
	       ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_vlans),
					     &vk, vdev, BPF_ANY), "VLAN entry");
}

static void vlan_del(uint16_t vid, __u32 vdev)
{
	struct vlan_key vk = { .ifindex = if_lan, .vid = vid };

	bpf_map_delete_elem(bpf_map__fd(skel->maps.xnat_vlans), &vk);
	bpf_map_delete_elem(bpf_map__fd(skel->maps.xnat_ifaces), &vdev);
}

/*
 * A VLAN device stands for its tagged frames on a physical port. This
 * kernel has no 8021q, so the test's "VLAN device" is a veth (vl100) with
 * the VLAN's subnet: the FIB routes with it exactly as with a VLAN device,
 * and the maps say its frames travel on lan0 tagged 100, as user/maps.c
 * writes them for a real one. What is tested is the data path's part:
 * tagged ingress found by (port, VID), tags popped, pushed, kept.
 */

/* Insert an 802.1Q tag after the MACs of the LEN-byte frame in BUF. */
static size_t vlan_tag(uint8_t *buf, size_t len, uint16_t vid)
{
	uint16_t tag[2] = { htons(ETH_P_8021Q), htons(vid) };

	memmove(buf + 16, buf + 12, len - 12);
	memcpy(buf + 12, tag, sizeof(tag));
	return len + 4;
}

/* Run FRAME in on IFINDEX and compare the output with WANT. */
static bool vlan_step(const char *name, int ifindex, uint8_t *frame,
		      size_t len, int verdict, int reason, const uint8_t *want,
		      size_t want_len)
{
	uint8_t got[PKT_MAX];
	uint32_t got_len = 0;
	bool ok;

	ok = run_expect(name, ifindex, frame, len, 0, verdict, reason, got,
			&got_len);
	if (ok && want)
		ok = expect_bytes(got, got_len, want, want_len, name);
	if (!ok)
		check_fail("step '%s' failed", name);
	return ok;
}

static bool test_vlan(void)
{
	struct pkt_spec out_wan = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
				    .proto = IPPROTO_UDP, .sport = 41000,
				    .dport = 53, .ttl = 63 };
	struct pkt_spec in_vlan = { .smac = MAC_VLAN_HOST, .dmac = MAC_LAN0,
				    .saddr = VLAN_HOST, .daddr = WAN_GW,
				    .proto = IPPROTO_UDP, .sport = 41000,
				    .dport = 53 };
	struct pkt_spec in_wan = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
				   .proto = IPPROTO_UDP, .sport = 53,
				   .dport = 41000 };
	struct pkt_spec out_vlan = { .smac = MAC_LAN0, .dmac = MAC_VLAN_HOST,
				     .saddr = WAN_GW, .daddr = VLAN_HOST,
				     .proto = IPPROTO_UDP, .sport = 53,
				     .dport = 41000, .ttl = 63 };
	struct pkt_spec lan_to_vlan = { FROM_LAN, .saddr = LAN_HOST,
					.daddr = VLAN_HOST, .proto = IPPROTO_UDP,
					.sport = 42000, .dport = 7 };
	struct pkt_spec lan_to_vlan_out = { .smac = MAC_LAN0,
					    .dmac = MAC_VLAN_HOST,
					    .saddr = LAN_HOST, .daddr = VLAN_HOST,
					    .proto = IPPROTO_UDP, .sport = 42000,
					    .dport = 7, .ttl = 63 };
	uint8_t frame[PKT_MAX], want[PKT_MAX];
	size_t len, want_len;
	bool ok = true;
	__u32 vdev;

	if (!vlan_add("vl100", VLAN_ID, &vdev))
		return false;

	/* Tagged from the VLAN to the WAN: routed as from vl100, tag
	 * popped, SNATed (port 41000 preserved). */
	len = vlan_tag(frame, pkt_build(frame, &in_vlan), VLAN_ID);
	want_len = pkt_build(want, &out_wan);
	ok &= vlan_step("tagged VLAN 100 to WAN: tag popped", if_lan, frame,
			len, XDP_REDIRECT, XNAT_FWD_SLOW, want, want_len);
	/* The reply: tag pushed, out of the physical LAN port. */
	len = pkt_build(frame, &in_wan);
	want_len = vlan_tag(want, pkt_build(want, &out_vlan), VLAN_ID);
	ok &= vlan_step("reply from WAN: tag 100 pushed", if_wan, frame, len,
			XDP_REDIRECT, XNAT_FWD_FAST, want, want_len);
	/* And again on the fast path from the VLAN side. */
	len = vlan_tag(frame, pkt_build(frame, &in_vlan), VLAN_ID);
	want_len = pkt_build(want, &out_wan);
	ok &= vlan_step("tagged, fast path: tag popped", if_lan, frame, len,
			XDP_REDIRECT, XNAT_FWD_FAST, want, want_len);
	/* Untagged LAN to the VLAN on the same port: routed, tag pushed. */
	len = pkt_build(frame, &lan_to_vlan);
	want_len = vlan_tag(want, pkt_build(want, &lan_to_vlan_out), VLAN_ID);
	ok &= vlan_step("untagged LAN to VLAN 100: tag pushed", if_lan, frame,
			len, XDP_REDIRECT, XNAT_FWD_SLOW, want, want_len);
	/* VLANs xnat does not run on, and priority tags, are the kernel's. */
	len = vlan_tag(frame, pkt_build(frame, &in_vlan), 200);
	ok &= vlan_step("tagged VLAN 200 (not ours)", if_lan, frame, len,
			XDP_PASS, XNAT_PASS_VLAN, NULL, 0);
	len = vlan_tag(frame, pkt_build(frame, &in_vlan), 0);
	ok &= vlan_step("priority tag (VLAN 0)", if_lan, frame, len, XDP_PASS,
			XNAT_PASS_VLAN, NULL, 0);

	vlan_del(VLAN_ID, vdev);
	return ok;
}

/*
 * RFC 3704 on the LAN ports (fib_src_check in bpf/fib.h). A host on
 * untagged lan0 forges the resolver's answer, WAN_GW:53, to a host of
 * VLAN 100, to the port that host will query from. Routed, it would open
 * a flow whose reply entry is exactly the key of the victim's query
 * (VLAN_HOST:45000 -> WAN_GW:53 on lan0, VLAN 100) and leads to the
 * forger's MAC: the query would go to the forger, un-NATed, untagged.
 * Instead the forged packet is dropped and counted (its source is routed
 * out of wan0, not lan0), and the query is NATed to the WAN as any. So
 * are the VLAN host's address forged untagged and the LAN host's forged
 * on VLAN 100: each is routed out of another port than the one it came
 * in on, even on the same wire.
 */
static bool test_vlan_spoofed_source(void)
{
	struct pkt_spec forged = { FROM_LAN2, .saddr = WAN_GW,
				   .daddr = VLAN_HOST, .proto = IPPROTO_UDP,
				   .sport = 53, .dport = 45000, .ttl = 64 };
	struct pkt_spec as_vlan_host = { FROM_LAN2, .saddr = VLAN_HOST,
					 .daddr = WAN_GW, .proto = IPPROTO_UDP,
					 .sport = 45001, .dport = 53, .ttl = 64 };
	struct pkt_spec as_lan_host = { .smac = MAC_VLAN_HOST, .dmac = MAC_LAN0,
					.saddr = LAN_HOST, .daddr = WAN_GW,
					.proto = IPPROTO_UDP, .sport = 45002,
					.dport = 53, .ttl = 64 };
	struct pkt_spec query = { .smac = MAC_VLAN_HOST, .dmac = MAC_LAN0,
				  .saddr = VLAN_HOST, .daddr = WAN_GW,
				  .proto = IPPROTO_UDP, .sport = 45000,
				  .dport = 53, .ttl = 64 };
	struct pkt_spec query_nat = { TO_WAN, .saddr = NAT_ADDR,
				      .daddr = WAN_GW, .proto = IPPROTO_UDP,
				      .sport = 45000, .dport = 53, .ttl = 63 };
	uint8_t frame[PKT_MAX], want[PKT_MAX];
	size_t len, want_len;
	bool ok = true;
	__u32 vdev;

	if (!vlan_add("vl100", VLAN_ID, &vdev))
		return false;

	/* run_expect also checks that a drop leaves no flow behind. */
	len = pkt_build(frame, &forged);
	ok &= vlan_step("WAN_GW:53 forged on lan0 to VLAN 100", if_lan, frame,
			len, XDP_DROP, XNAT_DROP_SPOOFED, NULL, 0);
	len = pkt_build(frame, &as_vlan_host);
	ok &= vlan_step("VLAN 100's host forged untagged", if_lan, frame, len,
			XDP_DROP, XNAT_DROP_SPOOFED, NULL, 0);
	len = vlan_tag(frame, pkt_build(frame, &as_lan_host), VLAN_ID);
	ok &= vlan_step("lan0's host forged on VLAN 100", if_lan, frame, len,
			XDP_DROP, XNAT_DROP_SPOOFED, NULL, 0);
	len = vlan_tag(frame, pkt_build(frame, &query), VLAN_ID);
	want_len = pkt_build(want, &query_nat);
	ok &= vlan_step("the victim's query NATed to the WAN", if_lan, frame,
			len, XDP_REDIRECT, XNAT_FWD_SLOW, want, want_len);

	vlan_del(VLAN_ID, vdev);
	return ok;
}

/*
 * [router] source_check = feasible (XNAT_F_SRC_FEASIBLE): the LAN ports
 * trust each other's sources. The two forgeries across lan0 and VLAN 100
 * that strict drops above now open flows, NATed; a source routed out of
 * the WAN, out of a port xnat does not run on (ext0) or nowhere is still
 * dropped.
 */
static bool test_vlan_feasible_source(void)
{
	struct pkt_spec as_vlan_host = { FROM_LAN2, .saddr = VLAN_HOST,
					 .daddr = WAN_GW, .proto = IPPROTO_UDP,
					 .sport = 45011, .dport = 53, .ttl = 64 };
	struct pkt_spec as_lan_host = { .smac = MAC_VLAN_HOST, .dmac = MAC_LAN0,
					.saddr = LAN_HOST, .daddr = WAN_GW,
					.proto = IPPROTO_UDP, .sport = 45012,
					.dport = 53, .ttl = 64 };
	struct pkt_spec nat_of_vlan_host = { TO_WAN, .saddr = NAT_ADDR,
					     .daddr = WAN_GW,
					     .proto = IPPROTO_UDP,
					     .sport = 45011, .dport = 53,
					     .ttl = 63 };
	struct pkt_spec nat_of_lan_host = nat_of_vlan_host;
	struct pkt_spec still_spoofed[] = {
		{ FROM_LAN2, .saddr = WAN_GW, .daddr = VLAN_HOST,
		  .proto = IPPROTO_UDP, .sport = 53, .dport = 45011, .ttl = 64 },
		{ FROM_LAN2, .saddr = "198.18.100.7", .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 45013, .dport = 53, .ttl = 64 },
		{ FROM_LAN2, .saddr = "198.18.200.7", .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 45014, .dport = 53, .ttl = 64 },
	};
	static const char *const still_names[] = {
		"WAN_GW:53 forged on lan0", "ext0's source on lan0",
		"an unrouted source on lan0",
	};
	uint8_t frame[PKT_MAX], want[PKT_MAX];
	struct xnat_config c, saved;
	size_t len, want_len, i;
	bool ok = true;
	__u32 vdev;

	if (!config_get(&saved) || !vlan_add("vl100", VLAN_ID, &vdev))
		return false;
	c = saved;
	c.flags |= XNAT_F_SRC_FEASIBLE;
	ok &= config_set(&c);

	len = pkt_build(frame, &as_vlan_host);
	want_len = pkt_build(want, &nat_of_vlan_host);
	ok &= vlan_step("VLAN 100's source untagged on lan0: NATed", if_lan,
			frame, len, XDP_REDIRECT, XNAT_FWD_SLOW, want,
			want_len);
	nat_of_lan_host.sport = 45012;
	len = vlan_tag(frame, pkt_build(frame, &as_lan_host), VLAN_ID);
	want_len = pkt_build(want, &nat_of_lan_host);
	ok &= vlan_step("lan0's source on VLAN 100: NATed", if_lan, frame,
			len, XDP_REDIRECT, XNAT_FWD_SLOW, want, want_len);
	for (i = 0; i < ARRAY_SIZE(still_spoofed); i++) {
		len = pkt_build(frame, &still_spoofed[i]);
		ok &= vlan_step(still_names[i], if_lan, frame, len, XDP_DROP,
				XNAT_DROP_SPOOFED, NULL, 0);
	}

	ok &= config_set(&saved);
	vlan_del(VLAN_ID, vdev);
	return ok;
}

/*
 * Routed between two VLANs of the same port: the tag rewritten in place
 * (100 -> 200, the priority bits kept), byte for byte. (The tag kept,
 * in_vid == out_vid, needs the same VID on two ports: the fixture has one
 * LAN port, and within one VLAN the egress is the ingress: pass_egress.)
 */
static bool test_vlan_tag_change(void)
{
	const uint16_t pcp = 5 << 13; /* priority bits, kept */
	struct pkt_spec v100_in = { .smac = MAC_VLAN_HOST, .dmac = MAC_LAN0,
				    .saddr = VLAN_HOST, .daddr = VLAN2_HOST,
				    .proto = IPPROTO_UDP, .sport = 43000,
				    .dport = 7 };
	struct pkt_spec v200_out = { .smac = MAC_LAN0, .dmac = MAC_VLAN2_HOST,
				     .saddr = VLAN_HOST, .daddr = VLAN2_HOST,
				     .proto = IPPROTO_UDP, .sport = 43000,
				     .dport = 7, .ttl = 63 };
	uint8_t frame[PKT_MAX], want[PKT_MAX];
	__u32 v100 = 0, v200 = 0;
	size_t len, want_len;
	bool ok = vlan_add("vl100", VLAN_ID, &v100) &&
		  vlan_add("vl200", VLAN2_ID, &v200);

	if (ok) {
		len = vlan_tag(frame, pkt_build(frame, &v100_in), pcp | VLAN_ID);
		want_len = vlan_tag(want, pkt_build(want, &v200_out),
				    pcp | VLAN2_ID);
		ok &= vlan_step("VLAN 100 to VLAN 200: tag rewritten", if_lan,
				frame, len, XDP_REDIRECT, XNAT_FWD_SLOW, want,
				want_len);
	}
	vlan_del(VLAN2_ID, v200);
	vlan_del(VLAN_ID, v100);
	return ok;
}

static const struct test tests[] = {
	{ "vlan_tags", true, .fn = test_vlan },
	{ "vlan_spoofed_source", true, .fn = test_vlan_spoofed_source },
	{ "vlan_feasible_source", true, .fn = test_vlan_feasible_source },
	{ "vlan_tag_change", true, .fn = test_vlan_tag_change },
};

FIXTURE_MAIN(tests)
