// SPDX-License-Identifier: GPL-2.0-only
/*
 * What one insert into a table shaped like the flow table costs
 * (user/bench/microbench_tables.c): a new connection makes two of them, and
 * on a machine where a random access to a table of millions of entries
 * misses the cache and the TLB, their price, not the code around them,
 * bounds the rate of new connections (docs/BENCHMARKS.md, "What an insert
 * costs").
 *
 * tb_insert, run once with BPF_PROG_RUN, inserts tb_inserts keys of a
 * xorshift sequence into tb_flows (a preallocated hash map of struct
 * flow_key to struct flow_value, timer field included, as xnat_flows;
 * userspace sets its size) with bpf_loop, and times the loop.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xnat_common.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct flow_key);
	__type(value, struct flow_value);
	__uint(max_entries, 65536);
} tb_flows SEC(".maps");

__u64 tb_inserts = 1;                  /* in */
__u64 tb_seed = 0x9e3779b97f4a7c15ULL; /* in: nonzero */
__u64 tb_ns, tb_failed;                /* out */

static __u64 xorshift(__u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static long insert_one(__u32 i, void *ctx)
{
	static const struct flow_value zero;
	struct flow_key k = { .proto = 17, .family = XNAT_AF_INET6, .ifindex = 2 };
	__u64 *x = ctx, r;

	for (int j = 0; j < 4; j++) {
		r = xorshift(x);
		k.saddr.v6[j] = r;
		k.daddr.v6[j] = r >> 32;
	}
	r = xorshift(x);
	k.sport = r;
	k.dport = r >> 16;
	if (bpf_map_update_elem(&tb_flows, &k, &zero, BPF_NOEXIST))
		tb_failed++;
	return 0;
}

SEC("syscall")
int tb_insert(void *ctx)
{
	__u64 x = tb_seed, start = bpf_ktime_get_ns();

	bpf_loop(tb_inserts, insert_one, &x, 0);
	tb_ns = bpf_ktime_get_ns() - start;
	return 0;
}
