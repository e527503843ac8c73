/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Flow entries keep MACs: the next hop's (eth_dst), the egress port's
 * (eth_src) and the ingress port's (ingress_mac, which a hit checks). When
 * one changes under a running router, the entries that hold the old one
 * get the new one, in place (bpf/flow_ctl.bpf.c, xdp_flow_set_mac):
 * - a router port's own MAC, whenever the maps are written again (a
 *   refresh of `xnat run`, a reload; user/maps.c), in every mode: else the
 *   replies, sent to the new MAC, would fail the hit's check and go up to a
 *   kernel that has never seen xdp mode's connections;
 * - a neighbour's MAC (user/next_hop.c), by `xnat run` in xdp mode, whose
 *   connections are XDP's alone; offload mode gives its entries back to
 *   the kernel instead (offload.c).
 */
#ifndef XNAT_FLOW_MAC_H
#define XNAT_FLOW_MAC_H

#include <linux/types.h>
#include "next_hop.h"

/* The router port (physical port PARENT, VLAN id VID) has NEW_MAC instead
 * of OLD_MAC. Returns how many MACs of entries changed, or -errno. */
long flow_mac_port_changed(__u32 parent, __u16 vid, const __u8 *old_mac,
			   const __u8 *new_mac);

/* For `xnat run` in xdp mode: the router's pinned flow table and ports, and
 * the program. NULL, errno set, if they cannot be had. */
struct flow_mac_watch;
struct flow_mac_watch *flow_mac_open(void);
/* A next_hop_changed_fn, CTX the struct flow_mac_watch. */
void flow_mac_next_hop_changed(void *ctx, const struct next_hop_change *c,
			       int n, bool all);
void flow_mac_close(struct flow_mac_watch *f);

#endif /* XNAT_FLOW_MAC_H */
