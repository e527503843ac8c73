// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flow table holds two entries per connection, and from
 * FLOW_BUCKETS_DOUBLE_MIN connections one more: the kernel gives a hash
 * map roundup_pow_of_two(max_entries) buckets, so where two per
 * connection is a power of two (the default, 1,048,576 connections) that
 * one entry doubles the buckets, 16 bytes each (32 bytes more per
 * connection, about 4 % of its memory), and halves the chains a look-up
 * walks in a full table: an absent key reads half an entry less on
 * average, a present one a quarter, each read a cache miss at that size.
 * A smaller table's bucket array still fits the TLB's reach, and doubling
 * it cost more than the chains saved (docs/BENCHMARKS.md "Buckets of the
 * flow table"). A running router's table of exactly two per connection
 * (xnat before 2026-12-03) is kept as it is, with its connections.
 *
 * The mapping table and its ports (MAP_MAPPINGS, MAP_PORTS) hold one
 * entry each per external port in use, so at most the pool's addresses
 * times PORTS_PER_ADDR, whatever [nat] ports says (a new range needs no
 * new table; 45,536 ports round up to the same buckets). They are sized
 * by that rather than by [flows] max: every new flow looks them up
 * several times, and a table with fewer buckets
 * (roundup_pow_of_two(max_entries)) makes those look-ups fewer cache and
 * TLB misses, besides the memory. A running router's bigger table (xnat
 * before 2026-11-30 sized them by [flows] max) is kept as it is: it holds
 * all the same, and its NAT state stays.
 */
#include <unistd.h>
#include <bpf/bpf.h>
#include "map_size.h"
#include "pins.h"

/* The pinned map NAME's max_entries, or 0 when there is none. */
static __u32 pinned_entries(const char *name)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = pins_map_open(name);

	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.max_entries = 0;
	close(fd);
	return info.max_entries;
}

__u32 map_size_flow_table(const struct config *cfg)
{
	__u32 two = 2 * cfg->flows_max;

	if (cfg->flows_max < FLOW_BUCKETS_DOUBLE_MIN ||
	    pinned_entries(MAP_FLOWS) == two)
		return two;
	return two + 1;
}

__u32 map_size_nat_table(const struct config *cfg, const char *name)
{
	__u64 want = (__u64)(cfg->n_pool > 1 ? cfg->n_pool : 1) *
		     PORTS_PER_ADDR;
	__u32 pinned = pinned_entries(name);

	if (want > cfg->flows_max)
		want = cfg->flows_max;
	return pinned > want ? pinned : want;
}
