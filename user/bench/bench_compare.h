/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `xnat bench compare DIR...`: several runs' bench.json in one table. A
 * row is one mode of one run ("2:xdp-nat"; an external device's rows have
 * its label as their mode), a key one figure of one profile ("UDP
 * forwarded pps" of "64B/10k/up"); rows are lined up by key, so that each
 * figure sits beside the same profile's figure of every other row, with
 * its ratio to a base row's. Where the runs' procedures differ (trial
 * length, loss criterion, repetitions, the tester's kernel or ports...),
 * a warning says so, since their ratios then compare two methods as much
 * as two routers.
 *
 * bench_compare.c keeps the table (rows, keys, values, ratios: pure, for
 * the unit tests), bench_compare_load.c reads the documents into it and
 * finds the procedure differences, bench_compare_report.c prints it.
 */
#ifndef XNAT_BENCH_COMPARE_H
#define XNAT_BENCH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

/* The kinds of figure compare lines up, in the order it prints them. */
enum cmp_metric {
	CM_UDP_MAX_PPS = 0,   /* results[].max_pps */
	CM_UDP_NOLOSS_PPS,    /* results[].noloss_pps */
	CM_NEWFLOW_FPS,       /* newflow.results[].flows_per_s */
	CM_TCP_MBPS,          /* tcp.results[].mbps */
	CM_TCP_PING_P50,      /* tcp.results[].ping.p50_ms */
	CM_TCP_PING_P99,      /* tcp.results[].ping.p99_ms */
	CM_MAX,
};

struct cmp_metric_info {
	const char *key;      /* stable: the JSON output's "metric" */
	const char *title;
	const char *unit;     /* of the JSON's values */
	const char *shown;    /* of the text's values: unit * scale */
	double scale;
	const char *fmt;      /* printf of a shown value */
};

extern const struct cmp_metric_info cmp_metrics[CM_MAX];

/* A figure over repetitions, as bench.json has it; n 0: missing. */
struct cmp_value {
	int n;
	double med, min, max;
};

struct cmp_row {
	int run;              /* index into the table's runs */
	char *mode;
};

struct cmp_key {
	enum cmp_metric metric;
	char *profile;        /* "64B/10k/up", "tcp-8-down", "1000000 flows" */
};

/* One run: where it came from and what bench.json says of it. */
struct cmp_run {
	char *arg;            /* as given on the command line */
	char *file;           /* the bench.json read */
	json_t *doc;
	json_t *tester;       /* "tester", or one made of the old top level */
	json_t *procedure;    /* "procedure", or one made of "plan" */
};

/* Where two or more runs' procedures differ: FIELD and each run's value
 * (NULL where a run does not say). */
struct cmp_warning {
	char *field;
	char **values;        /* [n_runs] */
};

struct cmp_table {
	struct cmp_run *runs;
	int n_runs;
	size_t cap_runs;
	struct cmp_row *rows;
	int n_rows;
	size_t cap_rows;
	struct cmp_key *keys;
	int n_keys;
	size_t cap_keys;
	struct cmp_value *v;  /* [row * cap_v_keys + key] */
	int cap_v_rows, cap_v_keys;
	int base;             /* row the ratios are to */
	struct cmp_warning *warn;
	int n_warn;
	size_t cap_warn;
};

/* ---- the table (bench_compare.c) ---------------------------------------- */

void cmp_table_init(struct cmp_table *t);
void cmp_table_free(struct cmp_table *t);
/* Append a run (ARG as given, FILE read, DOC owned by the table from now
 * on): its index, or -1 when memory runs out. */
int cmp_run_add(struct cmp_table *t, const char *arg, const char *file,
		json_t *doc);
/* The row of MODE in RUN, made if new: its index, or -1 (no memory). */
int cmp_row_get(struct cmp_table *t, int run, const char *mode);
/* The key of METRIC on PROFILE, made if new: its index, or -1. */
int cmp_key_get(struct cmp_table *t, enum cmp_metric metric,
		const char *profile);
/* Set ROW's figure for KEY (by run, mode, metric and profile, made as
 * needed). 0, or -ENOMEM. */
int cmp_set(struct cmp_table *t, int run, const char *mode,
	    enum cmp_metric metric, const char *profile, struct cmp_value v);
/* ROW's figure for KEY (n 0: missing). */
struct cmp_value cmp_get(const struct cmp_table *t, int row, int key);
/* ROW's median over the base row's on KEY, into *RATIO: false where
 * either is missing or the base's is not positive. */
bool cmp_ratio(const struct cmp_table *t, int row, int key, double *ratio);
/* Has ROW any figure of METRIC? */
bool cmp_row_has_metric(const struct cmp_table *t, int row,
			enum cmp_metric metric);
/* Set the base row from "RUN:MODE" (RUN: the run's number from 1, or its
 * argument as given); NULL: the first row. 0, or -1 with ERR set. */
int cmp_base_set(struct cmp_table *t, const char *spec, char *err,
		 size_t errlen);
/* Record that FIELD differs: VALUES[n_runs] (NULL: not said), copied.
 * 0, or -ENOMEM. */
int cmp_warn_add(struct cmp_table *t, const char *field,
		 const char *const *values);

/* ---- reading runs (bench_compare_load.c) --------------------------------- */

/* Read ARG (a directory holding bench.json, or the file itself) as the
 * next run. 0; -errno when it cannot be read (ERR says which file); 1 when
 * it is not a bench document this version reads (ERR: file:line and
 * why). */
int cmp_load(struct cmp_table *t, const char *arg, char *err, size_t errlen);
/* Put DOC's figures into the table as run RUN. 0, or 1 with ERR set when
 * DOC is not a bench document. */
int cmp_extract(struct cmp_table *t, int run, json_t *doc, char *err,
		size_t errlen);
/* Compare every run's procedure and tester facts; a warning for each
 * field on which two runs differ. 0, or -ENOMEM. */
int cmp_find_differences(struct cmp_table *t);

/* ---- the report (bench_compare_report.c) --------------------------------- */

void cmp_report_text(FILE *f, const struct cmp_table *t);
void cmp_report_json(FILE *f, const struct cmp_table *t, bool pretty);
/* Each warning as one line to F ("xnat bench compare: warning: ..."). */
void cmp_report_warnings(FILE *f, const struct cmp_table *t);

#endif /* XNAT_BENCH_COMPARE_H */
