// SPDX-License-Identifier: GPL-2.0-only
/*
 * The two trivial XDP programs `xnat bench` puts on the router's ports.
 * xdp_pass lets the kernel modes receive at all: a veth accepts frames that
 * its peer sent with XDP_TX (the generator) only while an XDP program is
 * attached on the receiving side (drivers/net/veth.c, veth_xdp_xmit():
 * no NAPI on the receiving queue, no frame). xdp_drop is the
 * "router" of the drop mode, the chain's floor: generator plus one hop and
 * nothing else, so that a mode's per-packet router cost is its chain's
 * ns/packet minus this one's. xdp_pass is also the empty program the
 * microbenchmark measures its own overhead with.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* Frames xdp_drop saw. Per CPU: no atomics in the measured path; the one
 * lookup and add it costs (a few ns) is documented in docs/BENCHMARKS.md. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} bench_dropped SEC(".maps");

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&bench_dropped, &zero);

	if (n)
		(*n)++;
	return XDP_DROP;
}
