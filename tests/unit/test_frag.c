// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of IPv4 fragments of NATed flows (bpf/frag.h): the first
 * fragment NATed as any packet, later ones following its rewrite.
 * Fixtures and runner: fixture.h.
 */
#include "fixture.h"

/* ---- IPv4 fragments of a NATed flow ------------------------------------ */

/*
 * The first fragment (MF, offset 0) has the ports: it is NATed like any
 * packet, its L4 checksum updated for the whole datagram. A later fragment
 * of the same datagram (same addresses, id, protocol) has none: it gets
 * the same address rewrite, and its bytes past the IP header stay as
 * they are. The expected frames are built here from the input.
 */
static bool test_fragments(void)
{
	struct pkt_spec in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
			       .proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
			       .ip_id = 4242 };
	struct pkt_spec out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
				.proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
				.ip_id = 4242, .ttl = 63 };
	uint8_t frame[PKT_MAX], want[PKT_MAX], got[PKT_MAX];
	struct pkt_v4_udp *f = (void *)frame, *w = (void *)want;
	uint32_t got_len = 0;
	size_t len, want_len;
	bool ok;

	/* First fragment: NATed, MF kept, checksums as for any packet. */
	len = mut_frag_mf(frame, pkt_build(frame, &in));
	want_len = mut_frag_mf(want, pkt_build(want, &out));
	ok = run_expect("first fragment", if_lan, frame, len, 0, XDP_REDIRECT,
			XNAT_FWD_SLOW, got, &got_len);
	ok = ok && expect_bytes(got, got_len, want, want_len, "first fragment");

	/* A later fragment: same datagram, offset 1480, no ports. What
	 * follows its IP header must come out untouched. */
	len = mut_frag_offset(frame, pkt_build(frame, &in));
	memcpy(want, frame, len);
	memcpy(w->eth.h_dest, (uint8_t[])MAC_WAN_GW, ETH_ALEN);
	memcpy(w->eth.h_source, (uint8_t[])MAC_WAN0, ETH_ALEN);
	inet_pton(AF_INET, NAT_ADDR, &w->ip.saddr);
	w->ip.ttl = f->ip.ttl - 1;
	pkt_ipv4_fix_csum(&w->ip);
	ok = ok && run_expect("later fragment", if_lan, frame, len, 0,
			      XDP_REDIRECT, XNAT_FWD_FAST, got, &got_len);
	ok = ok && expect_bytes(got, got_len, want, len, "later fragment");

	/* Another datagram's later fragment (other id): not this flow's. */
	f->ip.id = htons(4243);
	pkt_ipv4_fix_csum(&f->ip);
	ok = ok && run_expect("later fragment, unknown datagram", if_lan,
			      frame, len, 0, XDP_PASS, XNAT_PASS_FRAGMENT, got,
			      &got_len);
	if (!ok)
		check_fail("fragments of a NATed flow");
	return ok;
}

static const struct test tests[] = {
	{ "ipv4_fragments", true, .fn = test_fragments },
};

FIXTURE_MAIN(tests)
