/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Forwarding ICMP errors about NATed flows (RFC 5508): destination
 * unreachable, time exceeded (traceroute), fragmentation needed / packet
 * too big (PMTUD). The kernel cannot do it for XDP flows, its conntrack has
 * never seen them. parse_icmp_error() keyed the error as the reply of the
 * packet it quotes, so R below is the flow entry such a reply would use:
 * the error is translated the way that reply would be, outer header and
 * quoted packet alike, and sent where the reply would go.
 */
#ifndef XNAT_ICMP_ERROR_H
#define XNAT_ICMP_ERROR_H

#include "parsing.h"
#include "csum.h"
#include "flow.h"

/*
 * Rewrite the quoted IPv4 packet (it travels the opposite way of R) and
 * store in *DELTA the one's-complement delta of everything changed in it,
 * which the outer ICMP checksum covers. 0, or -EINVAL when the quote is
 * not within the packet.
 */
static __always_inline int icmp_error_inner4(struct pkt *p,
					     const struct flow_value *r,
					     __u32 *delta)
{
	struct iphdr *in = p->inner_l3;
	void *end = p->data_end;
	__be16 *l4 = p->inner_l4, old;
	__u32 d = 0;

	/* The pointers, not p->icmp_error: the verifier cannot tie a flag
	 * to the pointers it promises. */
	if (!in || !l4 || (void *)(in + 1) > end || (void *)(l4 + 4) > end)
		return -EINVAL;
	/* Addresses: the quoted source is the reply's destination. */
	d = csum_delta32(d, in->saddr, r->new_daddr.v4);
	d = csum_delta32(d, in->daddr, r->new_saddr.v4);
	in->saddr = r->new_daddr.v4;
	in->daddr = r->new_saddr.v4;
	old = in->check;
	in->check = csum_apply(in->check, r->l3_csum_delta);
	d = csum_delta16(d, old, in->check);

	if (in->protocol == IPPROTO_ICMP) {
		/* The quoted echo request: its id is the reply's dport. */
		struct icmphdr *ih = (void *)l4;

		if ((void *)(ih + 1) > end)
			return -EINVAL;
		d = csum_delta16(d, ih->un.echo.id, r->new_dport);
		ih->un.echo.id = r->new_dport;
		old = ih->checksum;
		ih->checksum = csum_apply(ih->checksum, r->l4_csum_delta);
		d = csum_delta16(d, old, ih->checksum);
		*delta = d;
		return 0;
	}

	d = csum_delta16(d, l4[0], r->new_dport);
	d = csum_delta16(d, l4[1], r->new_sport);
	l4[0] = r->new_dport;
	l4[1] = r->new_sport;
	/* The quoted L4 checksum, where the quote reaches it (within the
	 * IP packet: the outer checksum covers nothing after it): the
	 * pseudo header and ports change by the same delta as the flow's. */
	if (in->protocol == IPPROTO_UDP) {
		old = l4[3];
		if (old) {
			l4[3] = csum_apply(old, r->l4_csum_delta);
			if (!l4[3])
				l4[3] = 0xffff;
			d = csum_delta16(d, old, l4[3]);
		}
	} else if ((void *)(l4 + 9) <= end && p->ip4 &&
		   (void *)(l4 + 9) - (void *)p->ip4 <= p->l3_len) {
		old = l4[8]; /* TCP checksum, bytes 16-17 */
		l4[8] = csum_apply(old, r->l4_csum_delta);
		d = csum_delta16(d, old, l4[8]);
	}
	*delta = d;
	return 0;
}

/* Translate the error as R's packets are, headed where they go. 0, or
 * -EINVAL when a header is not within the packet. */
static __always_inline int icmp_error_forward(struct pkt *p,
					      const struct flow_value *r)
{
	struct icmphdr *ih = p->l4;
	void *end = p->data_end;
	__u32 inner_delta = 0;

	if ((void *)(ih + 1) > end)
		return -EINVAL;
	if (p->ip4 && r->nat != FLOW_NAT_NONE) {
		struct iphdr *ip = p->ip4;
		__be32 saddr = ip->saddr, daddr = ip->daddr;
		__u32 d = 0;

		if ((void *)(ip + 1) > end)
			return -EINVAL;
		if (icmp_error_inner4(p, r, &inner_delta))
			return -EINVAL;
		ih->checksum = csum_apply(ih->checksum, inner_delta);
		/* The error goes to whoever sent the quoted packet. Its source
		 * is translated when the flow translates sources this way
		 * (errors leaving the LAN: the server or any inside router
		 * becomes the WAN address, no inside address leaks out);
		 * otherwise a router on the way keeps its own address. */
		daddr = r->new_daddr.v4;
		if (r->new_saddr.v4 != p->key.saddr.v4)
			saddr = r->new_saddr.v4;
		d = csum_delta32(d, ip->saddr, saddr);
		d = csum_delta32(d, ip->daddr, daddr);
		ip->saddr = saddr;
		ip->daddr = daddr;
		ip->check = csum_apply(ip->check, d);
	}
	return hop_decrement(p);
}

#endif /* XNAT_ICMP_ERROR_H */
