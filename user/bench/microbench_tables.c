// SPDX-License-Identifier: GPL-2.0-only
/* What an insert into a flow-table-shaped map costs; see microbench.h. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench_common.h"
#include "log.h"
#include "microbench.h"
#include "xnat_tables.skel.h"

/* One run in a table made anew: ns per insert into *NS. */
static int table_run(uint32_t entries, uint64_t seed, double *ns)
{
	struct xnat_tables_bpf *t = xnat_tables_bpf__open();
	LIBBPF_OPTS(bpf_test_run_opts, run);
	int err;

	if (!t)
		return -errno;
	t->data->tb_inserts = entries / 2;
	t->data->tb_seed = seed;
	err = bpf_map__set_max_entries(t->maps.tb_flows, entries) ?:
	      xnat_tables_bpf__load(t) ?:
	      bpf_prog_test_run_opts(bpf_program__fd(t->progs.tb_insert), &run);
	if (!err && t->bss->tb_failed)
		err = -ENOSPC; /* a key repeated, or the table full: not random */
	if (!err)
		*ns = (double)t->bss->tb_ns / t->data->tb_inserts;
	xnat_tables_bpf__destroy(t);
	return err;
}

int microbench_table_insert(uint32_t entries, double *ns)
{
	double runs[MICROBENCH_TABLE_RUNS], min, max;
	int err;

	for (int i = 0; i < MICROBENCH_TABLE_RUNS; i++) {
		err = table_run(entries, 0x9e3779b97f4a7c15ULL + i, &runs[i]);
		if (err) {
			pr_warn("xnat bench: table insert of %u entries: %s\n",
				entries, strerror(-err));
			return err;
		}
	}
	bench_stats(runs, MICROBENCH_TABLE_RUNS, ns, &min, &max);
	return 0;
}
