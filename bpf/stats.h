/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Counting where each packet went. Every exit of the program goes through
 * count(), so the counters add up to the packets seen.
 */
#ifndef XNAT_STATS_H
#define XNAT_STATS_H

#include "maps.h"
#include "parsing.h"
#include "trace.h"
#include "fuzz.h"

static __always_inline int count(const struct pkt *p, __u32 reason, int action)
{
	struct xnat_counter *c = bpf_map_lookup_elem(&xnat_stats, &reason);

	/* Per-CPU value: no other CPU writes it, plain adds are exact. */
	if (c) {
		c->packets++;
		c->bytes += p->len;
	}
	trace_packet(p, reason, action);
	return action;
}

#ifdef XNAT_FUZZ
/* Each exit is a branch of its own, and the harness checks that a run
 * counts exactly once (fuzz.h). */
#define count(p, reason, action)                                              \
	(fuzz_counted(reason), XNAT_COV(), count(p, reason, action))
#endif

#endif /* XNAT_STATS_H */
