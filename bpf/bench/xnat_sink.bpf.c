// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmark's sink: xdp_sink, attached to the receiving host's port,
 * counts the frames that arrive (packets and bytes, per CPU) and drops
 * them, so that offered, forwarded and lost packets are all known.
 *
 * With dst_port set, only IPv4 UDP frames to that port count and are
 * dropped; everything else (ARP, latency probes, TCP) goes on to the host
 * with XDP_PASS. With dst_port 0 every frame counts and is dropped.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xnat_common.h"

char LICENSE[] SEC("license") = "GPL";

/* Network order; 0 counts every frame. */
const volatile __be16 dst_port;

/* One counter; per CPU so updates need no atomics, userspace sums it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnat_counter);
	__uint(max_entries, 1);
} sink_stats SEC(".maps");

/* Is this an IPv4 UDP frame to dst_port? */
static __always_inline int sink_match(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP || ip->ihl < 5)
		return 0;
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > data_end)
		return 0;
	return udp->dest == dst_port;
}

SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct xnat_counter *c;
	__u32 zero = 0;

	if (dst_port && !sink_match(data, data_end))
		return XDP_PASS;
	c = bpf_map_lookup_elem(&sink_stats, &zero);
	if (c) {
		c->packets++;
		c->bytes += data_end - data;
	}
	return XDP_DROP;
}
