/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flow table: one entry per direction of a connection, each holding the
 * complete rewrite for its direction (addresses, ports, MACs, egress port,
 * checksum deltas). A hit needs nothing else. Connections end when idle
 * for their timeout: the sweeper (sweep.h) checks them with
 * flow_is_over() and ends them with flow_end(), in the kernel, whether or
 * not `xnat run` is around.
 */
#ifndef XNAT_FLOW_H
#define XNAT_FLOW_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "csum.h"
#include "parsing.h"
#include "nat.h"

/* Longest sleep of offload mode's per-entry expiry timer (offload.h). */
#define FLOW_RECHECK_NS (60 * NSEC_PER_SEC)

/* Checksum deltas of the rewrite from KEY to V (see csum.h). */
static __always_inline void flow_set_deltas(const struct flow_key *key,
					    struct flow_value *v)
{
	__u32 l3 = 0, l4 = 0;

	if (key->family == XNAT_AF_INET) {
		l3 = csum_delta32(l3, key->saddr.v4, v->new_saddr.v4);
		l3 = csum_delta32(l3, key->daddr.v4, v->new_daddr.v4);
	}
	if (key->proto == IPPROTO_ICMP || key->proto == IPPROTO_ICMPV6) {
		/* No pseudo-header: only the echo id counts. Requests carry
		 * it in sport, replies in dport; the other one is zero. */
		l4 = csum_delta16(l4, key->sport, v->new_sport);
		l4 = csum_delta16(l4, key->dport, v->new_dport);
	} else {
		l4 = csum_delta16(l3, key->sport, v->new_sport);
		l4 = csum_delta16(l4, key->dport, v->new_dport);
	}
	v->l3_csum_delta = l3;
	v->l4_csum_delta = l4;
}

/* One hop less (the IPv4 part from include/net/ip.h, see csum.h). 0, or
 * -EINVAL when the header is not within the packet. */
static __always_inline int hop_decrement(struct pkt *p)
{
	void *end = p->data_end;

	if (p->ip4) {
		struct iphdr *ip = p->ip4;

		if ((void *)(ip + 1) > end)
			return -EINVAL;
		ipv4_decrease_ttl(ip);
	} else if (p->ip6) {
		struct ipv6hdr *ip6 = p->ip6;

		if ((void *)(ip6 + 1) > end)
			return -EINVAL;
		ip6->hop_limit--;
	}
	return 0;
}

/*
 * The Ethernet header for the next hop: its MACs, with the 802.1Q tag
 * changed, popped or pushed so the frame leaves with OUT_VID (0 untagged).
 * Popping and pushing move the start of the frame, which invalidates every
 * pointer into it: this comes after all L3/L4 rewrites. The MACs are
 * written afresh, so only the tag and the EtherType need care: after a
 * pop the inner EtherType already sits right after the MACs, after a push
 * the old EtherType already sits right after the new tag. 0, -EINVAL
 * (a header beyond the packet) or -ENOSPC (no room to push the tag).
 */
static __always_inline int l2_rewrite(struct xdp_md *ctx, struct pkt *p,
				      const __u8 *dmac, const __u8 *smac,
				      __u16 out_vid)
{
	__u16 in_vid = p->key.vid;
	struct vlan_hdr *vh;
	struct ethhdr *eth;

	if (in_vid && out_vid && in_vid != out_vid) {
		vh = (void *)(p->eth + 1);
		if ((void *)(vh + 1) > p->data_end)
			return -EINVAL;
		vh->tci = (vh->tci & bpf_htons(~VLAN_VID_MASK)) |
			  bpf_htons(out_vid);
	} else if (!in_vid != !out_vid) {
		if (bpf_xdp_adjust_head(ctx, in_vid ? (int)sizeof(*vh) :
						      -(int)sizeof(*vh)))
			return -ENOSPC; /* no headroom to push a tag */
		eth = (void *)(long)ctx->data;
		p->data_end = (void *)(long)ctx->data_end;
		vh = (void *)(eth + 1);
		if ((void *)(vh + 1) > p->data_end)
			return -EINVAL;
		if (out_vid) {
			eth->h_proto = bpf_htons(ETH_P_8021Q);
			vh->tci = bpf_htons(out_vid);
		}
		p->eth = eth;
	}
	__builtin_memcpy(p->eth->h_dest, dmac, ETH_ALEN);
	__builtin_memcpy(p->eth->h_source, smac, ETH_ALEN);
	return 0;
}

/*
 * The entry of P's key, if P belongs to it. An ICMP echo id of 0 keys a
 * request (the id as source port) and a reply (as destination port)
 * alike, and a NATed echo flow's original direction is always its
 * request (NAT opens echo flows from requests only): a packet of the
 * other kind is not its, and the entry's rewrite and checksum delta are
 * for the id field the other kind carries. ICMP errors (keyed by their
 * quote) and later fragments (no ICMP header) are left to their own
 * checks.
 */
static __always_inline struct flow_value *flow_lookup(const struct pkt *p)
{
	struct flow_value *v = bpf_map_lookup_elem(&xnat_flows, &p->key);

	if (v && v->nat != FLOW_NAT_NONE && !p->icmp_error &&
	    p->frag != FRAG_LATER &&
	    (p->key.proto == IPPROTO_ICMP || p->key.proto == IPPROTO_ICMPV6) &&
	    p->icmp_echo_request != (v->dir == FLOW_DIR_ORIG))
		return NULL;
	return v;
}

/* The other direction's entry of the connection whose entry for P is V,
 * or NULL. Its key is built in the per-CPU scratch, not on the stack (the
 * callers' frames are deep). */
static __always_inline struct flow_value *
flow_reply_lookup(const struct pkt *p, const struct flow_value *v)
{
	struct xnat_tmp *t = xnat_tmp_get();

	if (!t)
		return NULL;
	flow_reply_key(&p->key, v, &t->rkey);
	return bpf_map_lookup_elem(&xnat_flows, &t->rkey);
}

/* Apply V to the packet: the whole per-packet work of a hit. 0, or
 * -EINVAL when a header is not where the parse put it. */
static __always_inline int flow_rewrite(struct pkt *p,
					const struct flow_value *v)
{
	void *end = p->data_end;

	if (p->ip4 && v->nat != FLOW_NAT_NONE) {
		struct iphdr *ip = p->ip4;

		if ((void *)(ip + 1) > end)
			return -EINVAL;
		ip->saddr = v->new_saddr.v4;
		ip->daddr = v->new_daddr.v4;
		ip->check = csum_apply(ip->check, v->l3_csum_delta);
	}

	/* Later fragments carry no L4 header (l4 is NULL): the first one's
	 * checksum update covers the whole datagram. The pointer is tested,
	 * not p->frag, which the verifier cannot tie to it. */
	if (v->nat != FLOW_NAT_NONE && p->l4) {
		if (p->key.proto == IPPROTO_TCP) {
			struct tcphdr *th = p->l4;

			if ((void *)(th + 1) > end)
				return -EINVAL;
			th->source = v->new_sport;
			th->dest = v->new_dport;
			th->check = csum_apply(th->check, v->l4_csum_delta);
		} else if (p->key.proto == IPPROTO_UDP) {
			struct udphdr *uh = p->l4;

			if ((void *)(uh + 1) > end)
				return -EINVAL;
			uh->source = v->new_sport;
			uh->dest = v->new_dport;
			/* Zero means "no checksum" in IPv4 UDP: keep it; a
			 * computed zero is sent as all ones (RFC 768). */
			if (uh->check) {
				uh->check = csum_apply(uh->check,
						       v->l4_csum_delta);
				if (!uh->check)
					uh->check = 0xffff;
			}
		} else {
			struct icmphdr *ih = p->l4;

			if ((void *)(ih + 1) > end)
				return -EINVAL;
			ih->un.echo.id = p->icmp_echo_request ? v->new_sport :
								v->new_dport;
			ih->checksum = csum_apply(ih->checksum,
						  v->l4_csum_delta);
		}
	}

	return hop_decrement(p);
}

/* Does this entry carry traffic from the WAN into a mapping? (A port
 * forward is a service the admin opened: its traffic always counts.) */
static __always_inline int flow_is_inbound(const struct flow_value *v)
{
	return v->dir == FLOW_DIR_ORIG ? v->nat == FLOW_NAT_INBOUND :
					 v->nat == FLOW_NAT_SNAT;
}

/* Account a packet to its entry; written without atomics (see the header). */
static __always_inline void flow_touch(struct flow_value *v, const struct pkt *p,
				       const struct xnat_config *cfg)
{
	__u8 flags = p->tcp_flags & (XNAT_TCP_FIN | XNAT_TCP_SYN | XNAT_TCP_RST);

	/* RFC 4787 REQ-6: outbound UDP refreshes a mapping; inbound only
	 * if configured, or a remote could hold a port open forever. */
	if (p->key.proto != IPPROTO_UDP || !flow_is_inbound(v) ||
	    (cfg->flags & XNAT_F_INBOUND_REFRESH))
		v->last_seen_ns = bpf_ktime_get_coarse_ns();
	v->packets++;
	v->bytes += p->len;
	/* Only write the flags when they add something: they rarely do. */
	if ((v->tcp_flags_seen | flags) != v->tcp_flags_seen)
		v->tcp_flags_seen |= flags;
}

/*
 * Is the connection of ORIG entry OV (and reply entry RV, if any) over?
 * Both directions idle for its timeout, or marked by `xnat flows delete`.
 * The timeouts are read from the config each time, so a reload that
 * changes them applies to existing flows too.
 */
static __always_inline int flow_is_over(const struct xnat_config *cfg,
					const struct flow_key *okey,
					const struct flow_value *ov,
					const struct flow_value *rv, __u64 now)
{
	__u64 last = ov->last_seen_ns, timeout;

	if (ov->expired)
		return 1;
	if (rv && rv->last_seen_ns > last)
		last = rv->last_seen_ns;
	timeout = flow_timeout(cfg, okey, ov, rv) * NSEC_PER_SEC;
	return now >= last + timeout;
}

/* End the connection of ORIG entry OV: its mapping reference, its
 * endpoint-dependent binding, both entries. */
static __always_inline void flow_end(const struct xnat_config *cfg,
				     const struct flow_key *okey,
				     const struct flow_value *ov,
				     const struct flow_key *rkey,
				     const struct flow_value *rv)
{
	struct nat_endpoint ep;
	enum flow_mapping mapped;

	mapped = flow_mapping_ep(okey, ov, &ep);
	if (mapped != FLOW_MAPPING_NONE)
		mapping_put(cfg, &ep, mapped == FLOW_MAPPING_OUT);
	if (ov->edm)
		edm_release(okey, ov);
	if (rv)
		bpf_map_delete_elem(&xnat_flows, rkey);
	bpf_map_delete_elem(&xnat_flows, okey);
}

#endif /* XNAT_FLOW_H */
