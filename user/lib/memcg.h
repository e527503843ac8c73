/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The room left under the memory limits of this process's cgroup and of
 * those above it (cgroup v2 memory.max, or v1 memory.limit_in_bytes):
 * the kernel charges BPF maps to the cgroup of the process that creates
 * them and fails the creation with ENOMEM at its limit, however much
 * MemAvailable says is free (a unit's MemoryMax=, a container).
 */
#ifndef XNAT_LIB_MEMCG_H
#define XNAT_LIB_MEMCG_H

#include <stddef.h>

/* Bytes that may still be charged to this process's cgroup, the least
 * over it and its ancestors, with in WHO (LEN bytes) the limit file of
 * the one that has the least; -ENOENT when none has a limit or there is
 * no memory cgroup to read. */
long long memcg_room(char *who, size_t len);

/* The same for the cgroup directory DIR and those above it up to TOP
 * (the hierarchy's mount point), of cgroup version VERSION (1 or 2). */
long long memcg_room_at(const char *dir, const char *top, int version,
			char *who, size_t len);

#endif /* XNAT_LIB_MEMCG_H */
