// SPDX-License-Identifier: GPL-2.0-only
/*
 * The table of `xnat bench compare` (bench_compare.h): runs, rows (a run's
 * mode), keys (a figure of a profile) and the grid of figures between
 * them, each row's ratio to the base row, and the procedure warnings.
 * Nothing here reads a file: the unit tests fill it by hand.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_compare.h"
#include "grow.h"

const struct cmp_metric_info cmp_metrics[CM_MAX] = {
	[CM_UDP_MAX_PPS] = { "udp_max_pps", "UDP forwarded at saturation",
			     "pps", "Mpps", 1e-6, "%.3f" },
	[CM_UDP_NOLOSS_PPS] = { "udp_noloss_pps", "UDP loss-free rate (offered)",
				"pps", "Mpps", 1e-6, "%.3f" },
	[CM_NEWFLOW_FPS] = { "newflow_flows_per_s", "New flows set up",
			     "flows/s", "k flows/s", 1e-3, "%.0f" },
	[CM_TCP_MBPS] = { "tcp_mbps", "TCP goodput", "Mbit/s", "Mbit/s", 1, "%.0f" },
	[CM_TCP_PING_P50] = { "tcp_ping_p50_ms", "TCP ping under load, p50",
			      "ms", "ms", 1, "%.3g" },
	[CM_TCP_PING_P99] = { "tcp_ping_p99_ms", "TCP ping under load, p99",
			      "ms", "ms", 1, "%.3g" },
};

void cmp_table_init(struct cmp_table *t)
{
	memset(t, 0, sizeof(*t));
}

void cmp_table_free(struct cmp_table *t)
{
	for (int i = 0; i < t->n_runs; i++) {
		free(t->runs[i].arg);
		free(t->runs[i].file);
		json_decref(t->runs[i].doc);
		json_decref(t->runs[i].tester);
		json_decref(t->runs[i].procedure);
	}
	for (int i = 0; i < t->n_rows; i++)
		free(t->rows[i].mode);
	for (int i = 0; i < t->n_keys; i++)
		free(t->keys[i].profile);
	for (int i = 0; i < t->n_warn; i++) {
		for (int r = 0; r < t->n_runs; r++)
			free(t->warn[i].values[r]);
		free(t->warn[i].values);
		free(t->warn[i].field);
	}
	free(t->runs);
	free(t->rows);
	free(t->keys);
	free(t->v);
	free(t->warn);
	memset(t, 0, sizeof(*t));
}

int cmp_run_add(struct cmp_table *t, const char *arg, const char *file,
		json_t *doc)
{
	struct cmp_run *r;

	if (grow_for(&t->runs, sizeof(*t->runs), t->n_runs, &t->cap_runs, 4)) {
		json_decref(doc);
		return -1;
	}
	r = &t->runs[t->n_runs];
	memset(r, 0, sizeof(*r));
	r->arg = strdup(arg);
	r->file = strdup(file);
	r->doc = doc;
	if (!r->arg || !r->file) {
		free(r->arg);
		free(r->file);
		json_decref(doc);
		return -1;
	}
	return t->n_runs++;
}

/* Room in the grid for row R and key K, keeping what it holds. */
static int grid_fit(struct cmp_table *t, int r, int k)
{
	int rows = t->cap_v_rows, keys = t->cap_v_keys;
	struct cmp_value *v;

	if (r < rows && k < keys)
		return 0;
	while (r >= rows)
		rows = rows ? 2 * rows : 8;
	while (k >= keys)
		keys = keys ? 2 * keys : 32;
	v = calloc((size_t)rows * keys, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int i = 0; i < t->cap_v_rows; i++)
		memcpy(v + (size_t)i * keys, t->v + (size_t)i * t->cap_v_keys,
		       t->cap_v_keys * sizeof(*v));
	free(t->v);
	t->v = v;
	t->cap_v_rows = rows;
	t->cap_v_keys = keys;
	return 0;
}

int cmp_row_get(struct cmp_table *t, int run, const char *mode)
{
	struct cmp_row *row;

	for (int i = 0; i < t->n_rows; i++)
		if (t->rows[i].run == run && !strcmp(t->rows[i].mode, mode))
			return i;
	if (grow_for(&t->rows, sizeof(*t->rows), t->n_rows, &t->cap_rows, 8) ||
	    grid_fit(t, t->n_rows, 0))
		return -1;
	row = &t->rows[t->n_rows];
	row->run = run;
	row->mode = strdup(mode);
	return row->mode ? t->n_rows++ : -1;
}

int cmp_key_get(struct cmp_table *t, enum cmp_metric metric,
		const char *profile)
{
	struct cmp_key *key;

	for (int i = 0; i < t->n_keys; i++)
		if (t->keys[i].metric == metric &&
		    !strcmp(t->keys[i].profile, profile))
			return i;
	if (grow_for(&t->keys, sizeof(*t->keys), t->n_keys, &t->cap_keys, 32) ||
	    grid_fit(t, 0, t->n_keys))
		return -1;
	key = &t->keys[t->n_keys];
	key->metric = metric;
	key->profile = strdup(profile);
	return key->profile ? t->n_keys++ : -1;
}

int cmp_set(struct cmp_table *t, int run, const char *mode,
	    enum cmp_metric metric, const char *profile, struct cmp_value v)
{
	int r = cmp_row_get(t, run, mode), k;

	if (r < 0)
		return -ENOMEM;
	k = cmp_key_get(t, metric, profile);
	if (k < 0)
		return -ENOMEM;
	t->v[(size_t)r * t->cap_v_keys + k] = v;
	return 0;
}

struct cmp_value cmp_get(const struct cmp_table *t, int row, int key)
{
	if (row < 0 || row >= t->n_rows || key < 0 || key >= t->n_keys)
		return (struct cmp_value){ 0 };
	return t->v[(size_t)row * t->cap_v_keys + key];
}

bool cmp_ratio(const struct cmp_table *t, int row, int key, double *ratio)
{
	struct cmp_value a = cmp_get(t, row, key), b = cmp_get(t, t->base, key);

	if (!a.n || !b.n || !(b.med > 0))
		return false;
	*ratio = a.med / b.med;
	return true;
}

bool cmp_row_has_metric(const struct cmp_table *t, int row,
			enum cmp_metric metric)
{
	for (int k = 0; k < t->n_keys; k++)
		if (t->keys[k].metric == metric && cmp_get(t, row, k).n)
			return true;
	return false;
}

/* The run SPEC names: its number from 1, or its argument as given. */
static int run_named(const struct cmp_table *t, const char *spec, size_t len)
{
	char *end;
	long n = strtol(spec, &end, 10);

	if (end == spec + len && len && n >= 1 && n <= t->n_runs)
		return (int)n - 1;
	for (int i = 0; i < t->n_runs; i++)
		if (strlen(t->runs[i].arg) == len && !strncmp(t->runs[i].arg, spec, len))
			return i;
	return -1;
}

int cmp_base_set(struct cmp_table *t, const char *spec, char *err,
		 size_t errlen)
{
	const char *colon;
	int run;

	if (!t->n_rows) {
		snprintf(err, errlen, "no results to compare in the runs given");
		return -1;
	}
	if (!spec) {
		t->base = 0;
		return 0;
	}
	/* The last colon: a run's directory may hold one, a mode does not. */
	colon = strrchr(spec, ':');
	if (!colon || colon == spec || !colon[1]) {
		snprintf(err, errlen, "--base: '%s' is not RUN:MODE (e.g. 1:kernel-nat)",
			 spec);
		return -1;
	}
	run = run_named(t, spec, colon - spec);
	if (run < 0) {
		snprintf(err, errlen, "--base: no run '%.*s' (a number from 1 to %d, or a "
			 "directory as given)", (int)(colon - spec), spec, t->n_runs);
		return -1;
	}
	for (int i = 0; i < t->n_rows; i++)
		if (t->rows[i].run == run && !strcmp(t->rows[i].mode, colon + 1)) {
			t->base = i;
			return 0;
		}
	snprintf(err, errlen, "--base: run %d has no results for mode '%s'",
		 run + 1, colon + 1);
	return -1;
}

int cmp_warn_add(struct cmp_table *t, const char *field,
		 const char *const *values)
{
	struct cmp_warning *w;

	if (grow_for(&t->warn, sizeof(*t->warn), t->n_warn, &t->cap_warn, 8))
		return -ENOMEM;
	w = &t->warn[t->n_warn];
	w->field = strdup(field);
	w->values = calloc(t->n_runs ?: 1, sizeof(*w->values));
	if (!w->field || !w->values) {
		free(w->field);
		free(w->values);
		return -ENOMEM;
	}
	for (int r = 0; r < t->n_runs; r++)
		if (values[r] && !(w->values[r] = strdup(values[r]))) {
			while (r--)
				free(w->values[r]);
			free(w->values);
			free(w->field);
			return -ENOMEM;
		}
	t->n_warn++;
	return 0;
}
