// SPDX-License-Identifier: GPL-2.0-only
/* Neighbour MAC and route changes, for `xnat run`; see next_hop.h. */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include <bpf/bpf.h>
#include "clock.h"
#include "log.h"
#include "next_hop.h"
#include "rtnl.h"
#include "xnat_common.h"

/* Neighbours remembered: a LAN host inventing addresses must not grow
 * the cache without bound. Past it, new neighbours are not watched. */
#define NEXT_HOP_MAX 65536

struct neigh {
	/* The key: every byte up to mac, no padding in between. */
	int ifindex;
	__u8 family;
	__u8 addr[16];
	__u8 mac[6];
};

/* Links remembered, past which every link message counts as a change. */
#define NEXT_HOP_LINKS_MAX 4096

/* What of a link's flags decides whether routes through it are used:
 * IFF_RUNNING follows the carrier (and a dormant port). */
#define LINK_ROUTING_FLAGS (IFF_UP | IFF_RUNNING)

struct link_state {
	int ifindex; /* the key */
	unsigned int flags; /* its LINK_ROUTING_FLAGS */
};

struct next_hop_watch {
	struct mnl_socket *nl;
	void *neighs; /* tsearch(3) tree of struct neigh */
	unsigned int n_neighs;
	void *links; /* tsearch(3) tree of struct link_state */
	unsigned int n_links;
	next_hop_changed_fn *cb; /* NULL while the table is read first */
	void *ctx;
	int ports_fd; /* the ports map, or -1: every link counts */
	/* What the current read found, for one call of cb. */
	struct next_hop_change pending[NEXT_HOP_BATCH];
	struct route_change routes[NEXT_HOP_BATCH];
	struct next_hop_events ev;
	__u64 routes_due_ns; /* route changes wait until then (deliver()) */
};

static int neigh_cmp(const void *a, const void *b)
{
	return memcmp(a, b, offsetof(struct neigh, mac));
}

/* twalk_r(3): does another neighbour of the change's port and family
 * have its old MAC (an address moved away from a host that keeps its
 * own)? A neighbour of the other family with it is most likely the same
 * host, dual-stacked, whose other entry has not been told yet: not
 * counted, or a replaced dual-stack gateway would look shared. */
static void find_shared(const void *node, VISIT which, void *closure)
{
	const struct neigh *n = *(const struct neigh *const *)node;
	struct next_hop_change *c = closure;

	if ((which == postorder || which == leaf) && n->ifindex == c->ifindex &&
	    n->family == c->family && !memcmp(n->mac, c->old_mac, 6) &&
	    memcmp(n->addr, c->addr, 16))
		c->shared = true;
}

/*
 * A neighbour with a MAC: remember it, and if it had another one, say so.
 * A deleted neighbour stays remembered: the flows built with its MAC are
 * still there, and the kernel deletes unused entries on its own (XDP's
 * traffic does not use them), which says nothing about the host.
 */
static void on_neigh(struct next_hop_watch *w, const struct nlmsghdr *nlh)
{
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr, *dst = NULL, *lladdr = NULL;
	struct neigh key, *n;
	void **found;

	/* IP neighbours only: a bridge's or VXLAN's forwarding entries
	 * (AF_BRIDGE) are not next hops, and learn MACs all the time. */
	if (nlh->nlmsg_type != RTM_NEWNEIGH ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*nd) ||
	    (nd->ndm_family != AF_INET && nd->ndm_family != AF_INET6))
		return;
	mnl_attr_for_each(attr, nlh, sizeof(*nd)) {
		if (mnl_attr_get_type(attr) == NDA_DST)
			dst = attr;
		else if (mnl_attr_get_type(attr) == NDA_LLADDR)
			lladdr = attr;
	}
	if (!dst || !lladdr || mnl_attr_get_payload_len(lladdr) != 6 ||
	    mnl_attr_get_payload_len(dst) > sizeof(key.addr))
		return;
	/* A multicast or broadcast MAC (the kernel's NOARP entries of the
	 * groups a port joined: ff02::16, solicited-node addresses,
	 * 224.0.0.x) is never a flow's next hop. Watched, such entries
	 * would take room in the table and, in the keep-alive, be waited
	 * for by a walk that stops once every neighbour is found used. */
	if (*(const __u8 *)mnl_attr_get_payload(lladdr) & 1)
		return;
	memset(&key, 0, sizeof(key));
	key.ifindex = nd->ndm_ifindex;
	key.family = nd->ndm_family;
	memcpy(key.addr, mnl_attr_get_payload(dst), mnl_attr_get_payload_len(dst));
	memcpy(key.mac, mnl_attr_get_payload(lladdr), 6);

	found = tfind(&key, &w->neighs, neigh_cmp);
	if (found) {
		n = *found;
		if (!memcmp(n->mac, key.mac, 6))
			return;
		if (w->cb && w->ev.n_neighs == NEXT_HOP_BATCH) {
			w->ev.all = true;
		} else if (w->cb) {
			struct next_hop_change *c = &w->pending[w->ev.n_neighs++];

			memset(c, 0, sizeof(*c));
			c->ifindex = n->ifindex;
			c->family = n->family;
			memcpy(c->addr, n->addr, sizeof(c->addr));
			memcpy(c->old_mac, n->mac, 6);
			memcpy(c->new_mac, key.mac, 6);
			twalk_r(w->neighs, find_shared, c);
		}
		memcpy(n->mac, key.mac, 6);
		return;
	}
	if (w->n_neighs >= NEXT_HOP_MAX)
		return;
	n = malloc(sizeof(*n));
	if (!n)
		return;
	*n = key;
	if (!tsearch(n, &w->neighs, neigh_cmp)) {
		free(n);
		return;
	}
	w->n_neighs++;
}

/* A route added, changed or removed where forwarding looks: the next hop
 * of the destinations it covers may be another now. The local table (the
 * router's own addresses, their broadcast addresses) and cached clones
 * (path MTU) change no next hop; a local route elsewhere (AnyIP, in a
 * policy table) does: what it covers is no longer forwarded. */
static void on_route(struct next_hop_watch *w, const struct nlmsghdr *nlh)
{
	const struct rtmsg *rt = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr, *dst = NULL;
	struct route_change *r;
	size_t len = rt->rtm_family == AF_INET ? 4 : 16;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*rt)) {
		w->ev.all = true;
		return;
	}
	if (rt->rtm_table == RT_TABLE_LOCAL || (rt->rtm_flags & RTM_F_CLONED))
		return;
	mnl_attr_for_each(attr, nlh, sizeof(*rt))
		if (mnl_attr_get_type(attr) == RTA_DST)
			dst = attr;
	if ((rt->rtm_family != AF_INET && rt->rtm_family != AF_INET6) ||
	    rt->rtm_dst_len > 8 * len ||
	    (dst && mnl_attr_get_payload_len(dst) != len) ||
	    w->ev.n_routes == NEXT_HOP_BATCH) {
		w->ev.all = true;
		return;
	}
	r = &w->routes[w->ev.n_routes++];
	memset(r, 0, sizeof(*r));
	r->family = rt->rtm_family;
	r->dst_len = rt->rtm_dst_len;
	if (dst)
		memcpy(r->dst, mnl_attr_get_payload(dst), len);
}

static int link_cmp(const void *a, const void *b)
{
	const struct link_state *x = a, *y = b;

	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

/*
 * A link added, changed or removed. IPv4 deletes the routes through a
 * port taken down (or removed) without a route event; only IPv6 sends
 * RTM_DELROUTE for its own. A port that loses its carrier keeps its
 * routes, which the kernel stops using where
 * ignore_routes_with_linkdown is set, again without an event. So a change
 * of a router port's state, either way, counts as a change of every route
 * (of any link's, without next_hop_watch_ports()). A new link has no
 * routes yet: remembered only.
 */
/* Does a state change of link IFINDEX count (next_hop_watch_ports())? */
static bool is_port(const struct next_hop_watch *w, int ifindex)
{
	struct iface_info port;
	__u32 key = ifindex;

	return w->ports_fd < 0 ||
	       !bpf_map_lookup_elem(w->ports_fd, &key, &port);
}

static void on_link(struct next_hop_watch *w, const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct link_state key, *l;
	void **found;
	bool counts;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi)) {
		w->ev.all = w->ev.link = true;
		return;
	}
	key.ifindex = ifi->ifi_index;
	key.flags = ifi->ifi_flags & LINK_ROUTING_FLAGS;
	counts = is_port(w, key.ifindex);
	found = tfind(&key, &w->links, link_cmp);
	if (nlh->nlmsg_type == RTM_DELLINK) {
		if (found) {
			l = *found;
			tdelete(&key, &w->links, link_cmp);
			free(l);
			w->n_links--;
		}
		if (counts)
			w->ev.all = w->ev.link = true;
		return;
	}
	if (found) {
		l = *found;
		if (l->flags != key.flags && counts)
			w->ev.all = w->ev.link = true;
		l->flags = key.flags;
		return;
	}
	if (w->n_links >= NEXT_HOP_LINKS_MAX) {
		if (counts)
			w->ev.all = w->ev.link = true;
		return;
	}
	l = malloc(sizeof(*l));
	if (l)
		*l = key;
	if (!l || !tsearch(l, &w->links, link_cmp)) {
		free(l);
		w->ev.all = w->ev.link = true;
		return;
	}
	w->n_links++;
}

static bool covers(const struct route_change *r, const __u8 *addr)
{
	int bytes = r->dst_len / 8, bits = r->dst_len % 8;

	if (memcmp(r->dst, addr, bytes))
		return false;
	return !bits || !((r->dst[bytes] ^ addr[bytes]) & (0xff00 >> bits));
}

const char *next_hop_routes_what(const struct next_hop_events *e)
{
	if (e->link)
		return "a port went up or down";
	return e->all ? "any destination" : "some destinations";
}

bool next_hop_route_changed(const struct next_hop_events *e, int family,
			    const void *addr)
{
	if (e->all)
		return true;
	for (int i = 0; i < e->n_routes; i++)
		if (e->routes[i].family == family && covers(&e->routes[i], addr))
			return true;
	return false;
}

int next_hop_resolve(int ifindex, int family, const void *addr)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *nd;

	/* NTF_USE: as if a packet went there; the kernel creates the entry
	 * if it must, and probes it as it would for its own traffic. */
	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_REPLACE;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = family;
	nd->ndm_ifindex = ifindex;
	nd->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, family == AF_INET ? 4 : 16, addr);
	return rtnl_request(nlh);
}

struct each_neighbour {
	next_hop_neigh_fn *fn;
	void *ctx;
};

static void each_neighbour(const void *node, VISIT which, void *closure)
{
	const struct neigh *n = *(const struct neigh *const *)node;
	const struct each_neighbour *e = closure;

	if (which == postorder || which == leaf)
		e->fn(e->ctx, n->ifindex, n->family, n->addr, n->mac);
}

void next_hop_each_neighbour(struct next_hop_watch *w, next_hop_neigh_fn *fn,
			     void *ctx)
{
	struct each_neighbour e = { fn, ctx };

	twalk_r(w->neighs, each_neighbour, &e);
}

static int on_msg(const struct nlmsghdr *nlh, void *data)
{
	struct next_hop_watch *w = data;

	switch (nlh->nlmsg_type) {
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		on_neigh(w, nlh);
		break;
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		on_route(w, nlh);
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		on_link(w, nlh);
		break;
	case RTM_NEWRULE:
	case RTM_DELRULE:
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		/* Which destinations a policy rule or a nexthop object
		 * reaches is not in the message. */
		w->ev.all = true;
		break;
	}
	return MNL_CB_OK;
}

/* A table as it is now, every family of it, into the cache (no
 * callbacks): TYPE RTM_GETNEIGH or RTM_GETLINK, HDR_LEN the size of its
 * message header, whose first byte is the family. */
static int read_table(struct next_hop_watch *w, __u16 type, size_t hdr_len)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	__u8 *family;
	int err;

	nlh->nlmsg_type = type;
	family = mnl_nlmsg_put_extra_header(nlh, hdr_len);
	*family = AF_UNSPEC;
	err = rtnl_dump(nlh, on_msg, w);
	if (err)
		errno = -err;
	return err;
}

/* Groups past the first 32 (and IPv6 rules, which have no RTMGRP_ bit). */
static int join(struct mnl_socket *nl, int group)
{
	return mnl_socket_setsockopt(nl, NETLINK_ADD_MEMBERSHIP, &group,
				     sizeof(group));
}

struct next_hop_watch *next_hop_watch_open(next_hop_changed_fn *cb, void *ctx)
{
	struct next_hop_watch *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	w->ports_fd = -1;
	/* Subscribed first: a change while the table is read is not lost. */
	w->nl = mnl_socket_open(NETLINK_ROUTE);
	if (!w->nl ||
	    mnl_socket_bind(w->nl, RTMGRP_NEIGH | RTMGRP_IPV4_ROUTE |
				   RTMGRP_IPV6_ROUTE | RTMGRP_IPV4_RULE |
				   RTMGRP_LINK,
			    MNL_SOCKET_AUTOPID) < 0 ||
	    join(w->nl, RTNLGRP_IPV6_RULE) || join(w->nl, RTNLGRP_NEXTHOP) ||
	    fcntl(mnl_socket_get_fd(w->nl), F_SETFL, O_NONBLOCK) ||
	    read_table(w, RTM_GETNEIGH, sizeof(struct ndmsg)) ||
	    read_table(w, RTM_GETLINK, sizeof(struct ifinfomsg)))
		goto fail;
	/* What the reads found is the state, not a change of it. */
	memset(&w->ev, 0, sizeof(w->ev));
	w->cb = cb;
	w->ctx = ctx;
	return w;
fail:
	err = errno;
	next_hop_watch_close(w);
	errno = err;
	return NULL;
}

void next_hop_watch_ports(struct next_hop_watch *w, int ports_fd)
{
	w->ports_fd = ports_fd;
}

int next_hop_watch_fd(const struct next_hop_watch *w)
{
	return mnl_socket_get_fd(w->nl);
}

/*
 * Call the callback with what the reads found. Neighbours go at once.
 * Routes are paced: each walk of the flow table for them costs time in
 * the number of connections, and a routing daemon may change routes many
 * times a second; so the next call with routes starts at least
 * NEXT_HOP_ROUTE_PACE_MS after the last one started, or five times as long
 * as that one took, whichever is later, and the changes meanwhile are
 * kept for it (past NEXT_HOP_BATCH of them, as "all"). The daemon spends
 * at most a fifth of its time on them.
 */
static void deliver(struct next_hop_watch *w)
{
	bool routes = w->ev.n_routes || w->ev.all;
	struct next_hop_events neighs = {
		.neighs = w->pending, .n_neighs = w->ev.n_neighs,
	};
	__u64 start = clock_ns(CLOCK_MONOTONIC), took;

	if (routes && start < w->routes_due_ns) {
		if (neighs.n_neighs)
			w->cb(w->ctx, &neighs);
		w->ev.n_neighs = 0;
		return;
	}
	if (!routes && !neighs.n_neighs)
		return;
	w->ev.neighs = w->pending;
	w->ev.routes = w->routes;
	w->cb(w->ctx, &w->ev);
	memset(&w->ev, 0, sizeof(w->ev));
	if (!routes)
		return;
	took = clock_ns(CLOCK_MONOTONIC) - start;
	w->routes_due_ns = start + 5 * took;
	if (took < NEXT_HOP_ROUTE_PACE_MS * 1000000ULL / 5)
		w->routes_due_ns = start + NEXT_HOP_ROUTE_PACE_MS * 1000000ULL;
}

void next_hop_watch_read(struct next_hop_watch *w)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int n;

	for (;;) {
		n = mnl_socket_recvfrom(w->nl, buf, sizeof(buf));
		if (n > 0 && mnl_cb_run(buf, n, 0, 0, on_msg, w) >= 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		/* A change may be among the events lost (ENOBUFS), cut
		 * short (ENOSPC: a message longer than the buffer, a route
		 * of many next hops) or not understood: as if every next hop
		 * had changed. (The cache may now miss a MAC change; the
		 * next one of that neighbour is seen again.) */
		pr_debug("next hop events lost: %s\n",
			 n < 0 ? strerror(errno) : "a bad message");
		w->ev.all = true;
		if (n == 0 || (n < 0 && errno != ENOBUFS && errno != ENOSPC))
			break;
	}
	deliver(w);
}

void next_hop_watch_close(struct next_hop_watch *w)
{
	if (!w)
		return;
	if (w->nl)
		mnl_socket_close(w->nl);
	tdestroy(w->neighs, free);
	tdestroy(w->links, free);
	free(w);
}
