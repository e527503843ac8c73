// SPDX-License-Identifier: GPL-2.0-only
/*
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

__u32 map_size_nat_table(const struct config *cfg, const char *name)
{
	__u64 want = (__u64)(cfg->n_pool > 1 ? cfg->n_pool : 1) *
		     PORTS_PER_ADDR;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd;

	if (want > cfg->flows_max)
		want = cfg->flows_max;
	fd = pins_map_open(name);
	if (fd < 0)
		return want;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.max_entries > want)
		want = info.max_entries;
	close(fd);
	return want;
}
