// SPDX-License-Identifier: GPL-2.0-only
/*
 * The new-flow test: how many flows per second a mode sets up, each of N
 * distinct flows offered once, counted by the router (fwd_slow) or, for the
 * kernel's NAT, by the sink.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "bench_trial.h"
#include "log.h"

/* Modes whose new connections the kernel sets up (conntrack, nftables):
 * counted at the sink, one packet per flow. Offload mode's XDP only
 * carries connections after that. */
static bool kernel_sets_up(enum bench_mode m)
{
	return bench_mode_conntrack(m);
}

static struct bench_newflow *new_newflow(struct bench_results *r)
{
	return bench_array_push(&r->newflow, &r->n_newflow, &r->cap_newflow,
				sizeof(*r->newflow), 16);
}

/*
 * The new-flow test's flows: N distinct inside endpoints, each its own
 * flow, from hosts behind the LAN host (BENCH_HOSTS_FIRST on, with
 * BENCH_HOSTS_PORTS source ports each) towards BENCH_HOSTS_DPORTS
 * destination ports: one external address has ports for 45,536 endpoints,
 * so past that the XDP NAT maps endpoint-dependently (docs/NAT.md), as
 * netfilter does. Runs go NF_CHUNK endpoints at a time.
 */
#define NF_CHUNK 65536
/* Remainders this small are sent paced below saturation in a fixed
 * 10 ms, so that exactly they go out; they are not timed. */
#define NF_TAIL 1000

/*
 * N distinct flows, each offered once, as fast as the chain takes them.
 * On veth the router works on the generator's CPU, so "faster than the
 * router" shows as the generator falling behind, not as loss: each run is
 * paced well above the setup rate seen so far (so the generator always
 * runs flat out) and lasts 90 % of the time the remaining flows should
 * take at that rate; flows it did not reach are sent by a follow-up run
 * from where it stopped (the generator walks the ports in order). The
 * rate is flows set up in the timed runs over their time.
 */
/* The new-flow test's state across its runs. */
struct nf_run {
	struct bench *b;
	struct bench_newflow *nf;
	double r_est;              /* setup rate seen so far, flows/s */
	uint64_t timed_flows;
	double timed_secs;
	int runs;
};

/* Add one generator run's counts to the test's. */
static void nf_account(struct nf_run *x, const struct trial *t,
		       const struct bench_router_counters *d, uint32_t sent,
		       uint32_t set_up)
{
	struct bench_newflow *nf = x->nf;

	nf->flows_offered += sent;
	nf->flows_set_up += set_up;
	nf->forwarded += t->sink_after[0] - t->sink_before[0];
	nf->seconds += t->job[0].res.seconds;
	nf->router.fwd_fast += d->fwd_fast;
	nf->router.fwd_slow += d->fwd_slow;
	nf->router.passed += d->passed;
	nf->router.dropped += d->dropped;
	for (int k = 0; k < XNAT_REASON_MAX; k++)
		nf->router.reason[k] += d->reason[k];
}

/*
 * One generator run: REM new flows, endpoints FIRST on. Paced runs are
 * timed (and their rate becomes the next pace); a TAIL is not. *SENT gets
 * the flows it offered.
 */
static int nf_one(struct nf_run *x, uint32_t first, uint32_t rem,
		  uint32_t *sent)
{
	struct bench_profile prof = { .size = BS_64, .flows = 1 };
	struct trial t = { .n = 1 };
	struct gen_config *c = &t.job[0].cfg;
	const struct gen_result *res = &t.job[0].res;
	struct bench_router_counters d;
	bool tail = rem <= NF_TAIL;
	uint32_t set_up;
	int err;

	trial_gen_setup(x->b, &prof, 0, c);
	inet_pton(AF_INET, BENCH_HOSTS_FIRST, &c->src_ip);
	c->src_port = BENCH_PORT_FIRST;
	c->dst_port = BENCH_DST_PORT;
	c->ports_per_host = BENCH_HOSTS_PORTS;
	c->n_dports = BENCH_HOSTS_DPORTS;
	c->flow_first = first;
	c->flows = rem;
	c->rate_pps = tail ? rem / 0.01 : 4 * x->r_est;
	c->duration_s = tail ? 0.01 : 0.8 * rem / x->r_est;
	if (c->duration_s < 0.005)
		c->duration_s = 0.005;
	err = trial_run(x->b, &t, 0.005);
	if (err)
		return err;
	x->runs++;
	*sent = res->packets < rem ? res->packets : rem;
	bench_router_delta(&t.rb, &t.ra, &d);
	/* Kernel: each flow's one packet at the sink is one conntrack entry
	 * created (and NATed). */
	set_up = kernel_sets_up(x->b->mode) ?
		 t.sink_after[0] - t.sink_before[0] : d.fwd_slow;
	if (set_up > *sent)
		set_up = *sent;
	nf_account(x, &t, &d, *sent, set_up);
	if (!tail && res->seconds > 0 && res->packets) {
		double secs = res->seconds;

		x->r_est = res->packets / secs;
		/* Past the last flow the generator starts over (repeats, not
		 * new flows): count the time the new ones took at the run's
		 * rate. */
		if (res->packets > rem)
			secs *= (double)rem / res->packets;
		x->timed_flows += set_up;
		x->timed_secs += secs;
	}
	pr_debug("new flows: endpoints %u-%u at %.0f pps for %.3f s: "
		 "sent %llu in %.3f s, forwarded %llu, fwd_slow %llu, "
		 "passed %llu, dropped %llu\n", first, first + rem - 1, c->rate_pps,
		 c->duration_s, (unsigned long long)res->packets, res->seconds,
		 (unsigned long long)(t.sink_after[0] - t.sink_before[0]),
		 (unsigned long long)d.fwd_slow, (unsigned long long)d.passed,
		 (unsigned long long)d.dropped);
	return 0;
}

/* The runs' verdict and note: enough flows set up, conntrack's view. */
static void nf_conclude(struct nf_run *x, long long ct_before)
{
	struct bench_newflow *nf = x->nf;
	struct bench *b = x->b;

	nf->rate = x->timed_secs > 0 ? x->timed_flows / x->timed_secs : 0;
	nf->verified = nf->flows_set_up > 0 &&
		       nf->flows_set_up >= nf->flows_offered * 9 / 10;
	if (nf->verified && kernel_sets_up(b->mode) &&
	    !bench_conntrack_ok(b, b->plan->newflow_flows)) {
		nf->verified = false;
		snprintf(nf->note, sizeof(nf->note),
			 "nf_conntrack_max or its hash size below %u flows",
			 b->plan->newflow_flows);
	}
	if (!nf->verified && !nf->note[0])
		snprintf(nf->note, sizeof(nf->note),
			 "only %llu of %llu flows set up",
			 (unsigned long long)nf->flows_set_up,
			 (unsigned long long)nf->flows_offered);
	if (kernel_sets_up(b->mode) && !nf->note[0]) {
		long long ct = bench_sysctl_read(b, NS_RTR,
						 "net/netfilter/nf_conntrack_count");

		snprintf(nf->note, sizeof(nf->note),
			 "conntrack entries %lld -> %lld (nf_conntrack_max %lld)",
			 ct_before, ct,
			 bench_sysctl_read(b, NS_RTR, "net/netfilter/nf_conntrack_max"));
	}
}

int bench_newflow(struct bench *b, struct bench_results *r, int rep,
		  double offer_pps)
{
	struct nf_run x = { .b = b, .r_est = offer_pps };
	uint32_t left = b->plan->newflow_flows;
	struct bench_newflow *nf;
	long long ct_before;
	int err = 0;

	nf = x.nf = new_newflow(r);
	if (!nf)
		return -ENOMEM;
	nf->rep = rep;
	nf->mode = b->mode;
	nf->how = kernel_sets_up(b->mode) ? "sink" : "fwd_slow";
	nf->offered_pps = offer_pps;
	ct_before = bench_sysctl_read(b, NS_RTR, "net/netfilter/nf_conntrack_count");

	for (uint32_t first = 0; left && !err && !bench_stop;) {
		uint32_t n = left < NF_CHUNK ? left : NF_CHUNK, done = 0;

		for (int tries = 0; done < n && tries < 50 && !err; tries++) {
			uint32_t sent = 0;

			err = nf_one(&x, first + done, n - done, &sent);
			done += sent;
			if (!err && !sent)
				break;
		}
		if (done < n && !err) {
			snprintf(nf->note, sizeof(nf->note),
				 "the generator stalled at %u of %u flows", done, n);
			break;
		}
		left -= n;
		first += n;
	}
	nf_conclude(&x, ct_before);
	if (!err)
		bench_progress("  rep %d %-12s new flows: %llu of %llu set up, %.0f flows/s (%d runs, %.2f s timed)",
			       rep + 1, bench_mode_names[b->mode],
			       (unsigned long long)nf->flows_set_up,
			       (unsigned long long)nf->flows_offered, nf->rate,
			       x.runs, x.timed_secs);
	return err;
}
