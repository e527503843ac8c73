/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The numbers the report shows, from a run's results: each statistic of a
 * (mode, profile) as median, min and max over the repetitions that ran it,
 * and every comparison computed per repetition first (modes are
 * interleaved within one, so drift hits them alike), then its median
 * taken. Shared by the text tables, the JSON and the plot.
 */
#ifndef XNAT_BENCH_AGGREGATE_H
#define XNAT_BENCH_AGGREGATE_H

#include "bench_common.h"
#include "bench_pctl.h"

#define LINE_1G 1e9
#define LINE_10G 1e10

/* Frames per second that fill a link of BPS with frames of WIRE bytes. */
double line_pps(double bps, double wire);

struct agg {
	int n;
	double med, min, max;
};

struct agg agg_of(double *v, int n);

/* One statistic of a (mode, profile) over the repetitions that ran it. */
enum cell_stat { CS_MAX, CS_MBPS, CS_NOLOSS, CS_CHAIN_PPS, CS_CHAIN_NS,
		 CS_ROUTER_NS };

struct agg cell_agg(const struct bench_plan *p, struct bench_results *r,
		    enum bench_mode m, int pi, enum cell_stat what);
/* Same-run ratio of mode A to mode B on a profile (forwarded pps). */
struct agg ratio_agg(const struct bench_plan *p, struct bench_results *r,
		     enum bench_mode a, enum bench_mode b, int pi);
/* Flows per second set up by mode M. */
struct agg newflow_agg(struct bench_results *r, enum bench_mode m);
/* What tcp_agg() takes the median of. */
enum tcp_what {
	TCP_MBPS,          /* aggregate goodput */
	TCP_PING_MS,       /* the ping's median round trip */
	TCP_UDP_MS,        /* the UDP probe's (RRUL) */
	TCP_RETRANSMITS,   /* segments sent again */
	TCP_HOST_DROPS,    /* frames the hosts' ports dropped */
	TCP_ROUTER_DROPS,  /* frames the router's ports dropped */
};

/* TCP test T in mode M: WHAT over its repetitions. */
struct agg tcp_agg(struct bench_results *r, enum bench_mode m,
		   enum bench_tcp_test t, enum tcp_what what);

/* The loss search's resolution, as a fraction of the saturation rate:
 * its first step tries the full rate, each later one halves the
 * interval. */
double search_resolution(const struct bench_plan *p);

/* The round trips of TCP test T's probe WHICH (TCP_PING_MS or
 * TCP_UDP_MS) in mode M, every repetition's pooled: their percentiles. */
struct pctl tcp_probe_pctl(struct bench_results *r, enum bench_mode m,
			   enum bench_tcp_test t, enum tcp_what which);
/* The same of one test's sample. */
struct pctl tcp_sample_pctl(const struct bench_tcp *x, enum tcp_what which);

/* The profile whose per-packet costs the report's header and the JSON's
 * cost_ns sum up: the plan's first one-direction profile (one CPU's chain,
 * so ns/packet means what it says) on which the drop mode ran. -1: none. */
int cost_summary_profile(const struct bench_plan *p, struct bench_results *r);

/* One (mode, profile) row of the results: the saturation rate in pps and
 * Mbit/s, the no-loss rate, and the frames' size on the wire. */
struct result_row {
	const struct bench_profile *pr;
	double wire;
	struct agg mx, mb, nl;
};
/* ROW for mode M and profile PI; false when that cell never ran. */
bool result_row(const struct bench_plan *p, struct bench_results *r,
		enum bench_mode m, int pi, struct result_row *row);

/* The same-run ratios the report shows: mode A over mode B. */
#define BENCH_N_RATIOS 10
struct bench_ratio {
	enum bench_mode a, b;
};
extern const struct bench_ratio bench_ratios[BENCH_N_RATIOS];

#endif /* XNAT_BENCH_AGGREGATE_H */
