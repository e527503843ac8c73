// SPDX-License-Identifier: GPL-2.0-only
/* Nearest-rank percentiles; see bench_pctl.h. */
#include <stdlib.h>
#include "bench_pctl.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double pctl_rank(const double *sorted, int n, double p)
{
	/* Rank ceil(P/100 * N), 1-based; the epsilon keeps 0.9 * 50 = 45
	 * from becoming rank 46 through rounding. */
	double x = p / 100.0 * n;
	long rank = (long)x;

	if (rank < x - 1e-9)
		rank++;

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

struct pctl pctl_of(double *v, int n)
{
	struct pctl s = { .n = n };

	if (n <= 0)
		return (struct pctl){ 0 };
	qsort(v, n, sizeof(*v), cmp_double);
	s.p50 = pctl_rank(v, n, 50);
	s.p90 = pctl_rank(v, n, 90);
	s.p99 = pctl_rank(v, n, 99);
	s.max = v[n - 1];
	return s;
}
