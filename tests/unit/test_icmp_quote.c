// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of how far an ICMP error's quote reaches: only to the end of
 * the IP packet (its total length), never into bytes that follow it in the
 * frame (Ethernet padding, a trailer). Found by `make fuzz`: a quote cut
 * short was keyed with trailer bytes as its ports, and a 28-byte TCP quote
 * followed by a trailer had the "quoted TCP checksum" rewritten in the
 * trailer, with the outer ICMP checksum then adjusted for a change it does
 * not cover. Fixtures and runner: fixture.h.
 */
#include "fixture.h"

#define TRAILER_LEN 20
#define TRAILER_BYTE 0xab

/* Bytes after the IP packet, as a NIC or a switch may leave them. */
static size_t mut_trailer(uint8_t *buf, size_t len)
{
	memset(buf + len, TRAILER_BYTE, TRAILER_LEN);
	return len + TRAILER_LEN;
}

/* The trailer left the router as it came. */
static bool trailer_untouched(const uint8_t *out, size_t out_len)
{
	size_t i;
	bool ok = ASSERT_TRUE(out_len > TRAILER_LEN, "output has the trailer");

	for (i = out_len - TRAILER_LEN; ok && i < out_len; i++)
		ok = ASSERT_EQ(out[i], TRAILER_BYTE, "trailer byte unchanged");
	return ok;
}

static const struct pkt_spec q_tcp_natted = {
	TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .proto = IPPROTO_TCP,
	.sport = 40200, .dport = 443, .tcp_flags = TCP_SYN, .seq = 1000,
	.ttl = 63, .ip_id = 0x0101 };

#define FRAG_NEEDED_FROM_WAN                                                  \
	.ingress = WAN,                                                       \
	.in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .ttl = 64,      \
		.icmp_type = ICMP_DEST_UNREACH, .icmp_code = ICMP_FRAG_NEEDED, \
		.icmp_seq = 1400 },                                           \
	.in_quote = &q_tcp_natted, .mutate = mut_trailer

static const struct fixture fx_quote[] = {
	{ .name = "tcp SYN", TCP_OUT(40200, TCP_SYN, 1000, 0),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  TCP_OUT_NAT(40200, TCP_SYN, 1000, 0) },
	/* 20 bytes of IP header and 4 of TCP: less than the 8 bytes of L4
	 * every error quotes (RFC 792), whatever follows in the frame. */
	{ .name = "24-byte quote, then a trailer: not keyed",
	  FRAG_NEEDED_FROM_WAN, .quote_len = 24,
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
	/* 28 bytes: the ports are quoted, the TCP checksum is not (it is in
	 * the trailer): translated, the trailer left alone, the outer
	 * checksum valid (check_forwarded). */
	{ .name = "28-byte quote, then a trailer: translated, trailer kept",
	  FRAG_NEEDED_FROM_WAN, .quote_len = 28,
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_ICMP_ERROR,
	  .check = trailer_untouched },
};

static const struct test tests[] = {
	{ "icmp_quote_within_ip_packet", true, STEPS(fx_quote) },
};

FIXTURE_MAIN(tests)
