// SPDX-License-Identifier: GPL-2.0-only
/*
 * The UDP side of the bench: the profiles (frame size mix x flows x
 * directions) and what selects them, one trial (generators on their CPUs,
 * the sinks counting what arrives, the router's counters before and after),
 * the saturation trial and the bounded binary search for the highest
 * offered rate with loss under 0.1 %, and the new-flow test.
 *
 * A trial's numbers are always consistent: offered comes from the
 * generators, forwarded from the sinks, lost is their difference. Each is
 * also checked against the router's own counters, so a mode that silently
 * fell back to another path (an XDP program passing everything to the
 * kernel, say) is flagged rather than reported under the wrong name.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "bench_common.h"
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

/* Every token of LIST must be one of KNOWN (NULL-terminated). */
static const char *unknown_token(const char *list, const char *const *known)
{
	static char tok[32];

	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		bool ok = false;

		for (int i = 0; known[i] && !ok; i++)
			ok = strlen(known[i]) == len && !strncmp(p, known[i], len);
		if (!ok) {
			snprintf(tok, sizeof(tok), "%.*s", (int)(len < 31 ? len : 31), p);
			return tok;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

int bench_plan_init(struct bench_plan *plan, bool quick, int reps,
		    const char *modes, const char *profiles, char *err,
		    size_t errlen)
{
	static const char *const profile_tokens[] = {
		"64", "500", "1500", "imix", "1", "10k", "up", "both",
		"udp", "newflow", "tcp", NULL
	};
	static const char *const size_tok[BS_MAX] = { "64", "500", "1500", "imix" };
	bool any_size = false, any_flows = false, any_dir = false, any_kind = false;
	const char *bad;

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

	plan->modes = 0;
	if (modes) {
		const char *names[BM_MAX + 1];

		for (int m = 0; m < BM_MAX; m++)
			names[m] = bench_mode_names[m];
		names[BM_MAX] = NULL;
		bad = unknown_token(modes, names);
		if (bad) {
			snprintf(err, errlen, "--modes: unknown mode '%s' (kernel-fwd, "
				 "kernel-nat, xdp-nat, xdp-nat-slow, xdp-fwd, drop)", bad);
			return -1;
		}
		for (int m = 0; m < BM_MAX; m++)
			if (in_list(modes, bench_mode_names[m]))
				plan->modes |= 1U << m;
	} else {
		plan->modes = (1U << BM_MAX) - 1;
	}

	if (profiles) {
		bad = unknown_token(profiles, profile_tokens);
		if (bad) {
			snprintf(err, errlen, "--profiles: unknown '%s' (sizes 64, 500, "
				 "1500, imix; flows 1, 10k; up, both; udp, newflow, tcp)",
				 bad);
			return -1;
		}
		for (int s = 0; s < BS_MAX; s++)
			any_size |= in_list(profiles, size_tok[s]);
		any_flows = in_list(profiles, "1") || in_list(profiles, "10k");
		any_dir = in_list(profiles, "up") || in_list(profiles, "both");
		any_kind = in_list(profiles, "udp") || in_list(profiles, "newflow") ||
			   in_list(profiles, "tcp");
	}
	plan->kinds = BK_UDP | BK_NEWFLOW | BK_TCP;
	if (any_kind) {
		plan->kinds = 0;
		if (in_list(profiles, "udp"))
			plan->kinds |= BK_UDP;
		if (in_list(profiles, "newflow"))
			plan->kinds |= BK_NEWFLOW;
		if (in_list(profiles, "tcp"))
			plan->kinds |= BK_TCP;
	}

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

static struct bench_sample *new_sample(struct bench_results *r)
{
	return bench_array_push(&r->samples, &r->n_samples, &r->cap_samples,
				sizeof(*r->samples), 256);
}

/* ---- one trial ----------------------------------------------------------------- */

struct gen_job {
	int ns_fd;
	struct gen_config cfg;
	struct gen_result res;
	int err;
	pthread_barrier_t *start;
	const bool *abort;     /* set by the main thread only */
};

static void *gen_thread(void *arg)
{
	struct gen_job *j = arg;
	struct gen *g = NULL;

	/* This thread only: the generator loads and sends from inside its
	 * host's namespace while the rest of the process stays put. */
	if (setns(j->ns_fd, CLONE_NEWNET))
		j->err = -errno;
	else
		j->err = gen_open(&g, &j->cfg);
	/* Both directions start together, whatever happened. */
	pthread_barrier_wait(j->start);
	if (!j->err && !*j->abort)
		j->err = gen_run(g, &j->res);
	if (g)
		gen_close(g);
	return NULL;
}

/* Generator settings for direction DIR (0: LAN->WAN, 1: WAN->LAN). */
static void gen_setup(struct bench *b, const struct bench_profile *p, int dir,
		      struct gen_config *cfg)
{
	bool nat = b->mode == BM_KERNEL_NAT || b->mode == BM_XDP_NAT ||
		   b->mode == BM_XDP_NAT_SLOW;

	memset(cfg, 0, sizeof(*cfg));
	bench_size_gen(p->size, cfg);
	if (dir == 0) {
		cfg->ifindex = b->ifindex_lan_host;
		memcpy(cfg->src_mac, bench_mac_lan_host, 6);
		memcpy(cfg->dst_mac, bench_mac_rtr_lan, 6);
		inet_pton(AF_INET, BENCH_LAN_HOST, &cfg->src_ip);
		inet_pton(AF_INET, BENCH_WAN_HOST, &cfg->dst_ip);
		/* In the XDP NAT's range: both NATs keep the port, so the
		 * replies below know where to go. */
		cfg->src_port = BENCH_PORT_FIRST;
		cfg->dst_port = BENCH_DST_PORT;
		cfg->flows = p->flows;
		cfg->cpu = b->plan->cpu_lan_gen;
	} else {
		cfg->ifindex = b->ifindex_wan_host;
		memcpy(cfg->src_mac, bench_mac_wan_host, 6);
		memcpy(cfg->dst_mac, bench_mac_rtr_wan, 6);
		inet_pton(AF_INET, BENCH_WAN_HOST, &cfg->src_ip);
		/* Replies: to the NAT address, or (no NAT) to the LAN host. */
		inet_pton(AF_INET, nat ? BENCH_RTR_WAN : BENCH_LAN_HOST,
			  &cfg->dst_ip);
		cfg->src_port = BENCH_DST_PORT;
		cfg->dst_port = BENCH_PORT_FIRST;
		cfg->flows = BENCH_REVERSE_FLOWS;
		cfg->cpu = b->plan->cpu_wan_gen;
	}
}

struct trial {
	int n;                     /* directions */
	struct gen_job job[2];
	uint64_t sink_before[2], sink_after[2], bytes_before[2], bytes_after[2];
	struct bench_router_counters rb, ra;
	uint64_t kfwd_before, kfwd_after;
};

/* The kernel's IPv4 forwarding counter in the router (Ip: ForwDatagrams):
 * grows when the kernel forwarded, stays put when XDP did. */
static uint64_t kernel_forwarded(struct bench *b)
{
	char line[1024], vals[1024];
	uint64_t v = 0;
	FILE *f;

	if (bench_enter(b, NS_RTR))
		return 0;
	f = fopen("/proc/thread-self/net/snmp", "re");
	bench_enter(b, NS_MAX);
	if (!f)
		return 0;
	/* Two "Ip:" lines: names, then values; ForwDatagrams is the 6th. */
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Ip: Forwarding", 14))
			continue;
		if (fgets(vals, sizeof(vals), f)) {
			unsigned long long n[6];

			if (sscanf(vals, "Ip: %llu %llu %llu %llu %llu %llu", &n[0],
				   &n[1], &n[2], &n[3], &n[4], &n[5]) == 6)
				v = n[5];
		}
		break;
	}
	fclose(f);
	return v;
}

static void sinks_read(struct bench *b, uint64_t pk[2], uint64_t by[2])
{
	/* Direction 0 arrives at the WAN host, direction 1 at the LAN host. */
	pk[0] = pk[1] = by[0] = by[1] = 0;
	if (b->sink[NS_WAN])
		sink_read(b->sink[NS_WAN], &pk[0], &by[0]);
	if (b->sink[NS_LAN])
		sink_read(b->sink[NS_LAN], &pk[1], &by[1]);
}

static int trial_run(struct bench *b, struct trial *t, double settle)
{
	pthread_barrier_t start;
	pthread_t th[2];
	sigset_t all, old;
	int err = 0, started = 0;
	bool abort = false;

	sinks_read(b, t->sink_before, t->bytes_before);
	bench_router_read(b, &t->rb);
	t->kfwd_before = kernel_forwarded(b);

	pthread_barrier_init(&start, NULL, t->n);
	/* Signals stay with the main thread, which unwinds the run. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int i = 0; i < t->n; i++) {
		t->job[i].start = &start;
		t->job[i].abort = &abort;
		t->job[i].ns_fd = b->ns_fd[i == 0 ? NS_LAN : NS_WAN];
		t->job[i].err = 0;
		memset(&t->job[i].res, 0, sizeof(t->job[i].res));
		if (pthread_create(&th[i], NULL, gen_thread, &t->job[i])) {
			err = -EAGAIN;
			break;
		}
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (started < t->n) {
		/* A started generator waits at the barrier for its partner:
		 * take the partner's place there, and tell it not to run. */
		pr_warn("xnat bench: cannot start generator threads\n");
		abort = true;
		if (started)
			pthread_barrier_wait(&start);
	}
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);
	if (err)
		return err;
	for (int i = 0; i < t->n; i++)
		if (t->job[i].err) {
			pr_warn("xnat bench: generator %s: %s\n",
				i ? "WAN->LAN" : "LAN->WAN", strerror(-t->job[i].err));
			return t->job[i].err;
		}

	/* Frames still in a ring or a softirq when the generator returned. */
	bench_sleep(settle);
	sinks_read(b, t->sink_after, t->bytes_after);
	bench_router_read(b, &t->ra);
	t->kfwd_after = kernel_forwarded(b);
	return bench_stop ? -EINTR : 0;
}

static void verify(struct bench *b, struct bench_sample *s, uint64_t kfwd)
{
	const struct bench_router_counters *c = &s->router;
	enum bench_mode m = s->mode;

	s->verified = false;
	if (m == BM_DROP) {
		if (s->forwarded)
			snprintf(s->note, sizeof(s->note), "drop mode forwarded %llu",
				 (unsigned long long)s->forwarded);
		else if (!c->drop_seen)
			snprintf(s->note, sizeof(s->note), "xdp_drop saw nothing");
		else
			s->verified = true;
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
	switch (m) {
	case BM_KERNEL_FWD:
	case BM_KERNEL_NAT:
		/* The kernel forwarded (nearly) all of it. */
		if (kfwd < s->forwarded * 9 / 10) {
			snprintf(s->note, sizeof(s->note),
				 "kernel forwarded %llu of %llu",
				 (unsigned long long)kfwd,
				 (unsigned long long)s->forwarded);
			return;
		}
		if (m == BM_KERNEL_NAT && c->conntrack < 1) {
			snprintf(s->note, sizeof(s->note), "no conntrack entries");
			return;
		}
		break;
	case BM_XDP_NAT:
		if (c->fwd_routed || c->fwd_fast < s->forwarded / 2) {
			snprintf(s->note, sizeof(s->note),
				 "fwd_fast %llu, fwd_routed %llu of %llu",
				 (unsigned long long)c->fwd_fast,
				 (unsigned long long)c->fwd_routed,
				 (unsigned long long)s->forwarded);
			return;
		}
		break;
	case BM_XDP_NAT_SLOW:
		if (c->fwd_fast || c->fwd_routed < s->forwarded / 2) {
			snprintf(s->note, sizeof(s->note),
				 "fwd_fast %llu, fwd_routed %llu of %llu",
				 (unsigned long long)c->fwd_fast,
				 (unsigned long long)c->fwd_routed,
				 (unsigned long long)s->forwarded);
			return;
		}
		break;
	default:
		break;
	}
	if (m >= BM_XDP_NAT && kfwd > s->forwarded / 100) {
		/* XDP passed traffic up and the kernel forwarded it. */
		snprintf(s->note, sizeof(s->note), "kernel forwarded %llu of %llu",
			 (unsigned long long)kfwd, (unsigned long long)s->forwarded);
		return;
	}
	s->verified = true;
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
	int err;

	t.n = p->both && !lan_only ? 2 : 1;
	for (int d = 0; d < t.n; d++) {
		gen_setup(b, p, d, &t.job[d].cfg);
		t.job[d].cfg.rate_pps = scale > 0 ? scale * rate[d] : 0;
		t.job[d].cfg.duration_s = secs;
	}
	err = trial_run(b, &t, 0.05);
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
	s->lost = (int64_t)s->offered - (int64_t)s->forwarded;
	bench_router_delta(&t.rb, &t.ra, &s->router);
	s->router.kernel_fwd = t.kfwd_after - t.kfwd_before;
	verify(b, s, s->router.kernel_fwd);
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

	err = trial(b, r, rep, pi, "max", rate, 0, plan->max_s, false, &s);
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

		err = trial(b, r, rep, pi, "search", rate, scale, plan->step_s,
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

int bench_udp_warm(struct bench *b, struct bench_results *r, int pi)
{
	double rate[2] = { 0, 0 };

	return trial(b, r, 0, pi, NULL, rate, 0, 0.1, true, NULL);
}

/* ---- new flows -------------------------------------------------------------- */

static struct bench_newflow *new_newflow(struct bench_results *r)
{
	return bench_array_push(&r->newflow, &r->n_newflow, &r->cap_newflow,
				sizeof(*r->newflow), 16);
}

/*
 * The new-flow test's flows: NF_ADDRS source addresses spread over
 * 198.18.0.0/16 (behind the LAN host), NF_PORTS source ports each, and as
 * many destination ports as it takes to make N distinct flows. The inside
 * endpoints stay below what one NAT address has ports for (45,536): the
 * XDP NAT maps endpoint-independently (RFC 4787), one external port per
 * inside address and port, so a million flows from a million endpoints
 * would not fit any NAPT with one address; a million flows to several
 * destinations from 40,000 endpoints do. Each address has its own block
 * of ports, so port preservation never collides. Runs go destination by
 * destination, so the first NF_ADDRS runs also create the mappings.
 */
#define NF_ADDRS 4
#define NF_PORTS 10000
static const char *const nf_addrs[NF_ADDRS] = {
	"198.18.16.1", "198.18.80.1", "198.18.144.1", "198.18.208.1",
};
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
int bench_newflow(struct bench *b, struct bench_results *r, int rep,
		  double offer_pps)
{
	const struct bench_plan *plan = b->plan;
	struct bench_profile prof = { .size = BS_64, .flows = 1 };
	uint64_t timed_flows = 0;
	double timed_secs = 0, r_est = offer_pps;
	uint32_t left = plan->newflow_flows;
	struct bench_newflow *nf;
	long long ct_before;
	int err = 0, runs = 0;

	nf = new_newflow(r);
	if (!nf)
		return -ENOMEM;
	nf->rep = rep;
	nf->mode = b->mode;
	nf->how = b->mode == BM_KERNEL_NAT ? "sink" : "fwd_slow";
	nf->offered_pps = offer_pps;
	ct_before = bench_sysctl_read(b, NS_RTR, "net/netfilter/nf_conntrack_count");

	for (int run = 0; left && !err && !bench_stop; run++) {
		uint32_t n = left < NF_PORTS ? left : NF_PORTS, done = 0;
		const char *src = nf_addrs[run % NF_ADDRS];
		uint16_t dport = 1000 + run / NF_ADDRS;

		for (int tries = 0; done < n && tries < 50 && !err; tries++) {
			struct trial t = { .n = 1 };
			struct gen_config *c = &t.job[0].cfg;
			struct bench_router_counters d;
			uint32_t rem = n - done, sent, set_up;
			bool tail = rem <= NF_TAIL;

			gen_setup(b, &prof, 0, c);
			inet_pton(AF_INET, src, &c->src_ip);
			c->src_port = BENCH_PORT_FIRST + (run % NF_ADDRS) * NF_PORTS + done;
			c->dst_port = dport;
			c->flows = rem;
			c->rate_pps = tail ? rem / 0.01 : 4 * r_est;
			c->duration_s = tail ? 0.01 : 0.8 * rem / r_est;
			if (c->duration_s < 0.005)
				c->duration_s = 0.005;
			err = trial_run(b, &t, 0.005);
			if (err)
				break;
			runs++;
			sent = t.job[0].res.packets < rem ? t.job[0].res.packets : rem;
			bench_router_delta(&t.rb, &t.ra, &d);
			/* Kernel: each flow's one packet at the sink is one
			 * conntrack entry created (and NATed). */
			set_up = b->mode == BM_KERNEL_NAT ?
				 t.sink_after[0] - t.sink_before[0] : d.fwd_slow;
			if (set_up > sent)
				set_up = sent;
			done += sent;
			nf->flows_offered += sent;
			nf->flows_set_up += set_up;
			nf->forwarded += t.sink_after[0] - t.sink_before[0];
			nf->seconds += t.job[0].res.seconds;
			nf->router.fwd_fast += d.fwd_fast;
			nf->router.fwd_slow += d.fwd_slow;
			nf->router.passed += d.passed;
			nf->router.dropped += d.dropped;
			for (int k = 0; k < XNAT_REASON_MAX; k++)
				nf->router.reason[k] += d.reason[k];
			if (!tail && t.job[0].res.seconds > 0 && t.job[0].res.packets) {
				double secs = t.job[0].res.seconds;

				r_est = t.job[0].res.packets / secs;
				/* Past the last flow the generator starts over
				 * (repeats, not new flows): count the time the
				 * new ones took at the run's rate. */
				if (t.job[0].res.packets > rem)
					secs *= (double)rem / t.job[0].res.packets;
				timed_flows += set_up;
				timed_secs += secs;
			}
			pr_debug("new flows: %s ports %u-%u to port %u at %.0f pps for %.3f s: "
				 "sent %llu in %.3f s, forwarded %llu, fwd_slow %llu, "
				 "passed %llu, dropped %llu\n", src, c->src_port,
				 c->src_port + c->flows - 1, c->dst_port, c->rate_pps,
				 c->duration_s,
				 (unsigned long long)t.job[0].res.packets,
				 t.job[0].res.seconds,
				 (unsigned long long)(t.sink_after[0] - t.sink_before[0]),
				 (unsigned long long)d.fwd_slow,
				 (unsigned long long)d.passed,
				 (unsigned long long)d.dropped);
			if (!t.job[0].res.packets)
				break;
		}
		if (done < n && !err) {
			snprintf(nf->note, sizeof(nf->note),
				 "the generator stalled at %u of %u flows", done, n);
			break;
		}
		left -= n;
	}
	nf->rate = timed_secs > 0 ? timed_flows / timed_secs : 0;
	nf->verified = nf->flows_set_up > 0 &&
		       nf->flows_set_up >= nf->flows_offered * 9 / 10;
	if (!nf->verified && !nf->note[0])
		snprintf(nf->note, sizeof(nf->note),
			 "only %llu of %llu flows set up",
			 (unsigned long long)nf->flows_set_up,
			 (unsigned long long)nf->flows_offered);
	if (b->mode == BM_KERNEL_NAT && !nf->note[0]) {
		long long ct = bench_sysctl_read(b, NS_RTR,
						 "net/netfilter/nf_conntrack_count");

		snprintf(nf->note, sizeof(nf->note),
			 "conntrack entries %lld -> %lld (nf_conntrack_max %lld)",
			 ct_before, ct,
			 bench_sysctl_read(b, NS_RTR, "net/netfilter/nf_conntrack_max"));
	}
	if (!err)
		bench_progress("  rep %d %-12s new flows: %llu of %llu set up, %.0f flows/s (%d runs, %.2f s timed)",
			       rep + 1, bench_mode_names[b->mode],
			       (unsigned long long)nf->flows_set_up,
			       (unsigned long long)nf->flows_offered, nf->rate,
			       runs, timed_secs);
	return err;
}
