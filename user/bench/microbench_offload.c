// SPDX-License-Identifier: GPL-2.0-only
/*
 * The microbenchmark's offload-mode case (microbench.h, MICROBENCH_OFFLOAD):
 * the benchmark's one flow switched to the entry offload mode would hold
 * for it, and back, around each call. Kept apart from microbench.c, which
 * measures; this only knows the flow table's layout (bpf/common_flow.h).
 */
#include <errno.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "flow_hash.h"
#include "microbench.h"
#include "xnat_common.h"
#include "xnat.skel.h"

/* The flag, set or cleared in the config map. */
static int offload_flag(int config_fd, bool on)
{
	struct xnat_config c;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(config_fd, &zero, &c))
		return -errno;
	c.flags = on ? c.flags | XNAT_F_OFFLOAD : c.flags & ~XNAT_F_OFFLOAD;
	return bpf_map_update_elem(config_fd, &zero, &c, BPF_EXIST) ? -errno : 0;
}

/* KEY's bit in offload mode's table filter (bpf/offload_filter.h), set
 * as the data path sets it on an install: an entry written here would
 * otherwise be skipped, never looked up. */
static int filter_bit_set(struct xnat_bpf *xnat, const struct flow_key *key)
{
	int words_fd = bpf_map__fd(xnat->maps.xnat_offloaded);
	__u32 word, bit, w;

	flow_key_hash_fast(key, &word, &bit);
	if (bpf_map_lookup_elem(words_fd, &word, &w))
		return -errno;
	w |= 1U << bit;
	return bpf_map_update_elem(words_fd, &word, &w, BPF_ANY) ? -errno : 0;
}

static int offload_entry(struct xnat_bpf *xnat, int if_lan, bool on)
{
	int flows_fd = bpf_map__fd(xnat->maps.xnat_flows);
	static struct flow_value saved;
	struct flow_key key, next;
	struct flow_value v;
	void *prev = NULL;

	while (!bpf_map_get_next_key(flows_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.ifindex != (__u32)if_lan ||
		    bpf_map_lookup_elem(flows_fd, &key, &v) ||
		    v.dir != FLOW_DIR_ORIG)
			continue;
		if (on) {
			saved = v;
			/* bpf_ktime_get_coarse_ns() is CLOCK_MONOTONIC_COARSE. */
			v.nat = FLOW_NAT_CT;
			v.ct_refresh = clock_ns(CLOCK_MONOTONIC_COARSE) >>
				       XNAT_CT_REFRESH_SHIFT;
		} else {
			v.nat = saved.nat;
			v.ct_refresh = saved.ct_refresh;
		}
		/* The entry's timer field is not written from userspace. */
		if (bpf_map_update_elem(flows_fd, &key, &v, BPF_EXIST))
			return -errno;
		return on ? filter_bit_set(xnat, &key) : 0;
	}
	return -ENOENT;
}

int microbench_offload(struct xnat_bpf *xnat, int if_lan, bool on)
{
	int config_fd = bpf_map__fd(xnat->maps.xnat_config);

	return on ? offload_entry(xnat, if_lan, true) ?:
			    offload_flag(config_fd, true) :
		    offload_flag(config_fd, false) ?:
			    offload_entry(xnat, if_lan, false);
}
