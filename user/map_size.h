/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Sizes of the tables that are not plain multiples of [flows] max: the
 * flow table (one entry more than two per connection, for its buckets),
 * the mappings and the external ports they own (see map_size.c).
 */
#ifndef XNAT_MAP_SIZE_H
#define XNAT_MAP_SIZE_H

#include <linux/types.h>
#include "config.h"

/* External ports one NAT address has, and so mappings (each owns one). */
#define PORTS_PER_ADDR 65536U

/* [flows] max from which the flow table gets one entry more, to double
 * its buckets (map_size.c). */
#define FLOW_BUCKETS_DOUBLE_MIN 262144U

/* max_entries for the flow table (MAP_FLOWS) under CFG, in the current
 * network namespace's pin directory. */
__u32 map_size_flow_table(const struct config *cfg);

/* max_entries for the pinned map NAME (MAP_MAPPINGS or MAP_PORTS) under
 * CFG, in the current network namespace's pin directory. */
__u32 map_size_nat_table(const struct config *cfg, const char *name);

#endif /* XNAT_MAP_SIZE_H */
