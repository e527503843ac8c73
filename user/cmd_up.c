// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat up, down and run, as one pipeline: parse -> resolve against the
 * system -> plan (plan.c) -> apply, each step with its undo (apply.c) ->
 * record the state last. A first `up` that fails leaves nothing; a reload
 * that fails puts back the running plan, rebuilt from the config recorded
 * when it was applied (not from the operator's file, which may have been
 * edited since), and exits 2 saying so. Commands that change the router
 * hold its lock (state_lock), so `xnat run`'s refresh never races an `up`.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include "clock.h"
#include "apply.h"
#include "cmd.h"
#include "natlog.h"
#include "config.h"
#include "flow_route.h"
#include "kernel_mode.h"
#include "loader.h"
#include "log.h"
#include "maps.h"
#include "neigh_keepalive.h"
#include "next_hop.h"
#include "offload.h"
#include "plan.h"
#include "state.h"
#include "watch.h"

#define LOCK_WAIT_S 30

static const char *mode_name(int mode)
{
	return config_mode_name(mode);
}

/* Parse, resolve and plan PATH: everything that can fail before the
 * system changes. ERR gets "FILE:LINE: ..." for config errors. On failure
 * PLAN holds nothing to free. */
static int plan_file(const char *path, int wait_addr, struct plan *plan,
		     char *err)
{
	struct config cfg;
	int ret;

	memset(plan, 0, sizeof(*plan));
	config_init(&cfg);
	if (config_parse(&cfg, path, err))
		return -EINVAL;
	cfg.nat_addr_wait = wait_addr;
	if (config_resolve(&cfg, err))
		return -EINVAL;
	ret = plan_build(&cfg, plan, err);
	/* A built plan holds its nft ruleset: a refused one frees it, or
	 * each refused SIGHUP would leak one. */
	if (!ret && plan->xdp && (ret = loader_check(plan, err)))
		plan_free(plan);
	return ret;
}

/* Everything xnat may have set up here, recorded in ST or not: XDP on any
 * port of this netns (an orphan of a crashed `up` too), pins, the nft
 * table, the sysctls. The record, its directory and the lock stay: a mode
 * switch goes on under the lock it holds, and commits over the record. */
static void take_down_router(struct xnat_state *st)
{
	loader_detach(NULL, -1);
	loader_unpin();
	kernel_nft_remove();
	state_sysctl_restore(st);
}

/* The router and its record, lock file included: the last step of a
 * command that ends the router, before it unlocks (state_remove()). */
static void take_down(struct xnat_state *st)
{
	take_down_router(st);
	state_remove();
}

/* The running router's plan, from the config recorded when it was
 * applied. -errno with ERR if it cannot be rebuilt. */
static int running_plan(struct plan *old, char *err)
{
	return plan_file(state_applied_config(), 1, old, err);
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

static int reload_failed(const struct opts *o, const struct xnat_state *st,
			 const char *err)
{
	return fail(o, EXIT_SYSTEM, "%s; rolled back: the router runs %s as "
		    "before", err, st->config_path);
}

/* Apply PLAN over what runs (ST, OLD) and record it. Unlocked caller. */
static int apply_and_commit(const struct opts *o, const struct plan *plan,
			    struct xnat_state *st, const struct plan *old)
{
	char err[CONFIG_ERR_LEN];
	struct xnat_state before = *st;
	struct maps_gone dropped;
	struct apply_undo undo;
	int ret;

	/* Applied again from the applied copy (reapply()), the router
	 * still runs the operator's file as recorded: status names it. */
	if (!st->config_path[0] ||
	    strcmp(plan->cfg.path, state_applied_config()))
		if (!realpath(plan->cfg.path, st->config_path))
			snprintf(st->config_path, sizeof(st->config_path),
				 "%s", plan->cfg.path);
	ret = apply_plan(plan, old, st, &dropped, &undo, err);
	if (!ret && (ret = commit(st, plan, old ? &before : NULL))) {
		snprintf(err, sizeof(err), "failed to save state in %s: %s",
			 state_run_dir(), strerror(-ret));
		/* Unrecorded, the apply must not stay: the old plan back. */
		apply_abort(&undo);
	} else if (!ret) {
		apply_commit(&undo);
	}
	if (ret && old) {
		*st = before;
		return reload_failed(o, st, err);
	}
	if (ret) {
		take_down(st);
		return fail(o, EXIT_SYSTEM, "%s; nothing was left applied", err);
	}
	apply_finish(plan, old, &dropped);
	pr_info("xnat %s in %s mode on %s (+%d LAN)\n", old ? "reloaded" : "up",
		mode_name(plan->cfg.mode), plan->cfg.wan.name, plan->cfg.n_lan);
	return EXIT_OK;
}

/* With the lock held: bring PLAN up, or reload the running router to it. */
static int bring_up(const struct opts *o, const struct plan *plan)
{
	struct plan old = {};
	struct xnat_state st;
	char err[CONFIG_ERR_LEN];
	int was_up, rc;

	was_up = !state_load(&st);
	if (was_up && st.mode != (int)plan->cfg.mode) {
		/* Switching modes cannot be hitless: the flows of one mode
		 * mean nothing to the other. Start from a clean router, in
		 * place: the lock stays ours until the commit, which writes
		 * over the old record. */
		pr_info("Switching from %s to %s mode: restarting\n",
			mode_name(st.mode), mode_name(plan->cfg.mode));
		take_down_router(&st);
		was_up = 0;
	}
	if (!was_up) {
		/* Across a mode switch the generation goes on: `xnat run`
		 * follows another command's config only when the number
		 * differs from the one it applied, and a restart at 1 could
		 * equal it. */
		unsigned long generation = st.generation;

		memset(&st, 0, sizeof(st));
		st.generation = generation;
	}
	if (was_up && running_plan(&old, err)) {
		/* XXX: without the old plan a failed reload cannot be put
		 * back; it then takes the router down (and says so). */
		pr_warn("xnat: cannot rebuild the running config (%s)\n", err);
		rc = apply_and_commit(o, plan, &st, NULL);
		return rc;
	}
	rc = apply_and_commit(o, plan, &st, was_up ? &old : NULL);
	plan_free(&old);
	return rc;
}

static int lock_or_fail(const struct opts *o)
{
	int fd = state_lock(LOCK_WAIT_S);

	if (fd < 0)
		fail(o, EXIT_SYSTEM, "failed to lock %s/lock: %s",
		     state_run_dir(), fd == -EWOULDBLOCK ?
		     "another xnat command holds it" : strerror(-fd));
	return fd;
}

/* Plan O's config and bring it up, under the lock. */
static int up_locked(const struct opts *o, int wait_addr, struct plan *plan)
{
	char err[CONFIG_ERR_LEN];
	int lock, rc, ret;

	if (!o->config)
		return fail(o, EXIT_USAGE, "missing -c FILE");
	ret = plan_file(o->config, wait_addr, plan, err);
	/* The new config's ports only: the running plan's run xnat. */
	if (!ret && plan->xdp && (ret = loader_check_ports(plan, err)))
		plan_free(plan);
	if (ret)
		return fail(o, ret == -EINVAL ? EXIT_USAGE : EXIT_SYSTEM, "%s",
			    err);
	lock = lock_or_fail(o);
	if (lock < 0) {
		plan_free(plan);
		return EXIT_SYSTEM;
	}
	rc = bring_up(o, plan);
	state_unlock(lock);
	if (rc)
		plan_free(plan);
	return rc;
}

int cmd_up(const struct opts *o)
{
	struct plan plan;
	int rc = up_locked(o, 0, &plan);

	if (!rc)
		plan_free(&plan);
	return rc;
}

int cmd_down(const struct opts *o)
{
	struct xnat_state st;
	int lock, err;

	lock = lock_or_fail(o);
	if (lock < 0)
		return EXIT_SYSTEM;
	err = state_load(&st);
	if (err && err != -ENOENT) {
		state_unlock(lock);
		return fail(o, EXIT_SYSTEM, "failed to read state in %s: %s",
			    state_run_dir(), strerror(-err));
	}
	if (err)
		memset(&st, 0, sizeof(st));
	/* Not up: still clear what a crash may have left (an orphan
	 * program, pins, the table). */
	take_down(&st);
	state_unlock(lock);
	pr_info(err ? "xnat is not up in this network namespace\n" :
		      "xnat down\n");
	return EXIT_OK;
}

/* What `xnat run` keeps: the plan it last applied and that commit's
 * generation. */
struct runner {
	struct plan plan;
	unsigned long generation;
};

static unsigned long current_generation(void)
{
	struct xnat_state st;

	return state_load(&st) ? 0 : st.generation;
}

/* Another command applied a config since ours: follow it rather than put
 * ours back over it. */
static void follow(struct runner *r, unsigned long generation)
{
	char err[CONFIG_ERR_LEN];
	struct plan next;

	if (plan_file(state_applied_config(), 1, &next, err)) {
		pr_warn("xnat: cannot read the config another command applied "
			"(%s); not refreshing it\n", err);
	} else {
		plan_free(&r->plan);
		r->plan = next;
		pr_info("Another xnat command applied a config: following it\n");
	}
	r->generation = generation;
}

/* Re-resolve (WAN address, ports) and re-apply what changed; put the nft
 * table back if something removed it. 1 when a port is another interface
 * now, deleted and made again under its name (a USB adapter plugged back,
 * a VLAN or bridge recreated): its XDP program went with the old one, and
 * only a whole apply attaches it again (the caller's, after the lock). */
static int refresh_plan(struct runner *r)
{
	struct config cfg = r->plan.cfg;
	char err[CONFIG_ERR_LEN];
	__u32 old_addr = r->plan.cfg.nat_addr;
	struct plan now;
	int table = kernel_table_present();

	if (config_resolve(&cfg, err) || plan_build(&cfg, &now, err)) {
		pr_warn("xnat: %s\n", err);
		return 0;
	}
	if (!plan_same_ports(&now, &r->plan)) {
		plan_free(&now);
		return 1;
	}
	if (!table)
		pr_warn("xnat: nft table inet xnat is gone (nft flush "
			"ruleset?): applying it again\n");
	if (table && plan_same(&now, &r->plan)) {
		plan_free(&now);
		return 0;
	}
	if (apply_refresh(&now, err)) {
		pr_warn("xnat: refresh failed: %s\n", err);
		plan_free(&now);
		return 0;
	}
	if (old_addr != now.cfg.nat_addr) {
		pr_info("WAN address changed: NAT now uses %s\n",
			now.cfg.nat_addr ? "the new one" : "none (waiting)");
		if (old_addr && now.xdp)
			maps_flush_nat_addr(old_addr);
	}
	plan_free(&r->plan);
	r->plan = now;
	return 0;
}

/* Under the lock. -ENOENT when the router was taken down meanwhile; 1
 * when the running config must be applied again (refresh_plan()). */
static int refresh(struct runner *r)
{
	int again = 0;
	struct xnat_state st;
	int lock = state_lock(LOCK_WAIT_S);

	if (lock < 0) {
		pr_warn("xnat: refresh skipped: lock: %s\n", strerror(-lock));
		return 0;
	}
	if (state_load(&st)) {
		/* The lock file we made: our last step, the router is not
		 * ours any more. */
		state_remove();
		state_unlock(lock);
		pr_warn("xnat: the router was taken down by another command\n");
		return -ENOENT;
	}
	if (st.generation != r->generation)
		follow(r, st.generation);
	else
		again = refresh_plan(r);
	state_unlock(lock);
	return again;
}

static volatile sig_atomic_t got_hup, got_term;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term = sig;
}

/*
 * Tell systemd (Type=notify, NOTIFY_SOCKET set) where the service is:
 * READY=1 once up, RELOADING=1 ... READY=1 around a SIGHUP reload,
 * STOPPING=1 on the way down. Outside systemd this does nothing.
 */
static void notify_systemd(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int err;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err = sd_notify(0, msg);
	if (err < 0)
		pr_warn("Failed to notify systemd (%s): %s\n", msg, strerror(-err));
}

/* What `xnat run` listens to besides signals. */
struct run_events {
	struct mnl_socket *nl;          /* address and link changes */
	struct natlog *nat_log;         /* xdp and offload modes: the event log */
	struct offload_watch *offload;  /* offload mode: conntrack events */
	/* xdp mode: neighbour and route changes, followed in the flow
	 * table (offload mode's watch has its own). */
	struct next_hop_watch *hops;
	struct flow_route_watch *rehop;
	struct neigh_keepalive *keep; /* the next hops XDP sends to */
};

static void events_hops_close(struct run_events *ev)
{
	neigh_keepalive_close(ev->keep);
	next_hop_watch_close(ev->hops);
	flow_route_close(ev->rehop);
	ev->keep = NULL;
	ev->hops = NULL;
	ev->rehop = NULL;
}

static void events_hops_open(struct run_events *ev)
{
	ev->rehop = flow_route_open();
	if (ev->rehop)
		ev->hops = next_hop_watch_open(flow_route_next_hop_changed,
					       ev->rehop);
	if (!ev->hops) {
		pr_warn("xnat: cannot watch neighbour and route events (%s): "
			"flows keep their next hop when it changes, until "
			"they end\n", strerror(errno));
		events_hops_close(ev);
		return;
	}
	next_hop_watch_ports(ev->hops, flow_route_ports_fd(ev->rehop));
	ev->keep = neigh_keepalive_open_maps(flow_route_flows_fd(ev->rehop),
					     flow_route_ports_fd(ev->rehop));
	if (!ev->keep)
		pr_warn("xnat: cannot keep the next hops' neighbour entries "
			"fresh (%s): a MAC changed without a gratuitous ARP is "
			"not learnt\n", strerror(errno));
}

static void events_mode(struct run_events *ev, const struct config *cfg)
{
	offload_watch_close(ev->offload);
	ev->offload = cfg->mode == MODE_OFFLOAD ? offload_watch_open(cfg) : NULL;
	events_hops_close(ev);
	if (cfg->mode == MODE_XDP)
		events_hops_open(ev);
	/* Mapping created / expired as JSON lines on stdout (the journal,
	 * under systemd) in xdp mode (the kernel logs its own NAT); in
	 * offload mode, flows moving onto the fast path and back. */
	if (!ev->nat_log && cfg->mode != MODE_KERNEL)
		ev->nat_log = natlog_open(stdout, cfg->mode == MODE_OFFLOAD);
	else if (ev->nat_log)
		natlog_flows(ev->nat_log, cfg->mode == MODE_OFFLOAD);
	offload_watch_log(ev->offload, ev->nat_log);
}

/* Serve the NAT log and offload events for a while; 1 if rtnetlink said
 * something changed. */
static int events_wait(struct run_events *ev)
{
	if (ev->nat_log)
		natlog_wait(ev->nat_log, 250);
	if (ev->offload)
		offload_watch_wait(ev->offload, 250);
	if (ev->hops) {
		next_hop_watch_read(ev->hops);
		flow_route_tick(ev->rehop);
		neigh_keepalive_tick(ev->keep, ev->hops);
	}
	return watch_wait(ev->nl, ev->nat_log || ev->offload ? 0 : 1000) > 0;
}

static void events_close(struct run_events *ev)
{
	events_hops_close(ev);
	offload_watch_close(ev->offload);
	natlog_close(ev->nat_log);
	watch_close(ev->nl);
}

static void reload(const struct opts *o, struct runner *r,
		   struct run_events *ev)
{
	struct plan next;

	notify_systemd("RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long)(clock_ns(CLOCK_MONOTONIC) / 1000));
	/* A bad new config keeps the old one running. */
	if (up_locked(o, 1, &next) == EXIT_OK) {
		plan_free(&r->plan);
		r->plan = next;
		r->generation = current_generation();
		events_mode(ev, &r->plan.cfg);
		notify_systemd("READY=1\nSTATUS=up with %s (reloaded)",
			       r->plan.cfg.path);
		return;
	}
	pr_warn("xnat: reload of %s failed; the config loaded before is still "
		"running\n", o->config);
	notify_systemd("READY=1\nSTATUS=reload of %s failed; the config loaded "
		       "before is still running", o->config);
}

/* A port of the running plan was made again: apply the running config
 * again, as a reload does (apply_plan() attaches the new interface and
 * ends the flows through the old one). From the copy recorded when it was
 * applied, not the operator's file: that one may have been edited since,
 * and only SIGHUP or `xnat up` apply an edit. */
static void reapply(const struct opts *o, struct runner *r,
		    struct run_events *ev)
{
	struct opts again = *o;

	again.config = state_applied_config();
	pr_info("A port is a new interface: applying the running config "
		"(%s) again\n", again.config);
	reload(&again, r, ev);
}

/* Until SIGTERM; 1 if another command took the router down. */
static int run_loop(const struct opts *o, struct runner *r,
		    struct run_events *ev)
{
	time_t last = time(NULL);
	unsigned long generation;
	int changed, rc;

	while (!got_term) {
		changed = events_wait(ev);
		if (got_term)
			break;
		if (got_hup) {
			got_hup = 0;
			reload(o, r, ev);
			continue;
		}
		/* Events say when; the 5 s tick catches what sends none
		 * (an nft table flushed). */
		if (!changed && time(NULL) - last < 5)
			continue;
		last = time(NULL);
		generation = r->generation;
		rc = refresh(r);
		if (rc == -ENOENT)
			return 1;
		/* Followed another command's config, maybe another mode's:
		 * listen to what that mode needs, as a reload does. */
		if (r->generation != generation)
			events_mode(ev, &r->plan.cfg);
		if (rc == 1)
			reapply(o, r, ev);
	}
	return 0;
}

/*
 * Refresh what can change under a running router when it changes (address
 * and link events, rtnetlink) and every 5 s (the nft table, which sends no
 * event here). Flows expire in the kernel on their own (BPF timers).
 */
int cmd_run(const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct run_events ev = {};
	struct runner r = {};
	int rc;

	ev.nl = watch_open();
	if (!ev.nl)
		return fail(o, EXIT_SYSTEM, "failed to open rtnetlink: %s",
			    strerror(errno));
	rc = up_locked(o, 1, &r.plan);
	if (rc) {
		events_close(&ev);
		return rc;
	}
	r.generation = current_generation();
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	notify_systemd("READY=1\nSTATUS=up with %s", r.plan.cfg.path);
	events_mode(&ev, &r.plan.cfg);
	rc = run_loop(o, &r, &ev);
	events_close(&ev);
	plan_free(&r.plan);
	if (rc)
		return EXIT_OK; /* taken down by another command */
	notify_systemd("STOPPING=1");
	pr_info("%s: taking the router down\n", strsignal(got_term));
	return cmd_down(o);
}
