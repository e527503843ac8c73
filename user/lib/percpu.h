/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Sums over CPUs of one entry of a per-CPU map: the counters of the router,
 * the sink and the bench's programs all live in BPF_MAP_TYPE_PERCPU_ARRAY
 * maps, one value per possible CPU, which userspace adds up.
 */
#ifndef XNAT_LIB_PERCPU_H
#define XNAT_LIB_PERCPU_H

#include <linux/types.h>
#include "xnat_common.h"

/* Entry KEY of a per-CPU map of struct xnat_counter, summed. 0 or -errno
 * (SUM is zero then). */
int percpu_counter_sum(int map_fd, __u32 key, struct xnat_counter *sum);
/* Entry KEY of a per-CPU map of __u64, summed. 0 or -errno (SUM zero). */
int percpu_u64_sum(int map_fd, __u32 key, __u64 *sum);

#endif /* XNAT_LIB_PERCPU_H */
