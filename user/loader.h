/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Pinning the data path's maps, attaching the XDP program to the router's
 * ports, reloading it without dropping a packet, and detaching it; each
 * step with its undo. Programs attach through
 * libxdp, so xnat can share a port with other XDP programs; where libxdp's
 * dispatcher cannot load (it needs freplace, refused in some namespaces and
 * kernels), libxdp attaches the program directly and xnat then replaces it
 * atomically with XDP_FLAGS_REPLACE on reload.
 */
#ifndef XNAT_LOADER_H
#define XNAT_LOADER_H

#include <net/if.h>
#include "config.h"
#include "pins.h"
#include "plan.h"
#include "port_restore.h"
#include "port_xdp.h"
#include "loader_obj.h"


/* Put OBJ's loaded xdp_xnat_slow into the slot xdp_xnat tail-calls
 * (bpf/maps.h), the program it held into *OLD_FD (-1: none) unless
 * OLD_FD is NULL. 0 or -errno. */
int loader_slow_path_link(struct bpf_object *obj, int *old_fd);

/* Attach (or hitlessly replace) on every port of PLAN: ports without xnat
 * first, then the ones running an older copy. A port running it in
 * another mode than PLAN's (native, generic) is detached and attached
 * anew: the kernel runs one mode at a time. 0, or -errno, printed; on
 * error loader_undo puts every port back as it was. */
int loader_attach(const struct plan *plan, struct loader_undo *u);
/* Every byte of the data path's xnat_port_active MAP to "not known"
 * (bpf/port_active.h), as loader_attach leaves it. 0 or -errno. */
int loader_port_active_clear(const struct bpf_map *map);
/* The identity of the program PLAN loads: this binary's object, the map
 * sizes and the attach mode. Equal identities attach the same program. */
unsigned long long loader_prog_id(const struct plan *plan);
/* Before anything changes: a port of PLAN that runs another XDP program
 * attached directly (not through libxdp's dispatcher) is a config error,
 * -EINVAL with ERR; -errno if the kernel cannot say. */
int loader_check_ports(const struct plan *plan, char err[CONFIG_ERR_LEN]);
/* 1 if every port of PLAN runs xnat's program now. */
int loader_ports_attached(const struct plan *plan);
/* Put back what loader_pin_maps and loader_attach of U changed. */
void loader_undo(struct loader_undo *u);
/* Release U after success (closes the fds of replaced maps). */
void loader_undo_forget(struct loader_undo *u);
/* Detach xnat's program from the ports NAMES (N of them); a port without
 * it is skipped. N < 0: every port of this netns (orphans too). Returns how
 * many were detached, or -errno. */
int loader_detach(char names[][IF_NAMESIZE], int n);

struct attach_info {
	char method[8];     /* "libxdp" (dispatcher) or "legacy" (direct) */
	char mode[8];       /* "native", "generic" */
	unsigned int prog_id;
};
/* What is attached for xnat on IFINDEX; -ENOENT when nothing. */
int loader_attach_info(int ifindex, struct attach_info *info);

#endif /* XNAT_LOADER_H */
