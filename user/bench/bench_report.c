// SPDX-License-Identifier: GPL-2.0-only
/*
 * What `xnat bench` prints: the text tables (modes in rows, profiles in
 * columns, "Mpps (min-max)" cells, as in the public router test threads),
 * the TCP table ("940 (2)": Mbit/s and median ping), the per-packet costs
 * and same-run ratios. Every number is a median over repetitions with
 * min-max beside it (bench_aggregate.h). The JSON document is
 * bench_report_json.c's, the plot bench_plot.c's.
 */
#include <stdio.h>
#include <string.h>
#include "bench_aggregate.h"
#include "log.h"
#include "microbench.h"
#include "reasons.h"

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
			if (!bench_plan_has_mode(p, m) || (m == BM_DROP && what == CS_NOLOSS))
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
		if (!bench_plan_has_mode(p, m))
			continue;
		for (int pi = 0; pi < p->n_profiles; pi++) {
			struct result_row row;
			uint64_t off = 0, fwd = 0;
			int64_t lost = 0;

			if (!result_row(p, r, m, pi, &row))
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
				bench_mode_names[m], row.pr->name, row.mx.med / 1e6, row.mb.med,
				100 * row.mx.med / line_pps(LINE_1G, row.wire),
				100 * row.mx.med / line_pps(LINE_10G, row.wire));
			if (row.nl.n)
				fprintf(f, "%9.3f %6.1f %6.2f ", row.nl.med / 1e6,
					100 * row.nl.med / line_pps(LINE_1G, row.wire),
					100 * row.nl.med / line_pps(LINE_10G, row.wire));
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

	if (!bench_plan_has_mode(p, BM_DROP))
		return;
	fprintf(f, "\nPer-packet router cost, ns: chain ns/packet (1e9 / forwarded pps at saturation)\n"
		   "minus the drop chain's of the same repetition (generator and one hop), median (min-max)\n"
		   "%-13s", "mode");
	for (int pi = 0; pi < p->n_profiles; pi++)
		if (cost_profile(&p->profiles[pi]))
			fprintf(f, " %-21s", p->profiles[pi].name);
	fprintf(f, "\n");
	for (int m = 0; m < BM_MAX; m++) {
		if (!bench_plan_has_mode(p, m))
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

/* Does the plan measure both modes of ratio I? */
static bool ratio_planned(const struct bench_plan *p, size_t i)
{
	return bench_plan_has_mode(p, bench_ratios[i].a) &&
	       bench_plan_has_mode(p, bench_ratios[i].b);
}

static void ratio_table(FILE *f, const struct bench_plan *p,
			struct bench_results *r)
{
	char cell[64], head[40];

	fprintf(f, "\nSame-run ratios of forwarded pps (per repetition, then median (min-max))\n%-15s",
		"profile");
	for (size_t i = 0; i < BENCH_N_RATIOS; i++) {
		if (!ratio_planned(p, i))
			continue;
		snprintf(head, sizeof(head), "%s/%s", bench_mode_names[bench_ratios[i].a],
			 bench_mode_names[bench_ratios[i].b]);
		fprintf(f, " %-24s", head);
	}
	fprintf(f, "\n");
	for (int pi = 0; pi < p->n_profiles; pi++) {
		fprintf(f, "%-15s", p->profiles[pi].name);
		for (size_t i = 0; i < BENCH_N_RATIOS; i++) {
			if (!ratio_planned(p, i))
				continue;
			cell_fmt(cell, sizeof(cell),
				 ratio_agg(p, r, bench_ratios[i].a, bench_ratios[i].b, pi), 1, "%.2f");
			fprintf(f, " %-24s", cell);
		}
		fprintf(f, "\n");
	}
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

static void ms_fmt(char *buf, size_t len, double ms)
{
	/* Whole ms as the threads print them, but veth latencies are
	 * fractions of one: keep two significant digits there. */
	if (ms >= 10)
		snprintf(buf, len, "%.0f", ms);
	else
		snprintf(buf, len, "%.2g", ms);
}

static bool tcp_has_mode(const struct bench_results *r, enum bench_mode m)
{
	for (int i = 0; i < r->n_tcp; i++)
		if (r->tcp[i].mode == m)
			return true;
	return false;
}

/* The TCP tables' header line: a column a test. */
static void tcp_columns(FILE *f)
{
	fprintf(f, "%-13s", "mode");
	for (int t = 0; t < BT_MAX; t++)
		fprintf(f, " %-22s", bench_tcp_names[t]);
	fprintf(f, "\n");
}

/* One cell of a TCP table, mode M's test T, into CELL (LEN bytes); "-"
 * where it has nothing to show. */
typedef void (*tcp_cell_fn)(char *cell, size_t len, struct bench_results *r,
			    enum bench_mode m, enum bench_tcp_test t);

/* A TCP table under its header line: a row a mode that ran TCP, a column
 * a test, CELL_OF's text in each. */
static void tcp_grid(FILE *f, struct bench_results *r, tcp_cell_fn cell_of)
{
	char cell[64];

	tcp_columns(f);
	for (int m = 0; m < BM_MAX; m++) {
		if (!tcp_has_mode(r, m))
			continue;
		fprintf(f, "%-13s", bench_mode_names[m]);
		for (int t = 0; t < BT_MAX; t++) {
			cell_of(cell, sizeof(cell), r, m, t);
			fprintf(f, " %-22s", cell);
		}
		fprintf(f, "\n");
	}
}

/* "retransmitted (host drops + router drops)"; "-" unless all three are
 * known. */
static void tcp_loss_cell(char *cell, size_t len, struct bench_results *r,
			  enum bench_mode m, enum bench_tcp_test t)
{
	struct agg re = tcp_agg(r, m, t, TCP_RETRANSMITS),
		   hd = tcp_agg(r, m, t, TCP_HOST_DROPS),
		   rd = tcp_agg(r, m, t, TCP_ROUTER_DROPS);

	if (!re.n || !hd.n || !rd.n)
		snprintf(cell, len, "-");
	else
		snprintf(cell, len, "%.0f (%.0f + %.0f)", re.med, hd.med, rd.med);
}

/* Where TCP lost segments: the senders' retransmissions and the frames the
 * ports dropped, per test. */
static void tcp_loss_table(FILE *f, struct bench_results *r)
{
	fprintf(f, "\nTCP loss, median of repetitions: segments retransmitted (frames "
		   "the hosts could not hand to the router + the router on to them)\n");
	tcp_grid(f, r, tcp_loss_cell);
}

/* "Mbit/s (ping ms)", RRUL's "Mbit/s (ping ms/UDP probe ms)"; "-" for a
 * test without goodput, in the ping's place one without replies. */
static void tcp_speed_cell(char *cell, size_t len, struct bench_results *r,
			   enum bench_mode m, enum bench_tcp_test t)
{
	struct agg mb = tcp_agg(r, m, t, TCP_MBPS), pg = tcp_agg(r, m, t, TCP_PING_MS),
		   ud = tcp_agg(r, m, t, TCP_UDP_MS);
	char ping[16], udp[16];

	if (!mb.n) {
		snprintf(cell, len, "-");
		return;
	}
	ms_fmt(ping, sizeof(ping), pg.n ? pg.med : -1);
	if (t == BT_RRUL && ud.n) {
		ms_fmt(udp, sizeof(udp), ud.med);
		snprintf(cell, len, "%.0f (%s/%s)", mb.med, pg.n ? ping : "-", udp);
	} else {
		snprintf(cell, len, "%.0f (%s)", mb.med, pg.n ? ping : "-");
	}
}

/* "p50/p90/p99 (n)" of a probe's round trips, every repetition's. */
static void tcp_probe_cell(char *cell, size_t len, struct bench_results *r,
			   enum bench_mode m, enum bench_tcp_test t,
			   enum tcp_what which)
{
	struct pctl s = tcp_probe_pctl(r, m, t, which);
	char a[16], b[16], c[16];

	if (!s.n) {
		snprintf(cell, len, "-");
		return;
	}
	ms_fmt(a, sizeof(a), s.p50);
	ms_fmt(b, sizeof(b), s.p90);
	ms_fmt(c, sizeof(c), s.p99);
	snprintf(cell, len, "%s/%s/%s (%d)", a, b, c, s.n);
}

static void tcp_ping_cell(char *cell, size_t len, struct bench_results *r,
			  enum bench_mode m, enum bench_tcp_test t)
{
	tcp_probe_cell(cell, len, r, m, t, TCP_PING_MS);
}

static void tcp_udp_cell(char *cell, size_t len, struct bench_results *r,
			 enum bench_mode m, enum bench_tcp_test t)
{
	tcp_probe_cell(cell, len, r, m, t, TCP_UDP_MS);
}

/* Latency under load: the probes' percentiles, not the median alone. */
static void tcp_latency_tables(FILE *f, struct bench_results *r)
{
	bool udp = false;

	fprintf(f, "\nTCP latency under load, ping round trip ms: p50/p90/p99 of every probe of the\n"
		   "repetitions (probes answered)\n");
	tcp_grid(f, r, tcp_ping_cell);
	for (int i = 0; i < r->n_tcp; i++)
		udp |= r->tcp[i].udp_recv > 0;
	if (!udp)
		return;
	fprintf(f, "\nThe same of the UDP probe (a datagram to an echo thread on the WAN host)\n");
	tcp_grid(f, r, tcp_udp_cell);
}

static void tcp_table(FILE *f, const struct bench_plan *p,
		      struct bench_results *r)
{
	if (!r->n_tcp)
		return;
	fprintf(f, "\nTCP (iperf3, %g s): aggregate Mbit/s (median ping ms), median of repetitions;\n"
		   "RRUL: 4 up + 4 down at once, its UDP probe's median round trip after the slash\n",
		p->tcp_s);
	tcp_grid(f, r, tcp_speed_cell);
	tcp_latency_tables(f, r);
	tcp_loss_table(f, r);
}

/* The header's one line of per-packet costs (the cost table below has
 * every profile): what a reader compares first. */
static void cost_header(FILE *f, const struct bench_plan *p,
			struct bench_results *r)
{
	int pi = cost_summary_profile(p, r), first = 1;

	if (pi < 0)
		return;
	fprintf(f, "per-packet cost, ns (%s, chain minus drop, median):",
		p->profiles[pi].name);
	for (int m = 0; m < BM_MAX; m++) {
		struct agg a;

		if (m == BM_DROP || !bench_plan_has_mode(p, m))
			continue;
		a = cell_agg(p, r, m, pi, CS_ROUTER_NS);
		if (a.n)
			fprintf(f, "%s %s %.0f", first ? "" : ",",
				bench_mode_names[m], a.med);
		else
			fprintf(f, "%s %s -", first ? "" : ",", bench_mode_names[m]);
		first = 0;
	}
	fprintf(f, "\n");
}

/* The tester machine, its ports and the procedure, as bench.json's
 * "tester" and "procedure" have them. */
static void provenance_header(FILE *f, const struct bench_plan *p,
			      struct bench_results *r)
{
	const struct bench_provenance *v = &r->prov;

	fprintf(f, "tester: %s, %s x %d, %.1f GiB, Linux %s %s\n", v->hostname,
		v->cpu_model, v->cpus, v->mem_bytes / (1024.0 * 1024 * 1024),
		v->kernel, v->kernel_build);
	fprintf(f, "ports:");
	for (int i = 0; i < v->n_ports; i++) {
		const struct bench_port_info *pt = &v->ports[i];

		fprintf(f, "%s %s %s (%s %s%s%s%s%s)", i ? "," : "", pt->role,
			pt->ifname, pt->driver, pt->version,
			pt->firmware[0] ? ", firmware " : "", pt->firmware,
			pt->bus_info[0] ? ", " : "", pt->bus_info);
	}
	fprintf(f, "%s\n", v->n_ports ? "" : " unknown");
	fprintf(f, "procedure: %d repetition%s, modes interleaved", p->reps,
		p->reps == 1 ? "" : "s");
	if (p->kinds & BK_UDP)
		fprintf(f, "; UDP: saturation trial %g s, loss search of %d steps of %g s "
			"(resolution %.1f %% of saturation), loss < %g %%", p->max_s,
			p->search_steps, p->step_s, 100 * search_resolution(p),
			100 * p->loss_max);
	if (p->kinds & BK_TCP)
		fprintf(f, "; TCP %g s with GRO on the router's ports, probes every %g s",
			p->tcp_s, BENCH_PROBE_INTERVAL_S);
	fprintf(f, "\n");
}

void bench_report_text(FILE *f, const struct bench_plan *p,
		       struct bench_results *r)
{
	bool any_unverified = false;

	fprintf(f, "xnat bench: %s, Linux %s, %d CPUs, %d repetition%s, %.0f s%s\n",
		r->date, r->kernel, r->ncpus, p->reps, p->reps == 1 ? "" : "s",
		r->elapsed_s, r->interrupted ? " (INTERRUPTED: partial)" : "");
	fprintf(f, "xnat %s on %s\n", r->xnat_version, r->cpu_model);
	cost_header(f, p, r);
	fprintf(f, "command: %s\n", p->command);
	provenance_header(f, p, r);
	fprintf(f, "CPUs: LAN->WAN generator on CPU %d, WAN->LAN generator on CPU %d; the router's\n"
		   "  receive and forwarding run in softirq on the sending generator's CPU (veth);\n"
		   "  the control thread is not pinned.\n",
		p->cpu_lan_gen, p->cpu_wan_gen);
	fprintf(f, "Frames: sizes on the wire incl. the 4 B FCS; line rate adds %d B per frame\n"
		   "  (preamble 7 + SFD 1 + inter-frame gap 12): 64 B = %.3f Mpps at 1 GbE.\n"
		   "  \"both\": LAN->WAN plus WAN->LAN replies (of flow 0: the generator varies\n"
		   "  source ports only). veth in one VM is not a NIC: compare modes, not boxes.\n",
		WIRE_OVERHEAD, line_pps(LINE_1G, 64) / 1e6);
	if (bench_plan_has_mode(p, BM_KERNEL_MASQ) || bench_plan_has_mode(p, BM_KERNEL_NAT))
		fprintf(f, "Kernel baselines: kernel-masq is the kernel's NAT alone (one nftables\n"
			   "  masquerade rule, nothing else); kernel-nat is xnat in kernel mode (the\n"
			   "  same router and policy as xdp-nat, in nftables). Ratios name which.\n");

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
			fprintf(f, "fast-path hit %.1f, fast path off %.1f, bare forwarder %.1f, "
				"fast-path hit with an idle trace %.1f, offload-mode hit %.1f",
				r->micro_fast_ns, r->micro_slow_ns, r->micro_fwd_ns,
				r->micro_traced_ns, r->micro_offload_ns);
		if (r->micro_note[0])
			fprintf(f, "%s%s", r->micro_fast_ns >= 0 ? "; " : "", r->micro_note);
		fprintf(f, "\n");
	}
	if (r->insert_large_ns >= 0)
		fprintf(f, "Flow table insert (BPF_PROG_RUN, random keys into a table filled to half, "
			"median of %d): %.0f ns at %d entries, %.0f ns at %d entries; a new connection "
			"makes two\n", MICROBENCH_TABLE_RUNS, r->insert_small_ns, BENCH_TABLE_SMALL,
			r->insert_large_ns, BENCH_TABLE_LARGE);
	newflow_table(f, p, r);
	tcp_table(f, p, r);
	for (int i = 0; i < r->n_samples; i++)
		any_unverified |= !r->samples[i].verified;
	if (any_unverified)
		fprintf(f, "\nWARNING: some samples did not verify their mode (see \"note\" in the JSON)\n");
}
