/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `xnat run` in xdp mode follows what its connections were routed with.
 * xdp mode's connections are XDP's alone, so nothing gives them back to
 * the kernel: when a neighbour's MAC changes, the entries sending to it
 * get the new one (flow_mac.c); when a route changes, each connection
 * whose destination it covers is routed again (bpf/flow_ctl.bpf.c,
 * xdp_flow_reroute):
 * - the same next hop: nothing;
 * - another next hop on the same port (a gateway failover, a new default
 *   route): the entry sends to it from then on;
 * - another next hop whose MAC the kernel does not know yet: the kernel is
 *   asked to resolve it, and the connection is routed again every half
 *   second, for up to FLOW_ROUTE_WAIT_MS; the entry keeps its old next hop
 *   meanwhile, and the connection ends if the new one never answers;
 * - no route any more, or out of another port: the connection ends, and
 *   its next packet is routed as a new flow's (by the kernel, with its own
 *   NAT, if XDP cannot carry it).
 */
#ifndef XNAT_FLOW_ROUTE_H
#define XNAT_FLOW_ROUTE_H

#include "next_hop.h"

/* How long a connection waits for its new next hop to be resolved (the
 * kernel gives up on an address after 3 probes a second apart). */
#define FLOW_ROUTE_WAIT_MS 4000

struct flow_route_watch;

/* On the router's pinned flow table and ports. NULL, errno set, if they
 * cannot be had. */
struct flow_route_watch *flow_route_open(void);

/* The flow table and ports map F holds, for the watches that run beside
 * it (next_hop_watch_ports(), neigh_keepalive_open_maps()); valid until
 * flow_route_close(F). */
int flow_route_flows_fd(const struct flow_route_watch *f);
int flow_route_ports_fd(const struct flow_route_watch *f);
/* A next_hop_changed_fn, CTX the struct flow_route_watch. */
void flow_route_next_hop_changed(void *ctx, const struct next_hop_events *e);
/* Route again the connections waiting for a next hop, when it is time;
 * at the first call, every connection (routes may have changed while no
 * watch ran). */
void flow_route_tick(struct flow_route_watch *f);
void flow_route_close(struct flow_route_watch *f);

#endif /* XNAT_FLOW_ROUTE_H */
