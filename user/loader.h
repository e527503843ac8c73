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
#include "pins.h"
#include "state.h"

#define XNAT_PROG_NAME "xdp_xnat"

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

struct attach_info {
	char method[8];     /* "libxdp" (dispatcher) or "legacy" (direct) */
	char mode[8];       /* "native", "generic" */
	unsigned int prog_id;
};
/* What is attached for xnat on IFINDEX; -ENOENT when nothing. */
int loader_attach_info(int ifindex, struct attach_info *info);

#endif /* XNAT_LOADER_H */
