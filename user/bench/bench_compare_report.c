// SPDX-License-Identifier: GPL-2.0-only
/*
 * What `xnat bench compare` prints (bench_compare.h): each run's
 * provenance, the procedure warnings, then a table a kind of figure, a
 * line a profile and row, with its ratio to the base row; or all of it as
 * one JSON document (--json).
 */
#include <stdio.h>
#include <string.h>
#include "bench_compare.h"
#include "json.h"

static const char *str_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "unknown";
}

/* "2:xdp-nat" */
static void row_name(char *buf, size_t len, const struct cmp_table *t, int row)
{
	snprintf(buf, len, "%d:%s", t->rows[row].run + 1, t->rows[row].mode);
}

/* A run's figures of the tester and its ports, one line. */
static void tester_line(FILE *f, json_t *tester)
{
	json_t *mem = json_object_get(tester, "memory_bytes"),
	       *cpus = json_object_get(tester, "cpus"), *ports, *p;
	size_t i;

	fprintf(f, "  tester: %s, %s", str_of(tester, "hostname"),
		str_of(tester, "cpu_model"));
	if (json_is_integer(cpus))
		fprintf(f, " x %lld", (long long)json_integer_value(cpus));
	if (json_is_number(mem))
		fprintf(f, ", %.1f GiB", json_number_value(mem) / (1024.0 * 1024 * 1024));
	fprintf(f, ", Linux %s\n", str_of(tester, "kernel"));
	ports = json_object_get(tester, "ports");
	if (!json_array_size(ports))
		return;
	fprintf(f, "  ports:");
	json_array_foreach(ports, i, p)
		fprintf(f, "%s %s %s (%s %s)", i ? "," : "", str_of(p, "role"),
			str_of(p, "ifname"), str_of(p, "driver"), str_of(p, "version"));
	fprintf(f, "\n");
}

/* The procedure's numbers, "key value" each. */
static void procedure_line(FILE *f, json_t *proc)
{
	const char *key;
	json_t *v;
	int n = 0;

	fprintf(f, "  procedure:");
	json_object_foreach(proc, key, v)
		if (json_is_number(v))
			fprintf(f, "%s %s %g", n++ ? "," : "", key, json_number_value(v));
	fprintf(f, "%s\n", n ? "" : " not stated");
}

static void runs_text(FILE *f, const struct cmp_table *t)
{
	char base[96];

	row_name(base, sizeof(base), t, t->base);
	fprintf(f, "xnat bench compare: %d run%s; ratios are of medians, to %s\n",
		t->n_runs, t->n_runs == 1 ? "" : "s", base);
	for (int r = 0; r < t->n_runs; r++) {
		json_t *doc = t->runs[r].doc;

		fprintf(f, "run %d: %s\n  %s, xnat %s, %s\n", r + 1, t->runs[r].file,
			str_of(doc, "date"), str_of(doc, "xnat_version"),
			str_of(doc, "command"));
		tester_line(f, t->runs[r].tester);
		procedure_line(f, t->runs[r].procedure);
	}
}

void cmp_report_warnings(FILE *f, const struct cmp_table *t)
{
	for (int i = 0; i < t->n_warn; i++) {
		const struct cmp_warning *w = &t->warn[i];
		int n = 0;

		fprintf(f, "xnat bench compare: warning: the runs differ in %s:", w->field);
		for (int r = 0; r < t->n_runs; r++)
			if (w->values[r])
				fprintf(f, "%s run %d %s", n++ ? ";" : "", r + 1, w->values[r]);
		fprintf(f, "\n");
	}
}

/* "0.512 (0.50-0.52)" in the metric's shown unit; "missing". */
static void value_text(char *buf, size_t len, const struct cmp_metric_info *mi,
		       struct cmp_value v)
{
	char m[32], lo[32], hi[32];

	if (!v.n) {
		snprintf(buf, len, "missing");
		return;
	}
	snprintf(m, sizeof(m), mi->fmt, v.med * mi->scale);
	if (v.n == 1 || v.min == v.max) {
		snprintf(buf, len, "%s", m);
		return;
	}
	snprintf(lo, sizeof(lo), mi->fmt, v.min * mi->scale);
	snprintf(hi, sizeof(hi), mi->fmt, v.max * mi->scale);
	snprintf(buf, len, "%s (%s-%s)", m, lo, hi);
}

static void metric_text(FILE *f, const struct cmp_table *t, enum cmp_metric m)
{
	const struct cmp_metric_info *mi = &cmp_metrics[m];
	char base[96], name[96], val[128], ratio[32];
	bool any = false;

	for (int k = 0; k < t->n_keys; k++)
		any |= t->keys[k].metric == m;
	if (!any)
		return;
	row_name(base, sizeof(base), t, t->base);
	fprintf(f, "\n%s, %s: median (min-max), ratio to %s\n%-16s %-24s %-26s %s\n",
		mi->title, mi->shown, base, "profile", "row", mi->shown, "ratio");
	for (int k = 0; k < t->n_keys; k++) {
		bool first = true;

		if (t->keys[k].metric != m)
			continue;
		for (int r = 0; r < t->n_rows; r++) {
			double x;

			/* A row without this kind of figure at all is not
			 * missing a profile: it did not run the test. */
			if (!cmp_row_has_metric(t, r, m))
				continue;
			row_name(name, sizeof(name), t, r);
			value_text(val, sizeof(val), mi, cmp_get(t, r, k));
			if (cmp_ratio(t, r, k, &x))
				snprintf(ratio, sizeof(ratio), "%.2f", x);
			else
				snprintf(ratio, sizeof(ratio), "-");
			fprintf(f, "%-16s %-24s %-26s %s\n", first ? t->keys[k].profile : "",
				name, val, ratio);
			first = false;
		}
	}
}

void cmp_report_text(FILE *f, const struct cmp_table *t)
{
	runs_text(f, t);
	if (t->n_warn) {
		fprintf(f, "\n");
		cmp_report_warnings(f, t);
	}
	for (int m = 0; m < CM_MAX; m++)
		metric_text(f, t, m);
}

/* ---- JSON ------------------------------------------------------------------ */

/* A jansson value through our writer (the document is ours end to end). */
static void emit_value(struct json_writer *w, const char *key, json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		jsonw_obj_begin(w, key);
		json_object_foreach(v, k, x)
			emit_value(w, k, x);
		jsonw_obj_end(w);
		break;
	case JSON_ARRAY:
		jsonw_arr_begin(w, key);
		json_array_foreach(v, i, x)
			emit_value(w, NULL, x);
		jsonw_arr_end(w);
		break;
	case JSON_STRING:
		jsonw_str(w, key, json_string_value(v));
		break;
	case JSON_INTEGER:
		jsonw_i64(w, key, json_integer_value(v));
		break;
	case JSON_REAL:
		jsonw_double(w, key, json_real_value(v));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		jsonw_bool(w, key, json_is_true(v));
		break;
	default:
		jsonw_null(w, key);
	}
}

static void runs_json(struct json_writer *w, const struct cmp_table *t)
{
	jsonw_arr_begin(w, "runs");
	for (int r = 0; r < t->n_runs; r++) {
		json_t *doc = t->runs[r].doc;

		jsonw_obj_begin(w, NULL);
		jsonw_i64(w, "run", r + 1);
		jsonw_str(w, "arg", t->runs[r].arg);
		jsonw_str(w, "file", t->runs[r].file);
		emit_value(w, "format", json_object_get(doc, "format"));
		emit_value(w, "date", json_object_get(doc, "date"));
		emit_value(w, "command", json_object_get(doc, "command"));
		emit_value(w, "xnat_version", json_object_get(doc, "xnat_version"));
		emit_value(w, "complete", json_object_get(doc, "complete"));
		emit_value(w, "tester", t->runs[r].tester);
		emit_value(w, "procedure", t->runs[r].procedure);
		jsonw_arr_begin(w, "modes");
		for (int i = 0; i < t->n_rows; i++)
			if (t->rows[i].run == r)
				jsonw_str(w, NULL, t->rows[i].mode);
		jsonw_arr_end(w);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
}

static void warnings_json(struct json_writer *w, const struct cmp_table *t)
{
	jsonw_arr_begin(w, "warnings");
	for (int i = 0; i < t->n_warn; i++) {
		jsonw_obj_begin(w, NULL);
		jsonw_str(w, "field", t->warn[i].field);
		jsonw_arr_begin(w, "values");
		for (int r = 0; r < t->n_runs; r++) {
			if (!t->warn[i].values[r])
				continue;
			jsonw_obj_begin(w, NULL);
			jsonw_i64(w, "run", r + 1);
			jsonw_str(w, "value", t->warn[i].values[r]);
			jsonw_obj_end(w);
		}
		jsonw_arr_end(w);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
}

/* One value of the figures: the row's, its ratio, or missing. */
static void cell_json(struct json_writer *w, const struct cmp_table *t,
		      int r, int k)
{
	struct cmp_value v = cmp_get(t, r, k);
	double x;

	jsonw_obj_begin(w, NULL);
	jsonw_i64(w, "run", t->rows[r].run + 1);
	jsonw_str(w, "mode", t->rows[r].mode);
	jsonw_bool(w, "missing", !v.n);
	if (v.n) {
		jsonw_obj_begin(w, "value");
		jsonw_double(w, "median", v.med);
		jsonw_double(w, "min", v.min);
		jsonw_double(w, "max", v.max);
		jsonw_i64(w, "n", v.n);
		jsonw_obj_end(w);
	} else {
		jsonw_null(w, "value");
	}
	if (cmp_ratio(t, r, k, &x))
		jsonw_double(w, "ratio", x);
	else
		jsonw_null(w, "ratio");
	jsonw_obj_end(w);
}

static void figures_json(struct json_writer *w, const struct cmp_table *t)
{
	jsonw_arr_begin(w, "figures");
	for (int k = 0; k < t->n_keys; k++) {
		enum cmp_metric m = t->keys[k].metric;

		jsonw_obj_begin(w, NULL);
		jsonw_str(w, "metric", cmp_metrics[m].key);
		jsonw_str(w, "unit", cmp_metrics[m].unit);
		jsonw_str(w, "profile", t->keys[k].profile);
		jsonw_arr_begin(w, "rows");
		for (int r = 0; r < t->n_rows; r++)
			if (cmp_row_has_metric(t, r, m))
				cell_json(w, t, r, k);
		jsonw_arr_end(w);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
}

void cmp_report_json(FILE *f, const struct cmp_table *t, bool pretty)
{
	struct json_writer w;

	jsonw_init(&w, f, pretty);
	jsonw_obj_begin(&w, NULL);
	jsonw_str(&w, "tool", "xnat bench compare");
	jsonw_i64(&w, "format", 1);
	jsonw_obj_begin(&w, "base");
	jsonw_i64(&w, "run", t->rows[t->base].run + 1);
	jsonw_str(&w, "mode", t->rows[t->base].mode);
	jsonw_obj_end(&w);
	jsonw_str(&w, "ratio", "row's median over the base row's, same metric and profile");
	runs_json(&w, t);
	warnings_json(&w, t);
	figures_json(&w, t);
	jsonw_obj_end(&w);
	jsonw_done(&w);
}
