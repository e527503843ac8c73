/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The plan: everything the router will be, computed from a resolved config
 * and the system's ports before anything changes. `xnat up` builds one,
 * applies it step by step (apply.c) and records the config it came from;
 * a reload that fails puts the previous plan back; `xnat check --print`
 * prints one. Nothing in here touches the system except to read it.
 */
#ifndef XNAT_PLAN_H
#define XNAT_PLAN_H

#include <stdio.h>
#include <net/if.h>
#include "config.h"
#include "kernel_mode.h"

#define PLAN_MAX_PORTS (1 + CONFIG_MAX_LAN)

/* A physical port XDP runs on (a VLAN device's lower port, once). */
struct plan_port {
	char name[IF_NAMESIZE];
	__u32 ifindex;
	enum xdp_attach attach;
};

struct plan_iface {
	__u32 ifindex;
	struct iface_info info;
};

struct plan_vlan {
	struct vlan_key key;
	__u32 ifindex;
};

struct plan_fwd {
	struct fwd_key key;
	struct fwd_value value;
};

struct plan {
	struct config cfg;     /* the resolved config it was built from */
	int xdp;               /* XDP on the ports (else the kernel alone) */
	int n_ports;
	struct plan_port ports[PLAN_MAX_PORTS];
	/* The contents of the maps derived from the config. */
	struct xnat_config config;
	int n_ifaces;
	struct plan_iface ifaces[PLAN_MAX_PORTS];
	int n_tx;
	__u32 tx_ports[PLAN_MAX_PORTS];
	int n_vlans;
	struct plan_vlan vlans[PLAN_MAX_PORTS];
	int n_fwd;
	struct plan_fwd fwd[XNAT_MAX_FORWARDS];
	/* The kernel's part: the nftables transaction and the sysctls. */
	struct kernel_setup kernel;
};

/*
 * Build the plan for CFG (parsed and resolved). Ports XDP cannot serve are
 * refused here. 0, or -errno with ERR set to one line ("FILE:LINE: ..."
 * for what the config can fix: then the error is EINVAL).
 */
int plan_build(const struct config *cfg, struct plan *plan,
	       char err[CONFIG_ERR_LEN]);
/* Release what plan_build allocated; safe on a zeroed plan. */
void plan_free(struct plan *plan);
/* Human-readable: ports, map contents, sysctls, then the nft ruleset. */
void plan_print(const struct plan *plan, FILE *f);
/* Would A and B make the same router? */
int plan_same(const struct plan *a, const struct plan *b);
/* Is PORT (an ifindex) one the plan attaches to? */
int plan_has_port(const struct plan *plan, __u32 ifindex);
/* Do A and B attach to the same interfaces (ifindexes)? Not when a port
 * was deleted and made again under its name. */
int plan_same_ports(const struct plan *a, const struct plan *b);
/* Is every interface A attaches to one B attaches to? */
int plan_ports_within(const struct plan *a, const struct plan *b);

#endif /* XNAT_PLAN_H */
