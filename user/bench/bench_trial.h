/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One trial, what the UDP profiles and the new-flow test are made of: the
 * generators on their CPUs (one thread per direction, each in its host's
 * namespace), the sinks counting what arrives, and the router's and the
 * kernel's counters read before and after.
 */
#ifndef XNAT_BENCH_TRIAL_H
#define XNAT_BENCH_TRIAL_H

#include <pthread.h>
#include "bench_common.h"

struct gen_job {
	int ns_fd;
	struct gen_config cfg;
	struct gen_result res;
	/* How long the sending thread was runnable while another task had
	 * its CPU (schedstat's run_delay; -1: unknown): the chain runs in
	 * that thread's softirqs, so the trial loses its rate as long. */
	double waited_s;
	int err;
	pthread_barrier_t *start;
	const bool *abort;     /* set by the main thread only */
};

struct trial {
	int n;                     /* directions */
	struct gen_job job[2];
	uint64_t sink_before[2], sink_after[2], bytes_before[2], bytes_after[2];
	struct bench_router_counters rb, ra;
	uint64_t kfwd_before, kfwd_after;
};

/* Generator settings for direction DIR (0: LAN->WAN, 1: WAN->LAN). */
void trial_gen_setup(struct bench *b, const struct bench_profile *p, int dir,
		     struct gen_config *cfg);
/* Run T's generators together after SETTLE seconds of quiet, counters
 * read around them. 0, -EINTR when stopped, or -errno. */
int trial_run(struct bench *b, struct trial *t, double settle);

#endif /* XNAT_BENCH_TRIAL_H */
