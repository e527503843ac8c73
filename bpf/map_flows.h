/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flow table's definition, one for the programs that share it: the
 * data path (maps.h) and the flow control program (flow_ctl.bpf.c), which
 * userspace loads reusing the data path's pinned table, so the two
 * definitions must match.
 */
#ifndef XNAT_MAP_FLOWS_H
#define XNAT_MAP_FLOWS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xnat_common.h"

/* Both directions of every connection. A plain (not LRU) hash: when it is
 * full, new connections go to the kernel instead of evicting live ones.
 * max_entries is set from [flows] max (times two) before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct flow_key);
	__type(value, struct flow_value);
	__uint(max_entries, 2 * 65536);
} xnat_flows SEC(".maps");

#endif /* XNAT_MAP_FLOWS_H */
