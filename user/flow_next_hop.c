// SPDX-License-Identifier: GPL-2.0-only
/* xdp mode's flows follow a neighbour's new MAC; see flow_next_hop.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flow_end.h"
#include "flow_next_hop.h"
#include "log.h"
#include "map_walk.h"
#include "pins.h"
#include "xnat_common.h"
#include "flow_ctl.skel.h"

struct flow_next_hop {
	int flows_fd;
	int ifaces_fd;
	struct flow_ctl_bpf *ctl;
};

/* One change, walked over the flow table. */
struct next_hop_walk {
	const struct next_hop_change *c;
	__u32 parent; /* the port's physical port and VLAN id, as entries */
	__u16 vid;    /* name their egress */
	int prog_fd;
	int done;
};

/* Does the entry send to the neighbour that changed? When another
 * neighbour of the port shares the old MAC, only an entry whose
 * destination is the neighbour itself is surely its: one routed through
 * it cannot be told from one routed through the other, and keeps the old
 * MAC (said in the log). */
static bool sends_to(const struct flow_key *k, const struct flow_value *v,
		     const struct next_hop_walk *w)
{
	const struct next_hop_change *c = w->c;

	if (v->nat == FLOW_NAT_CT || v->egress_ifindex != w->parent ||
	    v->egress_vid != w->vid || memcmp(v->eth_dst, c->old_mac, 6))
		return false;
	if (!c->shared)
		return true;
	if (c->family == AF_INET)
		return k->family == XNAT_AF_INET &&
		       !memcmp(&v->new_daddr.v4, c->addr, 4);
	return k->family == XNAT_AF_INET6 &&
	       !memcmp(&v->new_daddr, c->addr, 16);
}

static int next_hop_one(const void *key, const void *value, void *ctx)
{
	struct next_hop_walk *w = ctx;
	struct flow_next_hop_arg arg;
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = &arg,
		    .data_size_in = sizeof(arg));

	if (!sends_to(key, value, w))
		return 0;
	memcpy(&arg.key, key, sizeof(arg.key));
	memcpy(arg.old_mac, w->c->old_mac, 6);
	memcpy(arg.new_mac, w->c->new_mac, 6);
	/* XDP_DROP: gone, or mended meanwhile: nothing to count. */
	if (!bpf_prog_test_run_opts(w->prog_fd, &run) && run.retval == XDP_PASS)
		w->done++;
	return 0;
}

void flow_next_hop_changed(void *ctx, const struct next_hop_change *c)
{
	struct flow_next_hop *f = ctx;
	struct next_hop_walk w = { .c = c };
	struct iface_info port;
	__u32 ifindex;
	long err;

	if (!c) {
		/* What XDP routed stays routed so until it ends (README). */
		pr_debug("a route changed: xdp mode's flows keep theirs\n");
		return;
	}
	ifindex = c->ifindex;
	if (bpf_map_lookup_elem(f->ifaces_fd, &ifindex, &port))
		return; /* not a router port: no flow sends there */
	w.parent = port.parent;
	w.vid = port.vid;
	w.prog_fd = bpf_program__fd(f->ctl->progs.xdp_flow_next_hop);
	err = map_walk(f->flows_fd, sizeof(struct flow_key),
		       sizeof(struct flow_value), next_hop_one, &w);
	if (err < 0)
		pr_warn("xnat: a neighbour's MAC changed, but the flow table "
			"could not be read: %s\n", strerror((int)-err));
	pr_info("A neighbour's MAC changed: %d flow entries sent to it now "
		"send to the new one%s\n", w.done,
		c->shared ? " (another neighbour had the old MAC: only those "
			    "addressed to it directly)" : "");
}

struct flow_next_hop *flow_next_hop_open(void)
{
	struct flow_next_hop *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return NULL;
	f->ifaces_fd = -1;
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
	flow_next_hop_close(f);
	errno = err;
	return NULL;
}

void flow_next_hop_close(struct flow_next_hop *f)
{
	if (!f)
		return;
	flow_ctl_bpf__destroy(f->ctl);
	if (f->ifaces_fd >= 0)
		close(f->ifaces_fd);
	if (f->flows_fd >= 0)
		close(f->flows_fd);
	free(f);
}
