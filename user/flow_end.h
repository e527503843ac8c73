/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Ending connections from userspace the way their idle timeout would:
 * bpf/flow_ctl.bpf.c marks them, the data path's sweeper (bpf/sweep.h)
 * ends them, mapping references, host charges and port bindings
 * included. `xnat flows delete` ends the connections a filter names;
 * `xnat run` ends those through a port a reload dropped, or NATed to a
 * WAN address that changed (maps.c). Deleting entries from userspace
 * instead would leave the data path's counts wrong.
 */
#ifndef XNAT_FLOW_END_H
#define XNAT_FLOW_END_H

#include <stdbool.h>
#include <stddef.h>
#include "flow_view.h"

/* The entries to mark: KEYS[i] belongs to connection OWNER[i]; one
 * connection's keys are next to each other. */
struct flow_end {
	struct flow_key *keys;
	size_t *owner;
	size_t nkeys, ncon;
	size_t orphans; /* matched, but only a REPLY entry left: the data
			   path is deleting it already */
};

/* Which connections to end. */
typedef bool (*flow_end_match_fn)(const struct conn *c, const void *arg);

/* The connections of CONNS[N] that MATCH(c, ARG) selects, into E (its
 * arrays allocated here; flow_end_free). 0 or -ENOMEM. */
int flow_end_select(struct flow_end *e, const struct conn *conns, size_t n,
		    flow_end_match_fn match, const void *arg);
void flow_end_free(struct flow_end *e);

/*
 * Mark E's connections in the flow table FLOWS_FD and have the sweeper
 * end them, then wait (at most about WAIT_MS) until they are gone.
 * Returns how many are still there, or -errno with *DONE connections
 * marked (the program could not be loaded or run).
 */
long flow_end_run(int flows_fd, const struct flow_end *e, int wait_ms,
		  size_t *done);

/*
 * bpf/flow_ctl.bpf.c loaded on the router's flow table FLOWS_FD, its
 * sweeper's maps and its ports, into *OUT (flow_ctl_bpf__destroy() it, even on error).
 * 0 or -errno.
 */
struct flow_ctl_bpf;
int flow_ctl_open(int flows_fd, struct flow_ctl_bpf **out);

#endif /* XNAT_FLOW_END_H */
