// SPDX-License-Identifier: GPL-2.0-only
/* Next hops XDP sends to, kept fresh in the kernel; see neigh_keepalive.h. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "clock.h"
#include "grow.h"
#include "log.h"
#include "map_walk.h"
#include "neigh_keepalive.h"
#include "xnat_common.h"

/* A neighbour on a router port, under the names flow entries use. */
struct kept {
	/* The sort key: every byte up to ifindex, no padding. */
	__u32 parent; /* physical port */
	__u16 vid;
	__u8 mac[6];
	/* The neighbour as the kernel names it. */
	int ifindex;
	int family;
	__u8 addr[16];
	bool used;
};
_Static_assert(offsetof(struct kept, ifindex) == 12, "kept: a padded key");

struct neigh_keepalive {
	int flows_fd;
	int ifaces_fd;
	__u64 due_ns;
	__u64 since_ns; /* entries seen since then count as sending */
	/* This round's neighbours, sorted by (parent, vid, mac). */
	struct kept *k;
	size_t n, cap;
	size_t n_keys;  /* distinct (parent, vid, mac) among them */
	size_t n_used;  /* of those, found used so far */
	size_t walked;  /* entries this round's walk read */
	bool out_of_memory;
};

static int kept_cmp(const void *a, const void *b)
{
	return memcmp(a, b, offsetof(struct kept, ifindex));
}

static void add_neighbour(void *ctx, int ifindex, int family,
			  const __u8 *addr, const __u8 *mac)
{
	struct neigh_keepalive *k = ctx;
	__u32 key = ifindex;
	struct iface_info port;
	struct kept *e;

	if (bpf_map_lookup_elem(k->ifaces_fd, &key, &port))
		return; /* not a router port: no flow sends there */
	if (grow_for(&k->k, sizeof(*k->k), k->n, &k->cap, 64)) {
		k->out_of_memory = true;
		return;
	}
	e = &k->k[k->n++];
	memset(e, 0, sizeof(*e));
	e->parent = port.parent;
	e->vid = port.vid;
	memcpy(e->mac, mac, 6);
	e->ifindex = ifindex;
	e->family = family;
	memcpy(e->addr, addr, sizeof(e->addr));
}

/* map_walk(): the neighbour a recently seen entry sends to is used. */
static int mark_used(const void *key, const void *value, void *ctx)
{
	const struct flow_value *v = value;
	struct neigh_keepalive *k = ctx;
	struct kept probe, *e;

	(void)key;
	k->walked++;
	if (v->last_seen_ns < k->since_ns)
		return 0;
	memset(&probe, 0, sizeof(probe));
	probe.parent = v->egress_ifindex;
	probe.vid = v->egress_vid;
	memcpy(probe.mac, v->eth_dst, 6);
	e = bsearch(&probe, k->k, k->n, sizeof(*k->k), kept_cmp);
	if (!e)
		return 0;
	/* Neighbours that share a MAC (a dual-stacked host, a proxy) are a
	 * run of the sorted array; its first one holds the mark. */
	while (e > k->k && !kept_cmp(e - 1, e))
		e--;
	if (!e->used) {
		e->used = true;
		/* Every MAC used: the rest of the table cannot add one
		 * (most routers have a few next hops and many connections
		 * through each). */
		if (++k->n_used == k->n_keys)
			return -ECANCELED;
	}
	return 0;
}

int neigh_keepalive_round(struct neigh_keepalive *k, struct next_hop_watch *w,
			  __u64 since_ns)
{
	__u64 start = clock_ns(CLOCK_MONOTONIC);
	int asked = 0, failed = 0;
	long seen;

	k->since_ns = since_ns;
	k->n = k->n_keys = k->n_used = k->walked = 0;
	k->out_of_memory = false;
	next_hop_each_neighbour(w, add_neighbour, k);
	if (k->out_of_memory)
		pr_debug("neighbour keep-alive: out of memory, some "
			 "neighbours left out\n");
	if (!k->n)
		return 0;
	qsort(k->k, k->n, sizeof(*k->k), kept_cmp);
	for (size_t i = 0; i < k->n; i++)
		k->n_keys += !i || kept_cmp(&k->k[i], &k->k[i - 1]);
	seen = map_walk(k->flows_fd, sizeof(struct flow_key),
			sizeof(struct flow_value), mark_used, k);
	if (seen < 0 && seen != -ECANCELED) {
		pr_debug("neighbour keep-alive: cannot read the flow table: "
			 "%s\n", strerror((int)-seen));
		return (int)seen;
	}
	/* The flows cannot tell which of the neighbours that share a MAC
	 * they send to: each of a marked run counts as used. */
	for (size_t i = 0, j; i < k->n; i = j) {
		bool used = k->k[i].used;

		for (j = i + 1; j < k->n && !kept_cmp(&k->k[j], &k->k[i]); j++)
			;
		for (size_t m = i; used && m < j; m++) {
			asked++;
			if (next_hop_resolve(k->k[m].ifindex, k->k[m].family,
					     k->k[m].addr))
				failed++;
		}
	}
	pr_debug("neighbour keep-alive: %d of %zu neighbours used since "
		 "the last round (%d not accepted), %zu entries read, "
		 "%.1f ms\n", asked, k->n, failed, k->walked,
		 (clock_ns(CLOCK_MONOTONIC) - start) / 1e6);
	return asked;
}

size_t neigh_keepalive_walked(const struct neigh_keepalive *k)
{
	return k->walked;
}

void neigh_keepalive_tick(struct neigh_keepalive *k, struct next_hop_watch *w)
{
	__u64 start, took, pace;

	if (!k || !w)
		return;
	start = clock_ns(CLOCK_MONOTONIC);
	if (start < k->due_ns)
		return;
	neigh_keepalive_round(k, w, k->since_ns);
	/* Entries seen from now on count for the next round; one seen
	 * during this walk counts for both, harmlessly. */
	k->since_ns = start;
	took = clock_ns(CLOCK_MONOTONIC) - start;
	pace = NEIGH_KEEPALIVE_MS * 1000000ULL;
	k->due_ns = start + (NEIGH_KEEPALIVE_PACE * took > pace ?
			     NEIGH_KEEPALIVE_PACE * took : pace);
}

struct neigh_keepalive *neigh_keepalive_open_maps(int flows_fd, int ifaces_fd)
{
	struct neigh_keepalive *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return NULL;
	k->flows_fd = fcntl(flows_fd, F_DUPFD_CLOEXEC, 0);
	k->ifaces_fd = k->flows_fd < 0 ? -1 :
		       fcntl(ifaces_fd, F_DUPFD_CLOEXEC, 0);
	if (k->ifaces_fd < 0) {
		err = errno;
		neigh_keepalive_close(k);
		errno = err;
		return NULL;
	}
	k->since_ns = clock_ns(CLOCK_MONOTONIC);
	k->due_ns = k->since_ns + NEIGH_KEEPALIVE_MS * 1000000ULL;
	return k;
}

void neigh_keepalive_close(struct neigh_keepalive *k)
{
	if (!k)
		return;
	if (k->ifaces_fd >= 0)
		close(k->ifaces_fd);
	if (k->flows_fd >= 0)
		close(k->flows_fd);
	free(k->k);
	free(k);
}
