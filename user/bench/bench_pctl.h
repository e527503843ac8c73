/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Percentiles of latency samples (the TCP tests' probe round trips): the
 * nearest-rank method, so that every percentile is a round trip that was
 * measured and p50 <= p90 <= p99 <= max holds by construction, whatever
 * the number of samples.
 */
#ifndef XNAT_BENCH_PCTL_H
#define XNAT_BENCH_PCTL_H

struct pctl {
	int n;                  /* samples; 0: none, the rest unset */
	double p50, p90, p99, max;
};

/* The nearest-rank P-th percentile (0 < P <= 100) of N > 0 values sorted
 * in ascending order: the smallest value with at least P % of the
 * values at or below it. */
double pctl_rank(const double *sorted, int n, double p);
/* p50, p90, p99 and max of N values; V is sorted in place. */
struct pctl pctl_of(double *v, int n);

#endif /* XNAT_BENCH_PCTL_H */
