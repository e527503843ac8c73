// SPDX-License-Identifier: GPL-2.0-only
/* The numbers behind every table, the JSON and the plot; see
 * bench_aggregate.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_aggregate.h"

/* Each mode against both kernel baselines, side by side: kernel-masq (the
 * kernel's NAT alone) and kernel-nat (xnat's own policy in the kernel). */
const struct bench_ratio bench_ratios[BENCH_N_RATIOS] = {
	{ BM_XDP_NAT, BM_KERNEL_MASQ },
	{ BM_XDP_NAT, BM_KERNEL_NAT },
	{ BM_XDP_NAT, BM_KERNEL_FWD },
	{ BM_XDP_NAT, BM_XDP_FWD },
	{ BM_XDP_NAT, BM_XDP_NAT_SLOW },
	{ BM_KERNEL_NAT, BM_KERNEL_MASQ },
	{ BM_KERNEL_NAT, BM_KERNEL_FWD },
	{ BM_XDP_OFFLOAD, BM_XDP_NAT },
	{ BM_XDP_OFFLOAD, BM_KERNEL_MASQ },
	{ BM_XDP_OFFLOAD, BM_KERNEL_NAT },
};

/* Frames per second that fill a link of BPS with frames of WIRE bytes. */
double line_pps(double bps, double wire)
{
	return bps / ((wire + WIRE_OVERHEAD) * 8);
}

double search_resolution(const struct bench_plan *p)
{
	double r = 1;

	for (int i = 1; i < p->search_steps; i++)
		r /= 2;
	return r;
}

struct agg agg_of(double *v, int n)
{
	struct agg a = { .n = n };

	if (n)
		bench_stats(v, n, &a.med, &a.min, &a.max);
	return a;
}

struct agg cell_agg(const struct bench_plan *p, struct bench_results *r,
		    enum bench_mode m, int pi, enum cell_stat what)
{
	double v[64];
	int n = 0;

	/* Both directions run on two CPUs at once: their rates are rates,
	 * but 1e9 / rate is no packet's cost. */
	if (p->profiles[pi].both && (what == CS_CHAIN_NS || what == CS_ROUTER_NS))
		return agg_of(v, 0);
	for (int rep = 0; rep < p->reps && n < 64; rep++) {
		struct bench_cell *c = bench_cell(r, p, rep, m, pi);
		struct bench_cell *d = bench_cell(r, p, rep, BM_DROP, pi);

		if (!c->ran)
			continue;
		switch (what) {
		case CS_MAX: v[n++] = c->max_pps; break;
		case CS_MBPS: v[n++] = c->max_mbps; break;
		case CS_NOLOSS:
			if (c->noloss_valid)
				v[n++] = c->noloss_pps;
			break;
		case CS_CHAIN_PPS:
			v[n++] = c->chain_pps;
			break;
		case CS_CHAIN_NS:
			if (c->chain_pps > 0)
				v[n++] = 1e9 / c->chain_pps;
			break;
		case CS_ROUTER_NS:
			/* Same repetition's drop chain: the generator and
			 * the hop cancel out. */
			if (c->chain_pps > 0 && d->ran && d->chain_pps > 0)
				v[n++] = 1e9 / c->chain_pps - 1e9 / d->chain_pps;
			break;
		}
	}
	return agg_of(v, n);
}

/* Same-run ratio of mode A to mode B on a profile (forwarded pps). */
struct agg ratio_agg(const struct bench_plan *p, struct bench_results *r,
		     enum bench_mode a, enum bench_mode b, int pi)
{
	double v[64];
	int n = 0;

	for (int rep = 0; rep < p->reps && n < 64; rep++) {
		struct bench_cell *x = bench_cell(r, p, rep, a, pi);
		struct bench_cell *y = bench_cell(r, p, rep, b, pi);

		if (x->ran && y->ran && y->max_pps > 0)
			v[n++] = x->max_pps / y->max_pps;
	}
	return agg_of(v, n);
}

struct agg newflow_agg(struct bench_results *r, enum bench_mode m)
{
	double v[64];
	int n = 0;

	for (int i = 0; i < r->n_newflow && n < 64; i++)
		if (r->newflow[i].mode == m)
			v[n++] = r->newflow[i].rate;
	return agg_of(v, n);
}

struct agg tcp_agg(struct bench_results *r, enum bench_mode m,
		   enum bench_tcp_test t, enum tcp_what what)
{
	double v[64];
	int n = 0;

	for (int i = 0; i < r->n_tcp && n < 64; i++) {
		const struct bench_tcp *x = &r->tcp[i];

		if (x->mode != m || x->test != t || !x->ok)
			continue;
		if (what == TCP_MBPS)
			v[n++] = x->mbps;
		else if (what == TCP_PING_MS && x->ping_median_ms >= 0)
			v[n++] = x->ping_median_ms;
		else if (what == TCP_UDP_MS && x->udp_median_ms >= 0)
			v[n++] = x->udp_median_ms;
		else if (what == TCP_RETRANSMITS && x->retransmits >= 0)
			v[n++] = (double)x->retransmits;
		else if (what == TCP_HOST_DROPS && x->host_drops >= 0)
			v[n++] = (double)x->host_drops;
		else if (what == TCP_ROUTER_DROPS && x->router_drops >= 0)
			v[n++] = (double)x->router_drops;
	}
	return agg_of(v, n);
}

/* Sample X's round trips of probe WHICH, and how many. */
static const double *probe_rtts(const struct bench_tcp *x, enum tcp_what which,
				int *n)
{
	*n = which == TCP_PING_MS ? x->ping_recv : x->udp_recv;
	if (*n > BENCH_PROBES_MAX)
		*n = BENCH_PROBES_MAX;
	return which == TCP_PING_MS ? x->ping_rtt_ms : x->udp_rtt_ms;
}

struct pctl tcp_sample_pctl(const struct bench_tcp *x, enum tcp_what which)
{
	double v[BENCH_PROBES_MAX];
	int n;
	const double *rtt = probe_rtts(x, which, &n);

	memcpy(v, rtt, n * sizeof(*v));
	return pctl_of(v, n);
}

struct pctl tcp_probe_pctl(struct bench_results *r, enum bench_mode m,
			   enum bench_tcp_test t, enum tcp_what which)
{
	struct pctl s;
	double *v;
	int n = 0;

	v = malloc((size_t)(r->n_tcp ?: 1) * BENCH_PROBES_MAX * sizeof(*v));
	if (!v)
		return (struct pctl){ 0 };
	for (int i = 0; i < r->n_tcp; i++) {
		const struct bench_tcp *x = &r->tcp[i];
		const double *rtt;
		int k;

		if (x->mode != m || x->test != t || !x->ok)
			continue;
		rtt = probe_rtts(x, which, &k);
		memcpy(v + n, rtt, k * sizeof(*v));
		n += k;
	}
	s = pctl_of(v, n);
	free(v);
	return s;
}

bool result_row(const struct bench_plan *p, struct bench_results *r,
		enum bench_mode m, int pi, struct result_row *row)
{
	row->pr = &p->profiles[pi];
	row->wire = bench_size_wire_bytes(row->pr->size);
	row->mx = cell_agg(p, r, m, pi, CS_MAX);
	row->mb = cell_agg(p, r, m, pi, CS_MBPS);
	row->nl = cell_agg(p, r, m, pi, CS_NOLOSS);
	return row->mx.n;
}

int cost_summary_profile(const struct bench_plan *p, struct bench_results *r)
{
	if (!bench_plan_has_mode(p, BM_DROP))
		return -1;
	for (int pi = 0; pi < p->n_profiles; pi++)
		if (!p->profiles[pi].both &&
		    cell_agg(p, r, BM_DROP, pi, CS_CHAIN_NS).n)
			return pi;
	return -1;
}
