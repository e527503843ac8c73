/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every map of the data path. Userspace pins them by name under
 * /sys/fs/bpf/xnat/<netns inode>/ so they outlive the xnat process and a
 * reloaded program binary picks up the same flows.
 */
#ifndef XNAT_MAPS_H
#define XNAT_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xnat_common.h"
#include "map_flows.h"
#include "map_sweep.h"
#include "map_ports.h"

/* Both directions of every connection: map_flows.h. */

/* Every xdp-mode connection once, in the order the sweeper (sweep.h)
 * visits them: it pops a batch each tick and pushes back the ones still
 * alive. max_entries is set from [flows] max (and a quarter more, for
 * entries whose flow was removed some other way) before load. */
#define XNAT_EXPIRY_MAX_DEFAULT (65536 + 16384)
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__type(value, struct expiry_ref);
	__uint(max_entries, XNAT_EXPIRY_MAX_DEFAULT);
} xnat_expiry SEC(".maps");

/* The sweeper's timer, and the connections `xnat flows delete` marked:
 * map_sweep.h. */

/* Inside endpoint -> its mapping (external port, users, expiry timer).
 * max_entries is set from [flows] max before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct nat_endpoint);
	__type(value, struct nat_mapping);
	__uint(max_entries, 65536);
} xnat_mappings SEC(".maps");

/* External port -> the inside endpoint that owns it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct nat_port_key);
	__type(value, struct nat_endpoint);
	__uint(max_entries, 65536);
} xnat_ports SEC(".maps");

/* xnat_ports' NAT_EP_ACTIVE marks again, a byte per external port, in an
 * array small enough to stay in the caches (bpf/port_active.h): what the
 * slow path reads of a port's owner while the range is full. Sized from
 * the pool before load (PORT_ACTIVE_WORDS per address). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64); /* eight ports' bytes */
	__uint(max_entries, PORT_ACTIVE_WORDS);
	/* userspace clears it with one memset (user/loader.c) */
	__uint(map_flags, BPF_F_MMAPABLE);
} xnat_port_active SEC(".maps");


/* Inside address -> the external ports it holds, for [nat]
 * ports_per_host. Entries stay (a count of zero) once made; when the map
 * is full, new hosts are not counted, and so not limited. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __be32);
	__type(value, struct nat_host);
	__uint(max_entries, 65536);
} xnat_hosts SEC(".maps");

/* The external addresses by pool index ([nat] address); index 0 is the
 * config's nat_addr. Only read while the config's pool_size > 1. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __be32);
	__uint(max_entries, XNAT_MAX_POOL);
} xnat_pool SEC(".maps");

/* External address -> its pool index: "is this packet for us?" */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __be32);
	__type(value, __u32);
	__uint(max_entries, XNAT_MAX_POOL);
} xnat_pool_rev SEC(".maps");

/* struct nat_alloc_hint (common_nat.h), one per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct nat_alloc_hint);
	__uint(max_entries, 1);
} xnat_alloc SEC(".maps");

/* Remote addresses each mapping has sent to, for address-dependent
 * filtering. LRU: an entry lost to pressure only makes filtering stricter
 * for that peer until the inside host sends to it again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct nat_peer_key);
	__type(value, struct nat_endpoint);
	__uint(max_entries, 131072);
	/* An LRU list per CPU: inserts take no lock shared between CPUs,
	 * which made this the slow path's costliest map update. */
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
} xnat_peers SEC(".maps");

/* The router config: NAT address, port range, timeouts, flags. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct xnat_config);
	__uint(max_entries, 1);
} xnat_config SEC(".maps");

/* Its one record (entry 0 of an array: never missing, but the
 * verifier wants the NULL check). */
static __always_inline struct xnat_config *config_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnat_config, &zero);
}

/* Offload mode's first-packet filter (ct_seen.h): one bit per hash of a
 * flow key, set by a miss that went up without a conntrack lookup. */
#define CT_SEEN_WORDS 4096 /* of 64 bits: 2^18 bits, 32 KiB */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, CT_SEEN_WORDS);
} xnat_ct_seen SEC(".maps");

/* Offload mode's table filter (offload_filter.h, common_config.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, OFFLOADED_WORDS);
} xnat_offloaded SEC(".maps");

/* The filter's epoch and fill (one entry). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct offloaded_epoch);
	__uint(max_entries, 1);
} xnat_offloaded_epoch SEC(".maps");

/* Offload mode's settings (conntrack mark bits, shaping policy). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct xnat_offload_config);
	__uint(max_entries, 1);
} xnat_offload SEC(".maps");

/* The router's ports (xnat_ifaces, xnat_vlans, xnat_tx_ports):
 * map_ports.h. */

/* First fragments seen -> their flow and byte ranges, for the fragments
 * that follow (frag.h). LRU: a datagram's record is only needed for a
 * moment. (Named apart from the older xnat_frags, whose records held the
 * flow only, so that a reload never reads one as the other.) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct frag_key);
	__type(value, struct frag_rec);
	__uint(max_entries, 8192);
} xnat_fragments SEC(".maps");

/* The router's addresses on each port (by the kernel's ifindex), written
 * by userspace: the source of the ICMP errors XDP sends (icmp_gen.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct iface_addrs);
	__uint(max_entries, XNAT_MAX_IFACES);
} xnat_ifaddrs SEC(".maps");

/* A SYN's TCP options, copied for tcp_opt_find() (tcp_opt.h): room
 * for an index masked to 6 bits plus the two bytes read after it. */
#define TCP_OPTS_BUF 66
struct tcp_opts_buf {
	__u8 b[TCP_OPTS_BUF];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct tcp_opts_buf);
	__uint(max_entries, 1);
} xnat_tcp_opts SEC(".maps");

/* The conntrack tuple of an XDP flow's original direction, and the
 * addresses and ports it is translated to (kernel_adopt_flow, conntrack.h):
 * from either direction's entry. */
struct adopt_tuple {
	struct bpf_sock_tuple tup;
	union xnat_addr nsaddr;
	union xnat_addr ndaddr;
	__be16 nsport;
	__be16 ndport;
};

/* Per-CPU room for the keys and records the exception paths build
 * (parsing.h, conntrack.h, frag.h, tcp_track.h): the main program's stack has none
 * left. One program run uses each member for one thing at a time. */
/* What the slow parsers below find behind IPv4 options or IPv6 extension
 * headers: enough for the flow key, no pointer into the packet. */
struct l4_peek {
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 tcp_flags;
	__u8 frag;        /* enum frag_kind */
	__u8 icmp_echo_request;
	__be32 frag_id;
	__u32 frag_start;
	__u32 frag_end;
	/* IPv6: where the L4 header starts in the frame, from which
	 * parse_slow points p->l4 at a TCP header. */
	__u32 l4_off;
	/* IPv6 fragments: the fragment header's next header, the one
	 * protocol number every fragment of a datagram carries alike (the
	 * fragment record's key, frag.h). */
	__u8 frag_nexthdr;
};

struct xnat_tmp {
	struct l4_peek lp;
	struct adopt_tuple at;
	struct frag_key fk;
	struct frag_rec fr;
	struct flow_key rkey;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnat_tmp);
	__uint(max_entries, 1);
} xnat_tmp SEC(".maps");

static __always_inline struct xnat_tmp *xnat_tmp_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnat_tmp, &zero);
}

/* Token bucket of the ICMP errors XDP sends, per CPU (no atomics; the
 * limit is per CPU, as each CPU's share of the traffic). */
struct icmp_bucket {
	__u64 last_ns;
	__u32 tokens;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct icmp_bucket);
	__uint(max_entries, 1);
} xnat_icmp_rate SEC(".maps");


/* Port forwards from [forward]: (proto, WAN port) to inside host. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct fwd_key);
	__type(value, struct fwd_value);
	__uint(max_entries, XNAT_MAX_FORWARDS);
} xnat_forwards SEC(".maps");

/* Counters by enum xnat_reason. Per CPU, so updates need no atomics;
 * userspace sums the CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnat_counter);
	__uint(max_entries, XNAT_STATS_SLOTS);
} xnat_stats SEC(".maps");

/* Per-CPU scratch space for the slow path's two new entries: too big for
 * the 512-byte BPF stack. The slow path runs to completion on one CPU. */
struct new_flow {
	struct flow_key okey;     /* = the packet's key */
	struct flow_value ov;     /* its direction */
	struct flow_key rkey;     /* the reply's key */
	struct flow_value rv;
	/* The new mapping (nat.h), here rather than on the stack, which
	 * the slow path has used up. */
	struct nat_mapping nm;
	struct nat_endpoint ep;   /* the flow's inside endpoint */
	struct nat_port_key pk;   /* a port candidate */
	__u8 pk_active;           /* pk is taken by an active mapping's
				     owner (port_probe()) */
	__u8 mapped;              /* enum flow_mapping of the flow */
	__u8 addr_idx;            /* its external address's pool index */
	/* offload_miss_rst()'s route lookup: that function's frame adds
	 * to the main program's, which is nearly full. */
	struct bpf_fib_lookup fib;
};

/* Raw bytes as far as BTF is concerned: a per-CPU map may not hold a
 * struct bpf_timer, and this one never arms it. */
struct new_flow_bytes {
	__u8 b[sizeof(struct new_flow)];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct new_flow_bytes);
	__uint(max_entries, 1);
} xnat_scratch SEC(".maps");

/*
 * The xdp-mode slow path, a program of its own (xdp_xnat_slow) that
 * xdp_xnat tail-calls on a miss, so that each is verified apart: one
 * program with both came within 10 % of the verifier's 1,000,000
 * instruction limit. The loader fills slot 0; pinned like every map,
 * because the kernel empties a program array when its last user-space
 * reference goes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} xnat_slow_path SEC(".maps");

/* `xnat trace`: the tracer's filter and lease (one entry). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct trace_config);
	__uint(max_entries, 1);
} xnat_trace_cfg SEC(".maps");

/* `xnat trace`: per-CPU rate limit and the count of events not shown. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct trace_cpu);
	__uint(max_entries, 1);
} xnat_trace_cpu SEC(".maps");

/* `xnat trace`: events to the tracer; about 2,300 fit. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} xnat_trace_rb SEC(".maps");

/* NAT event log: on while `xnat run` reads it (one entry). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct natlog_config);
	__uint(max_entries, 1);
} xnat_natlog_cfg SEC(".maps");

/* NAT event log: events that did not fit in the ring, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} xnat_natlog_cpu SEC(".maps");

/* NAT event log: mapping created / expired, to `xnat run`. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} xnat_natlog_rb SEC(".maps");

#endif /* XNAT_MAPS_H */
