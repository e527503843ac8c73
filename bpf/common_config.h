/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Shared with user/ through xnat_common.h: what the loader writes for the
 * data path to read: the router's ports (roles, MACs, VLANs, addresses),
 * the config record, offload mode's settings, port forwards, and the
 * timeout a flow gets from the config.
 */
#ifndef XNAT_COMMON_CONFIG_H
#define XNAT_COMMON_CONFIG_H

#include <linux/types.h>
#include "common_flow.h"

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

/* Bits of iface_info.flags. */
/* The port's root qdisc shapes or schedules (htb, tbf, cake, fq_codel...):
 * an XDP redirect would bypass it, so offload mode leaves flows leaving
 * there to the kernel unless [offload] shaped = offload. */
#define XNAT_IFACE_SHAPED (1U << 0)

/* The way back from a tagged frame to its VLAN device, the reverse of
 * iface_info's (parent, vid): (physical port, VLAN id) -> the device's
 * ifindex, in xnat_vlans. */
struct vlan_key {
	__u32 ifindex;
	__u16 vid;
	__u16 pad;
};
_Static_assert(sizeof(struct vlan_key) == 8, "vlan_key layout");

/* Router addresses on a port, source of XDP's errors (icmp_gen.h). */
struct iface_addrs {
	__be32 v4;
	__be32 v6[4];
};
_Static_assert(sizeof(struct iface_addrs) == 20, "iface_addrs layout");

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
/* [router] mss_clamp = pmtu: SYNs leave with an MSS that fits the MTU of
 * both ports they cross (bpf/mss.h). */
#define XNAT_F_MSS_PMTU (1U << 4)
/* [ipv6] inbound = open: IPv6 from the WAN may open flows to LAN hosts. */
#define XNAT_F_IPV6_OPEN (1U << 5)
/* [router] source_check = feasible: a LAN port's new flow may come from
 * any source routed out of a LAN port, not only out of its own (bpf/fib.h,
 * fib_src_check): asymmetric LAN routing, ECMP towards the router. */
#define XNAT_F_SRC_FEASIBLE (1U << 6)
/* MSS = MTU less the option-less IP and TCP headers, as nft's "rt mtu". */
#define XNAT_MSS_HDRS_V4 40
#define XNAT_MSS_HDRS_V6 60

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
	/* [router] mss_clamp = N: the IP packet size SYNs' MSS must fit
	 * (N + 40); 0 none. */
	__u16 mss_mtu;
	__u16 pad;
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
/* Ask conntrack on a flow's first miss too, not from its second on
 * (bpf/ct_seen.h): a flow already in conntrack is offloaded one packet
 * sooner, each new one costs a lookup. Not a config key: the unit tests
 * set it to put each packet to conntrack. */
#define XNAT_OFFLOAD_F_LOOKUP_FIRST (1U << 1)

/* Offload mode's table filter (bpf/offload_filter.h): a 32-bit word per
 * hash of a flow key, a bit per key; 2^18 bits in 32 KiB. Every fast-path
 * hit reads a word, so the filter competes with the flow table for the
 * cache: at 2^20 bits (256 KiB) 10,000 flows' hits touched all of it. */
#define OFFLOADED_WORDS_LOG2 13
#define OFFLOADED_WORDS (1U << OFFLOADED_WORDS_LOG2)
#define OFFLOADED_BITS (OFFLOADED_WORDS * 32)
/* Installs the filter stays off for once the live entries were too many. */
#define OFFLOADED_RETRY (1U << 22)

/* The table filter's state (xnat_offloaded_epoch): which epoch (clearing
 * of its words) it is in, how many bits this epoch has set (approximate:
 * updated without atomics), and, while the filter is off, how many more
 * installs until it is tried again. `xnat status` reads it; hits do not. */
struct offloaded_epoch {
	__u32 epoch;
	__u32 set;
	__u32 off;
	__u32 resets;  /* epochs begun since the map was made */
};
_Static_assert(sizeof(struct offloaded_epoch) == 16, "offloaded_epoch layout");

/*
 * A [forward] rule as xnat_forwards holds it: the key is what it opens
 * (protocol, port on nat_addr), the value the inside host it leads to.
 * Addresses and ports in network order.
 */
struct fwd_key {
	__be16 port;
	__u8 proto;   /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 pad;
};
struct fwd_value {
	__be32 addr;
	__be16 port;
	__u16 pad;
};
_Static_assert(sizeof(struct fwd_key) == 4, "fwd_key layout");
_Static_assert(sizeof(struct fwd_value) == 8, "fwd_value layout");

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

#endif /* XNAT_COMMON_CONFIG_H */
