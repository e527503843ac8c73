/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Shared with user/ through xnat_common.h: what the data path reports
 * as it happens: `xnat trace`'s request and packet records, and the NAT
 * event log's records (mappings created and expired, offload mode's flow
 * moves).
 */
#ifndef XNAT_COMMON_EVENTS_H
#define XNAT_COMMON_EVENTS_H

#include <linux/types.h>
#include "common_flow.h"
#include "common_reasons.h"

/*
 * `xnat trace`: the tracer's request, read by the data path at its single
 * exit (count() in bpf/stats.h). With no tracer attached only `active` is
 * read, once per packet. Terms in `match` are ANDed; reasons is always
 * applied (all ones when no reason term was given).
 */
#define XNAT_TRACE_HOST  (1U << 0) /* host: either address, before or after NAT */
#define XNAT_TRACE_PORT  (1U << 1) /* port: either TCP/UDP port, before or after */
#define XNAT_TRACE_PROTO (1U << 2) /* proto: IPPROTO_* */

struct trace_config {
	__u32 active;          /* 0: nobody traces, nothing else is read */
	__u32 match;           /* XNAT_TRACE_* terms in force */
	__u64 reasons;         /* bit (1 << enum xnat_reason) per reason shown */
	union xnat_addr host;
	__u8 host_family;      /* enum xnat_family */
	__u8 proto;
	__be16 port;
	__u32 rate;            /* events per second and CPU, the rest counted */
	/* CLOCK_MONOTONIC ns. The tracer renews it every second: a tracer
	 * killed without cleaning up stops costing once it has passed. */
	__u64 lease_end_ns;
};
_Static_assert(sizeof(struct trace_config) == 48, "trace_config layout");
_Static_assert(XNAT_REASON_MAX <= 64, "trace_config.reasons has 64 bits");

/* Per CPU: the rate limit's window and what matched but was not shown. */
struct trace_cpu {
	__u64 window;          /* the second (monotonic ns / 1e9) sent counts */
	__u64 sent;            /* events sent in that second */
	__u64 matched;         /* packets the filter matched, ever */
	__u64 lost;            /* of those, not sent: rate limit or ring full */
};
_Static_assert(sizeof(struct trace_cpu) == 32, "trace_cpu layout");

/* One traced packet, as the ring buffer carries it. */
struct trace_event {
	__u64 ts_ns;               /* bpf_ktime_get_ns() at the exit */
	struct flow_key key;       /* as it arrived: tuple, port, VLAN */
	/* As it left; equal to the key's when nothing was rewritten. */
	union xnat_addr new_saddr;
	union xnat_addr new_daddr;
	__be16 new_sport;
	__be16 new_dport;
	__u32 egress_ifindex;      /* 0: not forwarded by XDP */
	__u16 egress_vid;
	__u8 action;               /* XDP_* verdict */
	__u8 nat;                  /* enum flow_nat of the entry applied */
	__u8 tcp_flags;            /* byte 13 of the TCP header, else 0 */
	__u8 new_flow;             /* 1: this packet installed its flow
				      (fwd_slow, fwd_offload) */
	/* Not a packet: offload mode's timer took the entry (key, new_*)
	 * off the fast path; enum flowlog_why, reason and action unused.
	 * 0 for a packet (was padding). */
	__u8 flow_returned;
	__u8 pad;
	__u32 reason;              /* enum xnat_reason, as counted */
	__u32 len;                 /* frame length */
	__u32 cpu;
};
_Static_assert(sizeof(struct trace_event) == 112, "trace_event layout");

/*
 * NAT event log (`xnat run`): a mapping created or expired, what an operator
 * keeps to answer abuse reports (who was behind an external address and
 * port, when). Written only while a reader is attached (natlog_config).
 */
enum natlog_type {
	NATLOG_CREATED = 1,
	NATLOG_EXPIRED = 2,
	NATLOG_OFFLOADED = 3,  /* struct flowlog_event: onto the fast path */
	NATLOG_UNLOADED = 4,   /* struct flowlog_event: off it, and why */
};

struct natlog_config {
	__u32 active;          /* 0: nobody reads, nothing is written */
	/* 1: the reader also takes struct flowlog_event records (offload
	 * mode's flow moves); a reader that predates them leaves it 0. */
	__u32 flows;
};
_Static_assert(sizeof(struct natlog_config) == 8, "natlog_config layout");

struct natlog_event {
	__u64 ts_ns;           /* bpf_ktime_get_ns() */
	__be32 inside_addr;
	__be32 ext_addr;       /* [nat] address at the time */
	__be32 remote_addr;    /* created: the destination of the first
				  packet; expired: 0. The external port is
				  the same towards every destination
				  (endpoint-independent mapping). */
	__be16 inside_port;    /* ICMP: echo id */
	__be16 ext_port;
	__be16 remote_port;
	__u8 proto;
	__u8 type;             /* enum natlog_type */
	__u32 pad;
};
_Static_assert(sizeof(struct natlog_event) == 32, "natlog_event layout");

/* Why an offloaded connection's entry left the fast path. Sync note:
 * user/natlog.c names them. */
enum flowlog_why {
	FLOWLOG_WHY_NONE = 0,
	FLOWLOG_WHY_TCP_END = 1,    /* FIN, RST or SYN: conntrack must see it */
	FLOWLOG_WHY_CT_GONE = 2,    /* on refresh: conntrack entry gone or
				       changed */
	FLOWLOG_WHY_IDLE = 3,       /* no packet for the protocol's timeout */
	FLOWLOG_WHY_DELETED = 4,    /* `xnat flows delete` */
	FLOWLOG_WHY_CT_DESTROYED = 5, /* conntrack destroy event (xnat run) */
	FLOWLOG_WHY_RULESET = 6,    /* nftables ruleset changed (xnat run) */
	FLOWLOG_WHY_CT_EVENTS_LOST = 7, /* conntrack events lost: every
					   entry goes back (xnat run) */
	FLOWLOG_WHY_NEIGH = 8,      /* its next hop's MAC changed (xnat run) */
	FLOWLOG_WHY_ROUTE = 9,      /* a route changed, or route and
				       neighbour events were lost (xnat run) */
	FLOWLOG_WHY_WATCH_START = 10, /* xnat run's watch started or was
					 opened anew by a reload: every
					 entry goes back once */
	FLOWLOG_WHY_MAX,
};

/*
 * Offload mode's flow life cycle in the NAT event log's ring: one
 * direction's entry put on the fast path (NATLOG_OFFLOADED) or taken off
 * it (NATLOG_UNLOADED, with why). Only at those moves, never per packet.
 * Told from struct natlog_event by its size.
 */
struct flowlog_event {
	__u64 ts_ns;           /* bpf_ktime_get_ns() */
	struct flow_key key;   /* the direction's packets as they arrive */
	union xnat_addr new_saddr; /* as they leave (the kernel's NAT) */
	union xnat_addr new_daddr;
	__be16 new_sport;
	__be16 new_dport;
	__u8 type;             /* NATLOG_OFFLOADED or NATLOG_UNLOADED */
	__u8 why;              /* enum flowlog_why; 0 when offloaded */
	__u8 dir;              /* enum flow_dir: conntrack's direction */
	__u8 pad;
	__u32 pad2;
	__u64 packets;         /* carried by XDP in this entry's life */
	__u64 bytes;
	__u64 since_ns;        /* when it was offloaded (created_ns) */
};
_Static_assert(sizeof(struct flowlog_event) == 120, "flowlog_event layout");
_Static_assert(sizeof(struct flowlog_event) != sizeof(struct natlog_event),
	       "the log's reader tells the records apart by size");

#endif /* XNAT_COMMON_EVENTS_H */
