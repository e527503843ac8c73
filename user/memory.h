/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel memory of the data path's maps, estimated before they exist and
 * as the kernel counts it once pinned (see memory.c).
 */
#ifndef XNAT_MEMORY_H
#define XNAT_MEMORY_H

#include <bpf/libbpf.h>

/* The share of MemAvailable `xnat up` lets its new maps and timers take. */
#define MEM_SHARE_NUM 3
#define MEM_SHARE_DEN 4

/* Bytes one map of this shape takes when created (preallocated). */
unsigned long long mem_map_bytes(enum bpf_map_type type, __u32 key_size,
				 __u32 value_size, __u32 max_entries);
/* Bytes of the BPF timers a full table of FLOWS_MAX connections arms. */
unsigned long long mem_timers_bytes(unsigned long long flows_max);
/* Bytes the maps of OBJ (sized already) will take; with PIN_DIR, only
 * those not pinned there yet (the others are reused). */
unsigned long long mem_object_bytes(struct bpf_object *obj, const char *pin_dir);
/* Do NEED bytes fit in xnat's share (MEM_SHARE_*) of AVAIL (bytes, or
 * -errno: then nothing is checked)? 1 if so; if not 0, and *FITS: about
 * how many connections would, at NEED / FLOWS_MAX bytes each. */
int mem_fits(unsigned long long need, long long avail, __u32 flows_max,
	     unsigned long long *fits);
/* MemAvailable from /proc/meminfo in bytes, or less if the memory
 * cgroup of this process (or one above it) has less room under its limit
 * (memcg.h): the kernel fails a map it cannot charge there. WHO (LEN
 * bytes) says which: "MemAvailable" or the cgroup's limit file. -errno
 * when neither can be read. */
long long mem_available(char *who, size_t len);
/* The kernel's count (fdinfo "memlock") over the maps pinned in PIN_DIR. */
int mem_pinned_bytes(const char *pin_dir, unsigned long long *bytes);

#endif /* XNAT_MEMORY_H */
