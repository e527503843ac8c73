/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The config in the data path's maps (maps.c): what the loader writes on
 * every up and reload, and what the bench's microbenchmark uses to set up
 * its ports the way the router does.
 */
#ifndef XNAT_MAPS_H
#define XNAT_MAPS_H

#include <linux/types.h>
#include "config.h"

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
/* The router's addresses on its ports, the source of the ICMP errors XDP
 * sends (ifaddrs.c). */
int maps_sync_ifaddrs(const struct config *cfg);

#endif /* XNAT_MAPS_H */
