/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Applying a plan to the system, one step at a time, each with its undo:
 * the nftables table, the sysctls, the maps (pinned and filled), the XDP
 * ports. On a failure every step already done is undone in reverse, back to
 * the old plan on a reload and to nothing on a first start. Recording the
 * state is the caller's last step (cmd_up.c).
 */
#ifndef XNAT_APPLY_H
#define XNAT_APPLY_H

#include "maps.h"
#include "plan.h"
#include "state.h"

/*
 * Make the router PLAN, from OLD (the running plan, NULL on a first start).
 * ST collects the sysctls' original values for `xnat down`. 0, or -errno
 * with ERR set and the system back where it was, the connections of every
 * port included. The ports PLAN drops go into *DROPPED: their connections
 * are still there, for apply_finish.
 */
int apply_plan(const struct plan *plan, const struct plan *old,
	       struct xnat_state *st, struct maps_gone *dropped,
	       char err[CONFIG_ERR_LEN]);

/* After the new state is recorded: end the connections of the ports
 * DROPPED (from apply_plan), detach from OLD's ports that PLAN does not
 * have. Nothing to undo: a failure is only reported. */
void apply_finish(const struct plan *plan, const struct plan *old,
		  const struct maps_gone *dropped);

/* Re-apply what refresh may change on a running router: the maps (WAN
 * address, MTU) and the nft table, without touching the ports. */
int apply_refresh(const struct plan *plan, char err[CONFIG_ERR_LEN]);

#endif /* XNAT_APPLY_H */
