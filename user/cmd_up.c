// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat up, down and run: bring the router up from a config (or reload it in
 * place), take it down, or keep it up in the foreground for a supervisor.
 * `up` checks the whole config before it changes anything, and undoes its
 * own partial work if a step fails on a router that was not up before.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include "cmd.h"
#include "natlog.h"
#include "config.h"
#include "iface.h"
#include "kernel_mode.h"
#include "loader.h"
#include "log.h"
#include "maps.h"
#include "offload.h"
#include "state.h"

static const char *mode_name(int mode)
{
	return config_mode_name(mode);
}

/* Parse and resolve: everything that can fail before the system changes. */
static int load_config(const struct opts *o, struct config *cfg)
{
	char err[CONFIG_ERR_LEN];

	if (!o->config)
		return fail(o, EXIT_USAGE, "missing -c FILE");
	config_init(cfg);
	if (config_parse(cfg, o->config, err) || config_resolve(cfg, err))
		return fail(o, EXIT_USAGE, "%s", err);
	return EXIT_OK;
}

static void take_down(struct xnat_state *st)
{
	if (mode_runs_xdp(st->mode))
		loader_down(st);
	kernel_remove(st);
	state_remove();
}

/* Re-apply the kernel side of the config the router ran with. */
static void restore_kernel(struct xnat_state *old)
{
	char err[CONFIG_ERR_LEN];
	struct config cfg;

	config_init(&cfg);
	if (config_parse(&cfg, old->config_path, err) ||
	    config_resolve(&cfg, err) || kernel_apply(&cfg, old, err))
		pr_warn("xnat: could not restore the kernel config of %s: %s\n",
			old->config_path, err);
	else
		state_save(old);
}

static int bring_up(const struct opts *o, const struct config *cfg)
{
	struct xnat_state st = {}, old;
	char err[CONFIG_ERR_LEN];
	int was_up, rc;

	was_up = !state_load(&st);
	if (was_up && st.mode != (int)cfg->mode) {
		/* Switching modes cannot be hitless: the flows of one mode
		 * mean nothing to the other. Start from a clean router. */
		pr_info("Switching from %s to %s mode: restarting\n",
			mode_name(st.mode), mode_name(cfg->mode));
		take_down(&st);
		memset(&st, 0, sizeof(st));
		was_up = 0;
	}
	st.mode = cfg->mode;
	/* Absolute, so later commands from anywhere find the same file. */
	if (!realpath(cfg->path, st.config_path))
		snprintf(st.config_path, sizeof(st.config_path), "%s", cfg->path);

	/* Refuse what cannot be loaded before touching anything. */
	if (mode_runs_xdp(cfg->mode) && loader_check(cfg, err))
		return fail(o, EXIT_USAGE, "%s", err);
	old = st;

	/* The kernel first: it must handle what XDP passes up from the
	 * first packet on. nft replaces the table in one transaction. */
	if (kernel_apply(cfg, &st, err)) {
		rc = fail(o, EXIT_SYSTEM, "%s", err);
		goto undo;
	}
	if (mode_runs_xdp(cfg->mode) && loader_up(cfg, &st)) {
		rc = fail(o, EXIT_SYSTEM, "failed to bring up XDP on the ports of %s",
			  cfg->path);
		goto undo;
	}
	/* The physical ports: where XDP runs and what down detaches. */
	st.n_ifaces = iface_physical_ports(cfg, st.ifaces);
	if ((rc = state_save(&st))) {
		rc = fail(o, EXIT_SYSTEM, "failed to save state in %s: %s",
			  state_run_dir(), strerror(-rc));
		goto undo;
	}
	pr_info("xnat %s in %s mode on %s (+%d LAN)\n",
		was_up ? "reloaded" : "up", mode_name(cfg->mode),
		cfg->wan.name, cfg->n_lan);
	return EXIT_OK;
undo:
	/* A first start leaves nothing behind; a reload that failed puts the
	 * kernel's part of the running config back (XDP was not changed, or
	 * was swapped atomically and stays). */
	if (!was_up)
		take_down(&st);
	else
		restore_kernel(&old);
	return rc;
}

int cmd_up(const struct opts *o)
{
	struct config cfg;
	int rc = load_config(o, &cfg);

	return rc ? rc : bring_up(o, &cfg);
}

int cmd_down(const struct opts *o)
{
	struct xnat_state st;
	int err = state_load(&st);

	if (err == -ENOENT) {
		/* Nothing recorded; still clear a table left by a crash. */
		memset(&st, 0, sizeof(st));
		kernel_remove(&st);
		state_remove();
		pr_info("xnat is not up in this network namespace\n");
		return EXIT_OK;
	}
	if (err)
		return fail(o, EXIT_SYSTEM, "failed to read state in %s: %s",
			    state_run_dir(), strerror(-err));
	take_down(&st);
	pr_info("xnat down\n");
	return EXIT_OK;
}

static volatile sig_atomic_t got_hup, got_term;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term = 1;
}

/*
 * Refresh what can change under a running router: with `address = auto`,
 * the WAN address (DHCP renewals) and the ports' MTUs. Flows expire in the
 * kernel on their own (BPF timers), so there is no sweeping to do here.
 */
static void refresh(const struct opts *o, struct config *cfg)
{
	struct config now = *cfg;
	char err[CONFIG_ERR_LEN];

	if (config_resolve(&now, err)) {
		pr_warn("xnat: %s\n", err);
		return;
	}
	if (mode_runs_xdp(cfg->mode) && maps_sync(&now) == 0)
		*cfg = now;
}

static unsigned long long monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
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

int cmd_run(const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct offload_watch *watch = NULL;
	time_t last_refresh = 0;
	struct natlog *nat_log = NULL;
	struct config cfg;
	int rc;

	rc = load_config(o, &cfg);
	if (rc || (rc = bring_up(o, &cfg)))
		return rc;
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	notify_systemd("READY=1\nSTATUS=up with %s", o->config);
	/* Mapping created / expired as JSON lines on stdout (the journal,
	 * under systemd) in xdp mode (the kernel logs its own NAT); in
	 * offload mode, flows moving onto the fast path and back. */
	if (cfg.mode != MODE_KERNEL)
		nat_log = natlog_open(stdout, cfg.mode == MODE_OFFLOAD);

	/* Offload mode: conntrack destroy events and ruleset changes take
	 * flows off the fast path as they happen. */
	if (cfg.mode == MODE_OFFLOAD) {
		watch = offload_watch_open(&cfg);
		offload_watch_log(watch, nat_log);
	}
	while (!got_term) {
		/* Each waits 5 s at most and returns early on signals; with
		 * both, the log is read at least twice a second. */
		if (watch && nat_log) {
			offload_watch_wait(watch, 500);
			natlog_drain(nat_log);
		} else if (nat_log) {
			natlog_wait(nat_log, 5000);
		} else if (watch) {
			offload_watch_wait(watch, 5000);
		} else {
			sleep(5);
		}
		if (got_hup) {
			struct config next;

			got_hup = 0;
			notify_systemd("RELOADING=1\nMONOTONIC_USEC=%llu", monotonic_usec());
			/* A bad new config keeps the old one running. */
			if (load_config(o, &next) == EXIT_OK &&
			    bring_up(o, &next) == EXIT_OK) {
				cfg = next;
				notify_systemd("READY=1\nSTATUS=up with %s (reloaded)",
					       o->config);
				offload_watch_close(watch);
				watch = cfg.mode == MODE_OFFLOAD ?
						offload_watch_open(&cfg) : NULL;
				offload_watch_log(watch, nat_log);
				continue;
			}
			pr_warn("xnat: reload of %s failed; the config loaded before is still running\n",
				o->config);
			notify_systemd("READY=1\nSTATUS=reload of %s failed; the config loaded before is still running",
				       o->config);
			continue;
		}
		/* Events wake the loop often; refresh every 5 s still. */
		if (!got_term && time(NULL) - last_refresh >= 5) {
			refresh(o, &cfg);
			last_refresh = time(NULL);
		}
	}
	offload_watch_close(watch);
	natlog_close(nat_log);
	notify_systemd("STOPPING=1");
	return cmd_down(o);
}
