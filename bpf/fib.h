/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Routing a slow-path packet with the kernel's FIB and neighbour table.
 * Only the slow path routes; a flow-table hit reuses the result.
 */
#ifndef XNAT_FIB_H
#define XNAT_FIB_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parsing.h"
#include "af.h"

/*
 * Route from SADDR to DADDR as if the packet arrived on the ingress port.
 * On success fills FIB (ifindex, MACs) and returns XNAT_CONTINUE; otherwise
 * returns XDP_PASS with the reason, so the kernel deals with it the way a
 * router must (ICMP unreachable, ARP, fragmentation needed).
 */
static __always_inline int fib_route(struct xdp_md *ctx, struct pkt *p,
				     const union xnat_addr *saddr,
				     const union xnat_addr *daddr,
				     struct bpf_fib_lookup *fib)
{
	int rc;

	__builtin_memset(fib, 0, sizeof(*fib));
	fib->ifindex = p->in_ifindex;
	fib->l4_protocol = p->key.proto;
	fib->sport = p->key.sport;
	fib->dport = p->key.dport;
	/* With tot_len set the helper checks the egress MTU for us. */
	fib->tot_len = p->l3_len;
	/* Test the header pointer, not key.family: the verifier cannot tie
	 * the two together. */
	if (p->ip4) {
		fib->family = AF_INET;
		fib->tos = p->ip4->tos;
		fib->ipv4_src = saddr->v4;
		fib->ipv4_dst = daddr->v4;
	} else {
		fib->family = AF_INET6;
		__builtin_memcpy(fib->ipv6_src, saddr->v6, 16);
		__builtin_memcpy(fib->ipv6_dst, daddr->v6, 16);
	}

	rc = bpf_fib_lookup(ctx, fib, sizeof(*fib), 0);
	switch (rc) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		return XNAT_CONTINUE;
	case BPF_FIB_LKUP_RET_NOT_FWDED:
		/* Local destination (or broadcast, multicast). */
		return pkt_stop(p, XDP_PASS, XNAT_PASS_LOCAL);
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		/* The kernel resolves the neighbour; a later packet of
		 * the flow will find it and take this path. */
		return pkt_stop(p, XDP_PASS, XNAT_PASS_NO_NEIGH);
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		/* The kernel fragments or sends ICMP frag-needed. */
		return pkt_stop(p, XDP_PASS, XNAT_PASS_MTU);
	default:
		/* Blackhole, unreachable, prohibit, forwarding disabled,
		 * lwt: the kernel drops and answers with the right ICMP. */
		return pkt_stop(p, XDP_PASS, XNAT_PASS_NO_ROUTE);
	}
}

/* A route lookup towards P's source, as if from its ingress port: the
 * reverse path checks below. 0, or -EINVAL for a packet that is not IP. */
static __always_inline int fib_towards_source(const struct pkt *p,
					      struct bpf_fib_lookup *fib)
{
	fib->ifindex = p->in_ifindex;
	if (p->ip4) {
		fib->family = AF_INET;
		fib->ipv4_dst = p->ip4->saddr;
	} else if (p->ip6) {
		fib->family = AF_INET6;
		__builtin_memcpy(fib->ipv6_dst, &p->ip6->saddr, 16);
	} else {
		return -EINVAL;
	}
	return 0;
}

/* Is IFINDEX, a route's port, one of the router's LAN ports (or VLANs)? */
static __always_inline int routed_out_of_lan(__u32 ifindex)
{
	__u32 *role = bpf_map_lookup_elem(&xnat_ifaces, &ifindex);

	return role && *role == XNAT_ROLE_LAN;
}

/*
 * The reverse path check of a new flow's source (RFC 3704), with one FIB
 * lookup towards the source as if from its ingress port IN, under the
 * router's CFG. 0 when the source may open a flow there, else the reason:
 *
 * - XNAT_PASS_MARTIAN: one of the router's own addresses (or a broadcast
 *   one); from outside that is spoofed (RFC 1812 5.3.7). The lookup says
 *   "not forwarded" exactly for those, from the route's type.
 * - XNAT_DROP_SPOOFED, from the WAN: the source lies inside, routed out of
 *   a LAN port. It must not open a port forward towards the LAN.
 * - XNAT_DROP_SPOOFED, from a LAN port (or VLAN): the source is not routed
 *   back out of that very port (strict, RFC 3704 2.2), or not at all. A
 *   new flow's reply entry is keyed by the packet's source and goes back
 *   to the MAC it came from: a host forging another port's or the WAN's
 *   address would make the entry of that host's own next connection, and
 *   get its packets un-NATed (docs/NAT.md). Hosts routed behind a LAN
 *   host are routed out of its port, and pass. With XNAT_F_SRC_FEASIBLE
 *   ([router] source_check = feasible) a source routed out of any LAN
 *   port passes: the LAN's routing is asymmetric, or ECMP, and the
 *   operator trusts the LAN ports with each other's addresses (not the
 *   WAN's).
 *
 * From the WAN a source with no route is left alone, as before: there is
 * nothing of ours it can stand for. With no route at all (no default
 * route) the helper answers "not forwarded" as for a local address: the
 * kernel gets the packet, and XDP makes no flow of it. Multicast, unspecified and IPv6
 * link-local sources never get here (parsing.h hands them up). Routes
 * without a resolved neighbour still name their port, so the lookup skips
 * the neighbour table, which every new flow would pay for nothing. Slow
 * path only: a flow's key holds its ingress port and VLAN, so an
 * established flow is not found from another port.
 */
static __always_inline int fib_src_check(struct xdp_md *ctx, struct pkt *p,
					 const struct iface_info *in,
					 const struct xnat_config *cfg)
{
	struct bpf_fib_lookup fib = {};
	int rc;

	if (fib_towards_source(p, &fib))
		return 0;
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), BPF_FIB_LOOKUP_SKIP_NEIGH);
	if (rc == BPF_FIB_LKUP_RET_NOT_FWDED)
		return XNAT_PASS_MARTIAN;
	if (in->role != XNAT_ROLE_WAN) {
		/* Blackhole, unreachable, prohibit: no way back at all. */
		if (rc == BPF_FIB_LKUP_RET_BLACKHOLE ||
		    rc == BPF_FIB_LKUP_RET_UNREACHABLE ||
		    rc == BPF_FIB_LKUP_RET_PROHIBIT)
			return XNAT_DROP_SPOOFED;
		/* Anything else (forwarding off, lwt) the destination's own
		 * lookup meets too, and hands to the kernel. */
		if (rc != BPF_FIB_LKUP_RET_SUCCESS)
			return 0;
		if (fib.ifindex == p->in_ifindex)
			return 0;
		if (!(cfg->flags & XNAT_F_SRC_FEASIBLE))
			return XNAT_DROP_SPOOFED;
		return routed_out_of_lan(fib.ifindex) ? 0 : XNAT_DROP_SPOOFED;
	}
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return 0;
	return routed_out_of_lan(fib.ifindex) ? XNAT_DROP_SPOOFED : 0;
}

#endif /* XNAT_FIB_H */
