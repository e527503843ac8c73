// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat bench: build the namespace testbed, run every mode through the UDP
 * profiles, the new-flow test and the TCP tests, and report. The order is
 * repetition by repetition, and inside one every mode in turn, so that
 * drift on a shared machine hits all modes alike and every comparison can
 * be a ratio within one repetition.
 *
 * Whatever happens (an error, Ctrl-C, SIGTERM), the testbed goes: the
 * signal handlers only set bench_stop, every loop checks it and unwinds,
 * and one teardown removes namespaces, programs, pins and processes.
 * Partial results are still written, marked incomplete.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "bench_common.h"
#include "cmd.h"
#include "fsutil.h"
#include "log.h"
#include "microbench.h"

#define DEFAULT_OUT "bench-results"
/* xnat's flow table for the profiles (10,000 flows, two entries each,
 * plus the replies' side) and for the new-flow test. */
#define FLOWS_PROFILES 65536
#define FLOWS_NEWFLOW 1048576
/* Offered rate of the new-flow test when no saturation rate is known. */
#define NEWFLOW_DEFAULT_PPS 2e6

static void on_signal(int sig)
{
	bench_stop = 1;
}

static bool have_tool(const char *name)
{
	char path[512];
	const char *env = getenv("PATH");
	char *copy, *dir, *save = NULL;
	bool found = false;

	copy = strdup(env ? env : "/usr/sbin:/usr/bin:/sbin:/bin");
	if (!copy)
		return false;
	for (dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		found = !access(path, X_OK);
	}
	free(copy);
	return found;
}

static void command_line(struct bench_plan *plan, const struct opts *o)
{
	char *c = plan->command;
	size_t len = sizeof(plan->command);
	int n = snprintf(c, len, "xnat bench");

#define ADD(...) \
	do { \
		if (n > 0 && (size_t)n < len) \
			n += snprintf(c + n, len - n, __VA_ARGS__); \
	} while (0)
	if (o->quick)
		ADD(" --quick");
	if (o->reps)
		ADD(" --reps %d", o->reps);
	if (o->modes)
		ADD(" --modes %s", o->modes);
	if (o->profiles)
		ADD(" --profiles %s", o->profiles);
	if (o->out_dir)
		ADD(" --out %s", o->out_dir);
	if (o->json)
		ADD(" --json");
#undef ADD
}

/* BPF_PROG_RUN ns/packet of the fast path, the fast path off and the bare
 * forwarder (user/microbench.c, in a namespace of its own). */
static void microbench(struct bench_results *r)
{
	struct microbench_result mb;
	int err;

	bench_progress("BPF_PROG_RUN microbenchmark");
	err = microbench_run(&mb, 0);
	if (err && err != -EPROTO) {
		snprintf(r->micro_note, sizeof(r->micro_note),
			 "microbenchmark failed: %s", strerror(-err));
		return;
	}
	r->micro_fast_ns = mb.c[MICROBENCH_FAST].net_ns;
	r->micro_slow_ns = mb.c[MICROBENCH_FP_OFF].net_ns;
	r->micro_fwd_ns = mb.c[MICROBENCH_FLOOR].net_ns;
	snprintf(r->micro_note, sizeof(r->micro_note),
		 "medians of %llu calls (%llu packets) on CPU %d, less the empty program's %.0f ns%s",
		 (unsigned long long)mb.c[MICROBENCH_FAST].calls,
		 (unsigned long long)mb.c[MICROBENCH_FAST].packets, mb.cpu,
		 mb.c[MICROBENCH_EMPTY].median_ns,
		 err == -EPROTO ? "; WARNING: a case left its path" : "");
}

static bool mode_on(const struct bench_plan *p, enum bench_mode m)
{
	return p->modes & (1U << m);
}

/* One repetition of the UDP profiles: every mode in turn. */
static int udp_rep(struct bench *b, struct bench_results *r, int rep)
{
	const struct bench_plan *p = b->plan;
	int err = 0;

	for (int m = 0; m < BM_MAX && !err && !bench_stop; m++) {
		bool warm[2] = { false, false };

		if (!mode_on(p, m))
			continue;
		bench_progress("rep %d/%d: %s", rep + 1, p->reps, bench_mode_names[m]);
		err = bench_mode_enter(b, m, FLOWS_PROFILES, true);
		for (int pi = 0; pi < p->n_profiles && !err && !bench_stop; pi++) {
			int f = p->profiles[pi].flows > 1;

			/* Mappings (and conntrack entries) for this flow
			 * count, before replies are sent or anything is
			 * timed; they live on for the mode's session. */
			if (!warm[f]) {
				err = bench_udp_warm(b, r, pi);
				warm[f] = true;
				if (err)
					break;
			}
			err = bench_udp_profile(b, r, rep, pi);
		}
		if (bench_mode_leave(b) && !err)
			err = -EIO;
	}
	return err;
}

/* Saturation rate of 64 B / 10k / up in MODE and REP, if measured. */
static double saturation(const struct bench_plan *p, struct bench_results *r,
			 int rep, enum bench_mode m)
{
	for (int pi = 0; pi < p->n_profiles; pi++) {
		const struct bench_profile *pr = &p->profiles[pi];
		struct bench_cell *c;

		if (pr->size != BS_64 || pr->flows == 1 || pr->both)
			continue;
		c = bench_cell(r, p, rep, m, pi);
		if (c->ran && c->max_pps > 0)
			return c->max_pps;
	}
	return 0;
}

static int newflow_rep(struct bench *b, struct bench_results *r, int rep)
{
	static const enum bench_mode modes[] = { BM_KERNEL_NAT, BM_XDP_NAT };
	const struct bench_plan *p = b->plan;
	int err = 0;

	for (size_t i = 0; i < 2 && !err && !bench_stop; i++) {
		double sat = saturation(p, r, rep, modes[i]);

		if (!mode_on(p, modes[i]))
			continue;
		bench_progress("rep %d/%d: %s, %u new flows", rep + 1, p->reps,
			       bench_mode_names[modes[i]], p->newflow_flows);
		err = bench_mode_enter(b, modes[i], FLOWS_NEWFLOW, true);
		/* Above the established-flow rate: flow setup is slower, so
		 * the router works at saturation throughout. */
		if (!err)
			err = bench_newflow(b, r, rep,
					    sat > 0 ? 1.25 * sat : NEWFLOW_DEFAULT_PPS);
		if (bench_mode_leave(b) && !err)
			err = -EIO;
	}
	return err;
}

static int tcp_rep(struct bench *b, struct bench_results *r, int rep)
{
	static const enum bench_mode modes[] = { BM_KERNEL_NAT, BM_XDP_NAT };
	const struct bench_plan *p = b->plan;
	int err = 0;

	/* The sinks would swallow the TCP segments. */
	bench_sinks_close(b);
	for (size_t i = 0; i < 2 && !err && !bench_stop; i++) {
		if (!mode_on(p, modes[i]))
			continue;
		bench_progress("rep %d/%d: %s, TCP", rep + 1, p->reps,
			       bench_mode_names[modes[i]]);
		/* No xdp_pass for the kernel: sockets' skbs need none, and
		 * XDP on a veth would make the kernel path pay for it. */
		err = bench_mode_enter(b, modes[i], FLOWS_PROFILES, false);
		for (int t = 0; t < BT_MAX && !err && !bench_stop; t++)
			if (p->tcp_all || t == BT_UP)
				err = bench_tcp_run(b, r, rep, t);
		if (bench_mode_leave(b) && !err)
			err = -EIO;
	}
	return err;
}

static int write_outputs(const struct bench_plan *p, struct bench_results *r,
			 bool json_stdout)
{
	char path[512];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/bench.json", p->out_dir);
	f = fopen(path, "we");
	if (f) {
		bench_report_json(f, p, r);
		if (fclose(f))
			err = -errno;
	} else {
		err = -errno;
	}
	if (err)
		pr_warn("xnat bench: cannot write %s: %s\n", path, strerror(-err));

	snprintf(path, sizeof(path), "%s/bench.txt", p->out_dir);
	f = fopen(path, "we");
	if (f) {
		bench_report_text(f, p, r);
		fclose(f);
	}
	if (json_stdout)
		bench_report_json(stdout, p, r);
	else
		bench_report_text(stdout, p, r);
	fflush(stdout);

	if ((p->kinds & BK_UDP) && r->n_samples &&
	    bench_report_plot(p, r, p->out_dir) == 0)
		bench_progress("plot: %s/bench.png", p->out_dir);
	return err;
}

int cmd_bench(const struct opts *o)
{
	static const char *const tools[] = { "ip", "ethtool", "iperf3", "ping" };
	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct bench_plan plan = {};
	struct bench_results res;
	struct bench b = {};
	char err_msg[256];
	struct utsname un;
	double t0;
	time_t now;
	int err = 0, rc = EXIT_OK;
	bool written = false;
	ssize_t n;

	if (o->netns)
		return fail(o, EXIT_USAGE, "bench builds its own namespaces; drop -n");
	if (bench_plan_init(&plan, o->quick, o->reps, o->modes, o->profiles,
			    err_msg, sizeof(err_msg)))
		return fail(o, EXIT_USAGE, "%s", err_msg);
	if (geteuid())
		return fail(o, EXIT_SYSTEM, "bench must run as root (XDP, network namespaces)");
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (!have_tool(tools[i]))
			return fail(o, EXIT_SYSTEM, "bench needs %s (scripts/deps.sh installs it)",
				    tools[i]);
	if (!have_tool("gnuplot"))
		pr_warn("xnat bench: gnuplot not found: no plot (scripts/deps.sh installs gnuplot-nox)\n");
	plan.out_dir = o->out_dir ? o->out_dir : DEFAULT_OUT;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		plan.cpu_wan_gen = 0;
	command_line(&plan, o);
	err = mkdir_p(plan.out_dir, 0755);
	if (err)
		return fail(o, EXIT_SYSTEM, "cannot create %s: %s", plan.out_dir,
			    strerror(-err));
	{
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/bench.log", plan.out_dir);
		f = fopen(path, "we");
		if (f)
			fclose(f);
	}
	if (bench_results_init(&res, &plan))
		return fail(o, EXIT_SYSTEM, "out of memory");

	b.plan = &plan;
	b.mode = BM_MAX;
	for (int i = 0; i < NS_MAX; i++)
		b.ns_fd[i] = -1;
	b.host_ns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	n = readlink("/proc/self/exe", b.xnat_path, sizeof(b.xnat_path) - 1);
	if (b.host_ns_fd < 0 || n <= 0) {
		bench_results_free(&res);
		return fail(o, EXIT_SYSTEM, "cannot find our own network namespace or binary");
	}
	b.xnat_path[n] = 0;
	snprintf(b.ns_name[NS_LAN], sizeof(b.ns_name[0]), "xnat-bench-lan-%d", getpid());
	snprintf(b.ns_name[NS_RTR], sizeof(b.ns_name[0]), "xnat-bench-rtr-%d", getpid());
	snprintf(b.ns_name[NS_WAN], sizeof(b.ns_name[0]), "xnat-bench-wan-%d", getpid());
	snprintf(b.tmp_dir, sizeof(b.tmp_dir), "/tmp/xnat-bench.XXXXXX");
	if (!mkdtemp(b.tmp_dir)) {
		b.tmp_dir[0] = 0;
		close(b.host_ns_fd);
		bench_results_free(&res);
		return fail(o, EXIT_SYSTEM, "cannot create a temporary directory: %s",
			    strerror(errno));
	}

	/* No SA_RESTART: blocking calls return and the loops see the flag. */
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);

	now = time(NULL);
	strftime(res.date, sizeof(res.date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	if (!uname(&un))
		snprintf(res.kernel, sizeof(res.kernel), "%s", un.release);
	res.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	t0 = bench_now();

	bench_progress("xnat bench: %s; namespaces %s, %s, %s; results in %s/",
		       plan.quick ? "quick" : "full", b.ns_name[NS_LAN],
		       b.ns_name[NS_RTR], b.ns_name[NS_WAN], plan.out_dir);
	err = bench_testbed_up(&b);
	if (err)
		bench_progress("testbed setup failed");
	if (!err && !bench_stop)
		microbench(&res);

	for (int rep = 0; rep < plan.reps && !err && !bench_stop; rep++) {
		if (plan.kinds & (BK_UDP | BK_NEWFLOW))
			err = bench_sinks_open(&b);
		if (!err && (plan.kinds & BK_UDP))
			err = udp_rep(&b, &res, rep);
		if (!err && !bench_stop && (plan.kinds & BK_NEWFLOW))
			err = newflow_rep(&b, &res, rep);
		if (!err && !bench_stop && (plan.kinds & BK_TCP))
			err = tcp_rep(&b, &res, rep);
	}

	res.interrupted = bench_stop || err;
	res.elapsed_s = bench_now() - t0;
	bench_progress("removing the testbed");
	bench_testbed_down(&b);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);

	if (res.n_samples || res.n_newflow || res.n_tcp) {
		write_outputs(&plan, &res, o->json);
		written = true;
	}
	if (bench_stop || err) {
		char msg[256];

		if (bench_stop)
			snprintf(msg, sizeof(msg),
				 "interrupted; testbed removed, partial results in %s/",
				 plan.out_dir);
		else
			snprintf(msg, sizeof(msg),
				 "bench failed: %s; testbed removed (log: %s/bench.log)",
				 strerror(err < 0 ? -err : err), plan.out_dir);
		/* With --json, stdout already holds the (partial) document:
		 * one JSON document there, the error on stderr. */
		if (o->json && written) {
			pr_warn("xnat: %s\n", msg);
			rc = EXIT_SYSTEM;
		} else {
			rc = fail(o, EXIT_SYSTEM, "%s", msg);
		}
	} else {
		bench_progress("done in %.0f s", res.elapsed_s);
	}
	bench_results_free(&res);
	return rc;
}
