// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bench's JSON document (docs/BENCHMARKS.md names its keys): the plan,
 * every sample with the router's counters, the aggregated results and
 * ratios, the new-flow and TCP tests and the microbenchmark.
 */
#include <stdbool.h>
#include <stdio.h>
#include "bench_aggregate.h"
#include "json.h"
#include "reasons.h"

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

/* A sample's object: opened with its repetition and mode, closed with
 * whether it was verified (OK_KEY) and its note. */
static void json_sample_begin(struct json_writer *w, int rep, int mode)
{
	jsonw_obj_begin(w, NULL);
	jsonw_i64(w, "rep", rep);
	jsonw_str(w, "mode", bench_mode_names[mode]);
}

static void json_sample_end(struct json_writer *w, const char *ok_key, bool ok,
			    const char *note)
{
	jsonw_bool(w, ok_key, ok);
	jsonw_str(w, "note", note);
	jsonw_obj_end(w);
}

/* A figure that was not measured (negative) is null. */
/* A count, or null where it is unknown (-1). */
static void json_count_or_null(struct json_writer *w, const char *key,
			       long long v)
{
	if (v < 0)
		jsonw_null(w, key);
	else
		jsonw_i64(w, key, v);
}

static void json_double_or_null(struct json_writer *w, const char *key,
				double v)
{
	if (v >= 0)
		jsonw_double(w, key, v);
	else
		jsonw_null(w, key);
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
		if (bench_plan_has_mode(p, m))
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

/* The tester machine and its ports (bench_provenance.h). */
static void json_tester(struct json_writer *w, const struct bench_provenance *v)
{
	jsonw_obj_begin(w, "tester");
	jsonw_str(w, "hostname", v->hostname);
	jsonw_str(w, "cpu_model", v->cpu_model);
	jsonw_i64(w, "cpus", v->cpus);
	jsonw_u64(w, "memory_bytes", v->mem_bytes);
	jsonw_str(w, "kernel", v->kernel);
	jsonw_str(w, "kernel_build", v->kernel_build);
	jsonw_arr_begin(w, "ports");
	for (int i = 0; i < v->n_ports; i++) {
		const struct bench_port_info *pt = &v->ports[i];

		jsonw_obj_begin(w, NULL);
		jsonw_str(w, "role", pt->role);
		jsonw_str(w, "netns", pt->netns);
		jsonw_str(w, "ifname", pt->ifname);
		jsonw_str(w, "driver", pt->driver);
		jsonw_str(w, "version", pt->version);
		jsonw_str(w, "firmware", pt->firmware);
		jsonw_str(w, "bus_info", pt->bus_info);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_obj_end(w);
}

/* The procedure that made the figures, in the terms two runs are compared
 * by (`xnat bench compare` warns where they differ): a test's keys only
 * when the run measured it. */
static void json_procedure(struct json_writer *w, const struct bench_plan *p)
{
	bool seen[BS_MAX] = { false };

	jsonw_obj_begin(w, "procedure");
	jsonw_str(w, "generator", "xnat's own: BPF_PROG_RUN live frames (bpf/bench/xnat_gen.bpf.c)");
	jsonw_i64(w, "reps", p->reps);
	jsonw_str(w, "order", "modes interleaved within each repetition");
	if (p->kinds & BK_UDP) {
		jsonw_double(w, "trial_s", p->max_s);
		jsonw_str(w, "search", "bisection of the saturation rate, from the full rate");
		jsonw_double(w, "search_trial_s", p->step_s);
		jsonw_i64(w, "search_steps", p->search_steps);
		jsonw_double(w, "search_resolution", search_resolution(p));
		jsonw_double(w, "loss_max", p->loss_max);
		jsonw_arr_begin(w, "frame_sizes");
		for (int pi = 0; pi < p->n_profiles; pi++)
			if (!seen[p->profiles[pi].size]) {
				seen[p->profiles[pi].size] = true;
				jsonw_str(w, NULL, bench_size_names[p->profiles[pi].size]);
			}
		jsonw_arr_end(w);
		jsonw_arr_begin(w, "flows");
		for (int pi = 0; pi < p->n_profiles; pi++) {
			bool dup = false;

			for (int pj = 0; pj < pi; pj++)
				dup |= p->profiles[pj].flows == p->profiles[pi].flows;
			if (!dup)
				jsonw_u64(w, NULL, p->profiles[pi].flows);
		}
		jsonw_arr_end(w);
	}
	if (p->kinds & BK_NEWFLOW)
		jsonw_i64(w, "newflow_flows", p->newflow_flows);
	if (p->kinds & BK_TCP) {
		jsonw_double(w, "tcp_s", p->tcp_s);
		jsonw_double(w, "probe_interval_s", BENCH_PROBE_INTERVAL_S);
		jsonw_bool(w, "tcp_router_gro", true);
		jsonw_arr_begin(w, "tcp_tests");
		for (int t = 0; t < BT_MAX; t++)
			if (p->tcp_all || t == BT_UP)
				jsonw_str(w, NULL, bench_tcp_names[t]);
		jsonw_arr_end(w);
	}
	jsonw_obj_end(w);
}

static void json_samples(struct json_writer *w, const struct bench_plan *p,
			 struct bench_results *r)
{
	jsonw_arr_begin(w, "samples");
	for (int i = 0; i < r->n_samples; i++) {
		const struct bench_sample *s = &r->samples[i];
		const struct bench_router_counters *c = &s->router;

		json_sample_begin(w, s->rep, s->mode);
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
		json_double_or_null(w, "gen_waited_s", s->gen_waited_s);
		jsonw_i64(w, "disturbed_retries", s->disturbed_retries);
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
		json_sample_end(w, "verified", s->verified, s->note);
	}
	jsonw_arr_end(w);
}

static void json_results(struct json_writer *w, const struct bench_plan *p,
			 struct bench_results *r)
{
	jsonw_arr_begin(w, "results");
	for (int m = 0; m < BM_MAX; m++) {
		if (!bench_plan_has_mode(p, m))
			continue;
		for (int pi = 0; pi < p->n_profiles; pi++) {
			struct result_row row;

			if (!result_row(p, r, m, pi, &row))
				continue;
			jsonw_obj_begin(w, NULL);
			jsonw_str(w, "mode", bench_mode_names[m]);
			jsonw_str(w, "profile", row.pr->name);
			json_agg(w, "max_pps", row.mx);
			json_agg(w, "max_mbps", row.mb);
			json_agg(w, "noloss_pps", m == BM_DROP ? (struct agg){ 0 } : row.nl);
			json_agg(w, "chain_pps", cell_agg(p, r, m, pi, CS_CHAIN_PPS));
			json_agg(w, "chain_ns", cell_agg(p, r, m, pi, CS_CHAIN_NS));
			json_agg(w, "router_ns", m == BM_DROP ? (struct agg){ 0 } :
				cell_agg(p, r, m, pi, CS_ROUTER_NS));
			jsonw_double(w, "max_pct_1g", 100 * row.mx.med / line_pps(LINE_1G, row.wire));
			jsonw_double(w, "max_pct_10g", 100 * row.mx.med / line_pps(LINE_10G, row.wire));
			if (row.nl.n && m != BM_DROP) {
				jsonw_double(w, "noloss_pct_1g", 100 * row.nl.med / line_pps(LINE_1G, row.wire));
				jsonw_double(w, "noloss_pct_10g", 100 * row.nl.med / line_pps(LINE_10G, row.wire));
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
		for (size_t i = 0; i < BENCH_N_RATIOS; i++) {
			struct agg a = ratio_agg(p, r, bench_ratios[i].a, bench_ratios[i].b, pi);

			if (!a.n)
				continue;
			jsonw_obj_begin(w, NULL);
			jsonw_str(w, "profile", p->profiles[pi].name);
			jsonw_str(w, "mode", bench_mode_names[bench_ratios[i].a]);
			jsonw_str(w, "over", bench_mode_names[bench_ratios[i].b]);
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

		json_sample_begin(w, n->rep, n->mode);
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
		json_sample_end(w, "verified", n->verified, n->note);
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

/* A probe's round trips: percentiles of the N received (SENT sent, -1:
 * not told), null without any. */
static void json_pctl(struct json_writer *w, const char *key, struct pctl s,
		      int sent)
{
	if (!s.n) {
		jsonw_null(w, key);
		return;
	}
	jsonw_obj_begin(w, key);
	jsonw_i64(w, "n", s.n);
	if (sent >= 0)
		jsonw_i64(w, "sent", sent);
	jsonw_double(w, "p50_ms", s.p50);
	jsonw_double(w, "p90_ms", s.p90);
	jsonw_double(w, "p99_ms", s.p99);
	jsonw_double(w, "max_ms", s.max);
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

		json_sample_begin(w, t->rep, t->mode);
		jsonw_str(w, "test", bench_tcp_names[t->test]);
		jsonw_double(w, "seconds", t->seconds);
		jsonw_double(w, "mbps", t->mbps);
		jsonw_double(w, "mbps_down", t->mbps_down);
		jsonw_double(w, "mbps_up", t->mbps_up);
		json_double_or_null(w, "ping_median_ms", t->ping_median_ms);
		jsonw_i64(w, "ping_sent", t->ping_sent);
		jsonw_i64(w, "ping_received", t->ping_recv);
		json_double_or_null(w, "udp_median_ms", t->udp_median_ms);
		jsonw_i64(w, "udp_sent", t->udp_sent);
		jsonw_i64(w, "udp_received", t->udp_recv);
		json_count_or_null(w, "retransmits", t->retransmits);
		json_count_or_null(w, "host_drops", t->host_drops);
		json_count_or_null(w, "router_drops", t->router_drops);
		json_pctl(w, "ping", tcp_sample_pctl(t, TCP_PING_MS), t->ping_sent);
		json_pctl(w, "udp_probe", tcp_sample_pctl(t, TCP_UDP_MS), t->udp_sent);
		json_sample_end(w, "ok", t->ok, t->note);
	}
	jsonw_arr_end(w);
	jsonw_arr_begin(w, "results");
	for (int m = 0; m < BM_MAX; m++)
		for (int t = 0; t < BT_MAX; t++) {
			struct agg a = tcp_agg(r, m, t, TCP_MBPS);

			if (!a.n)
				continue;
			jsonw_obj_begin(w, NULL);
			jsonw_str(w, "mode", bench_mode_names[m]);
			jsonw_str(w, "test", bench_tcp_names[t]);
			json_agg(w, "mbps", a);
			json_agg(w, "ping_ms", tcp_agg(r, m, t, TCP_PING_MS));
			json_agg(w, "udp_ms", tcp_agg(r, m, t, TCP_UDP_MS));
			json_agg(w, "retransmits",
				 tcp_agg(r, m, t, TCP_RETRANSMITS));
			json_agg(w, "host_drops", tcp_agg(r, m, t, TCP_HOST_DROPS));
			json_agg(w, "router_drops",
				 tcp_agg(r, m, t, TCP_ROUTER_DROPS));
			json_pctl(w, "ping", tcp_probe_pctl(r, m, t, TCP_PING_MS), -1);
			json_pctl(w, "udp_probe", tcp_probe_pctl(r, m, t, TCP_UDP_MS), -1);
			jsonw_obj_end(w);
		}
	jsonw_arr_end(w);
	jsonw_obj_end(w);
}

/* cost_ns: each mode's per-packet cost on the summary profile, the
 * header's line of bench.txt. null when the drop mode did not run. */
static void json_cost(struct json_writer *w, const struct bench_plan *p,
		      struct bench_results *r)
{
	int pi = cost_summary_profile(p, r);

	if (pi < 0) {
		jsonw_null(w, "cost_ns");
		return;
	}
	jsonw_obj_begin(w, "cost_ns");
	jsonw_str(w, "profile", p->profiles[pi].name);
	jsonw_str(w, "method", "chain ns/packet minus the drop chain's, per repetition");
	jsonw_obj_begin(w, "modes");
	for (int m = 0; m < BM_MAX; m++)
		if (m != BM_DROP && bench_plan_has_mode(p, m))
			json_agg(w, bench_mode_names[m], cell_agg(p, r, m, pi, CS_ROUTER_NS));
	jsonw_obj_end(w);
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
	jsonw_str(&w, "xnat_version", r->xnat_version);
	jsonw_str(&w, "cpu_model", r->cpu_model);
	jsonw_i64(&w, "cpus", r->ncpus);
	json_cost(&w, p, r);
	jsonw_bool(&w, "complete", !r->interrupted);
	jsonw_double(&w, "elapsed_s", r->elapsed_s);
	json_plan(&w, p);
	json_tester(&w, &r->prov);
	json_procedure(&w, p);
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
		jsonw_double(&w, "fast_path_traced_ns", r->micro_traced_ns);
		jsonw_double(&w, "offload_hit_ns", r->micro_offload_ns);
	} else {
		jsonw_null(&w, "fast_path_ns");
		jsonw_null(&w, "fast_path_off_ns");
		jsonw_null(&w, "bare_forwarder_ns");
		jsonw_null(&w, "fast_path_traced_ns");
		jsonw_null(&w, "offload_hit_ns");
	}
	jsonw_str(&w, "note", r->micro_note);
	if (r->insert_large_ns >= 0) {
		jsonw_double(&w, "table_insert_small_ns", r->insert_small_ns);
		jsonw_double(&w, "table_insert_large_ns", r->insert_large_ns);
	} else {
		jsonw_null(&w, "table_insert_small_ns");
		jsonw_null(&w, "table_insert_large_ns");
	}
	jsonw_i64(&w, "table_small_entries", BENCH_TABLE_SMALL);
	jsonw_i64(&w, "table_large_entries", BENCH_TABLE_LARGE);
	jsonw_obj_end(&w);
	jsonw_obj_end(&w);
	jsonw_done(&w);
}
