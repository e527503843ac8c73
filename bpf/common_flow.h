/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Shared with user/ through xnat_common.h: the flow table's records (one
 * entry per direction), the TCP state both sides derive from them, the
 * reply key that pairs the two directions, and the fragment records that
 * tie a datagram's later fragments to its flow.
 */
#ifndef XNAT_COMMON_FLOW_H
#define XNAT_COMMON_FLOW_H

#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_timer */

enum xnat_family {
	XNAT_AF_INET = 4,
	XNAT_AF_INET6 = 6,
};

/* An address of either family; IPv4 uses v4 and leaves the rest zero. */
union xnat_addr {
	__be32 v4;
	__be32 v6[4];
};

/*
 * Flow table key: the packet's 5-tuple as it arrives, plus the ingress
 * port and VLAN, so the same tuple arriving elsewhere (spoofed, or a
 * hairpin) is a different flow. For ICMP echo the identifier stands in for
 * a port: requests carry it in sport, replies in dport, so a request and a
 * reply with the same id never share a key.
 */
struct flow_key {
	union xnat_addr saddr;
	union xnat_addr daddr;
	__be16 sport;
	__be16 dport;
	__u8 proto;   /* IPPROTO_* */
	__u8 family;  /* enum xnat_family */
	__u16 vid;    /* 802.1Q VLAN id on the ingress port, 0 untagged */
	__u32 ifindex; /* ingress port (the physical one for VLANs) */
};
/* The members' sizes add up to it: no padding, whose bytes a hash key
 * would compare without anyone setting them. */
_Static_assert(sizeof(struct flow_key) == 44, "flow_key layout");

enum flow_dir {
	FLOW_DIR_ORIG = 0,  /* direction of the packet that created the flow */
	FLOW_DIR_REPLY = 1,
};

enum flow_nat {
	FLOW_NAT_NONE = 0,  /* routed only (IPv6, LAN to LAN) */
	FLOW_NAT_SNAT = 1,  /* LAN to WAN masquerade */
	FLOW_NAT_DNAT = 2,  /* WAN to LAN port forward */
	FLOW_NAT_HAIRPIN = 3, /* LAN to a port forward on the WAN address:
				 DNAT to the server, SNAT to the WAN address */
	FLOW_NAT_INBOUND = 4, /* WAN to LAN through an existing mapping, as
				 its filtering allows */
	FLOW_NAT_CT = 5,      /* offload mode: the kernel's conntrack entry
				 owns the connection and chose the rewrite
				 (NAT or none); no xnat mapping */
};

/* TCP tracking (tcp_track.h) in unused bits of tcp_flags_seen; clear in
 * entries older than tracking, which are not checked. */
#define TCP_TRACK_SEEN 0x08   /* tcp_end and tcp_win hold this sender's */
#define TCP_TRACK_ACKED 0x10  /* it ACKed the other SYN: handshake done */
#define TCP_TRACK_WSCALE 0x20 /* its SYN carried a window scale option */
/* flow_value.tcp_win (tcp_track.h): window scale in bits 15-12, window
 * / 16 below. */
#define TCP_WIN_SHIFT_BITS 12
#define TCP_WIN_UNITS_MAX 0xfff

/* TCP state as derived from both directions; it only picks the timeout. */
/* How an SNAT flow got its external port. Zero is what flows created
 * before this field existed read as. */
enum flow_edm {
	FLOW_EDM_NONE = 0, /* through its endpoint's mapping (or no SNAT) */
	/* Endpoint-dependent fallback: a port unique for this remote
	 * (address, port) only, held by the flow's reply entry and released
	 * with it. CHARGED: also counted against its inside host. */
	FLOW_EDM_PORT = 1,
	FLOW_EDM_PORT_CHARGED = 2,
};

enum flow_tcp_state {
	FLOW_TCP_SYN_SENT = 0,    /* no reply yet */
	FLOW_TCP_ESTABLISHED = 1, /* handshake completed (SYN, SYN-ACK, ACK) */
	FLOW_TCP_CLOSING = 2,     /* FIN seen */
	FLOW_TCP_CLOSED = 3,      /* RST seen, or FIN both ways */
};

/* A flow entry is one direction; the two directions reference each other. */
struct flow_value {
	/* Rewrite applied on a hit; equal to the key when nothing changes. */
	union xnat_addr new_saddr;
	union xnat_addr new_daddr;
	__be16 new_sport;
	__be16 new_dport;
	/* Precomputed one's-complement deltas (RFC 1624): the per-packet
	 * checksum update is one add and a fold, not a recomputation. */
	__u32 l3_csum_delta; /* IPv4 header: addresses */
	__u32 l4_csum_delta; /* TCP/UDP: pseudo-header addresses + ports;
				ICMP: echo identifier */
	__u8 eth_dst[6];
	__u8 eth_src[6];
	__u32 egress_ifindex; /* physical port to transmit on */
	/* tcp_track.h: window scale (bits 15-12), window / 16 (11-0). */
	__u16 tcp_win;
	__u16 egress_vid;  /* 802.1Q tag to send with, 0 untagged */
	__u8 dir;          /* enum flow_dir */
	__u8 nat;          /* enum flow_nat */
	/* TCP flags (FIN, SYN, RST bits as in the header) seen in this
	 * direction. Each direction writes only its own entry; the state is
	 * derived from both when it matters (expiry, display). */
	__u8 tcp_flags_seen;
	/* MAC of the ingress port: a frame of this flow addressed to another
	 * station (flooded by a switch) is not ours to forward. */
	__u8 ingress_mac[6];
	/* Set in both entries by `xnat flows delete` (bpf/flow_ctl.bpf.c):
	 * the expiry timer, kicked at once, then ends the connection as if
	 * it had timed out, mapping references included. */
	__u8 expired;
	union {
		/* enum flow_edm: how an SNAT flow got its external port
		 * (nat.h), and the pool index of its external address when
		 * it matters. */
		struct {
			__u8 edm;
			__u8 addr_idx;
		};
		/* FLOW_NAT_CT (no xnat mapping): when this entry last reset
		 * the conntrack entry's timeout, bpf_ktime_get_coarse_ns() >>
		 * XNAT_CT_REFRESH_SHIFT (units of about a second, no division
		 * per packet), modulo 2^16: offload.h keeps it from
		 * wrapping. Entries offloaded by an older xnat held it in
		 * tcp_end's place, and have no TCP_TRACK_SEEN. */
		__u16 ct_refresh;
	};
	__u32 tcp_end; /* TCP: tcp_track.h, highest seq + 1 */
	__u64 created_ns;  /* bpf_ktime_get_ns() */
	__u64 last_seen_ns;
	/* Updated without atomics: exact per CPU, approximate when one flow is
	 * spread over several CPUs. For display, never for decisions. */
	__u64 packets;
	__u64 bytes;
	/* Armed only in the ORIG entry: one expiry callback per connection, so
	 * two callbacks never race to delete each other's entries. */
	struct bpf_timer timer;
};
_Static_assert(sizeof(struct flow_value) == 128, "flow_value layout");
_Static_assert(__builtin_offsetof(struct flow_value, ct_refresh) == 74 &&
	       __builtin_offsetof(struct flow_value, tcp_end) == 76,
	       "the offload fields moved: older pinned tables still read");
_Static_assert(__builtin_offsetof(struct flow_value, created_ns) == 80,
	       "TCP tracking took padding: older pinned tables still fit");

/* One connection in xdp mode's expiry queue (xnat_expiry, bpf/sweep.h):
 * its ORIG key, and the low bits of the ORIG entry's created_ns, which
 * tell this connection from a later one with the same key (the queue
 * cannot drop an entry whose flow went some other way: such stale entries
 * are skipped when they come up). */
struct expiry_ref {
	struct flow_key key;
	__u32 created;
};
_Static_assert(sizeof(struct expiry_ref) == 48, "expiry_ref layout");

/* Which MAC of a flow entry xdp_flow_set_mac (bpf/flow_ctl.bpf.c) sets. */
enum flow_mac {
	FLOW_MAC_NEXT_HOP = 0, /* eth_dst: a neighbour's MAC changed */
	FLOW_MAC_EGRESS = 1,   /* eth_src: the egress port's MAC changed */
	FLOW_MAC_INGRESS = 2,  /* ingress_mac: the ingress port's changed */
};

/* The argument of xdp_flow_set_mac, from userspace (user/flow_mac.c): the
 * MAC WHICH of the entry KEY is OLD_MAC; make it NEW_MAC. */
struct flow_mac_arg {
	struct flow_key key;
	__u8 old_mac[6];
	__u8 new_mac[6];
	__u8 which; /* enum flow_mac */
	__u8 _pad[3];
};
_Static_assert(sizeof(struct flow_mac_arg) == 60, "flow_mac_arg layout");

/* What xdp_flow_reroute (bpf/flow_ctl.bpf.c) found when it routed a
 * connection's ORIG entry again, after a route changed. */
enum flow_route {
	FLOW_ROUTE_SAME = 1,  /* the route gives what the entry has */
	FLOW_ROUTE_MOVED = 2, /* another port or next hop: written in place */
	/* The new next hop's MAC is not known yet: the entry is as it was;
	 * resolve next_hop on ifindex, then ask again. */
	FLOW_ROUTE_NO_NEIGH = 3,
	/* No route any more (unreachable, blackhole, local), or not out of
	 * one of the router's ports that this connection may leave by: it
	 * must end, its next packet is routed as a new flow's. */
	FLOW_ROUTE_GONE = 4,
};

/* xdp_flow_reroute's argument, and its answer written back into it. */
struct flow_route_arg {
	struct flow_key key;      /* in: the ORIG entry's key */
	union xnat_addr next_hop; /* out, NO_NEIGH: the address to resolve */
	__u32 ifindex;            /* out, NO_NEIGH: the device it is on */
	__u8 result;              /* out: enum flow_route */
	/* out, NO_NEIGH: AF_INET or AF_INET6, the next hop's own (an IPv4
	 * route may have an IPv6 next hop, RFC 8950) */
	__u8 next_hop_family;
	__u8 _pad[2];
};
_Static_assert(sizeof(struct flow_route_arg) == 68, "flow_route_arg layout");

/* flow_value.ct_refresh counts 2^30 ns (1.07 s), modulo 2^16 (19 h);
 * no entry is let fall further behind than this (about 9.7 h). */
#define XNAT_CT_REFRESH_SHIFT 30
#define XNAT_CT_REFRESH_MAX 0x7fff

/* What a datagram's fragments share (RFC 791, RFC 8200 4.5), and port. */
struct frag_key {
	union xnat_addr saddr;
	union xnat_addr daddr;
	__be32 id; /* IPv4: the 16-bit id in the first two bytes */
	__u32 ifindex;
	__u16 vid;
	__u8 proto, family; /* IPv6: the fragment header's next header */
};
_Static_assert(sizeof(struct frag_key) == 44, "frag_key layout");

/* Fragment record (frag.h): flow (family 0: went up), age, and the byte
 * ranges [start, end) the datagram's forwarded fragments covered (end 0:
 * free; adjacent ones merge, so fragments in order use one). */
#define XNAT_FRAG_SPANS 8
struct frag_span {
	__u32 start, end;
};
struct frag_rec {
	struct flow_key flow;
	__u32 _pad;
	__u64 created_ns; /* bpf_ktime_get_coarse_ns() */
	struct frag_span spans[XNAT_FRAG_SPANS];
};
_Static_assert(sizeof(struct frag_rec) == 120, "frag_rec layout");

/* TCP header flag bits as in byte 13 of the header. */
#define XNAT_TCP_FIN 0x01
#define XNAT_TCP_SYN 0x02
#define XNAT_TCP_RST 0x04
#define XNAT_TCP_ACK 0x10

/*
 * Connection state from its two entries (either may be missing while it is
 * being created or deleted). Shared so the expiry in BPF and `xnat flows`
 * cannot disagree.
 */
static inline __u8 flow_tcp_state(const struct flow_value *a,
				  const struct flow_value *b)
{
	__u8 fa = a ? a->tcp_flags_seen : 0, fb = b ? b->tcp_flags_seen : 0;

	if ((fa | fb) & XNAT_TCP_RST)
		return FLOW_TCP_CLOSED;
	if ((fa & XNAT_TCP_FIN) && (fb & XNAT_TCP_FIN))
		return FLOW_TCP_CLOSED;
	if ((fa | fb) & XNAT_TCP_FIN)
		return FLOW_TCP_CLOSING;
	if (!a || !b || !a->packets || !b->packets)
		return FLOW_TCP_SYN_SENT;
	/* Tracked: established by the handshake's final ACK, not SYN-ACK. */
	if (((fa | fb) & TCP_TRACK_SEEN) && !((fa | fb) & TCP_TRACK_ACKED))
		return FLOW_TCP_SYN_SENT;
	return FLOW_TCP_ESTABLISHED;
}

/*
 * The key a packet of the other direction arrives with: the data path
 * installs it, `xnat flows` pairs the two directions with it: the ORIG
 * direction's rewritten tuple, swapped, on the port and VLAN the ORIG
 * direction leaves by. Every byte of the key is a member (no padding: see
 * its size's assertion), so the literal leaves none of a hash key unset.
 */
static inline void flow_reply_key(const struct flow_key *okey,
				  const struct flow_value *ov,
				  struct flow_key *rkey)
{
	*rkey = (struct flow_key){
		.saddr = ov->new_daddr, .sport = ov->new_dport,
		.daddr = ov->new_saddr, .dport = ov->new_sport,
		.proto = okey->proto, .family = okey->family,
		.vid = ov->egress_vid, .ifindex = ov->egress_ifindex,
	};
}

/* DNS: the short UDP timeout RFC 4787 REQ-5a allows for port 53. */
#define XNAT_DNS_PORT 53

/* Is this UDP flow (its ORIG key) DNS? Either end on port 53. */
static inline int flow_is_dns(const struct flow_key *okey)
{
	/* __be16 compares against the constant in network order. */
	__u16 dns = (__u16)((XNAT_DNS_PORT >> 8) | (XNAT_DNS_PORT << 8));

	return okey->proto == 17 && (okey->dport == dns || okey->sport == dns);
}

#endif /* XNAT_COMMON_FLOW_H */
