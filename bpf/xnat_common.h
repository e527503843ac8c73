/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Everything the XDP program and userspace share: map keys and values, the
 * config record, counter and reason enums. This is the only header user/
 * includes from bpf/. Fixed-width types only; byte order is in the type
 * (__be*) or stated in a comment; every struct has its size asserted so a
 * change on one side cannot silently mis-read the other.
 */
#ifndef XNAT_COMMON_H
#define XNAT_COMMON_H

#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_timer */

/* Userspace pins the maps in XNAT_PIN_ROOT_DIR/<netns inode>/<map name>. */
#define XNAT_PIN_ROOT_DIR "/sys/fs/bpf/xnat"

/* Upper bound on router interfaces (LAN + WAN) xnat attaches to. */
#define XNAT_MAX_IFACES 64
/* Upper bound on [forward] rules. */
#define XNAT_MAX_FORWARDS 1024

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

/* TCP state as derived from both directions; it only picks the timeout. */
/* How an SNAT flow got its external port. Zero is what flows created
 * before this field existed read as. */
enum flow_edm {
	FLOW_EDM_NONE = 0, /* through its endpoint's mapping (or no SNAT) */
	/* Endpoint-dependent fallback: a port unique for this remote
	 * (address, port) only, held in xnat_edm_ports; released with the
	 * flow. CHARGED: also counted against its inside host. */
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
	/* enum flow_edm: how an SNAT flow got its external port (nat.h),
	 * and the pool index of its external address when it matters. */
	__u8 edm;
	__u8 addr_idx;
	union {
		/* FLOW_NAT_CT: when this entry last reset the conntrack
		 * entry's timeout: bpf_ktime_get_coarse_ns() >>
		 * XNAT_CT_REFRESH_SHIFT (units of about a second, no division
		 * per packet). */
		__u32 ct_refresh;
		__u32 tcp_end; /* other TCP: tcp_track.h, highest seq + 1 */
	};
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
_Static_assert(__builtin_offsetof(struct flow_value, created_ns) == 80,
	       "TCP tracking took padding: older pinned tables still fit");

/* Interface roles, value of the ifaces map. */
enum xnat_role {
	XNAT_ROLE_NONE = 0,
	XNAT_ROLE_LAN = 1,
	XNAT_ROLE_WAN = 2,
};

/* A router port as the kernel routes with it: a physical port, or an
 * 802.1Q VLAN device on one (then parent and vid say where its frames go). */
struct iface_info {
	__u32 role; /* enum xnat_role */
	__u32 flags; /* XNAT_IFACE_* (was padding: zero in old pins) */
	__u8 mac[6]; /* frames for other MACs are not forwarded */
	__u16 vid;   /* 0: not a VLAN device */
	__u32 parent; /* physical port carrying it; its own ifindex if none */
};
_Static_assert(sizeof(struct iface_info) == 20, "iface_info layout");

/* flow_value.ct_refresh counts 2^30 ns (1.07 s). */
#define XNAT_CT_REFRESH_SHIFT 30

/* Bits of iface_info.flags. */
/* The port's root qdisc shapes or schedules (htb, tbf, cake, fq_codel...):
 * an XDP redirect would bypass it, so offload mode leaves flows leaving
 * there to the kernel unless [offload] shaped = offload. */
#define XNAT_IFACE_SHAPED (1U << 0)

/* Router addresses on a port, source of XDP's errors (icmp_gen.h). */
struct iface_addrs {
	__be32 v4;
	__be32 v6[4];
};
_Static_assert(sizeof(struct iface_addrs) == 20, "iface_addrs layout");
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

/* Fragment record (frag.h): flow (family 0: went up), age, byte ranges. */
struct frag_rec {
	struct flow_key flow;
	__u32 first_end;  /* end of the first fragment's data, bytes */
	__u64 created_ns; /* bpf_ktime_get_coarse_ns() */
	__u32 last_off, last_end; /* range of the latest later fragment */
};
_Static_assert(sizeof(struct frag_rec) == 64, "frag_rec layout");

/* (physical port, VLAN id) -> the VLAN device's ifindex. */
struct vlan_key {
	__u32 ifindex;
	__u16 vid;
	__u16 pad;
};
_Static_assert(sizeof(struct vlan_key) == 8, "vlan_key layout");

/* Bits of xnat_config.flags. */
#define XNAT_F_FASTPATH_OFF (1U << 0) /* [router] fastpath = off: route every packet */
/* [nat] filtering = endpoint-independent: any remote may reach a mapping
 * (RFC 4787 REQ-8 "application transparency"); clear: only remote
 * addresses the inside endpoint has sent to (address-dependent). */
#define XNAT_F_FILTER_EIF (1U << 1)
/* [nat] inbound_refresh = yes: UDP packets from the WAN keep a mapping
 * alive too (RFC 4787 REQ-6 allows it; the default is outbound only). */
#define XNAT_F_INBOUND_REFRESH (1U << 2)
/* mode = offload: the kernel's conntrack and nftables decide, XDP carries
 * the connections they accepted (bpf/offload.h). */
#define XNAT_F_OFFLOAD (1U << 3)

/* Most external addresses in [nat] address (an address's index must fit
 * the u8 of nat_port_key.addr_idx). */
#define XNAT_MAX_POOL 256

/* The single entry of the config map. Ports in host order. Its contents
 * come from the config alone, so a new layout is simply re-created. */
struct xnat_config {
	__be32 nat_addr;       /* WAN address used by SNAT; 0 = no NAT yet */
	__u16 port_min;        /* XDP NAT range, inclusive, host order */
	__u16 port_max;
	__u32 wan_ifindex;
	__u32 flags;           /* XNAT_F_* */
	__u32 timeout_tcp_est; /* seconds */
	__u32 timeout_tcp_trans;
	__u32 timeout_udp;
	__u32 timeout_icmp;
	/* [timeouts] udp_dns: UDP to or from port 53 (RFC 4787 REQ-5a). */
	__u32 timeout_udp_dns;
	/* [nat] ports_per_host: external ports (mappings plus endpoint-
	 * dependent bindings) one inside address may hold; 0 no limit. */
	__u32 ports_per_host;
	/* External addresses in xnat_pool, indices 0..pool_size-1; index 0
	 * is nat_addr. 0 means nat_addr alone. */
	__u32 pool_size;
	__u32 pad;
};
_Static_assert(sizeof(struct xnat_config) == 48, "xnat_config layout");

/*
 * Offload mode's settings, the single entry of xnat_offload. The conntrack
 * mark bits are set by xnat's nftables chain after every other forward and
 * postrouting decision, one per direction of the connection ([offload]
 * ct_mark: the lower of the two bits is the original direction's).
 */
struct xnat_offload_config {
	__u32 mark_orig;  /* ct mark bit: the kernel accepted an original-
			     direction packet since XDP last looked */
	__u32 mark_reply; /* the same for the reply direction */
	__u32 flags;      /* XNAT_OFFLOAD_F_* */
	__u32 pad;
};
_Static_assert(sizeof(struct xnat_offload_config) == 16,
	       "xnat_offload_config layout");

/* [offload] shaped = offload: carry flows out of shaped ports too. */
#define XNAT_OFFLOAD_F_SHAPED (1U << 0)

/* [forward] rule: WAN (proto, port on nat_addr) to an inside host. */
struct fwd_key {
	__be16 port;
	__u8 proto;
	__u8 pad;
};
_Static_assert(sizeof(struct fwd_key) == 4, "fwd_key layout");

struct fwd_value {
	__be32 addr;
	__be16 port;
	__u16 pad;
};
_Static_assert(sizeof(struct fwd_value) == 8, "fwd_value layout");

/*
 * NAT mappings (RFC 4787 REQ-1, endpoint-independent mapping): an inside
 * endpoint (address, port or echo id, protocol) keeps one external port
 * towards every destination while any of its flows lives, and for the
 * protocol's timeout after the last one ends (REQ-3: no reuse before).
 * xnat_ports owns each external port exclusively: its BPF_NOEXIST insert is
 * the lock-free allocation, and it answers "whose port is this" for
 * inbound filtering.
 */
struct nat_endpoint {
	__be32 addr;
	__be16 port;
	__u8 proto;
	__u8 pad;
};
_Static_assert(sizeof(struct nat_endpoint) == 8, "nat_endpoint layout");

struct nat_mapping {
	__be16 ext_port;
	__u8 addr_idx;         /* external address: xnat_pool index */
	/* Bits: NAT_MAPPING_CHARGED counted against its inside host,
	 * NAT_MAPPING_DNS only DNS (UDP port 53) flows so far. */
	__u8 flags;
	__u32 flows;           /* connections using it, atomic */
	/* Of those, the ones the inside opened. Only they keep the mapping
	 * open to inbound traffic: once the last one expired (outbound
	 * silence, REQ-6), the mapping is over even while its port waits
	 * out its timeout (REQ-3) and inbound flows still drain. */
	__u32 out_flows;
	__u32 pad2;
	__u64 last_used_ns;    /* when the last connection ended */
	struct bpf_timer timer;
};
_Static_assert(sizeof(struct nat_mapping) == 40, "nat_mapping layout");

struct nat_port_key {
	__be16 port;
	__u8 proto;
	__u8 addr_idx; /* external address: xnat_pool index (0: nat_addr) */
};
_Static_assert(sizeof(struct nat_port_key) == 4, "nat_port_key layout");

/* Address-dependent filtering: remote addresses a mapping has sent to. */
struct nat_peer_key {
	__be32 remote;
	__be16 ext_port;
	__u8 proto;
	__u8 addr_idx;
};
_Static_assert(sizeof(struct nat_peer_key) == 8, "nat_peer_key layout");

#define NAT_MAPPING_CHARGED 0x01
#define NAT_MAPPING_DNS 0x02

/*
 * Endpoint-dependent fallback (nat.h): when an inside endpoint cannot get
 * a port of its own, a flow gets an external port that is unique towards
 * its remote (address, port) only, as Linux's masquerade allocates. The
 * binding's owner is the inside endpoint, the value.
 */
struct nat_edm_key {
	__be32 remote;
	__be16 remote_port;
	__be16 ext_port;
	__u8 proto;
	__u8 addr_idx;
	__u16 pad;
};
_Static_assert(sizeof(struct nat_edm_key) == 12, "nat_edm_key layout");

/* Per inside address: external ports it holds (RFC 6888 REQ-4). */
struct nat_host {
	__u32 ports;   /* mappings plus endpoint-dependent bindings, atomic */
	__u32 pad;
};
_Static_assert(sizeof(struct nat_host) == 8, "nat_host layout");

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
	XNAT_PASS_CT_TCP_STATE, /* TCP not established, or SYN/FIN/RST */
	XNAT_PASS_CT_HELPER,    /* helper, sequence adjustment, flowtable */
	XNAT_PASS_SHAPED,       /* egress port has a shaping qdisc */
	XNAT_PASS_CT_TCP_END,   /* hand-back: FIN/RST/SYN on an offloaded
				   flow, which leaves the fast path */
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
	XNAT_DROP_SPOOFED,      /* from the WAN with an inside source */
	XNAT_REASON_MAX,
};

/* Entries of the stats map: more than there are reasons, so that a new
 * reason does not change the layout of a pinned stats map. */
#define XNAT_STATS_SLOTS 64
_Static_assert(XNAT_REASON_MAX <= XNAT_STATS_SLOTS, "stats map too small");

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

/* The key a packet of the other direction arrives with: the data path
 * installs it, `xnat flows` pairs the two directions with it. */
static inline void flow_reply_key(const struct flow_key *okey,
				  const struct flow_value *ov,
				  struct flow_key *rkey)
{
	__builtin_memset(rkey, 0, sizeof(*rkey));
	rkey->saddr = ov->new_daddr;
	rkey->daddr = ov->new_saddr;
	rkey->sport = ov->new_dport;
	rkey->dport = ov->new_sport;
	rkey->proto = okey->proto;
	rkey->family = okey->family;
	rkey->ifindex = ov->egress_ifindex;
	rkey->vid = ov->egress_vid;
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

/* Idle time after which a connection expires, in seconds. OKEY is the
 * key of its ORIG direction. */
static inline __u32 flow_timeout(const struct xnat_config *cfg,
				 const struct flow_key *okey,
				 const struct flow_value *a,
				 const struct flow_value *b)
{
	switch (okey->proto) {
	case 6: /* IPPROTO_TCP */
		return flow_tcp_state(a, b) == FLOW_TCP_ESTABLISHED ?
			       cfg->timeout_tcp_est : cfg->timeout_tcp_trans;
	case 17: /* IPPROTO_UDP */
		if (cfg->timeout_udp_dns && flow_is_dns(okey))
			return cfg->timeout_udp_dns;
		return cfg->timeout_udp;
	default:
		return cfg->timeout_icmp;
	}
}

/*
 * Paired pooling (RFC 4787 REQ-2): the external address of inside address
 * INSIDE is pool index xnat_pool_hash(INSIDE, N) of N. It is nftables'
 * `jhash ip saddr mod N seed XNAT_POOL_SEED` (the kernel's jhash() of the
 * four address bytes, scaled to N as reciprocal_scale() does), so the
 * kernel's SNAT of passed-up traffic picks the same address as XDP.
 */
#define XNAT_POOL_SEED 0x786e6174 /* "xnat" */

static inline __u32 xnat_rol32(__u32 w, unsigned int s)
{
	return (w << s) | (w >> (32 - s));
}

static inline __u32 xnat_pool_hash(__be32 inside, __u32 n)
{
	const __u8 *k = (const __u8 *)&inside;
	__u32 a, b, c;

	/* jhash(key, 4, seed) from include/linux/jhash.h */
	a = b = c = 0xdeadbeef + 4 + XNAT_POOL_SEED;
	a += (__u32)k[3] << 24 | (__u32)k[2] << 16 | (__u32)k[1] << 8 | k[0];
	c ^= b; c -= xnat_rol32(b, 14);
	a ^= c; a -= xnat_rol32(c, 11);
	b ^= a; b -= xnat_rol32(a, 25);
	c ^= b; c -= xnat_rol32(b, 16);
	a ^= c; a -= xnat_rol32(c, 4);
	b ^= a; b -= xnat_rol32(a, 14);
	c ^= b; c -= xnat_rol32(b, 24);
	/* reciprocal_scale() from include/linux/kernel.h */
	return (__u32)(((__u64)c * n) >> 32);
}

struct xnat_counter {
	__u64 packets;
	__u64 bytes;
};

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

#endif /* XNAT_COMMON_H */
