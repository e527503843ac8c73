// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat run: `xnat up`, then stay and keep the router in step with the
 * system (address and link events, a port made again, the nft table
 * removed), reload on SIGHUP, take the router down on SIGTERM. The apply
 * itself is cmd_up.c's; commands that change the router hold its lock
 * (state_lock), so run's refresh never races an `up`.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include "clock.h"
#include "apply.h"
#include "cmd.h"
#include "cmd_up.h"
#include "natlog.h"
#include "config.h"
#include "flow_route.h"
#include "kernel_mode.h"
#include "log.h"
#include "maps.h"
#include "neigh_keepalive.h"
#include "next_hop.h"
#include "offload.h"
#include "plan.h"
#include "state.h"
#include "watch.h"

/* What `xnat run` keeps: the plan it last applied and that commit's
 * instance and generation, which name it (struct xnat_state); the config
 * of that commit, every port in it (the plan lacks the LAN ports that
 * were gone when it was built), and which of them its last refresh found
 * gone (said once, not every round). */
struct runner {
	struct plan plan;
	struct config cfg;
	struct config_gone gone;
	unsigned long long instance;
	unsigned long generation;
};

/* NEXT is what the router runs now, applied from its whole config. */
static void runner_plan(struct runner *r, struct plan *next)
{
	plan_free(&r->plan);
	r->plan = *next;
	r->cfg = next->cfg;
	memset(&r->gone, 0, sizeof(r->gone));
}

/* The commit REC is ours now (run applied it, or follows it). */
static void runner_commit(struct runner *r, const struct xnat_state *rec)
{
	r->instance = rec->instance;
	r->generation = rec->generation;
}

/* Did another command commit REC? The generation alone cannot say: after
 * `xnat down`, a new `xnat up` counts from 1 again, maybe up to ours. */
static int runner_other(const struct runner *r, const struct xnat_state *rec)
{
	return rec->instance != r->instance ||
	       rec->generation != r->generation;
}

/* Another command applied a config since ours (REC): follow it rather
 * than put ours back over it. */
static void follow(struct runner *r, const struct xnat_state *rec)
{
	char err[CONFIG_ERR_LEN];
	struct plan next;
	/* Started anew: by an `up` after a `down`, or restarted in place
	 * (a mode switch, a reload whose running config was lost). */
	int anew = rec->instance != r->instance;

	if (up_plan_file(state_applied_config(), 1, &next, err)) {
		pr_warn("xnat: cannot read the config another command applied "
			"(%s); not refreshing it\n", err);
	} else {
		runner_plan(r, &next);
		pr_info("%s: following it\n", anew ?
			"Another xnat command brought the router up anew" :
			"Another xnat command applied a config");
	}
	runner_commit(r, rec);
}

/*
 * Resolve the running config into CFG, without the LAN ports that are
 * gone (an adapter unplugged: its XDP program went with it) if any is,
 * their names into GONE; said when they change. 0, or -1 said.
 */
static int refresh_resolve(struct runner *r, struct config *cfg,
			   struct config_gone *gone)
{
	char err[CONFIG_ERR_LEN];

	*cfg = r->cfg;
	if (config_resolve_running(cfg, gone, err)) {
		pr_warn("xnat: %s\n", err);
		return -1;
	}
	if (memcmp(gone, &r->gone, sizeof(*gone))) {
		if (gone->n)
			pr_warn("xnat: %s\n", config_gone_say(gone, true, err));
		r->gone = *gone;
	}
	return 0;
}

/* Re-resolve (WAN address, ports) and re-apply what changed; put the nft
 * table back if something removed it. A LAN port that is gone is left
 * out, and the rest kept in step (its WAN address followed). 1 when a
 * port is another interface now, deleted and made again under its name
 * (a USB adapter plugged back, a VLAN or bridge recreated): its XDP
 * program went with the old one, and only a whole apply attaches it
 * again (the caller's, after the lock). */
static int refresh_plan(struct runner *r)
{
	char err[CONFIG_ERR_LEN];
	__u32 old_addr = r->plan.cfg.nat_addr;
	struct config_gone gone;
	struct config cfg;
	struct plan now;
	int table = kernel_table_present();

	if (refresh_resolve(r, &cfg, &gone))
		return 0;
	if (plan_build(&cfg, &now, err)) {
		pr_warn("xnat: %s\n", err);
		return 0;
	}
	/* Ports gone from the plan are no new interface to attach to. */
	if (gone.n ? !plan_ports_within(&now, &r->plan) :
		      !plan_same_ports(&now, &r->plan)) {
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
	int lock = state_lock(UP_LOCK_WAIT_S);

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
	if (runner_other(r, &st))
		follow(r, &st);
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

/* Listen to what CFG's mode needs. MAPS_ANEW: the router was started
 * anew since the last call (another instance: brought up after a down,
 * or restarted in place), on maps of its own: the event log's ring and
 * switch are the old maps', which no program writes any more. */
static void events_mode(struct run_events *ev, const struct config *cfg,
			int maps_anew)
{
	if (maps_anew) {
		natlog_close(ev->nat_log);
		ev->nat_log = NULL;
	}
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

/* 0; or 1 when the reload failed and left the router down (a restart
 * with no running config to go back to: cmd_up.c), as it said. */
static int reload(const struct opts *o, struct runner *r,
		  struct run_events *ev)
{
	unsigned long long instance = r->instance;
	struct xnat_state rec;
	struct plan next;

	notify_systemd("RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long)(clock_ns(CLOCK_MONOTONIC) / 1000));
	/* A bad new config keeps the old one running. */
	if (up_locked(o, 1, &next, &rec) == EXIT_OK) {
		runner_plan(r, &next);
		runner_commit(r, &rec);
		events_mode(ev, &r->plan.cfg, r->instance != instance);
		notify_systemd("READY=1\nSTATUS=up with %s (reloaded)",
			       r->plan.cfg.path);
		return 0;
	}
	if (state_load(&rec) == -ENOENT) {
		pr_warn("xnat: reload of %s failed and left the router down\n",
			o->config);
		notify_systemd("STATUS=reload of %s failed and left the router "
			       "down", o->config);
		return 1;
	}
	pr_warn("xnat: reload of %s failed; the config loaded before is still "
		"running\n", o->config);
	notify_systemd("READY=1\nSTATUS=reload of %s failed; the config loaded "
		       "before is still running", o->config);
	return 0;
}

/* A port of the running plan was made again: apply the running config
 * again, as a reload does (apply_plan() attaches the new interface and
 * ends the flows through the old one). From the copy recorded when it was
 * applied, not the operator's file: that one may have been edited since,
 * and only SIGHUP or `xnat up` apply an edit. */
static int reapply(const struct opts *o, struct runner *r,
		   struct run_events *ev)
{
	struct opts again = *o;

	again.config = state_applied_config();
	pr_info("A port is a new interface: applying the running config "
		"(%s) again\n", again.config);
	return reload(&again, r, ev);
}

/* Until SIGTERM; 1 if another command took the router down, 2 if a
 * reload of ours failed and left it down. */
static int run_loop(const struct opts *o, struct runner *r,
		    struct run_events *ev)
{
	time_t last = time(NULL);
	unsigned long long instance;
	unsigned long generation;
	int changed, rc;

	while (!got_term) {
		changed = events_wait(ev);
		if (got_term)
			break;
		if (got_hup) {
			got_hup = 0;
			if (reload(o, r, ev))
				return 2;
			continue;
		}
		/* Events say when; the 5 s tick catches what sends none
		 * (an nft table flushed). */
		if (!changed && time(NULL) - last < 5)
			continue;
		last = time(NULL);
		instance = r->instance;
		generation = r->generation;
		rc = refresh(r);
		if (rc == -ENOENT)
			return 1;
		/* Followed another command's config, maybe another mode's:
		 * listen to what that mode needs, as a reload does. */
		if (r->instance != instance || r->generation != generation)
			events_mode(ev, &r->plan.cfg, r->instance != instance);
		if (rc == 1 && reapply(o, r, ev))
			return 2;
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
	struct xnat_state rec;
	struct runner r = {};
	int rc;

	/*
	 * The handlers go in before the first up: up_locked() holds these
	 * signals while it applies and lets them in when it is done, so a
	 * TERM sent during that up is seen here and takes the router down,
	 * instead of killing run with the router left up and unwatched.
	 * SIGPIPE: a closed stdout (the event log's reader gone) is a write
	 * error, not the end of the router.
	 */
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	ev.nl = watch_open();
	if (!ev.nl)
		return fail(o, EXIT_SYSTEM, "failed to open rtnetlink: %s",
			    strerror(errno));
	rc = up_locked(o, 1, &r.plan, &rec);
	if (rc) {
		events_close(&ev);
		return rc;
	}
	r.cfg = r.plan.cfg;
	runner_commit(&r, &rec);
	if (got_term) {
		events_close(&ev);
		plan_free(&r.plan);
		pr_info("%s during up: taking the router down\n",
			strsignal(got_term));
		return cmd_down(o);
	}
	notify_systemd("READY=1\nSTATUS=up with %s", r.plan.cfg.path);
	events_mode(&ev, &r.plan.cfg, 0);
	rc = run_loop(o, &r, &ev);
	events_close(&ev);
	plan_free(&r.plan);
	if (rc == 1)
		return EXIT_OK; /* taken down by another command */
	if (rc == 2)
		return EXIT_SYSTEM; /* said by the reload */
	notify_systemd("STOPPING=1");
	pr_info("%s: taking the router down\n", strsignal(got_term));
	return cmd_down(o);
}
