// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bench's plot: forwarded pps per mode and profile, a data file and a
 * gnuplot script in the results directory, drawn to a PNG when gnuplot is
 * installed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "bench_aggregate.h"
#include "log.h"

extern char **environ;

/* One row per profile; per mode: median, min, max in Mpps. */
static int write_data(const char *dat, const struct bench_plan *p,
		      struct bench_results *r)
{
	FILE *f = fopen(dat, "we");

	if (!f)
		return -errno;
	fprintf(f, "# profile");
	for (int m = 0; m < BM_MAX; m++)
		if (bench_plan_has_mode(p, m))
			fprintf(f, " %s(med min max)", bench_mode_names[m]);
	fprintf(f, "\n");
	for (int pi = 0; pi < p->n_profiles; pi++) {
		fprintf(f, "\"%s\"", p->profiles[pi].name);
		for (int m = 0; m < BM_MAX; m++) {
			struct agg a;

			if (!bench_plan_has_mode(p, m))
				continue;
			/* drop: the chain's rate, what the router's XDP took. */
			a = cell_agg(p, r, m, pi, m == BM_DROP ? CS_CHAIN_PPS : CS_MAX);
			a.med /= 1e6;
			a.min /= 1e6;
			a.max /= 1e6;
			fprintf(f, " %.4f %.4f %.4f", a.n ? a.med : 0, a.n ? a.min : 0,
				a.n ? a.max : 0);
		}
		fprintf(f, "\n");
	}
	return fclose(f) ? -errno : 0;
}

/* The gnuplot script GP drawing DAT into PNG: bars with min-max. */
static int write_script(const char *gp, const char *dat, const char *png,
			const struct bench_plan *p, struct bench_results *r)
{
	int first = 1, col = 2;
	FILE *f = fopen(gp, "we");

	if (!f)
		return -errno;
	fprintf(f, "# written by xnat bench: gnuplot %s\n"
		   "set terminal png size 1400,700 font ',10'\n"
		   "set output '%s'\n"
		   "set title \"xnat bench %s: UDP forwarded Mpps per mode and profile "
		   "(median, bars min-max, %d rep%s; drop: what XDP\\\\_DROP took)\"\n"
		   "set ylabel 'Mpps'\n"
		   "set yrange [0:*]\n"
		   "set grid ytics\n"
		   "set key outside right top\n"
		   "set style data histogram\n"
		   "set style histogram errorbars gap 2 lw 1\n"
		   "set style fill solid 0.8 border -1\n"
		   "set xtics rotate by -30\n"
		   "plot ",
		gp, png, r->date, p->reps, p->reps == 1 ? "" : "s");
	for (int m = 0; m < BM_MAX; m++) {
		if (!bench_plan_has_mode(p, m))
			continue;
		fprintf(f, "%s'%s' using %d:%d:%d%s title '%s'", first ? "" : ", ",
			first ? dat : "", col, col + 1, col + 2,
			first ? ":xtic(1)" : "", bench_mode_names[m]);
		first = 0;
		col += 3;
	}
	fprintf(f, "\n");
	return fclose(f) ? -errno : 0;
}

/* Run gnuplot on GP, bounded to 30 s. */
static int run_gnuplot(const char *gp, const char *png)
{
	const char *argv[] = { "gnuplot", gp, NULL };
	posix_spawn_file_actions_t fa;
	int st, err;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(&pid, "gnuplot", &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		pr_warn("xnat bench: cannot run gnuplot (%s); no %s\n", strerror(err), png);
		return -err;
	}
	for (int i = 0; i < 3000; i++) {   /* 30 s */
		if (waitpid(pid, &st, WNOHANG) == pid) {
			if (WIFEXITED(st) && !WEXITSTATUS(st))
				return 0;
			pr_warn("xnat bench: gnuplot failed; see %s\n", gp);
			return -EIO;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	pr_warn("xnat bench: gnuplot timed out; no %s\n", png);
	return -ETIMEDOUT;
}

int bench_report_plot(const struct bench_plan *p, struct bench_results *r,
		      const char *out_dir)
{
	char dat[512], gp[512], png[512];
	int err;

	snprintf(dat, sizeof(dat), "%s/bench.dat", out_dir);
	snprintf(gp, sizeof(gp), "%s/bench.gp", out_dir);
	snprintf(png, sizeof(png), "%s/bench.png", out_dir);
	err = write_data(dat, p, r);
	if (!err)
		err = write_script(gp, dat, png, p, r);
	return err ? err : run_gnuplot(gp, png);
}
