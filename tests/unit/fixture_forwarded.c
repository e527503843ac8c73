// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_forwarded() (fixture.h): what every frame the program redirected
 * must satisfy whatever its rewrite, checked on each redirected output of
 * the fixture's runs (fixture.c). Checksums are the independent oracle's
 * (csum_oracle.h), never the data path's own.
 */
#include <stdbool.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include "csum_oracle.h"
#include "fixture.h"

/* The length of FRAME's Ethernet header, 802.1Q tag included, and the
 * EtherType after it. */
static size_t l2_split(const uint8_t *frame, size_t len, uint16_t *etype)
{
	size_t l2 = sizeof(struct ethhdr);

	*etype = len >= l2 ? (uint16_t)(frame[12] << 8 | frame[13]) : 0;
	if (*etype == ETH_P_8021Q && len >= l2 + 4) {
		*etype = (uint16_t)(frame[16] << 8 | frame[17]);
		l2 += 4;
	}
	return l2;
}

/* IPv4: TTL one less, header checksum by the oracle, and unless the packet
 * is a fragment (whose L4 checksum covers the whole datagram) the L4
 * checksum by the oracle (a UDP checksum of 0 stays 0). */
static bool fwd_v4_ok(const uint8_t *in, const uint8_t *out, size_t len)
{
	const struct iphdr *i = (const void *)in, *o = (const void *)out;
	size_t ihl = o->ihl * 4u, tot = ntohs(o->tot_len);
	const uint8_t *l4 = out + ihl;
	uint16_t l4_len = (uint16_t)(tot - ihl);
	bool ok;

	if (!ASSERT_TRUE(ihl >= 20 && ihl <= tot && tot <= len,
			 "IPv4 header and total length within the frame"))
		return false;
	ok = ASSERT_EQ(o->ttl, i->ttl - 1, "TTL decremented by 1");
	ok &= ASSERT_TRUE(csum_oracle_ipv4_hdr_ok(o),
			  "IPv4 header checksum verifies");
	ok &= ASSERT_EQ(csum_get16(&o->check), csum_oracle_ipv4_hdr(o),
			"IPv4 header checksum == oracle");
	if (ntohs(o->frag_off) & 0x3fff)
		return ok;
	if (o->protocol == IPPROTO_UDP && !csum_get16(in + i->ihl * 4 + 6)) {
		ok &= ASSERT_EQ(csum_get16(l4 + 6), 0, "UDP checksum 0 kept");
	} else if (o->protocol == IPPROTO_ICMP) {
		ok &= ASSERT_EQ(csum_get16(l4 + 2), csum_oracle_icmp4(l4, l4_len),
				"ICMP checksum == oracle");
	} else {
		long off = pkt_l4_csum_off(o->protocol);

		ok &= ASSERT_TRUE(csum_oracle_l4_v4_ok(&o->saddr, &o->daddr,
						       o->protocol, l4, l4_len),
				  "L4 checksum verifies");
		ok &= ASSERT_EQ(csum_get16(l4 + off),
				csum_oracle_l4_v4(&o->saddr, &o->daddr,
						  o->protocol, l4, l4_len, off),
				"L4 checksum == oracle");
	}
	return ok;
}

/* IPv6 is routed: the L4 segment leaves as it came, but for a TCP SYN's
 * options and checksum (MSS clamping, bpf/mss.h, may lower the MSS; the
 * checksum is verified on its own). */
static bool v6_l4_same(const void *in, const void *out, size_t len,
		       uint8_t proto)
{
	const uint8_t *i = in, *o = out;
	size_t doff;

	if (proto != IPPROTO_TCP || len < 20 || !(i[13] & TCP_SYN))
		return !memcmp(i, o, len);
	doff = (size_t)(i[12] >> 4) * 4;
	return doff <= len && !memcmp(i, o, 16) && !memcmp(i + 18, o + 18, 2) &&
	       !memcmp(i + doff, o + doff, len - doff);
}

/* IPv6 is routed: hop limit one less, addresses, extension headers and
 * the L4 segment found behind them unchanged (a fragment's whole payload:
 * its checksum is the datagram's), the L4 checksum valid. */
static bool fwd_v6_ok(const uint8_t *in, const uint8_t *out, size_t len)
{
	const struct ipv6hdr *i = (const void *)in, *o = (const void *)out;
	size_t plen = ntohs(o->payload_len);
	uint8_t proto = 0;
	long l4;
	bool ok;

	if (!ASSERT_TRUE(len >= sizeof(*o) && plen <= len - sizeof(*o),
			 "IPv6 payload within the frame"))
		return false;
	ok = ASSERT_EQ(o->hop_limit, i->hop_limit - 1,
		       "hop limit decremented by 1");
	ok &= ASSERT_TRUE(!memcmp(&o->saddr, &i->saddr, 32),
			  "IPv6 addresses unchanged");
	l4 = pkt_v6_l4(out, plen, &proto);
	if (l4 < 0)
		return ok & ASSERT_TRUE(!memcmp(in + 40, out + 40, plen),
					"IPv6 fragment unchanged");
	ok &= ASSERT_TRUE(!memcmp(in + 40, out + 40, l4 - 40),
			  "IPv6 extension headers unchanged");
	ok &= ASSERT_TRUE(v6_l4_same(in + l4, out + l4, 40 + plen - l4, proto),
			  "IPv6 L4 segment unchanged");
	ok &= ASSERT_TRUE(csum_oracle_l4_v6_ok(&o->saddr, &o->daddr, proto,
					       out + l4, 40 + plen - l4),
			  "IPv6 L4 checksum verifies");
	return ok;
}

/*
 * What every redirected frame must satisfy whatever the rewrite (and
 * whatever 802.1Q tag it came or leaves with): the same IP packet length,
 * and by family fwd_v4_ok() or fwd_v6_ok(). run_expect() checks it on
 * every redirected output.
 */
bool check_forwarded(const uint8_t *in, size_t in_len,
		     const uint8_t *out, size_t out_len)
{
	uint16_t in_type, out_type;
	size_t in_l2 = l2_split(in, in_len, &in_type);
	size_t out_l2 = l2_split(out, out_len, &out_type);
	bool ok = ASSERT_EQ(out_len - out_l2, in_len - in_l2,
			    "redirected packet length");

	ok &= ASSERT_EQ(out_type, in_type, "EtherType kept");
	if (!ok || out_len < out_l2 + 20)
		return false;
	if (out_type == ETH_P_IP)
		return fwd_v4_ok(in + in_l2, out + out_l2, out_len - out_l2);
	if (out_type == ETH_P_IPV6)
		return fwd_v6_ok(in + in_l2, out + out_l2, out_len - out_l2);
	return ASSERT_TRUE(false, "redirected frame is IP");
}
