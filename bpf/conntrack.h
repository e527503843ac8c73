/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Asking the kernel's conntrack whether it already owns a flow. The first
 * packets of a flow can go up to the kernel (neighbour not yet resolved,
 * flow table full) and get NATed there with a kernel port; later packets of
 * that flow must follow them, or the flow would be NATed twice with two
 * different ports. Only the slow path asks, so this costs nothing on hits.
 */
#ifndef XNAT_CONNTRACK_H
#define XNAT_CONNTRACK_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parsing.h"

#ifndef ENOENT
#define ENOENT 2
#endif

/* Layout fixed by the kfunc ABI (net/netfilter/nf_conntrack_bpf.c); the
 * 12-byte form is accepted by every kernel that has the kfunc. */
struct bpf_ct_opts {
	__s32 netns_id;
	__s32 error;
	__u8 l4proto;
	__u8 dir;
	__u8 reserved[2];
};

#define BPF_F_CURRENT_NETNS (-1)

/* Opaque here; libbpf matches kfunc prototypes by kind, so a struct with a
 * placeholder member stands for the kernel's. */
struct nf_conn {
	int opaque;
};

extern struct nf_conn *bpf_xdp_ct_lookup(struct xdp_md *xdp_ctx,
					 struct bpf_sock_tuple *bpf_tuple,
					 __u32 len_tuple, struct bpf_ct_opts *opts,
					 __u32 len_opts) __ksym;
extern void bpf_ct_release(struct nf_conn *ct) __ksym;

/* Entries being built: a distinct type, as the kernel's. */
struct nf_conn___init {
	int opaque;
};

union nf_inet_addr {
	__u32 all[4];
	__be32 ip;
	__be32 ip6[4];
};

enum nf_nat_manip_type {
	NF_NAT_MANIP_SRC,
	NF_NAT_MANIP_DST,
};

extern struct nf_conn___init *
bpf_xdp_ct_alloc(struct xdp_md *xdp_ctx, struct bpf_sock_tuple *bpf_tuple,
		 __u32 len_tuple, struct bpf_ct_opts *opts, __u32 len_opts) __ksym;
extern int bpf_ct_set_nat_info(struct nf_conn___init *nfct,
			       union nf_inet_addr *addr, int port,
			       enum nf_nat_manip_type manip) __ksym;
extern void bpf_ct_set_timeout(struct nf_conn___init *nfct,
			       __u32 timeout) __ksym;
extern struct nf_conn *bpf_ct_insert_entry(struct nf_conn___init *nfct) __ksym;

/* The conntrack lookup tuple of P's flow key; returns its length. */
static __always_inline __u32 ct_tuple_of(const struct pkt *p,
					  struct bpf_sock_tuple *tup)
{
	if (p->key.family == XNAT_AF_INET) {
		tup->ipv4.saddr = p->key.saddr.v4;
		tup->ipv4.daddr = p->key.daddr.v4;
		tup->ipv4.sport = p->key.sport;
		tup->ipv4.dport = p->key.dport;
		return sizeof(tup->ipv4);
	}
	__builtin_memcpy(tup->ipv6.saddr, p->key.saddr.v6, 16);
	__builtin_memcpy(tup->ipv6.daddr, p->key.daddr.v6, 16);
	tup->ipv6.sport = p->key.sport;
	tup->ipv6.dport = p->key.dport;
	return sizeof(tup->ipv6);
}

/*
 * Look the packet's connection up in the kernel's conntrack (TCP and UDP
 * only: the kfunc knows no other protocol). Returns a reference the caller
 * must release with bpf_ct_release, or NULL; *DIR gets the direction the
 * packet travels in.
 */
static __always_inline struct nf_conn *ct_lookup(struct xdp_md *ctx,
						 const struct pkt *p, __u8 *dir)
{
	struct bpf_ct_opts opts = {
		.netns_id = BPF_F_CURRENT_NETNS,
		.l4proto = p->key.proto,
	};
	struct bpf_sock_tuple tup = {};
	struct nf_conn *ct;
	__u32 len;

	len = ct_tuple_of(p, &tup);
	ct = bpf_xdp_ct_lookup(ctx, &tup, len, &opts, sizeof(opts));
	*dir = opts.dir;
	return ct;
}

/* Only TCP and UDP can be looked up; ICMP echo is stateless enough that a
 * split between kernel and XDP ids is harmless. */
static __always_inline int kernel_owns_flow(struct xdp_md *ctx,
					    const struct pkt *p)
{
	struct nf_conn *ct;
	__u8 dir;

	if (p->key.proto != IPPROTO_TCP && p->key.proto != IPPROTO_UDP)
		return 0;
	ct = ct_lookup(ctx, p, &dir);
	if (!ct)
		return 0;
	bpf_ct_release(ct);
	return 1;
}

/* Initial life of an adopted entry; traffic refreshes it with
 * conntrack's own timeouts (set from [timeouts]). */
#define KERNEL_ADOPT_TIMEOUT_S 30

static __always_inline void adopt_tuple_fill(const struct pkt *p,
					     const struct flow_value *v,
					     struct adopt_tuple *t)
{
	union xnat_addr osaddr, odaddr;
	__be16 osport, odport;

	if (v->dir == FLOW_DIR_ORIG) {
		osaddr = p->key.saddr;
		odaddr = p->key.daddr;
		osport = p->key.sport;
		odport = p->key.dport;
		t->nsaddr = v->new_saddr;
		t->ndaddr = v->new_daddr;
		t->nsport = v->new_sport;
		t->ndport = v->new_dport;
	} else {
		osaddr = v->new_daddr;
		odaddr = v->new_saddr;
		osport = v->new_dport;
		odport = v->new_sport;
		t->nsaddr = p->key.daddr;
		t->ndaddr = p->key.saddr;
		t->nsport = p->key.dport;
		t->ndport = p->key.sport;
	}
	if (p->key.family == XNAT_AF_INET) {
		t->tup.ipv4.saddr = osaddr.v4;
		t->tup.ipv4.daddr = odaddr.v4;
		t->tup.ipv4.sport = osport;
		t->tup.ipv4.dport = odport;
	} else {
		__builtin_memcpy(t->tup.ipv6.saddr, osaddr.v6, 16);
		__builtin_memcpy(t->tup.ipv6.daddr, odaddr.v6, 16);
		t->tup.ipv6.sport = osport;
		t->tup.ipv6.dport = odport;
	}
}

/*
 * Teach the kernel's conntrack an XDP flow with its NAT mapping, before
 * handing it a packet XDP cannot forward itself: one the router must
 * fragment (no DF, bigger than the egress MTU), a datagram whose
 * fragments already went up, a packet with IP options. The kernel then
 * fragments, reassembles, NATs and filters it as the flow, with the flow's
 * own addresses and ports instead of its own. Works from either
 * direction's entry, IPv4 or IPv6 (routed flows get an entry without NAT).
 * An entry that exists already (an earlier such packet) is fine.
 *
 * XXX: an entry made by bpf_xdp_ct_alloc starts in TCP state NONE, in
 * which conntrack takes a segment of the original direction (it picks
 * the connection up) but calls one of the reply direction INVALID: TCP
 * replies cannot be handed over this way (handoff.h drops them).
 *
 * Returns 0 when the kernel knows the flow, -ENOENT when it could not be
 * taught (unsupported protocol, conntrack full).
 */
static __always_inline int kernel_adopt_flow(struct xdp_md *ctx,
					     const struct pkt *p,
					     const struct flow_value *v)
{
	struct bpf_ct_opts opts = {
		.netns_id = BPF_F_CURRENT_NETNS,
		.l4proto = p->key.proto,
	};
	struct nf_conn___init *init;
	union nf_inet_addr addr = {};
	struct xnat_tmp *tmp = xnat_tmp_get();
	struct adopt_tuple *t;
	struct nf_conn *ct;
	__u32 len;

	/* An offloaded flow's conntrack entry exists: the kernel's own. */
	if (v->nat == FLOW_NAT_CT)
		return 0;
	if (p->key.proto != IPPROTO_TCP && p->key.proto != IPPROTO_UDP)
		return -ENOENT;
	if (!tmp)
		return -ENOENT;
	t = &tmp->at;
	__builtin_memset(t, 0, sizeof(*t));
	adopt_tuple_fill(p, v, t);
	len = p->key.family == XNAT_AF_INET ? sizeof(t->tup.ipv4) :
					      sizeof(t->tup.ipv6);
	ct = bpf_xdp_ct_lookup(ctx, &t->tup, len, &opts, sizeof(opts));
	if (ct) {
		bpf_ct_release(ct);
		return 0;
	}
	opts.netns_id = BPF_F_CURRENT_NETNS;
	opts.l4proto = p->key.proto;
	init = bpf_xdp_ct_alloc(ctx, &t->tup, len, &opts, sizeof(opts));
	if (!init)
		return -ENOENT;
	bpf_ct_set_timeout(init, KERNEL_ADOPT_TIMEOUT_S * 1000);
	/* Fails only on arguments this code controls. An allocated entry
	 * can only leave through insert, which also frees it on failure.
	 * IPv6 flows are routed, never translated. */
	if (p->key.family == XNAT_AF_INET) {
		if (t->nsaddr.v4 != t->tup.ipv4.saddr ||
		    t->nsport != t->tup.ipv4.sport) {
			addr.ip = t->nsaddr.v4;
			bpf_ct_set_nat_info(init, &addr, bpf_ntohs(t->nsport),
					    NF_NAT_MANIP_SRC);
		}
		if (t->ndaddr.v4 != t->tup.ipv4.daddr ||
		    t->ndport != t->tup.ipv4.dport) {
			addr.ip = t->ndaddr.v4;
			bpf_ct_set_nat_info(init, &addr, bpf_ntohs(t->ndport),
					    NF_NAT_MANIP_DST);
		}
	}
	ct = bpf_ct_insert_entry(init);
	if (!ct)
		return -ENOENT;
	bpf_ct_release(ct);
	return 0;
}

#endif /* XNAT_CONNTRACK_H */
