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
#include <stdint.h>

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

#endif /* XNAT_IFACE_H */
