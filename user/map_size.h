/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Sizes of the NAT tables that do not follow [flows] max: the mappings
 * and the external ports they own (see map_size.c).
 */
#ifndef XNAT_MAP_SIZE_H
#define XNAT_MAP_SIZE_H

#include <linux/types.h>
#include "config.h"

/* External ports one NAT address has, and so mappings (each owns one). */
#define PORTS_PER_ADDR 65536U

/* max_entries for the pinned map NAME (MAP_MAPPINGS or MAP_PORTS) under
 * CFG, in the current network namespace's pin directory. */
__u32 map_size_nat_table(const struct config *cfg, const char *name);

#endif /* XNAT_MAP_SIZE_H */
