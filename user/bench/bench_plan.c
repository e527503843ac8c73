// SPDX-License-Identifier: GPL-2.0-only
/*
 * The plan of a run: the frame sizes and what the generator makes of them,
 * the profiles (frame size x flows x directions) and modes that --quick,
 * --reps, --modes and --profiles select; and where the results of a run
 * are kept (grow-and-append arrays, one cell per mode and profile).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"
#include "bench_profiles.h"
#include "log.h"

const char *const bench_size_names[BS_MAX] = {
	[BS_64] = "64B", [BS_500] = "500B", [BS_1500] = "1500B", [BS_IMIX] = "imix",
};

double bench_size_wire_bytes(enum bench_size s)
{
	switch (s) {
	case BS_64: return 64;
	case BS_500: return 500;
	case BS_1500: return 1500;
	default: return (7 * 64 + 4 * 576 + 1 * 1500) / 12.0;
	}
}

void bench_size_gen(enum bench_size s, struct gen_config *cfg)
{
	/* The generator's sizes are frame lengths without the FCS. */
	static const uint16_t imix[] = { 64 - FCS_LEN, 576 - FCS_LEN, 1500 - FCS_LEN };
	static const uint8_t imix_w[] = { 7, 4, 1 };

	memset(cfg->sizes, 0, sizeof(cfg->sizes));
	memset(cfg->weights, 0, sizeof(cfg->weights));
	if (s == BS_IMIX) {
		for (int i = 0; i < 3; i++) {
			cfg->sizes[i] = imix[i];
			cfg->weights[i] = imix_w[i];
		}
		cfg->n_sizes = 3;
		return;
	}
	cfg->sizes[0] = (uint16_t)bench_size_wire_bytes(s) - FCS_LEN;
	cfg->weights[0] = 1;
	cfg->n_sizes = 1;
}

/* ---- the plan ---------------------------------------------------------------- */

/* Is TOK in the comma separated LIST? */
static bool in_list(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !strncmp(p, tok, n))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* Every token of LIST must be one of KNOWN (NULL-terminated): 0, or -1
 * with "WHAT 'TOKEN' (HELP)" in ERR for the first that is not. */
static int tokens_known(const char *list, const char *const *known,
			const char *what, const char *help, char *err,
			size_t errlen)
{
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		bool ok = false;

		for (int i = 0; known[i] && !ok; i++)
			ok = strlen(known[i]) == len && !strncmp(p, known[i], len);
		if (!ok) {
			snprintf(err, errlen, "%s '%.*s' (%s)", what,
				 (int)(len < 31 ? len : 31), p, help);
			return -1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* The first token of LIST that is not in the comma separated KNOWN, into
 * BAD (LEN bytes, cut short if need be); false if all are. */
static bool token_unknown(const char *list, const char *known, char *bad,
			  size_t len)
{
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		snprintf(bad, len, "%.*s", (int)n, p);
		if (n >= len || !in_list(known, bad))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* Does LIST name any of the comma separated GROUP? */
static bool names_any(const char *list, const char *group)
{
	char tok[32];

	if (!list)
		return false;
	for (const char *p = group; *p;) {
		size_t n = strcspn(p, ",");

		snprintf(tok, sizeof(tok), "%.*s", (int)n, p);
		if (in_list(list, tok))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

static const char *const size_tok[BS_MAX] = { "64", "500", "1500", "imix" };

/* What --quick (or its absence) sets. */
static void plan_defaults(struct bench_plan *plan, bool quick, int reps)
{
	plan->quick = quick;
	plan->reps = reps > 0 ? reps : quick ? 1 : 3;
	plan->loss_max = 0.001;
	plan->max_s = 1.0;
	/* Half a second offers 100,000 frames or more in every mode here:
	 * 0.1 % of that is 100, plenty to tell loss from none. */
	plan->step_s = 0.5;
	plan->search_steps = quick ? 3 : 6;
	plan->newflow_flows = quick ? 100000 : 1000000;
	plan->tcp_s = quick ? 3 : 10;
	plan->tcp_all = !quick;
	/* The machine has two CPUs: one generator each. The router's
	 * receive work runs in softirq on the sending generator's CPU. */
	plan->cpu_lan_gen = 0;
	plan->cpu_wan_gen = 1;
}

/* --modes: the modes named, or all. */
static int plan_modes(struct bench_plan *plan, const char *modes, char *err,
		      size_t errlen)
{
	const char *names[BM_MAX + 1];

	plan->modes = 0;
	if (!modes) {
		plan->modes = (1U << BM_MAX) - 1;
		return 0;
	}
	for (int m = 0; m < BM_MAX; m++)
		names[m] = bench_mode_names[m];
	names[BM_MAX] = NULL;
	if (tokens_known(modes, names, "--modes: unknown mode",
			 "kernel-fwd, kernel-masq, kernel-nat, xdp-nat, xdp-nat-slow, "
			 "xdp-offload, xdp-fwd, drop", err, errlen))
		return -1;
	for (int m = 0; m < BM_MAX; m++)
		if (in_list(modes, bench_mode_names[m]))
			plan->modes |= 1U << m;
	return 0;
}

/* The tests --profiles names (udp, newflow, tcp, micro), or all of them. */
static void plan_kinds(struct bench_plan *plan, const char *profiles)
{
	plan->kinds = BK_UDP | BK_NEWFLOW | BK_TCP | BK_MICRO;
	if (!names_any(profiles, BENCH_PROFILE_TESTS))
		return;
	plan->kinds = 0;
	if (in_list(profiles, "micro"))
		plan->kinds |= BK_MICRO;
	if (in_list(profiles, "udp"))
		plan->kinds |= BK_UDP;
	if (in_list(profiles, "newflow"))
		plan->kinds |= BK_NEWFLOW;
	if (in_list(profiles, "tcp"))
		plan->kinds |= BK_TCP;
}

/*
 * The many-endpoint profiles, 64 B one way: 100,000 and 1,000,000 flows
 * from as many inside endpoints (hosts with BENCH_HOSTS_PORTS source ports
 * each, towards BENCH_HOSTS_DPORTS destination ports), cycled. In a full
 * run, and where --profiles names them (100k, 1M); --quick leaves them out
 * unless named.
 */
static void plan_many_endpoints(struct bench_plan *plan, const char *profiles,
				bool any_size, bool any_flows, bool any_dir)
{
	static const struct { const char *tok; uint32_t flows; } many[] = {
		{ "100k", 100000 }, { "1M", 1000000 },
	};

	if ((any_size && !in_list(profiles, "64")) ||
	    (any_dir && !in_list(profiles, "up")))
		return;
	for (size_t i = 0; i < sizeof(many) / sizeof(many[0]); i++) {
		struct bench_profile *p;

		if (any_flows ? !in_list(profiles, many[i].tok) : plan->quick)
			continue;
		p = &plan->profiles[plan->n_profiles++];
		p->size = BS_64;
		p->flows = many[i].flows;
		p->ports_per_host = BENCH_HOSTS_PORTS;
		p->both = false;
		snprintf(p->name, sizeof(p->name), "%s/%s/up",
			 bench_size_names[BS_64], many[i].tok);
	}
}

/* The UDP profiles: every size x flows x direction that --profiles
 * selects; each group it does not name stays whole (--quick: 64 B and
 * IMIX, up only). */
static void plan_profiles(struct bench_plan *plan, const char *profiles)
{
	bool any_size = false, any_flows = false, any_dir = false;
	bool quick = plan->quick;

	any_size = names_any(profiles, BENCH_PROFILE_SIZES);
	any_flows = names_any(profiles, BENCH_PROFILE_FLOWS);
	any_dir = names_any(profiles, BENCH_PROFILE_DIRS);
	plan->n_profiles = 0;
	for (int s = 0; s < BS_MAX; s++) {
		if (any_size ? !in_list(profiles, size_tok[s]) :
			       quick && s != BS_64 && s != BS_IMIX)
			continue;
		for (int f = 0; f < 2; f++) {
			if (any_flows && !in_list(profiles, f ? "10k" : "1"))
				continue;
			for (int d = 0; d < 2; d++) {
				struct bench_profile *p;

				if (any_dir ? !in_list(profiles, d ? "both" : "up") :
					      quick && d)
					continue;
				p = &plan->profiles[plan->n_profiles++];
				p->size = s;
				p->flows = f ? 10000 : 1;
				p->both = d;
				snprintf(p->name, sizeof(p->name), "%s/%s/%s",
					 bench_size_names[s], f ? "10k" : "1",
					 d ? "both" : "up");
			}
		}
	}
	plan_many_endpoints(plan, profiles, any_size, any_flows, any_dir);
}

int bench_plan_init(struct bench_plan *plan, bool quick, int reps,
		    const char *modes, const char *profiles, char *err,
		    size_t errlen)
{
	char bad[32];

	plan_defaults(plan, quick, reps);
	if (plan_modes(plan, modes, err, errlen))
		return -1;
	if (token_unknown(profiles, BENCH_PROFILE_SIZES "," BENCH_PROFILE_FLOWS
			  "," BENCH_PROFILE_DIRS "," BENCH_PROFILE_TESTS,
			  bad, sizeof(bad))) {
		snprintf(err, errlen, "--profiles: unknown '%s' (sizes %s; "
			 "flows %s; directions %s; tests %s)", bad,
			 BENCH_PROFILE_SIZES, BENCH_PROFILE_FLOWS,
			 BENCH_PROFILE_DIRS, BENCH_PROFILE_TESTS);
		return -1;
	}
	plan_kinds(plan, profiles);
	plan_profiles(plan, profiles);
	if (!plan->modes) {
		snprintf(err, errlen, "--modes: no mode selected");
		return -1;
	}
	if ((plan->kinds & BK_UDP) && !plan->n_profiles) {
		snprintf(err, errlen, "--profiles: no UDP profile selected");
		return -1;
	}
	return 0;
}

/* ---- results storage -------------------------------------------------------- */

struct bench_cell *bench_cell(struct bench_results *r,
			      const struct bench_plan *p, int rep,
			      enum bench_mode m, int profile)
{
	return &r->cells[((size_t)rep * BM_MAX + m) * (p->n_profiles ?: 1) + profile];
}

int bench_results_init(struct bench_results *r, const struct bench_plan *p)
{
	memset(r, 0, sizeof(*r));
	r->cells = calloc((size_t)p->reps * BM_MAX * (p->n_profiles ?: 1),
			  sizeof(*r->cells));
	r->micro_fast_ns = r->micro_slow_ns = r->micro_fwd_ns = -1;
	r->micro_traced_ns = r->micro_offload_ns = -1;
	r->insert_small_ns = r->insert_large_ns = -1;
	return r->cells ? 0 : -ENOMEM;
}

void bench_results_free(struct bench_results *r)
{
	free(r->samples);
	free(r->cells);
	free(r->newflow);
	free(r->tcp);
	memset(r, 0, sizeof(*r));
}

void *bench_array_push(void *arr, int *n, int *cap, size_t size, int first)
{
	void **a = arr;

	if (*n == *cap) {
		int c = *cap ? 2 * *cap : first;
		void *grown = realloc(*a, (size_t)c * size);

		if (!grown)
			return NULL;
		*a = grown;
		*cap = c;
	}
	memset((char *)*a + (size_t)*n * size, 0, size);
	return (char *)*a + (size_t)(*n)++ * size;
}

bool bench_plan_has_mode(const struct bench_plan *p, enum bench_mode m)
{
	return p->modes & (1U << m);
}
