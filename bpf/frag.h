/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fragments of XDP flows, IPv4 and IPv6. Only a datagram's first fragment
 * carries the ports that find its flow; it is forwarded as any packet of
 * the flow (for NAT its L4 checksum update is right for the whole
 * datagram) and leaves a record keyed by what every fragment carries:
 * addresses, id, protocol (IPv6: the fragment header's next header, see
 * frag_proto), ingress port. The later fragments find the flow
 * through it and get the same L3 rewrite.
 *
 * The record also keeps what a reassembling host needs to stay safe, since
 * the router forwards fragments without reassembling them: the byte ranges
 * of every fragment forwarded so far, the first one's included, merged
 * where they meet (XNAT_FRAG_SPANS of them, a bounded record). A fragment
 * that overlaps or repeats any of them is dropped as drop_frag_bad (RFC 1858
 * and RFC 3128 for IPv4 tiny and overlapping fragments, RFC 5722 for IPv6):
 * an overlap is how a fragment rewrites the ports the filter decided on,
 * and Linux's reassembly discards such datagrams. So is a fragment that
 * would need a range more than the record has room for (more holes in
 * the datagram at once than XNAT_FRAG_SPANS - 1: reordering that deep does
 * not happen on a path, and an unbounded record is what an attacker wants).
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

/*
 * The protocol of the record's key: what every fragment of the datagram
 * carries alike. IPv4: the header's protocol. IPv6: the fragment header's
 * next header, not the key's protocol: a first fragment's is the L4
 * protocol found behind any headers after the fragment header (destination
 * options, RFC 8200 4.1), which its later fragments cannot see, so they
 * would never find its record and go up without their first fragment.
 */
static __always_inline __u8 frag_proto(const struct pkt *p)
{
	struct xnat_tmp *t;

	if (p->ip4)
		return p->key.proto;
	t = xnat_tmp_get();
	return t ? t->lp.frag_nexthdr : p->key.proto;
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
	k->proto = frag_proto(p);
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

/* Is span S in use? (A used one ends after it starts, so past 0.) */
#define FRAG_SPAN_USED(s) ((s)->end != 0)

/*
 * Add the bytes [START, END) of a later fragment to R's ranges: merged
 * into the ones it meets, else into a free slot. -1 when it is empty,
 * overlaps (or repeats) bytes already forwarded, or finds no free slot:
 * the fragment must be dropped, R is unchanged. Pass after pass, each
 * acting at once, rather than one pass remembering indexes: the verifier
 * would walk every combination of those. A global function, verified
 * once.
 */
__noinline int frag_span_add(struct frag_rec *r, __u32 start, __u32 end)
{
	struct frag_span *s, *n;
	int i, j;

	if (!r || end <= start)
		return -1;
	for (i = 0; i < XNAT_FRAG_SPANS; i++) {
		s = &r->spans[i];
		if (FRAG_SPAN_USED(s) && frag_overlaps(start, end, s->start,
						       s->end))
			return -1;
	}
	/* Right after a range: extend it, and if that closes the hole
	 * before the next range, the two become one. */
	for (i = 0; i < XNAT_FRAG_SPANS; i++) {
		s = &r->spans[i];
		if (!FRAG_SPAN_USED(s) || s->end != start)
			continue;
		s->end = end;
		for (j = 0; j < XNAT_FRAG_SPANS; j++) {
			n = &r->spans[j];
			if (FRAG_SPAN_USED(n) && n->start == end) {
				s->end = n->end;
				n->start = 0;
				n->end = 0;
				break;
			}
		}
		return 0;
	}
	/* Right before a range: extend it downwards. */
	for (i = 0; i < XNAT_FRAG_SPANS; i++) {
		s = &r->spans[i];
		if (FRAG_SPAN_USED(s) && s->start == end) {
			s->start = start;
			return 0;
		}
	}
	for (i = 0; i < XNAT_FRAG_SPANS; i++) {
		s = &r->spans[i];
		if (!FRAG_SPAN_USED(s)) {
			s->start = start;
			s->end = end;
			return 0;
		}
	}
	return -1;
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
	t->fr.spans[0].start = start;
	t->fr.spans[0].end = end;
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
 * datagram went up). *BAD is set when the fragment overlaps or repeats
 * bytes of the datagram already forwarded, or the record has no room for
 * its range: it must be dropped.
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
	/* Not atomic: two CPUs adding to one datagram at once can lose a
	 * range, which only weakens the check for a copy of that one. */
	if (frag_span_add(r, start, end)) {
		*bad = 1;
		return NULL;
	}
	return &r->flow;
}

#endif /* XNAT_FRAG_H */
