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
#include <stdbool.h>
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

/* The data file's first column of mode M's (median, min, max). */
static int mode_column(const struct bench_plan *p, int m)
{
	int col = 2;

	for (int i = 0; i < m; i++)
		if (bench_plan_has_mode(p, i))
			col += 3;
	return col;
}

/*
 * The gnuplot script GP drawing DAT into PNG: bars with min-max. The drop
 * mode (what XDP_DROP took, several times any forwarding rate) gets its
 * own panel and axis on the right, so it does not flatten the others.
 */
static int write_script(const char *gp, const char *dat, const char *png,
			const struct bench_plan *p, struct bench_results *r)
{
	bool drop = bench_plan_has_mode(p, BM_DROP);
	FILE *f = fopen(gp, "we");
	int first = 1;

	if (!f)
		return -errno;
	fprintf(f, "# written by xnat bench: gnuplot %s\n"
		   "set terminal png size 1400,700 font ',10'\n"
		   "set output '%s'\n"
		   "set multiplot title \"xnat bench %s, %s, Linux %s: UDP forwarded Mpps "
		   "per mode and profile (median, bars min-max, %d rep%s)\"\n"
		   "set ylabel 'Mpps'\n"
		   "set yrange [0:*]\n"
		   "set grid ytics\n"
		   "set key inside left top\n"
		   "set style data histogram\n"
		   "set style histogram errorbars gap 2 lw 1\n"
		   "set style fill solid 0.8 border -1\n"
		   "set xtics rotate by -30\n"
		   "set origin 0,0\n"
		   "set size %s,0.95\n"
		   "set title 'forwarding modes'\n"
		   "plot ",
		gp, png, r->date, r->xnat_version, r->kernel, p->reps,
		p->reps == 1 ? "" : "s", drop ? "0.78" : "1");
	for (int m = 0; m < BM_MAX; m++) {
		int col = mode_column(p, m);

		if (m == BM_DROP || !bench_plan_has_mode(p, m))
			continue;
		fprintf(f, "%s'%s' using %d:%d:%d%s title '%s'", first ? "" : ", ",
			dat, col, col + 1, col + 2, first ? ":xtic(1)" : "",
			bench_mode_names[m]);
		first = 0;
	}
	if (first) /* drop only: an empty left panel would not plot */
		fprintf(f, "NaN notitle");
	fprintf(f, "\n");
	if (drop) {
		int col = mode_column(p, BM_DROP);

		fprintf(f, "set origin 0.78,0\n"
			   "set size 0.22,0.95\n"
			   "set title \"drop: what XDP\\\\_DROP took\\n"
			   "(the chain's floor; own axis)\"\n"
			   "set ylabel 'Mpps (drop)'\n"
			   "set key off\n"
			   "plot '%s' using %d:%d:%d:xtic(1) lc rgb 'gray50' title 'drop'\n",
			dat, col, col + 1, col + 2);
	}
	fprintf(f, "unset multiplot\n");
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
