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

#endif /* XNAT_CONNTRACK_H */
