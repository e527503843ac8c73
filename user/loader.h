/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Loading the XDP object, attaching it to the router's ports, reloading it
 * without dropping a packet, and detaching it. Programs attach through
 * libxdp, so xnat can share a port with other XDP programs; where libxdp's
 * dispatcher cannot load (it needs freplace, refused in some namespaces and
 * kernels), libxdp attaches the program directly and xnat then replaces it
 * atomically with XDP_FLAGS_REPLACE on reload.
 */
#ifndef XNAT_LOADER_H
#define XNAT_LOADER_H

#include "config.h"
#include "state.h"

#define XNAT_PROG_NAME "xdp_xnat"

/* Names of the maps, as pinned. One place, used by every command. */
#define MAP_FLOWS    "xnat_flows"
#define MAP_CONFIG   "xnat_config"
#define MAP_IFACES   "xnat_ifaces"
#define MAP_TX_PORTS "xnat_tx_ports"
#define MAP_FORWARDS "xnat_forwards"
#define MAP_STATS    "xnat_stats"
#define MAP_VLANS    "xnat_vlans"
#define MAP_MAPPINGS "xnat_mappings"
#define MAP_PORTS    "xnat_ports"
#define MAP_EDM      "xnat_edm_ports"
#define MAP_HOSTS    "xnat_hosts"
#define MAP_POOL     "xnat_pool"
#define MAP_POOL_REV "xnat_pool_rev"

/* Attach (or hitlessly replace) on every port of CFG, then sync the maps;
 * detach from ports of ST that CFG no longer names. 0, or -errno with a
 * message printed. */
int loader_up(const struct config *cfg, struct xnat_state *st);
/* Can CFG be loaded next to what is pinned here (sizes, layouts)? Checked
 * before anything changes; ERR gets one line. */
int loader_check(const struct config *cfg, char err[CONFIG_ERR_LEN]);
/* Detach from the ports named in ST and unpin the maps. */
int loader_down(const struct xnat_state *st);
/* Detach only: the ports named in ST. */
int loader_down_ports(const struct xnat_state *st);
/* Open a pinned map of the router in this netns; -errno if not up. */
int loader_map_fd(const char *name);

struct attach_info {
	char method[8];     /* "libxdp" (dispatcher) or "legacy" (direct) */
	char mode[8];       /* "native", "generic" */
	unsigned int prog_id;
};
/* What is attached for xnat on IFINDEX; -ENOENT when nothing. */
int loader_attach_info(int ifindex, struct attach_info *info);

/*
 * One port NAME (IFINDEX) into the ifaces, tx_ports and vlans maps (FDS, in
 * that order): its own entry, what the kernel routes with; for a VLAN
 * device also the physical port under it, where XDP runs and frames are
 * sent, and the (port, VLAN id) -> device entry.
 */
int maps_put_port(const int fds[3], const char *name, __u32 ifindex,
		  enum xnat_role role);
/* Write CFG into the config, ports and forwards maps (also on reload). */
int maps_sync(const struct config *cfg);

#endif /* XNAT_LOADER_H */
