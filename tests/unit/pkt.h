/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Packet builders for the XDP unit tests. Each frame layout is a __packed C
 * struct (Ethernet, IP, L4 header, payload), as in the kernel selftests'
 * network_helpers.h pkt_v4 and xdp_do_redirect.c. A struct pkt_spec says
 * what the packet carries; pkt_build() lays it out and fills every length
 * and checksum with the oracle (csum_oracle.h), so a built packet is always
 * well formed. Tests that need a broken one build a good one and break it.
 */
#ifndef XNAT_TEST_PKT_H
#define XNAT_TEST_PKT_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#include "csum_oracle.h"

#ifndef __packed
#define __packed __attribute__((packed))
#endif

/* Biggest frame a test builds (fits BPF_PROG_RUN's one page). */
#define PKT_MAX 2048

struct pkt_v4_udp {
	struct ethhdr eth;
	struct iphdr ip;
	struct udphdr udp;
	uint8_t payload[];
} __packed;

struct pkt_v4_tcp {
	struct ethhdr eth;
	struct iphdr ip;
	struct tcphdr tcp;
	uint8_t payload[];
} __packed;

struct pkt_v4_icmp {
	struct ethhdr eth;
	struct iphdr ip;
	struct icmphdr icmp;
	uint8_t payload[];
} __packed;

struct pkt_v6_udp {
	struct ethhdr eth;
	struct ipv6hdr ip6;
	struct udphdr udp;
	uint8_t payload[];
} __packed;

struct pkt_v6_tcp {
	struct ethhdr eth;
	struct ipv6hdr ip6;
	struct tcphdr tcp;
	uint8_t payload[];
} __packed;

/* ICMPv6 echo: type, code, checksum, id, sequence (RFC 4443 4.1). */
struct pkt_v6_icmp {
	struct ethhdr eth;
	struct ipv6hdr ip6;
	struct icmp6hdr icmp6;
	uint8_t payload[];
} __packed;

/* IPv4 with 4 bytes of options (IHL 6): one NOP, then End of options
 * list; any L4 header (UDP or TCP, pkt_build_v4_opts) and payload after. */
struct pkt_v4_opts {
	struct ethhdr eth;
	struct iphdr ip;
	uint8_t opts[4];
	uint8_t l4[];
} __packed;

/* 802.1Q tagged IPv4 UDP. */
struct pkt_vlan_v4_udp {
	uint8_t h_dest[ETH_ALEN];
	uint8_t h_source[ETH_ALEN];
	__be16 tpid;  /* ETH_P_8021Q */
	__be16 tci;
	__be16 proto; /* ETH_P_IP */
	struct iphdr ip;
	struct udphdr udp;
	uint8_t payload[];
} __packed;

/* Ethernet ARP for IPv4 (RFC 826). */
struct pkt_arp {
	struct ethhdr eth;
	__be16 htype;
	__be16 ptype;
	uint8_t hlen;
	uint8_t plen;
	__be16 oper;
	uint8_t sha[ETH_ALEN];
	uint8_t spa[4];
	uint8_t tha[ETH_ALEN];
	uint8_t tpa[4];
} __packed;

/* GRE (RFC 2784) carrying a few bytes. */
struct pkt_v4_gre {
	struct ethhdr eth;
	struct iphdr ip;
	__be16 gre_flags;
	__be16 gre_proto;
	uint8_t payload[];
} __packed;

_Static_assert(sizeof(struct pkt_v4_udp) == 14 + 20 + 8, "pkt_v4_udp");
_Static_assert(sizeof(struct pkt_v4_tcp) == 14 + 20 + 20, "pkt_v4_tcp");
_Static_assert(sizeof(struct pkt_v4_icmp) == 14 + 20 + 8, "pkt_v4_icmp");
_Static_assert(sizeof(struct pkt_v6_udp) == 14 + 40 + 8, "pkt_v6_udp");
_Static_assert(sizeof(struct pkt_v6_icmp) == 14 + 40 + 8, "pkt_v6_icmp");
_Static_assert(sizeof(struct pkt_v4_opts) == 14 + 24, "pkt_v4_opts");
_Static_assert(sizeof(struct pkt_vlan_v4_udp) == 18 + 20 + 8, "vlan");
_Static_assert(sizeof(struct pkt_arp) == 14 + 28, "arp");

/* What a packet carries. Unset fields get defaults (see pkt_build()). */
struct pkt_spec {
	uint8_t smac[ETH_ALEN];
	uint8_t dmac[ETH_ALEN];
	const char *saddr;      /* IPv4 or IPv6 literal; family follows */
	const char *daddr;
	uint8_t proto;          /* IPPROTO_UDP, _TCP, _ICMP, _ICMPV6 */
	uint8_t ttl;            /* TTL or hop limit; 0 means 64 */
	uint8_t tos;
	uint16_t ip_id;         /* IPv4 identification */
	uint16_t sport, dport;  /* TCP/UDP, host order */
	uint8_t tcp_flags;      /* byte 13 of the TCP header */
	uint32_t seq, ack_seq;
	uint8_t icmp_type;      /* ICMP/ICMPv6 type; code 0 unless set */
	uint8_t icmp_code;
	uint16_t icmp_id, icmp_seq;
	const void *payload;    /* NULL: pkt_default_payload */
	uint16_t payload_len;
	bool udp_csum_zero;     /* IPv4 UDP sent without checksum */
	uint16_t pad_to;        /* pad the frame with zeros to this length
				   (Ethernet minimum: 60); IP lengths keep
				   the real size */
};

/* A packet on one line: UDP or TCP SA:SP -> DA:DP, then the MAC pair
 * (FROM_LAN...) and any other fields of struct pkt_spec. (The MACs come
 * last: expanded, they hold commas, which only a variadic argument can
 * pass on to another macro.) */
#define UDP_PKT(sa, da, sp, dp, ...)                                         \
	{ .saddr = sa, .daddr = da, .proto = IPPROTO_UDP, .sport = sp,        \
	  .dport = dp, __VA_ARGS__ }
#define TCP_PKT(sa, da, sp, dp, ...)                                         \
	{ .saddr = sa, .daddr = da, .proto = IPPROTO_TCP, .sport = sp,        \
	  .dport = dp, __VA_ARGS__ }

/* Odd length on purpose: the checksum's padding byte is exercised. */
static const char pkt_default_payload[] = "xnat unit test payload!";
#define PKT_DEFAULT_PAYLOAD_LEN (sizeof(pkt_default_payload) - 1)

static inline bool pkt_is_v6(const struct pkt_spec *s)
{
	return strchr(s->saddr, ':') != NULL;
}

/*
 * The helpers below take untyped pointers into the frame: headers sit at
 * odd offsets (14 for IP), so each is built in an aligned local struct and
 * copied in.
 */

/* Recompute the IPv4 header checksum in place (after a test edits it). */
static inline void pkt_ipv4_fix_csum(void *ip)
{
	uint8_t *b = ip;

	b[10] = b[11] = 0;
	csum_put16(b + 10, csum_oracle_ipv4_hdr(b));
}

/* The same for an untagged frame at BUF, returning LEN: the end of a
 * mutator (struct fixture's mutate) that edited the IPv4 header. */
static inline size_t pkt_ipv4_refix(uint8_t *buf, size_t len)
{
	pkt_ipv4_fix_csum(buf + sizeof(struct ethhdr));
	return len;
}

static inline void pkt_fill_eth(void *dst, const struct pkt_spec *s,
				uint16_t proto)
{
	struct ethhdr eth;

	memcpy(eth.h_dest, s->dmac, ETH_ALEN);
	memcpy(eth.h_source, s->smac, ETH_ALEN);
	eth.h_proto = htons(proto);
	memcpy(dst, &eth, sizeof(eth));
}

static inline void pkt_fill_ipv4(void *dst, const struct pkt_spec *s,
				 uint8_t proto, uint16_t l4_len)
{
	struct iphdr ip;

	memset(&ip, 0, sizeof(ip));
	ip.version = 4;
	ip.ihl = 5;
	ip.tos = s->tos;
	ip.tot_len = htons(sizeof(ip) + l4_len);
	ip.id = htons(s->ip_id);
	ip.frag_off = htons(0x4000); /* DF */
	ip.ttl = s->ttl ? s->ttl : 64;
	ip.protocol = proto;
	inet_pton(AF_INET, s->saddr, &ip.saddr);
	inet_pton(AF_INET, s->daddr, &ip.daddr);
	memcpy(dst, &ip, sizeof(ip));
	pkt_ipv4_fix_csum(dst);
}

static inline void pkt_fill_ipv6(void *dst, const struct pkt_spec *s,
				 uint8_t nexthdr, uint16_t l4_len)
{
	struct ipv6hdr ip6;

	memset(&ip6, 0, sizeof(ip6));
	ip6.version = 6;
	ip6.payload_len = htons(l4_len);
	ip6.nexthdr = nexthdr;
	ip6.hop_limit = s->ttl ? s->ttl : 64;
	inet_pton(AF_INET6, s->saddr, &ip6.saddr);
	inet_pton(AF_INET6, s->daddr, &ip6.daddr);
	memcpy(dst, &ip6, sizeof(ip6));
}

/* The L4 header and payload at L4, checksum left zero. Returns its length. */
static inline uint16_t pkt_fill_l4(uint8_t *l4, const struct pkt_spec *s)
{
	const void *pl = s->payload ? s->payload : pkt_default_payload;
	uint16_t plen = s->payload ? s->payload_len : PKT_DEFAULT_PAYLOAD_LEN;
	uint16_t hlen;

	switch (s->proto) {
	case IPPROTO_UDP: {
		struct udphdr uh = { .len = htons(sizeof(uh) + plen) };

		hlen = sizeof(uh);
		memcpy(l4, &uh, hlen);
		break;
	}
	case IPPROTO_TCP: {
		struct tcphdr th = { .seq = htonl(s->seq),
				     .ack_seq = htonl(s->ack_seq), .doff = 5,
				     .window = htons(64240) };

		hlen = sizeof(th);
		memcpy(l4, &th, hlen);
		l4[13] = s->tcp_flags;
		break;
	}
	default: { /* ICMP and ICMPv6 share the echo layout */
		struct icmphdr ih = { .type = s->icmp_type,
				      .code = s->icmp_code };

		ih.un.echo.id = htons(s->icmp_id);
		ih.un.echo.sequence = htons(s->icmp_seq);
		hlen = sizeof(ih);
		memcpy(l4, &ih, hlen);
		break;
	}
	}
	if (s->proto == IPPROTO_UDP || s->proto == IPPROTO_TCP) {
		/* Both headers start with the source and destination port. */
		uint16_t ports[2] = { htons(s->sport), htons(s->dport) };

		memcpy(l4, ports, sizeof(ports));
	}
	memcpy(l4 + hlen, pl, plen);
	return hlen + plen;
}

/* Offset of the checksum inside the L4 header of PROTO. */
static inline long pkt_l4_csum_off(uint8_t proto)
{
	return proto == IPPROTO_TCP ? 16 : proto == IPPROTO_UDP ? 6 : 2;
}

/* The L4 checksum of a v4 packet (IP header at IP, L4 at L4), from scratch. */
static inline void pkt_fill_l4_csum_v4(const void *ip, uint8_t *l4,
				       uint16_t len, const struct pkt_spec *s)
{
	const uint8_t *h = ip;
	uint8_t proto = h[9];
	long off = pkt_l4_csum_off(proto);

	l4[off] = l4[off + 1] = 0;
	if (proto == IPPROTO_ICMP)
		csum_put16(l4 + off, csum_oracle_icmp4(l4, len));
	else if (proto == IPPROTO_UDP && s && s->udp_csum_zero)
		return;
	else if (proto == IPPROTO_UDP || proto == IPPROTO_TCP)
		csum_put16(l4 + off, csum_oracle_l4_v4(h + 12, h + 16, proto,
						       l4, len, off));
}

/* Frame length after padding (the buffer is zeroed already). */
static inline size_t pkt_pad(size_t len, const struct pkt_spec *s)
{
	return s->pad_to > len ? s->pad_to : len;
}

/*
 * Lay out S in BUF (PKT_MAX bytes) as Ethernet + IPv4/IPv6 + L4 + payload
 * and return the frame length.
 */
static inline size_t pkt_build(uint8_t *buf, const struct pkt_spec *s)
{
	uint16_t l4_len;

	memset(buf, 0, PKT_MAX);
	if (pkt_is_v6(s)) {
		struct pkt_v6_udp *p = (struct pkt_v6_udp *)buf; /* same prefix */
		uint8_t *l4 = (uint8_t *)&p->udp;
		long off = pkt_l4_csum_off(s->proto);

		uint8_t *l3 = buf + sizeof(struct ethhdr);

		pkt_fill_eth(buf, s, ETH_P_IPV6);
		l4_len = pkt_fill_l4(l4, s);
		pkt_fill_ipv6(l3, s, s->proto, l4_len);
		csum_put16(l4 + off, csum_oracle_l4_v6(l3 + 8, l3 + 24, s->proto,
						       l4, l4_len, off));
		return pkt_pad(sizeof(struct ethhdr) + sizeof(struct ipv6hdr) +
			       l4_len, s);
	} else {
		struct pkt_v4_udp *p = (struct pkt_v4_udp *)buf; /* same prefix */
		uint8_t *l4 = (uint8_t *)&p->udp;

		uint8_t *l3 = buf + sizeof(struct ethhdr);

		pkt_fill_eth(buf, s, ETH_P_IP);
		l4_len = pkt_fill_l4(l4, s);
		pkt_fill_ipv4(l3, s, s->proto, l4_len);
		pkt_fill_l4_csum_v4(l3, l4, l4_len, s);
		return pkt_pad(sizeof(struct ethhdr) + sizeof(struct iphdr) +
			       l4_len, s);
	}
}

/* IPv4 with IHL 6 (a NOP and End-of-options) carrying S's UDP or TCP. */
static inline size_t pkt_build_v4_opts(uint8_t *buf, const struct pkt_spec *s)
{
	struct pkt_v4_opts *p = (struct pkt_v4_opts *)buf;
	uint8_t *l4 = p->l4;
	uint16_t l4_len;

	memset(buf, 0, PKT_MAX);
	pkt_fill_eth(&p->eth, s, ETH_P_IP);
	l4_len = pkt_fill_l4(l4, s);
	pkt_fill_ipv4(&p->ip, s, s->proto, l4_len + sizeof(p->opts));
	p->ip.ihl = 6;
	p->opts[0] = 1; /* NOP */
	p->opts[1] = 0; /* EOL */
	pkt_ipv4_fix_csum(&p->ip);
	pkt_fill_l4_csum_v4(&p->ip, l4, l4_len, s);
	return (size_t)(l4 - buf) + l4_len;
}

/* 802.1Q (VID 10) tagged IPv4 UDP. */
static inline size_t pkt_build_vlan_v4_udp(uint8_t *buf, const struct pkt_spec *s)
{
	struct pkt_vlan_v4_udp *p = (struct pkt_vlan_v4_udp *)buf;
	uint16_t l4_len;

	memset(buf, 0, PKT_MAX);
	memcpy(p->h_dest, s->dmac, ETH_ALEN);
	memcpy(p->h_source, s->smac, ETH_ALEN);
	p->tpid = htons(ETH_P_8021Q);
	p->tci = htons(10);
	p->proto = htons(ETH_P_IP);
	l4_len = pkt_fill_l4((uint8_t *)&p->udp, s);
	pkt_fill_ipv4(&p->ip, s, IPPROTO_UDP, l4_len);
	pkt_fill_l4_csum_v4(&p->ip, (uint8_t *)&p->udp, l4_len, s);
	return sizeof(*p) - sizeof(p->udp) + l4_len;
}

/* ARP request "who has TPA, tell SPA" (addresses from S). */
static inline size_t pkt_build_arp(uint8_t *buf, const struct pkt_spec *s)
{
	struct pkt_arp *p = (struct pkt_arp *)buf;

	memset(buf, 0, PKT_MAX);
	pkt_fill_eth(&p->eth, s, ETH_P_ARP);
	p->htype = htons(1);
	p->ptype = htons(ETH_P_IP);
	p->hlen = ETH_ALEN;
	p->plen = 4;
	p->oper = htons(1);
	memcpy(p->sha, s->smac, ETH_ALEN);
	inet_pton(AF_INET, s->saddr, p->spa);
	inet_pton(AF_INET, s->daddr, p->tpa);
	return sizeof(*p);
}

/* IPv4 GRE (protocol 47) with a few bytes of payload. */
static inline size_t pkt_build_v4_gre(uint8_t *buf, const struct pkt_spec *s)
{
	struct pkt_v4_gre *p = (struct pkt_v4_gre *)buf;
	uint16_t plen = 16;

	memset(buf, 0, PKT_MAX);
	pkt_fill_eth(&p->eth, s, ETH_P_IP);
	p->gre_flags = 0;
	p->gre_proto = htons(ETH_P_IP);
	memset(p->payload, 0x5a, plen);
	pkt_fill_ipv4(&p->ip, s, 47, 4 + plen);
	return sizeof(*p) + plen;
}

/* IPv6 extension headers (RFC 8200 4) the tests put before the L4 header. */
#define PKT_NH_HOP 0
#define PKT_NH_ROUTING 43
#define PKT_NH_FRAGMENT 44
#define PKT_NH_DEST 60

/* An 8-byte destination options header (RFC 8200 4.6) followed by NH:
 * one PadN option filling it. */
static inline void pkt_ext_destopts(uint8_t *ext, uint8_t nh)
{
	memset(ext, 0, 8);
	ext[0] = nh;
	ext[2] = 1; /* PadN */
	ext[3] = 4; /* of 4 bytes: 2 + 2 + 4 = 8 */
}

/* A fragment header (RFC 8200 4.5) followed by NH: offset OFF (bytes, a
 * multiple of 8), M flag MORE, identification ID (network order). Offset
 * 0 without M is an atomic fragment (RFC 6946), a whole datagram. */
static inline void pkt_ext_frag(uint8_t *ext, uint8_t nh, uint16_t off,
				bool more, uint32_t id)
{
	uint16_t fo = htons(off | (more ? 1 : 0));

	memset(ext, 0, 8);
	ext[0] = nh;
	memcpy(ext + 2, &fo, 2);
	memcpy(ext + 4, &id, 4);
}

/*
 * Put the extension headers EXT (EXT_LEN bytes, each one's first byte the
 * next header, the last one's S's L4 protocol) between the IPv6 header
 * and the L4 header of the untagged frame BUF (LEN bytes, as pkt_build
 * left it); FIRST is the type of the first of them. The L4 checksum stays
 * valid: its pseudo-header has the upper-layer length and protocol, which
 * the headers do not change (RFC 8200 8.1). Returns the new length.
 */
static inline size_t pkt_v6_ext_insert(uint8_t *buf, size_t len,
				       uint8_t first, const uint8_t *ext,
				       size_t ext_len)
{
	uint8_t *ip6 = buf + sizeof(struct ethhdr);
	size_t hdrs = sizeof(struct ethhdr) + sizeof(struct ipv6hdr);
	uint16_t plen = htons((uint16_t)(len - hdrs + ext_len));

	memmove(ip6 + 40 + ext_len, ip6 + 40, len - hdrs);
	memcpy(ip6 + 40, ext, ext_len);
	ip6[6] = first;
	memcpy(ip6 + 4, &plen, 2);
	return len + ext_len;
}

/*
 * The L4 segment of the IPv6 packet at IP6 (PLEN bytes of payload): its
 * offset from IP6 and its protocol, past hop-by-hop, routing and
 * destination options headers and an atomic fragment header. -1 for a
 * fragment of a datagram, which has no whole segment, or a chain that
 * does not fit.
 */
static inline long pkt_v6_l4(const uint8_t *ip6, size_t plen, uint8_t *proto)
{
	size_t off = 40, end = 40 + plen;
	uint8_t nh = ip6[6];

	for (int i = 0; i < 8; i++) {
		if (nh != PKT_NH_HOP && nh != PKT_NH_ROUTING &&
		    nh != PKT_NH_DEST && nh != PKT_NH_FRAGMENT)
			break;
		if (off + 8 > end)
			return -1;
		if (nh == PKT_NH_FRAGMENT) {
			if ((ip6[off + 2] << 8 | ip6[off + 3]) & 0xfff9)
				return -1;
			nh = ip6[off];
			off += 8;
			continue;
		}
		nh = ip6[off];
		off += (ip6[off + 1] + 1) * 8;
	}
	*proto = nh;
	return off <= end ? (long)off : -1;
}

/*
 * An ICMP (or ICMPv6) error from OUTER (type, code, addresses, MACs; for
 * "fragmentation needed" / "packet too big" the MTU goes in icmp_seq) whose
 * body quotes the IP packet described by QUOTED, cut to QUOTE_LEN bytes
 * (0: whole), as the router that dropped it would send it.
 */
static inline size_t pkt_build_icmp_error(uint8_t *buf,
					  const struct pkt_spec *outer,
					  const struct pkt_spec *quoted,
					  size_t quote_len)
{
	uint8_t inner[PKT_MAX];
	struct pkt_spec o = *outer;
	size_t len = pkt_build(inner, quoted) - sizeof(struct ethhdr);

	if (quote_len && quote_len < len)
		len = quote_len;
	o.proto = pkt_is_v6(outer) ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
	o.icmp_id = 0; /* unused field */
	o.payload = inner + sizeof(struct ethhdr);
	o.payload_len = len;
	return pkt_build(buf, &o);
}

#endif /* XNAT_TEST_PKT_H */
