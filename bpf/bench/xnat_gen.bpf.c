// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmark's packet generator: xdp_gen runs under BPF_PROG_RUN in
 * live-frames mode (BPF_F_TEST_XDP_LIVE_FRAMES, user/bench/gen.c). For every
 * frame the kernel hands it, it picks the next flow (source port
 * src_port + i, round robin over n_flows; or, with ports_per_host, the
 * inside endpoint i of many hosts: source address src_ip + i / ports_per_host,
 * source port src_port + i % ports_per_host, destination port
 * dst_port + i % n_dports) and the next frame length of the
 * size cycle, sets the frame to that length, writes the whole
 * Ethernet/IPv4/UDP header with correct lengths and checksums, and sends it
 * with XDP_TX out of the port given as ingress, i.e. to the veth peer.
 *
 * The whole header is written every time: live-frame pages are recycled
 * without copying the template in again, and a receiver that rewrites MACs,
 * TTL or addresses in place would otherwise have us send its rewrite. The
 * payload is zeros (the template is zeroed and bpf_xdp_adjust_tail zeroes
 * what it grows), which is what lets both checksums be a handful of adds.
 *
 * Configuration is rodata, set by userspace before load; the sequence
 * position and what was sent are per CPU, so each sending thread has its
 * own.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "csum.h"

char LICENSE[] SEC("license") = "GPL";

/* Ethernet + IPv4 without options + UDP. */
#define GEN_HDR_LEN 42
/* Slots of the size cycle: sum of the weights (4 sizes x 255 at most). */
#define GEN_CYCLE_MAX 1024

/* Frames arriving on other ports are real traffic, not test runs: the
 * program stays attached to lo for the whole run (user/bench/gen.c says why)
 * and must leave lo's packets alone. */
const volatile __u32 tx_ifindex;
/* The header as sent, bytes 0..39: MACs, IPv4 header with tot_len and
 * check zero, UDP ports (source src_port) and len zero. The UDP checksum
 * (40..41) is always written. */
const volatile __u64 hdr_tmpl[5];
/* One's complement sums (16-bit words as they sit in memory, unfolded) of
 * the template's IPv4 header without tot_len, and of the UDP pseudo-header
 * addresses and protocol plus the destination port. */
const volatile __u32 ip_csum_base;
const volatile __u32 udp_csum_base;
const volatile __u16 src_port = 1; /* host order */
const volatile __u32 n_flows = 1;
/* Many inside hosts (0: one source address, the template's): source
 * ports per host, the first host's address and the first destination
 * port (host order), and how many destination ports. The checksum bases
 * then leave out the source address and the destination port. */
const volatile __u32 ports_per_host;
const volatile __u32 src_ip_first;
const volatile __u16 dst_port_first;
const volatile __u32 n_dports = 1;
/* The endpoint the first flow is (a run that continues another's). */
const volatile __u32 flow_first;
/* Not 0: the trial's number, written into the first payload word of each
 * frame long enough to carry it, for the sink to tell this trial's frames
 * from a late one of an earlier trial (xnat_sink.bpf.c). */
const volatile __u16 stamp;
/* Frame length (without FCS) of each slot of the size cycle, 42 or more. */
const volatile __u32 cycle_len = 1;
const volatile __u16 cycle[GEN_CYCLE_MAX] = { GEN_HDR_LEN };

/*
 * Where this CPU is in the flow and size sequences, and what it sent.
 * Sync note: user/bench/gen.c reads this struct as struct gen_state.
 */
struct gen_state {
	__u64 packets;
	__u64 bytes;   /* frame lengths, without FCS */
	__u32 flow;    /* next flow index */
	__u32 slot;    /* next slot of the size cycle */
};

/* Per CPU: each thread runs its BPF_PROG_RUN calls pinned to one CPU, so
 * the updates need no atomics and every thread counts its own frames. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct gen_state);
	__uint(max_entries, 1);
} gen_state SEC(".maps");

SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
	void *data, *data_end;
	struct gen_state *st;
	struct iphdr *ip;
	struct udphdr *udp;
	__u32 zero = 0, flow, slot, len, cur, sum, ipsum;
	__be16 sport, l3_len, l4_len;
	__u16 check;
	__u64 *w;

	if (ctx->ingress_ifindex != tx_ifindex)
		return XDP_PASS;
	st = bpf_map_lookup_elem(&gen_state, &zero);
	if (!st)
		return XDP_ABORTED;
	flow = st->flow;
	slot = st->slot;
	st->flow = flow + 1 < n_flows ? flow + 1 : 0;
	st->slot = slot + 1 < cycle_len ? slot + 1 : 0;
	len = cycle[slot & (GEN_CYCLE_MAX - 1)];

	/* Set the length whatever the page holds: the template's length, or
	 * (non-live repeat, or a kernel that does not reset a recycled
	 * page's context) the one an earlier frame left. */
	cur = ctx->data_end - ctx->data;
	if (cur != len && bpf_xdp_adjust_tail(ctx, (int)len - (int)cur))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + GEN_HDR_LEN > data_end)
		return XDP_ABORTED;

	w = data;
	w[0] = hdr_tmpl[0];
	w[1] = hdr_tmpl[1];
	w[2] = hdr_tmpl[2];
	w[3] = hdr_tmpl[3];
	w[4] = hdr_tmpl[4];
	ip = data + sizeof(struct ethhdr);
	udp = (void *)(ip + 1);

	l3_len = bpf_htons(len - sizeof(struct ethhdr));
	l4_len = bpf_htons(len - sizeof(struct ethhdr) - sizeof(struct iphdr));
	sport = bpf_htons(src_port + flow);
	ipsum = ip_csum_base;
	sum = udp_csum_base;
	if (ports_per_host) {
		__u32 ep = flow_first + flow;
		__u32 host = ep / ports_per_host;
		__be32 saddr = bpf_htonl(src_ip_first + host);
		__be16 dport = bpf_htons(dst_port_first + ep % n_dports);

		sport = bpf_htons(src_port + (ep - host * ports_per_host));
		ip->saddr = saddr;
		udp->dest = dport;
		ipsum += (saddr & 0xffff) + (saddr >> 16);
		sum += (saddr & 0xffff) + (saddr >> 16) + dport;
	}

	ip->tot_len = l3_len;
	ip->check = (__u16)~csum_fold(ipsum + l3_len);
	udp->source = sport;
	udp->len = l4_len;
	/* The UDP length counts twice: in the pseudo-header and the header.
	 * Zero payload adds nothing, the stamp itself. A computed 0 goes out
	 * as 0xffff. */
	sum += sport + l4_len + l4_len;
	if (stamp && data + GEN_HDR_LEN + sizeof(__u16) <= data_end) {
		*(__u16 *)(data + GEN_HDR_LEN) = stamp;
		sum += stamp;
	}
	check = ~csum_fold(sum);
	udp->check = check ? check : 0xffff;

	st->packets++;
	st->bytes += len;
	return XDP_TX;
}
