/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the flows XDP carries were routed with, watched for `xnat run`: the
 * neighbours' MACs as the kernel last knew them, so that a MAC that
 * changed (a replaced gateway, a failover, an address moved to another
 * host) is told apart from the neighbour table's routine state changes;
 * and route changes. A flow entry keeps the next hop's MAC and the egress
 * port it was built with, which nothing on the fast path looks at again.
 */
#ifndef XNAT_NEXT_HOP_H
#define XNAT_NEXT_HOP_H

#include <stdbool.h>
#include <linux/types.h>

/* A neighbour whose MAC changed. */
struct next_hop_change {
	int ifindex;     /* the port it is on */
	__u8 family;     /* AF_INET or AF_INET6 */
	__u8 addr[16];   /* its address (IPv4: the first 4 bytes) */
	__u8 old_mac[6];
	__u8 new_mac[6];
	/* Another neighbour of the port and family still has OLD_MAC (an
	 * address moved away from a host that keeps its own, a proxy): not
	 * every frame to OLD_MAC was this neighbour's. */
	bool shared;
};

/* Changes one call of the callback carries at most. */
#define NEXT_HOP_BATCH 64

/*
 * Called once for all that next_hop_watch_read() found: C[N], the
 * neighbours whose MAC changed (N may be 0); ALL when, besides them, a
 * route changed, more neighbours changed than NEXT_HOP_BATCH, or events
 * were lost: every next hop may have changed. One call, one walk of the
 * flow table, however many events came: a LAN host flipping the MACs of
 * many addresses costs the daemon a walk per read, not one per packet.
 */
typedef void next_hop_changed_fn(void *ctx, const struct next_hop_change *c,
				 int n, bool all);

struct next_hop_watch;

/* Subscribe to neighbour and route events and read the neighbour table
 * once. NULL, errno set, if the kernel could not be asked. */
struct next_hop_watch *next_hop_watch_open(next_hop_changed_fn *cb, void *ctx);
/* The socket to poll for events. */
int next_hop_watch_fd(const struct next_hop_watch *w);
/* Read what has arrived (non-blocking); then, if anything changed, call
 * the callback once. */
void next_hop_watch_read(struct next_hop_watch *w);
void next_hop_watch_close(struct next_hop_watch *w);

#endif /* XNAT_NEXT_HOP_H */
