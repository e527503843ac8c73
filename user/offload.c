// SPDX-License-Identifier: GPL-2.0-only
/*
 * Offload mode's userspace side (see offload.h): the nftables chain that
 * tells XDP what the ruleset accepted, the [offload] settings and the
 * ports' shaping qdiscs in the maps, and the watch `xnat run` keeps on
 * conntrack and nftables so that flows leave the fast path when their
 * conntrack entry is destroyed or the rules change.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flow_end.h"
#include "iface.h"
#include "map_walk.h"
#include "pins.h"
#include "log.h"
#include "offload.h"
#include "natlog.h"
#include "neigh_keepalive.h"
#include "rtnl.h"
#include "next_hop.h"
#include "flow_ctl.skel.h"

/* The lower set bit of the mask is the original direction's. */
static uint32_t mark_orig(const struct config *cfg)
{
	return cfg->offload_mark & -cfg->offload_mark;
}

static uint32_t mark_reply(const struct config *cfg)
{
	return cfg->offload_mark & ~mark_orig(cfg);
}

/* { "wan" . "wan", "wan" . "lan0", ... }: every (in, out) pair of the
 * ports XDP may carry traffic between, for one lookup of both names. */
static void emit_port_pairs(FILE *f, const struct config *cfg)
{
	int n = config_n_ports(cfg);

	fprintf(f, "{ ");
	for (int i = 0; i < n; i++)
		for (int o = 0; o < n; o++)
			fprintf(f, "%s\"%s\" . \"%s\"", i || o ? ", " : "",
				config_port_name(cfg, i),
				config_port_name(cfg, o));
	fprintf(f, " }");
}

/*
 * The last word on every forwarded packet: at the highest priority of the
 * postrouting hook, after the forward filter of every table (xnat's and
 * the operator's) and after NAT, a packet that gets here was accepted.
 * Its connection gets the bit of its direction in the conntrack mark,
 * which is what XDP offloads on (nf_flow_table's `flow add` does the same
 * from the forward hook). Other bits of the mark are left alone.
 *
 * Every packet the kernel forwards runs this chain, a new connection's
 * first one included, so the cheap tests come first and stop it early:
 * the direction (which makes one of the two rules fail at once), then
 * whether the bit is already set (a connection the kernel keeps, e.g. on
 * a shaped port), and only then one look-up of the input and output
 * ports together (three set look-ups before: protocol, input, output,
 * about 2 % of a new connection's setup, docs/BENCHMARKS.md). The ports
 * by index (`iif . oif`), not by name: two 4-byte keys instead of two
 * 16-byte names copied and hashed for every packet (docs/BENCHMARKS.md,
 * "The ports by index"). nft resolves the names when the table is loaded;
 * a port made again gets a new index, and a new plan, which `xnat run`
 * applies, table included (refresh_plan()). Every
 * protocol gets its bit: it says only what the ruleset accepted, and XDP
 * looks up TCP and UDP connections alone.
 *
 * A direction whose route has an IPsec transform (an xfrm policy matched
 * it: `rt ipsec exists`; here, in postrouting, the packet is still the
 * inner one) is never marked: bpf_fib_lookup() knows nothing of xfrm
 * policies, and XDP would send it out in the clear. Route-based VPNs
 * (xfrm interfaces, WireGuard) need no test: their port is not one of the
 * router's, so the port pairs leave them out.
 */
void offload_emit_nft(FILE *f, const struct config *cfg)
{
	static const char *const dirs[] = { "original", "reply" };
	uint32_t bits[2] = { mark_orig(cfg), mark_reply(cfg) };

	fprintf(f, "\tchain mark_accepted {\n"
		   "\t\ttype filter hook postrouting priority 2147483647; policy accept;\n");
	for (int d = 0; d < 2; d++) {
		fprintf(f, "\t\tct direction %s ct mark and 0x%08x == 0 rt ipsec missing iif . oif ",
			dirs[d], bits[d]);
		emit_port_pairs(f, cfg);
		fprintf(f, " ct mark set ct mark or 0x%08x\n", bits[d]);
	}
	fprintf(f, "\t}\n");
}

struct qdisc_query {
	int ifindex;
	int shaped;
	char root[16];   /* the root qdisc's kind */
	char child[16];  /* the first shaping qdisc's below the root */
};

/* Qdiscs that shape or schedule: an XDP redirect bypasses them. The
 * others (noqueue, pfifo_fast, mq, fq...) keep no policy XDP would break;
 * but a root that only spreads packets over children (mq, mqprio, or
 * any classful one) may have a shaping child, so every qdisc of the port
 * is looked at, not the root alone. */
static int kind_shapes(const char *kind)
{
	static const char *const shapers[] = {
		"htb", "hfsc", "tbf", "cake", "cbq", "fq_codel", "fq_pie",
		"codel", "pie", "sfq", "red", "netem", "drr", "qfq", "ets",
		"prio",
	};

	for (size_t i = 0; i < sizeof(shapers) / sizeof(*shapers); i++)
		if (!strcmp(kind, shapers[i]))
			return 1;
	return 0;
}

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	struct qdisc_query *q = data;
	struct tcmsg *tc = mnl_nlmsg_get_payload(nlh);
	struct nlattr *attr;
	const char *kind = NULL;

	/* ingress and clsact hang off TC_H_INGRESS: not on the way out. */
	if (tc->tcm_ifindex != q->ifindex || tc->tcm_parent == TC_H_INGRESS)
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(*tc))
		if (mnl_attr_get_type(attr) == TCA_KIND &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
			kind = mnl_attr_get_str(attr);
	if (!kind)
		return MNL_CB_OK;
	if (tc->tcm_parent == TC_H_ROOT) {
		snprintf(q->root, sizeof(q->root), "%s", kind);
		q->shaped |= kind_shapes(kind);
	} else if (!q->child[0] && kind_shapes(kind)) {
		snprintf(q->child, sizeof(q->child), "%s", kind);
		q->shaped = 1;
	}
	return MNL_CB_OK;
}

int offload_port_shaped(int ifindex, char kind[16])
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct qdisc_query q = { .ifindex = ifindex };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tc;
	int ret;

	nlh->nlmsg_type = RTM_GETQDISC;
	tc = mnl_nlmsg_put_extra_header(nlh, sizeof(*tc));
	tc->tcm_family = AF_UNSPEC;
	tc->tcm_ifindex = ifindex;
	ret = rtnl_dump(nlh, qdisc_cb, &q);
	if (!ret)
		ret = q.shaped;
	/* "tbf", or "mq/tbf" for a shaping child of a root that is not. */
	if (q.child[0] && !kind_shapes(q.root)) {
		char both[sizeof(q.root) + sizeof(q.child)];

		snprintf(both, sizeof(both), "%s/%s", q.root, q.child);
		memcpy(kind, both, 15);
		kind[15] = '\0';
	} else
		snprintf(kind, 16, "%s", q.root[0] ? q.root : "none");
	return ret;
}

/* A port is shaped when its own root qdisc is, or, for a VLAN device,
 * the physical port's is: XDP transmits on the physical port directly. */
static int name_shaped(const char *name)
{
	struct iface_hw hw;
	char kind[16];
	int shaped = offload_port_shaped(if_nametoindex(name), kind);

	if (shaped > 0 || iface_query(name, &hw) || !hw.vid)
		return shaped > 0;
	return offload_port_shaped(if_nametoindex(hw.lower), kind) > 0;
}

static int sync_shaping(const struct config *cfg)
{
	int fd = pins_map_open(MAP_IFACES), err = 0;

	if (fd < 0)
		return fd;
	for (int i = -1; i < cfg->n_lan && !err; i++) {
		const struct config_iface *ci = i < 0 ? &cfg->wan : &cfg->lan[i];
		struct iface_info info;
		__u32 flags;

		if (bpf_map_lookup_elem(fd, &ci->ifindex, &info))
			continue;
		flags = info.flags & ~XNAT_IFACE_SHAPED;
		if (name_shaped(ci->name))
			flags |= XNAT_IFACE_SHAPED;
		if (flags == info.flags)
			continue;
		info.flags = flags;
		if (bpf_map_update_elem(fd, &ci->ifindex, &info, BPF_EXIST))
			err = -errno;
	}
	close(fd);
	return err;
}

int offload_sync(const struct config *cfg)
{
	struct xnat_offload_config oc = {
		.mark_orig = mark_orig(cfg),
		.mark_reply = mark_reply(cfg),
		.flags = cfg->offload_shaped ? XNAT_OFFLOAD_F_SHAPED : 0,
	};
	__u32 zero = 0;
	int fd, err;

	err = sync_shaping(cfg);
	if (err)
		return err;
	fd = pins_map_open(MAP_OFFLOAD);
	if (fd < 0)
		return fd;
	err = bpf_map_update_elem(fd, &zero, &oc, BPF_ANY) ? -errno : 0;
	close(fd);
	return err;
}

static void tuple_str(char *buf, size_t len, __u8 family,
		      const union xnat_addr *src, const union xnat_addr *dst,
		      __be16 sport, __be16 dport)
{
	int af = family == XNAT_AF_INET ? AF_INET : AF_INET6;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	inet_ntop(af, src, s, sizeof(s));
	inet_ntop(af, dst, d, sizeof(d));
	snprintf(buf, len, "src=%s dst=%s sport=%u dport=%u", s, d,
		 ntohs(sport), ntohs(dport));
}

void offload_ct_tuple(char *buf, size_t len, const struct flow_key *k,
		      const struct flow_value *v)
{
	char pkt[128], other[128];

	/* The entry's key is its direction's tuple; the other direction's
	 * is the reverse of the rewrite. */
	tuple_str(pkt, sizeof(pkt), k->family, &k->saddr, &k->daddr, k->sport,
		  k->dport);
	tuple_str(other, sizeof(other), k->family, &v->new_daddr,
		  &v->new_saddr, v->new_dport, v->new_sport);
	snprintf(buf, len, "%s %s", v->dir == FLOW_DIR_ORIG ? pkt : other,
		 v->dir == FLOW_DIR_ORIG ? other : pkt);
}

/* An old next hop: its port, as entries name it, and its MAC. */
struct old_hop {
	__u32 ifindex;
	__u16 vid;
	__u8 mac[6];
};

struct flush_walk {
	/* Only the entries that send to one of HOPS[N_HOPS], or whose
	 * destination a route of EV covers (neither: all). */
	const struct old_hop *hops;
	int n_hops;
	const struct next_hop_events *ev;
	int fd;
	struct natlog *log;
	int why;
	int n;
};

static bool sends_to_old_hop(const struct flow_value *v,
			     const struct old_hop *hops, int n)
{
	for (int i = 0; i < n; i++)
		if (v->egress_ifindex == hops[i].ifindex &&
		    v->egress_vid == hops[i].vid &&
		    !memcmp(v->eth_dst, hops[i].mac, 6))
			return true;
	return false;
}

/* Might a route of EV have changed where the entry's packets go? */
static bool routed_again(const struct flow_key *k, const struct flow_value *v,
			 const struct next_hop_events *ev)
{
	return next_hop_route_changed(ev, k->family == XNAT_AF_INET ?
					  AF_INET : AF_INET6, &v->new_daddr);
}

static int flush_one(const void *key, const void *value, void *ctx)
{
	const struct flow_value *v = value;
	struct flush_walk *w = ctx;

	if (v->nat != FLOW_NAT_CT)
		return 0;
	if ((w->n_hops || w->ev) &&
	    !sends_to_old_hop(v, w->hops, w->n_hops) &&
	    !(w->ev && routed_again(key, v, w->ev)))
		return 0;
	if (!bpf_map_delete_elem(w->fd, key)) {
		natlog_flow_returned(w->log, key, v, w->why);
		w->n++;
	}
	return 0;
}

/* Delete every offloaded entry W selects; each one goes to its log (may
 * be NULL) with its why. Returns how many, or -errno. Deleting during the walk
 * is safe: map_walk() has each batch's entries in hand already, and the
 * next batch starts from a bucket, not from a deleted key. (A walk key by
 * key had to start over after every delete, which made a flush of N
 * entries take time in N squared: 20 s for 200,000.) */
static int flush_selected(struct flush_walk *w)
{
	long err = map_walk(w->fd, sizeof(struct flow_key),
			    sizeof(struct flow_value), flush_one, w);

	return err < 0 ? (int)err : w->n;
}

static int flush_offloaded(int fd, struct natlog *log, int why)
{
	struct flush_walk w = { .fd = fd, .log = log, .why = why };

	return flush_selected(&w);
}

/* Where offloaded packets enter: the physical port and VLAN id of every
 * router port, the part of a flow key conntrack does not know. */
struct ingress {
	__u32 ifindex;
	__u16 vid;
};

struct offload_watch {
	struct nfct_handle *ct;     /* conntrack destroy events */
	struct mnl_socket *nft;     /* nftables ruleset changes */
	struct next_hop_watch *hops; /* neighbour MACs, routes */
	struct neigh_keepalive *keep; /* the next hops XDP sends to, or NULL */
	int flows_fd;
	int ifaces_fd; /* the pinned ports map: a neighbour's port */
	/* bpf/flow_ctl.bpf.c on the flow table: an entry taken off through
	 * its own timer logs and traces why, as the data path's removals
	 * do; NULL: deleted from here, logged only. */
	struct flow_ctl_bpf *ctl;
	struct natlog *log;         /* flows taken off, or NULL */
	int n_in;
	struct ingress in[1 + CONFIG_MAX_LAN];
	/* Every entry given back once, at the first wait: routes,
	 * neighbours and rules may have changed while no watch ran (before
	 * `xnat run`; or during a reload, which opens the watch anew after
	 * its own nftables transaction, whose events the old watch does not
	 * read). */
	bool give_back_all;
};

/* Have the entry's timer remove it now, telling the event log and `xnat
 * trace` why (flow_ctl.bpf.c). 0, or -1: the program could not run. */
static int expire_now(struct offload_watch *w, const struct flow_key *k,
		      __u8 why)
{
	struct {
		struct flow_key key;
		__u8 why;
	} __attribute__((packed)) in = { *k, why };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = &in,
		    .data_size_in = sizeof(in));

	if (!w->ctl ||
	    bpf_prog_test_run_opts(bpf_program__fd(w->ctl->progs.xdp_flow_expire),
				   &run))
		return -1;
	/* XDP_TX: the timer was not armed yet; it runs at its first start. */
	return run.retval == XDP_PASS || run.retval == XDP_DROP ||
	       run.retval == XDP_TX ? 0 : -1;
}

/* Take the entry of one direction of a destroyed connection off, whichever
 * port it entered by. */
static void forget_tuple(struct offload_watch *w, struct flow_key *k)
{
	struct flow_value v;

	for (int i = 0; i < w->n_in; i++) {
		k->ifindex = w->in[i].ifindex;
		k->vid = w->in[i].vid;
		if (bpf_map_lookup_elem(w->flows_fd, k, &v) ||
		    v.nat != FLOW_NAT_CT ||
		    !expire_now(w, k, FLOWLOG_WHY_CT_DESTROYED))
			continue;
		if (!bpf_map_delete_elem(w->flows_fd, k))
			natlog_flow_returned(w->log, k, &v,
					     FLOWLOG_WHY_CT_DESTROYED);
	}
}

static void ct_key(const struct nf_conntrack *ct, int reply,
		   struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->proto = nfct_get_attr_u8(ct, ATTR_L4PROTO);
	if (nfct_get_attr_u8(ct, ATTR_L3PROTO) == AF_INET) {
		k->family = XNAT_AF_INET;
		k->saddr.v4 = nfct_get_attr_u32(ct, reply ? ATTR_REPL_IPV4_SRC :
							   ATTR_IPV4_SRC);
		k->daddr.v4 = nfct_get_attr_u32(ct, reply ? ATTR_REPL_IPV4_DST :
							   ATTR_IPV4_DST);
	} else {
		k->family = XNAT_AF_INET6;
		memcpy(&k->saddr, nfct_get_attr(ct, reply ? ATTR_REPL_IPV6_SRC :
							   ATTR_IPV6_SRC), 16);
		memcpy(&k->daddr, nfct_get_attr(ct, reply ? ATTR_REPL_IPV6_DST :
							   ATTR_IPV6_DST), 16);
	}
	k->sport = nfct_get_attr_u16(ct, reply ? ATTR_REPL_PORT_SRC :
						 ATTR_PORT_SRC);
	k->dport = nfct_get_attr_u16(ct, reply ? ATTR_REPL_PORT_DST :
						 ATTR_PORT_DST);
}

static int on_destroy(enum nf_conntrack_msg_type type, struct nf_conntrack *ct,
		      void *data)
{
	struct offload_watch *w = data;
	struct flow_key k;
	__u8 proto = nfct_get_attr_u8(ct, ATTR_L4PROTO);

	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return NFCT_CB_CONTINUE;
	for (int reply = 0; reply < 2; reply++) {
		ct_key(ct, reply, &k);
		forget_tuple(w, &k);
	}
	return NFCT_CB_CONTINUE;
}

static void watch_ports(struct offload_watch *w, const struct config *cfg)
{
	for (int i = -1; i < cfg->n_lan; i++) {
		const struct config_iface *ci = i < 0 ? &cfg->wan : &cfg->lan[i];
		struct iface_hw hw;

		if (iface_query(ci->name, &hw))
			continue;
		w->in[w->n_in].ifindex = if_nametoindex(hw.lower);
		w->in[w->n_in].vid = hw.vid;
		w->n_in++;
	}
}

void offload_watch_close(struct offload_watch *w)
{
	if (!w)
		return;
	if (w->ct)
		nfct_close(w->ct);
	if (w->nft)
		mnl_socket_close(w->nft);
	neigh_keepalive_close(w->keep);
	next_hop_watch_close(w->hops);
	flow_ctl_bpf__destroy(w->ctl);
	if (w->flows_fd >= 0)
		close(w->flows_fd);
	if (w->ifaces_fd >= 0)
		close(w->ifaces_fd);
	free(w);
}

/*
 * A next hop changed: the entries built with it, or routed where a route
 * that changed covers, would go on sending to the old MAC, or along the
 * old route, for as long as their connection lives. They go back to the
 * kernel, which forwards the next packets along today's route, and XDP
 * offloads them again with its own new lookup. A route change elsewhere
 * (a routing daemon's updates) costs the others nothing.
 */
static void on_next_hop(void *ctx, const struct next_hop_events *e)
{
	struct offload_watch *w = ctx;
	struct old_hop hops[NEXT_HOP_BATCH];
	struct flush_walk f = {
		.fd = w->flows_fd, .log = w->log, .hops = hops,
		.why = e->all || e->n_routes ? FLOWLOG_WHY_ROUTE :
					       FLOWLOG_WHY_NEIGH,
	};
	int flushed;

	/* Shared or not: an entry given back for nothing costs a packet
	 * through the kernel. Neighbours of other ports: no flow sends
	 * there. */
	for (int k = 0; !e->all && k < e->n_neighs; k++) {
		__u32 ifindex = e->neighs[k].ifindex;
		struct iface_info port;

		if (bpf_map_lookup_elem(w->ifaces_fd, &ifindex, &port))
			continue;
		hops[f.n_hops].ifindex = port.parent;
		hops[f.n_hops].vid = port.vid;
		memcpy(hops[f.n_hops].mac, e->neighs[k].old_mac, 6);
		f.n_hops++;
	}
	if (!e->all && e->n_routes)
		f.ev = e;
	if (!e->all && !f.n_hops && !f.ev)
		return;
	flushed = flush_selected(&f);
	if (e->all || e->n_routes)
		pr_info("Routes changed (%s): %d offloaded flow entries back to the kernel\n",
			next_hop_routes_what(e), flushed);
	else
		pr_debug("a neighbour's MAC changed: %d offloaded flow entries back to the kernel\n",
			 flushed);
}

struct offload_watch *offload_watch_open(const struct config *cfg)
{
	struct offload_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->ifaces_fd = -1;
	w->flows_fd = pins_map_open(MAP_FLOWS);
	if (w->flows_fd < 0)
		goto fail;
	w->ifaces_fd = pins_map_open(MAP_IFACES);
	if (w->ifaces_fd < 0)
		goto fail;
	if (flow_ctl_open(w->flows_fd, &w->ctl)) {
		pr_debug("offload: no flow control program, destroyed "
			 "connections' flows are deleted from userspace\n");
		flow_ctl_bpf__destroy(w->ctl);
		w->ctl = NULL;
	}
	watch_ports(w, cfg);
	w->ct = nfct_open(CONNTRACK, NF_NETLINK_CONNTRACK_DESTROY);
	if (!w->ct)
		goto fail;
	if (nfct_callback_register(w->ct, NFCT_T_DESTROY, on_destroy, w) ||
	    fcntl(nfct_fd(w->ct), F_SETFL, O_NONBLOCK))
		goto fail;
	w->nft = mnl_socket_open(NETLINK_NETFILTER);
	if (!w->nft || mnl_socket_bind(w->nft, 1 << (NFNLGRP_NFTABLES - 1),
				       MNL_SOCKET_AUTOPID) < 0 ||
	    fcntl(mnl_socket_get_fd(w->nft), F_SETFL, O_NONBLOCK))
		goto fail;
	w->hops = next_hop_watch_open(on_next_hop, w);
	if (!w->hops)
		goto fail;
	next_hop_watch_ports(w->hops, w->ifaces_fd);
	w->keep = neigh_keepalive_open_maps(w->flows_fd, w->ifaces_fd);
	if (!w->keep)
		pr_warn("xnat: cannot keep the next hops' neighbour entries "
			"fresh (%s): a MAC changed without a gratuitous ARP is "
			"not learnt\n", strerror(errno));
	w->give_back_all = true;
	return w;
fail:
	pr_warn("xnat: cannot watch conntrack, nftables, neighbour and route events (%s): "
		"offloaded flows leave the fast path only when they end, "
		"expire or find their conntrack entry gone\n", strerror(errno));
	offload_watch_close(w);
	return NULL;
}

/* Drain the nftables socket; nonzero if anything was there. */
static int nft_changed(struct offload_watch *w)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int any = 0;

	while (mnl_socket_recvfrom(w->nft, buf, sizeof(buf)) > 0 ||
	       errno == ENOBUFS)
		any = 1;
	return any;
}

void offload_watch_log(struct offload_watch *w, struct natlog *log)
{
	if (w)
		w->log = log;
}

void offload_watch_wait(struct offload_watch *w, int timeout_ms)
{
	struct pollfd pfd[3];
	int n;

	if (!w) {
		usleep(timeout_ms * 1000);
		return;
	}
	if (w->give_back_all) {
		/* As for a change of every route: the kernel forwards each
		 * connection's next packets along today's route, and XDP
		 * offloads it again with its own look-up. */
		w->give_back_all = false;
		n = flush_offloaded(w->flows_fd, w->log,
				    FLOWLOG_WHY_WATCH_START);
		if (n < 0)
			pr_warn("xnat: the flow table could not be read as the "
				"watch started: %s\n", strerror(-n));
		else
			pr_info("Routes, neighbours or rules may have changed "
				"while no watch ran: %d offloaded flow entries "
				"back to the kernel, as the watch started\n", n);
	}
	pfd[0] = (struct pollfd){ .fd = nfct_fd(w->ct), .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = mnl_socket_get_fd(w->nft),
				  .events = POLLIN };
	pfd[2] = (struct pollfd){ .fd = next_hop_watch_fd(w->hops),
				  .events = POLLIN };
	if (poll(pfd, 3, timeout_ms) < 0)
		return; /* a signal, for the caller */
	if (pfd[0].revents) {
		/* Non-blocking: returns once the socket is drained. Lost
		 * events (ENOBUFS) could leave a dead connection on the fast
		 * path: start over from a clean table. */
		if (nfct_catch(w->ct) < 0 && errno == ENOBUFS) {
			n = flush_offloaded(w->flows_fd, w->log,
					    FLOWLOG_WHY_CT_EVENTS_LOST);
			pr_info("xnat: conntrack events lost; %d offloaded flow entries back to the kernel\n",
				n);
		}
	}
	if (pfd[1].revents && nft_changed(w)) {
		n = flush_offloaded(w->flows_fd, w->log,
				    FLOWLOG_WHY_RULESET);
		pr_debug("nftables ruleset changed: %d offloaded flow entries back to the kernel\n",
			 n);
	}
	/* Also without events: paced route changes may be due. */
	next_hop_watch_read(w->hops);
	neigh_keepalive_tick(w->keep, w->hops);
}
