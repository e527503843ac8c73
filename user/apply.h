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

#include "kernel_mode.h"
#include "loader.h"
#include "maps.h"
#include "plan.h"
#include "state.h"

/* What one apply changed, step by step, for its undo. apply.c's: callers
 * only pass it from apply_plan to apply_commit or apply_abort. */
struct apply_undo {
	const struct plan *old;
	int nft;                         /* table replaced */
	int n_sysctls;                   /* values before this apply */
	struct kernel_sysctl prior[KERNEL_MAX_SYSCTLS];
	int maps;                        /* maps pinned (and written) */
	struct loader_undo loader;
};

/*
 * Make the router PLAN, from OLD (the running plan, NULL on a first start).
 * ST collects the sysctls' original values for `xnat down`. 0, with U
 * holding the undo until the caller records the state: then apply_commit
 * (recorded) or apply_abort (the record failed: the system goes back to
 * OLD, or to nothing). Or -errno with ERR set and the system back where it
 * was, the connections of every port included (U needs nothing more). The
 * ports PLAN drops go into *DROPPED: their connections are still there,
 * for apply_finish once the apply is recorded.
 */
int apply_plan(const struct plan *plan, const struct plan *old,
	       struct xnat_state *st, struct maps_gone *dropped,
	       struct apply_undo *u, char err[CONFIG_ERR_LEN]);
/* The apply is recorded: release U (the old maps' fds and the like). */
void apply_commit(struct apply_undo *u);
/* Undo everything the apply of U changed, OLD's plan back in place. */
void apply_abort(struct apply_undo *u);

/* After the new state is recorded: end the connections of the ports
 * DROPPED (from apply_plan), detach from OLD's ports that PLAN does not
 * have. Nothing to undo: a failure is only reported. */
void apply_finish(const struct plan *plan, const struct plan *old,
		  const struct maps_gone *dropped);

/* Re-apply what refresh may change on a running router: the maps (WAN
 * address, MTU) and the nft table, without touching the ports. */
int apply_refresh(const struct plan *plan, char err[CONFIG_ERR_LEN]);

#endif /* XNAT_APPLY_H */
