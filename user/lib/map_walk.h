/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every entry of a BPF map, read in batches: a walk key by key
 * (bpf_map_get_next_key, then bpf_map_lookup_elem) costs two system calls
 * an entry, four million for `xnat status` over a million connections;
 * BPF_MAP_LOOKUP_BATCH reads thousands of entries a call.
 */
#ifndef XNAT_LIB_MAP_WALK_H
#define XNAT_LIB_MAP_WALK_H

#include <linux/types.h>

/* Called for each entry: 0 goes on, a negative errno stops the walk and
 * is its result. */
typedef int (*map_walk_fn)(const void *key, const void *value, void *ctx);

/*
 * Call EACH(key, value, CTX) (NULL: count only) for every entry of the
 * map FD, whose keys and
 * values must be KEY_SIZE and VALUE_SIZE bytes (-EPROTO if the map's are
 * not: a pinned map of another layout). Not for per-CPU maps (-EINVAL).
 * Maps without batch operations (e.g. a device hash map) are walked key by key.
 * Entries added or removed during the walk may or may not be seen, as
 * with any walk of a live map. Returns the number of entries seen, or
 * EACH's error, or -errno.
 */
long map_walk(int fd, __u32 key_size, __u32 value_size, map_walk_fn each,
	      void *ctx);

#endif /* XNAT_LIB_MAP_WALK_H */
