// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat bench: check what the run needs, build the namespace testbed, have
 * bench_reps.c measure every selected mode, and report.
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
#include "bench_common.h"
#include "cmd.h"
#include "version.h"
#include "fsutil.h"
#include "log.h"

#define DEFAULT_OUT "bench-results"

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

/* Everything the run needs before the testbed: the plan from the options,
 * root, the tools, the results directory. EXIT_OK or fail()'s code. */
static int prepare(const struct opts *o, struct bench_plan *plan)
{
	static const char *const tools[] = { "ip", "ethtool", "iperf3", "ping" };
	char err_msg[256], path[512];
	FILE *f;
	int err;

	if (o->netns)
		return fail(o, EXIT_USAGE, "bench builds its own namespaces; drop -n");
	if (bench_plan_init(plan, o->quick, o->reps, o->modes, o->profiles,
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
	plan->out_dir = o->out_dir ? o->out_dir : DEFAULT_OUT;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		plan->cpu_wan_gen = 0;
	bench_command_typed(plan->command, sizeof(plan->command));
	err = mkdir_p(plan->out_dir, 0755);
	if (err)
		return fail(o, EXIT_SYSTEM, "cannot create %s: %s", plan->out_dir,
			    strerror(-err));
	snprintf(path, sizeof(path), "%s/bench.log", plan->out_dir);
	f = fopen(path, "we");
	if (f)
		fclose(f);
	return EXIT_OK;
}

/* The run's identity before anything is built: our namespace and binary,
 * the namespaces' names, a temporary directory. EXIT_OK or fail()'s code. */
static int bench_init(const struct opts *o, struct bench *b,
		      const struct bench_plan *plan)
{
	ssize_t n;

	b->plan = plan;
	b->mode = BM_MAX;
	for (int i = 0; i < NS_MAX; i++)
		b->ns_fd[i] = -1;
	b->host_ns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	n = readlink("/proc/self/exe", b->xnat_path, sizeof(b->xnat_path) - 1);
	if (b->host_ns_fd < 0 || n <= 0)
		return fail(o, EXIT_SYSTEM, "cannot find our own network namespace or binary");
	b->xnat_path[n] = 0;
	snprintf(b->ns_name[NS_LAN], sizeof(b->ns_name[0]), "xnat-bench-lan-%d", getpid());
	snprintf(b->ns_name[NS_RTR], sizeof(b->ns_name[0]), "xnat-bench-rtr-%d", getpid());
	snprintf(b->ns_name[NS_WAN], sizeof(b->ns_name[0]), "xnat-bench-wan-%d", getpid());
	snprintf(b->tmp_dir, sizeof(b->tmp_dir), "/tmp/xnat-bench.XXXXXX");
	if (!mkdtemp(b->tmp_dir)) {
		b->tmp_dir[0] = 0;
		close(b->host_ns_fd);
		return fail(o, EXIT_SYSTEM, "cannot create a temporary directory: %s",
			    strerror(errno));
	}
	return EXIT_OK;
}

/* When, where and what runs, for the report's header. */
static void stamp(struct bench_results *res)
{
	time_t now = time(NULL);

	bench_provenance_host(&res->prov);
	snprintf(res->cpu_model, sizeof(res->cpu_model), "%s", res->prov.cpu_model);
	snprintf(res->kernel, sizeof(res->kernel), "%s", res->prov.kernel);
	res->ncpus = res->prov.cpus;
	snprintf(res->xnat_version, sizeof(res->xnat_version), "%s", XNAT_VERSION);
	strftime(res->date, sizeof(res->date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
}

/* Write what was measured and say how the run ended; the exit code. */
static int finish(const struct opts *o, const struct bench_plan *plan,
		  struct bench_results *res, int err)
{
	bool written = false;
	char msg[256];

	if (res->n_samples || res->n_newflow || res->n_tcp ||
	    res->micro_fast_ns >= 0 || res->micro_note[0]) {
		write_outputs(plan, res, o->json);
		written = true;
	}
	if (!bench_stop && !err) {
		bench_progress("done in %.0f s", res->elapsed_s);
		return EXIT_OK;
	}
	if (bench_stop)
		snprintf(msg, sizeof(msg),
			 "interrupted; testbed removed, partial results in %s/",
			 plan->out_dir);
	else
		snprintf(msg, sizeof(msg),
			 "bench failed: %s; testbed removed (log: %s/bench.log)",
			 strerror(err < 0 ? -err : err), plan->out_dir);
	/* With --json, stdout already holds the (partial) document: one JSON
	 * document there, the error on stderr. */
	if (o->json && written) {
		pr_warn("xnat: %s\n", msg);
		return EXIT_SYSTEM;
	}
	return fail(o, EXIT_SYSTEM, "%s", msg);
}

/* The tester's ports for the report: the LAN and WAN hosts' ports,
 * where the generators send and the sinks count. */
static void record_ports(struct bench *b, struct bench_results *res)
{
	static const struct { enum bench_ns ns; const char *role; } ports[] = {
		{ NS_LAN, "lan" }, { NS_WAN, "wan" },
	};

	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		if (bench_enter(b, ports[i].ns))
			continue;
		bench_provenance_port(&res->prov, ports[i].role,
				      b->ns_name[ports[i].ns], "eth0");
		bench_enter(b, NS_MAX);
	}
}

/* The many-endpoint profiles and the new-flow test put up to a million
 * connections through the kernel's NAT: raise its limits for the run
 * (a failure only marks those samples unverified). */
static void raise_conntrack(struct bench *b, const struct bench_plan *plan)
{
	long long need = 0;

	for (int pi = 0; pi < plan->n_profiles; pi++)
		if (plan->profiles[pi].ports_per_host &&
		    plan->profiles[pi].flows > need)
			need = plan->profiles[pi].flows;
	if ((plan->kinds & BK_NEWFLOW) && plan->newflow_flows > need)
		need = plan->newflow_flows;
	if (need)
		bench_conntrack_raise(b, need);
}

int cmd_bench(const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct bench_plan plan = {};
	struct bench_results res;
	struct bench b = {};
	int err, rc;
	double t0;

	if (o->nargs) {
		if (strcmp(o->args[0], "compare"))
			return fail(o, EXIT_USAGE, "bench: unexpected argument '%s' "
				    "(xnat bench compare DIR...)", o->args[0]);
		return cmd_bench_compare(o);
	}
	if (o->base)
		return fail(o, EXIT_USAGE, "--base applies to bench compare only");
	rc = prepare(o, &plan);
	if (rc)
		return rc;
	if (bench_results_init(&res, &plan))
		return fail(o, EXIT_SYSTEM, "out of memory");
	rc = bench_init(o, &b, &plan);
	if (rc) {
		bench_results_free(&res);
		return rc;
	}
	/* No SA_RESTART: blocking calls return and the loops see the flag. */
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	stamp(&res);
	t0 = bench_now();

	bench_progress("xnat bench: %s; namespaces %s, %s, %s; results in %s/",
		       plan.quick ? "quick" : "full", b.ns_name[NS_LAN],
		       b.ns_name[NS_RTR], b.ns_name[NS_WAN], plan.out_dir);
	err = bench_testbed_up(&b);
	if (err)
		bench_progress("testbed setup failed");
	if (!err) {
		record_ports(&b, &res);
		raise_conntrack(&b, &plan);
	}
	if (!err && !bench_stop)
		err = bench_measure(&b, &res);

	res.interrupted = bench_stop || err;
	res.elapsed_s = bench_now() - t0;
	bench_progress("removing the testbed");
	bench_teardown(&b);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	rc = finish(o, &plan, &res, err);
	bench_results_free(&res);
	return rc;
}
