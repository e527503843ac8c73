/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Offload mode's table filter: which packets are worth a look-up in the
 * flow table. A new connection's packets are the kernel's until it has
 * accepted them, so for them the look-up always misses, and the table is
 * sized for a million connections: its bucket is a cache and TLB miss,
 * about 5 % of a new connection's cost (docs/BENCHMARKS.md). A bit per
 * hash of the flow key (flow_key_hash_fast() in bpf/flow_hash.h: every
 * hit computes it), set when an entry with that key
 * is installed, says "maybe there"; a clear bit, "certainly not", and the
 * look-up is skipped.
 *
 * Bits cannot be cleared one by one (keys share them), so they are
 * cleared all at once, by starting a new epoch: the install that finds
 * them half set clears every word (a bpf_loop of OFFLOADED_WORDS stores,
 * once per OFFLOADED_BITS / 2 installs), so that a hit reads its word
 * and nothing else. (Words that carried their epoch in their high half,
 * compared with the current one on every hit, cost a hit a second read:
 * about 6 % of it, docs/BENCHMARKS.md.) An entry whose bit that clears
 * is missed until its connection is offloaded again: its next packet goes
 * up (the kernel still owns the connection and forwards it, and its mark
 * chain marks it again), a later one finds the mark, the install finds
 * the entry there (EEXIST) and sets the bit again. One packet through the kernel for
 * each live entry, two when the first-packet filter (ct_seen.h) lets the
 * first go up unasked; so an epoch ends only when its bits are half set
 * and few entries are live (at most an eighth of the bits); else the
 * filter goes off for OFFLOADED_RETRY installs, its words all set (every
 * packet looks the table up, as without it), and then tries a new epoch.
 *
 * SYN, FIN and RST are always looked up: a hit's FIN or RST takes the
 * entry off the fast path (offload_hit), which a missed one would not.
 *
 * Shared between CPUs without atomics: an update lost in a race, or a bit
 * set while another CPU clears the words, leaves a bit clear, which costs
 * its entry one packet through the kernel, as an epoch does; a word read
 * while the filter goes off may still be clear, with the same cost.
 */
#ifndef XNAT_OFFLOAD_FILTER_H
#define XNAT_OFFLOAD_FILTER_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flow_hash.h"
#include "maps.h"
#include "parsing.h"

/* Opaque here, as struct nf_conn in conntrack.h: libbpf matches kfunc
 * prototypes by kind, so a struct with a placeholder member stands for
 * the kernel's. */
struct bpf_map {
	int opaque;
};

/* The number of entries of a map (Linux 6.6), weak: 0 on a kernel
 * without it. */
extern __s64 bpf_map_sum_elem_count(const struct bpf_map *map) __ksym __weak;

static __always_inline struct offloaded_epoch *offloaded_epoch_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnat_offloaded_epoch, &zero);
}

/* May P's key have an entry in xnat_flows? 0: certainly not. */
static __always_inline int offload_filter_may_have(const struct pkt *p)
{
	__u32 word, bit, *w;

	if (p->tcp_flags & (XNAT_TCP_SYN | XNAT_TCP_FIN | XNAT_TCP_RST))
		return 1;
	flow_key_hash_fast(&p->key, &word, &bit);
	w = bpf_map_lookup_elem(&xnat_offloaded, &word);
	return !w || (*w >> bit & 1);
}

/* bpf_loop body: word I of the filter set to *VALUE. */
static int offload_filter_word_set(__u32 i, void *value)
{
	__u32 *w = bpf_map_lookup_elem(&xnat_offloaded, &i);

	if (w)
		*w = *(__u32 *)value;
	return 0;
}

/* Every word of the filter set to VALUE: 0 for a new epoch, every bit
 * for off. */
static __always_inline void offload_filter_set_all(__u32 value)
{
	bpf_loop(OFFLOADED_WORDS, offload_filter_word_set, &value, 0);
}

/* A new epoch: every bit clear. */
static __always_inline void offload_filter_clear(struct offloaded_epoch *e)
{
	offload_filter_set_all(0);
	e->epoch++;
	e->set = 0;
	e->resets++;
}

/* KEY has an entry in xnat_flows now. */
static __always_inline void offload_filter_add(const struct flow_key *key)
{
	struct offloaded_epoch *e = offloaded_epoch_get();
	__u32 word, bit, *w;
	__s64 live;

	if (!e)
		return;
	if (e->off) {
		/* Every bit is set while off; the last install of the wait
		 * starts an epoch with its own bit. */
		if (--e->off)
			return;
		offload_filter_clear(e);
	} else if (e->set >= OFFLOADED_BITS / 2) {
		/* Half full: a new epoch costs each live entry a packet
		 * through the kernel. Without the count (a kernel before
		 * 6.6), assume many. */
		live = bpf_map_sum_elem_count ?
			bpf_map_sum_elem_count((const struct bpf_map *)&xnat_flows) :
			OFFLOADED_BITS;
		if (live >= OFFLOADED_BITS / 8) {
			offload_filter_set_all(~0U);
			e->off = OFFLOADED_RETRY;
			return;
		}
		offload_filter_clear(e);
	}
	flow_key_hash_fast(key, &word, &bit);
	bit = 1U << bit;
	w = bpf_map_lookup_elem(&xnat_offloaded, &word);
	if (w && !(*w & bit)) {
		*w |= bit;
		e->set++;
	}
}

#endif /* XNAT_OFFLOAD_FILTER_H */
