/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Offload mode's first-packet filter: which misses are worth a conntrack
 * lookup. A connection's first packet is the kernel's (it creates and
 * confirms the conntrack entry as it forwards it), so asking conntrack
 * about it finds nothing, at the price of a kfunc call and a walk of the
 * kernel's hash table: measured with perf on a run of new connections,
 * the lookup was about 5 % of a new flow's whole cost
 * (docs/BENCHMARKS.md).
 *
 * One bit per hash of the flow key, 2^18 of them in 32 KiB. A miss whose
 * bit is clear sets it and goes up without a lookup; a miss whose bit is
 * set clears it and asks conntrack. So a flow's second miss is looked up
 * (by then the kernel has its entry) unless a flow sharing its bit missed
 * in between, which costs it one more packet through the kernel; and a
 * flow conntrack does not keep (a firewall drop) is looked up on every
 * second packet only. The filter never decides what is offloaded, only
 * whether a miss is worth asking about: the worst a collision does is a
 * lookup too many or a packet more through the kernel.
 *
 * Shared between CPUs without atomics: two CPUs updating bits of one word
 * at once may lose one update, which is again one of those two outcomes,
 * and a locked instruction per new flow would cost more than it saves.
 */
#ifndef XNAT_CT_SEEN_H
#define XNAT_CT_SEEN_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"

/* A multiply-xorshift mix of the flow key's words: cheap, and its low
 * bits (the bit's place) depend on every field that tells flows apart. */
static __always_inline __u32 ct_seen_hash(const struct flow_key *k)
{
	__u32 s = k->saddr.v6[0] ^ k->saddr.v6[1] ^ k->saddr.v6[2] ^
		  k->saddr.v6[3];
	__u32 d = k->daddr.v6[0] ^ k->daddr.v6[1] ^ k->daddr.v6[2] ^
		  k->daddr.v6[3];
	__u32 h = s * 0x9e3779b1u ^ d;

	h = h * 0x85ebca6bu ^ ((__u32)k->sport << 16 | k->dport);
	h = h * 0xc2b2ae35u ^ (k->proto | k->ifindex << 8);
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	return h;
}

/* Is this miss worth a conntrack lookup? 1 yes (and KEY's bit is
 * cleared), 0 no: its bit was clear, and is set now. */
static __always_inline int ct_seen_ask(const struct flow_key *key)
{
	__u32 h = ct_seen_hash(key), word = (h >> 6) & (CT_SEEN_WORDS - 1);
	__u64 bit = 1ULL << (h & 63), *w;

	w = bpf_map_lookup_elem(&xnat_ct_seen, &word);
	if (!w)
		return 1; /* cannot happen: ask, as without the filter */
	if (*w & bit) {
		*w &= ~bit;
		return 1;
	}
	*w |= bit;
	return 0;
}

#endif /* XNAT_CT_SEEN_H */
