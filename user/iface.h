/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What xnat needs to know about a router port from the kernel: its MTU and
 * MAC, and, for an 802.1Q VLAN device, the physical port under it and its
 * VLAN id. XDP runs on the physical port; the VLAN device is what the
 * kernel routes with.
 */
#ifndef XNAT_IFACE_H
#define XNAT_IFACE_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

struct iface_hw {
	unsigned int mtu;
	uint8_t mac[6];
	char lower[IF_NAMESIZE]; /* physical port: NAME itself if no VLAN */
	uint16_t vid;            /* 0 if NAME is not a VLAN device */
};

/* 0, or -errno if NAME cannot be queried. */
int iface_query(const char *name, struct iface_hw *hw);

struct config;
/* The physical ports under CFG's WAN and LANs, each once, WAN first: where
 * XDP is attached. Returns how many (a port that cannot be queried counts
 * as its own physical port). */
int iface_physical_ports(const struct config *cfg,
			 char out[][IF_NAMESIZE]);

/* What rtnetlink says about a link (RTM_GETLINK). */
struct iface_link {
	unsigned short type;     /* ARPHRD_* */
	char kind[16];           /* IFLA_INFO_KIND: "veth", "bridge"... or "" */
	int peer_ifindex;        /* IFLA_LINK: a veth's peer, 0 if none */
	int peer_netnsid;        /* IFLA_LINK_NETNSID, -1: same netns */
	int master;              /* IFLA_MASTER: bridge or bond it is in */
	int xdp_attached;        /* IFLA_XDP_ATTACHED != XDP_ATTACHED_NONE */
};

/* Link IFINDEX, in the netns NETNSID as this one numbers it (-1: this
 * one). 0, or -errno. */
int iface_link_get(int ifindex, int netnsid, struct iface_link *link);

/*
 * Can XDP serve port NAME (ifindex IFINDEX) as a router port? -EINVAL with
 * ERR ("NAME: why; use mode = kernel") when it cannot: a device that is not
 * Ethernet (ppp, tun, wireguard), a bridge, a bridge's or bond's member.
 */
int iface_check_xdp(const char *name, int ifindex, char *err, size_t len);
/* Warn when NAME is a veth whose peer is known not to accept redirected
 * frames (no XDP, GRO off), unless the peer is one of OURS (N_OURS
 * ifindexes xnat attaches to). */
void iface_check_veth(const char *name, int ifindex, const __u32 *ours,
		      int n_ours);

#endif /* XNAT_IFACE_H */
