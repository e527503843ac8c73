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
#include "flow_hash.h"
#include "maps.h"

/* Is this miss worth a conntrack lookup? 1 yes (and KEY's bit is
 * cleared), 0 no: its bit was clear, and is set now. */
static __always_inline int ct_seen_ask(const struct flow_key *key)
{
	__u32 h = flow_key_hash(key), word = (h >> 6) & (CT_SEEN_WORDS - 1);
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
