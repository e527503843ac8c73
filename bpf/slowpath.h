/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The slow path: a packet whose flow is not in the table. It is routed with
 * the FIB, the NAT decision is taken from the config maps (SNAT from LAN to
 * WAN through the endpoint's mapping, port forwards and filtered inbound
 * traffic from WAN to LAN, plain routing otherwise), and both directions of
 * the new connection are installed, reply first.
 */
#ifndef XNAT_SLOWPATH_H
#define XNAT_SLOWPATH_H

#include "maps.h"
#include "parsing.h"
#include "fib.h"
#include "flow.h"
#include "sweep.h"
#include "conntrack.h"

static __always_inline struct iface_info *iface_get(__u32 ifindex)
{
	return bpf_map_lookup_elem(&xnat_ifaces, &ifindex);
}

/*
 * The port the packet arrived on as the kernel sees it: for a tagged
 * frame, the VLAN device of its (port, VLAN id), if it is one of ours.
 * Sets p->in_ifindex; NULL when xnat does not run there.
 */
static __always_inline struct iface_info *ingress_get(struct pkt *p)
{
	struct vlan_key vk = { .ifindex = p->key.ifindex, .vid = p->key.vid };
	__u32 *vlan_dev;

	if (p->key.vid) {
		vlan_dev = bpf_map_lookup_elem(&xnat_vlans, &vk);
		if (!vlan_dev)
			return NULL;
		p->in_ifindex = *vlan_dev;
	}
	return iface_get(p->in_ifindex);
}

/* A new flow's route: the FIB's answer, and the port of ours it leaves by. */
struct new_route {
	struct bpf_fib_lookup fib;
	struct iface_info *out;
};

/*
 * Fill both directions from the packet, the rewrite already chosen in
 * nf->ov (new_* fields) and the route RT. The reply goes back out of
 * the ingress port to the MAC the packet came from, so it needs no route.
 */
static __always_inline void new_flow_fill(struct new_flow *nf,
					  const struct pkt *p,
					  const struct new_route *rt)
{
	const struct bpf_fib_lookup *fib = &rt->fib;
	__u64 now = bpf_ktime_get_coarse_ns();

	nf->okey = p->key;
	nf->ov.dir = FLOW_DIR_ORIG;
	/* VLAN devices transmit on their parent port, tagged. */
	nf->ov.egress_ifindex = rt->out->parent;
	nf->ov.egress_vid = rt->out->vid;
	__builtin_memcpy(nf->ov.eth_dst, fib->dmac, ETH_ALEN);
	__builtin_memcpy(nf->ov.eth_src, fib->smac, ETH_ALEN);
	nf->ov.created_ns = now;
	nf->ov.last_seen_ns = now;
	nf->ov.packets = 1;
	nf->ov.bytes = p->len;
	nf->ov.tcp_flags_seen |=
		p->tcp_flags & (XNAT_TCP_FIN | XNAT_TCP_SYN | XNAT_TCP_RST);
	__builtin_memcpy(nf->ov.ingress_mac, p->eth->h_dest, ETH_ALEN);
	__builtin_memcpy(nf->rv.ingress_mac, fib->smac, ETH_ALEN);

	nf->rv.dir = FLOW_DIR_REPLY;
	nf->rv.nat = nf->ov.nat;
	nf->rv.new_saddr = p->key.daddr;
	nf->rv.new_daddr = p->key.saddr;
	nf->rv.new_sport = p->key.dport;
	nf->rv.new_dport = p->key.sport;
	nf->rv.egress_ifindex = p->key.ifindex;
	nf->rv.egress_vid = p->key.vid;
	__builtin_memcpy(nf->rv.eth_dst, p->eth->h_source, ETH_ALEN);
	__builtin_memcpy(nf->rv.eth_src, p->eth->h_dest, ETH_ALEN);
	nf->rv.created_ns = now;
	nf->rv.last_seen_ns = now;
}

/* Finish both entries once the external port (ov.new_sport) is known. */
static __always_inline void new_flow_seal(struct new_flow *nf)
{
	flow_reply_key(&nf->okey, &nf->ov, &nf->rkey);
	flow_set_deltas(&nf->okey, &nf->ov);
	flow_set_deltas(&nf->rkey, &nf->rv);
}

/*
 * Insert both entries, reply first: a flow must never be found in one
 * direction only. An endpoint-dependent flow's reply is in already
 * (new_flow_insert_edm() inserts it as the test of its port). 0, or the
 * insert's error: -EEXIST from the reply's insert means its tuple is
 * another flow's, from the ORIG's (returned as -EALREADY) that this very
 * flow exists already.
 */
#define EALREADY 114
static __always_inline int new_flow_put(struct new_flow *nf)
{
	int err;

	if (!nf->ov.edm) {
		err = bpf_map_update_elem(&xnat_flows, &nf->rkey, &nf->rv,
					  BPF_NOEXIST);
		if (err)
			return err;
	}
	err = bpf_map_update_elem(&xnat_flows, &nf->okey, &nf->ov, BPF_NOEXIST);
	if (err) {
		bpf_map_delete_elem(&xnat_flows, &nf->rkey);
		return err == -EEXIST ? -EALREADY : err;
	}
	return 0;
}

/* Is the entry in the way of NF's reply one of NF's own endpoint's? */
static __always_inline int reply_is_ours(const struct new_flow *nf)
{
	struct flow_value *v = bpf_map_lookup_elem(&xnat_flows, &nf->rkey);

	return v && v->new_daddr.v4 == nf->okey.saddr.v4 &&
	       v->new_dport == nf->okey.sport;
}

/* A failed insert: the kernel NATs this packet (a racing CPU's flow, or a
 * full table, where the kernel's own table may still have room). */
static __always_inline int new_flow_failed(__u32 *reason, int err)
{
	return verdict(reason, XDP_PASS, err == -EEXIST || err == -EALREADY ?
				     XNAT_PASS_INSERT_RACE :
				     XNAT_PASS_TABLE_FULL);
}

/*
 * Claim nf's current candidate port (nf->ov.new_sport, nf->rkey.dport)
 * towards the flow's remote by inserting the flow's reply entry with it.
 * Its key is (remote address and port, external address and port,
 * protocol, the WAN port and VLAN): every SNAT flow leaves by the one WAN
 * port, so the insert (BPF_NOEXIST) is the proof that no other flow, of
 * a mapping or endpoint-dependent, uses that port towards this remote;
 * the first CPU to insert owns it. 0: in place; -EEXIST: taken; another
 * error: the table is full. Nothing is left behind on an error.
 */
static __always_inline int edm_claim(struct new_flow *nf)
{
	flow_set_deltas(&nf->rkey, &nf->rv);
	return bpf_map_update_elem(&xnat_flows, &nf->rkey, &nf->rv,
				   BPF_NOEXIST);
}

/*
 * SNAT through an endpoint-dependent port, when the endpoint cannot have
 * a port of its own: the external port need only be unique towards this
 * remote (address, port), which multiplies the ports by the remotes. A
 * candidate is claimed by inserting the flow's reply entry with it
 * (edm_claim(), BPF_NOEXIST, lock-free like xnat_ports).
 * Bounded: at most NAT_PORT_TRIES candidates; a flow that gets none goes
 * to the kernel's NAT, whose own range may have a port, within a budget
 * per CPU (no_port_verdict()); beyond it, dropped and counted.
 *
 * A global function, called after new_flow_map() or new_flow_insert()
 * returned NAT_EIM_FULL, with nf->ep set; XNAT_CONTINUE: the port is
 * claimed and the reply entry in, new_flow_insert() adds the ORIG entry.
 */
__noinline int new_flow_insert_edm(struct new_flow *nf,
				   const struct xnat_config *cfg,
				   __u32 *reason)
{
	struct nat_port_key *pk;
	struct nat_endpoint *ep;
	int charged, err = -EEXIST, i;
	__u32 range, off;

	if (!nf || !cfg || !reason)
		return XDP_ABORTED;
	pk = &nf->pk;
	ep = &nf->ep;

	charged = host_charge(cfg, ep->addr);
	if (charged < 0)
		return verdict(reason, XDP_DROP, XNAT_DROP_HOST_LIMIT);
	nf->ov.edm = charged ? FLOW_EDM_PORT_CHARGED : FLOW_EDM_PORT;
	nf->ov.addr_idx = pool_pick(cfg, ep->addr);
	pk->proto = ep->proto;
	pk->addr_idx = nf->ov.addr_idx;
	nf->ov.new_saddr.v4 = pool_addr(cfg, nf->ov.addr_idx);
	nf->rv.edm = nf->ov.edm;
	nf->rv.addr_idx = nf->ov.addr_idx;
	/* Random candidates. Consecutive ones from a random start make
	 * runs of taken ports grow where searches end, as linear probing
	 * does: filling a remote's ports to 90 %, one flow in twenty met
	 * NAT_PORT_TRIES taken in a row; drawn at random, a candidate is
	 * taken with the probability of the load alone, and one in a
	 * hundred did (unit edm_spread). A range of at most NAT_PORT_TRIES
	 * ports is searched whole, in order.
	 * No port preservation: many hosts using the same inside ports would
	 * all start on the same one. A candidate's reply key (the reply key
	 * with its port) is taken by the reply entry itself. The random port
	 * the endpoint-independent probe found held by an active mapping
	 * (nf->pk_active) is the first candidate, and its owner needs no
	 * second look. */
	range = cfg->port_max - cfg->port_min + 1;
	if (nf->pk_active)
		off = (__u32)(bpf_ntohs(pk->port) - cfg->port_min);
	else
		off = bpf_get_prandom_u32() % range;
	flow_reply_key(&nf->okey, &nf->ov, &nf->rkey);
#pragma clang loop unroll(disable)
	for (i = 0; i < NAT_PORT_TRIES; i++) {
		if (i)
			off = range > NAT_PORT_TRIES ?
				      bpf_get_prandom_u32() % range :
				      (off + 1) % range;
		nf->ov.new_sport = bpf_htons(cfg->port_min + off);
		pk->port = nf->ov.new_sport;
		nf->rkey.dport = nf->ov.new_sport;
		if (!(i == 0 && nf->pk_active) && !edm_port_free(pk))
			continue;
		err = edm_claim(nf);
		if (err != -EEXIST)
			break;
	}
	if (!err) {
		/* new_flow_insert() adds the ORIG entry, or gives all back
		 * (the reply entry with the rest). */
		nf->mapped = FLOW_MAPPING_NONE;
		return XNAT_CONTINUE;
	}
	if (charged)
		host_release(ep->addr);
	if (err == -EEXIST)
		return no_port_verdict(reason);
	return new_flow_failed(reason, err);
}

/*
 * A new connection's mapping: a reference on its inside endpoint's (in
 * nf->ep; nf->mapped says which), created with its external port for
 * outgoing flows. Returns XNAT_CONTINUE, NAT_EIM_FULL for an SNAT flow
 * that needs an endpoint-dependent port (new_flow_insert_edm()), or a
 * verdict with its reason in *REASON.
 *
 * This, new_flow_insert() and new_flow_insert_edm() are global functions,
 * called one after the other: the verifier checks each once, on its own,
 * instead of once in every slow path that would inline them (their paths
 * multiplied by the slow paths' passed its limit), and each has the stack
 * the slow path leaves, not a share of it. They see the packet's key
 * (nf->okey) only.
 */
__noinline int new_flow_map(struct new_flow *nf, const struct xnat_config *cfg,
			    __u32 *reason)
{
	struct nat_mapping *m;
	int rc;

	if (!nf || !cfg || !reason)
		return XDP_ABORTED;
	nf->addr_idx = 0;
	nf->pk_active = 0;
	nf->mapped = flow_mapping_ep(&nf->okey, &nf->ov, &nf->ep);
	if (nf->ov.nat == FLOW_NAT_INBOUND) {
		m = bpf_map_lookup_elem(&xnat_mappings, &nf->ep);
		if (!m) /* expired since the filter looked */
			return verdict(reason, XDP_DROP, XNAT_DROP_UNSOLICITED);
		__sync_fetch_and_add(&m->flows, 1);
		return XNAT_CONTINUE;
	}
	if (nf->mapped != FLOW_MAPPING_OUT)
		return XNAT_CONTINUE;
	rc = mapping_get(reason, cfg, nf);
	if (rc == NAT_EIM_FULL && nf->ov.nat != FLOW_NAT_SNAT)
		return verdict(reason, XDP_PASS, XNAT_PASS_NO_PORT);
	if (rc == XNAT_CONTINUE)
		nf->ov.new_saddr.v4 = pool_addr(cfg, nf->addr_idx);
	return rc;
}

/*
 * Install a new connection whose mapping new_flow_map() took: both
 * entries, reply first. Returns XNAT_CONTINUE with the flow in place;
 * NAT_EIM_FULL when the mapping's port is another endpoint's towards this
 * remote (the reference is given back; new_flow_insert_edm() next); or a
 * verdict with its reason in *REASON: mostly XDP_PASS, the kernel's NAT
 * takes it.
 */
__noinline int new_flow_insert(struct new_flow *nf,
			       const struct xnat_config *cfg, __u32 *reason)
{
	int err;

	if (!nf || !cfg || !reason)
		return XDP_ABORTED;
	new_flow_seal(nf);
	err = new_flow_put(nf);
	if (!err && sweep_track(&nf->okey, nf->ov.created_ns)) {
		/* No room to queue it for expiry: it must not stay. */
		bpf_map_delete_elem(&xnat_flows, &nf->okey);
		bpf_map_delete_elem(&xnat_flows, &nf->rkey);
		err = -ENOSPC;
	}
	if (err) {
		if (nf->mapped != FLOW_MAPPING_NONE)
			mapping_put(cfg, &nf->ep,
				    nf->mapped == FLOW_MAPPING_OUT);
		if (nf->ov.edm) {
			/* new_flow_insert_edm()'s charge (its claim, the
			 * reply entry, went with the rest). */
			if (nf->ov.edm == FLOW_EDM_PORT_CHARGED)
				host_release(nf->ep.addr);
			return new_flow_failed(reason, err);
		}
		/* An endpoint-dependent flow of another endpoint holds the
		 * mapping's port towards this remote: this flow cannot use
		 * the mapping, but may have a port of its own. (The same
		 * endpoint's entry is another CPU creating this very flow.) */
		if (err == -EEXIST && nf->ov.nat == FLOW_NAT_SNAT &&
		    !reply_is_ours(nf))
			return NAT_EIM_FULL;
		return new_flow_failed(reason, err);
	}
	/* Not for an endpoint-dependent flow: inbound traffic through a port
	 * is its owner's (inbound_allowed()), so its record could admit
	 * nothing, and would overwrite the owner's for the same remote. */
	if (nf->ov.nat == FLOW_NAT_SNAT && !nf->ov.edm)
		peer_record(&nf->ep, nf->ov.new_sport, nf->addr_idx,
			    nf->okey.daddr.v4);
	return XNAT_CONTINUE;
}

/* new_flow_insert() for the packet P. */
static __always_inline int slow_insert(struct pkt *p, struct new_flow *nf,
				       const struct xnat_config *cfg)
{
	__u32 reason = 0;
	int rc = new_flow_map(nf, cfg, &reason);

	if (rc == XNAT_CONTINUE)
		rc = new_flow_insert(nf, cfg, &reason);
	if (rc == NAT_EIM_FULL) {
		rc = new_flow_insert_edm(nf, cfg, &reason);
		if (rc == XNAT_CONTINUE)
			rc = new_flow_insert(nf, cfg, &reason);
	}
	if (rc != XNAT_CONTINUE)
		p->reason = reason;
	return rc;
}

/* Is the routed egress one of ours? Redirecting elsewhere is not safe. */
static __always_inline struct iface_info *egress_get(struct pkt *p,
						     const struct bpf_fib_lookup *fib)
{
	struct iface_info *out = iface_get(fib->ifindex);

	if (!out || !bpf_map_lookup_elem(&xnat_tx_ports, &out->parent))
		return NULL;
	return out;
}

/*
 * Route a new flow's first packet from its source to DADDR: XNAT_CONTINUE
 * with RT filled, its port one of ours (a LAN port when LAN_ONLY), or a
 * verdict. One place for the check every new flow's egress passes.
 */
static __always_inline int new_flow_route(struct xdp_md *ctx, struct pkt *p,
					  const union xnat_addr *daddr,
					  struct new_route *rt, int lan_only)
{
	int rc;

	rc = fib_route(ctx, p, &p->key.saddr, daddr, &rt->fib);
	if (rc != XNAT_CONTINUE)
		return rc;
	rt->out = egress_get(p, &rt->fib);
	if (!rt->out || (lan_only && rt->out->role != XNAT_ROLE_LAN))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_EGRESS);
	return XNAT_CONTINUE;
}

/* Only a SYN opens a TCP connection: anything else is mid-stream (the
 * kernel's, or stale). 1 for such a segment. */
static __always_inline int tcp_midstream(const struct pkt *p)
{
	return p->key.proto == IPPROTO_TCP &&
	       (p->tcp_flags & (XNAT_TCP_SYN | XNAT_TCP_ACK | XNAT_TCP_RST)) !=
		       XNAT_TCP_SYN;
}

/*
 * The route of a connection towards a LAN host, once the caller has set
 * nf->ov.nat and the rewrite (new_* fields): the new destination must be
 * on a LAN port. Port forwards, inbound mappings and hairpins end here.
 */
static __always_inline int new_flow_to_lan(struct xdp_md *ctx, struct pkt *p,
					   const struct new_flow *nf,
					   struct new_route *rt)
{
	/* A hairpin usually goes back out of the port it came in on. */
	return new_flow_route(ctx, p, &nf->ov.new_daddr, rt, 1);
}

/* The port forward of the packet's protocol and destination port on the
 * first NAT address, NULL if none: TCP and UDP only. */
static __always_inline struct fwd_value *forward_get(const struct pkt *p)
{
	struct fwd_key fk = { .port = p->key.dport, .proto = p->key.proto };

	if (p->key.proto != IPPROTO_TCP && p->key.proto != IPPROTO_UDP)
		return NULL;
	return bpf_map_lookup_elem(&xnat_forwards, &fk);
}

/*
 * Hairpinning (RFC 4787 REQ-9, RFC 5382 REQ-8): a LAN host connects to
 * FWD, a port forward on the WAN address. The server behind it must answer
 * through the router, so the source becomes the WAN address and a NAT port,
 * the external mapping the client would have towards the outside.
 */
static __always_inline int slow_hairpin(struct xdp_md *ctx, struct pkt *p,
					struct new_flow *nf,
					const struct xnat_config *cfg,
					const struct fwd_value *fwd,
					struct new_route *rt)
{
	if (kernel_owns_flow(ctx, p))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_KERNEL_FLOW);
	nf->ov.nat = FLOW_NAT_HAIRPIN;
	nf->ov.new_saddr.v4 = cfg->nat_addr;
	nf->ov.new_sport = p->key.sport;
	nf->ov.new_daddr.v4 = fwd->addr;
	nf->ov.new_dport = fwd->port;
	return new_flow_to_lan(ctx, p, nf, rt);
}

/* The rewrite of a routed flow: addresses and ports stay as they are. */
static __always_inline void new_flow_as_is(struct new_flow *nf,
					   const struct pkt *p)
{
	nf->ov.new_saddr = p->key.saddr;
	nf->ov.new_daddr = p->key.daddr;
	nf->ov.new_sport = p->key.sport;
	nf->ov.new_dport = p->key.dport;
}

/* A new connection from a LAN port: SNAT towards the WAN, else routed. */
static __always_inline int slow_from_lan(struct xdp_md *ctx, struct pkt *p,
					 struct new_flow *nf,
					 const struct xnat_config *cfg,
					 struct new_route *rt)
{
	struct fwd_value *fwd;
	int rc;

	/* Only a SYN opens a TCP connection here. Anything else is the
	 * kernel's (a flow it NATed) or stale: its conntrack decides. */
	if (tcp_midstream(p))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_TCP_MIDSTREAM);
	/* Echo replies from inside answer pings we never forwarded. */
	if ((p->key.proto == IPPROTO_ICMP || p->key.proto == IPPROTO_ICMPV6) &&
	    !p->icmp_echo_request)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_ECHO_REPLY);

	/* To the WAN address: a hairpin if a forward matches, else for the
	 * router itself (the route below says so). */
	if (p->ip4 && cfg->nat_addr && p->key.daddr.v4 == cfg->nat_addr) {
		fwd = forward_get(p);
		if (fwd)
			return slow_hairpin(ctx, p, nf, cfg, fwd, rt);
	}

	rc = new_flow_route(ctx, p, &p->key.daddr, rt, 0);
	if (rc != XNAT_CONTINUE)
		return rc;
	if (rt->fib.ifindex == p->in_ifindex)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_EGRESS);
	if (kernel_owns_flow(ctx, p))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_KERNEL_FLOW);

	new_flow_as_is(nf, p);
	if (rt->out->role == XNAT_ROLE_WAN && p->key.family == XNAT_AF_INET) {
		if (!cfg->nat_addr)
			return pkt_stop(p, XDP_PASS, XNAT_PASS_NO_NAT_ADDR);
		nf->ov.nat = FLOW_NAT_SNAT;
		nf->ov.new_saddr.v4 = cfg->nat_addr;
	} else {
		nf->ov.nat = FLOW_NAT_NONE;
	}
	return XNAT_CONTINUE;
}

/*
 * From the WAN to the NAT address without a flow: a port forward (DNAT), or
 * a port of the XDP range that a mapping owns and whose filtering lets
 * this sender in (RFC 4787 REQ-8), opens a connection. Other ports of the
 * XDP range are unsolicited; the rest of the ports are the kernel's (its
 * own sockets, its NAT).
 */
static __always_inline int slow_to_nat_addr(struct xdp_md *ctx, struct pkt *p,
					    struct new_flow *nf,
					    const struct xnat_config *cfg,
					    __u8 idx, struct new_route *rt)
{
	struct nat_endpoint ep;
	struct fwd_value *fwd;

	if (p->key.proto != IPPROTO_TCP && p->key.proto != IPPROTO_UDP)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_LOCAL); /* pings */
	/* Port forwards live on the first address only. */
	fwd = idx ? NULL : forward_get(p);
	/* A forward's port may also be one the kernel's NAT handed out (its
	 * range is the operator's too): replies of its connections are its. */
	if (fwd && kernel_owns_flow(ctx, p))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_KERNEL_FLOW);
	if (fwd) {
		nf->ov.nat = FLOW_NAT_DNAT;
		ep.addr = fwd->addr;
		ep.port = fwd->port;
	} else if (port_in_range(cfg, p->key.dport)) {
		switch (inbound_allowed(p, cfg, idx, &ep)) {
		case NAT_INBOUND_ALLOWED:
			break;
		case NAT_INBOUND_FILTERED:
			return pkt_stop(p, XDP_DROP, XNAT_DROP_FILTERED);
		default:
			return pkt_stop(p, XDP_DROP, XNAT_DROP_UNSOLICITED);
		}
		nf->ov.nat = FLOW_NAT_INBOUND;
	} else {
		return pkt_stop(p, XDP_PASS, XNAT_PASS_WAN_IN);
	}
	if (tcp_midstream(p))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_TCP_MIDSTREAM);

	nf->ov.new_saddr = p->key.saddr;
	nf->ov.new_sport = p->key.sport;
	nf->ov.new_daddr.v4 = ep.addr;
	nf->ov.new_dport = ep.port;
	return new_flow_to_lan(ctx, p, nf, rt);
}

/*
 * IPv6 from the WAN to a LAN host, routed, that [ipv6] inbound = open lets
 * open a flow (docs/NAT.md): anything, TCP by its SYN only; a stray TCP segment goes to the kernel,
 * whose ruleset takes the same decision. ICMPv6 errors never get here:
 * those about an XDP flow follow it, the rest are the kernel's.
 */
static __always_inline int slow_in6(struct pkt *p, struct new_flow *nf)
{
	if (tcp_midstream(p))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_TCP_MIDSTREAM);
	new_flow_as_is(nf, p);
	nf->ov.nat = FLOW_NAT_NONE;
	return XNAT_CONTINUE;
}

/*
 * A packet from the WAN without a flow: a port forward opens a connection,
 * and IPv6 what [ipv6] inbound allows (slow_in6); anything else that would
 * enter the LAN is unsolicited and dropped, unless the kernel's conntrack
 * knows it (a flow the kernel forwarded). Traffic for
 * the router itself, or for the kernel's NAT ports, goes up.
 */
static __always_inline int slow_from_wan(struct xdp_md *ctx, struct pkt *p,
					 struct new_flow *nf,
					 const struct xnat_config *cfg,
					 struct new_route *rt)
{
	union xnat_addr dst = p->key.daddr;
	int rc, idx;

	/* Echo replies without a flow: conntrack cannot be asked about ICMP
	 * (the kfunc knows TCP and UDP only) and the kernel may have sent
	 * the request (first packet while ARP resolved, or its own ping).
	 * Its forward filter drops them if unsolicited. */
	if ((p->key.proto == IPPROTO_ICMP || p->key.proto == IPPROTO_ICMPV6) &&
	    !p->icmp_echo_request)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_WAN_IN);

	if (p->key.family == XNAT_AF_INET) {
		idx = pool_index(cfg, p->key.daddr.v4);
		if (idx >= 0)
			return slow_to_nat_addr(ctx, p, nf, cfg, idx, rt);
	}

	rc = new_flow_route(ctx, p, &dst, rt, 1);
	if (rc != XNAT_CONTINUE)
		return rc;
	if (kernel_owns_flow(ctx, p))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_KERNEL_FLOW);
	if (p->key.family != XNAT_AF_INET6)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_UNSOLICITED);
	if (cfg->flags & XNAT_F_IPV6_OPEN)
		return slow_in6(p, nf);
	/* stateful: a WAN host chooses an echo request's identifier and
	 * source freely; a flow each would let it fill the flow table and
	 * send the LAN's new connections to the kernel. The kernel's
	 * ruleset admits the request (kernel_mode.c) and its conntrack,
	 * with its own limits, matches the LAN host's reply, which comes up
	 * as pass_echo_reply. */
	if (p->icmp_echo_request)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_ECHO_INBOUND);
	return pkt_stop(p, XDP_DROP, XNAT_DROP_UNSOLICITED);
}

/*
 * A packet without a flow, from IN (a port of ours): the handler of its
 * side decides the new connection (its rewrite in nf->ov, and its route),
 * which is then filled in and installed. XNAT_CONTINUE with the flow in
 * place, or a verdict.
 */
static __always_inline int new_flow_open(struct xdp_md *ctx, struct pkt *p,
					 struct new_flow *nf,
					 const struct xnat_config *cfg,
					 const struct iface_info *in)
{
	struct new_route rt;
	int rc;

	if (in->role == XNAT_ROLE_WAN)
		rc = slow_from_wan(ctx, p, nf, cfg, &rt);
	else
		rc = slow_from_lan(ctx, p, nf, cfg, &rt);
	if (rc != XNAT_CONTINUE)
		return rc;
	new_flow_fill(nf, p, &rt);
	return slow_insert(p, nf, cfg);
}

#endif /* XNAT_SLOWPATH_H */
