// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat up and down. `up` is one pipeline: parse -> resolve against the
 * system -> plan (plan.c) -> apply, each step with its undo (apply.c) ->
 * record the state last. A first `up` that fails leaves nothing; a reload
 * that fails puts back the running plan, rebuilt from the config recorded
 * when it was applied (not from the operator's file, which may have been
 * edited since; without its LAN ports that are gone since), and exits 2
 * saying so. A mode switch restarts the router in the new mode, and so
 * does a reload whose running config cannot be rebuilt at all; if that
 * fails, the running plan goes back in its own mode, restarted too, or,
 * with none, the router is left down and the command says so. Commands
 * that change the router hold its lock (state_lock), so `xnat run`'s
 * refresh (cmd_run.c) never races an `up`.
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apply.h"
#include "cmd.h"
#include "cmd_up.h"
#include "config.h"
#include "kernel_mode.h"
#include "loader.h"
#include "log.h"
#include "maps.h"
#include "pins.h"
#include "plan.h"
#include "state.h"

static const char *mode_name(int mode)
{
	return config_mode_name(mode);
}

/* Plan the resolved CFG. */
static int plan_resolved(struct config *cfg, struct plan *plan, char *err)
{
	int ret = plan_build(cfg, plan, err);

	/* A built plan holds its nft ruleset: a refused one frees it, or
	 * each refused SIGHUP would leak one. */
	if (!ret && plan->xdp && (ret = loader_check(plan, err)))
		plan_free(plan);
	return ret;
}

int up_plan_file(const char *path, int wait_addr, struct plan *plan,
		 char *err)
{
	struct config cfg;

	memset(plan, 0, sizeof(*plan));
	config_init(&cfg);
	if (config_parse(&cfg, path, err))
		return -EINVAL;
	cfg.nat_addr_wait = wait_addr;
	if (config_resolve(&cfg, err))
		return -EINVAL;
	return plan_resolved(&cfg, plan, err);
}

/* A take-down goes on past a failure: ERR keeps the first (RET, said as
 * FMT), and that is what is returned. */
__attribute__((format(printf, 4, 5)))
static int first_failure(int first, int ret, char *err, const char *fmt, ...)
{
	va_list ap;

	if (first || ret >= 0)
		return first;
	va_start(ap, fmt);
	vsnprintf(err, CONFIG_ERR_LEN, fmt, ap);
	va_end(ap);
	return ret;
}

/*
 * Everything xnat may have set up here, recorded in ST or not: XDP on any
 * port of this netns (an orphan of a crashed `up` too), pins, the nft
 * table, the sysctls. Every step is tried; 0, or the first step's -errno
 * with ERR saying what could not be removed. The record, its directory
 * and the lock stay: a mode switch goes on under the lock it holds, and
 * commits over the record.
 */
static int take_down_router(struct xnat_state *st, char *err)
{
	char nft[CONFIG_ERR_LEN];
	int ret, first;

	ret = loader_detach(NULL, -1);
	first = first_failure(0, ret, err, "could not detach XDP from every "
			      "port: %s", strerror(-ret));
	ret = loader_unpin();
	first = first_failure(first, ret, err, "could not unpin the maps in "
			      "%s: %s", pins_dir(), strerror(-ret));
	ret = kernel_nft_remove(nft);
	if (ret && first)
		pr_warn("Failed to delete table inet xnat: %s\n", nft);
	first = first_failure(first, ret, err, "could not remove the nft "
			      "table inet xnat: %s", nft);
	/* What could not be restored stays in ST (state_sysctl_restore). */
	ret = state_sysctl_restore(st);
	first = first_failure(first, ret, err, "could not restore sysctl %s to "
			      "%s: %s", st->sysctls[0].path,
			      st->sysctls[0].value, strerror(-ret));
	return first;
}

/*
 * The router and its record, lock file included: the last step of a
 * command that ends the router, before it unlocks (state_remove()).
 * When something could not be removed (-errno, ERR as take_down_router
 * says) the record and the lock file stay: `status` still shows a router
 * that is not wholly gone, and a second `down` reads the same record
 * (the sysctls' values from before xnat among it) and tries again; what
 * is gone already it just does not find.
 */
static int take_down(struct xnat_state *st, char *err)
{
	int ret = take_down_router(st, err);

	if (!ret)
		state_remove();
	return ret;
}

/*
 * The running router's plan, from the config recorded when it was
 * applied: what a reload applies over and goes back to. A LAN port of it
 * that is gone (deleted since: an adapter unplugged) took its XDP program
 * with it, and the router runs the rest of the config: that is its plan,
 * and GONE names those ports (none: GONE->n is 0). -errno with
 * ERR if it cannot be rebuilt even so (its WAN gone, a copy this binary
 * cannot read): then there is nothing to reload in place nor to go back
 * to. As up_plan_file(), parsed once and waiting for a WAN address.
 */
static int running_plan(struct plan *old, struct config_gone *gone,
			char *err)
{
	char say[CONFIG_ERR_LEN];
	struct config cfg;

	memset(old, 0, sizeof(*old));
	gone->n = 0;
	config_init(&cfg);
	if (config_parse(&cfg, state_applied_config(), err))
		return -EINVAL;
	cfg.nat_addr_wait = 1;
	if (config_resolve_running(&cfg, gone, err) ||
	    plan_resolved(&cfg, old, err)) {
		gone->n = 0;
		return -EINVAL;
	}
	if (gone->n)
		pr_warn("xnat: %s\n", config_gone_say(gone, false, say));
	return 0;
}

/*
 * Record PLAN as applied: the record (its generation is what `xnat run`
 * follows) is the commit point; applied.ini, staged before it, is
 * published after it. On failure nothing of the record changed: a
 * publish that fails puts the record BEFORE (NULL: none, a first up,
 * whose caller removes it) back. 0 or -errno.
 */
static int commit(struct xnat_state *st, const struct plan *plan,
		  const struct xnat_state *before)
{
	int ret;

	st->mode = plan->cfg.mode;
	/* No BEFORE: a router started anew, on maps of its own (a first up,
	 * whose generations count from 1 again; a restart in place). */
	if (!before)
		st->instance = state_new_instance();
	st->generation++;
	st->prog_hash = plan->xdp ? loader_prog_id(plan) : 0;
	st->n_ifaces = 0;
	for (int i = 0; i < plan->n_ports; i++)
		snprintf(st->ifaces[st->n_ifaces++], IF_NAMESIZE, "%s",
			 plan->ports[i].name);
	ret = state_stage_config(plan->cfg.path);
	if (ret)
		return ret;
	st->config_hash = state_staged_hash();
	ret = state_save(st);
	if (ret) {
		state_discard_config();
		return ret;
	}
	ret = state_publish_config();
	if (ret && before && state_save(before))
		pr_warn("xnat: could not put the previous record back in %s\n",
			state_run_dir());
	return ret;
}

/* ", without lan1 (gone)" in BUF (CONFIG_ERR_LEN) for the running
 * config's ports that are gone (running_plan()), or "". */
static const char *without_gone(const struct config_gone *gone, char *buf)
{
	char list[CONFIG_GONE_LEN];

	buf[0] = 0;
	if (gone && gone->n)
		snprintf(buf, CONFIG_ERR_LEN, ", without %s (gone)",
			 config_gone_list(gone, list));
	return buf;
}

/* GONE: the running config's ports that are gone (running_plan()). */
static int reload_failed(const struct opts *o, const struct xnat_state *st,
			 const char *err, const struct config_gone *gone)
{
	char without[CONFIG_ERR_LEN];

	return fail(o, EXIT_SYSTEM, "%s; rolled back: the router runs %s as "
		    "before%s", err, st->config_path,
		    without_gone(gone, without));
}

/* A router started anew (ERR failed it) is taken down again, and the
 * command says what is left: DOWN, when all of it is gone. */
static int up_failed(const struct opts *o, struct xnat_state *st,
		     const char *err, const char *down)
{
	char left[CONFIG_ERR_LEN];

	if (take_down(st, left))
		return fail(o, EXIT_SYSTEM, "%s; undoing it, %s (the rest is "
			    "down; `xnat down` tries again)", err, left);
	return fail(o, EXIT_SYSTEM, "%s; %s", err, down);
}

#define NOTHING_LEFT "nothing was left applied"

static void up_done(const struct plan *plan, const struct plan *old)
{
	pr_info("xnat %s in %s mode on %s (+%d LAN)\n", old ? "reloaded" : "up",
		mode_name(plan->cfg.mode), plan->cfg.wan.name, plan->cfg.n_lan);
}

/*
 * Apply PLAN over what runs (ST, OLD; NULL: a router started anew) and
 * record it. 0; or -errno with ERR, the apply undone (back to OLD, or to
 * nothing: the caller takes down what the undo could not) and, on a
 * reload, ST as it was. The caller holds the lock.
 */
static int apply_record(const struct plan *plan, struct xnat_state *st,
			const struct plan *old, char *err)
{
	struct xnat_state before = *st;
	struct maps_gone dropped;
	struct apply_undo undo;
	int ret;

	/* Applied again from the applied copy (reapply(), a failed mode
	 * switch), the router still runs the operator's file as recorded:
	 * status names it. */
	if (!st->config_path[0] ||
	    strcmp(plan->cfg.path, state_applied_config()))
		if (!realpath(plan->cfg.path, st->config_path))
			snprintf(st->config_path, sizeof(st->config_path),
				 "%s", plan->cfg.path);
	ret = apply_plan(plan, old, st, &dropped, &undo, err);
	if (!ret && (ret = commit(st, plan, old ? &before : NULL))) {
		snprintf(err, CONFIG_ERR_LEN, "failed to save state in %s: %s",
			 state_run_dir(), strerror(-ret));
		/* Unrecorded, the apply must not stay: the old plan back. */
		apply_abort(&undo);
	} else if (!ret) {
		apply_commit(&undo);
		apply_finish(plan, old, &dropped);
	}
	if (ret && old)
		*st = before;
	return ret;
}

/* GONE: as reload_failed()'s. */
static int apply_and_commit(const struct opts *o, const struct plan *plan,
			    struct xnat_state *st, const struct plan *old,
			    const struct config_gone *gone)
{
	char err[CONFIG_ERR_LEN];

	if (!apply_record(plan, st, old, err)) {
		up_done(plan, old);
		return EXIT_OK;
	}
	return old ? reload_failed(o, st, err, gone) :
		     up_failed(o, st, err, NOTHING_LEFT);
}

/*
 * ST for a router started anew in place (restart()). The generation goes
 * on, as it only grows while the router is up (commit() draws a new
 * instance). So do the sysctls still remembered, with their values from
 * before xnat: one a take-down could not write back.
 */
static void state_restart(struct xnat_state *st)
{
	struct xnat_state keep = *st;

	memset(st, 0, sizeof(*st));
	st->generation = keep.generation;
	st->n_sysctls = keep.n_sysctls;
	memcpy(st->sysctls, keep.sysctls, sizeof(st->sysctls));
}

/*
 * The switch to another mode failed (ERR), the old mode already taken
 * down: apply OLD, the running config that PREV recorded, again as a
 * fresh start and commit it (the generation still grows). Its flows are
 * gone, but the router runs what it ran, in its mode (without the ports
 * GONE names, as before). Only if that fails too is everything taken
 * down, and said so.
 */
static int switch_back(const struct opts *o, const struct plan *old,
		       const struct config_gone *gone,
		       const struct xnat_state *prev, struct xnat_state *st,
		       const char *err)
{
	char again[CONFIG_ERR_LEN], both[2048], without[CONFIG_ERR_LEN];

	/* The failed apply's undo put its sysctls back; forget them (all
	 * but one it could not write back), or the old mode's record would
	 * keep the new mode's and `down` write them again, over whatever
	 * the operator set since. */
	state_sysctl_restore(st);
	state_restart(st);
	snprintf(st->config_path, sizeof(st->config_path), "%s",
		 prev->config_path);
	if (!apply_record(old, st, NULL, again))
		return fail(o, EXIT_SYSTEM, "%s; rolled back: the router runs "
			    "%s in %s mode again%s (its connections were "
			    "reset)", err, prev->config_path,
			    mode_name(prev->mode), without_gone(gone, without));
	snprintf(both, sizeof(both), "%s; rolling back to %s in %s mode "
		 "failed too: %s", err, prev->config_path,
		 mode_name(prev->mode), again);
	return up_failed(o, st, both, NOTHING_LEFT);
}

/*
 * Start PLAN anew in place: the lock stays ours until the commit, which
 * writes over the old record (ST). For a mode switch, which cannot be
 * hitless (the flows of one mode mean nothing to the other), and for a
 * reload whose running config cannot be rebuilt: without it apply_plan()
 * can neither reload in place nor go back. OLD, the running plan (NULL:
 * none), was rebuilt while its record was whole (without the ports GONE
 * names), so that a PLAN that fails puts it back in its mode
 * (switch_back()); without it the router is left down, and the command
 * says so.
 */
static int restart(const struct opts *o, const struct plan *plan,
		   struct xnat_state *st, const struct plan *old,
		   const struct config_gone *gone)
{
	char err[CONFIG_ERR_LEN + 64], down[CONFIG_ERR_LEN];
	struct xnat_state prev = *st;

	if (prev.mode != (int)plan->cfg.mode)
		pr_info("Switching from %s to %s mode: restarting\n",
			mode_name(prev.mode), mode_name(plan->cfg.mode));
	else
		pr_info("Restarting in %s mode\n", mode_name(prev.mode));
	if (take_down_router(st, down)) {
		/* Not a clean start: go no further than the old mode. */
		snprintf(err, sizeof(err), "taking %s mode down: %s",
			 mode_name(prev.mode), down);
	} else {
		state_restart(st);
		if (!apply_record(plan, st, NULL, err)) {
			up_done(plan, NULL);
			return EXIT_OK;
		}
	}
	if (old)
		return switch_back(o, old, gone, &prev, st, err);
	return up_failed(o, st, err, "the router is down: its running config "
			 "could not be rebuilt, so there was none to go back "
			 "to");
}

/* With the lock held: bring PLAN up, or reload the running router to it. */
static int bring_up(const struct opts *o, const struct plan *plan)
{
	char err[CONFIG_ERR_LEN];
	struct config_gone gone;
	struct xnat_state st;
	struct plan old;
	int rc;

	/* Not up: ST is all zero. */
	if (state_load(&st))
		return apply_and_commit(o, plan, &st, NULL, NULL);
	if (running_plan(&old, &gone, err)) {
		pr_warn("xnat: cannot rebuild the running config (%s): "
			"restarting the router with the new one; if that "
			"fails, it is left down\n", err);
		return restart(o, plan, &st, NULL, NULL);
	}
	if (st.mode != (int)plan->cfg.mode)
		rc = restart(o, plan, &st, &old, &gone);
	else
		rc = apply_and_commit(o, plan, &st, &old, &gone);
	plan_free(&old);
	return rc;
}

/*
 * The signals that end a command (SIGINT: Ctrl-C, SIGTERM, SIGHUP,
 * SIGQUIT) are held (blocked) from the moment the lock is ours until the
 * command has committed or rolled back and let go of it (lock_release()).
 * Delivered in between, one would stop an apply between two steps: some
 * ports attached, the sysctls' values from before xnat only in memory, a
 * router neither old nor new, with no record of it. Held, it takes its
 * usual effect once the mask is restored, on a router wholly in one state.
 * `xnat run` (cmd_run.c) catches them: its handler then runs after the
 * apply, and its event wait, which runs unlocked, is woken as before.
 */
static int lock_or_fail(const struct opts *o, sigset_t *saved)
{
	int fd = state_lock(UP_LOCK_WAIT_S);
	sigset_t hold;

	if (fd < 0) {
		fail(o, EXIT_SYSTEM, "failed to lock %s/lock: %s",
		     state_run_dir(), fd == -EWOULDBLOCK ?
		     "another xnat command holds it" : strerror(-fd));
		return fd;
	}
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGHUP);
	sigaddset(&hold, SIGQUIT);
	sigprocmask(SIG_BLOCK, &hold, saved);
	return fd;
}

/* Unlock, then let a held signal through (lock_or_fail()). */
static void lock_release(int fd, const sigset_t *saved)
{
	state_unlock(fd);
	sigprocmask(SIG_SETMASK, saved, NULL);
}

int up_locked(const struct opts *o, int wait_addr, struct plan *plan,
	      struct xnat_state *rec)
{
	char err[CONFIG_ERR_LEN];
	int lock, rc, ret;
	sigset_t saved;

	if (!o->config)
		return fail(o, EXIT_USAGE, "missing -c FILE");
	ret = up_plan_file(o->config, wait_addr, plan, err);
	/* The new config's ports only: the running plan's run xnat. */
	if (!ret && plan->xdp && (ret = loader_check_ports(plan, err)))
		plan_free(plan);
	if (ret)
		return fail(o, ret == -EINVAL ? EXIT_USAGE : EXIT_SYSTEM, "%s",
			    err);
	lock = lock_or_fail(o, &saved);
	if (lock < 0) {
		plan_free(plan);
		return EXIT_SYSTEM;
	}
	rc = bring_up(o, plan);
	/* Read before the lock goes: after it, another command may commit. */
	if (!rc && rec && state_load(rec))
		memset(rec, 0, sizeof(*rec));
	lock_release(lock, &saved);
	if (rc)
		plan_free(plan);
	return rc;
}

int cmd_up(const struct opts *o)
{
	struct plan plan;
	int rc = up_locked(o, 0, &plan, NULL);

	if (!rc)
		plan_free(&plan);
	return rc;
}

int cmd_down(const struct opts *o)
{
	char left[CONFIG_ERR_LEN];
	struct xnat_state st;
	int lock, err, ret;
	sigset_t saved;

	lock = lock_or_fail(o, &saved);
	if (lock < 0)
		return EXIT_SYSTEM;
	err = state_load(&st);
	if (err && err != -ENOENT) {
		lock_release(lock, &saved);
		return fail(o, EXIT_SYSTEM, "failed to read state in %s: %s",
			    state_run_dir(), strerror(-err));
	}
	if (err)
		memset(&st, 0, sizeof(st));
	/* Not up: still clear what a crash may have left (an orphan
	 * program, pins, the table). */
	ret = take_down(&st, left);
	lock_release(lock, &saved);
	if (ret)
		return fail(o, EXIT_SYSTEM, "%s; the rest is down%s", left,
			    err ? "" : " (the record stays: `xnat down` "
			    "tries again)");
	pr_info(err ? "xnat is not up in this network namespace\n" :
		      "xnat down\n");
	return EXIT_OK;
}
