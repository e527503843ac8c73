// SPDX-License-Identifier: GPL-2.0-only
/* Every entry of a BPF map, read in batches; see map_walk.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "map_walk.h"

/* Entries a call: a hash map's batch ends on a bucket boundary, and
 * fails with ENOSPC only if one bucket holds more than this. */
#define MAP_WALK_BATCH 4096
/* Room for a batch token: the largest key of a map walked here. */
#define MAP_WALK_TOKEN 64
/* ENOTSUPP, the kernel's own "no such operation" (not in libc). */
#define MAP_WALK_ENOTSUPP 524

/* Key by key, for maps without batch operations. */
static long walk_by_key(int fd, __u32 key_size, char *buf, char *value,
			map_walk_fn each, void *ctx)
{
	char *key = buf, *next = buf + key_size;
	long n = 0;
	int rc;

	for (void *prev = NULL; !bpf_map_get_next_key(fd, prev, next); prev = key) {
		memcpy(key, next, key_size);
		if (bpf_map_lookup_elem(fd, key, value))
			continue; /* gone meanwhile */
		rc = each ? each(key, value, ctx) : 0;
		if (rc)
			return rc;
		n++;
	}
	return errno == ENOENT ? n : -errno;
}

/* Batch by batch. -EOPNOTSUPP when the map has no batch operations. */
static long walk_by_batch(int fd, __u32 key_size, __u32 value_size,
			  char *keys, char *values, map_walk_fn each,
			  void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	/* Where the next batch starts: a bucket number in a hash map, a key
	 * (KEY_SIZE bytes) in the kernel's generic batch. */
	char token[2][MAP_WALK_TOKEN];
	__u32 count, i;
	bool first = true;
	long n = 0;
	int err, rc;

	do {
		count = MAP_WALK_BATCH;
		err = bpf_map_lookup_batch(fd, first ? NULL : token[0], token[1],
					   keys, values, &count, &opts);
		if (err && errno != ENOENT) {
			if (first && (errno == EINVAL || errno == EOPNOTSUPP ||
				   errno == MAP_WALK_ENOTSUPP))
				return -EOPNOTSUPP;
			return -errno;
		}
		for (i = 0; each && i < count; i++) {
			rc = each(keys + (size_t)i * key_size,
				  values + (size_t)i * value_size, ctx);
			if (rc)
				return rc;
		}
		n += count;
		first = false;
		memcpy(token[0], token[1], sizeof(token[0]));
	} while (!err);
	return n;
}

long map_walk(int fd, __u32 key_size, __u32 value_size, map_walk_fn each,
	      void *ctx)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char *keys, *values;
	long n;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type == BPF_MAP_TYPE_PERCPU_HASH ||
	    info.type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	    info.type == BPF_MAP_TYPE_LRU_PERCPU_HASH)
		return -EINVAL; /* a value per CPU: not VALUE_SIZE bytes */
	if (info.key_size != key_size || info.value_size != value_size)
		return -EPROTO;
	if (key_size > MAP_WALK_TOKEN)
		return -E2BIG;
	keys = calloc(MAP_WALK_BATCH, key_size ? key_size : 1);
	values = calloc(MAP_WALK_BATCH, value_size ? value_size : 1);
	if (!keys || !values) {
		free(keys);
		free(values);
		return -ENOMEM;
	}
	n = walk_by_batch(fd, key_size, value_size, keys, values, each, ctx);
	if (n == -EOPNOTSUPP)
		n = walk_by_key(fd, key_size, keys, values, each, ctx);
	free(keys);
	free(values);
	return n;
}
