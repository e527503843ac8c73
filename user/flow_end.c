// SPDX-License-Identifier: GPL-2.0-only
/* Ending connections as their timeout would; see flow_end.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flow_ctl.skel.h"
#include "flow_end.h"
#include "pins.h"

static void end_key(struct flow_end *e, const struct flow_key *k)
{
	e->owner[e->nkeys] = e->ncon;
	e->keys[e->nkeys++] = *k;
}

int flow_end_select(struct flow_end *e, const struct conn *conns, size_t n,
		    flow_end_match_fn match, const void *arg)
{
	memset(e, 0, sizeof(*e));
	e->keys = calloc(n ? 2 * n : 1, sizeof(*e->keys));
	e->owner = calloc(n ? 2 * n : 1, sizeof(*e->owner));
	if (!e->keys || !e->owner) {
		flow_end_free(e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (!match(&conns[i], arg))
			continue;
		/* Offload mode: no mapping to release, each entry has its
		 * own timer, which removes it and logs why; the connection
		 * goes back to the kernel (offloaded again once the ruleset
		 * accepts another of its packets). */
		if (conn_value(&conns[i])->nat == FLOW_NAT_CT) {
			if (conns[i].has_orig)
				end_key(e, &conns[i].okey);
			if (conns[i].has_reply)
				end_key(e, &conns[i].rkey);
			e->ncon++;
			continue;
		}
		/* Only the ORIG entry is swept; a lone REPLY entry is
		 * one the data path is deleting right now. */
		if (conns[i].has_orig) {
			end_key(e, &conns[i].okey);
			e->ncon++;
		} else {
			e->orphans++;
		}
	}
	return 0;
}

void flow_end_free(struct flow_end *e)
{
	free(e->keys);
	free(e->owner);
	e->keys = NULL;
	e->owner = NULL;
}

/*
 * The flow control program, on the router's flow table FLOWS_FD and the
 * data path's other pinned maps it reads: the sweeper's and the ports.
 * The sweeper's are missing under a data path from before the sweeper
 * (its connections have timers of their own): the program then gets maps
 * of its own, which nothing reads.
 */
int flow_ctl_open(int flows_fd, struct flow_ctl_bpf **out)
{
	struct flow_ctl_bpf *skel = flow_ctl_bpf__open();
	struct bpf_map *pinned[5];
	int err, fd;

	*out = skel;
	if (!skel)
		return -errno;
	pinned[0] = skel->maps.xnat_expire_now;
	pinned[1] = skel->maps.xnat_sweep;
	pinned[2] = skel->maps.xnat_ifaces;
	pinned[3] = skel->maps.xnat_vlans;
	pinned[4] = skel->maps.xnat_tx_ports;
	err = bpf_map__reuse_fd(skel->maps.xnat_flows, flows_fd);
	for (size_t i = 0; !err && i < sizeof(pinned) / sizeof(*pinned); i++) {
		fd = pins_map_open(bpf_map__name(pinned[i]));
		if (fd < 0)
			continue;
		err = bpf_map__reuse_fd(pinned[i], fd);
		close(fd);
	}
	return err ? err : flow_ctl_bpf__load(skel);
}

/* Connections with an entry still there. */
static size_t still_there(int fd, const struct flow_end *e)
{
	struct flow_value v;
	size_t left = 0;

	for (size_t i = 0; i < e->nkeys; i++) {
		if (i && e->owner[i] == e->owner[i - 1])
			continue;
		if (!bpf_map_lookup_elem(fd, &e->keys[i], &v) ||
		    (i + 1 < e->nkeys && e->owner[i + 1] == e->owner[i] &&
		     !bpf_map_lookup_elem(fd, &e->keys[i + 1], &v)))
			left++;
	}
	return left;
}

/* Mark one entry and hand it to the sweeper. The sweeper's queue holds a
 * few thousand (bpf/map_sweep.h): when it is full (XDP_TX), the sweeper,
 * kicked already, empties it in its next softirq; try again for up to
 * about 20 ms, then leave the entry marked, for the sweeper's next pass.
 * (XDP_TX also says that an offload entry's timer would not start, which
 * no retry mends: hence the short bound.) */
static int end_one(int prog, const struct flow_key *k)
{
	for (int t = 0; t < 20; t++) {
		LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = k,
			    .data_size_in = sizeof(*k));

		if (bpf_prog_test_run_opts(prog, &run))
			return -errno;
		/* XDP_DROP: it expired meanwhile, as good. */
		if (run.retval != XDP_TX)
			return 0;
		usleep(1000);
	}
	return 0;
}

long flow_end_run(int flows_fd, const struct flow_end *e, int wait_ms,
		  size_t *done)
{
	struct flow_ctl_bpf *skel;
	int err, prog;
	size_t i;

	*done = 0;
	if (!e->nkeys)
		return 0;
	err = flow_ctl_open(flows_fd, &skel);
	if (err) {
		flow_ctl_bpf__destroy(skel);
		return err;
	}
	prog = bpf_program__fd(skel->progs.xdp_flow_expire);
	for (i = 0; i < e->nkeys && !err; i++) {
		err = end_one(prog, &e->keys[i]);
		if (!err && (i + 1 == e->nkeys || e->owner[i + 1] != e->owner[i]))
			(*done)++;
	}
	flow_ctl_bpf__destroy(skel);
	if (err)
		return err;
	/* The sweeper runs in softirq right away; give it a moment. */
	for (int t = 0; t < wait_ms / 10 && still_there(flows_fd, e); t++)
		usleep(10000);
	return still_there(flows_fd, e);
}
