// SPDX-License-Identifier: GPL-2.0-only
/*
 * MSS clamping in XDP (bpf/mss.h, [router] mss_clamp): SYNs and SYN-ACKs
 * with their options laid out in many ways go through the program by
 * BPF_PROG_RUN; each forwarded frame is compared byte for byte with the
 * one expected, built from scratch with the MSS lowered and every
 * checksum from the oracle (csum_oracle.h), so an incremental update that
 * is off, a byte-order slip at an odd offset, or a write outside the
 * option shows as a difference. Options the endpoint would not read
 * (after End of Option List, truncated, of the wrong length) are left
 * alone, and so is an MSS already small enough. IPv6 SYNs behind an
 * extension header are clamped as well.
 */
#include "fixture.h"

#define MAX_OPTS 40
/* The MSS option with the value 1460, as Linux sends it. */
#define MSS1460 2, 4, 0x05, 0xb4

struct mss_case {
	const char *name;
	uint8_t opts[MAX_OPTS];
	size_t n;
	int at;           /* the offset of the MSS value in the options that
			     must change, or -1: the options stay as sent */
	uint16_t want;    /* the MSS it must become */
	bool v6;
	uint16_t sport;
	/* IPv6: an 8-byte extension header in front of the TCP header,
	 * PKT_NH_DEST (destination options) or PKT_NH_FRAGMENT (an atomic
	 * fragment); 0: none. */
	uint8_t ext;
};

/* Put C's extension header, if any, in front of the TCP header of FRAME. */
static size_t ext_add(const struct mss_case *c, uint8_t *frame, size_t len)
{
	uint8_t ext[8];

	if (!c->ext)
		return len;
	if (c->ext == PKT_NH_DEST)
		pkt_ext_destopts(ext, IPPROTO_TCP);
	else
		pkt_ext_frag(ext, IPPROTO_TCP, 0, false, htonl(0x0707));
	return pkt_v6_ext_insert(frame, len, c->ext, ext, sizeof(ext));
}

/*
 * Lay out S as a TCP segment whose header carries OPTS (N bytes, padded
 * with End of Option List to a multiple of 4) and no payload.
 */
static size_t syn_build(uint8_t *buf, const struct pkt_spec *s0,
			const uint8_t *opts, size_t n)
{
	struct pkt_spec s = *s0;
	uint8_t padded[MAX_OPTS] = { 0 };
	size_t olen = (n + 3) & ~(size_t)3, len;
	uint8_t *l3 = buf + sizeof(struct ethhdr), *l4;
	bool v6 = pkt_is_v6(&s);

	memcpy(padded, opts, n);
	s.payload = padded;
	s.payload_len = olen;
	len = pkt_build(buf, &s);
	l4 = l3 + (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
	l4[12] = (5 + olen / 4) << 4;
	l4[16] = l4[17] = 0;
	if (v6)
		csum_put16(l4 + 16, csum_oracle_l4_v6(l3 + 8, l3 + 24,
						      IPPROTO_TCP, l4,
						      20 + olen, 16));
	else
		csum_put16(l4 + 16, csum_oracle_l4_v4(l3 + 12, l3 + 16,
						      IPPROTO_TCP, l4,
						      20 + olen, 16));
	return len;
}

/* [router] mss_clamp as the loader writes it: PMTU, or a fixed IPv4 MSS
 * (0: off). */
static bool mss_config(bool pmtu, uint16_t fixed)
{
	struct xnat_config c;

	if (!config_get(&c))
		return false;
	c.flags &= ~XNAT_F_MSS_PMTU;
	c.flags |= pmtu ? XNAT_F_MSS_PMTU : 0;
	c.mss_mtu = fixed ? fixed + XNAT_MSS_HDRS_V4 : 0;
	return config_set(&c);
}

static bool link_mtu(const char *dev, int mtu)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "ip link set %s mtu %d", dev, mtu);
	return ASSERT_EQ(system(cmd), 0, cmd);
}

/* A new connection's SYN from the LAN host (SNAT, or routed for IPv6) and
 * the frame that must leave to the WAN. */
static bool run_case(const struct mss_case *c)
{
	struct pkt_spec in = { FROM_LAN, .proto = IPPROTO_TCP,
			       .sport = c->sport, .dport = 443,
			       .tcp_flags = TCP_SYN, .seq = 7, .ttl = 64,
			       .ip_id = 0x0707 };
	struct pkt_spec out = in;
	uint8_t frame[PKT_MAX], got[PKT_MAX], want[PKT_MAX];
	uint8_t opts[MAX_OPTS];
	uint32_t got_len = 0;
	size_t len, want_len;

	in.saddr = c->v6 ? LAN6_HOST : LAN_HOST;
	in.daddr = c->v6 ? WAN6_GW : WAN_GW;
	out = in;
	memcpy(out.smac, mac_wan0, ETH_ALEN);
	memcpy(out.dmac, (uint8_t[])MAC_WAN_GW, ETH_ALEN);
	out.saddr = c->v6 ? LAN6_HOST : NAT_ADDR;
	out.ttl = 63;
	memcpy(opts, c->opts, MAX_OPTS);
	if (c->at >= 0) {
		opts[c->at] = c->want >> 8;
		opts[c->at + 1] = c->want & 0xff;
	}
	flows_clear();
	len = ext_add(c, frame, syn_build(frame, &in, c->opts, c->n));
	if (!run_expect(c->name, if_lan, frame, len, 0, XDP_REDIRECT,
			XNAT_FWD_SLOW, got, &got_len))
		return false;
	want_len = ext_add(c, want, syn_build(want, &out, opts, c->n));
	return check_forwarded(frame, len, got, got_len) &
	       expect_bytes(got, got_len, want, want_len, c->name);
}

static bool run_cases(const struct mss_case *c, size_t n)
{
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		if (!run_case(&c[i])) {
			check_fail("case '%s' failed", c[i].name);
			ok = false;
		}
	}
	return ok;
}

/*
 * mss_clamp = 1400 (IPv6: 1380): where the MSS option sits, and what
 * surrounds it. NOP 1, EOL 0, window scale 3 (3 bytes), SACK permitted 4
 * (2), timestamps 8 (10).
 */
static bool test_layouts(void)
{
	static const struct mss_case cases[] = {
		{ "mss first", { MSS1460, 1, 3, 3, 7 }, 8, 2, 1400,
		  .sport = 40701 },
		{ "linux layout (mss, sack, ts, nop, ws)",
		  { MSS1460, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7 },
		  20, 2, 1400, .sport = 40702 },
		{ "mss after timestamps", { 1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8,
		  MSS1460 }, 16, 14, 1400, .sport = 40703 },
		{ "mss at an odd offset (one NOP first)", { 1, MSS1460, 1, 1, 1 },
		  8, 3, 1400, .sport = 40704 },
		{ "odd offset, after window scale", { 3, 3, 7, MSS1460, 1 },
		  8, 5, 1400, .sport = 40705 },
		{ "last option of a full 40 bytes",
		  { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, MSS1460 },
		  40, 38, 1400, .sport = 40706 },
		{ "no mss", { 1, 1, 4, 2, 1, 3, 3, 7 }, 8, -1, 0,
		  .sport = 40707 },
		{ "no options", { 0 }, 0, -1, 0, .sport = 40708 },
		{ "mss after end of options", { 0, MSS1460, 1, 1, 1 }, 8, -1, 0,
		  .sport = 40709 },
		{ "mss truncated by the header's end", { 1, 1, 1, 1, 1, 2, 4, 5 },
		  8, -1, 0, .sport = 40710 },
		{ "length past the header before the mss",
		  { 3, 9, 7, MSS1460, 1 }, 8, -1, 0, .sport = 40711 },
		{ "zero length before the mss", { 30, 0, 1, 1, MSS1460 }, 8, -1,
		  0, .sport = 40712 },
		{ "mss of length 3 is no mss", { 2, 3, 0x05, 1, 1, 1, 1, 1 }, 8,
		  -1, 0, .sport = 40713 },
		{ "mss already below", { 2, 4, 0x04, 0xb0, 1, 1, 1, 1 }, 8, -1, 0,
		  .sport = 40714 },
		{ "mss equal", { 2, 4, 0x05, 0x78, 1, 1, 1, 1 }, 8, -1, 0,
		  .sport = 40715 },
		{ "ipv6, mss first", { 2, 4, 0x05, 0xa0, 1, 3, 3, 7 }, 8, 2, 1380,
		  .v6 = true, .sport = 40716 },
		{ "ipv6, odd offset", { 1, 2, 4, 0x05, 0xa0, 1, 1, 1 }, 8, 3,
		  1380, .v6 = true, .sport = 40717 },
		{ "ipv6, mss after end of options", { 0, 2, 4, 0x05, 0xa0 }, 8,
		  -1, 0, .v6 = true, .sport = 40718 },
		/* Extension headers change nothing: the segment is the
		 * same TCP, and the peer's segments must fit as well. */
		{ "ipv6, behind destination options",
		  { 2, 4, 0x05, 0xa0, 1, 3, 3, 7 }, 8, 2, 1380, .v6 = true,
		  .sport = 40719, .ext = PKT_NH_DEST },
		{ "ipv6, in an atomic fragment",
		  { 1, 2, 4, 0x05, 0xa0, 1, 1, 1 }, 8, 3, 1380, .v6 = true,
		  .sport = 40722, .ext = PKT_NH_FRAGMENT },
	};

	return mss_config(false, 1400) && run_cases(cases, ARRAY_SIZE(cases));
}

/* mss_clamp = off: nothing changes. */
static bool test_off(void)
{
	static const struct mss_case cases[] = {
		{ "off, ipv4", { MSS1460, 1, 1, 1, 1 }, 8, -1, 0, .sport = 40720 },
		{ "off, ipv6", { 2, 4, 0x05, 0xa0 }, 4, -1, 0, .v6 = true,
		  .sport = 40721 },
	};

	return mss_config(false, 0) && run_cases(cases, ARRAY_SIZE(cases));
}

/*
 * mss_clamp = pmtu: the smaller MTU of the two ports. lan0 at 1400: a SYN
 * from the LAN (in by lan0, out by wan0 at 1500) gets 1360, over IPv6
 * 1340; at 1500 both ways it keeps 1460.
 */
static bool test_pmtu(void)
{
	static const struct mss_case lan1400[] = {
		{ "pmtu, ingress port 1400", { MSS1460, 1, 1, 1, 1 }, 8, 2, 1360,
		  .sport = 40730 },
		{ "pmtu, ipv6, ingress port 1400", { 2, 4, 0x05, 0xa0 }, 4, 2,
		  1340, .v6 = true, .sport = 40731 },
	};
	static const struct mss_case lan1500[] = {
		{ "pmtu, 1500 both ways", { MSS1460, 1, 1, 1, 1 }, 8, -1, 0,
		  .sport = 40732 },
	};
	bool ok;

	if (!mss_config(true, 0) || !link_mtu("lan0", 1400))
		return false;
	ok = run_cases(lan1400, ARRAY_SIZE(lan1400));
	ok &= link_mtu("lan0", 1500);
	return ok && run_cases(lan1500, ARRAY_SIZE(lan1500));
}

/*
 * The other direction and the fast path: a port-forwarded SYN from the WAN
 * leaves by lan0 (MTU 1400) with 1360; the LAN server's SYN-ACK, on the
 * flow it made, leaves by wan0 with 1360 too (it came in by lan0).
 */
static bool test_syn_ack(void)
{
	struct pkt_spec syn = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
				.proto = IPPROTO_TCP, .sport = 33333,
				.dport = 8080, .tcp_flags = TCP_SYN, .seq = 42,
				.ttl = 60, .ip_id = 7 };
	struct pkt_spec syn_out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST,
				    .proto = IPPROTO_TCP, .sport = 33333,
				    .dport = 80, .tcp_flags = TCP_SYN,
				    .seq = 42, .ttl = 59, .ip_id = 7 };
	struct pkt_spec sa = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
			       .proto = IPPROTO_TCP, .sport = 80,
			       .dport = 33333, .tcp_flags = TCP_SYN | TCP_ACK,
			       .seq = 900, .ack_seq = 43, .ttl = 64,
			       .ip_id = 8 };
	struct pkt_spec sa_out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
				   .proto = IPPROTO_TCP, .sport = 8080,
				   .dport = 33333,
				   .tcp_flags = TCP_SYN | TCP_ACK, .seq = 900,
				   .ack_seq = 43, .ttl = 63, .ip_id = 8 };
	const uint8_t opts[] = { MSS1460, 1, 1, 4, 2 };
	const uint8_t clamped[] = { 2, 4, 0x05, 0x50, 1, 1, 4, 2 };
	uint8_t frame[PKT_MAX], got[PKT_MAX], want[PKT_MAX];
	uint32_t got_len = 0;
	size_t len, want_len;
	bool ok;

	if (!mss_config(true, 0) || !link_mtu("lan0", 1400))
		return false;
	len = syn_build(frame, &syn, opts, sizeof(opts));
	ok = run_expect("forwarded SYN", if_wan, frame, len, 0, XDP_REDIRECT,
			XNAT_FWD_SLOW, got, &got_len);
	want_len = syn_build(want, &syn_out, clamped, sizeof(clamped));
	ok = ok && check_forwarded(frame, len, got, got_len) &&
	     expect_bytes(got, got_len, want, want_len, "forwarded SYN");
	len = syn_build(frame, &sa, opts, sizeof(opts));
	ok = ok && run_expect("SYN-ACK", if_lan, frame, len, 0, XDP_REDIRECT,
			      XNAT_FWD_FAST, got, &got_len);
	want_len = syn_build(want, &sa_out, clamped, sizeof(clamped));
	ok = ok && check_forwarded(frame, len, got, got_len) &&
	     expect_bytes(got, got_len, want, want_len, "SYN-ACK");
	return link_mtu("lan0", 1500) && ok;
}

static const struct test tests[] = {
	{ "layouts", true, .fn = test_layouts },
	{ "off", true, .fn = test_off },
	{ "pmtu", true, .fn = test_pmtu },
	{ "syn_ack", true, .fn = test_syn_ack },
};

FIXTURE_MAIN(tests)
