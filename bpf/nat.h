/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * NAT mappings and filtering (RFC 4787, RFC 5382). An inside endpoint gets
 * one external port that it keeps towards every destination (endpoint-
 * independent mapping), preserved from the inside port where that port is
 * free and in range. Flows hold references on their mapping; the mapping's
 * timer frees the port one timeout after the last flow ended, so a port is
 * never handed to another host while the old one may still expect traffic.
 * Ports are claimed by inserting into xnat_ports with BPF_NOEXIST: the
 * first CPU to insert owns the port, no lock needed.
 *
 * When no such port is free (more inside endpoints than ports), a flow
 * falls back to an endpoint-dependent port: one unique towards its remote
 * (address, port) only, as Linux's masquerade allocates, claimed the same
 * lock-free way by the flow's reply entry (slowpath.h edm_claim()) and
 * freed with it. That breaks
 * RFC 4787 REQ-1 for that endpoint, deliberately (docs/NAT.md). The pool
 * of external addresses is paired (REQ-2), and an inside host may hold at
 * most [nat] ports_per_host ports (RFC 6888 REQ-4).
 */
#ifndef XNAT_NAT_H
#define XNAT_NAT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parsing.h"
#include "natlog.h"
#include "port_active.h"

#define NSEC_PER_SEC 1000000000ULL
#define XNAT_CLOCK_MONOTONIC 1

/* Port candidates tried for a new endpoint-independent mapping, and for
 * an endpoint-dependent binding, before giving up on each. */
#define NAT_PORT_TRIES 16
/* For this long after a CPU found no endpoint-independent port, it tries
 * one random port instead of NAT_PORT_TRIES (port_probe()): a full range
 * fails every try (each a look-up, a cache miss at scale), and the
 * fallback is only a few tries away. A port freed meanwhile is still
 * found by the new endpoints that follow, each trying one at random. */
#define NAT_FULL_HINT_NS (1 * NSEC_PER_SEC)

/* Flows that got no port at all, handed to the kernel's NAT (its own
 * range may still have one), per CPU and window; the rest are dropped,
 * so a full range cannot turn into a storm of kernel NAT searches. */
#define NAT_NO_PORT_PASS_BURST 64
#define NAT_NO_PORT_PASS_WINDOW_NS (10 * 1000 * 1000ULL)

/* mapping_get(): no endpoint-independent port to be had. */
#define NAT_EIM_FULL -2

/* A verdict with its reason, for the parts of the slow path that see the
 * packet's key only (new_flow_insert()). */
static __always_inline int verdict(__u32 *reason, int action, __u32 why)
{
	*reason = why;
	return action;
}

/* How long a mapping keeps its port after its last flow (REQ-3). */
static __always_inline __u64 mapping_hold_ns(const struct xnat_config *cfg,
					     __u8 proto, __u8 flags)
{
	__u32 s = proto == IPPROTO_TCP ? cfg->timeout_tcp_trans :
		  proto == IPPROTO_UDP ? cfg->timeout_udp : cfg->timeout_icmp;

	if (proto == IPPROTO_UDP && (flags & NAT_MAPPING_DNS) &&
	    cfg->timeout_udp_dns)
		s = cfg->timeout_udp_dns;
	return s * NSEC_PER_SEC;
}

static __always_inline int port_in_range(const struct xnat_config *cfg,
					 __be16 port)
{
	__u16 h = bpf_ntohs(port);

	return h >= cfg->port_min && h <= cfg->port_max;
}

static __always_inline __be16 port_random(const struct xnat_config *cfg)
{
	__u16 range = cfg->port_max - cfg->port_min + 1;

	return bpf_htons(cfg->port_min + bpf_get_prandom_u32() % range);
}

/* Port preservation where the inside port is in range (RFC 4787 4.2.1
 * allows it; games and VoIP behind some peers depend on it). */
static __always_inline __be16 port_first(const struct xnat_config *cfg,
					 __be16 inside)
{
	return port_in_range(cfg, inside) ? inside : port_random(cfg);
}

/* The external address of pool index IDX (0: the config's nat_addr). */
static __always_inline __be32 pool_addr(const struct xnat_config *cfg,
					__u32 idx)
{
	__be32 *a;

	if (!idx || cfg->pool_size <= 1)
		return cfg->nat_addr;
	a = bpf_map_lookup_elem(&xnat_pool, &idx);
	return a ? *a : cfg->nat_addr;
}

/* Paired pooling (RFC 4787 REQ-2): always the same address for INSIDE. */
static __always_inline __u8 pool_pick(const struct xnat_config *cfg,
				      __be32 inside)
{
	if (cfg->pool_size <= 1)
		return 0;
	return xnat_pool_hash(inside, cfg->pool_size);
}

/* The pool index of ADDR, or -1 when it is none of our addresses. */
static __always_inline int pool_index(const struct xnat_config *cfg,
				      __be32 addr)
{
	__u32 *idx;

	if (!cfg->nat_addr)
		return -1;
	if (addr == cfg->nat_addr)
		return 0;
	if (cfg->pool_size <= 1)
		return -1;
	idx = bpf_map_lookup_elem(&xnat_pool_rev, &addr);
	return idx ? (int)*idx : -1;
}

/*
 * One more external port for inside address ADDR, against [nat]
 * ports_per_host (RFC 6888 REQ-4). 1: counted (release it later), 0: not
 * counted (no limit set, or no room to track the host), -1: the host
 * holds its limit already.
 */
static __always_inline int host_charge(const struct xnat_config *cfg,
				       __be32 addr)
{
	struct nat_host nh = {}, *h;

	if (!cfg->ports_per_host)
		return 0;
	h = bpf_map_lookup_elem(&xnat_hosts, &addr);
	if (!h) {
		bpf_map_update_elem(&xnat_hosts, &addr, &nh, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&xnat_hosts, &addr);
		if (!h)
			return 0;
	}
	/* Add, then look (the fetching add needs BPF v3): two CPUs racing
	 * for the last port cannot both get it; at worst both back off. */
	__sync_fetch_and_add(&h->ports, 1);
	if (*(volatile __u32 *)&h->ports > cfg->ports_per_host) {
		__sync_fetch_and_add(&h->ports, (__u32)-1);
		return -1;
	}
	return 1;
}

static __always_inline void host_release(__be32 addr)
{
	struct nat_host *h = bpf_map_lookup_elem(&xnat_hosts, &addr);

	if (h)
		__sync_fetch_and_add(&h->ports, (__u32)-1);
}

/* Which mapping a flow holds a reference on. */
enum flow_mapping {
	FLOW_MAPPING_NONE = 0, /* none: routed, port forwards, endpoint-
				  dependent ports */
	FLOW_MAPPING_OUT = 1,  /* its source's: SNAT, hairpin */
	FLOW_MAPPING_IN = 2,   /* its destination's: inbound through one */
};

/*
 * The inside endpoint whose mapping a flow uses, in EP: the source of
 * outgoing (SNAT, hairpin) flows, the destination of inbound ones.
 */
static __always_inline enum flow_mapping
flow_mapping_ep(const struct flow_key *okey, const struct flow_value *ov,
		struct nat_endpoint *ep)
{
	__builtin_memset(ep, 0, sizeof(*ep));
	ep->proto = okey->proto;
	if (ov->edm)
		return FLOW_MAPPING_NONE;
	if (ov->nat == FLOW_NAT_SNAT || ov->nat == FLOW_NAT_HAIRPIN) {
		ep->addr = okey->saddr.v4;
		ep->port = okey->sport;
		return FLOW_MAPPING_OUT;
	}
	if (ov->nat == FLOW_NAT_INBOUND) {
		ep->addr = ov->new_daddr.v4;
		ep->port = ov->new_dport;
		return FLOW_MAPPING_IN;
	}
	return FLOW_MAPPING_NONE;
}

/* Timer of a mapping: free it and its port once unused for its hold
 * time. Armed when its last flow ends (mapping_put), not before: a
 * mapping in use needs no timer. */
static int mapping_expire(void *map, struct nat_endpoint *ep,
			  struct nat_mapping *m)
{
	struct nat_port_key pk = { .port = m->ext_port, .proto = ep->proto,
				   .addr_idx = m->addr_idx };
	struct xnat_config *cfg = config_get();
	__u64 now, hold;

	if (!cfg)
		return 0;
	/* In use again: the put that ends its last flow re-arms. */
	if (m->flows)
		return 0;
	hold = mapping_hold_ns(cfg, ep->proto, m->flags);
	now = bpf_ktime_get_ns();
	if (now < m->last_used_ns + hold) {
		bpf_timer_start(&m->timer, m->last_used_ns + hold - now, 0);
		return 0;
	}
	if (m->flags & NAT_MAPPING_CHARGED)
		host_release(ep->addr);
	natlog_emit(NATLOG_EXPIRED, ep, pool_addr(cfg, m->addr_idx),
		    m->ext_port, 0, 0);
	port_active_set(&pk, 0);
	bpf_map_delete_elem(&xnat_ports, &pk);
	bpf_map_delete_elem(&xnat_mappings, ep);
	return 0;
}

/*
 * Say in the port owner's entry whether EP's mapping M has outbound flows
 * (NAT_EP_ACTIVE, see struct nat_endpoint). Written on the transitions
 * only (the first outbound flow of a mapping, the end of its last), by
 * plain stores: a flag that races to 0 while flows remain only costs
 * edm_port_free() its look-up of the mapping; it is set only by a CPU
 * that has just added an outbound flow.
 */
static __always_inline void port_owner_mark(const struct nat_endpoint *ep,
					    const struct nat_mapping *m,
					    int active)
{
	struct nat_port_key pk = { .port = m->ext_port, .proto = ep->proto,
				   .addr_idx = m->addr_idx };
	struct nat_endpoint *owner = bpf_map_lookup_elem(&xnat_ports, &pk);

	if (owner && owner->addr == ep->addr && owner->port == ep->port) {
		owner->flags = active ? NAT_EP_ACTIVE : 0;
		port_active_set(&pk, active);
	}
}

/* A flow of EP's ended: the mapping's idle time starts when none is left.
 * OUTBOUND: the flow was opened from the inside. */
static __always_inline void mapping_put(const struct xnat_config *cfg,
					const struct nat_endpoint *ep,
					int outbound)
{
	struct nat_mapping *m = bpf_map_lookup_elem(&xnat_mappings, ep);

	if (!m)
		return;
	m->last_used_ns = bpf_ktime_get_ns();
	/* Adds of -1: plain BPF_XADD, which every BPF target has. */
	if (outbound) {
		__sync_fetch_and_add(&m->out_flows, (__u32)-1);
		if (!*(volatile __u32 *)&m->out_flows)
			port_owner_mark(ep, m, 0);
	}
	__sync_fetch_and_add(&m->flows, (__u32)-1);
	/* Two last puts racing may both arm the timer: harmless. */
	if (*(volatile __u32 *)&m->flows)
		return;
	/* The last one: hold the port for the timeout, then free it.
	 * -EBUSY from init means the timer exists already (re-armed). */
	bpf_timer_init(&m->timer, &xnat_mappings, XNAT_CLOCK_MONOTONIC);
	bpf_timer_set_callback(&m->timer, mapping_expire);
	bpf_timer_start(&m->timer, mapping_hold_ns(cfg, ep->proto, m->flags),
			0);
}

/*
 * Claim PK (its first candidate set) for EP, trying at most NAT_PORT_TRIES
 * ports: 0, -EEXIST when all were taken, or the update's error.
 */
static __always_inline int port_claim(const struct xnat_config *cfg,
				      const struct nat_endpoint *ep,
				      struct nat_port_key *pk)
{
	/* Its mapping is made with its first outbound flow. */
	struct nat_endpoint owner = { .addr = ep->addr, .port = ep->port,
				      .proto = ep->proto,
				      .flags = NAT_EP_ACTIVE };
	int err = -EEXIST, i;

#pragma clang loop unroll(disable)
	for (i = 0; i < NAT_PORT_TRIES; i++) {
		err = bpf_map_update_elem(&xnat_ports, pk, &owner, BPF_NOEXIST);
		if (err != -EEXIST)
			break;
		pk->port = port_random(cfg);
	}
	if (!err)
		port_active_set(pk, 1);
	return err;
}

/*
 * While the range is full: one look at PK, a random port (a port seen
 * taken costs a read, not the update's bucket lock). Free: claimed for EP
 * as port_claim() would. Taken: -EEXIST, and PK stays a candidate for an
 * endpoint-dependent port whose owner is already known: *ACTIVE when the
 * owner's mapping has outbound flows, so that edm_port_free() need not
 * look it up again (each look-up is a cache miss at scale).
 */
static __always_inline int port_probe(const struct xnat_config *cfg,
				      const struct nat_endpoint *ep,
				      struct nat_port_key *pk, __u8 *active)
{
	struct nat_endpoint *owner;

	/* The common answer of a full range, from the caches. */
	if (port_active(pk)) {
		*active = 1;
		return -EEXIST;
	}
	owner = bpf_map_lookup_elem(&xnat_ports, pk);
	if (!owner)
		return port_claim(cfg, ep, pk);
	*active = !!(owner->flags & NAT_EP_ACTIVE);
	return -EEXIST;
}

/*
 * The port of NF's new mapping, in nf->pk (its address index set): the
 * endpoint's own port where it is in range (preservation), else random
 * tries; while this CPU recently found the range full, one random probe
 * (port_probe(), which may leave nf->pk an endpoint-dependent candidate,
 * nf->pk_active). 0, or -EEXIST / -errno as port_claim().
 */
static __always_inline int mapping_port(const struct xnat_config *cfg,
					struct new_flow *nf, __u64 now)
{
	struct nat_alloc_hint *hint;
	__u32 zero = 0;
	int err;

	hint = bpf_map_lookup_elem(&xnat_alloc, &zero);
	if (hint && now - hint->eim_full_ns < NAT_FULL_HINT_NS) {
		nf->pk.port = port_random(cfg);
		err = port_probe(cfg, &nf->ep, &nf->pk, &nf->pk_active);
	} else {
		nf->pk.port = port_first(cfg, nf->ep.port);
		err = port_claim(cfg, &nf->ep, &nf->pk);
	}
	/* Taken, or the ports map full: the same to the caller. */
	if (err && hint)
		hint->eim_full_ns = now;
	return err;
}

/*
 * A reference on the mapping of NF's inside endpoint (nf->ep) for the new
 * flow nf->okey, creating it (and claiming a port) if the endpoint has
 * none. The external port goes to nf->ov.new_sport, its address's pool
 * index to nf->addr_idx; nf->nm is scratch space for the new mapping. A
 * mapping only DNS flows (UDP port 53) used expires sooner. Returns
 * XNAT_CONTINUE; NAT_EIM_FULL when no endpoint-independent port is free
 * (the caller may fall back to an endpoint-dependent one); or a verdict
 * with its reason.
 */
static __always_inline int mapping_get(__u32 *reason,
				       const struct xnat_config *cfg,
				       struct new_flow *nf)
{
	const struct nat_endpoint *ep = &nf->ep;
	struct nat_mapping *nm = &nf->nm, *m;
	int dns = flow_is_dns(&nf->okey);
	int err, charged, revive;
	__u64 now;

	m = bpf_map_lookup_elem(&xnat_mappings, ep);
	if (m) {
reuse:
		if (!dns && (m->flags & NAT_MAPPING_DNS))
			m->flags &= ~NAT_MAPPING_DNS;
		revive = !*(volatile __u32 *)&m->out_flows;
		__sync_fetch_and_add(&m->out_flows, 1);
		__sync_fetch_and_add(&m->flows, 1);
		if (revive)
			port_owner_mark(ep, m, 1);
		nf->ov.new_sport = m->ext_port;
		nf->addr_idx = m->addr_idx;
		return XNAT_CONTINUE;
	}

	charged = host_charge(cfg, ep->addr);
	if (charged < 0)
		return verdict(reason, XDP_DROP, XNAT_DROP_HOST_LIMIT);
	now = bpf_ktime_get_ns();
	nf->pk.proto = ep->proto;
	nf->pk.addr_idx = pool_pick(cfg, ep->addr);
	if (mapping_port(cfg, nf, now))
		goto fail;

	__builtin_memset(nm, 0, sizeof(*nm));
	nm->ext_port = nf->pk.port;
	nm->addr_idx = nf->pk.addr_idx;
	nm->flags = (charged ? NAT_MAPPING_CHARGED : 0) |
		    (dns ? NAT_MAPPING_DNS : 0);
	nm->flows = 1;
	nm->out_flows = 1;
	nm->last_used_ns = now;
	err = bpf_map_update_elem(&xnat_mappings, ep, nm, BPF_NOEXIST);
	if (err) {
		port_active_set(&nf->pk, 0);
		bpf_map_delete_elem(&xnat_ports, &nf->pk);
		/* Another CPU mapped EP meanwhile: use its mapping. */
		m = err == -EEXIST ? bpf_map_lookup_elem(&xnat_mappings, ep) :
				     NULL;
		if (m) {
			if (charged)
				host_release(ep->addr);
			goto reuse;
		}
		goto fail;
	}
	natlog_emit(NATLOG_CREATED, ep, pool_addr(cfg, nf->pk.addr_idx),
		    nf->pk.port, nf->okey.daddr.v4, nf->okey.dport);
	nf->ov.new_sport = nf->pk.port;
	nf->addr_idx = nf->pk.addr_idx;
	return XNAT_CONTINUE;
fail:
	if (charged)
		host_release(ep->addr);
	return NAT_EIM_FULL;
}

/* A flow for which no port is free: to the kernel, within its budget. */
static __always_inline int no_port_verdict(__u32 *reason)
{
	struct nat_alloc_hint *hint;
	__u32 zero = 0;
	__u64 now;

	hint = bpf_map_lookup_elem(&xnat_alloc, &zero);
	if (!hint)
		return verdict(reason, XDP_DROP, XNAT_DROP_NO_PORT);
	now = bpf_ktime_get_ns();
	if (now - hint->pass_window_ns >= NAT_NO_PORT_PASS_WINDOW_NS) {
		hint->pass_window_ns = now;
		hint->passed = 0;
	}
	if (hint->passed >= NAT_NO_PORT_PASS_BURST)
		return verdict(reason, XDP_DROP, XNAT_DROP_NO_PORT);
	hint->passed++;
	return verdict(reason, XDP_PASS, XNAT_PASS_NO_PORT);
}

/*
 * May an endpoint-dependent flow use external port PK? Not while PK's
 * mapping is over but waits out its timeout (REQ-3): its remotes may
 * still send to it, and must not reach another host. An active mapping's
 * flows hold their own (remote, port) pairs in the flow table.
 */
static __always_inline int edm_port_free(const struct nat_port_key *pk)
{
	struct nat_endpoint *owner, ep;
	struct nat_mapping *m;

	/* An owner marked active has outbound flows: known from the caches
	 * (port_active.h), else from one look-up, where the mapping's was a
	 * second per candidate, each a cache miss. */
	if (port_active(pk))
		return 1;
	owner = bpf_map_lookup_elem(&xnat_ports, pk);
	if (!owner || (owner->flags & NAT_EP_ACTIVE))
		return 1;
	ep = *owner;
	ep.flags = 0;
	m = bpf_map_lookup_elem(&xnat_mappings, &ep);
	return !m || m->out_flows;
}

/* An endpoint-dependent flow ended. Its port towards its remote is free
 * with its reply entry; what is left is its host's charge. */
static __always_inline void edm_release(const struct flow_key *okey,
					const struct flow_value *ov)
{
	if (ov->edm == FLOW_EDM_PORT_CHARGED)
		host_release(okey->saddr.v4);
}

/* Remember that EP's mapping sent to REMOTE (address-dependent filter). */
static __always_inline void peer_record(const struct nat_endpoint *ep,
					__be16 ext_port, __u8 idx,
					__be32 remote)
{
	struct nat_peer_key k = { .remote = remote, .ext_port = ext_port,
				  .proto = ep->proto, .addr_idx = idx };
	struct nat_endpoint *had = bpf_map_lookup_elem(&xnat_peers, &k);

	/* A lookup costs less than an LRU update: most new flows of a
	 * mapping go to a remote it has sent to already. */
	if (had && had->addr == ep->addr && had->port == ep->port)
		return;
	bpf_map_update_elem(&xnat_peers, &k, ep, BPF_ANY);
}

enum nat_inbound {
	NAT_INBOUND_ALLOWED = 0, /* EP filled */
	NAT_INBOUND_FILTERED,    /* a mapping owns it, filtering refuses */
	NAT_INBOUND_NO_MAPPING,  /* no mapping open to inbound owns it */
};

/*
 * May a packet from the WAN to pool address IDX reach the inside endpoint
 * owning its destination port? With endpoint-independent filtering anyone
 * may; with address-dependent filtering only an address the endpoint has
 * sent to, through this same mapping.
 */
static __always_inline enum nat_inbound
inbound_allowed(const struct pkt *p, const struct xnat_config *cfg,
		__u8 idx, struct nat_endpoint *ep)
{
	struct nat_port_key pk = { .port = p->key.dport,
				   .proto = p->key.proto, .addr_idx = idx };
	struct nat_peer_key k = { .remote = p->key.saddr.v4,
				  .ext_port = p->key.dport,
				  .proto = p->key.proto, .addr_idx = idx };
	struct nat_endpoint *owner, *peer;
	struct nat_mapping *m;

	owner = bpf_map_lookup_elem(&xnat_ports, &pk);
	if (!owner)
		return NAT_INBOUND_NO_MAPPING;
	*ep = *owner;
	ep->flags = 0; /* a key from here on */
	/* A mapping the inside no longer uses is over for inbound traffic
	 * (its port only waits out the timeout), unless inbound packets may
	 * refresh it and inbound flows still hold it. */
	m = bpf_map_lookup_elem(&xnat_mappings, ep);
	if (!m || !(m->out_flows || ((cfg->flags & XNAT_F_INBOUND_REFRESH) &&
				     m->flows)))
		return NAT_INBOUND_NO_MAPPING;
	if (cfg->flags & XNAT_F_FILTER_EIF)
		return NAT_INBOUND_ALLOWED;
	peer = bpf_map_lookup_elem(&xnat_peers, &k);
	/* The peer entry must be of this owner, not of an earlier one. */
	if (peer && peer->addr == owner->addr && peer->port == owner->port)
		return NAT_INBOUND_ALLOWED;
	return NAT_INBOUND_FILTERED;
}

#endif /* XNAT_NAT_H */
