// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pure parts of `xnat bench compare` (user/bench/bench_compare.h) and
 * of the TCP report's percentiles (user/bench/bench_pctl.h): rows lined
 * up by metric and profile, a missing profile kept missing, ratios to the
 * base row, --base parsing, bench.json documents of both shapes read into
 * the table, the procedure differences found (and none where the runs
 * agree), documents that are not bench runs refused; and nearest-rank
 * percentiles against values worked out by hand.
 *
 * Needs no root; prints "#N name:OK|FAIL" and ends with "N passed, N
 * failed".
 */
#include <stdlib.h>
#include "config_harness.h"
#include "bench_compare.h"
#include "bench_pctl.h"

static double abs_of(double x)
{
	return x < 0 ? -x : x;
}

static bool near(double a, double b)
{
	return abs_of(a - b) <= 1e-9 * (abs_of(b) > 1 ? abs_of(b) : 1);
}

#define ASSERT_NEAR(actual, expected, name)                                 \
	({                                                                  \
		double ___a = (actual), ___e = (expected);                  \
		bool ___ok = near(___a, ___e);                              \
		if (!___ok)                                                 \
			check_fail("%s:%d %s: actual %g != expected %g",    \
				   __func__, __LINE__, name, ___a, ___e);   \
		___ok;                                                      \
	})

static struct cmp_value val(double med)
{
	return (struct cmp_value){ .n = 3, .med = med, .min = med * 0.9,
				   .max = med * 1.1 };
}

/* ---- percentiles ------------------------------------------------------------ */

/* 1..100 shuffled: the p-th percentile by nearest rank is p itself. */
static bool test_pctl_hundred(void)
{
	double v[100];
	struct pctl s;
	bool ok;

	for (int i = 0; i < 100; i++)
		v[i] = (i * 37) % 100 + 1;   /* a permutation of 1..100 */
	s = pctl_of(v, 100);
	ok = ASSERT_EQ(s.n, 100, "n");
	ok &= ASSERT_NEAR(s.p50, 50, "p50");
	ok &= ASSERT_NEAR(s.p90, 90, "p90");
	ok &= ASSERT_NEAR(s.p99, 99, "p99");
	ok &= ASSERT_NEAR(s.max, 100, "max");
	return ok;
}

/* Fifty probes (a 10 s test): rank ceil(0.9 * 50) = 45 exactly, not 46;
 * p99 is rank 50, the largest. */
static bool test_pctl_fifty(void)
{
	double v[50];
	struct pctl s;
	bool ok;

	for (int i = 0; i < 50; i++)
		v[i] = 0.01 * (50 - i);      /* 0.50 down to 0.01 */
	s = pctl_of(v, 50);
	ok = ASSERT_NEAR(s.p50, 0.25, "p50 (rank 25)");
	ok &= ASSERT_NEAR(s.p90, 0.45, "p90 (rank 45)");
	ok &= ASSERT_NEAR(s.p99, 0.50, "p99 (rank 50)");
	ok &= ASSERT_TRUE(s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.max,
			  "ordered");
	return ok;
}

/* One probe is every percentile; none is n 0. */
static bool test_pctl_edges(void)
{
	double one = 1.5;
	struct pctl s = pctl_of(&one, 1), z = pctl_of(NULL, 0);
	bool ok;

	ok = ASSERT_EQ(s.n, 1, "n");
	ok &= ASSERT_NEAR(s.p50, 1.5, "p50") & ASSERT_NEAR(s.p99, 1.5, "p99");
	ok &= ASSERT_EQ(z.n, 0, "no samples");
	return ok;
}

/* ---- rows, keys, ratios --------------------------------------------------------- */

/* Two runs, three rows; run 2 lacks a profile. */
static void fill(struct cmp_table *t)
{
	cmp_table_init(t);
	cmp_run_add(t, "a", "a/bench.json", json_object());
	cmp_run_add(t, "lab/b", "lab/b/bench.json", json_object());
	cmp_set(t, 0, "kernel-nat", CM_UDP_MAX_PPS, "64B/1/up", val(1e6));
	cmp_set(t, 0, "kernel-nat", CM_UDP_MAX_PPS, "64B/10k/up", val(0.8e6));
	cmp_set(t, 0, "xdp-nat", CM_UDP_MAX_PPS, "64B/10k/up", val(3.2e6));
	cmp_set(t, 0, "xdp-nat", CM_UDP_MAX_PPS, "64B/1/up", val(4e6));
	cmp_set(t, 1, "openwrt", CM_UDP_MAX_PPS, "64B/1/up", val(1.5e6));
	cmp_set(t, 1, "openwrt", CM_TCP_MBPS, "tcp-8-up", val(940));
}

static bool test_rows_aligned(void)
{
	struct cmp_table t;
	int k1, k10;
	bool ok;

	fill(&t);
	ok = ASSERT_EQ(t.n_rows, 3, "rows");
	ok &= ASSERT_TRUE(!strcmp(t.rows[0].mode, "kernel-nat") &&
			  !strcmp(t.rows[1].mode, "xdp-nat") &&
			  !strcmp(t.rows[2].mode, "openwrt") && t.rows[2].run == 1,
			  "rows in the order first seen");
	ok &= ASSERT_EQ(t.n_keys, 3, "keys: two UDP profiles and one TCP test");
	k1 = cmp_key_get(&t, CM_UDP_MAX_PPS, "64B/1/up");
	k10 = cmp_key_get(&t, CM_UDP_MAX_PPS, "64B/10k/up");
	ok &= ASSERT_EQ(t.n_keys, 3, "looking keys up makes none");
	ok &= ASSERT_NEAR(cmp_get(&t, 1, k1).med, 4e6, "xdp-nat 64B/1/up");
	ok &= ASSERT_NEAR(cmp_get(&t, 1, k10).med, 3.2e6, "xdp-nat 64B/10k/up");
	ok &= ASSERT_EQ(cmp_get(&t, 2, k10).n, 0, "openwrt 64B/10k/up is missing");
	ok &= ASSERT_TRUE(cmp_row_has_metric(&t, 2, CM_TCP_MBPS), "openwrt has TCP");
	ok &= ASSERT_TRUE(!cmp_row_has_metric(&t, 0, CM_TCP_MBPS),
			  "kernel-nat has no TCP");
	cmp_table_free(&t);
	return ok;
}

static bool test_ratios(void)
{
	struct cmp_table t;
	char err[256];
	double x = -1;
	int k1, k10;
	bool ok;

	fill(&t);
	k1 = cmp_key_get(&t, CM_UDP_MAX_PPS, "64B/1/up");
	k10 = cmp_key_get(&t, CM_UDP_MAX_PPS, "64B/10k/up");
	ok = ASSERT_OK(cmp_base_set(&t, NULL, err, sizeof(err)), "default base");
	ok &= ASSERT_EQ(t.base, 0, "the first run's first mode");
	ok &= ASSERT_TRUE(cmp_ratio(&t, 1, k1, &x), "xdp-nat over kernel-nat") &&
	      ASSERT_NEAR(x, 4.0, "ratio");
	ok &= ASSERT_TRUE(cmp_ratio(&t, 1, k10, &x), "on 10k") &&
	      ASSERT_NEAR(x, 4.0, "ratio 3.2 / 0.8");
	ok &= ASSERT_TRUE(cmp_ratio(&t, 0, k1, &x), "base over itself") &&
	      ASSERT_NEAR(x, 1.0, "ratio 1");
	ok &= ASSERT_TRUE(!cmp_ratio(&t, 2, k10, &x), "no ratio for a missing figure");

	ok &= ASSERT_OK(cmp_base_set(&t, "2:openwrt", err, sizeof(err)), "2:openwrt");
	ok &= ASSERT_EQ(t.base, 2, "base row");
	ok &= ASSERT_TRUE(cmp_ratio(&t, 0, k1, &x), "kernel-nat over openwrt") &&
	      ASSERT_NEAR(x, 1e6 / 1.5e6, "ratio");
	ok &= ASSERT_TRUE(!cmp_ratio(&t, 1, k10, &x),
			  "no ratio where the base is missing");
	cmp_table_free(&t);
	return ok;
}

/* A base whose figure is 0 (a drop mode's forwarded rate) has no ratios. */
static bool test_ratio_zero_base(void)
{
	struct cmp_table t;
	double x;
	bool ok;

	cmp_table_init(&t);
	cmp_run_add(&t, "a", "a/bench.json", json_object());
	cmp_set(&t, 0, "drop", CM_UDP_MAX_PPS, "64B/1/up",
		(struct cmp_value){ .n = 1 });
	cmp_set(&t, 0, "xdp-nat", CM_UDP_MAX_PPS, "64B/1/up", val(2e6));
	ok = ASSERT_TRUE(!cmp_ratio(&t, 1, 0, &x), "no ratio to a zero");
	cmp_table_free(&t);
	return ok;
}

static bool test_base_spec(void)
{
	struct cmp_table t;
	char err[256];
	bool ok;

	fill(&t);
	ok = ASSERT_OK(cmp_base_set(&t, "lab/b:openwrt", err, sizeof(err)),
		       "a run by its directory");
	ok &= ASSERT_EQ(t.base, 2, "base row");
	ok &= ASSERT_OK(cmp_base_set(&t, "1:xdp-nat", err, sizeof(err)), "by number");
	ok &= ASSERT_EQ(t.base, 1, "base row");
	ok &= ASSERT_TRUE(cmp_base_set(&t, "3:xdp-nat", err, sizeof(err)) &&
			  strstr(err, "no run '3'"), "no third run");
	ok &= ASSERT_TRUE(cmp_base_set(&t, "2:xdp-nat", err, sizeof(err)) &&
			  strstr(err, "no results for mode 'xdp-nat'"), "not in run 2");
	ok &= ASSERT_TRUE(cmp_base_set(&t, "kernel-nat", err, sizeof(err)) &&
			  strstr(err, "not RUN:MODE"), "no colon");
	cmp_table_free(&t);
	return ok;
}

/* ---- documents ------------------------------------------------------------------- */

/* A run as bench.json format 1 was before it had "tester" and
 * "procedure": one UDP result, TCP with the median ping only. */
static const char old_doc[] =
	"{\"tool\": \"xnat bench\", \"format\": 1, \"kernel\": \"6.1.0\","
	" \"cpu_model\": \"AMD EPYC\", \"cpus\": 2,"
	" \"plan\": {\"reps\": 3, \"max_s\": 1, \"step_s\": 0.5, \"search_steps\": 6,"
	"          \"loss_max\": 0.001, \"tcp_s\": 10, \"newflow_flows\": 1000000},"
	" \"results\": [{\"mode\": \"kernel-nat\", \"profile\": \"64B/1/up\","
	"   \"max_pps\": {\"median\": 1000000, \"min\": 900000, \"max\": 1100000, \"n\": 3},"
	"   \"noloss_pps\": null}],"
	" \"newflow\": {\"flows\": 1000000, \"samples\": [], \"results\": []},"
	" \"tcp\": {\"samples\": [{}], \"results\": [{\"mode\": \"kernel-nat\","
	"   \"test\": \"tcp-8-up\", \"mbps\": {\"median\": 900, \"min\": 800,"
	"   \"max\": 1000, \"n\": 3}, \"ping_ms\": {\"median\": 0.1, \"n\": 3}}]}}";

/* A newer run of an external device: tester and procedure stated, the
 * trial twice as long, the ping's percentiles. */
static const char new_doc[] =
	"{\"tool\": \"xnat bench\", \"format\": 1, \"kernel\": \"6.18.0\","
	" \"tester\": {\"hostname\": \"lab\", \"cpu_model\": \"AMD EPYC\", \"cpus\": 2,"
	"   \"kernel\": \"6.18.0\", \"ports\": [{\"role\": \"lan\", \"driver\": \"ixgbe\","
	"   \"version\": \"6.18\", \"firmware\": \"0x1\"}]},"
	" \"procedure\": {\"reps\": 3, \"trial_s\": 2, \"search_trial_s\": 0.5,"
	"   \"search_steps\": 6, \"loss_max\": 0.001, \"tcp_s\": 10.0,"
	"   \"frame_sizes\": [\"64B\"]},"
	" \"results\": [{\"mode\": \"openwrt\", \"profile\": \"64B/1/up\","
	"   \"max_pps\": {\"median\": 1500000, \"min\": 1400000, \"max\": 1600000, \"n\": 3},"
	"   \"noloss_pps\": {\"median\": 1200000, \"min\": 1100000, \"max\": 1300000, \"n\": 3}}],"
	" \"tcp\": {\"results\": [{\"mode\": \"openwrt\", \"test\": \"tcp-8-up\","
	"   \"mbps\": {\"median\": 940, \"min\": 930, \"max\": 950, \"n\": 3},"
	"   \"ping\": {\"n\": 150, \"p50_ms\": 0.2, \"p90_ms\": 0.5, \"p99_ms\": 2.5,"
	"   \"max_ms\": 3}}]}}";

static int add_doc(struct cmp_table *t, const char *name, const char *text)
{
	char err[256];
	int run = cmp_run_add(t, name, name, json_loads(text, 0, NULL));

	if (run < 0 || !t->runs[run].doc)
		return -1;
	return cmp_extract(t, run, t->runs[run].doc, err, sizeof(err));
}

/* The warning on FIELD, or NULL. */
static const struct cmp_warning *warning(const struct cmp_table *t,
					 const char *field)
{
	for (int i = 0; i < t->n_warn; i++)
		if (!strcmp(t->warn[i].field, field))
			return &t->warn[i];
	return NULL;
}

static bool test_documents_read(void)
{
	struct cmp_table t;
	int kmax, knl, ktcp, kp99;
	bool ok;

	cmp_table_init(&t);
	ok = ASSERT_OK(add_doc(&t, "old", old_doc), "old document");
	ok &= ASSERT_OK(add_doc(&t, "new", new_doc), "new document");
	kmax = cmp_key_get(&t, CM_UDP_MAX_PPS, "64B/1/up");
	knl = cmp_key_get(&t, CM_UDP_NOLOSS_PPS, "64B/1/up");
	ktcp = cmp_key_get(&t, CM_TCP_MBPS, "tcp-8-up");
	kp99 = cmp_key_get(&t, CM_TCP_PING_P99, "tcp-8-up");
	ok &= ASSERT_EQ(t.n_rows, 2, "kernel-nat and openwrt");
	ok &= ASSERT_NEAR(cmp_get(&t, 0, kmax).med, 1e6, "old max_pps");
	ok &= ASSERT_NEAR(cmp_get(&t, 0, kmax).max, 1.1e6, "old max_pps max");
	ok &= ASSERT_EQ(cmp_get(&t, 0, knl).n, 0, "null noloss_pps is missing");
	ok &= ASSERT_NEAR(cmp_get(&t, 1, knl).med, 1.2e6, "new noloss_pps");
	ok &= ASSERT_NEAR(cmp_get(&t, 1, ktcp).med, 940, "new TCP");
	ok &= ASSERT_NEAR(cmp_get(&t, 0, ktcp).med, 900, "old TCP");
	ok &= ASSERT_EQ(cmp_get(&t, 0, kp99).n, 0, "no percentiles in the old run");
	ok &= ASSERT_NEAR(cmp_get(&t, 1, kp99).med, 2.5, "p99");
	ok &= ASSERT_EQ(cmp_get(&t, 1, kp99).n, 150, "p99 over 150 probes");
	cmp_table_free(&t);
	return ok;
}

static bool test_procedure_differences(void)
{
	const struct cmp_warning *w;
	struct cmp_table t;
	bool ok;

	cmp_table_init(&t);
	ok = ASSERT_OK(add_doc(&t, "old", old_doc), "old") &
	     ASSERT_OK(add_doc(&t, "new", new_doc), "new");
	ok &= ASSERT_OK(cmp_find_differences(&t), "differences");
	w = warning(&t, "procedure.trial_s");
	ok &= ASSERT_TRUE(w && w->values[0] && w->values[1] &&
			  !strcmp(w->values[0], "1") && !strcmp(w->values[1], "2"),
			  "trial 1 s against 2 s, from the old plan's max_s");
	w = warning(&t, "tester.kernel");
	ok &= ASSERT_TRUE(w && !strcmp(w->values[0], "6.1.0") &&
			  !strcmp(w->values[1], "6.18.0"), "tester kernels");
	ok &= ASSERT_TRUE(!warning(&t, "procedure.tcp_s"), "10 and 10.0 agree");
	ok &= ASSERT_TRUE(!warning(&t, "procedure.loss_max"), "same loss criterion");
	ok &= ASSERT_TRUE(!warning(&t, "procedure.frame_sizes"),
			  "what was measured is not a procedure");
	ok &= ASSERT_TRUE(!warning(&t, "procedure.newflow_flows"),
			  "a test only one run measured");
	ok &= ASSERT_TRUE(!warning(&t, "tester.ports"), "only one run names ports");
	cmp_table_free(&t);
	return ok;
}

/* The same document twice: nothing differs. */
static bool test_same_procedure(void)
{
	struct cmp_table t;
	bool ok;

	cmp_table_init(&t);
	ok = ASSERT_OK(add_doc(&t, "a", new_doc), "a") &
	     ASSERT_OK(add_doc(&t, "b", new_doc), "b");
	ok &= ASSERT_OK(cmp_find_differences(&t), "differences");
	ok &= ASSERT_EQ(t.n_warn, 0, "no warnings");
	cmp_table_free(&t);
	return ok;
}

static bool test_not_a_bench_document(void)
{
	struct cmp_table t;
	bool ok;

	cmp_table_init(&t);
	ok = ASSERT_EQ(add_doc(&t, "x", "{\"tool\": \"iperf3\", \"format\": 1}"), 1,
		       "another tool's JSON");
	ok &= ASSERT_EQ(add_doc(&t, "y", "[1, 2]"), 1, "not an object");
	ok &= ASSERT_EQ(add_doc(&t, "z", "{\"tool\": \"xnat bench\", \"format\": 99}"),
			1, "a format newer than this reader");
	ok &= ASSERT_EQ(t.n_rows, 0, "no rows from them");
	cmp_table_free(&t);
	return ok;
}

static const struct config_test tests[] = {
	CHECK(pctl_hundred),
	CHECK(pctl_fifty),
	CHECK(pctl_edges),
	CHECK(rows_aligned),
	CHECK(ratios),
	CHECK(ratio_zero_base),
	CHECK(base_spec),
	CHECK(documents_read),
	CHECK(procedure_differences),
	CHECK(same_procedure),
	CHECK(not_a_bench_document),
};

int main(void)
{
	return config_tests_main(tests, sizeof(tests) / sizeof(tests[0]));
}
