/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `xnat run` (cmd_run.c) shares with `xnat up` (cmd_up.c): planning
 * a config file and bringing it up under the router's lock.
 */
#ifndef XNAT_CMD_UP_H
#define XNAT_CMD_UP_H

#include "cmd.h"
#include "plan.h"
#include "state.h"

/* How long a command waits for another one's lock, in seconds. */
#define UP_LOCK_WAIT_S 30

/* Parse, resolve and plan PATH: everything that can fail before the
 * system changes. ERR gets "FILE:LINE: ..." for config errors (-EINVAL).
 * On failure PLAN holds nothing to free. */
int up_plan_file(const char *path, int wait_addr, struct plan *plan,
		 char *err);
/* Plan O's config and bring it up (or reload the running router to it),
 * under the lock: EXIT_OK with PLAN, the caller's to free, and in REC
 * (unless NULL) the record as committed, read before the lock is let go;
 * or the exit code once fail() reported why (PLAN then holds nothing). */
int up_locked(const struct opts *o, int wait_addr, struct plan *plan,
	      struct xnat_state *rec);

#endif /* XNAT_CMD_UP_H */
