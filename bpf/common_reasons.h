/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Shared with user/ through xnat_common.h: why a packet ended where it
 * did, and the counter kept per reason.
 */
#ifndef XNAT_COMMON_REASONS_H
#define XNAT_COMMON_REASONS_H

#include <linux/types.h>

/*
 * Why a packet ended where it did. One counter (packets, bytes) per reason.
 * Sync note: user/reasons.c holds the names printed for these; keep the two
 * in the same order.
 */
enum xnat_reason {
	/* forwarded by XDP */
	XNAT_FWD_FAST = 0,      /* flow table hit, cached rewrite */
	XNAT_FWD_SLOW,          /* miss: routed, flow created, forwarded */
	XNAT_FWD_ROUTED,        /* fast path off: hit, but routed again */
	XNAT_FWD_ICMP_ERROR,    /* ICMP error about a flow, translated */
	/* handed to the kernel (XDP_PASS) */
	XNAT_PASS_NOT_IP,       /* ARP, LLDP, anything not IPv4/IPv6 */
	XNAT_PASS_OTHERHOST,    /* frame not addressed to our MAC */
	XNAT_PASS_MARTIAN,      /* impossible source or destination address */
	XNAT_PASS_VLAN,         /* 802.1Q tag of no xnat VLAN, or QinQ */
	XNAT_PASS_LOCAL,        /* addressed to the router itself */
	XNAT_PASS_IP_OPTIONS,
	XNAT_PASS_FRAGMENT,
	XNAT_PASS_TTL,          /* TTL/hop limit <= 1: kernel sends ICMP */
	XNAT_PASS_PROTO,        /* not TCP, UDP or ICMP echo */
	XNAT_PASS_NO_ROUTE,     /* blackhole, unreachable, prohibit */
	XNAT_PASS_NO_NEIGH,     /* kernel resolves the neighbour */
	XNAT_PASS_MTU,          /* bigger than the egress MTU */
	XNAT_PASS_EGRESS,       /* egress is not an xnat interface */
	XNAT_PASS_KERNEL_FLOW,  /* the kernel's conntrack owns this flow */
	XNAT_PASS_TCP_MIDSTREAM,/* TCP miss without SYN: kernel's or stale */
	XNAT_PASS_TABLE_FULL,   /* flow table full: kernel NAT takes it */
	XNAT_PASS_NO_PORT,      /* no free port in the XDP range */
	XNAT_PASS_NO_NAT_ADDR,  /* WAN address unknown */
	XNAT_PASS_WAN_IN,       /* WAN miss outside the XDP range */
	/* dropped */
	XNAT_DROP_MALFORMED,    /* truncated or inconsistent headers */
	XNAT_DROP_UNSOLICITED,  /* WAN to LAN without a flow or forward */
	XNAT_DROP_FILTERED,     /* WAN to a mapping its filtering refuses */
	XNAT_DROP_REDIRECT,     /* redirect to the egress port failed */
	/* Appended (the stats map is indexed by these: never renumber). */
	XNAT_PASS_INSERT_RACE,  /* another CPU created the same flow or
				   mapping at the same time: this packet
				   goes up, the next one hits */
	XNAT_PASS_INTERNAL,     /* a lookup that cannot fail did (the
				   config or per-CPU scratch map) */
	XNAT_PASS_ECHO_REPLY,   /* ICMP echo reply from a LAN without a
				   flow: answers a ping XDP never saw */
	/* offload mode (bpf/offload.h), appended too */
	XNAT_FWD_OFFLOAD,       /* miss: conntrack's accepted connection put
				   on the fast path, forwarded */
	XNAT_PASS_CT_PROTO,     /* not TCP/UDP (ICMP...): the kernel's */
	XNAT_PASS_CT_NONE,      /* no conntrack entry (new connection) */
	XNAT_PASS_CT_UNCONFIRMED, /* conntrack entry not confirmed yet */
	XNAT_PASS_CT_UNMARKED,  /* the kernel has not accepted this
				   direction (no mark bit) */
	XNAT_PASS_CT_TCP_STATE, /* TCP not established, or SYN/FIN/RST;
				   a SYN on an offloaded flow, which stays */
	XNAT_PASS_CT_HELPER,    /* helper, sequence adjustment, flowtable */
	XNAT_PASS_SHAPED,       /* egress port has a shaping qdisc */
	XNAT_PASS_CT_TCP_END,   /* hand-back: FIN/RST on an offloaded
				   flow, or a RST of its other direction:
				   the flow leaves the fast path */
	XNAT_PASS_CT_GONE,      /* hand-back: conntrack entry gone or
				   changed, the flow leaves the fast path */
	/* NAT at scale (bpf/nat.h), appended too */
	XNAT_FWD_SLOW_EDM,      /* new flow through an endpoint-dependent port */
	XNAT_DROP_HOST_LIMIT,   /* inside host holds [nat] ports_per_host */
	XNAT_DROP_NO_PORT,      /* no port free, kernel's budget spent */
	/* XDP flows' exceptions (handoff.h), appended too */
	XNAT_TX_ICMP_TOO_BIG,   /* too big: frag needed / packet too big sent */
	XNAT_TX_ICMP_TIME_EXCEEDED, /* TTL 1: time exceeded sent */
	XNAT_DROP_ICMP_LIMIT,   /* needed an ICMP error, none sent */
	XNAT_DROP_FLOW_UNHANDLED, /* the kernel cannot take it (TCP reply) */
	XNAT_DROP_FRAG_BAD,     /* overlapping, duplicate or stale fragment */
	XNAT_DROP_TCP_WINDOW,   /* RST or FIN outside the receiver's window */
	XNAT_DROP_SPOOFED,      /* source not routed back out of its ingress
				   port (from the WAN: an inside one) */
	XNAT_PASS_CT_FIRST,     /* offload: a flow's first miss goes up
				   without a conntrack lookup (ct_seen.h) */
	XNAT_PASS_ECHO_INBOUND, /* IPv6 echo request from the WAN without a
				   flow ([ipv6] inbound = stateful): the
				   kernel keeps its state, not the table */
	XNAT_PASS_CT_SPOOFED,   /* offload: a conntrack entry's tuple from
				   a source not routed back out of its port
				   (fib_src_check): up, for the kernel's
				   antispoof to drop, never installed */
	XNAT_REASON_MAX,
};

/* Entries of the stats map: more than there are reasons, so that a new
 * reason does not change the layout of a pinned stats map. */
#define XNAT_STATS_SLOTS 64
_Static_assert(XNAT_REASON_MAX <= XNAT_STATS_SLOTS, "stats map too small");

struct xnat_counter {
	__u64 packets;
	__u64 bytes;
};

#endif /* XNAT_COMMON_REASONS_H */
