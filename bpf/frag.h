/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fragments of XDP flows, IPv4 and IPv6. Only a datagram's first fragment
 * carries the ports that find its flow; it is forwarded as any packet of
 * the flow (for NAT its L4 checksum update is right for the whole
 * datagram) and leaves a record keyed by what every fragment carries:
 * addresses, id, protocol, ingress port. The later fragments find the flow
 * through it and get the same L3 rewrite.
 *
 * The record also keeps what a reassembling host needs to stay safe, since
 * the router forwards fragments without reassembling them: the byte range
 * of the first fragment and of the latest later one. A fragment that
 * overlaps either, or repeats the first one, is dropped (RFC 1858 and
 * RFC 3128 for IPv4 tiny and overlapping fragments, RFC 5722 for IPv6):
 * an overlap is how a fragment rewrites the ports the filter decided on.
 * Records expire after FRAG_TIMEOUT_NS, checked on use, so a stale record
 * never steers a later datagram that reuses the id.
 *
 * Fragments that overtake their first one go to the kernel, which can only
 * reassemble and forward them itself: counted as pass_fragment. So do all
 * fragments of a datagram whose first one went to the kernel (see
 * kernel_adopt_flow, which tells the kernel the flow first).
 */
#ifndef XNAT_FRAG_H
#define XNAT_FRAG_H

#include "maps.h"
#include "parsing.h"

/* A datagram's fragments arrive within this of its first (Linux keeps a
 * reassembly queue as long: net.ipv4.ipfrag_time). */
#define FRAG_TIMEOUT_NS (30 * 1000000000ULL)

enum frag_check {
	FRAG_OK = 0,       /* no fresh record: a datagram of its own */
	FRAG_WENT_UP = 1,  /* its later fragments went to the kernel */
	FRAG_DUPLICATE = 2,/* a first fragment of this datagram went already */
};

/*
 * The datagram id of fragment P and the byte range of the datagram it
 * carries: from the IPv4 header, or for IPv6 from what the extension
 * header walk left in the per-CPU scratch (parse_slow). Kept out of
 * struct pkt, whose stack the main program cannot spare.
 */
static __always_inline int frag_range(const struct pkt *p, __be32 *id,
				      __u32 *start, __u32 *end)
{
	struct xnat_tmp *t;

	if (p->ip4) {
		const struct iphdr *ip = p->ip4;

		if ((void *)(ip + 1) > p->data_end)
			return -1;
		*id = ip->id;
		*start = (bpf_ntohs(ip->frag_off) & IP_OFFSET) * 8;
		*end = *start + bpf_ntohs(ip->tot_len) - ip->ihl * 4;
		return 0;
	}
	t = xnat_tmp_get();
	if (!t)
		return -1;
	*id = t->lp.frag_id;
	*start = t->lp.frag_start;
	*end = t->lp.frag_end;
	return 0;
}

static __always_inline void frag_key(const struct pkt *p, struct frag_key *k)
{
	__u32 start, end;
	__be32 id = 0;

	frag_range(p, &id, &start, &end);
	__builtin_memset(k, 0, sizeof(*k));
	k->saddr = p->key.saddr;
	k->daddr = p->key.daddr;
	k->id = id;
	k->proto = p->key.proto;
	k->family = p->key.family;
	k->vid = p->key.vid;
	k->ifindex = p->key.ifindex;
}

static __always_inline int frag_fresh(const struct frag_rec *r)
{
	return bpf_ktime_get_coarse_ns() - r->created_ns < FRAG_TIMEOUT_NS;
}

/* Does the byte range [START, END) meet [A, B)? */
static __always_inline int frag_overlaps(__u32 start, __u32 end, __u32 a,
					 __u32 b)
{
	return start < b && a < end;
}

/* A first fragment of flow KEY went through: let the rest follow it. */
static __always_inline void frag_record(const struct pkt *p,
					const struct flow_key *key)
{
	struct xnat_tmp *t;
	__u32 start, end;
	__be32 id;

	if (p->frag != FRAG_FIRST || !(t = xnat_tmp_get()) ||
	    frag_range(p, &id, &start, &end))
		return;
	frag_key(p, &t->fk);
	__builtin_memset(&t->fr, 0, sizeof(t->fr));
	t->fr.flow = *key;
	t->fr.first_end = end;
	t->fr.created_ns = bpf_ktime_get_coarse_ns();
	bpf_map_update_elem(&xnat_fragments, &t->fk, &t->fr, BPF_ANY);
}

/*
 * A later fragment that overtook its first one goes up: mark its datagram
 * (a record with no flow) so the first one follows it there instead of
 * being forwarded alone. Other datagrams' later fragments cost a record
 * each in the LRU, nothing more. A stale record is replaced.
 */
static __always_inline void frag_mark_up(const struct pkt *p)
{
	struct xnat_tmp *t = xnat_tmp_get();
	struct frag_rec *old;

	if (!t)
		return;
	frag_key(p, &t->fk);
	old = bpf_map_lookup_elem(&xnat_fragments, &t->fk);
	if (old && frag_fresh(old))
		return;
	__builtin_memset(&t->fr, 0, sizeof(t->fr));
	t->fr.created_ns = bpf_ktime_get_coarse_ns();
	bpf_map_update_elem(&xnat_fragments, &t->fk, &t->fr, BPF_ANY);
}

/* What the record says about a first fragment P (enum frag_check). */
static __always_inline int frag_first_check(const struct pkt *p)
{
	struct xnat_tmp *t;
	struct frag_rec *r;

	if (p->frag != FRAG_FIRST || !(t = xnat_tmp_get()))
		return FRAG_OK;
	frag_key(p, &t->fk);
	r = bpf_map_lookup_elem(&xnat_fragments, &t->fk);
	if (!r || !frag_fresh(r))
		return FRAG_OK;
	return r->flow.family ? FRAG_DUPLICATE : FRAG_WENT_UP;
}

/*
 * The flow a later fragment belongs to, or NULL (no fresh record, or the
 * datagram went up). *BAD is set when the fragment overlaps the first one
 * or the latest later one: it must be dropped.
 */
static __always_inline struct flow_key *frag_flow(const struct pkt *p,
						  int *bad)
{
	struct xnat_tmp *t = xnat_tmp_get();
	__u32 start = 0, end = 0;
	struct frag_rec *r;
	__be32 id;

	*bad = 0;
	if (!t || frag_range(p, &id, &start, &end))
		return NULL;
	frag_key(p, &t->fk);
	r = bpf_map_lookup_elem(&xnat_fragments, &t->fk);
	if (!r || !frag_fresh(r) || !r->flow.family)
		return NULL;
	if (frag_overlaps(start, end, 0, r->first_end) ||
	    frag_overlaps(start, end, r->last_off, r->last_end) ||
	    end <= start) {
		*bad = 1;
		return NULL;
	}
	/* Not atomic: a race between two CPUs only weakens the check for
	 * one fragment. */
	r->last_off = start;
	r->last_end = end;
	return &r->flow;
}

#endif /* XNAT_FRAG_H */
