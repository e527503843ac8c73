/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the flows XDP carries were routed with, watched for `xnat run`: the
 * neighbours' MACs as the kernel last knew them, so that a MAC that
 * changed (a replaced gateway, a failover, an address moved to another
 * host) is told apart from the neighbour table's routine state changes;
 * and route changes, by the destinations they cover. A flow entry keeps the next hop's MAC and the egress
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

/* A route added, changed or removed: the destinations whose next hop it
 * may have changed are those it covers, DST/DST_LEN. */
struct route_change {
	__u8 family;  /* AF_INET or AF_INET6 */
	__u8 dst_len;
	__u8 dst[16]; /* IPv4: the first 4 bytes */
};

/* Changes of each kind one call of the callback carries at most. */
#define NEXT_HOP_BATCH 64

/* What one read found. */
struct next_hop_events {
	const struct next_hop_change *neighs; /* MACs that changed */
	int n_neighs;
	const struct route_change *routes;
	int n_routes;
	/* Besides them, more changes than NEXT_HOP_BATCH, a policy rule or
	 * a nexthop object changed, a router port went up or down (any
	 * link, without next_hop_watch_ports()), or events were lost: every
	 * next hop may have changed. */
	bool all;
	/* Among them, a port went up or down (or was removed), which
	 * changes IPv4 routes without a route event. */
	bool link;
};

/*
 * Called once for all that next_hop_watch_read() found. One call, one
 * walk of the flow table, however many events came: a LAN host flipping
 * the MACs of many addresses, or a routing daemon's updates, cost the
 * daemon a walk per read, not one per event.
 */
typedef void next_hop_changed_fn(void *ctx, const struct next_hop_events *e);

/* What E says changed, for a log line: "a port went up or down", "any
 * destination" or "some destinations". */
const char *next_hop_routes_what(const struct next_hop_events *e);
/* Might E have changed the next hop towards ADDR (family AF_INET or
 * AF_INET6, IPv4 in the first 4 bytes)? */
bool next_hop_route_changed(const struct next_hop_events *e, int family,
			    const void *addr);

/* Have the kernel resolve the neighbour ADDR on IFINDEX (as if a packet
 * were sent to it), so that a route through it can be used. 0 or -errno. */
int next_hop_resolve(int ifindex, int family, const void *addr);

struct next_hop_watch;

/* A neighbour as the watch last knew it (struct next_hop_change's
 * fields). */
typedef void next_hop_neigh_fn(void *ctx, int ifindex, int family,
			       const __u8 *addr, const __u8 *mac);

/* Call FN for every neighbour with a MAC the watch has seen, in no
 * particular order. */
void next_hop_each_neighbour(struct next_hop_watch *w, next_hop_neigh_fn *fn,
			     void *ctx);

/* Subscribe to neighbour and route events and read the neighbour table
 * once. NULL, errno set, if the kernel could not be asked. */
struct next_hop_watch *next_hop_watch_open(next_hop_changed_fn *cb, void *ctx);
/* Count the state changes of the router's ports only (the keys of the
 * ports map PORTS_FD, xnat_ifaces; the caller keeps it open while the
 * watch runs) as changes of every route, not those of every link: XDP's
 * flows leave by the router's ports alone, whose routes another link's
 * state leaves as they are; and a host whose containers come and go
 * would otherwise have every connection routed again each time. */
void next_hop_watch_ports(struct next_hop_watch *w, int ports_fd);

/* The socket to poll for events. */
int next_hop_watch_fd(const struct next_hop_watch *w);
/* Read what has arrived (non-blocking); then, if anything changed, call
 * the callback once. Call it every few hundred ms even without events:
 * route changes are paced (at least NEXT_HOP_ROUTE_PACE_MS apart) and may
 * be waiting for their turn. */
#define NEXT_HOP_ROUTE_PACE_MS 1000
void next_hop_watch_read(struct next_hop_watch *w);
void next_hop_watch_close(struct next_hop_watch *w);

#endif /* XNAT_NEXT_HOP_H */
