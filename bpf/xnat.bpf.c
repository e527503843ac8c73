// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat data path: one XDP program on every LAN and WAN port. A packet is
 * parsed, looked up in the flow table and, on a hit, rewritten from the
 * cached entry and redirected (the fast path). A miss is routed and NATed
 * and installs its connection (the slow path, slowpath.h). What XDP does not
 * handle goes to the kernel, which runs as a complete router with its own
 * NAT for it. In offload mode the kernel's conntrack decides instead and
 * XDP only carries what it accepted (offload.h). Every exit is counted by
 * reason (stats.h).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xnat_common.h"
#include "maps.h"
#include "parsing.h"
#include "stats.h"
#include "fib.h"
#include "flow.h"
#include "slowpath.h"
#include "icmp_error.h"
#include "frag.h"
#include "offload.h"
#include "handoff.h"
#include "tcp_track.h"
#include "mss.h"

char LICENSE[] SEC("license") = "GPL";

/* Send a rewritten packet out of EGRESS. Falls back to XDP_DROP when the
 * port left the devmap: the packet must not reach the kernel rewritten. */
static __always_inline int redirect(struct pkt *p, __u32 egress, __u32 reason)
{
	int action = bpf_redirect_map(&xnat_tx_ports, egress, XDP_DROP);

	if (action != XDP_REDIRECT)
		reason = XNAT_DROP_REDIRECT;
	return count(p, reason, action);
}

/* Rewrite the packet from V and send it to V's egress port. */
static __always_inline int forward(struct xdp_md *ctx, struct pkt *p,
				   const struct flow_value *v, __u32 reason)
{
	__u32 mtu_len = p->l3_len;
	int rc;

	/* Against the port's MTU now, not when the flow began: an MTU
	 * lowered under a running flow must still reach the sender as
	 * fragmentation needed / packet too big, or the flow's big packets
	 * vanish (handoff.h). */
	if (bpf_check_mtu(ctx, v->egress_ifindex, &mtu_len, 0, 0)) {
		rc = flow_too_big(ctx, p, v, mtu_len);
		return count(p, p->reason, rc);
	}
	/* A SYN or SYN-ACK leaves with an MSS that fits (mss.h). */
	if ((p->tcp_flags & XNAT_TCP_SYN) && p->l4)
		mss_clamp(ctx, p->l4 - (void *)p->eth, !!p->ip6, mtu_len);
	/* A first fragment whose followers overtook it and went up: the
	 * kernel must reassemble the datagram, and forward it as this
	 * flow. A second first fragment is a forgery or a duplicate. */
	rc = frag_first_check(p);
	if (rc == FRAG_WENT_UP) {
		XNAT_COV();
		rc = flow_hand_up(ctx, p, v, XNAT_PASS_FRAGMENT);
		return count(p, p->reason, rc);
	}
	if (rc == FRAG_DUPLICATE)
		return count(p, XNAT_DROP_FRAG_BAD, XDP_DROP);
	/* Only a first fragment XDP forwards may lead the rest: one that
	 * went to the kernel takes its datagram's other fragments along. */
	frag_record(p, &p->key);
	if (flow_rewrite(p, v) ||
	    l2_rewrite(ctx, p, v->eth_dst, v->eth_src, v->egress_vid))
		return count(p, XNAT_DROP_MALFORMED, XDP_DROP);
	p->out = v;
	return redirect(p, v->egress_ifindex, reason);
}

/* The per-CPU room a new or rerouted flow's entry is built in. */
static __always_inline struct new_flow *scratch_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnat_scratch, &zero);
}

/*
 * Fast path switched off (benchmarks): keep the flow's NAT, but route every
 * packet again as the slow path would, to measure what the cache saves.
 */
static __always_inline int forward_rerouted(struct xdp_md *ctx, struct pkt *p,
					    struct flow_value *v)
{
	struct new_flow *nf = scratch_get();
	struct bpf_fib_lookup fib;
	struct iface_info *out;
	int rc;

	if (!nf)
		return count(p, XNAT_PASS_INTERNAL, XDP_PASS);
	if (!ingress_get(p))
		return count(p, XNAT_PASS_EGRESS, XDP_PASS);
	rc = fib_route(ctx, p, &v->new_saddr, &v->new_daddr, &fib);
	if (rc == XDP_PASS)
		rc = flow_hand_up(ctx, p, v, p->reason);
	if (rc != XNAT_CONTINUE)
		return count(p, p->reason, rc);
	out = egress_get(p, &fib);
	if (!out)
		return count(p, XNAT_PASS_EGRESS, XDP_PASS);
	/* Everything but the timer, which may not be copied. */
	__builtin_memcpy(&nf->ov, v, __builtin_offsetof(struct flow_value, timer));
	nf->ov.egress_ifindex = out->parent;
	nf->ov.egress_vid = out->vid;
	__builtin_memcpy(nf->ov.eth_dst, fib.dmac, ETH_ALEN);
	__builtin_memcpy(nf->ov.eth_src, fib.smac, ETH_ALEN);
	return forward(ctx, p, &nf->ov, XNAT_FWD_ROUTED);
}

/*
 * A packet with a flow entry, or a later fragment of one: the fast path,
 * and what of it goes to the kernel or is dropped on the way (exceptions,
 * ICMP errors about the flow, TCP outside the window). 1 when that is
 * where it ends, with the action (counted) in *ACTION; 0 with *VP the entry
 * (NULL: none) when the slow path decides (a miss, or the fast path turned
 * off). A flag, not XNAT_CONTINUE in the action: the verifier cannot tell
 * a helper's verdict (bpf_redirect_map) from it, and would walk on into the
 * slow path with the packet pointers a VLAN rewrite invalidated.
 */
static __always_inline int flow_path(struct xdp_md *ctx, struct pkt *p,
				     struct xnat_config *cfg,
				     struct flow_value **vp, int *action)
{
	struct flow_value *v;
	int rc;

	if (p->frag == FRAG_LATER) {
		struct flow_key *fk = frag_flow(p, &rc);

		if (rc) {
			*action = count(p, XNAT_DROP_FRAG_BAD, XDP_DROP);
			return 1;
		}
		if (!fk) {
			if (!p->ttl_expired)
				frag_mark_up(p);
			*action = count(p, p->ttl_expired ? XNAT_PASS_TTL :
					XNAT_PASS_FRAGMENT, XDP_PASS);
			return 1;
		}
		XNAT_COV();
		p->key = *fk;
	}
	v = flow_lookup(p);
	if (p->frag == FRAG_LATER && !v) {
		*action = count(p, XNAT_PASS_FRAGMENT, XDP_PASS);
		return 1;
	}
	if (v && !mac_eq(p->eth->h_dest, v->ingress_mac)) {
		*action = count(p, XNAT_PASS_OTHERHOST, XDP_PASS);
		return 1;
	}
	if (p->ttl_expired || p->ip_options) {
		rc = flow_exception(ctx, p, v);
		*action = count(p, p->reason, rc);
		return 1;
	}
	if (p->icmp_error) {
		/* Errors about flows the kernel owns are the kernel's. */
		if (!v)
			*action = count(p, XNAT_PASS_PROTO, XDP_PASS);
		else if (icmp_error_forward(p, v) ||
			 l2_rewrite(ctx, p, v->eth_dst, v->eth_src,
				    v->egress_vid))
			*action = count(p, XNAT_DROP_MALFORMED, XDP_DROP);
		else
			*action = redirect(p, v->egress_ifindex,
					   XNAT_FWD_ICMP_ERROR);
		return 1;
	}
	if (v && p->key.proto == IPPROTO_TCP && tcp_track(ctx, p, v)) {
		*action = count(p, XNAT_DROP_TCP_WINDOW, XDP_DROP);
		return 1;
	}
	if (v && !(cfg->flags & XNAT_F_FASTPATH_OFF)) {
		if (p->frag == FRAG_FIRST)
			XNAT_COV();
		flow_touch(v, p, cfg);
		*action = forward(ctx, p, v, XNAT_FWD_FAST);
		return 1;
	}
	*vp = v;
	return 0;
}

/*
 * A packet without a flow: its ingress port and source checked, then the
 * slow path's decision and install (slowpath.h) into NF, and the packet
 * forwarded by it. Returns the action, counted.
 */
static __always_inline int new_flow_path(struct xdp_md *ctx, struct pkt *p,
					 struct xnat_config *cfg,
					 struct new_flow *nf)
{
	struct iface_info *in;
	int rc;

	__builtin_memset(nf, 0, sizeof(*nf));
	/* The SYN of a new TCP flow starts its tracking (tcp_track.h). */
	tcp_track_init(ctx, &nf->ov, p);

	in = ingress_get(p);
	if (!in)
		return count(p, p->key.vid ? XNAT_PASS_VLAN : XNAT_PASS_EGRESS,
			     XDP_PASS);
	if (!mac_eq(p->eth->h_dest, in->mac))
		return count(p, XNAT_PASS_OTHERHOST, XDP_PASS);
	/* The source's reverse path (RFC 3704), on every port: fib.h. */
	rc = fib_src_check(ctx, p, in, cfg);
	if (rc)
		return count(p, rc, rc == XNAT_DROP_SPOOFED ? XDP_DROP :
							      XDP_PASS);
	rc = new_flow_open(ctx, p, nf, cfg, in);
	if (rc != XNAT_CONTINUE)
		return count(p, p->reason, rc);
	if (nf->ov.nat == FLOW_NAT_SNAT)
		XNAT_COV();
	else if (nf->ov.nat == FLOW_NAT_DNAT)
		XNAT_COV();
	else if (nf->ov.nat == FLOW_NAT_INBOUND)
		XNAT_COV();
	else if (nf->ov.nat == FLOW_NAT_HAIRPIN)
		XNAT_COV();
	return forward(ctx, p, &nf->ov,
		       nf->ov.edm ? XNAT_FWD_SLOW_EDM : XNAT_FWD_SLOW);
}

/* Every packet's start in either program: parsed, and the config found.
 * XNAT_CONTINUE, or the action, counted. */
static __always_inline int packet_begin(struct xdp_md *ctx, struct pkt *p,
					struct xnat_config **cfg)
{
	int rc = parse_packet(ctx, p);

	if (rc != XNAT_CONTINUE)
		return count(p, p->reason, rc);
	*cfg = config_get();
	if (!*cfg)
		return count(p, XNAT_PASS_INTERNAL, XDP_PASS);
	return XNAT_CONTINUE;
}

/*
 * The xdp-mode slow path, reached by a tail call from xdp_xnat on a miss
 * (maps.h says why it is a program of its own). Nothing but the context
 * crosses a tail call, so the packet is parsed again: the same bytes give
 * the same struct pkt, at a cost only new flows pay.
 */
SEC("xdp")
int xdp_xnat_slow(struct xdp_md *ctx)
{
	struct new_flow *nf = scratch_get();
	struct xnat_config *cfg;
	struct pkt p;
	int rc = packet_begin(ctx, &p, &cfg);

	if (rc != XNAT_CONTINUE)
		return rc;
	if (!nf)
		return count(&p, XNAT_PASS_INTERNAL, XDP_PASS);
	return new_flow_path(ctx, &p, cfg, nf);
}

SEC("xdp")
int xdp_xnat(struct xdp_md *ctx)
{
	struct xnat_config *cfg;
	struct flow_value *v;
	struct pkt p;
	int rc = packet_begin(ctx, &p, &cfg);

	if (rc != XNAT_CONTINUE)
		return rc;

	/* mode = offload: conntrack decides (offload.h), a hit or an
	 * offloaded miss is forwarded exactly as here. */
	if (cfg->flags & XNAT_F_OFFLOAD) {
		__u32 reason;

		rc = offload_packet(ctx, &p, cfg, &v, &reason);
		if (rc != XNAT_CONTINUE)
			return count(&p, p.reason, rc);
		return forward(ctx, &p, v, reason);
	}

	if (flow_path(ctx, &p, cfg, &v, &rc))
		return rc;
	if (!v) {
		bpf_tail_call(ctx, &xnat_slow_path, 0);
		/* Only while the loader has not linked the slow path. */
		return count(&p, XNAT_PASS_INTERNAL, XDP_PASS);
	}
	flow_touch(v, &p, cfg);
	return forward_rerouted(ctx, &p, v);
}

#ifdef XNAT_FUZZ
/* How many branches fuzz.h counts: every XNAT_COV() is above this line. */
const volatile __u32 xnat_fuzz_sites = __COUNTER__;
#endif
