/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading the kernel's conntrack entries from XDP, for offload mode: is an
 * entry one XDP may carry (confirmed, no helper, no sequence adjustment, a
 * TCP connection past its handshake, accepted by the ruleset in this
 * direction), and which rewrite did the kernel choose for it (its tuples).
 *
 * struct nf_conn is not UAPI. The few fields read here are declared with
 * preserve_access_index and a ___xnat suffix: libbpf relocates every access
 * to where the running kernel's BTF has the field (CO-RE), so one object
 * works across kernel versions. The verifier allows these reads on the
 * pointer bpf_xdp_ct_lookup returns, and a write only to ct->mark
 * (net/netfilter/nf_conntrack_bpf.c).
 */
#ifndef XNAT_CT_H
#define XNAT_CT_H

#include <linux/bpf.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <bpf/bpf_helpers.h>
#include "conntrack.h"

/* From include/net/netfilter/nf_conntrack_tuple.h and friends: only what
 * is read, in the kernel's names. */
union nf_inet_addr___xnat {
	__be32 ip;
	__be32 ip6[4];
} __attribute__((preserve_access_index));

union nf_conntrack_man_proto___xnat {
	__be16 all; /* the port, for TCP and UDP */
} __attribute__((preserve_access_index));

struct nf_conntrack_man___xnat {
	union nf_inet_addr___xnat u3;
	union nf_conntrack_man_proto___xnat u;
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple___xnat {
	struct nf_conntrack_man___xnat src;
	struct {
		union nf_inet_addr___xnat u3;
		union {
			__be16 all;
		} u;
		__u8 protonum;
	} dst;
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple_hash___xnat {
	struct nf_conntrack_tuple___xnat tuple;
} __attribute__((preserve_access_index));

/* One sender of the connection, as conntrack's tcp_in_window() tracks it. */
struct ip_ct_tcp_state___xnat {
	__u32 td_end;    /* highest sequence number sent, plus one */
	__u32 td_maxwin; /* largest window advertised, scaled (bytes) */
	__u8 td_scale;   /* its window scale; 0 unless both SYNs had one */
} __attribute__((preserve_access_index));

struct ip_ct_tcp___xnat {
	struct ip_ct_tcp_state___xnat seen[2]; /* by sender: IP_CT_DIR_* */
	__u8 state; /* enum tcp_conntrack */
} __attribute__((preserve_access_index));

union nf_conntrack_proto___xnat {
	struct ip_ct_tcp___xnat tcp;
} __attribute__((preserve_access_index));

struct nf_ct_ext___xnat {
	/* Where each extension starts; 0: the entry does not have it. */
	__u8 offset[1];
} __attribute__((preserve_access_index));

struct nf_conn___xnat {
	__u32 timeout; /* jiffies */
	struct nf_conntrack_tuple_hash___xnat tuplehash[2]; /* IP_CT_DIR_* */
	unsigned long status; /* IPS_* */
	__u32 mark;
	struct nf_ct_ext___xnat *ext;
	union nf_conntrack_proto___xnat proto;
} __attribute__((preserve_access_index));

/* enum ip_conntrack_dir; the kfunc reports the direction in opts.dir. */
#define CT_DIR_ORIGINAL 0
#define CT_DIR_REPLY 1

/* TCP_CONNTRACK_ESTABLISHED of enum tcp_conntrack (UAPI
 * linux/netfilter/nf_conntrack_tcp.h, stable since 2.6). */
#define CT_TCP_ESTABLISHED 3

/* NF_CT_EXT_HELPER of enum nf_ct_ext_id: the first extension, index 0 in
 * every kernel that has extensions. A constant, because the verifier
 * accepts only constant offsets into kernel structures. */
#define CT_EXT_HELPER 0

extern int bpf_ct_change_timeout(struct nf_conn *nfct, __u32 timeout) __ksym;
extern int bpf_ct_change_status(struct nf_conn *nfct, __u32 status) __ksym;

/* Statuses XDP must not bypass: a helper reads or rewrites payloads
 * (FTP, SIP...), sequence adjustment rewrites TCP sequence numbers,
 * nf_flow_table already offloads the connection, and a dying or template
 * entry is no connection to carry. */
#define CT_NOT_OFFLOADABLE                                                   \
	(IPS_SEQ_ADJUST | IPS_HELPER | IPS_OFFLOAD | IPS_HW_OFFLOAD |         \
	 IPS_DYING | IPS_TEMPLATE | IPS_UNTRACKED)

/*
 * May XDP carry this entry's packets? 0 if so, else the xnat_reason why
 * not. The ruleset's mark is checked by the caller: it depends on the
 * packet's direction.
 */
static __always_inline __u32 ct_offloadable(struct nf_conn *nfct, __u8 proto)
{
	struct nf_conn___xnat *ct = (void *)nfct;
	struct nf_ct_ext___xnat *ext;
	unsigned long status = ct->status;

	if (!(status & IPS_CONFIRMED))
		return XNAT_PASS_CT_UNCONFIRMED;
	if (status & CT_NOT_OFFLOADABLE)
		return XNAT_PASS_CT_HELPER;
	/* A helper assigned automatically has its extension even without
	 * IPS_HELPER. */
	ext = ct->ext;
	if (ext && ext->offset[CT_EXT_HELPER])
		return XNAT_PASS_CT_HELPER;
	/* A fixed timeout on TCP: the connection was reset on the fast
	 * path (ct_close), and conntrack, which missed the fast path's
	 * packets, may still call it established. It is closing: no packet
	 * may renew it. */
	if (proto == IPPROTO_TCP &&
	    (ct->proto.tcp.state != CT_TCP_ESTABLISHED ||
	     (status & IPS_FIXED_TIMEOUT)))
		return XNAT_PASS_CT_TCP_STATE;
	return 0;
}

/*
 * The connection was reset while XDP carried it: end it in SECS seconds
 * whatever comes next. conntrack cannot do so alone. It did not see the
 * packets XDP carried, so its record of the highest ACK each side sent
 * is stale; it takes the RST for one that does not match the sequence
 * exactly, keeps the connection established to allow a challenge ACK
 * (nf_conntrack_proto_tcp.c), and the next segment of either side renews
 * the established timeout. nf_flow_table, in the same place, clears that
 * record before handing the RST up (flow_offload_fixup_tcp); BPF may not
 * write it, but may fix the timeout: IPS_FIXED_TIMEOUT, which the
 * kernel's refresh then honours and bpf_ct_change_timeout refuses (-EPERM,
 * hence the timeout first).
 */
static __always_inline void ct_close(struct nf_conn *nfct, __u32 secs)
{
	struct nf_conn___xnat *ct = (void *)nfct;

	bpf_ct_change_timeout(nfct, secs * 1000);
	bpf_ct_change_status(nfct, (__u32)ct->status | IPS_FIXED_TIMEOUT);
}

/*
 * The rewrite the kernel applies to packets of direction DIR: they leave as
 * the reverse of the other direction's tuple (for a connection without
 * NAT, that is the packet unchanged).
 */
static __always_inline void ct_translation(struct nf_conn *nfct, __u8 dir,
					   struct flow_value *v)
{
	struct nf_conn___xnat *ct = (void *)nfct;
	struct nf_conntrack_tuple___xnat *t;

	/* Constant indexes: the verifier refuses variable offsets here. */
	if (dir == CT_DIR_ORIGINAL)
		t = &ct->tuplehash[CT_DIR_REPLY].tuple;
	else
		t = &ct->tuplehash[CT_DIR_ORIGINAL].tuple;
	v->new_saddr.v6[0] = t->dst.u3.ip6[0];
	v->new_saddr.v6[1] = t->dst.u3.ip6[1];
	v->new_saddr.v6[2] = t->dst.u3.ip6[2];
	v->new_saddr.v6[3] = t->dst.u3.ip6[3];
	v->new_daddr.v6[0] = t->src.u3.ip6[0];
	v->new_daddr.v6[1] = t->src.u3.ip6[1];
	v->new_daddr.v6[2] = t->src.u3.ip6[2];
	v->new_daddr.v6[3] = t->src.u3.ip6[3];
	v->new_sport = t->dst.u.all;
	v->new_dport = t->src.u.all;
}

/*
 * What conntrack knows of the sender of direction DIR of a TCP
 * connection, up to the packets XDP carried since it offloaded that
 * direction: td_maxwin is 0 when it has seen no window of it (an entry
 * made through ctnetlink, as `conntrack -I` does). A pointer, not a copy:
 * the program's stack is nearly full.
 */
static __always_inline struct ip_ct_tcp_state___xnat *
ct_tcp_sender(struct nf_conn *nfct, __u8 dir)
{
	struct nf_conn___xnat *ct = (void *)nfct;

	/* Constant indexes, as in ct_translation. */
	if (dir == CT_DIR_ORIGINAL)
		return &ct->proto.tcp.seen[CT_DIR_ORIGINAL];
	return &ct->proto.tcp.seen[CT_DIR_REPLY];
}

static __always_inline __u32 ct_mark(struct nf_conn *nfct)
{
	return ((struct nf_conn___xnat *)nfct)->mark;
}

/* Clear BITS of the entry's mark (the one field BPF may write). */
static __always_inline void ct_mark_clear(struct nf_conn *nfct, __u32 bits)
{
	struct nf_conn___xnat *ct = (void *)nfct;

	ct->mark = ct->mark & ~bits;
}

#endif /* XNAT_CT_H */
