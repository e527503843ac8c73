// SPDX-License-Identifier: GPL-2.0-only
/*
 * The UDP profiles: the saturation trial and the bounded binary search for
 * the highest offered rate with loss under 0.1 %, each trial checked
 * against the mode it claims to measure.
 *
 * A trial's numbers are always consistent: offered comes from the
 * generators, forwarded from the sinks, lost is their difference. Each is
 * also checked against the router's own counters, so a mode that silently
 * fell back to another path (an XDP program passing everything to the
 * kernel, say) is flagged rather than reported under the wrong name.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "bench_trial.h"
#include "log.h"

/* A trial whose generator waited more than this share of it for its CPU
 * is run again, at most DISTURBED_TRIES times in all, if it is no longer
 * than DISTURBED_MAX_S (trial_disturbed()). */
#define DISTURBED_WAIT 0.03
#define DISTURBED_TRIES 5
#define DISTURBED_MAX_S 2.0

static struct bench_sample *new_sample(struct bench_results *r)
{
	return bench_array_push(&r->samples, &r->n_samples, &r->cap_samples,
				sizeof(*r->samples), 256);
}

/* The drop mode: nothing forwarded, and the program saw the traffic. */
static bool verify_drop(struct bench_sample *s)
{
	if (s->forwarded)
		snprintf(s->note, sizeof(s->note), "drop mode forwarded %llu",
			 (unsigned long long)s->forwarded);
	else if (!s->router.drop_seen)
		snprintf(s->note, sizeof(s->note), "xdp_drop saw nothing");
	else
		return true;
	return false;
}

/* The router's counters say that the mode's own path forwarded it (KFWD:
 * what the kernel forwarded); false with the reason in the note. */
static bool verify_path(struct bench_sample *s, uint64_t kfwd)
{
	const struct bench_router_counters *c = &s->router;
	enum bench_mode m = s->mode;

	switch (m) {
	case BM_KERNEL_FWD:
	case BM_KERNEL_MASQ:
	case BM_KERNEL_NAT:
		/* The kernel forwarded (nearly) all of it. */
		if (kfwd < s->forwarded * 9 / 10) {
			snprintf(s->note, sizeof(s->note),
				 "kernel forwarded %llu of %llu",
				 (unsigned long long)kfwd,
				 (unsigned long long)s->forwarded);
			return false;
		}
		if (m != BM_KERNEL_FWD && c->conntrack < 1) {
			snprintf(s->note, sizeof(s->note), "no conntrack entries");
			return false;
		}
		return true;
	case BM_XDP_OFFLOAD:
		/* The kernel's connections, carried by XDP after their
		 * first packets. */
		if (c->fwd_fast < s->forwarded / 2 || c->conntrack < 1) {
			snprintf(s->note, sizeof(s->note),
				 "fwd_fast %llu of %llu, conntrack %lld",
				 (unsigned long long)c->fwd_fast,
				 (unsigned long long)s->forwarded,
				 (long long)c->conntrack);
			return false;
		}
		return true;
	case BM_XDP_NAT:
	case BM_XDP_NAT_SLOW: {
		/* The fast path's own count, or (fast path off) the slow
		 * path's: at least half of what arrived, and none of the
		 * other. */
		bool fast = m == BM_XDP_NAT;
		uint64_t on = fast ? c->fwd_fast : c->fwd_routed;
		uint64_t off = fast ? c->fwd_routed : c->fwd_fast;

		if (off || on < s->forwarded / 2) {
			snprintf(s->note, sizeof(s->note),
				 "fwd_fast %llu, fwd_routed %llu of %llu",
				 (unsigned long long)c->fwd_fast,
				 (unsigned long long)c->fwd_routed,
				 (unsigned long long)s->forwarded);
			return false;
		}
		return true;
	}
	default:
		return true;
	}
}

static void verify(struct bench *b, struct bench_sample *s, uint64_t kfwd)
{
	enum bench_mode m = s->mode;

	s->verified = false;
	if (m == BM_DROP) {
		s->verified = verify_drop(s);
		return;
	}
	if (!s->forwarded) {
		snprintf(s->note, sizeof(s->note), "nothing forwarded");
		return;
	}
	for (int d = 0; d < 2; d++)
		if (s->dir_offered[d] && !s->dir_forwarded[d]) {
			snprintf(s->note, sizeof(s->note), "%s: nothing forwarded",
				 d ? "WAN->LAN" : "LAN->WAN");
			return;
		}
	if (!verify_path(s, kfwd))
		return;
	if (m >= BM_XDP_NAT && kfwd > s->forwarded / 100) {
		/* XDP passed traffic up and the kernel forwarded it. */
		snprintf(s->note, sizeof(s->note), "kernel forwarded %llu of %llu",
			 (unsigned long long)kfwd, (unsigned long long)s->forwarded);
		return;
	}
	s->verified = true;
}

/* The longest a generator of T waited on a run queue (-1: unknown). */
static double trial_waited_s(const struct trial *t)
{
	double w = 0;

	for (int d = 0; d < t->n; d++) {
		if (t->job[d].waited_s < 0)
			return -1;
		if (t->job[d].waited_s > w)
			w = t->job[d].waited_s;
	}
	return w;
}

/*
 * Was T (of SECS) disturbed? The router's work runs in the generator's
 * softirqs, so while another task has the generator's CPU the chain
 * stops: on this shared machine that made the same profile bimodal
 * between repetitions, in every mode alike (docs/BENCHMARKS.md, Steady
 * rate). Only short trials are run again: a many-endpoint trial of up to
 * 30 s would cost the heavy lock too long.
 */
static bool trial_disturbed(const struct trial *t, double secs)
{
	return secs <= DISTURBED_MAX_S &&
	       trial_waited_s(t) > DISTURBED_WAIT * secs;
}

/* Run T (of profile P, SECS) until it is not disturbed, at most
 * DISTURBED_TRIES times; *RETRIES: how many runs were dropped. */
static int trial_run_undisturbed(struct bench *b, struct trial *t,
				 const struct bench_profile *p, double secs,
				 int *retries)
{
	for (int tries = 1;; tries++) {
		int err = trial_run(b, t, 0.05);

		if (err || !trial_disturbed(t, secs) || tries == DISTURBED_TRIES)
			return err;
		bench_progress("  %s %s: a generator waited %.0f ms of %.1f s "
			       "for its CPU (another task): again",
			       bench_mode_names[b->mode], p->name,
			       trial_waited_s(t) * 1e3, secs);
		/* What took the CPU often holds it for seconds: give it
		 * longer to finish each time. */
		bench_sleep(0.5 * tries);
		(*retries)++;
	}
}

/*
 * One trial of profile P at SCALE times the per-direction rates RATE[]
 * (SCALE 0: as fast as possible) for SECS. Appends a sample (KIND) unless
 * KIND is NULL (warm-up).
 */
static int trial(struct bench *b, struct bench_results *r, int rep, int pi,
		 const char *kind, const double rate[2], double scale,
		 double secs, bool lan_only, struct bench_sample **out)
{
	const struct bench_profile *p = &b->plan->profiles[pi];
	struct bench_sample *s;
	struct trial t = {};
	double sec = 0;
	int err, retries = 0;

	t.n = p->both && !lan_only ? 2 : 1;
	for (int d = 0; d < t.n; d++) {
		trial_gen_setup(b, p, d, &t.job[d].cfg);
		t.job[d].cfg.rate_pps = scale > 0 ? scale * rate[d] : 0;
		t.job[d].cfg.duration_s = secs;
	}
	err = kind ? trial_run_undisturbed(b, &t, p, secs, &retries) :
		     trial_run(b, &t, 0.05);
	if (err || !kind)
		return err;

	s = new_sample(r);
	if (!s)
		return -ENOMEM;
	s->rep = rep;
	s->mode = b->mode;
	s->profile = pi;
	s->kind = kind;
	for (int d = 0; d < t.n; d++) {
		s->dir_offered[d] = t.job[d].res.packets;
		s->dir_forwarded[d] = t.sink_after[d] - t.sink_before[d];
		s->offered += s->dir_offered[d];
		s->forwarded += s->dir_forwarded[d];
		s->offered_bytes += t.job[d].res.bytes;
		s->forwarded_bytes += t.bytes_after[d] - t.bytes_before[d];
		s->target_pps += t.job[d].cfg.rate_pps;
		if (t.job[d].res.seconds > sec)
			sec = t.job[d].res.seconds;
	}
	s->seconds = sec;
	s->gen_waited_s = trial_waited_s(&t);
	s->disturbed_retries = retries;
	s->lost = (int64_t)s->offered - (int64_t)s->forwarded;
	bench_router_delta(&t.rb, &t.ra, &s->router);
	s->router.kernel_fwd = t.kfwd_after - t.kfwd_before;
	verify(b, s, s->router.kernel_fwd);
	/* The kernel's NAT cannot hold these flows without the limits. */
	if (s->verified && p->ports_per_host &&
	    bench_mode_conntrack(b->mode) &&
	    !bench_conntrack_ok(b, p->flows)) {
		s->verified = false;
		snprintf(s->note, sizeof(s->note),
			 "nf_conntrack_max or its hash size below %u flows",
			 p->flows);
	}
	/* The many-endpoint profiles measure flows cycled in the trial. */
	if (s->verified && p->ports_per_host &&
	    s->offered < (uint64_t)p->flows * 2) {
		s->verified = false;
		snprintf(s->note, sizeof(s->note),
			 "%llu packets offered: not every one of %u flows twice",
			 (unsigned long long)s->offered, p->flows);
	}
	if (trial_disturbed(&t, secs))
		bench_progress("  WARNING: %s %s: kept after %d tries, the "
			       "generator still waited %.0f ms for its CPU",
			       bench_mode_names[b->mode], p->name,
			       DISTURBED_TRIES, s->gen_waited_s * 1e3);
	if (!s->verified)
		bench_progress("  WARNING: %s %s: mode not verified: %s",
			       bench_mode_names[s->mode], p->name, s->note);
	if (out)
		*out = s;
	return 0;
}

static double pps(uint64_t n, double s)
{
	return s > 0 ? n / s : 0;
}

/* Times a many-endpoint trial offers every flow, at least: once per trial
 * would time each flow's first packet in it (in offload mode, XDP's
 * install of a flow the kernel set up) instead of the steady state. */
#define FLOW_CYCLES 3
/* Longest trial that cycling may ask for: the generator's limit is 60. */
#define CYCLED_MAX_S 30.0

/*
 * How long a trial of P at about PPS must run: SECS, or for the
 * many-endpoint profiles long enough to walk all flows FLOW_CYCLES times.
 */
static double cycled_secs(const struct bench_profile *p, double secs,
			  double rate)
{
	double need;

	if (!p->ports_per_host || rate <= 0)
		return secs;
	need = FLOW_CYCLES * (double)p->flows / rate;
	if (need > CYCLED_MAX_S)
		need = CYCLED_MAX_S;
	return need > secs ? need : secs;
}

/*
 * Saturation, then the loss search: rates are the saturation's forwarded
 * rate per direction times a scale in (0, 1], bisected. The first step
 * tries the full rate: when the chain is not lossy at saturation (one CPU
 * serialises generator and router), that is the answer and the search
 * ends there.
 */
int bench_udp_profile(struct bench *b, struct bench_results *r, int rep, int pi)
{
	const struct bench_plan *plan = b->plan;
	const struct bench_profile *p = &plan->profiles[pi];
	struct bench_cell *cell = bench_cell(r, plan, rep, b->mode, pi);
	struct bench_sample *s;
	double rate[2] = { 0, 0 }, lo = 0, hi = 1, scale = 1;
	int err;

	err = trial(b, r, rep, pi, "max", rate, 0,
		    cycled_secs(p, plan->max_s, b->warm_pps), false, &s);
	if (err)
		return err;
	cell->ran = true;
	cell->max_pps = pps(s->forwarded, s->seconds);
	cell->max_mbps = (s->forwarded_bytes + (double)FCS_LEN * s->forwarded) *
			 8 / 1e6 / (s->seconds > 0 ? s->seconds : 1);
	if (b->mode == BM_DROP) {
		/* Nothing is forwarded: the chain's rate is what the
		 * router's XDP_DROP saw. No loss search: all is loss. */
		cell->chain_pps = pps(s->router.drop_seen, s->seconds);
		bench_progress("  rep %d %-12s %-15s chain %.3f Mpps (dropped by the router)",
			       rep + 1, bench_mode_names[b->mode], p->name,
			       cell->chain_pps / 1e6);
		return 0;
	}
	cell->chain_pps = cell->max_pps;
	for (int d = 0; d < 2; d++)
		rate[d] = pps(s->dir_forwarded[d], s->seconds);

	for (int step = 0; step < plan->search_steps && rate[0] > 0; step++) {
		double loss;

		err = trial(b, r, rep, pi, "search", rate, scale,
			    cycled_secs(p, plan->step_s, scale * rate[0]),
			    false, &s);
		if (err)
			return err;
		loss = s->offered ? (double)s->lost / s->offered : 1;
		if (loss < plan->loss_max) {
			double offered = pps(s->offered, s->seconds);

			if (!cell->noloss_valid || offered > cell->noloss_pps)
				cell->noloss_pps = offered;
			cell->noloss_valid = true;
			lo = scale;
			if (step == 0)
				break;
		} else {
			hi = scale;
		}
		scale = (lo + hi) / 2;
	}
	if (!cell->noloss_valid)
		cell->noloss_pps = 0;
	bench_progress("  rep %d %-12s %-15s %.3f Mpps forwarded, loss-free at %.3f Mpps",
		       rep + 1, bench_mode_names[b->mode], p->name,
		       cell->max_pps / 1e6, cell->noloss_pps / 1e6);
	return 0;
}

/*
 * Before anything is timed, every flow must be in the state the timed
 * trials measure: its mapping or conntrack entry, its flow table entries,
 * and in offload mode its offloaded entry (the first packet of a flow
 * makes the kernel's conntrack entry, a later one finds it confirmed and
 * installs it in XDP). A short run does for 1 and 10,000 flows. The
 * many-endpoint profiles need every flow offered at the mode's own setup
 * rate, which is far below the forwarding rate (and for
 * endpoint-dependent flows or a kernel with a million entries, lower
 * still): runs of a second at full speed, each going on from the endpoint
 * where the last one stopped (a run starts the generator afresh), pass
 * after pass over all of them, until a whole pass sets up (nearly)
 * nothing new: no slow-path flow or offload install (fwd_slow counts
 * both) and no conntrack growth (a full table does not grow either); at
 * most 60 runs. That last pass ran at the steady state's rate: the timed
 * trials are sized from it (b->warm_pps).
 */
int bench_udp_warm(struct bench *b, struct bench_results *r, int pi)
{
	const struct bench_profile *p = &b->plan->profiles[pi];
	struct bench_router_counters d;
	double rate[2] = { 0, 0 }, pass_s = 0;
	uint64_t pass_new = 0, pass_pk = 0;
	long long ct_start = -1;
	uint32_t off = 0;
	struct trial t;
	int err;

	b->warm_pps = 0;
	if (!p->ports_per_host)
		return trial(b, r, 0, pi, NULL, rate, 0, 0.1, true, NULL);
	for (int run = 0; run < 60 && !bench_stop; run++) {
		memset(&t, 0, sizeof(t));
		t.n = 1;
		trial_gen_setup(b, p, 0, &t.job[0].cfg);
		t.job[0].cfg.flow_first = off;
		t.job[0].cfg.flows = p->flows - off;
		t.job[0].cfg.duration_s = 1.0;
		err = trial_run(b, &t, 0.05);
		if (err)
			return err;
		bench_router_delta(&t.rb, &t.ra, &d);
		if (ct_start < 0)
			ct_start = t.rb.conntrack;
		pass_new += d.fwd_slow;
		pass_pk += t.sink_after[0] - t.sink_before[0];
		pass_s += t.job[0].res.seconds;
		off += t.job[0].res.packets < p->flows - off ?
		       t.job[0].res.packets : p->flows - off;
		if (off < p->flows)
			continue;
		/* A pass is done. */
		if (t.ra.conntrack > ct_start)
			pass_new += t.ra.conntrack - ct_start;
		b->warm_pps = pass_s > 0 ? pass_pk / pass_s : 0;
		if (pass_new <= p->flows / 1000)
			return 0;
		ct_start = t.ra.conntrack;
		pass_new = pass_pk = 0;
		pass_s = 0;
		off = 0;
	}
	return 0;
}
