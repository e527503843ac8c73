/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's part of the router, in both modes: sysctls (forwarding, the
 * local port range) and one nftables table "xnat" with masquerade, the port
 * forwards as DNAT and a forward filter that lets no unsolicited WAN traffic
 * into the LAN. In kernel mode this is the whole router; in xdp mode it
 * handles what XDP passes up, with NAT ports disjoint from the XDP range.
 */
#ifndef XNAT_KERNEL_MODE_H
#define XNAT_KERNEL_MODE_H

#include "config.h"
#include "state.h"

/* Replace the table atomically (one nft transaction); ERR on failure. */
int kernel_apply(const struct config *cfg, struct xnat_state *st,
		 char err[CONFIG_ERR_LEN]);
/* The nft transaction kernel_apply() runs for CFG (resolved), as text
 * for `nft -f`; malloc'ed. NULL with ERR set on failure. */
char *kernel_ruleset(const struct config *cfg, char err[CONFIG_ERR_LEN]);
/* Check CMDS against the kernel without committing anything (nft -c). */
int kernel_ruleset_check(const char *cmds, char err[CONFIG_ERR_LEN]);
/* Delete the table and restore sysctls; missing table is not an error. */
int kernel_remove(struct xnat_state *st);

#endif /* XNAT_KERNEL_MODE_H */
