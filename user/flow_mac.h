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
 *   connections are XDP's alone (flow_route.c); offload mode gives its
 *   entries back to the kernel instead (offload.c).
 */
#ifndef XNAT_FLOW_MAC_H
#define XNAT_FLOW_MAC_H

#include <linux/types.h>
#include "next_hop.h"

/* The router port (physical port PARENT, VLAN id VID) has NEW_MAC instead
 * of OLD_MAC. Returns how many MACs of entries changed, or -errno. */
long flow_mac_port_changed(__u32 parent, __u16 vid, const __u8 *old_mac,
			   const __u8 *new_mac);

/* For `xnat run` in xdp mode (flow_route.c): the neighbours of E whose MAC
 * changed, on the router's ports (IFACES_FD, the pinned ports map), in
 * the flow table FLOWS_FD with the flow control program CTL. Returns how
 * many entries changed, or -errno; *SHARED if another neighbour had one's
 * old MAC (only the entries addressed to it directly changed). */
struct flow_ctl_bpf;
long flow_mac_neighbours(int flows_fd, int ifaces_fd, struct flow_ctl_bpf *ctl,
			 const struct next_hop_events *e, bool *shared);

#endif /* XNAT_FLOW_MAC_H */
