// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a run measures, in order: the BPF_PROG_RUN microbenchmark, then
 * repetition by repetition the UDP profiles, the new-flow test and the TCP
 * tests, every selected mode in turn inside each, so that drift on a
 * shared machine hits all modes alike and every comparison can be a ratio
 * within one repetition. Every loop stops at bench_stop.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "bench_common.h"
#include "microbench.h"

/* xnat's flow table for the profiles (10,000 flows, two entries each,
 * plus the replies' side) and for the new-flow test. */
#define FLOWS_PROFILES 65536
#define FLOWS_NEWFLOW 1048576
/* Offered rate of the new-flow test when no saturation rate is known. */
#define NEWFLOW_DEFAULT_PPS 2e6

/* BPF_PROG_RUN ns/packet of the fast path, the fast path off and the bare
 * forwarder (microbench.c, in a namespace of its own). */
static void microbench(struct bench_results *r)
{
	struct microbench_result mb;
	int err;

	bench_progress("BPF_PROG_RUN microbenchmark");
	err = microbench_run(&mb, 0);
	if (err && err != -EPROTO) {
		snprintf(r->micro_note, sizeof(r->micro_note),
			 "microbenchmark failed: %s", strerror(-err));
		return;
	}
	r->micro_fast_ns = mb.c[MICROBENCH_FAST].net_ns;
	r->micro_slow_ns = mb.c[MICROBENCH_FP_OFF].net_ns;
	r->micro_fwd_ns = mb.c[MICROBENCH_FLOOR].net_ns;
	r->micro_traced_ns = mb.c[MICROBENCH_TRACED].net_ns;
	r->micro_offload_ns = mb.c[MICROBENCH_OFFLOAD].net_ns;
	snprintf(r->micro_note, sizeof(r->micro_note),
		 "medians of %llu calls (%llu packets) on CPU %d, less the empty program's %.0f ns%s",
		 (unsigned long long)mb.c[MICROBENCH_FAST].calls,
		 (unsigned long long)mb.c[MICROBENCH_FAST].packets, mb.cpu,
		 mb.c[MICROBENCH_EMPTY].median_ns,
		 err == -EPROTO ? "; WARNING: a case left its path" : "");
	if (microbench_table_insert(BENCH_TABLE_SMALL, &r->insert_small_ns) ||
	    microbench_table_insert(BENCH_TABLE_LARGE, &r->insert_large_ns))
		r->insert_small_ns = r->insert_large_ns = -1;
}

/* The profiles of one session of MODE: the usual ones (MANY false) or
 * the many-endpoint ones, each warmed up once per flow count. */
static int udp_session(struct bench *b, struct bench_results *r, int rep,
		       enum bench_mode m, bool many)
{
	const struct bench_plan *p = b->plan;
	uint32_t warmed[4] = { 0 };
	int n_warmed = 0, err;

	err = bench_mode_enter(b, m, many ? FLOWS_NEWFLOW : FLOWS_PROFILES, true);
	for (int pi = 0; pi < p->n_profiles && !err && !bench_stop; pi++) {
		const struct bench_profile *pr = &p->profiles[pi];
		bool seen = false;

		if (!!pr->ports_per_host != many)
			continue;
		/* Mappings (and conntrack entries) for this flow count,
		 * before replies are sent or anything is timed; they live
		 * on for the mode's session. */
		for (int i = 0; i < n_warmed; i++)
			seen |= warmed[i] == pr->flows;
		if (!seen && n_warmed < 4) {
			err = bench_udp_warm(b, r, pi);
			warmed[n_warmed++] = pr->flows;
			if (err)
				break;
		}
		err = bench_udp_profile(b, r, rep, pi);
	}
	if (bench_mode_leave(b) && !err)
		err = -EIO;
	return err;
}

/* One repetition of the UDP profiles: every mode in turn; the
 * many-endpoint profiles in a session of their own, with a table sized
 * for them (the others keep the small one they always had). */
static int udp_rep(struct bench *b, struct bench_results *r, int rep)
{
	const struct bench_plan *p = b->plan;
	bool many = false;
	int err = 0;

	for (int pi = 0; pi < p->n_profiles; pi++)
		many |= p->profiles[pi].ports_per_host != 0;
	for (int m = 0; m < BM_MAX && !err && !bench_stop; m++) {
		if (!bench_plan_has_mode(p, m))
			continue;
		bench_progress("rep %d/%d: %s", rep + 1, p->reps, bench_mode_names[m]);
		err = udp_session(b, r, rep, m, false);
		if (!err && many)
			err = udp_session(b, r, rep, m, true);
	}
	return err;
}

/* Saturation rate of 64 B / 10k / up in MODE and REP, if measured. */
static double saturation(const struct bench_plan *p, struct bench_results *r,
			 int rep, enum bench_mode m)
{
	for (int pi = 0; pi < p->n_profiles; pi++) {
		const struct bench_profile *pr = &p->profiles[pi];
		struct bench_cell *c;

		if (pr->size != BS_64 || pr->flows == 1 || pr->both)
			continue;
		c = bench_cell(r, p, rep, m, pi);
		if (c->ran && c->max_pps > 0)
			return c->max_pps;
	}
	return 0;
}

static int newflow_rep(struct bench *b, struct bench_results *r, int rep)
{
	static const enum bench_mode modes[] = { BM_KERNEL_MASQ, BM_KERNEL_NAT,
						 BM_XDP_NAT, BM_XDP_OFFLOAD };
	const struct bench_plan *p = b->plan;
	int err = 0;

	for (size_t i = 0; i < sizeof(modes) / sizeof(*modes) && !err &&
			   !bench_stop; i++) {
		double sat = saturation(p, r, rep, modes[i]);

		if (!bench_plan_has_mode(p, modes[i]))
			continue;
		bench_progress("rep %d/%d: %s, %u new flows", rep + 1, p->reps,
			       bench_mode_names[modes[i]], p->newflow_flows);
		err = bench_mode_enter(b, modes[i], FLOWS_NEWFLOW, true);
		/* Above the established-flow rate: flow setup is slower, so
		 * the router works at saturation throughout. */
		if (!err)
			err = bench_newflow(b, r, rep,
					    sat > 0 ? 1.25 * sat : NEWFLOW_DEFAULT_PPS);
		if (bench_mode_leave(b) && !err)
			err = -EIO;
	}
	return err;
}

static int tcp_rep(struct bench *b, struct bench_results *r, int rep)
{
	static const enum bench_mode modes[] = { BM_KERNEL_MASQ, BM_KERNEL_NAT,
						 BM_XDP_NAT, BM_XDP_OFFLOAD };
	const struct bench_plan *p = b->plan;
	int err = 0;

	/* The sinks would swallow the TCP segments. */
	bench_sinks_close(b);
	/* The same receive path in every mode: with GRO on, the router's
	 * ports take the hosts' segments through their NAPI ring in the
	 * kernel modes as the XDP program makes them do in the XDP modes,
	 * and a full ring makes the host's queue wait in both; the kernel
	 * then forwards GRO's aggregates, as it does with a NIC's GRO on
	 * (docs/BENCHMARKS.md "TCP"). */
	err = bench_router_gro(b, true);
	for (size_t i = 0; i < sizeof(modes) / sizeof(*modes) && !err &&
			   !bench_stop; i++) {
		if (!bench_plan_has_mode(p, modes[i]))
			continue;
		bench_progress("rep %d/%d: %s, TCP", rep + 1, p->reps,
			       bench_mode_names[modes[i]]);
		/* No xdp_pass for the kernel: sockets' skbs need none, and
		 * XDP on a veth would make the kernel path pay for it. */
		err = bench_mode_enter(b, modes[i], FLOWS_PROFILES, false);
		for (int t = 0; t < BT_MAX && !err && !bench_stop; t++)
			if (p->tcp_all || t == BT_UP)
				err = bench_tcp_run(b, r, rep, t);
		if (bench_mode_leave(b) && !err)
			err = -EIO;
	}
	/* The UDP profiles of the next repetition as they always ran. */
	if (bench_router_gro(b, false) && !err)
		err = -EIO;
	return err;
}

int bench_measure(struct bench *b, struct bench_results *r)
{
	const struct bench_plan *plan = b->plan;
	int err = 0;

	if (plan->kinds & BK_MICRO)
		microbench(r);
	for (int rep = 0; rep < plan->reps && !err && !bench_stop; rep++) {
		if (plan->kinds & (BK_UDP | BK_NEWFLOW))
			err = bench_sinks_open(b);
		if (!err && (plan->kinds & BK_UDP))
			err = udp_rep(b, r, rep);
		if (!err && !bench_stop && (plan->kinds & BK_NEWFLOW))
			err = newflow_rep(b, r, rep);
		if (!err && !bench_stop && (plan->kinds & BK_TCP))
			err = tcp_rep(b, r, rep);
	}
	return err;
}

void bench_teardown(struct bench *b)
{
	sig_atomic_t stopped = bench_stop;

	/* Our own commands must run to completion here even after Ctrl-C. */
	bench_stop = 0;
	bench_kill_all(b);
	bench_sinks_close(b);
	/* Also unloads the forwarder; programs we attached go with the
	 * veths when the namespaces do. */
	if (b->mode_up || b->xnat_up)
		bench_mode_leave(b);
	bench_testbed_down(b);
	bench_stop = stopped;
}
