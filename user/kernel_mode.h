/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's part of the router, in both modes: sysctls (forwarding, the
 * local port range, conntrack timeouts) and one nftables table "xnat" with
 * masquerade, the port forwards as DNAT and a forward filter that lets no
 * unsolicited WAN traffic into the LAN. In kernel mode this is the whole
 * router; in xdp mode it handles what XDP passes up, with NAT ports
 * disjoint from the XDP range.
 */
#ifndef XNAT_KERNEL_MODE_H
#define XNAT_KERNEL_MODE_H

#include "config.h"

#define KERNEL_MAX_SYSCTLS 24

struct kernel_sysctl {
	char path[96];   /* under /proc/sys */
	char value[64];
	int optional;    /* a kernel without it is not an error */
};

/* What the kernel will be: computed by kernel_plan, applied by apply.c. */
struct kernel_setup {
	/* The nftables transaction that replaces table inet xnat. */
	char *nft;
	/* In order: forwarding is last, so nothing is forwarded before the
	 * rules and the port split are in place. */
	int n_sysctls;
	struct kernel_sysctl sysctls[KERNEL_MAX_SYSCTLS];
};

/* Fill K (ruleset text, sysctls) for CFG; ERR on failure. The caller
 * frees K->nft. */
int kernel_plan(const struct config *cfg, struct kernel_setup *k,
		char err[CONFIG_ERR_LEN]);
/* The nft transaction for CFG (resolved), as text for `nft -f`; malloc'ed.
 * NULL with ERR set on failure. plan_build uses it. */
char *kernel_ruleset(const struct config *cfg, char err[CONFIG_ERR_LEN]);
/* Check CMDS against the kernel without committing anything (nft -c). */
int kernel_ruleset_check(const char *cmds, char err[CONFIG_ERR_LEN]);
/* Replace the table with RULESET in one nft transaction; ERR on failure. */
int kernel_nft_apply(const char *ruleset, char err[CONFIG_ERR_LEN]);
/* Delete the table; a missing table is not an error. 0, or -errno with
 * nft's message in ERR (the caller reports it). */
int kernel_nft_remove(char err[CONFIG_ERR_LEN]);
/* 1 if table inet xnat exists (`nft flush ruleset` removes it). */
int kernel_table_present(void);

#endif /* XNAT_KERNEL_MODE_H */
