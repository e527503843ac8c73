/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's neighbour entries of the next hops XDP sends to, kept as
 * if the kernel sent the traffic itself. The kernel re-checks a neighbour
 * (REACHABLE, then STALE, then a probe when next used) only when its own
 * packets use it; XDP's do not. Without this, the neighbour of a busy
 * connection sits in STALE, a MAC that changed without a gratuitous ARP
 * (a replaced gateway: Linux sends none unless arp_notify is set) is
 * never learnt and the connection sends into the void for as long as it
 * lives, and an unused entry is garbage-collected. Hardware offload
 * drivers do the same for their flows (they poll the flows' last use and
 * call the kernel's neighbour "used" hook).
 *
 * Every NEIGH_KEEPALIVE_MS, a walk of the flow table finds the neighbours
 * (port, VLAN, MAC) that an entry seen since the last round sends to
 * (stopping once every neighbour is found), and each is told "used"
 * (NTF_USE, as `ip neigh ... use` does): the kernel then runs its usual
 * state machine, probes what went STALE, and learns a new MAC, whose event
 * the next-hop watch (next_hop.c) turns into the entries' new MAC (xdp
 * mode, flow_mac.c) or gives the entries back to the kernel (offload
 * mode, offload.c). A walk that does not stop early reads the whole table,
 * which takes time in the number of connections; rounds start at least
 * NEIGH_KEEPALIVE_PACE times as long as the last took apart, so they cost
 * at most 5 % of a CPU however large the table.
 */
#ifndef XNAT_NEIGH_KEEPALIVE_H
#define XNAT_NEIGH_KEEPALIVE_H

#include <stddef.h>
#include "next_hop.h"

#define NEIGH_KEEPALIVE_MS 10000
#define NEIGH_KEEPALIVE_PACE 20

struct neigh_keepalive;

/* For the flow table FLOWS_FD and ports map IFACES_FD (both duplicated:
 * the caller keeps its own); NULL, errno set, if they cannot be. The
 * first round is NEIGH_KEEPALIVE_MS away. */
struct neigh_keepalive *neigh_keepalive_open_maps(int flows_fd, int ifaces_fd);

/* A round, if one is due, for the neighbours the watch W knows: call it
 * every second or so. */
void neigh_keepalive_tick(struct neigh_keepalive *k, struct next_hop_watch *w);

/* A round now, for the entries seen since SINCE_NS (CLOCK_MONOTONIC):
 * how many neighbours the kernel was told are used, or -errno if the flow
 * table could not be read. */
int neigh_keepalive_round(struct neigh_keepalive *k, struct next_hop_watch *w,
			  __u64 since_ns);
/* How many flow entries the last round read: fewer than the table holds
 * when it stopped once every neighbour's MAC was found used. */
size_t neigh_keepalive_walked(const struct neigh_keepalive *k);

void neigh_keepalive_close(struct neigh_keepalive *k);

#endif /* XNAT_NEIGH_KEEPALIVE_H */
