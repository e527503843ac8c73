// SPDX-License-Identifier: GPL-2.0-only
/*
 * What `xnat bench` prints and writes: the text tables (modes in rows,
 * profiles in columns, "Mpps (min-max)" cells, as in the public router
 * test threads), the TCP table ("940 (2)": Mbit/s and median ping), the
 * per-packet costs and same-run ratios, the JSON document with every
 * sample, and the gnuplot PNG of forwarded pps per mode and profile.
 *
 * Every number in a table is the median over repetitions with min-max
 * beside it, and every comparison is computed per repetition first (modes
 * are interleaved within one, so drift hits them alike) and then its
 * median taken. The JSON has its own small writer: the one in json.c
 * streams to stdout with integers only, and this document goes to a file
 * too and needs fractions.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "bench_common.h"
#include "json.h"
#include "log.h"
#include "reasons.h"

#define LINE_1G 1e9
#define LINE_10G 1e10

extern char **environ;

/* Frames per second that fill a link of BPS with frames of WIRE bytes. */
static double line_pps(double bps, double wire)
{
	return bps / ((wire + WIRE_OVERHEAD) * 8);
}

struct agg {
	int n;
	double med, min, max;
};

static struct agg agg_of(double *v, int n)
{
	struct agg a = { .n = n };

	if (n)
		bench_stats(v, n, &a.med, &a.min, &a.max);
	return a;
}

/* One statistic of a (mode, profile) over the repetitions that ran it. */
enum cell_stat { CS_MAX, CS_MBPS, CS_NOLOSS, CS_CHAIN_PPS, CS_CHAIN_NS,
		 CS_ROUTER_NS };

static struct agg cell_agg(const struct bench_plan *p, struct bench_results *r,
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
static struct agg ratio_agg(const struct bench_plan *p, struct bench_results *r,
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

static void cell_fmt(char *buf, size_t len, struct agg a, double scale,
		     const char *fmt_one)
{
	char m[16], lo[16], hi[16];

	if (!a.n) {
		snprintf(buf, len, "-");
		return;
	}
	snprintf(m, sizeof(m), fmt_one, a.med * scale);
	if (a.n == 1) {
		snprintf(buf, len, "%s", m);
		return;
	}
	snprintf(lo, sizeof(lo), fmt_one, a.min * scale);
	snprintf(hi, sizeof(hi), fmt_one, a.max * scale);
	snprintf(buf, len, "%s (%s-%s)", m, lo, hi);
}

static bool mode_on(const struct bench_plan *p, enum bench_mode m)
{
	return p->modes & (1U << m);
}

static void group_name(char *buf, size_t len, uint32_t flows, bool both)
{
	snprintf(buf, len, "%u flow%s, %s", flows, flows == 1 ? "" : "s",
		 both ? "both directions" : "LAN->WAN");
}

/* One table per (flows, direction) group: modes x sizes. */
static void udp_tables(FILE *f, const struct bench_plan *p,
		       struct bench_results *r, enum cell_stat what,
		       const char *title)
{
	for (int g = 0; g < 4; g++) {
		uint32_t flows = g & 1 ? 10000 : 1;
		bool both = g & 2, any = false;
		char name[64], cell[64];

		for (int pi = 0; pi < p->n_profiles; pi++)
			any |= p->profiles[pi].flows == flows &&
			       p->profiles[pi].both == both;
		if (!any)
			continue;
		group_name(name, sizeof(name), flows, both);
		fprintf(f, "\n%s, %s\n%-13s", title, name, "mode");
		for (int pi = 0; pi < p->n_profiles; pi++)
			if (p->profiles[pi].flows == flows && p->profiles[pi].both == both)
				fprintf(f, " %-21s", bench_size_names[p->profiles[pi].size]);
		fprintf(f, "\n");
		for (int m = 0; m < BM_MAX; m++) {
			if (!mode_on(p, m) || (m == BM_DROP && what == CS_NOLOSS))
				continue;
			fprintf(f, "%-13s", bench_mode_names[m]);
			for (int pi = 0; pi < p->n_profiles; pi++) {
				const struct bench_profile *pr = &p->profiles[pi];
				struct agg a;

				if (pr->flows != flows || pr->both != both)
					continue;
				if (m == BM_DROP && what == CS_MAX) {
					/* Its "rate" is what it dropped. */
					a = cell_agg(p, r, m, pi, CS_CHAIN_PPS);
					cell_fmt(cell, sizeof(cell), a, 1e-6, "%.2f");
					strncat(cell, "*", sizeof(cell) - strlen(cell) - 1);
				} else {
					a = cell_agg(p, r, m, pi, what);
					cell_fmt(cell, sizeof(cell), a, 1e-6, "%.2f");
				}
				fprintf(f, " %-21s", cell);
			}
			fprintf(f, "\n");
		}
	}
}

static void detail_table(FILE *f, const struct bench_plan *p,
			 struct bench_results *r)
{
	fprintf(f, "\nPer mode and profile (medians): forwarded Mpps and Mbit/s (frames incl. FCS),\n"
		   "the loss-free rate, each as %% of 1 GbE and 10 GbE line rate; offered = forwarded + lost\n"
		   "summed over the saturation trials.\n");
	fprintf(f, "%-13s %-15s %8s %8s %6s %6s %9s %6s %6s %12s %12s %10s\n",
		"mode", "profile", "Mpps", "Mbit/s", "%1G", "%10G", "loss-free",
		"%1G", "%10G", "offered", "forwarded", "lost");
	for (int m = 0; m < BM_MAX; m++) {
		if (!mode_on(p, m))
			continue;
		for (int pi = 0; pi < p->n_profiles; pi++) {
			const struct bench_profile *pr = &p->profiles[pi];
			double wire = bench_size_wire_bytes(pr->size);
			struct agg mx = cell_agg(p, r, m, pi, CS_MAX);
			struct agg mb = cell_agg(p, r, m, pi, CS_MBPS);
			struct agg nl = cell_agg(p, r, m, pi, CS_NOLOSS);
			uint64_t off = 0, fwd = 0;
			int64_t lost = 0;

			if (!mx.n)
				continue;
			for (int i = 0; i < r->n_samples; i++) {
				const struct bench_sample *s = &r->samples[i];

				if (s->mode == (enum bench_mode)m && s->profile == pi &&
				    !strcmp(s->kind, "max")) {
					off += s->offered;
					fwd += s->forwarded;
					lost += s->lost;
				}
			}
			fprintf(f, "%-13s %-15s %8.3f %8.0f %6.1f %6.2f ",
				bench_mode_names[m], pr->name, mx.med / 1e6, mb.med,
				100 * mx.med / line_pps(LINE_1G, wire),
				100 * mx.med / line_pps(LINE_10G, wire));
			if (nl.n)
				fprintf(f, "%9.3f %6.1f %6.2f ", nl.med / 1e6,
					100 * nl.med / line_pps(LINE_1G, wire),
					100 * nl.med / line_pps(LINE_10G, wire));
			else
				fprintf(f, "%9s %6s %6s ", "-", "-", "-");
			fprintf(f, "%12llu %12llu %10lld\n", (unsigned long long)off,
				(unsigned long long)fwd, (long long)lost);
		}
	}
}

/* Profiles the cost and ratio tables use: one direction only, where the
 * chain is one CPU's and ns/packet means what it says. */
static bool cost_profile(const struct bench_profile *pr)
{
	return !pr->both;
}

static void cost_table(FILE *f, const struct bench_plan *p,
		       struct bench_results *r)
{
	char cell[64];

	if (!mode_on(p, BM_DROP))
		return;
	fprintf(f, "\nPer-packet router cost, ns: chain ns/packet (1e9 / forwarded pps at saturation)\n"
		   "minus the drop chain's of the same repetition (generator and one hop), median (min-max)\n"
		   "%-13s", "mode");
	for (int pi = 0; pi < p->n_profiles; pi++)
		if (cost_profile(&p->profiles[pi]))
			fprintf(f, " %-21s", p->profiles[pi].name);
	fprintf(f, "\n");
	for (int m = 0; m < BM_MAX; m++) {
		if (!mode_on(p, m))
			continue;
		fprintf(f, "%-13s", bench_mode_names[m]);
		for (int pi = 0; pi < p->n_profiles; pi++) {
			if (!cost_profile(&p->profiles[pi]))
				continue;
			if (m == BM_DROP) {
				cell_fmt(cell, sizeof(cell),
					 cell_agg(p, r, m, pi, CS_CHAIN_NS), 1, "%.0f");
				strncat(cell, " chain", sizeof(cell) - strlen(cell) - 1);
			} else {
				cell_fmt(cell, sizeof(cell),
					 cell_agg(p, r, m, pi, CS_ROUTER_NS), 1, "%.0f");
			}
			fprintf(f, " %-21s", cell);
		}
		fprintf(f, "\n");
	}
}

static const struct {
	enum bench_mode a, b;
} ratios[] = {
	{ BM_XDP_NAT, BM_KERNEL_NAT },
	{ BM_XDP_NAT, BM_KERNEL_FWD },
	{ BM_XDP_NAT, BM_XDP_FWD },
	{ BM_XDP_NAT, BM_XDP_NAT_SLOW },
	{ BM_KERNEL_NAT, BM_KERNEL_FWD },
};

static void ratio_table(FILE *f, const struct bench_plan *p,
			struct bench_results *r)
{
	char cell[64], head[40];

	fprintf(f, "\nSame-run ratios of forwarded pps (per repetition, then median (min-max))\n%-15s",
		"profile");
	for (size_t i = 0; i < sizeof(ratios) / sizeof(ratios[0]); i++) {
		snprintf(head, sizeof(head), "%s/%s", bench_mode_names[ratios[i].a],
			 bench_mode_names[ratios[i].b]);
		fprintf(f, " %-24s", head);
	}
	fprintf(f, "\n");
	for (int pi = 0; pi < p->n_profiles; pi++) {
		fprintf(f, "%-15s", p->profiles[pi].name);
		for (size_t i = 0; i < sizeof(ratios) / sizeof(ratios[0]); i++) {
			cell_fmt(cell, sizeof(cell),
				 ratio_agg(p, r, ratios[i].a, ratios[i].b, pi), 1, "%.2f");
			fprintf(f, " %-24s", cell);
		}
		fprintf(f, "\n");
	}
}

static struct agg newflow_agg(struct bench_results *r, enum bench_mode m)
{
	double v[64];
	int n = 0;

	for (int i = 0; i < r->n_newflow && n < 64; i++)
		if (r->newflow[i].mode == m)
			v[n++] = r->newflow[i].rate;
	return agg_of(v, n);
}

static void newflow_table(FILE *f, const struct bench_plan *p,
			  struct bench_results *r)
{
	char cell[64];

	if (!r->n_newflow)
		return;
	fprintf(f, "\nNew flows: %u distinct UDP flows offered once (64 B), flows set up per second\n"
		   "(xdp: fwd_slow; kernel: first packets at the sink), median (min-max)\n",
		p->newflow_flows);
	for (int m = 0; m < BM_MAX; m++) {
		struct agg a = newflow_agg(r, m);
		uint64_t off = 0, up = 0;

		if (!a.n)
			continue;
		for (int i = 0; i < r->n_newflow; i++)
			if (r->newflow[i].mode == (enum bench_mode)m) {
				off += r->newflow[i].flows_offered;
				up += r->newflow[i].flows_set_up;
			}
		cell_fmt(cell, sizeof(cell), a, 1e-3, "%.0f");
		fprintf(f, "%-13s %s k flows/s, %llu of %llu offered flows set up\n",
			bench_mode_names[m], cell, (unsigned long long)up,
			(unsigned long long)off);
	}
	for (int i = 0; i < r->n_newflow; i++)
		if (r->newflow[i].note[0] && r->newflow[i].rep == 0)
			fprintf(f, "  %s: %s\n", bench_mode_names[r->newflow[i].mode],
				r->newflow[i].note);
}

static struct agg tcp_agg(struct bench_results *r, enum bench_mode m,
			  enum bench_tcp_test t, int what)
{
	double v[64];
	int n = 0;

	for (int i = 0; i < r->n_tcp && n < 64; i++) {
		const struct bench_tcp *x = &r->tcp[i];

		if (x->mode != m || x->test != t || !x->ok)
			continue;
		if (what == 0)
			v[n++] = x->mbps;
		else if (what == 1 && x->ping_median_ms >= 0)
			v[n++] = x->ping_median_ms;
		else if (what == 2 && x->udp_median_ms >= 0)
			v[n++] = x->udp_median_ms;
	}
	return agg_of(v, n);
}

static void ms_fmt(char *buf, size_t len, double ms)
{
	/* Whole ms as the threads print them, but veth latencies are
	 * fractions of one: keep two significant digits there. */
	if (ms >= 10)
		snprintf(buf, len, "%.0f", ms);
	else
		snprintf(buf, len, "%.2g", ms);
}

static void tcp_table(FILE *f, const struct bench_plan *p,
		      struct bench_results *r)
{
	if (!r->n_tcp)
		return;
	fprintf(f, "\nTCP (iperf3, %g s): aggregate Mbit/s (median ping ms), median of repetitions;\n"
		   "RRUL: 4 up + 4 down at once, its UDP probe's median round trip after the slash\n%-13s",
		p->tcp_s, "mode");
	for (int t = 0; t < BT_MAX; t++)
		fprintf(f, " %-22s", bench_tcp_names[t]);
	fprintf(f, "\n");
	for (int m = 0; m < BM_MAX; m++) {
		bool any = false;

		for (int i = 0; i < r->n_tcp; i++)
			any |= r->tcp[i].mode == (enum bench_mode)m;
		if (!any)
			continue;
		fprintf(f, "%-13s", bench_mode_names[m]);
		for (int t = 0; t < BT_MAX; t++) {
			struct agg mb = tcp_agg(r, m, t, 0), pg = tcp_agg(r, m, t, 1),
				   ud = tcp_agg(r, m, t, 2);
			char cell[64], ping[16], udp[16];

			if (!mb.n) {
				fprintf(f, " %-22s", "-");
				continue;
			}
			ms_fmt(ping, sizeof(ping), pg.n ? pg.med : -1);
			if (t == BT_RRUL && ud.n) {
				ms_fmt(udp, sizeof(udp), ud.med);
				snprintf(cell, sizeof(cell), "%.0f (%s/%s)", mb.med,
					 pg.n ? ping : "-", udp);
			} else {
				snprintf(cell, sizeof(cell), "%.0f (%s)", mb.med,
					 pg.n ? ping : "-");
			}
			fprintf(f, " %-22s", cell);
		}
		fprintf(f, "\n");
	}
}

void bench_report_text(FILE *f, const struct bench_plan *p,
		       struct bench_results *r)
{
	bool any_unverified = false;

	fprintf(f, "xnat bench: %s, Linux %s, %d CPUs, %d repetition%s, %.0f s%s\n",
		r->date, r->kernel, r->ncpus, p->reps, p->reps == 1 ? "" : "s",
		r->elapsed_s, r->interrupted ? " (INTERRUPTED: partial)" : "");
	fprintf(f, "command: %s\n", p->command);
	fprintf(f, "CPUs: LAN->WAN generator on CPU %d, WAN->LAN generator on CPU %d; the router's\n"
		   "  receive and forwarding run in softirq on the sending generator's CPU (veth);\n"
		   "  the control thread is not pinned.\n",
		p->cpu_lan_gen, p->cpu_wan_gen);
	fprintf(f, "Frames: sizes on the wire incl. the 4 B FCS; line rate adds %d B per frame\n"
		   "  (preamble 7 + SFD 1 + inter-frame gap 12): 64 B = %.3f Mpps at 1 GbE.\n"
		   "  \"both\": LAN->WAN plus WAN->LAN replies (of flow 0: the generator varies\n"
		   "  source ports only). veth in one VM is not a NIC: compare modes, not boxes.\n",
		WIRE_OVERHEAD, line_pps(LINE_1G, 64) / 1e6);

	if (p->kinds & BK_UDP) {
		udp_tables(f, p, r, CS_MAX, "UDP forwarded Mpps at saturation, median (min-max)");
		fprintf(f, "  * drop: Mpps the router's XDP_DROP took (nothing is forwarded)\n");
		udp_tables(f, p, r, CS_NOLOSS, "UDP loss-free rate (loss < 0.1 %), offered Mpps");
		detail_table(f, p, r);
		cost_table(f, p, r);
		ratio_table(f, p, r);
	}
	if (r->micro_fast_ns >= 0 || r->micro_note[0]) {
		fprintf(f, "\nBPF_PROG_RUN ns/packet (repeat, one CPU): ");
		if (r->micro_fast_ns >= 0)
			fprintf(f, "fast-path hit %.1f, fast path off %.1f, bare forwarder %.1f",
				r->micro_fast_ns, r->micro_slow_ns, r->micro_fwd_ns);
		if (r->micro_note[0])
			fprintf(f, "%s%s", r->micro_fast_ns >= 0 ? "; " : "", r->micro_note);
		fprintf(f, "\n");
	}
	newflow_table(f, p, r);
	tcp_table(f, p, r);
	for (int i = 0; i < r->n_samples; i++)
		any_unverified |= !r->samples[i].verified;
	if (any_unverified)
		fprintf(f, "\nWARNING: some samples did not verify their mode (see \"note\" in the JSON)\n");
}

/* ---- JSON ---------------------------------------------------------------------- */

static void json_agg(struct json_writer *w, const char *key, struct agg a)
{
	if (!a.n) {
		jsonw_null(w, key);
		return;
	}
	jsonw_obj_begin(w, key);
	jsonw_double(w, "median", a.med);
	jsonw_double(w, "min", a.min);
	jsonw_double(w, "max", a.max);
	jsonw_i64(w, "n", a.n);
	jsonw_obj_end(w);
}

/* xnat's counters that moved, by their stats names. */
static void json_reasons(struct json_writer *w, const struct bench_router_counters *c)
{
	jsonw_obj_begin(w, "reasons");
	for (int r = 0; r < XNAT_REASON_MAX; r++)
		if (c->reason[r])
			jsonw_u64(w, reasons[r].name, c->reason[r]);
	jsonw_obj_end(w);
}

static void json_plan(struct json_writer *w, const struct bench_plan *p)
{
	jsonw_obj_begin(w, "plan");
	jsonw_bool(w, "quick", p->quick);
	jsonw_i64(w, "reps", p->reps);
	jsonw_double(w, "max_s", p->max_s);
	jsonw_double(w, "step_s", p->step_s);
	jsonw_i64(w, "search_steps", p->search_steps);
	jsonw_double(w, "loss_max", p->loss_max);
	jsonw_i64(w, "newflow_flows", p->newflow_flows);
	jsonw_double(w, "tcp_s", p->tcp_s);
	jsonw_arr_begin(w, "modes");
	for (int m = 0; m < BM_MAX; m++)
		if (mode_on(p, m))
			jsonw_str(w, NULL, bench_mode_names[m]);
	jsonw_arr_end(w);
	jsonw_arr_begin(w, "profiles");
	for (int pi = 0; pi < p->n_profiles; pi++) {
		const struct bench_profile *pr = &p->profiles[pi];

		jsonw_obj_begin(w, NULL);
		jsonw_str(w, "name", pr->name);
		jsonw_str(w, "size", bench_size_names[pr->size]);
		jsonw_double(w, "wire_bytes", bench_size_wire_bytes(pr->size));
		jsonw_i64(w, "flows", pr->flows);
		jsonw_i64(w, "reverse_flows", pr->both ? BENCH_REVERSE_FLOWS : 0);
		jsonw_bool(w, "both", pr->both);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_obj_end(w);
}

static void json_samples(struct json_writer *w, const struct bench_plan *p,
			 struct bench_results *r)
{
	jsonw_arr_begin(w, "samples");
	for (int i = 0; i < r->n_samples; i++) {
		const struct bench_sample *s = &r->samples[i];
		const struct bench_router_counters *c = &s->router;

		jsonw_obj_begin(w, NULL);
		jsonw_i64(w, "rep", s->rep);
		jsonw_str(w, "mode", bench_mode_names[s->mode]);
		jsonw_str(w, "profile", p->profiles[s->profile].name);
		jsonw_str(w, "kind", s->kind);
		jsonw_double(w, "target_pps", s->target_pps);
		jsonw_double(w, "seconds", s->seconds);
		jsonw_u64(w, "offered", s->offered);
		jsonw_u64(w, "forwarded", s->forwarded);
		jsonw_i64(w, "lost", s->lost);
		jsonw_u64(w, "offered_bytes", s->offered_bytes);
		jsonw_u64(w, "forwarded_bytes", s->forwarded_bytes);
		jsonw_arr_begin(w, "directions");
		for (int d = 0; d < (p->profiles[s->profile].both ? 2 : 1); d++) {
			jsonw_obj_begin(w, NULL);
			jsonw_str(w, "dir", d ? "wan-lan" : "lan-wan");
			jsonw_u64(w, "offered", s->dir_offered[d]);
			jsonw_u64(w, "forwarded", s->dir_forwarded[d]);
			jsonw_obj_end(w);
		}
		jsonw_arr_end(w);
		jsonw_obj_begin(w, "router");
		jsonw_u64(w, "fwd_fast", c->fwd_fast);
		jsonw_u64(w, "fwd_slow", c->fwd_slow);
		jsonw_u64(w, "fwd_routed", c->fwd_routed);
		jsonw_u64(w, "passed", c->passed);
		jsonw_u64(w, "dropped", c->dropped);
		jsonw_u64(w, "drop_seen", c->drop_seen);
		jsonw_u64(w, "kernel_forwarded", c->kernel_fwd);
		if (c->conntrack >= 0)
			jsonw_i64(w, "conntrack", c->conntrack);
		else
			jsonw_null(w, "conntrack");
		json_reasons(w, c);
		jsonw_obj_end(w);
		jsonw_bool(w, "verified", s->verified);
		jsonw_str(w, "note", s->note);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
}

static void json_results(struct json_writer *w, const struct bench_plan *p,
			 struct bench_results *r)
{
	jsonw_arr_begin(w, "results");
	for (int m = 0; m < BM_MAX; m++) {
		if (!mode_on(p, m))
			continue;
		for (int pi = 0; pi < p->n_profiles; pi++) {
			const struct bench_profile *pr = &p->profiles[pi];
			double wire = bench_size_wire_bytes(pr->size);
			struct agg mx = cell_agg(p, r, m, pi, CS_MAX);
			struct agg nl = cell_agg(p, r, m, pi, CS_NOLOSS);

			if (!mx.n)
				continue;
			jsonw_obj_begin(w, NULL);
			jsonw_str(w, "mode", bench_mode_names[m]);
			jsonw_str(w, "profile", pr->name);
			json_agg(w, "max_pps", mx);
			json_agg(w, "max_mbps", cell_agg(p, r, m, pi, CS_MBPS));
			json_agg(w, "noloss_pps", m == BM_DROP ? (struct agg){ 0 } : nl);
			json_agg(w, "chain_pps", cell_agg(p, r, m, pi, CS_CHAIN_PPS));
			json_agg(w, "chain_ns", cell_agg(p, r, m, pi, CS_CHAIN_NS));
			json_agg(w, "router_ns", m == BM_DROP ? (struct agg){ 0 } :
				cell_agg(p, r, m, pi, CS_ROUTER_NS));
			jsonw_double(w, "max_pct_1g", 100 * mx.med / line_pps(LINE_1G, wire));
			jsonw_double(w, "max_pct_10g", 100 * mx.med / line_pps(LINE_10G, wire));
			if (nl.n && m != BM_DROP) {
				jsonw_double(w, "noloss_pct_1g", 100 * nl.med / line_pps(LINE_1G, wire));
				jsonw_double(w, "noloss_pct_10g", 100 * nl.med / line_pps(LINE_10G, wire));
			} else {
				jsonw_null(w, "noloss_pct_1g");
				jsonw_null(w, "noloss_pct_10g");
			}
			jsonw_obj_end(w);
		}
	}
	jsonw_arr_end(w);

	jsonw_arr_begin(w, "ratios");
	for (int pi = 0; pi < p->n_profiles; pi++)
		for (size_t i = 0; i < sizeof(ratios) / sizeof(ratios[0]); i++) {
			struct agg a = ratio_agg(p, r, ratios[i].a, ratios[i].b, pi);

			if (!a.n)
				continue;
			jsonw_obj_begin(w, NULL);
			jsonw_str(w, "profile", p->profiles[pi].name);
			jsonw_str(w, "mode", bench_mode_names[ratios[i].a]);
			jsonw_str(w, "over", bench_mode_names[ratios[i].b]);
			json_agg(w, "ratio", a);
			jsonw_obj_end(w);
		}
	jsonw_arr_end(w);
}

static void json_newflow(struct json_writer *w, const struct bench_plan *p,
			 struct bench_results *r)
{
	jsonw_obj_begin(w, "newflow");
	jsonw_i64(w, "flows", p->newflow_flows);
	jsonw_arr_begin(w, "samples");
	for (int i = 0; i < r->n_newflow; i++) {
		const struct bench_newflow *n = &r->newflow[i];

		jsonw_obj_begin(w, NULL);
		jsonw_i64(w, "rep", n->rep);
		jsonw_str(w, "mode", bench_mode_names[n->mode]);
		jsonw_u64(w, "flows_offered", n->flows_offered);
		jsonw_u64(w, "flows_set_up", n->flows_set_up);
		jsonw_u64(w, "forwarded", n->forwarded);
		jsonw_double(w, "seconds", n->seconds);
		jsonw_double(w, "flows_per_s", n->rate);
		jsonw_double(w, "offered_pps", n->offered_pps);
		jsonw_str(w, "counted_by", n->how);
		jsonw_obj_begin(w, "router");
		jsonw_u64(w, "fwd_fast", n->router.fwd_fast);
		jsonw_u64(w, "fwd_slow", n->router.fwd_slow);
		jsonw_u64(w, "passed", n->router.passed);
		jsonw_u64(w, "dropped", n->router.dropped);
		json_reasons(w, &n->router);
		jsonw_obj_end(w);
		jsonw_bool(w, "verified", n->verified);
		jsonw_str(w, "note", n->note);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_arr_begin(w, "results");
	for (int m = 0; m < BM_MAX; m++) {
		struct agg a = newflow_agg(r, m);

		if (!a.n)
			continue;
		jsonw_obj_begin(w, NULL);
		jsonw_str(w, "mode", bench_mode_names[m]);
		json_agg(w, "flows_per_s", a);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_obj_end(w);
}

static void json_tcp(struct json_writer *w, const struct bench_plan *p,
		     struct bench_results *r)
{
	jsonw_obj_begin(w, "tcp");
	jsonw_double(w, "seconds", p->tcp_s);
	jsonw_arr_begin(w, "samples");
	for (int i = 0; i < r->n_tcp; i++) {
		const struct bench_tcp *t = &r->tcp[i];

		jsonw_obj_begin(w, NULL);
		jsonw_i64(w, "rep", t->rep);
		jsonw_str(w, "mode", bench_mode_names[t->mode]);
		jsonw_str(w, "test", bench_tcp_names[t->test]);
		jsonw_double(w, "seconds", t->seconds);
		jsonw_double(w, "mbps", t->mbps);
		jsonw_double(w, "mbps_down", t->mbps_down);
		jsonw_double(w, "mbps_up", t->mbps_up);
		if (t->ping_median_ms >= 0)
			jsonw_double(w, "ping_median_ms", t->ping_median_ms);
		else
			jsonw_null(w, "ping_median_ms");
		jsonw_i64(w, "ping_sent", t->ping_sent);
		jsonw_i64(w, "ping_received", t->ping_recv);
		if (t->udp_median_ms >= 0)
			jsonw_double(w, "udp_median_ms", t->udp_median_ms);
		else
			jsonw_null(w, "udp_median_ms");
		jsonw_i64(w, "udp_sent", t->udp_sent);
		jsonw_i64(w, "udp_received", t->udp_recv);
		jsonw_bool(w, "ok", t->ok);
		jsonw_str(w, "note", t->note);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_arr_begin(w, "results");
	for (int m = 0; m < BM_MAX; m++)
		for (int t = 0; t < BT_MAX; t++) {
			struct agg a = tcp_agg(r, m, t, 0);

			if (!a.n)
				continue;
			jsonw_obj_begin(w, NULL);
			jsonw_str(w, "mode", bench_mode_names[m]);
			jsonw_str(w, "test", bench_tcp_names[t]);
			json_agg(w, "mbps", a);
			json_agg(w, "ping_ms", tcp_agg(r, m, t, 1));
			json_agg(w, "udp_ms", tcp_agg(r, m, t, 2));
			jsonw_obj_end(w);
		}
	jsonw_arr_end(w);
	jsonw_obj_end(w);
}

void bench_report_json(FILE *f, const struct bench_plan *p,
		       struct bench_results *r)
{
	struct json_writer w;

	jsonw_init(&w, f, true);
	jsonw_obj_begin(&w, NULL);
	jsonw_str(&w, "tool", "xnat bench");
	jsonw_i64(&w, "format", 1);
	jsonw_str(&w, "command", p->command);
	jsonw_str(&w, "date", r->date);
	jsonw_str(&w, "kernel", r->kernel);
	jsonw_i64(&w, "cpus", r->ncpus);
	jsonw_bool(&w, "complete", !r->interrupted);
	jsonw_double(&w, "elapsed_s", r->elapsed_s);
	json_plan(&w, p);
	jsonw_obj_begin(&w, "cpu");
	jsonw_i64(&w, "lan_generator", p->cpu_lan_gen);
	jsonw_i64(&w, "wan_generator", p->cpu_wan_gen);
	jsonw_str(&w, "router", "softirq on the sending generator's CPU (veth)");
	jsonw_str(&w, "control", "not pinned");
	jsonw_obj_end(&w);
	jsonw_obj_begin(&w, "framing");
	jsonw_i64(&w, "fcs_bytes", FCS_LEN);
	jsonw_i64(&w, "overhead_bytes", WIRE_OVERHEAD);
	jsonw_str(&w, "overhead", "preamble 7 + SFD 1 + inter-frame gap 12; frame sizes include the FCS");
	jsonw_obj_end(&w);
	json_samples(&w, p, r);
	json_results(&w, p, r);
	json_newflow(&w, p, r);
	json_tcp(&w, p, r);
	jsonw_obj_begin(&w, "microbench");
	if (r->micro_fast_ns >= 0) {
		jsonw_double(&w, "fast_path_ns", r->micro_fast_ns);
		jsonw_double(&w, "fast_path_off_ns", r->micro_slow_ns);
		jsonw_double(&w, "bare_forwarder_ns", r->micro_fwd_ns);
	} else {
		jsonw_null(&w, "fast_path_ns");
		jsonw_null(&w, "fast_path_off_ns");
		jsonw_null(&w, "bare_forwarder_ns");
	}
	jsonw_str(&w, "note", r->micro_note);
	jsonw_obj_end(&w);
	jsonw_obj_end(&w);
	jsonw_done(&w);
}

/* ---- the plot --------------------------------------------------------------------- */

int bench_report_plot(const struct bench_plan *p, struct bench_results *r,
		      const char *out_dir)
{
	char dat[512], gp[512], png[512];
	const char *argv[] = { "gnuplot", gp, NULL };
	int first = 1, col = 2, st, err;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	FILE *f;

	snprintf(dat, sizeof(dat), "%s/bench.dat", out_dir);
	snprintf(gp, sizeof(gp), "%s/bench.gp", out_dir);
	snprintf(png, sizeof(png), "%s/bench.png", out_dir);

	/* One row per profile; per mode: median, min, max in Mpps. */
	f = fopen(dat, "we");
	if (!f)
		return -errno;
	fprintf(f, "# profile");
	for (int m = 0; m < BM_MAX; m++)
		if (mode_on(p, m))
			fprintf(f, " %s(med min max)", bench_mode_names[m]);
	fprintf(f, "\n");
	for (int pi = 0; pi < p->n_profiles; pi++) {
		fprintf(f, "\"%s\"", p->profiles[pi].name);
		for (int m = 0; m < BM_MAX; m++) {
			struct agg a;

			if (!mode_on(p, m))
				continue;
			/* drop: the chain's rate, what the router's XDP took. */
			a = cell_agg(p, r, m, pi, m == BM_DROP ? CS_CHAIN_PPS : CS_MAX);
			a.med /= 1e6;
			a.min /= 1e6;
			a.max /= 1e6;
			fprintf(f, " %.4f %.4f %.4f", a.n ? a.med : 0, a.n ? a.min : 0,
				a.n ? a.max : 0);
		}
		fprintf(f, "\n");
	}
	if (fclose(f))
		return -errno;

	f = fopen(gp, "we");
	if (!f)
		return -errno;
	fprintf(f, "# written by xnat bench: gnuplot %s\n"
		   "set terminal png size 1400,700 font ',10'\n"
		   "set output '%s'\n"
		   "set title \"xnat bench %s: UDP forwarded Mpps per mode and profile "
		   "(median, bars min-max, %d rep%s; drop: what XDP\\\\_DROP took)\"\n"
		   "set ylabel 'Mpps'\n"
		   "set yrange [0:*]\n"
		   "set grid ytics\n"
		   "set key outside right top\n"
		   "set style data histogram\n"
		   "set style histogram errorbars gap 2 lw 1\n"
		   "set style fill solid 0.8 border -1\n"
		   "set xtics rotate by -30\n"
		   "plot ",
		gp, png, r->date, p->reps, p->reps == 1 ? "" : "s");
	for (int m = 0; m < BM_MAX; m++) {
		if (!mode_on(p, m))
			continue;
		fprintf(f, "%s'%s' using %d:%d:%d%s title '%s'", first ? "" : ", ",
			first ? dat : "", col, col + 1, col + 2,
			first ? ":xtic(1)" : "", bench_mode_names[m]);
		first = 0;
		col += 3;
	}
	fprintf(f, "\n");
	if (fclose(f))
		return -errno;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(&pid, "gnuplot", &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		pr_warn("xnat bench: cannot run gnuplot (%s); no %s\n", strerror(err), png);
		return -err;
	}
	for (int i = 0; i < 3000; i++) {   /* 30 s */
		if (waitpid(pid, &st, WNOHANG) == pid) {
			if (WIFEXITED(st) && !WEXITSTATUS(st))
				return 0;
			pr_warn("xnat bench: gnuplot failed; see %s\n", gp);
			return -EIO;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	pr_warn("xnat bench: gnuplot timed out; no %s\n", png);
	return -ETIMEDOUT;
}
