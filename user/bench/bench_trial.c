// SPDX-License-Identifier: GPL-2.0-only
/* One trial of the generators, sinks and counters; see bench_trial.h. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "bench_trial.h"
#include "log.h"

/* Nanoseconds this thread has waited on a run queue (the second field
 * of /proc/thread-self/schedstat), or -1 without schedstats. */
static double thread_run_delay_ns(void)
{
	unsigned long long run, wait;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	return n == 2 ? (double)wait : -1;
}

static void *gen_thread(void *arg)
{
	struct gen_job *j = arg;
	struct gen *g = NULL;
	double wait0, wait1;

	/* This thread only: the generator loads and sends from inside its
	 * host's namespace while the rest of the process stays put. */
	if (setns(j->ns_fd, CLONE_NEWNET))
		j->err = -errno;
	else
		j->err = gen_open(&g, &j->cfg);
	/* Both directions start together, whatever happened. */
	pthread_barrier_wait(j->start);
	j->waited_s = -1;
	if (!j->err && !*j->abort) {
		wait0 = thread_run_delay_ns();
		j->err = gen_run(g, &j->res);
		wait1 = thread_run_delay_ns();
		if (wait0 >= 0 && wait1 >= 0)
			j->waited_s = (wait1 - wait0) / 1e9;
	}
	if (g)
		gen_close(g);
	return NULL;
}

void trial_gen_setup(struct bench *b, const struct bench_profile *p, int dir,
		     struct gen_config *cfg)
{
	bool nat = bench_mode_nat(b->mode);

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
		if (p->ports_per_host) {
			cfg->ports_per_host = p->ports_per_host;
			cfg->n_dports = BENCH_HOSTS_DPORTS;
			inet_pton(AF_INET, BENCH_HOSTS_FIRST, &cfg->src_ip);
		}
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

/*
 * A new trial number for the generators' frames and the sinks: a frame an
 * earlier trial sent that arrives only now (held in a queue or a ring on
 * the way) is then counted as late, not as this trial's. Without it, such
 * a frame made a trial forward one more frame than it offered (lost -1),
 * and the trial it came from one less.
 */
static uint16_t sinks_stamp(struct bench *b)
{
	static uint16_t last;

	if (!++last)
		last = 1;
	for (int ns = 0; ns < NS_MAX; ns++)
		if (b->sink[ns])
			sink_stamp(b->sink[ns], last);
	return last;
}

static uint64_t sinks_late(struct bench *b)
{
	uint64_t n, sum = 0;

	for (int ns = 0; ns < NS_MAX; ns++)
		if (b->sink[ns] && !sink_read_late(b->sink[ns], &n))
			sum += n;
	return sum;
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

int trial_run(struct bench *b, struct trial *t, double settle)
{
	pthread_barrier_t start;
	pthread_t th[2];
	sigset_t all, old;
	int err = 0, started = 0;
	bool abort = false;
	uint16_t stamp = sinks_stamp(b);
	uint64_t late = sinks_late(b);

	sinks_read(b, t->sink_before, t->bytes_before);
	bench_router_read(b, &t->rb);
	t->kfwd_before = kernel_forwarded(b);

	pthread_barrier_init(&start, NULL, t->n);
	/* Signals stay with the main thread, which unwinds the run. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int i = 0; i < t->n; i++) {
		t->job[i].cfg.stamp = stamp;
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
	late = sinks_late(b) - late;
	if (late)
		bench_progress("  %llu frame%s of an earlier trial arrived during "
			       "this one, not counted", (unsigned long long)late,
			       late == 1 ? "" : "s");
	return bench_stop ? -EINTR : 0;
}
