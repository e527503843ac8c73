/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Packets of XDP flows that XDP does not forward. The kernel has never
 * seen an XDP flow: handed one of its packets, it meets a packet for the
 * NAT address and a port no socket owns (and answers with a RST or a port
 * unreachable), or a reply its conntrack calls new or invalid (and drops
 * it). So such a packet never simply goes up. Either XDP handles it
 * itself (ICMP errors, icmp_gen.h), or the kernel first learns the flow in
 * a state in which it accepts the packet (kernel_adopt_flow), or it is
 * dropped and counted. docs/NAT.md lists each case with its test.
 */
#ifndef XNAT_HANDOFF_H
#define XNAT_HANDOFF_H

#include "parsing.h"
#include "conntrack.h"
#include "icmp_gen.h"

/*
 * Hand a packet of flow V to the kernel with REASON, if the kernel can be
 * taught the flow first: UDP either way, TCP in its original direction
 * (see kernel_adopt_flow). An ICMP echo request the kernel takes as its
 * own new echo. Anything else is dropped as drop_flow_unhandled.
 */
static __always_inline int flow_hand_up(struct xdp_md *ctx, struct pkt *p,
					const struct flow_value *v,
					__u32 reason)
{
	/* Offloaded flows are the kernel's own connections. */
	if (v->nat == FLOW_NAT_CT)
		return pkt_stop(p, XDP_PASS, reason);
	if (p->key.proto == IPPROTO_UDP ||
	    (p->key.proto == IPPROTO_TCP && v->dir == FLOW_DIR_ORIG)) {
		if (kernel_adopt_flow(ctx, p, v))
			return pkt_stop(p, XDP_DROP, XNAT_DROP_FLOW_UNHANDLED);
		return pkt_stop(p, XDP_PASS, reason);
	}
	if ((p->key.proto == IPPROTO_ICMP || p->key.proto == IPPROTO_ICMPV6) &&
	    p->icmp_echo_request)
		return pkt_stop(p, XDP_PASS, reason);
	return pkt_stop(p, XDP_DROP, XNAT_DROP_FLOW_UNHANDLED);
}

/*
 * A packet the parser let through with an exception (TTL or hop limit
 * ending here, IPv4 options). Without a flow (V NULL) it is the kernel's,
 * as before; with one, XDP answers or hands it over as above. ICMP errors
 * are the kernel's either way: no error is sent about an error, and the
 * kernel drops what it cannot use.
 */
static __always_inline int flow_exception(struct xdp_md *ctx, struct pkt *p,
					  const struct flow_value *v)
{
	__u32 reason = p->ttl_expired ? XNAT_PASS_TTL : XNAT_PASS_IP_OPTIONS;

	if (!v || p->icmp_error)
		return pkt_stop(p, XDP_PASS, reason);
	if (p->ttl_expired)
		return icmp_send_error(ctx, p, XNAT_TX_ICMP_TIME_EXCEEDED, 0);
	return flow_hand_up(ctx, p, v, reason);
}

/*
 * A packet of flow V too big for its egress port (MTU): with DF (IPv4) or
 * always (IPv6, where routers never fragment) the sender must hear so
 * from here; without DF the kernel fragments it, once it knows the flow.
 */
static __always_inline int flow_too_big(struct xdp_md *ctx, struct pkt *p,
					const struct flow_value *v, __u32 mtu)
{
	if (v->nat == FLOW_NAT_CT)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_MTU);
	if (p->ip6 || (p->ip4 && (p->ip4->frag_off & bpf_htons(IP_DF))))
		return icmp_send_error(ctx, p, XNAT_TX_ICMP_TOO_BIG, mtu);
	return flow_hand_up(ctx, p, v, XNAT_PASS_MTU);
}

#endif /* XNAT_HANDOFF_H */
