// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmark's reference programs, no NAT and no flow table.
 *
 * xdp_fwd is a plain XDP router: every IPv4/IPv6 packet is routed with
 * bpf_fib_lookup, its MACs rewritten from the result, its TTL (hop limit)
 * decremented, and redirected through xdp_tx_ports. It is the floor `xnat
 * bench` compares the NAT data path with: a flow-table hit replaces this
 * FIB lookup, so the gap between the two is what the NAT costs. It follows
 * the kernel's samples/bpf/xdp_fwd_kern.c and xdp-tools' xdp-forward; what
 * the kernel must handle (non-IP, TTL 1, unresolved neighbours, local or
 * unroutable destinations, oversize packets) goes up with XDP_PASS, like
 * xnat does. XXX: like xdp-forward it checks no source address (martians,
 * reverse path), which the kernel's own forwarding does.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "af.h"
#include "csum.h"

char LICENSE[] SEC("license") = "GPL";

#define IPV6_FLOWINFO_MASK bpf_htonl(0x0FFFFFFF)

/* The ports xdp_fwd may send to, key and value the ifindex; userspace
 * fills it. A route out of any other port is left to the kernel. A
 * DEVMAP_HASH because ifindexes are sparse; bpf_redirect_map() batches the
 * transmits of a NAPI poll, unlike bpf_redirect(). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 64);
} xdp_tx_ports SEC(".maps");

/* Link-local (fe80::/10) never leaves its link, and multicast (ff00::/8)
 * is the kernel's: bpf_fib_lookup routes unicast only. */
static __always_inline int ipv6_not_unicast_routed(const struct in6_addr *a)
{
	return a->in6_u.u6_addr8[0] == 0xff ||
	       (a->in6_u.u6_addr16[0] & bpf_htons(0xffc0)) == bpf_htons(0xfe80);
}

/* Go on to the rewrite (the stages below return an XDP action to stop). */
#define FWD_CONTINUE -1

/*
 * Route FIB (family, addresses, tot_len filled in) from the ingress port.
 * FWD_CONTINUE with the egress port and MACs in FIB, or XDP_PASS.
 */
static __always_inline int fwd_route(struct xdp_md *ctx,
				     struct bpf_fib_lookup *fib)
{
	fib->ifindex = ctx->ingress_ifindex;
	/* Flags 0: the ingress port's table, its forwarding switch and the
	 * neighbour table, as the kernel's own forwarding would; with
	 * tot_len set the helper also checks the egress MTU. */
	switch (bpf_fib_lookup(ctx, fib, sizeof(*fib), 0)) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		break;
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		/* Expect the kernel to resolve the neighbour; later packets
		 * then take this path. */
		return XDP_PASS;
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		/* The kernel fragments, or sends "fragmentation needed". */
		return XDP_PASS;
	case BPF_FIB_LKUP_RET_BLACKHOLE:
	case BPF_FIB_LKUP_RET_UNREACHABLE:
	case BPF_FIB_LKUP_RET_PROHIBIT:
		/* The kernel drops these too, but answers with the ICMP
		 * error a router owes the sender. */
		return XDP_PASS;
	case BPF_FIB_LKUP_RET_NOT_FWDED:
		/* For this host, or broadcast/multicast. */
	case BPF_FIB_LKUP_RET_FWD_DISABLED:
		/* Forwarding is off on the ingress port: the kernel
		 * decides (and will not forward either). */
	case BPF_FIB_LKUP_RET_UNSUPP_LWT:
		/* Encapsulating routes are the kernel's. */
	default:
		/* Anything a newer kernel adds (e.g. NO_SRC_ADDR). */
		return XDP_PASS;
	}
	/* Only ports userspace listed: others may lack the XDP program a
	 * veth needs to receive redirects, or are not ours to send on. */
	if (!bpf_map_lookup_elem(&xdp_tx_ports, &fib->ifindex))
		return XDP_PASS;
	return FWD_CONTINUE;
}

/* New MACs, then out of the routed port. */
static __always_inline int fwd_send(struct ethhdr *eth,
				    const struct bpf_fib_lookup *fib)
{
	__builtin_memcpy(eth->h_dest, fib->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib->smac, ETH_ALEN);
	/* The packet is rewritten: if the port left the map meanwhile it
	 * must not reach the kernel like this. */
	return bpf_redirect_map(&xdp_tx_ports, fib->ifindex, XDP_DROP);
}

static __always_inline int fwd_ipv4(struct xdp_md *ctx, struct ethhdr *eth,
				    void *data_end)
{
	struct iphdr *ip = (void *)(eth + 1);
	struct bpf_fib_lookup fib = {};
	int rc;

	if ((void *)(ip + 1) > data_end)
		return XDP_DROP;
	/* The kernel sends the ICMP time exceeded. */
	if (ip->ttl <= 1)
		return XDP_PASS;
	fib.family = AF_INET;
	fib.tos = ip->tos;
	fib.l4_protocol = ip->protocol;
	fib.tot_len = bpf_ntohs(ip->tot_len);
	fib.ipv4_src = ip->saddr;
	fib.ipv4_dst = ip->daddr;
	rc = fwd_route(ctx, &fib);
	if (rc != FWD_CONTINUE)
		return rc;
	ipv4_decrease_ttl(ip);
	return fwd_send(eth, &fib);
}

static __always_inline int fwd_ipv6(struct xdp_md *ctx, struct ethhdr *eth,
				    void *data_end)
{
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	struct bpf_fib_lookup fib = {};
	int rc;

	if ((void *)(ip6 + 1) > data_end)
		return XDP_DROP;
	/* Hop limit 1: the kernel sends the ICMPv6 time exceeded. */
	if (ip6->hop_limit <= 1 || ipv6_not_unicast_routed(&ip6->saddr) ||
	    ipv6_not_unicast_routed(&ip6->daddr))
		return XDP_PASS;
	fib.family = AF_INET6;
	fib.flowinfo = *(__be32 *)ip6 & IPV6_FLOWINFO_MASK;
	fib.l4_protocol = ip6->nexthdr;
	fib.tot_len = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
	__builtin_memcpy(fib.ipv6_src, &ip6->saddr, sizeof(fib.ipv6_src));
	__builtin_memcpy(fib.ipv6_dst, &ip6->daddr, sizeof(fib.ipv6_dst));
	rc = fwd_route(ctx, &fib);
	if (rc != FWD_CONTINUE)
		return rc;
	ip6->hop_limit--;
	return fwd_send(eth, &fib);
}

SEC("xdp")
int xdp_fwd(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = (void *)(long)ctx->data;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return fwd_ipv4(ctx, eth, data_end);
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return fwd_ipv6(ctx, eth, data_end);
	/* ARP, VLAN tags, LLDP...: the kernel's. */
	return XDP_PASS;
}
