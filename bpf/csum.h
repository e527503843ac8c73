/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Incremental Internet checksum updates (RFC 1624: HC' = ~(~HC + ~m + m')).
 * A flow's rewrite is fixed, so its delta (the ~m + m' part) is computed
 * once when the flow is created and each packet pays one add and a fold.
 * All values are summed as they sit in the packet (network order); one's
 * complement sums do not care about byte order as long as it is consistent.
 */
#ifndef XNAT_CSUM_H
#define XNAT_CSUM_H

#include <linux/types.h>

static __always_inline __u32 csum_add(__u32 sum, __u32 addend)
{
	sum += addend;
	return sum + (sum < addend);
}

static __always_inline __u16 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* Delta for a 32-bit field changing from OLD to NEW. */
static __always_inline __u32 csum_delta32(__u32 delta, __be32 old, __be32 new)
{
	return csum_add(csum_add(delta, ~(__u32)old), (__u32)new);
}

static __always_inline __u32 csum_delta16(__u32 delta, __be16 old, __be16 new)
{
	return csum_add(csum_add(delta, (__u16)~old), (__u16)new);
}

/* Apply a precomputed DELTA to the checksum field CSUM. */
static __always_inline __u16 csum_apply(__u16 csum, __u32 delta)
{
	return ~csum_fold(csum_add((__u16)~csum, delta));
}

/*
 * TTL sits in the high byte of the (ttl, protocol) word: decrementing it
 * adds 0x0100 to the checksum in network order. From include/net/ip.h
 * ip_decrease_ttl().
 */
static __always_inline void ipv4_decrease_ttl(struct iphdr *ip)
{
	__u32 check = ip->check;

	check += bpf_htons(0x0100);
	ip->check = (__sum16)(check + (check >= 0xFFFF));
	ip->ttl--;
}

#endif /* XNAT_CSUM_H */
