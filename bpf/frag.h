/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IPv4 fragments of NATed flows. Only a datagram's first fragment carries
 * the ports that find its flow; it is NATed as any packet (its L4 checksum
 * update is right for the whole datagram) and leaves a record keyed by what
 * every fragment carries: addresses, IP id, protocol, ingress port. The
 * later fragments find the flow through it and get the same L3 rewrite.
 * Fragments that overtake their first one go to the kernel, which can only
 * reassemble and NAT them itself: counted as pass_fragment. So do all
 * fragments of a datagram whose first one went to the kernel (too big for
 * the egress port: see kernel_adopt_flow, which gives the kernel the
 * flow's mapping first).
 */
#ifndef XNAT_FRAG_H
#define XNAT_FRAG_H

#include "maps.h"
#include "parsing.h"

static __always_inline void frag_key(const struct pkt *p, struct frag_key *k)
{
	const struct iphdr *ip = p->ip4;

	__builtin_memset(k, 0, sizeof(*k));
	if (!ip)
		return;
	k->saddr = p->key.saddr.v4;
	k->daddr = p->key.daddr.v4;
	k->id = ip->id;
	k->proto = p->key.proto;
	k->vid = p->key.vid;
	k->ifindex = p->key.ifindex;
}

/* A first fragment of flow KEY went through: let the rest follow it. */
static __always_inline void frag_record(const struct pkt *p,
					const struct flow_key *key)
{
	struct frag_key k;

	if (p->frag != FRAG_FIRST || (void *)(p->ip4 + 1) > p->data_end)
		return;
	frag_key(p, &k);
	bpf_map_update_elem(&xnat_frags, &k, key, BPF_ANY);
}

/*
 * A later fragment that overtook its first one goes up: mark its datagram
 * (a record with no flow) so the first one follows it there instead of
 * being forwarded alone. Other datagrams' later fragments cost a record
 * each in the LRU, nothing more.
 */
static __always_inline void frag_mark_up(const struct pkt *p)
{
	struct flow_key none = {};
	struct frag_key k;

	if ((void *)(p->ip4 + 1) > p->data_end)
		return;
	frag_key(p, &k);
	bpf_map_update_elem(&xnat_frags, &k, &none, BPF_NOEXIST);
}

/* Is P a first fragment whose datagram's other fragments went up? */
static __always_inline int frag_went_up(const struct pkt *p)
{
	struct flow_key *fk;
	struct frag_key k;

	if (p->frag != FRAG_FIRST || (void *)(p->ip4 + 1) > p->data_end)
		return 0;
	frag_key(p, &k);
	fk = bpf_map_lookup_elem(&xnat_frags, &k);
	return fk && !fk->family;
}

/* The flow a later fragment belongs to, or NULL. */
static __always_inline struct flow_key *frag_flow(const struct pkt *p)
{
	struct flow_key *fk;
	struct frag_key k;

	if ((void *)(p->ip4 + 1) > p->data_end)
		return NULL;
	frag_key(p, &k);
	fk = bpf_map_lookup_elem(&xnat_frags, &k);
	/* A mark (no family): the datagram is going up, follow it. */
	return fk && fk->family ? fk : NULL;
}

#endif /* XNAT_FRAG_H */
