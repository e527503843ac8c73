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

/*
 * Is the source one of the router's own addresses (or a broadcast one)?
 * Such a packet arriving from outside is spoofed (RFC 1812 5.3.7). A FIB
 * lookup towards the source answers "not forwarded" exactly for those,
 * from the route's type, before any neighbour: so it skips the neighbour
 * look-up, which every new flow would pay for nothing. Slow path only:
 * established flows never match such a source.
 */
static __always_inline int fib_src_is_local(struct xdp_md *ctx, struct pkt *p)
{
	struct bpf_fib_lookup fib = {};

	if (fib_towards_source(p, &fib))
		return 0;
	return bpf_fib_lookup(ctx, &fib, sizeof(fib),
			      BPF_FIB_LOOKUP_SKIP_NEIGH) ==
	       BPF_FIB_LKUP_RET_NOT_FWDED;
}

/*
 * Does the source lie inside, behind a LAN port (XDP's own reverse path
 * check, as rp_filter would do)? A frame from the WAN with such a source
 * is spoofed: it must not open a port forward towards the LAN. Slow path
 * from the WAN only.
 */
static __always_inline int fib_src_is_inside(struct xdp_md *ctx,
					     struct pkt *p)
{
	struct bpf_fib_lookup fib = {};
	__u32 ifindex;
	__u32 *role;

	if (fib_towards_source(p, &fib))
		return 0;
	/* Routes without a resolved neighbour still name their port. */
	if (bpf_fib_lookup(ctx, &fib, sizeof(fib), BPF_FIB_LOOKUP_SKIP_NEIGH) !=
	    BPF_FIB_LKUP_RET_SUCCESS)
		return 0;
	ifindex = fib.ifindex;
	role = bpf_map_lookup_elem(&xnat_ifaces, &ifindex);
	return role && *role == XNAT_ROLE_LAN;
}

#endif /* XNAT_FIB_H */
