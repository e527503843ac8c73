// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmark's sink: xdp_sink, attached to the receiving host's port,
 * counts the frames that arrive (packets and bytes, per CPU) and drops
 * them, so that offered, forwarded and lost packets are all known.
 *
 * With dst_port set, only IPv4 UDP frames to that port count and are
 * dropped; everything else (ARP, latency probes, TCP) goes on to the host
 * with XDP_PASS. With dst_port 0 every frame counts and is dropped.
 *
 * With dst_port and trial_stamp set, a frame whose first payload word is
 * not the stamp (a frame of an earlier trial, held somewhere on the way
 * until now) is dropped and counted apart, as late: a frame is counted
 * in the trial that sent it or not at all. The generator writes the
 * stamp (xnat_gen.bpf.c); a frame too short to carry one counts.
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

/* The trial running now (0: none), set by userspace between trials. */
__u16 trial_stamp;

/* Counters: SINK_COUNTED this trial's frames, SINK_LATE earlier trials'.
 * Per CPU so updates need no atomics, userspace sums them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnat_counter);
	__uint(max_entries, 2);
} sink_stats SEC(".maps");

enum { SINK_COUNTED = 0, SINK_LATE = 1 };

/* Is this an IPv4 UDP frame to dst_port? SINK_COUNTED or SINK_LATE if so,
 * else -1. */
static __always_inline int sink_match(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;
	__u16 *stamp;

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP || ip->ihl < 5)
		return -1;
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > data_end || udp->dest != dst_port)
		return -1;
	stamp = (void *)(udp + 1);
	if (trial_stamp && (void *)(stamp + 1) <= data_end &&
	    *stamp != trial_stamp)
		return SINK_LATE;
	return SINK_COUNTED;
}

SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u32 slot = SINK_COUNTED;
	struct xnat_counter *c;
	int match;

	if (dst_port) {
		match = sink_match(data, data_end);
		if (match < 0)
			return XDP_PASS;
		slot = match;
	}
	c = bpf_map_lookup_elem(&sink_stats, &slot);
	if (c) {
		c->packets++;
		c->bytes += data_end - data;
	}
	return XDP_DROP;
}
