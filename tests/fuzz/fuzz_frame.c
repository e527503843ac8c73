// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fuzzer's own view of a frame (fuzz.h): a parser written from the
 * RFCs' layouts, sharing no code with bpf/parsing.h, that says whether a
 * frame is well formed and forwardable and what state its checksums are in
 * (verified from scratch with tests/unit/csum_oracle.h); and the fix-ups
 * that make a mutated frame's checksums valid again when the input's
 * control byte asks for it.
 */
#include "csum_oracle.h"
#include "fuzz.h"

static bool v4_martian(const uint8_t *s, const uint8_t *d)
{
	return s[0] == 0 || s[0] == 127 || s[0] >= 224 || d[0] == 0 ||
	       d[0] == 127 || d[0] >= 224;
}

static bool v6_bad(const uint8_t *a, bool src)
{
	static const uint8_t zero[16];

	if (a[0] == 0xff || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80))
		return true; /* multicast, link-local */
	if (!memcmp(a, zero, 15) && (a[15] == 0 || a[15] == 1))
		return true; /* unspecified, loopback */
	return false;
}

static bool is_icmp_error(uint8_t proto, uint8_t type)
{
	if (proto == IPPROTO_ICMP)
		return type == 3 || type == 11 || type == 12;
	return type >= 1 && type <= 4;
}

/* The L4 checks of a non-later fragment. */
static const char *l4_malformed(struct parsed *p)
{
	switch (p->proto) {
	case IPPROTO_TCP:
		if (p->l4_len < 20)
			return "TCP header truncated";
		if ((p->l4[12] >> 4) < 5 || (size_t)(p->l4[12] >> 4) * 4 > p->l4_len)
			return "TCP data offset";
		return NULL;
	case IPPROTO_UDP:
		if (p->l4_len < 8)
			return "UDP header truncated";
		if (get16(p->l4 + 4) < 8 || (!p->first && get16(p->l4 + 4) > p->l4_len))
			return "UDP length";
		return NULL;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (p->l4_len < 8)
			return "ICMP header truncated";
		return NULL;
	}
	return NULL;
}

static uint64_t pseudo_sum(const struct parsed *p)
{
	if (p->family == 4)
		return csum_oracle_add(0, p->ip + 12, 8, -1) + p->proto;
	return csum_oracle_add(0, p->ip + 8, 32, -1) + p->proto;
}

/* Checksum state of the L4 segment. */
static void l4_checksum(struct parsed *p)
{
	bool pseudo = p->proto != IPPROTO_ICMP;
	uint64_t acc;

	p->l4_sum = L4_NONE;
	if (p->later || p->malformed)
		return;
	if (p->proto != IPPROTO_TCP && p->proto != IPPROTO_UDP &&
	    p->proto != IPPROTO_ICMP && p->proto != IPPROTO_ICMPV6)
		return;
	if (p->proto == IPPROTO_UDP && p->family == 4 && !get16(p->l4 + 6)) {
		p->l4_sum = L4_UNCHECKED;
		return;
	}
	/* Addresses, protocol and the bytes present: what NAT may change
	 * is in here, the length (which it never changes) is not. */
	acc = pseudo ? pseudo_sum(p) : 0;
	acc = csum_oracle_add(acc, p->l4, p->l4_len, -1);
	p->l4_partial = csum_oracle_fold(acc);
	if (p->first)
		return;
	if (pseudo)
		acc += p->l4_len; /* the pseudo-header's length (RFC 793, 8200) */
	p->l4_sum = csum_oracle_fold(acc) == 0xffff ? L4_VALID : L4_INVALID;
}

/*
 * Walk IPv6's extension headers (RFC 8200 4: hop-by-hop, routing,
 * fragment, destination options; at most 8) to the transport header:
 * p->proto, p->l4, and for a fragment header p->first, p->later and
 * p->frag_id. A chain cut short by the packet's end stops the walk where
 * it is: an unknown protocol then, as any other.
 */
static void v6_walk(struct parsed *p)
{
	const uint8_t *ip6 = p->ip;
	size_t off = 40;

	for (int i = 0; i < 8; i++) {
		const uint8_t *h = ip6 + off;
		uint16_t fo;

		if (p->proto != 0 && p->proto != 43 && p->proto != 44 &&
		    p->proto != 60)
			break;
		if (off + 8 > p->l3_len)
			break;
		if (p->proto == 44) {
			fo = get16(h + 2);
			p->later = fo & 0xfff8;
			p->first = !p->later && (fo & 1);
			p->frag_id = (uint32_t)get16(h + 4) << 16 | get16(h + 6);
			p->proto = h[0];
			off += 8;
			continue;
		}
		if (off + (h[1] + 1) * 8 > p->l3_len)
			break;
		p->proto = h[0];
		off += (h[1] + 1) * 8;
	}
	p->l4 = ip6 + off;
	p->l4_len = p->l3_len - off;
}

void parse(struct parsed *p, const uint8_t *f, size_t len)
{
	size_t off = 14;
	uint16_t type;

	memset(p, 0, sizeof(*p));
	p->f = f;
	p->len = len;
	p->malformed = "not IP";
	if (len < 14)
		return;
	type = get16(f + 12);
	if (type == ETH_P_8021Q) {
		if (len < 18)
			return;
		p->vid = get16(f + 14) & 0xfff;
		type = get16(f + 16);
		off = 18;
	}
	p->ip = f + off;
	if (type == ETH_P_IP) {
		const uint8_t *ip = p->ip;
		size_t avail = len - off;
		uint16_t fo;

		p->family = 4;
		p->malformed = "IPv4 header truncated";
		if (avail < 20)
			return;
		p->ihl = (ip[0] & 0xf) * 4;
		p->l3_len = get16(ip + 2);
		p->ttl = ip[8];
		p->proto = ip[9];
		p->malformed = "IPv4 version, IHL or total length";
		if ((ip[0] >> 4) != 4 || p->ihl < 20 || p->l3_len < p->ihl ||
		    p->l3_len > avail)
			return;
		p->ip_sum_ok = csum_oracle_ipv4_hdr_ok(ip);
		fo = get16(ip + 6);
		p->later = fo & 0x1fff;
		p->first = !p->later && (fo & 0x2000);
		p->frag_id = get16(ip + 4);
		p->l4 = ip + p->ihl;
		p->l4_len = p->l3_len - p->ihl;
		p->malformed = !p->ip_sum_ok ? "IPv4 header checksum" :
			       p->ttl < 1 ? "TTL 0" :
			       v4_martian(ip + 12, ip + 16) ? "martian address" :
			       NULL;
	} else if (type == ETH_P_IPV6) {
		const uint8_t *ip6 = p->ip;
		size_t avail = len - off;

		p->family = 6;
		p->malformed = "IPv6 header truncated";
		if (avail < 40)
			return;
		p->l3_len = 40 + get16(ip6 + 4);
		p->ttl = ip6[7];
		p->proto = ip6[6];
		p->malformed = "IPv6 version or payload length";
		if ((ip6[0] >> 4) != 6 || p->l3_len > avail)
			return;
		v6_walk(p);
		p->malformed = p->ttl < 1 ? "hop limit 0" :
			       v6_bad(ip6 + 8, true) || v6_bad(ip6 + 24, false) ?
			       "martian address" : NULL;
	} else {
		return;
	}
	if (!p->malformed && !p->later)
		p->malformed = l4_malformed(p);
	l4_checksum(p);
	if (!p->malformed && !p->later &&
	    (p->proto == IPPROTO_ICMP || p->proto == IPPROTO_ICMPV6) &&
	    is_icmp_error(p->proto, p->l4[0])) {
		p->icmp_error = true;
		p->quote = p->l4 + 8;
		p->quote_len = p->l4_len - 8;
	}
}

/* Make the IPv4 header checksum (CTL_FIX_IP) and the L4 checksum
 * (CTL_FIX_L4, whole non-fragments only) valid, where the lengths allow. */
void fix_checksums(uint8_t *f, size_t len, uint8_t ctl)
{
	size_t off = 14;
	uint16_t type;
	uint8_t *ip, *l4, proto;
	size_t l4_len;
	long coff;

	if (len < 18)
		return;
	type = get16(f + 12);
	if (type == ETH_P_8021Q) {
		type = get16(f + 16);
		off = 18;
	}
	ip = f + off;
	if (type == ETH_P_IP && len - off >= 20) {
		size_t ihl = (ip[0] & 0xf) * 4, tot = get16(ip + 2);

		if (ihl < 20 || ihl > len - off)
			return;
		if (ctl & CTL_FIX_IP)
			pkt_ipv4_fix_csum(ip);
		if (!(ctl & CTL_FIX_L4) || (get16(ip + 6) & 0x3fff) ||
		    tot < ihl || tot > len - off)
			return;
		proto = ip[9];
		l4 = ip + ihl;
		l4_len = tot - ihl;
		coff = pkt_l4_csum_off(proto);
		if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP &&
		     proto != IPPROTO_ICMP) || l4_len < (size_t)coff + 2)
			return;
		l4[coff] = l4[coff + 1] = 0;
		csum_put16(l4 + coff, proto == IPPROTO_ICMP ?
			   csum_oracle_icmp4(l4, l4_len) :
			   csum_oracle_l4_v4(ip + 12, ip + 16, proto, l4,
					     l4_len, coff));
		if (ctl & CTL_FIX_IP)
			pkt_ipv4_fix_csum(ip); /* in case IHL is over 5 */
	} else if (type == ETH_P_IPV6 && len - off >= 40 &&
		   (ctl & CTL_FIX_L4)) {
		proto = ip[6];
		l4 = ip + 40;
		l4_len = get16(ip + 4);
		coff = pkt_l4_csum_off(proto);
		if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP &&
		     proto != IPPROTO_ICMPV6) || l4_len > len - off - 40 ||
		    l4_len < (size_t)coff + 2)
			return;
		l4[coff] = l4[coff + 1] = 0;
		csum_put16(l4 + coff, csum_oracle_l4_v6(ip + 8, ip + 24, proto,
							l4, l4_len, coff));
	}
}

/* 0x0000 and 0xffff are the same one's complement number. */
bool ones_eq(uint16_t a, uint16_t b)
{
	return a == b || ((a | b) == 0xffff && (a == 0 || b == 0));
}

/* Quoted IPv4 header of an ICMP error: does its checksum verify? -1: no
 * whole option-less IPv4 header quoted. */
int quote_sum_ok(const struct parsed *p)
{
	if (p->family != 4 || p->quote_len < 20 || (p->quote[0] >> 4) != 4 ||
	    (p->quote[0] & 0xf) != 5)
		return -1;
	return csum_oracle_ipv4_hdr_ok(p->quote);
}
