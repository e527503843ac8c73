/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * xdp mode under `xnat run`: when a neighbour of a router port changes its
 * MAC (user/next_hop.c), the flow entries that sent to it get the new one,
 * in place (bpf/flow_ctl.bpf.c). xdp mode's connections are XDP's alone, so
 * they are mended where they are; offload mode gives its entries back to
 * the kernel instead (offload.c).
 */
#ifndef XNAT_FLOW_NEXT_HOP_H
#define XNAT_FLOW_NEXT_HOP_H

#include "next_hop.h"

struct flow_next_hop;

/* On the router's pinned flow table and ports. NULL, errno set, if they or
 * the program cannot be had. */
struct flow_next_hop *flow_next_hop_open(void);
/* A next_hop_changed_fn, CTX the struct flow_next_hop. */
void flow_next_hop_changed(void *ctx, const struct next_hop_change *c);
void flow_next_hop_close(struct flow_next_hop *f);

#endif /* XNAT_FLOW_NEXT_HOP_H */
