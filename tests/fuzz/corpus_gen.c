// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes the fuzzer's seed corpus (tests/fuzz/corpus/): small hand-made
 * frames per protocol and direction, built with the unit tests' packet
 * builders (tests/unit/pkt.h) on the unit fixture's addresses, aimed at the
 * flows fuzz_xdp.c installs before it fuzzes (UDP 40000, TCP 40001, echo
 * id 40002, UDP6 40003, TCP6 40004 from the LAN host, a forward on TCP
 * 8080 from the WAN gateway's port 50000) and at what is around them:
 * new flows, fragments, TTL 1, options, bad checksums, ICMP errors,
 * unsolicited and spoofed inbound. Each file is one fuzz input: a control
 * byte (bit 0: arrives on the WAN port) and the frame.
 *
 *   .output/fuzz/corpus_gen DIR     (make fuzz-corpus)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "fixture.h"

#define WAN_IN 1

/* A payload that makes a 1514-byte frame: over the ports' MTU of 1500. */
static const char big[1480 - 8 + 1];

struct seed {
	const char *name;
	uint8_t ctl;
	struct pkt_spec spec;
	enum { PLAIN, CSUM0, BAD_L4, BAD_IP, FRAG_FIRST, FRAG_LATER, OPTS,
	       VLAN, ARP, GRE, ICMP_ERR, NO_DF, TCP_MSS, V6_EXT } kind;
	struct pkt_spec quote; /* ICMP_ERR: the quoted packet */
};

#define LAN4(p, sp, dp) FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, \
	.proto = p, .sport = sp, .dport = dp
#define WAN4(p, sp, dp) FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, \
	.proto = p, .sport = sp, .dport = dp
#define LAN6(p, sp, dp) FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW, \
	.proto = p, .sport = sp, .dport = dp
#define WAN6(p, sp, dp) FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST, \
	.proto = p, .sport = sp, .dport = dp

static const struct seed seeds[] = {
	/* From the LAN. */
	{ "lan-udp4-flow", 0, { LAN4(IPPROTO_UDP, 40000, 53) } },
	{ "lan-udp4-new", 0, { LAN4(IPPROTO_UDP, 41000, 53) } },
	{ "lan-udp4-nocsum", 0, { LAN4(IPPROTO_UDP, 40000, 53) }, CSUM0 },
	{ "lan-udp4-badcsum", 0, { LAN4(IPPROTO_UDP, 40000, 53) }, BAD_L4 },
	{ "lan-udp4-badipcsum", 0, { LAN4(IPPROTO_UDP, 40000, 53) }, BAD_IP },
	{ "lan-udp4-ttl1", 0, { LAN4(IPPROTO_UDP, 40000, 53), .ttl = 1 } },
	{ "lan-udp4-frag-first", 0, { LAN4(IPPROTO_UDP, 40000, 53),
	  .ip_id = 77 }, FRAG_FIRST },
	{ "lan-udp4-frag-later", 0, { LAN4(IPPROTO_UDP, 40000, 53),
	  .ip_id = 77 }, FRAG_LATER },
	{ "lan-udp4-options", 0, { LAN4(IPPROTO_UDP, 40000, 53) }, OPTS },
	{ "lan-udp4-vlan", 0, { LAN4(IPPROTO_UDP, 40000, 53) }, VLAN },
	{ "lan-arp", 0, { FROM_LAN, .saddr = LAN_HOST, .daddr = LAN_ROUTER }, ARP },
	{ "lan-gre", 0, { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW }, GRE },
	{ "lan-tcp4-ack", 0, { LAN4(IPPROTO_TCP, 40001, 443),
	  .tcp_flags = TCP_ACK | TCP_PSH, .seq = 1001, .ack_seq = 5001 } },
	{ "lan-tcp4-syn-new", 0, { LAN4(IPPROTO_TCP, 41001, 443),
	  .tcp_flags = TCP_SYN, .seq = 7 } },
	{ "lan-tcp4-fin", 0, { LAN4(IPPROTO_TCP, 40001, 443),
	  .tcp_flags = TCP_FIN | TCP_ACK, .seq = 1001, .ack_seq = 5001 } },
	{ "lan-tcp4-rst", 0, { LAN4(IPPROTO_TCP, 40001, 443),
	  .tcp_flags = TCP_RST, .seq = 1001 } },
	{ "lan-tcp4-badcsum", 0, { LAN4(IPPROTO_TCP, 40001, 443),
	  .tcp_flags = TCP_ACK, .seq = 1001, .ack_seq = 5001 }, BAD_L4 },
	{ "lan-tcp4-hairpin", 0, { FROM_LAN, .saddr = LAN_HOST,
	  .daddr = NAT_ADDR, .proto = IPPROTO_TCP, .sport = 41002,
	  .dport = 8080, .tcp_flags = TCP_SYN } },
	{ "lan-icmp4-echo", 0, { LAN4(IPPROTO_ICMP, 0, 0), .icmp_type = 8,
	  .icmp_id = 40002, .icmp_seq = 2 } },
	{ "lan-icmp4-echo-new", 0, { LAN4(IPPROTO_ICMP, 0, 0), .icmp_type = 8,
	  .icmp_id = 41003, .icmp_seq = 1 } },
	{ "lan-icmp4-unreach", 0, { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
	  .icmp_type = 3, .icmp_code = 3 }, ICMP_ERR,
	  { FROM_WAN, .saddr = WAN_GW, .daddr = LAN_HOST, .proto = IPPROTO_UDP,
	    .sport = 53, .dport = 40000 } },
	{ "lan-udp6-flow", 0, { LAN6(IPPROTO_UDP, 40003, 53) } },
	{ "lan-tcp6-ack", 0, { LAN6(IPPROTO_TCP, 40004, 443),
	  .tcp_flags = TCP_ACK, .seq = 2001, .ack_seq = 9001 } },
	{ "lan-icmp6-echo", 0, { LAN6(IPPROTO_ICMPV6, 0, 0), .icmp_type = 128,
	  .icmp_id = 40005, .icmp_seq = 1 } },

	{ "lan-udp4-no-route", 0, { FROM_LAN, .saddr = LAN_HOST,
	  .daddr = "198.18.200.5", .proto = IPPROTO_UDP, .sport = 40000,
	  .dport = 53 } },
	{ "lan-udp4-no-neigh", 0, { FROM_LAN, .saddr = LAN_HOST,
	  .daddr = WAN_NONEIGH, .proto = IPPROTO_UDP, .sport = 40000,
	  .dport = 53 } },
	{ "lan-udp4-too-big-df", 0, { LAN4(IPPROTO_UDP, 40000, 53),
	  .payload = big, .payload_len = sizeof(big) } },
	{ "lan-udp4-too-big", 0, { LAN4(IPPROTO_UDP, 40000, 53),
	  .payload = big, .payload_len = sizeof(big) }, NO_DF },

	{ "lan-tcp4-syn-mss", 0, { LAN4(IPPROTO_TCP, 41004, 443),
	  .tcp_flags = TCP_SYN, .seq = 9, .payload = "\x02\x04\x05\xb4",
	  .payload_len = 4 }, TCP_MSS },
	/* MSS clamping (bpf/mss.h): an MSS at an odd offset, after a NOP. */
	{ "lan-tcp4-syn-mss-odd", 0, { LAN4(IPPROTO_TCP, 41005, 443),
	  .tcp_flags = TCP_SYN, .seq = 9,
	  .payload = "\x01\x02\x04\x05\xb4\x01\x01\x01", .payload_len = 8 },
	  TCP_MSS },
	{ "lan-udp6-hop-by-hop", 0, { LAN6(IPPROTO_UDP, 40003, 53),
	  .ip_id = 0 }, V6_EXT },
	/* TCP behind extension headers is tracked and clamped too. */
	{ "lan-tcp6-ack-hop-by-hop", 0, { LAN6(IPPROTO_TCP, 40004, 443),
	  .tcp_flags = TCP_ACK, .seq = 2001, .ack_seq = 9001, .ip_id = 0 },
	  V6_EXT },
	{ "lan-tcp6-syn-destopts", 0, { LAN6(IPPROTO_TCP, 41006, 443),
	  .tcp_flags = TCP_SYN, .seq = 5, .ip_id = 3 }, V6_EXT },

	/* From the WAN. */
	{ "wan-udp4-reply", WAN_IN, { WAN4(IPPROTO_UDP, 53, 40000) } },
	{ "wan-udp4-reply-nocsum", WAN_IN, { WAN4(IPPROTO_UDP, 53, 40000) }, CSUM0 },
	{ "wan-udp4-reply-badcsum", WAN_IN, { WAN4(IPPROTO_UDP, 53, 40000) }, BAD_L4 },
	{ "wan-udp4-reply-ttl1", WAN_IN, { WAN4(IPPROTO_UDP, 53, 40000), .ttl = 1 } },
	{ "wan-udp4-reply-frag-first", WAN_IN, { WAN4(IPPROTO_UDP, 53, 40000),
	  .ip_id = 99 }, FRAG_FIRST },
	{ "wan-udp4-reply-frag-later", WAN_IN, { WAN4(IPPROTO_UDP, 53, 40000),
	  .ip_id = 99 }, FRAG_LATER },
	{ "wan-udp4-unsolicited", WAN_IN, { WAN4(IPPROTO_UDP, 53, 30000) } },
	{ "wan-udp4-other-peer", WAN_IN, { FROM_WAN, .saddr = "198.19.0.7",
	  .daddr = NAT_ADDR, .proto = IPPROTO_UDP, .sport = 53,
	  .dport = 40000 } },
	{ "wan-udp4-reply-too-big", WAN_IN, { WAN4(IPPROTO_UDP, 53, 40000),
	  .payload = big, .payload_len = sizeof(big) }, NO_DF },
	{ "wan-udp4-kernel-port", WAN_IN, { WAN4(IPPROTO_UDP, 53, 1000) } },
	{ "wan-udp4-to-lan-host", WAN_IN, { FROM_WAN, .saddr = WAN_GW,
	  .daddr = LAN_HOST, .proto = IPPROTO_UDP, .sport = 53, .dport = 40000 } },
	{ "wan-udp4-forward", WAN_IN, { WAN4(IPPROTO_UDP, 50002, 5353) } },
	{ "wan-tcp4-synack", WAN_IN, { WAN4(IPPROTO_TCP, 443, 40001),
	  .tcp_flags = TCP_SYN | TCP_ACK, .seq = 5000, .ack_seq = 1001 } },
	{ "wan-tcp4-rst", WAN_IN, { WAN4(IPPROTO_TCP, 443, 40001),
	  .tcp_flags = TCP_RST, .seq = 123456 } },
	{ "wan-tcp4-forward-syn", WAN_IN, { WAN4(IPPROTO_TCP, 50001, 8080),
	  .tcp_flags = TCP_SYN, .seq = 11 } },
	{ "wan-tcp4-forward-ack", WAN_IN, { WAN4(IPPROTO_TCP, 50000, 8080),
	  .tcp_flags = TCP_ACK, .seq = 3001, .ack_seq = 77 } },
	{ "wan-tcp4-spoofed-lan-src", WAN_IN, { FROM_WAN, .saddr = LAN_HOST,
	  .daddr = NAT_ADDR, .proto = IPPROTO_TCP, .sport = 50003,
	  .dport = 8080, .tcp_flags = TCP_SYN } },
	{ "wan-icmp4-echoreply", WAN_IN, { WAN4(IPPROTO_ICMP, 0, 0),
	  .icmp_type = 0, .icmp_id = 40002, .icmp_seq = 2 } },
	{ "wan-icmp4-echo-to-router", WAN_IN, { WAN4(IPPROTO_ICMP, 0, 0),
	  .icmp_type = 8, .icmp_id = 9, .icmp_seq = 1 } },
	{ "wan-icmp4-fragneeded-udp", WAN_IN, { FROM_WAN, .saddr = WAN_GW,
	  .daddr = NAT_ADDR, .icmp_type = 3, .icmp_code = 4, .icmp_seq = 1280 },
	  ICMP_ERR, { FROM_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		      .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 } },
	{ "wan-icmp4-ttl-exceeded-tcp", WAN_IN, { FROM_WAN, .saddr = WAN_GW,
	  .daddr = NAT_ADDR, .icmp_type = 11 }, ICMP_ERR,
	  { FROM_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .proto = IPPROTO_TCP,
	    .sport = 40001, .dport = 443, .tcp_flags = TCP_ACK } },
	{ "wan-icmp4-unreach-echo", WAN_IN, { FROM_WAN, .saddr = WAN_GW,
	  .daddr = NAT_ADDR, .icmp_type = 3, .icmp_code = 1 }, ICMP_ERR,
	  { FROM_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .proto = IPPROTO_ICMP,
	    .icmp_type = 8, .icmp_id = 40002 } },
	{ "wan-udp6-reply", WAN_IN, { WAN6(IPPROTO_UDP, 53, 40003) } },
	{ "wan-udp6-unsolicited", WAN_IN, { WAN6(IPPROTO_UDP, 53, 30001) } },
	{ "wan-udp6-reply-frag-first", WAN_IN, { WAN6(IPPROTO_UDP, 53, 40003),
	  .ip_id = 1 }, V6_EXT },
	{ "wan-udp6-reply-frag-later", WAN_IN, { WAN6(IPPROTO_UDP, 53, 40003),
	  .ip_id = 2 }, V6_EXT },
	{ "wan-tcp6-synack", WAN_IN, { WAN6(IPPROTO_TCP, 443, 40004),
	  .tcp_flags = TCP_SYN | TCP_ACK, .seq = 9000, .ack_seq = 2001 } },
	{ "wan-tcp6-rst-destopts", WAN_IN, { WAN6(IPPROTO_TCP, 443, 40004),
	  .tcp_flags = TCP_RST, .seq = 123456, .ip_id = 3 }, V6_EXT },
	{ "wan-tcp6-ack-frag-first", WAN_IN, { WAN6(IPPROTO_TCP, 443, 40004),
	  .tcp_flags = TCP_ACK, .seq = 9001, .ack_seq = 2001, .ip_id = 1 },
	  V6_EXT },
	{ "wan-icmp6-toobig-udp", WAN_IN, { FROM_WAN, .saddr = WAN6_GW,
	  .daddr = LAN6_HOST, .icmp_type = 2, .icmp_seq = 1280 }, ICMP_ERR,
	  { FROM_WAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
	    .proto = IPPROTO_UDP, .sport = 40003, .dport = 53 } },
};

/*
 * IPv6 with one extension header between the fixed header and UDP or
 * TCP: ip_id 0 a hop-by-hop header (PadN), 1 the first fragment of a
 * datagram (offset 0, M), 2 a later one (offset 16, the transport header
 * gone), 3 a Destination Options header (PadN). The transport checksum is
 * the one of the whole datagram as built: extension headers are not in
 * the pseudo-header's length.
 */
static size_t build_v6_ext(uint8_t *buf, const struct pkt_spec *spec)
{
	size_t len = pkt_build(buf, spec), l3 = sizeof(struct ethhdr);
	uint8_t *ip6 = buf + l3, ext[8] = { 0 };
	uint16_t plen = (uint16_t)(len - l3 - 40);

	ext[0] = ip6[6]; /* next header: what the fixed header said */
	if (spec->ip_id == 0 || spec->ip_id == 3) {
		ip6[6] = spec->ip_id ? 60 : 0; /* destination options, hop-by-hop */
		ext[2] = 1; /* PadN, 4 bytes of padding */
		ext[3] = 4;
	} else {
		ip6[6] = 44; /* fragment */
		ext[3] = spec->ip_id == 1 ? 1 : 16; /* offset 0 M / offset 16 */
		ext[7] = 0x42; /* identification */
	}
	if (spec->ip_id == 2) {
		/* The datagram from byte 16 on, behind the header. */
		memmove(ip6 + 40 + 8, ip6 + 40 + 16, plen - 16);
		plen -= 16;
	} else {
		memmove(ip6 + 40 + 8, ip6 + 40, plen);
	}
	memcpy(ip6 + 40, ext, 8);
	plen += 8;
	ip6[4] = plen >> 8;
	ip6[5] = plen & 0xff;
	return l3 + 40 + plen;
}

/* A TCP SYN whose payload (4 bytes) becomes an option: data offset 6. */
static size_t build_tcp_opt(uint8_t *buf, const struct pkt_spec *spec)
{
	size_t len = pkt_build(buf, spec);
	struct pkt_v4_tcp *p = (void *)buf;
	uint8_t *l4 = (uint8_t *)&p->tcp;

	/* The payload is the options: a multiple of 4 bytes. */
	p->tcp.doff = 5 + spec->payload_len / 4;
	l4[16] = l4[17] = 0;
	csum_put16(l4 + 16, csum_oracle_l4_v4(&p->ip.saddr, &p->ip.daddr,
					      IPPROTO_TCP, l4,
					      20 + spec->payload_len, 16));
	return len;
}

static size_t build(uint8_t *buf, const struct seed *s)
{
	struct pkt_spec spec = s->spec;
	struct pkt_v4_udp *p = (void *)buf;
	size_t len;
	uint8_t *l4;

	switch (s->kind) {
	case OPTS:
		return pkt_build_v4_opts(buf, &spec);
	case VLAN:
		return pkt_build_vlan_v4_udp(buf, &spec);
	case ARP:
		return pkt_build_arp(buf, &spec);
	case GRE:
		return pkt_build_v4_gre(buf, &spec);
	case ICMP_ERR:
		return pkt_build_icmp_error(buf, &spec, &s->quote, 0);
	case V6_EXT:
		return build_v6_ext(buf, &spec);
	case TCP_MSS:
		return build_tcp_opt(buf, &spec);
	case CSUM0:
		spec.udp_csum_zero = true;
		break;
	default:
		break;
	}
	len = pkt_build(buf, &spec);
	l4 = (uint8_t *)&p->udp;
	switch (s->kind) {
	case BAD_L4:
		l4[pkt_l4_csum_off(spec.proto)] ^= 0x5a;
		break;
	case BAD_IP:
		p->ip.check ^= htons(0x0101);
		break;
	case NO_DF:
		p->ip.frag_off = 0;
		pkt_ipv4_fix_csum(&p->ip);
		break;
	case FRAG_FIRST: /* MF, offset 0: the UDP header and 16 bytes */
		p->ip.frag_off = htons(0x2000);
		p->ip.tot_len = htons(20 + 8 + 16);
		pkt_ipv4_fix_csum(&p->ip);
		len = 14 + 20 + 8 + 16;
		break;
	case FRAG_LATER: /* offset 24, the last 7 bytes of the payload */
		p->ip.frag_off = htons(3);
		p->ip.tot_len = htons(20 + 7);
		memmove(l4, l4 + 24, 7);
		pkt_ipv4_fix_csum(&p->ip);
		len = 14 + 20 + 7;
		break;
	default:
		break;
	}
	return len;
}

int main(int argc, char **argv)
{
	uint8_t buf[PKT_MAX];
	char path[4096];
	size_t i, len;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(seeds); i++) {
		len = build(buf, &seeds[i]);
		snprintf(path, sizeof(path), "%s/%s", argv[1], seeds[i].name);
		f = fopen(path, "wb");
		if (!f || fputc(seeds[i].ctl, f) == EOF ||
		    fwrite(buf, 1, len, f) != len || fclose(f)) {
			fprintf(stderr, "corpus_gen: writing %s: %s\n", path,
				strerror(errno));
			return 2;
		}
	}
	printf("%zu seeds in %s\n", ARRAY_SIZE(seeds), argv[1]);
	return 0;
}
