// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of malformed packets: truncated or inconsistent IPv4, IPv6,
 * TCP, UDP and ICMP headers, each dropped as drop_malformed, one test per
 * fixture. Fixtures and runner: fixture.h.
 */
#include "fixture.h"

/* ---- Malformed --------------------------------------------------------- */

static size_t mut_ip_truncated(uint8_t *buf, size_t len)
{
	return sizeof(struct ethhdr) + 10;
}

/* IHL 4 (16 bytes). The checksum is left as built: the program does not
 * verify it, and the header must be refused for its length alone. */
static size_t mut_ihl4(uint8_t *buf, size_t len)
{
	((struct pkt_v4_udp *)buf)->ip.ihl = 4;
	return len;
}

static size_t mut_bad_version(uint8_t *buf, size_t len)
{
	((struct pkt_v4_udp *)buf)->ip.version = 6;
	return pkt_ipv4_refix(buf, len);
}

static size_t mut_totlen_over_frame(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->ip.tot_len = htons(ntohs(p->ip.tot_len) + 1);
	return pkt_ipv4_refix(buf, len);
}

static size_t mut_totlen_under_ihl(uint8_t *buf, size_t len)
{
	((struct pkt_v4_udp *)buf)->ip.tot_len = htons(16);
	return pkt_ipv4_refix(buf, len);
}

static size_t mut_doff4(uint8_t *buf, size_t len)
{
	((struct pkt_v4_tcp *)buf)->tcp.doff = 4;
	return len;
}

static size_t mut_doff_beyond(uint8_t *buf, size_t len)
{
	((struct pkt_v4_tcp *)buf)->tcp.doff = 15; /* 60 bytes; 20+23 there */
	return len;
}

/* An IPv4 packet (20-byte header) cut to L4_LEN bytes after its header:
 * IP length, checksum and frame agree. */
static size_t ipv4_cut_l4(uint8_t *buf, uint16_t l4_len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->ip.tot_len = htons(20 + l4_len);
	pkt_ipv4_fix_csum(&p->ip);
	return sizeof(struct ethhdr) + 20 + l4_len;
}

/* TCP header cut to 10 bytes: IP length and frame agree. */
static size_t mut_tcp_truncated(uint8_t *buf, size_t len)
{
	return ipv4_cut_l4(buf, 10);
}

/* Frame cut inside the TCP header while tot_len claims the whole packet. */
static size_t mut_tcp_frame_cut(uint8_t *buf, size_t len)
{
	return sizeof(struct ethhdr) + 20 + 10;
}

static size_t mut_udp_len_over(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->udp.len = htons(ntohs(p->udp.len) + 1);
	return len;
}

static size_t mut_udp_len_under(uint8_t *buf, size_t len)
{
	((struct pkt_v4_udp *)buf)->udp.len = htons(7);
	return len;
}

static size_t mut_udp_truncated(uint8_t *buf, size_t len)
{
	return ipv4_cut_l4(buf, 4);
}

static size_t mut_icmp_truncated(uint8_t *buf, size_t len)
{
	return ipv4_cut_l4(buf, 4);
}

static size_t mut_ip6_plen_over(uint8_t *buf, size_t len)
{
	struct pkt_v6_udp *p = (void *)buf;

	p->ip6.payload_len = htons(ntohs(p->ip6.payload_len) + 1);
	return len;
}

static size_t mut_ip6_truncated(uint8_t *buf, size_t len)
{
	return sizeof(struct ethhdr) + 30;
}

static size_t mut_ip6_udp_len_over(uint8_t *buf, size_t len)
{
	struct pkt_v6_udp *p = (void *)buf;

	p->udp.len = htons(ntohs(p->udp.len) + 1);
	return len;
}


/* A case of this table: NAME, a well-formed packet from the LAN, the
 * mutator that breaks it; dropped as malformed. */
#define MAL(n, pkt, mut)                                                     \
	{ .name = n, .ingress = LAN, pkt, .mutate = mut, MALFORMED }

static const struct fixture fx_malformed[] = {
	/* 10 bytes in the linear part: dst MAC and half the source. */
	{ .name = "malformed_eth_short", .ingress = LAN, MAL_UDP4,
	  .linear = 10, MALFORMED },
	MAL("malformed_ipv4_truncated", MAL_UDP4, mut_ip_truncated),
	MAL("malformed_ipv4_ihl_4", MAL_UDP4, mut_ihl4),
	MAL("malformed_ipv4_version", MAL_UDP4, mut_bad_version),
	MAL("malformed_ipv4_tot_len_over_frame", MAL_UDP4, mut_totlen_over_frame),
	MAL("malformed_ipv4_tot_len_under_ihl", MAL_UDP4, mut_totlen_under_ihl),
	MAL("malformed_tcp_doff_4", MAL_TCP4, mut_doff4),
	MAL("malformed_tcp_doff_beyond_packet", MAL_TCP4, mut_doff_beyond),
	MAL("malformed_tcp_truncated", MAL_TCP4, mut_tcp_truncated),
	MAL("malformed_tcp_frame_cut", MAL_TCP4, mut_tcp_frame_cut),
	MAL("malformed_udp_len_over_available", MAL_UDP4, mut_udp_len_over),
	MAL("malformed_udp_len_under_8", MAL_UDP4, mut_udp_len_under),
	MAL("malformed_udp_truncated", MAL_UDP4, mut_udp_truncated),
	MAL("malformed_icmp_truncated", MAL_ICMP4, mut_icmp_truncated),
	MAL("malformed_ipv6_payload_len_over_frame", MAL_UDP6, mut_ip6_plen_over),
	MAL("malformed_ipv6_truncated", MAL_UDP6, mut_ip6_truncated),
	MAL("malformed_ipv6_udp_len_over", MAL_UDP6, mut_ip6_udp_len_over),
	{ "malformed_from_wan_udp_len", UDP_WAN_IN(53, 40000), .mutate = mut_udp_len_over, MALFORMED },
};

static const struct test tests[] = {
	{ .each = true, STEPS(fx_malformed) },
};

FIXTURE_MAIN(tests)
