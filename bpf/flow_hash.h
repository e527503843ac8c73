/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A 32-bit hash of a flow key for offload mode's bit filters (ct_seen.h,
 * offload_filter.h): murmur3_32 (Austin Appleby's public-domain
 * MurmurHash3, its x86_32 body and finalizer) over the key's fields, each
 * address folded to one word. Every bit of the result depends on every
 * field that tells flows apart: a filter may take its bits from anywhere
 * in it. A multiply-xorshift chain used before kept the low bits of its
 * products, which depend on the low bits of the inputs only: a million
 * bench flows (hosts and ports counting up) hashed to 283,489 distinct
 * values of 22 bits, against 889,107 for murmur3, what random values give
 * (docs/BENCHMARKS.md). Userspace includes it too, to set a filter's bit
 * for an entry it wrote itself (the microbenchmark, the unit tests).
 */
#ifndef XNAT_FLOW_HASH_H
#define XNAT_FLOW_HASH_H

#include <linux/types.h>
#include "xnat_common.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

static __always_inline __u32 flow_hash_rol(__u32 x, int r)
{
	return x << r | x >> (32 - r);
}

/* One word into murmur3's running hash. */
static __always_inline __u32 flow_hash_mix(__u32 h, __u32 k)
{
	k *= 0xcc9e2d51u;
	k = flow_hash_rol(k, 15);
	k *= 0x1b873593u;
	h ^= k;
	h = flow_hash_rol(h, 13);
	return h * 5 + 0xe6546b64u;
}

static __always_inline __u32 flow_key_hash(const struct flow_key *k)
{
	__u32 h;

	h = flow_hash_mix(0, k->saddr.v6[0] ^ k->saddr.v6[1] ^
			     k->saddr.v6[2] ^ k->saddr.v6[3]);
	h = flow_hash_mix(h, k->daddr.v6[0] ^ k->daddr.v6[1] ^
			     k->daddr.v6[2] ^ k->daddr.v6[3]);
	h = flow_hash_mix(h, (__u32)k->sport << 16 | k->dport);
	h = flow_hash_mix(h, k->proto | (__u32)k->family << 8 |
			     (__u32)k->vid << 16);
	h = flow_hash_mix(h, k->ifindex);
	/* Finalizer: the length in bytes of the five words, then the mix. */
	h ^= 20;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/*
 * A cheaper hash for a filter every packet consults (offload_filter.h):
 * the key's words folded, then two independent multiplications (Knuth's
 * multiplicative hashing), whose high bits depend on every bit of the
 * fold. A few cycles where murmur3's chain of five rounds costs tens,
 * measured on every fast-path hit. Keys whose folds are equal collide,
 * which costs a filter a look-up too many, never a wrong answer.
 * *WORD: the top OFFLOADED_WORDS_LOG2 bits of one product; *BIT: 5 bits
 * of the other.
 */
static __always_inline void flow_key_hash_fast(const struct flow_key *k,
					       __u32 *word, __u32 *bit)
{
	__u32 x = k->saddr.v6[0] ^ k->saddr.v6[1] ^ k->saddr.v6[2] ^
		  k->saddr.v6[3];
	__u32 y = k->daddr.v6[0] ^ k->daddr.v6[1] ^ k->daddr.v6[2] ^
		  k->daddr.v6[3];

	x ^= flow_hash_rol(y, 16) ^ ((__u32)k->sport << 16 | k->dport) ^
	     (k->proto | (__u32)k->family << 8 | (__u32)k->vid << 16) ^
	     flow_hash_rol(k->ifindex, 8);
	*word = (x * 0x9e3779b1u) >> (32 - OFFLOADED_WORDS_LOG2);
	*bit = (x * 0x85ebca6bu) >> 27;
}

#endif /* XNAT_FLOW_HASH_H */
