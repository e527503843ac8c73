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
#include "parsing.h"

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

/* Only TCP and UDP can be looked up; ICMP echo is stateless enough that a
 * split between kernel and XDP ids is harmless. */
static __always_inline int kernel_owns_flow(struct xdp_md *ctx,
					    const struct pkt *p)
{
	struct bpf_ct_opts opts = {
		.netns_id = BPF_F_CURRENT_NETNS,
		.l4proto = p->key.proto,
	};
	struct bpf_sock_tuple tup = {};
	struct nf_conn *ct;
	__u32 len;

	if (p->key.proto != IPPROTO_TCP && p->key.proto != IPPROTO_UDP)
		return 0;
	if (p->key.family == XNAT_AF_INET) {
		tup.ipv4.saddr = p->key.saddr.v4;
		tup.ipv4.daddr = p->key.daddr.v4;
		tup.ipv4.sport = p->key.sport;
		tup.ipv4.dport = p->key.dport;
		len = sizeof(tup.ipv4);
	} else {
		__builtin_memcpy(tup.ipv6.saddr, p->key.saddr.v6, 16);
		__builtin_memcpy(tup.ipv6.daddr, p->key.daddr.v6, 16);
		tup.ipv6.sport = p->key.sport;
		tup.ipv6.dport = p->key.dport;
		len = sizeof(tup.ipv6);
	}
	ct = bpf_xdp_ct_lookup(ctx, &tup, len, &opts, sizeof(opts));
	if (!ct)
		return 0;
	bpf_ct_release(ct);
	return 1;
}

/* Initial life of an adopted entry; traffic refreshes it with
 * conntrack's own timeouts (set from [timeouts]). */
#define KERNEL_ADOPT_TIMEOUT_S 30

/*
 * Teach the kernel's conntrack an XDP flow with its NAT mapping, before
 * handing it a packet XDP cannot forward itself: one the router must
 * fragment (no DF, bigger than the egress MTU), or a datagram whose
 * fragments already went up. The kernel then fragments, reassembles and
 * NATs it with the flow's own addresses and ports instead of its own.
 * Works from either direction's entry: the conntrack entry is built from
 * the flow's original direction, derived from the reply's when needed.
 * An entry that exists already (an earlier such packet) is fine.
 */
static __always_inline void kernel_adopt_flow(struct xdp_md *ctx,
					      const struct pkt *p,
					      const struct flow_value *v)
{
	struct bpf_ct_opts opts = {
		.netns_id = BPF_F_CURRENT_NETNS,
		.l4proto = p->key.proto,
	};
	struct bpf_sock_tuple tup = {};
	struct nf_conn___init *init;
	union nf_inet_addr addr = {};
	__be32 nsaddr, ndaddr;
	__be16 nsport, ndport;
	struct nf_conn *ct;

	/* An offloaded flow's conntrack entry exists: the kernel's own. */
	if (p->key.family != XNAT_AF_INET || v->nat == FLOW_NAT_CT ||
	    (p->key.proto != IPPROTO_TCP && p->key.proto != IPPROTO_UDP))
		return;
	if (v->dir == FLOW_DIR_ORIG) {
		tup.ipv4.saddr = p->key.saddr.v4;
		tup.ipv4.daddr = p->key.daddr.v4;
		tup.ipv4.sport = p->key.sport;
		tup.ipv4.dport = p->key.dport;
		nsaddr = v->new_saddr.v4;
		ndaddr = v->new_daddr.v4;
		nsport = v->new_sport;
		ndport = v->new_dport;
	} else {
		/* The original direction is this reply's rewrite, reversed;
		 * its rewrite is this reply's own addresses, reversed. */
		tup.ipv4.saddr = v->new_daddr.v4;
		tup.ipv4.daddr = v->new_saddr.v4;
		tup.ipv4.sport = v->new_dport;
		tup.ipv4.dport = v->new_sport;
		nsaddr = p->key.daddr.v4;
		ndaddr = p->key.saddr.v4;
		nsport = p->key.dport;
		ndport = p->key.sport;
	}
	init = bpf_xdp_ct_alloc(ctx, &tup, sizeof(tup.ipv4), &opts,
				sizeof(opts));
	if (!init)
		return;
	bpf_ct_set_timeout(init, KERNEL_ADOPT_TIMEOUT_S * 1000);
	/* Fails only on arguments this code controls. An allocated entry
	 * can only leave through insert, which also frees it on failure. */
	if (nsaddr != tup.ipv4.saddr || nsport != tup.ipv4.sport) {
		addr.ip = nsaddr;
		bpf_ct_set_nat_info(init, &addr, bpf_ntohs(nsport),
				    NF_NAT_MANIP_SRC);
	}
	if (ndaddr != tup.ipv4.daddr || ndport != tup.ipv4.dport) {
		addr.ip = ndaddr;
		bpf_ct_set_nat_info(init, &addr, bpf_ntohs(ndport),
				    NF_NAT_MANIP_DST);
	}
	ct = bpf_ct_insert_entry(init);
	if (ct)
		bpf_ct_release(ct);
}

#endif /* XNAT_CONNTRACK_H */
