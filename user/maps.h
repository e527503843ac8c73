/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Writing a plan's contents into the data path's pinned maps, and removing
 * the flow state that a change of the router made wrong (a port that is
 * gone, a WAN address that changed). The maps must exist (loader.c pins
 * them); nothing here loads or attaches programs.
 */
#ifndef XNAT_MAPS_H
#define XNAT_MAPS_H

#include <linux/types.h>
#include "plan.h"

/*
 * Make the config-derived maps (config, ifaces, tx_ports, vlans, forwards)
 * hold exactly PLAN: entries are updated in place and only stale keys are
 * removed, so an entry that stays is never missing, not even for a moment.
 * The config entry goes last: its NAT address is what turns NAT on.
 * The connections through a transmit port PLAN does not have (dropped,
 * or deleted and made again under its name) end as their timeout would:
 * the kernel carries them from then on. 0, or -errno with a message
 * printed.
 */
int maps_write(const struct plan *plan);

/* Ports a write dropped, as flow entries name them: physical port and
 * VLAN id (struct iface_info's parent and vid). */
struct maps_gone {
	int n;
	struct {
		__u32 parent;
		__u16 vid;
	} p[XNAT_MAX_IFACES];
};
/* maps_write, but the connections of the ports it drops stay: they are
 * put into *DROPPED, for maps_end_dropped once the reload can no longer
 * fail (a failed one puts the ports back, and ended connections could not
 * come back with them). */
int maps_write_keep(const struct plan *plan, struct maps_gone *dropped);
/* End the connections through the ports in DROPPED (see maps_write). */
void maps_end_dropped(const struct maps_gone *dropped);
/* The router's addresses on its ports, the source of the ICMP errors XDP
 * sends (ifaddrs.c). */
int maps_sync_ifaddrs(const struct config *cfg);

/* Remove every NATed flow and mapping made with the address OLD (network
 * order): after the WAN address changed, they lead nowhere. */
int maps_flush_nat_addr(__u32 old);

/*
 * One port NAME (IFINDEX) into the ifaces, tx_ports and vlans maps (FDS, in
 * that order), as plan_build computes it. For tools that fill maps of
 * their own (the microbenchmark).
 */
int maps_put_port(const int fds[3], const char *name, __u32 ifindex,
		  enum xnat_role role);

#endif /* XNAT_MAPS_H */
