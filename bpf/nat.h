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
 */
#ifndef XNAT_NAT_H
#define XNAT_NAT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parsing.h"
#include "natlog.h"

#define NSEC_PER_SEC 1000000000ULL
#define XNAT_CLOCK_MONOTONIC 1

/* Port candidates tried before giving a new flow to the kernel. */
#define NAT_PORT_TRIES 16

static __always_inline __u64 mapping_timeout_ns(const struct xnat_config *cfg,
						__u8 proto)
{
	__u32 s = proto == IPPROTO_TCP ? cfg->timeout_tcp_trans :
		  proto == IPPROTO_UDP ? cfg->timeout_udp : cfg->timeout_icmp;

	return s * NSEC_PER_SEC;
}

static __always_inline int port_in_range(const struct xnat_config *cfg,
					 __be16 port)
{
	__u16 h = bpf_ntohs(port);

	return h >= cfg->port_min && h <= cfg->port_max;
}

/* Which mapping a flow holds a reference on. */
enum flow_mapping {
	FLOW_MAPPING_NONE = 0, /* none: routed, port forwards */
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

/* A flow of EP's ended: the mapping's idle time starts when none is left.
 * OUTBOUND: the flow was opened from the inside. */
static __always_inline void mapping_put(const struct nat_endpoint *ep,
					int outbound)
{
	struct nat_mapping *m = bpf_map_lookup_elem(&xnat_mappings, ep);

	if (!m)
		return;
	m->last_used_ns = bpf_ktime_get_ns();
	/* Adds of -1: plain BPF_XADD, which every BPF target has. */
	if (outbound)
		__sync_fetch_and_add(&m->out_flows, (__u32)-1);
	__sync_fetch_and_add(&m->flows, (__u32)-1);
}

/* Timer of a mapping: free it and its port once unused for its timeout. */
static int mapping_expire(void *map, struct nat_endpoint *ep,
			  struct nat_mapping *m)
{
	struct nat_port_key pk = { .port = m->ext_port, .proto = ep->proto };
	struct xnat_config *cfg;
	__u32 zero = 0;
	__u64 now, timeout;

	cfg = bpf_map_lookup_elem(&xnat_config, &zero);
	if (!cfg)
		return 0;
	timeout = mapping_timeout_ns(cfg, ep->proto);
	now = bpf_ktime_get_ns();
	if (m->flows || now < m->last_used_ns + timeout) {
		/* In use: look again after a timeout; idle: when it ends. */
		bpf_timer_start(&m->timer, m->flows ? timeout :
				m->last_used_ns + timeout - now, 0);
		return 0;
	}
	natlog_emit(NATLOG_EXPIRED, ep, cfg->nat_addr, m->ext_port, 0, 0);
	bpf_map_delete_elem(&xnat_ports, &pk);
	bpf_map_delete_elem(&xnat_mappings, ep);
	return 0;
}

/*
 * A reference on EP's mapping for a new flow, creating it (and claiming a
 * port) if EP has none. The external port goes to *port. Returns
 * XNAT_CONTINUE or XDP_PASS with the reason: the kernel NATs what XDP
 * cannot.
 */
static __always_inline int mapping_get(struct pkt *p,
				       const struct xnat_config *cfg,
				       const struct nat_endpoint *ep,
				       __be16 *port)
{
	__u16 range = cfg->port_max - cfg->port_min + 1;
	struct nat_mapping nm = {}, *m;
	struct nat_port_key pk = { .proto = ep->proto };
	int err = -1, i;

	m = bpf_map_lookup_elem(&xnat_mappings, ep);
	if (m) {
		__sync_fetch_and_add(&m->out_flows, 1);
		__sync_fetch_and_add(&m->flows, 1);
		*port = m->ext_port;
		return XNAT_CONTINUE;
	}

	/* Port preservation where the port is free (RFC 4787 4.2.1 allows
	 * it; games and VoIP behind some peers depend on it). */
	pk.port = ep->port;
	if (!port_in_range(cfg, pk.port))
		pk.port = bpf_htons(cfg->port_min + bpf_get_prandom_u32() % range);
	for (i = 0; i < NAT_PORT_TRIES; i++) {
		err = bpf_map_update_elem(&xnat_ports, &pk, ep, BPF_NOEXIST);
		if (err != -EEXIST)
			break;
		pk.port = bpf_htons(cfg->port_min + bpf_get_prandom_u32() % range);
	}
	if (err == -EEXIST)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_NO_PORT);
	if (err)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_TABLE_FULL);

	nm.ext_port = pk.port;
	nm.flows = 1;
	nm.out_flows = 1;
	nm.last_used_ns = bpf_ktime_get_ns();
	err = bpf_map_update_elem(&xnat_mappings, ep, &nm, BPF_NOEXIST);
	if (err) {
		bpf_map_delete_elem(&xnat_ports, &pk);
		/* EEXIST: another CPU mapped EP meanwhile; this packet goes
		 * up once, the next one uses that mapping. */
		return pkt_stop(p, XDP_PASS, err == -EEXIST ?
				XNAT_PASS_INSERT_RACE : XNAT_PASS_TABLE_FULL);
	}
	m = bpf_map_lookup_elem(&xnat_mappings, ep);
	if (m && !bpf_timer_init(&m->timer, &xnat_mappings,
				 XNAT_CLOCK_MONOTONIC)) {
		bpf_timer_set_callback(&m->timer, mapping_expire);
		bpf_timer_start(&m->timer, mapping_timeout_ns(cfg, ep->proto), 0);
	}
	natlog_emit(NATLOG_CREATED, ep, cfg->nat_addr, pk.port,
		    p->key.daddr.v4, p->key.dport);
	*port = pk.port;
	return XNAT_CONTINUE;
}

/* Remember that EP's mapping sent to REMOTE (address-dependent filter). */
static __always_inline void peer_record(const struct nat_endpoint *ep,
					__be16 ext_port, __be32 remote)
{
	struct nat_peer_key k = { .remote = remote, .ext_port = ext_port,
				  .proto = ep->proto };

	bpf_map_update_elem(&xnat_peers, &k, ep, BPF_ANY);
}

enum nat_inbound {
	NAT_INBOUND_ALLOWED = 0, /* EP filled */
	NAT_INBOUND_FILTERED,    /* a mapping owns it, filtering refuses */
	NAT_INBOUND_NO_MAPPING,  /* no mapping open to inbound owns it */
};

/*
 * May a packet from the WAN reach the inside endpoint owning its
 * destination port? With endpoint-independent filtering anyone may; with
 * address-dependent filtering only an address the endpoint has sent to,
 * through this same mapping.
 */
static __always_inline enum nat_inbound
inbound_allowed(const struct pkt *p, const struct xnat_config *cfg,
		struct nat_endpoint *ep)
{
	struct nat_port_key pk = { .port = p->key.dport,
				   .proto = p->key.proto };
	struct nat_peer_key k = { .remote = p->key.saddr.v4,
				  .ext_port = p->key.dport,
				  .proto = p->key.proto };
	struct nat_endpoint *owner, *peer;
	struct nat_mapping *m;

	owner = bpf_map_lookup_elem(&xnat_ports, &pk);
	if (!owner)
		return NAT_INBOUND_NO_MAPPING;
	*ep = *owner;
	/* A mapping the inside no longer uses is over for inbound traffic
	 * (its port only waits out the timeout), unless inbound packets may
	 * refresh it and inbound flows still hold it. */
	m = bpf_map_lookup_elem(&xnat_mappings, owner);
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
