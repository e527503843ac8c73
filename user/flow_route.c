// SPDX-License-Identifier: GPL-2.0-only
/* xdp mode's connections follow route and neighbour changes; see
 * flow_route.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flow_end.h"
#include "flow_mac.h"
#include "flow_route.h"
#include "grow.h"
#include "clock.h"
#include "log.h"
#include "map_walk.h"
#include "pins.h"
#include "xnat_common.h"
#include "flow_ctl.skel.h"

/* Connections waiting for their new next hop at most: each is one route
 * lookup per retry. Past it (or out of memory), a connection whose next
 * hop is unknown ends at once, as it would after the wait. */
#define FLOW_ROUTE_WAITING_MAX 65536
/* Next hops asked to be resolved per walk or retry at most. */
#define FLOW_ROUTE_RESOLVE_MAX 64
#define FLOW_ROUTE_RETRY_MS 500

/* A connection waiting for its next hop, where it goes, and until when
 * it may wait: from the first time it was found waiting, whatever route
 * changes come meanwhile, or a stream of them would keep it waiting.
 * ASKED: its next hop was asked for when it was last routed; those not
 * go first at the next retry, so that next hops that never answer do not
 * keep the others from being asked (FLOW_ROUTE_RESOLVE_MAX). */
struct waiting {
	struct flow_key key;
	int family;
	union xnat_addr daddr;
	__u64 give_up_ns;
	bool asked;
};

/* A next hop the kernel was asked to resolve. */
struct asked {
	int ifindex;
	int family;
	union xnat_addr addr;
};

struct flow_route_watch {
	int flows_fd;
	int ifaces_fd;
	struct flow_ctl_bpf *ctl;
	/* Sorted by key before a walk, which looks connections up in it. */
	struct waiting *waiting;
	size_t n_waiting;
	__u64 next_try_ns;
	/* Route every connection again at the first tick: routes may have
	 * changed while no watch ran (before `xnat run`, or during a reload,
	 * which also drops the list of those waiting). */
	bool walk_all;
};

/* One walk's or retry's outcome. */
struct reroute {
	struct flow_route_watch *f;
	const struct next_hop_events *e;
	__u64 now;
	struct waiting *waiting; /* the connections still waiting after it */
	size_t n_waiting, cap;
	struct asked asked[FLOW_ROUTE_RESOLVE_MAX];
	int n_asked;
	long moved, ended, failed;
};

static int family_of(const struct flow_key *k)
{
	return k->family == XNAT_AF_INET ? AF_INET : AF_INET6;
}

/* End the connection of ORIG entry KEY, as its idle timeout would. */
static void end_conn(struct reroute *r, const struct flow_key *key)
{
	struct flow_key k = *key;
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = &k,
		    .data_size_in = sizeof(k));

	if (bpf_prog_test_run_opts(bpf_program__fd(r->f->ctl->progs.xdp_flow_expire),
				   &run) || run.retval == XDP_ABORTED)
		r->failed++;
	else if (run.retval != XDP_DROP) /* DROP: gone already */
		r->ended++;
}

/* Have the kernel resolve the next hop in A (once per walk). False when
 * it could not be asked: too many asked already. */
static bool resolve(struct reroute *r, const struct flow_route_arg *a)
{
	struct asked *q;
	int err;

	for (int i = 0; i < r->n_asked; i++)
		if (r->asked[i].ifindex == (int)a->ifindex &&
		    r->asked[i].family == a->next_hop_family &&
		    !memcmp(&r->asked[i].addr, &a->next_hop, sizeof(a->next_hop)))
			return true;
	if (r->n_asked == FLOW_ROUTE_RESOLVE_MAX)
		return false;
	q = &r->asked[r->n_asked++];
	q->ifindex = a->ifindex;
	q->family = a->next_hop_family;
	q->addr = a->next_hop;
	err = next_hop_resolve(a->ifindex, a->next_hop_family, &a->next_hop);
	if (err)
		pr_debug("cannot ask for a next hop to be resolved: %s\n",
			 strerror(-err));
	return true;
}

static int waiting_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct waiting *)a)->key,
		      &((const struct waiting *)b)->key, sizeof(struct flow_key));
}

/* Until when the connection of KEY may wait: as long as it already was,
 * if it was. */
static __u64 give_up_at(const struct reroute *r, const struct flow_key *key)
{
	struct waiting probe = { .key = *key };
	const struct waiting *w;

	w = bsearch(&probe, r->f->waiting, r->f->n_waiting,
		    sizeof(*r->f->waiting), waiting_cmp);
	return w ? w->give_up_ns : r->now + FLOW_ROUTE_WAIT_MS * 1000000ULL;
}

/* Room for one more waiting connection? */
static bool waiting_room(struct reroute *r)
{
	return r->n_waiting < FLOW_ROUTE_WAITING_MAX &&
	       !grow_for(&r->waiting, sizeof(*r->waiting), r->n_waiting,
			 &r->cap, 64);
}

/* Route the connection of ORIG entry KEY (towards DADDR) again, and act
 * on the answer; one without a next hop yet may wait until GIVE_UP_NS (0:
 * as long as it already was, or the full time). */
static void reroute_one(struct reroute *r, const struct flow_key *key,
			const union xnat_addr *daddr, __u64 give_up_ns)
{
	struct flow_route_arg a = { .key = *key };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = &a,
		    .data_size_in = sizeof(a), .data_out = &a,
		    .data_size_out = sizeof(a));
	struct waiting *w;

	if (bpf_prog_test_run_opts(bpf_program__fd(r->f->ctl->progs.xdp_flow_reroute),
				   &run) || run.retval == XDP_ABORTED) {
		r->failed++;
		return;
	}
	if (run.retval != XDP_PASS)
		return; /* gone meanwhile */
	switch (a.result) {
	case FLOW_ROUTE_MOVED:
		r->moved++;
		break;
	case FLOW_ROUTE_NO_NEIGH:
		if (!give_up_ns)
			give_up_ns = give_up_at(r, key);
		if (r->now >= give_up_ns || !waiting_room(r)) {
			end_conn(r, key);
			break;
		}
		w = &r->waiting[r->n_waiting++];
		w->key = *key;
		w->family = family_of(key);
		w->daddr = *daddr;
		w->give_up_ns = give_up_ns;
		w->asked = resolve(r, &a);
		break;
	case FLOW_ROUTE_GONE:
		end_conn(r, key);
		break;
	}
}

static int reroute_entry(const void *key, const void *value, void *ctx)
{
	const struct flow_key *k = key;
	const struct flow_value *v = value;
	struct reroute *r = ctx;

	/* Only the ORIG direction was routed; the reply goes back where its
	 * connection came from. */
	if (v->dir == FLOW_DIR_ORIG && v->nat != FLOW_NAT_CT &&
	    next_hop_route_changed(r->e, family_of(k), &v->new_daddr))
		reroute_one(r, k, &v->new_daddr, 0);
	return 0;
}

/* The connections that were waiting, routed again: first those whose
 * next hop was not asked for last time, then the others; those the walk
 * of E (if any) saw already are not. */
static void retry_waiting(struct reroute *r)
{
	const struct flow_route_watch *f = r->f;

	for (int asked = 0; asked <= 1; asked++)
		for (size_t i = 0; i < f->n_waiting; i++) {
			const struct waiting *w = &f->waiting[i];

			if (w->asked != asked ||
			    (r->e && next_hop_route_changed(r->e, w->family,
							    &w->daddr)))
				continue;
			reroute_one(r, &w->key, &w->daddr, w->give_up_ns);
		}
}

static void reroute_start(struct reroute *r, struct flow_route_watch *f,
			  const struct next_hop_events *e)
{
	memset(r, 0, sizeof(*r));
	r->f = f;
	r->e = e;
	r->now = clock_ns(CLOCK_MONOTONIC);
	if (e)
		qsort(f->waiting, f->n_waiting, sizeof(*f->waiting),
		      waiting_cmp);
}

/* R's waiting list becomes F's. */
static void reroute_finish(struct flow_route_watch *f, struct reroute *r)
{
	f->next_try_ns = clock_ns(CLOCK_MONOTONIC) +
			 FLOW_ROUTE_RETRY_MS * 1000000ULL;
	free(f->waiting);
	f->waiting = r->waiting;
	f->n_waiting = r->n_waiting;
}

static void reroute_log(const char *what, const struct reroute *r)
{
	pr_info("%s: %ld flow entries to a new next hop, %zu waiting for "
		"theirs to be resolved, %ld connections ended%s\n", what,
		r->moved, r->n_waiting, r->ended,
		r->failed ? " (some could not be routed again)" : "");
}

static void on_routes(struct flow_route_watch *f,
		      const struct next_hop_events *e, const char *what)
{
	struct reroute r;
	long err;

	reroute_start(&r, f, e);
	err = map_walk(f->flows_fd, sizeof(struct flow_key),
		       sizeof(struct flow_value), reroute_entry, &r);
	retry_waiting(&r);
	reroute_finish(f, &r);
	if (err < 0)
		pr_warn("xnat: a route changed, but the flow table could not "
			"be read: %s\n", strerror((int)-err));
	else
		reroute_log(what, &r);
}

void flow_route_tick(struct flow_route_watch *f)
{
	struct reroute r;
	__u64 now;

	if (f && f->walk_all) {
		static const struct next_hop_events all = { .all = true };

		f->walk_all = false;
		on_routes(f, &all, "Every connection routed again, as the "
			  "watch started");
		return;
	}
	if (!f || !f->n_waiting)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	if (now < f->next_try_ns)
		return;
	reroute_start(&r, f, NULL);
	retry_waiting(&r);
	reroute_finish(f, &r);
	if (r.moved || r.ended || r.failed || !r.n_waiting)
		reroute_log("Connections waiting for a next hop, routed again", &r);
}

void flow_route_next_hop_changed(void *ctx, const struct next_hop_events *e)
{
	struct flow_route_watch *f = ctx;
	bool shared;
	long done;

	done = flow_mac_neighbours(f->flows_fd, f->ifaces_fd, f->ctl, e,
				   &shared);
	if (done < 0)
		pr_warn("xnat: a neighbour's MAC changed, but the flow table "
			"could not be read: %s\n", strerror((int)-done));
	else if (e->n_neighs)
		pr_info("A neighbour's MAC changed (%d at once): %ld flow "
			"entries sent to it now send to the new one%s\n",
			e->n_neighs, done,
			shared ? " (another neighbour had the old MAC: only "
				 "those addressed to it directly)" : "");
	/* More neighbours than a batch: routed again, every ORIG entry
	 * gets today's next hop (a reply keeps the MAC it had). */
	if (e->all || e->n_routes) {
		char what[64];

		snprintf(what, sizeof(what), "Routes changed (%s)",
			 next_hop_routes_what(e));
		on_routes(f, e, what);
	}
}

int flow_route_flows_fd(const struct flow_route_watch *f)
{
	return f->flows_fd;
}

int flow_route_ports_fd(const struct flow_route_watch *f)
{
	return f->ifaces_fd;
}

struct flow_route_watch *flow_route_open(void)
{
	struct flow_route_watch *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return NULL;
	f->ifaces_fd = -1;
	f->walk_all = true;
	f->flows_fd = pins_map_open(MAP_FLOWS);
	if (f->flows_fd < 0)
		goto fail;
	f->ifaces_fd = pins_map_open(MAP_IFACES);
	if (f->ifaces_fd < 0)
		goto fail;
	err = flow_ctl_open(f->flows_fd, &f->ctl);
	if (err) {
		errno = -err;
		goto fail;
	}
	return f;
fail:
	err = errno;
	flow_route_close(f);
	errno = err;
	return NULL;
}

void flow_route_close(struct flow_route_watch *f)
{
	if (!f)
		return;
	flow_ctl_bpf__destroy(f->ctl);
	if (f->ifaces_fd >= 0)
		close(f->ifaces_fd);
	if (f->flows_fd >= 0)
		close(f->flows_fd);
	free(f->waiting);
	free(f);
}
