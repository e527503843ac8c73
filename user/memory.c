// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel memory of the data path's maps: an estimate before they exist
 * (so that `xnat up` refuses a [flows] max the machine cannot hold, before
 * it changes anything), and the kernel's own figure for the pinned maps
 * (`xnat status`). The hash maps are preallocated: their whole size is
 * taken at creation, full or empty. BPF timers (in offload mode one per
 * entry; in both modes one per idle mapping) are allocated as they are
 * armed, on top.
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "memcg.h"
#include "memory.h"
#include "state.h"

/*
 * The kernel's accounting (htab_map_mem_usage() in kernel/bpf/hashtab.c,
 * x86-64): per element a struct htab_elem header, the key and the value
 * each rounded up to 8 bytes; per bucket (a power of two at least the
 * entries) a head and a lock. Arrays (array_map_mem_usage() in
 * kernel/bpf/arraymap.c): the value rounded up to 8 bytes, per CPU for
 * per-CPU ones, which also have a pointer per element.
 */
#define HTAB_ELEM_HDR 48
#define HTAB_BUCKET 16
/* kmalloc size class of a struct bpf_hrtimer. */
#define TIMER_BYTES 128

static unsigned long long round8(unsigned long long n)
{
	return (n + 7) & ~7ULL;
}

static unsigned long long pow2_at_least(unsigned long long n)
{
	unsigned long long p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

unsigned long long mem_map_bytes(enum bpf_map_type type, __u32 key_size,
				 __u32 value_size, __u32 max_entries)
{
	int ncpus = libbpf_num_possible_cpus();
	unsigned long long n = max_entries;

	if (ncpus < 1)
		ncpus = 1;
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
		/* Preallocation keeps a spare element per CPU. */
		return (n + ncpus) * (HTAB_ELEM_HDR + round8(key_size) +
				      round8(value_size)) +
		       pow2_at_least(n) * HTAB_BUCKET;
	case BPF_MAP_TYPE_ARRAY:
		return n * round8(value_size);
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		/* And a pointer per element to its per-CPU copies. */
		return n * (round8(value_size) * ncpus + 8);
	default:
		return n * (round8(key_size) + round8(value_size));
	}
}

unsigned long long mem_timers_bytes(unsigned long long flows_max)
{
	/* Offload mode: a timer per entry, two per connection; xdp mode:
	 * at worst one per mapping (its connections are swept). */
	return 2 * flows_max * TIMER_BYTES;
}

unsigned long long mem_object_bytes(struct bpf_object *obj, const char *pin_dir)
{
	unsigned long long sum = 0;
	struct bpf_map *map;
	char path[256];

	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map))
			continue;
		if (pin_dir) {
			snprintf(path, sizeof(path), "%s/%s", pin_dir,
				 bpf_map__name(map));
			if (!access(path, F_OK))
				continue; /* reused: nothing new */
		}
		sum += mem_map_bytes(bpf_map__type(map), bpf_map__key_size(map),
				     bpf_map__value_size(map),
				     bpf_map__max_entries(map));
	}
	return sum;
}

/* The number FMT (one %lld) reads from the first line of PATH it
 * matches; -errno, or -ENOENT when no line matches. */
static long long proc_scan(const char *path, const char *fmt)
{
	FILE *f = fopen(path, "r");
	char line[128];
	long long n = -1;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &n) == 1)
			break;
	fclose(f);
	return n < 0 ? -ENOENT : n;
}

long long mem_available(char *who, size_t len)
{
	long long kb = proc_scan("/proc/meminfo", "MemAvailable: %lld kB");
	long long avail = kb < 0 ? kb : kb * 1024;
	long long room = memcg_room(who, len);

	if (room >= 0 && (avail < 0 || room < avail))
		return room;
	snprintf(who, len, "MemAvailable");
	return avail;
}

int mem_fits(unsigned long long need, long long avail, __u32 flows_max,
	     unsigned long long *fits)
{
	unsigned long long budget;

	if (avail <= 0)
		return 1; /* no /proc/meminfo: nothing to check against */
	budget = (unsigned long long)avail / MEM_SHARE_DEN * MEM_SHARE_NUM;
	if (need <= budget)
		return 1;
	/* Rounded up, so that the count said to fit errs on the small
	 * side (the part that does not scale is counted in too). */
	*fits = budget / (need / (flows_max ? flows_max : 1) + 1);
	return 0;
}

/* The "memlock:" line the kernel writes in a map fd's fdinfo. */
static long long fd_memlock(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return proc_scan(path, "memlock: %lld");
}

int mem_pinned_bytes(const char *pin_dir, unsigned long long *bytes)
{
	char path[512];
	struct dirent *de;
	long long b;
	DIR *d;
	int fd;

	*bytes = 0;
	d = opendir(pin_dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		b = fd_memlock(fd);
		if (b > 0)
			*bytes += b;
		close(fd);
	}
	closedir(d);
	return 0;
}
