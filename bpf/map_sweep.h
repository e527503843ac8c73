/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flow sweeper's (sweep.h) shared state, one definition for the
 * programs that use it: the data path (maps.h) and `xnat flows delete`'s
 * program (flow_ctl.bpf.c), which userspace loads reusing the data path's
 * pinned maps, so the two definitions must match.
 */
#ifndef XNAT_MAP_SWEEP_H
#define XNAT_MAP_SWEEP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xnat_common.h"

/* The sweeper: one timer for the whole table, and how many connections
 * the queue holds (approximate: for the batch size only). */
struct flow_sweep {
	struct bpf_timer timer;
	__u64 queued;
	__u64 swept;   /* connections the sweeper ended */
};

/* Connections `xnat flows delete` marked (flow_ctl.bpf.c): the sweeper
 * ends them at its next tick, which that program starts at once. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__type(value, struct flow_key);
	__uint(max_entries, 4096);
} xnat_expire_now SEC(".maps");

/* The sweeper's timer and queue count (one entry). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct flow_sweep);
	__uint(max_entries, 1);
} xnat_sweep SEC(".maps");

#endif /* XNAT_MAP_SWEEP_H */
