// SPDX-License-Identifier: GPL-2.0-only
/* Per-CPU map sums; see percpu.h. */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "percpu.h"

/* Possible CPUs (what a per-CPU lookup returns values for), or -errno. */
static int possible_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	return n > 0 ? n : (n ? n : -EINVAL);
}

int percpu_counter_sum(int map_fd, __u32 key, struct xnat_counter *sum)
{
	int ncpus = possible_cpus();

	sum->packets = sum->bytes = 0;
	if (ncpus < 0)
		return ncpus;

	struct xnat_counter values[ncpus];

	if (bpf_map_lookup_elem(map_fd, &key, values))
		return -errno;
	for (int c = 0; c < ncpus; c++) {
		sum->packets += values[c].packets;
		sum->bytes += values[c].bytes;
	}
	return 0;
}

int percpu_u64_sum(int map_fd, __u32 key, __u64 *sum)
{
	int ncpus = possible_cpus();

	*sum = 0;
	if (ncpus < 0)
		return ncpus;

	__u64 values[ncpus];

	if (bpf_map_lookup_elem(map_fd, &key, values))
		return -errno;
	for (int c = 0; c < ncpus; c++)
		*sum += values[c];
	return 0;
}
