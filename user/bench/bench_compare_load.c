// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading runs for `xnat bench compare` (bench_compare.h): a directory's
 * bench.json, parsed with jansson; its figures into the table (UDP
 * results by mode and profile, new flows, TCP), its tester and procedure
 * kept (from the top level and "plan" for a document written before
 * bench.json had "tester" and "procedure"), and the fields on which the
 * runs' procedures differ.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "bench_compare.h"

/* The newest bench.json format this reader knows; a newer one may mean
 * what this one would misread. */
#define CMP_FORMAT_MAX 1

/* {median, min, max, n} as bench.json writes a figure; n 0 otherwise. */
static struct cmp_value agg_value(json_t *o)
{
	json_t *med = json_object_get(o, "median"), *n = json_object_get(o, "n");
	struct cmp_value v = { 0 };

	if (!json_is_object(o) || !json_is_number(med))
		return v;
	v.med = json_number_value(med);
	v.min = json_is_number(json_object_get(o, "min")) ?
		json_number_value(json_object_get(o, "min")) : v.med;
	v.max = json_is_number(json_object_get(o, "max")) ?
		json_number_value(json_object_get(o, "max")) : v.med;
	v.n = json_is_integer(n) ? (int)json_integer_value(n) : 1;
	return v.n > 0 ? v : (struct cmp_value){ 0 };
}

/* A percentile of a probe object ({n, p50_ms, ...}): one figure. */
static struct cmp_value pctl_value(json_t *o, const char *key)
{
	json_t *x = json_object_get(o, key), *n = json_object_get(o, "n");
	struct cmp_value v = { 0 };

	if (!json_is_object(o) || !json_is_number(x) || !json_is_integer(n) ||
	    json_integer_value(n) <= 0)
		return v;
	v.med = v.min = v.max = json_number_value(x);
	v.n = (int)json_integer_value(n);
	return v;
}

/* Set METRIC of (MODE, PROFILE) when V has a figure. */
static int put(struct cmp_table *t, int run, const char *mode,
	       enum cmp_metric m, const char *profile, struct cmp_value v)
{
	return v.n ? cmp_set(t, run, mode, m, profile, v) : 0;
}

static int extract_udp(struct cmp_table *t, int run, json_t *doc)
{
	json_t *results = json_object_get(doc, "results"), *r;
	size_t i;
	int err = 0;

	json_array_foreach(results, i, r) {
		const char *mode = json_string_value(json_object_get(r, "mode")),
			   *profile = json_string_value(json_object_get(r, "profile"));

		if (!mode || !profile)
			continue;
		err = put(t, run, mode, CM_UDP_MAX_PPS, profile,
			  agg_value(json_object_get(r, "max_pps"))) ?:
		      put(t, run, mode, CM_UDP_NOLOSS_PPS, profile,
			  agg_value(json_object_get(r, "noloss_pps")));
		if (err)
			break;
	}
	return err;
}

static int extract_newflow(struct cmp_table *t, int run, json_t *doc)
{
	json_t *nf = json_object_get(doc, "newflow"), *r;
	json_t *flows = json_object_get(nf, "flows");
	char profile[48];
	size_t i;
	int err = 0;

	snprintf(profile, sizeof(profile), "%lld flows",
		 json_is_integer(flows) ? (long long)json_integer_value(flows) : 0LL);
	json_array_foreach(json_object_get(nf, "results"), i, r) {
		const char *mode = json_string_value(json_object_get(r, "mode"));

		if (mode && (err = put(t, run, mode, CM_NEWFLOW_FPS, profile,
				       agg_value(json_object_get(r, "flows_per_s")))))
			break;
	}
	return err;
}

static int extract_tcp(struct cmp_table *t, int run, json_t *doc)
{
	json_t *r;
	size_t i;
	int err = 0;

	json_array_foreach(json_object_get(json_object_get(doc, "tcp"), "results"), i, r) {
		const char *mode = json_string_value(json_object_get(r, "mode")),
			   *test = json_string_value(json_object_get(r, "test"));
		json_t *ping = json_object_get(r, "ping");

		if (!mode || !test)
			continue;
		err = put(t, run, mode, CM_TCP_MBPS, test,
			  agg_value(json_object_get(r, "mbps"))) ?:
		      put(t, run, mode, CM_TCP_PING_P50, test, pctl_value(ping, "p50_ms")) ?:
		      put(t, run, mode, CM_TCP_PING_P99, test, pctl_value(ping, "p99_ms"));
		if (err)
			break;
	}
	return err;
}

/* Copy KEY of FROM into TO under NAME, if it is there. */
static void copy_key(json_t *to, const char *name, json_t *from, const char *key)
{
	json_t *v = json_object_get(from, key);

	if (v)
		json_object_set(to, name, v);
}

static bool nonempty(json_t *doc, const char *section, const char *key)
{
	json_t *a = section ? json_object_get(json_object_get(doc, section), key) :
			      json_object_get(doc, key);

	return json_is_array(a) && json_array_size(a) > 0;
}

/* A document without "procedure" (written before it had one): the same
 * keys from its plan, each only where the run measured what it
 * concerns, as a newer document writes them. */
static json_t *procedure_of_plan(json_t *doc)
{
	json_t *plan = json_object_get(doc, "plan"), *p = json_object();

	if (!p)
		return NULL;
	copy_key(p, "reps", plan, "reps");
	if (nonempty(doc, NULL, "results")) {
		copy_key(p, "trial_s", plan, "max_s");
		copy_key(p, "search_trial_s", plan, "step_s");
		copy_key(p, "search_steps", plan, "search_steps");
		copy_key(p, "loss_max", plan, "loss_max");
	}
	if (nonempty(doc, "newflow", "samples"))
		copy_key(p, "newflow_flows", plan, "newflow_flows");
	if (nonempty(doc, "tcp", "samples"))
		copy_key(p, "tcp_s", plan, "tcp_s");
	return p;
}

/* A document without "tester": what its top level says of the machine. */
static json_t *tester_of_top(json_t *doc)
{
	json_t *t = json_object();

	if (!t)
		return NULL;
	copy_key(t, "cpu_model", doc, "cpu_model");
	copy_key(t, "cpus", doc, "cpus");
	copy_key(t, "kernel", doc, "kernel");
	return t;
}

int cmp_extract(struct cmp_table *t, int run, json_t *doc, char *err,
		size_t errlen)
{
	struct cmp_run *r = &t->runs[run];
	json_t *tool = json_object_get(doc, "tool"), *fmt = json_object_get(doc, "format");
	json_t *tester = json_object_get(doc, "tester"),
	       *proc = json_object_get(doc, "procedure");

	if (!json_is_object(doc) || !json_is_string(tool) ||
	    strcmp(json_string_value(tool), "xnat bench")) {
		snprintf(err, errlen, "not a bench.json of xnat bench (no \"tool\": \"xnat bench\")");
		return 1;
	}
	if (!json_is_integer(fmt) || json_integer_value(fmt) < 1 ||
	    json_integer_value(fmt) > CMP_FORMAT_MAX) {
		if (json_is_integer(fmt))
			snprintf(err, errlen, "bench.json format %lld is not one this xnat "
				 "reads (1 to %d)", (long long)json_integer_value(fmt),
				 CMP_FORMAT_MAX);
		else
			snprintf(err, errlen, "no bench.json format number");
		return 1;
	}
	r->tester = json_is_object(tester) ? json_incref(tester) : tester_of_top(doc);
	r->procedure = json_is_object(proc) ? json_incref(proc) : procedure_of_plan(doc);
	if (!r->tester || !r->procedure ||
	    extract_udp(t, run, doc) || extract_newflow(t, run, doc) ||
	    extract_tcp(t, run, doc)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int cmp_load(struct cmp_table *t, const char *arg, char *err, size_t errlen)
{
	char file[4096];
	json_error_t jerr;
	struct stat st;
	json_t *doc;
	FILE *f;
	int run, rc;

	snprintf(file, sizeof(file), "%s", arg);
	if (!stat(arg, &st) && S_ISDIR(st.st_mode))
		snprintf(file, sizeof(file), "%s/bench.json", arg);
	f = fopen(file, "re");
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "cannot read %s: %s", file, strerror(-rc));
		return rc;
	}
	doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	if (!doc) {
		snprintf(err, errlen, "%s:%d:%d: %s", file, jerr.line, jerr.column,
			 jerr.text);
		return 1;
	}
	run = cmp_run_add(t, arg, file, doc);
	if (run < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = cmp_extract(t, run, doc, err, errlen);
	if (rc > 0) {
		/* "file: why", as a config error is "file:line: why". */
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", file, why);
	}
	return rc;
}

/* ---- where the procedures differ ------------------------------------------ */

/* Keys of "procedure" that say what was measured rather than how: runs of
 * different profiles are still compared profile by profile (a profile
 * only one of them has shows as missing). */
static const char *const what_not_how[] = { "frame_sizes", "flows",
					    "tcp_tests", "order", NULL };

/* V as text: a string as it is, a number as "%.6g" (so that 1 and 1.0
 * agree), anything else as compact JSON. Freed by the caller. */
static char *value_text(json_t *v)
{
	char *s = NULL;

	if (!v)
		return NULL;
	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_number(v)) {
		if (asprintf(&s, "%.6g", json_number_value(v)) < 0)
			return NULL;
		return s;
	}
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* The tester's ports as one text: "lan veth 1.0, wan veth 1.0". */
static char *ports_text(json_t *tester)
{
	json_t *ports = json_object_get(tester, "ports"), *p;
	char buf[512] = "";
	size_t i, at = 0;

	if (!json_is_array(ports) || !json_array_size(ports))
		return NULL;
	json_array_foreach(ports, i, p) {
		const char *fw = json_string_value(json_object_get(p, "firmware"));

		at += snprintf(buf + at, at < sizeof(buf) ? sizeof(buf) - at : 0,
			       "%s%s %s %s%s%s", i ? ", " : "",
			       json_string_value(json_object_get(p, "role")) ?: "?",
			       json_string_value(json_object_get(p, "driver")) ?: "?",
			       json_string_value(json_object_get(p, "version")) ?: "",
			       fw && *fw ? " firmware " : "", fw && *fw ? fw : "");
	}
	return strdup(buf);
}

/* Warn about FIELD if two runs say different things of it (VALUES[run],
 * NULL where a run says nothing); the values are freed. */
static int compare_field(struct cmp_table *t, const char *field, char **values)
{
	const char *first = NULL;
	bool differ = false;
	int err = 0;

	for (int r = 0; r < t->n_runs; r++) {
		if (!values[r])
			continue;
		if (!first)
			first = values[r];
		else if (strcmp(first, values[r]))
			differ = true;
	}
	if (differ)
		err = cmp_warn_add(t, field, (const char *const *)values);
	for (int r = 0; r < t->n_runs; r++) {
		free(values[r]);
		values[r] = NULL;
	}
	return err;
}

static bool how_key(const char *key)
{
	for (int i = 0; what_not_how[i]; i++)
		if (!strcmp(key, what_not_how[i]))
			return false;
	return true;
}

/* Has an earlier run than RUN's procedure KEY (so it was compared)? */
static bool seen_before(const struct cmp_table *t, int run, const char *key)
{
	for (int r = 0; r < run; r++)
		if (json_object_get(t->runs[r].procedure, key))
			return true;
	return false;
}

int cmp_find_differences(struct cmp_table *t)
{
	static const char *const tester_keys[] = { "kernel", "cpu_model", "cpus" };
	char **values = calloc(t->n_runs ?: 1, sizeof(*values)), field[96];
	int err = 0;

	if (!values)
		return -ENOMEM;
	/* Every key of any run's procedure, in the order first seen. */
	for (int run = 0; run < t->n_runs && !err; run++) {
		const char *key;
		json_t *v;

		json_object_foreach(t->runs[run].procedure, key, v) {
			if (!how_key(key) || seen_before(t, run, key))
				continue;
			for (int r = 0; r < t->n_runs; r++)
				values[r] = value_text(json_object_get(t->runs[r].procedure, key));
			snprintf(field, sizeof(field), "procedure.%s", key);
			if ((err = compare_field(t, field, values)))
				break;
		}
	}
	for (size_t i = 0; i < sizeof(tester_keys) / sizeof(*tester_keys) && !err; i++) {
		for (int r = 0; r < t->n_runs; r++)
			values[r] = value_text(json_object_get(t->runs[r].tester, tester_keys[i]));
		snprintf(field, sizeof(field), "tester.%s", tester_keys[i]);
		err = compare_field(t, field, values);
	}
	if (!err) {
		for (int r = 0; r < t->n_runs; r++)
			values[r] = ports_text(t->runs[r].tester);
		err = compare_field(t, "tester.ports", values);
	}
	free(values);
	return err;
}
