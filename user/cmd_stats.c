// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat stats: the per-CPU counters of the data path, summed, one line per
 * reason with what it means. With -w S it refreshes every S seconds and
 * shows rates over the last interval. In kernel mode, where no XDP program
 * counts, the counters are those of the rules of xnat's nftables table,
 * with the kernel's conntrack fill.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cmd.h"
#include "json.h"
#include "loader.h"
#include "metrics.h"
#include "nft_table.h"
#include "percpu.h"
#include "pins.h"
#include "reasons.h"
#include "state.h"

static int read_counters(int fd, struct xnat_counter *sum)
{
	int err;

	/* A reason the map does not have (an older program) reads as 0. */
	for (__u32 r = 0; r < XNAT_REASON_MAX; r++) {
		err = percpu_counter_sum(fd, r, &sum[r]);
		if (err && err != -ENOENT)
			return err;
	}
	return 0;
}

static void print_json(const struct xnat_counter *sum)
{
	json_obj_begin(NULL);
	json_obj_begin("counters");
	for (int r = 0; r < XNAT_REASON_MAX; r++) {
		json_obj_begin(reasons[r].name);
		json_u64("packets", sum[r].packets);
		json_u64("bytes", sum[r].bytes);
		json_obj_end();
	}
	json_obj_end();
	json_obj_end();
	json_done();
}

/* Zero rows are left out: they say nothing and hide what does. */
static void print_text(const struct xnat_counter *sum,
		       const struct xnat_counter *prev, double interval)
{
	__u64 total = 0;

	for (int r = 0; r < XNAT_REASON_MAX; r++)
		total += sum[r].packets;
	printf("%-20s %14s %16s %7s  %s\n", "counter", "packets", "bytes",
	       prev ? "pps" : "share", "meaning");
	for (int r = 0; r < XNAT_REASON_MAX; r++) {
		if (!sum[r].packets)
			continue;
		printf("%-20s %14llu %16llu ", reasons[r].name,
		       (unsigned long long)sum[r].packets,
		       (unsigned long long)sum[r].bytes);
		if (prev)
			printf("%7.0f", (sum[r].packets - prev[r].packets) / interval);
		else
			printf("%6.1f%%", 100.0 * sum[r].packets / total);
		printf("  %s\n", reasons[r].meaning);
	}
	printf("%-20s %14llu\n", "total", (unsigned long long)total);
}

/* --format prometheus: one document, for node_exporter's textfile
 * collector (write it to a temporary file and rename it into place). */
static int stats_prometheus(const struct opts *o)
{
	char err[256];

	if (o->watch > 0)
		return fail(o, EXIT_USAGE, "stats: --format prometheus prints one "
			    "document; -w does not apply (serve it with xnat "
			    "metrics --listen)");
	if (metrics_write(stdout, err, sizeof(err)))
		return fail(o, EXIT_SYSTEM, "stats: %s", err);
	return fflush(stdout) ? EXIT_SYSTEM : EXIT_OK;
}

/* A number from /proc/sys, or -1. */
static long long proc_sys_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void print_kernel_json(const struct nft_rule_counter *r, int n)
{
	long long ct = proc_sys_ll("/proc/sys/net/netfilter/nf_conntrack_count");
	long long ct_max = proc_sys_ll("/proc/sys/net/netfilter/nf_conntrack_max");

	json_obj_begin(NULL);
	json_str("mode", "kernel");
	json_arr_begin("nft");
	for (int i = 0; i < n; i++) {
		json_obj_begin(NULL);
		json_str("chain", r[i].chain);
		json_str("rule", r[i].rule);
		json_u64("packets", r[i].packets);
		json_u64("bytes", r[i].bytes);
		json_obj_end();
	}
	json_arr_end();
	json_obj_begin("conntrack");
	json_i64("entries", ct);
	json_i64("max", ct_max);
	json_obj_end();
	json_obj_end();
	json_done();
}

/* PREV (same rules, in the same order) gives rates over INTERVAL. */
static void print_kernel_text(const struct nft_rule_counter *r, int n,
			      const struct nft_rule_counter *prev, int n_prev,
			      double interval)
{
	printf("%-12s %14s %16s %7s  %s\n", "chain", "packets", "bytes",
	       prev ? "pps" : "", "rule (nft table inet xnat)");
	for (int i = 0; i < n; i++) {
		printf("%-12s %14llu %16llu ", r[i].chain,
		       (unsigned long long)r[i].packets,
		       (unsigned long long)r[i].bytes);
		if (prev && i < n_prev && !strcmp(prev[i].rule, r[i].rule))
			printf("%7.0f", (r[i].packets - prev[i].packets) / interval);
		else
			printf("%7s", "");
		printf("  %s\n", r[i].rule);
	}
	printf("conntrack: %lld of %lld entries\n",
	       proc_sys_ll("/proc/sys/net/netfilter/nf_conntrack_count"),
	       proc_sys_ll("/proc/sys/net/netfilter/nf_conntrack_max"));
}

/* --watch: text screens apart by a blank line. */
static void stats_wait(const struct opts *o)
{
	watch_interval(o);
	if (!o->json)
		printf("\n");
}

/* Kernel mode: the counters of xnat's nft rules. */
static int stats_kernel(const struct opts *o)
{
	struct nft_rule_counter *r = NULL, *prev = NULL;
	int n, n_prev = 0;

	for (;;) {
		n = nft_table_counters(&r);
		if (n < 0) {
			free(prev);
			return fail(o, EXIT_SYSTEM, "no counters in table inet xnat: %s",
				    n == -ENOENT ? "the table is gone (xnat status)" :
				    strerror(-n));
		}
		if (o->json)
			print_kernel_json(r, n);
		else
			print_kernel_text(r, n, prev, n_prev, o->watch);
		free(prev);
		prev = r;
		n_prev = n;
		if (o->watch <= 0)
			break;
		stats_wait(o);
	}
	free(prev);
	return EXIT_OK;
}

int cmd_stats(const struct opts *o)
{
	struct xnat_counter sum[XNAT_REASON_MAX], prev[XNAT_REASON_MAX];
	int fd, ret, first = 1;

	if (o->format && !strcmp(o->format, "prometheus"))
		return stats_prometheus(o);
	if (o->format && strcmp(o->format, "text") && strcmp(o->format, "json"))
		return fail(o, EXIT_USAGE, "stats: --format '%s': expected text, "
			    "json or prometheus", o->format);
	if (o->format && !strcmp(o->format, "json")) {
		struct opts j = *o;

		j.json = true;
		j.format = NULL;
		return cmd_stats(&j);
	}
	fd = cmd_map_open(o, MAP_STATS, "no counters: xnat is not up in xdp or "
			  "offload mode here", stats_kernel, &ret);
	if (fd < 0)
		return ret;
	for (;;) {
		if (read_counters(fd, sum)) {
			close(fd);
			return fail(o, EXIT_SYSTEM, "failed to read counters");
		}
		if (o->json)
			print_json(sum);
		else
			print_text(sum, first ? NULL : prev, o->watch);
		if (o->watch <= 0)
			break;
		memcpy(prev, sum, sizeof(sum));
		first = 0;
		stats_wait(o);
	}
	close(fd);
	return EXIT_OK;
}
