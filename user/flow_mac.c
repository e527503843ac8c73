// SPDX-License-Identifier: GPL-2.0-only
/* Flow entries follow a MAC that changed; see flow_mac.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flow_end.h"
#include "flow_mac.h"
#include "log.h"
#include "map_walk.h"
#include "pins.h"
#include "xnat_common.h"
#include "flow_ctl.skel.h"

/* A MAC that changed, on a port as entries name it (physical port and
 * VLAN id); for a neighbour's, the change. */
struct mac_change {
	__u32 parent;
	__u16 vid;
	const __u8 *old_mac, *new_mac;
	const struct next_hop_change *c;
};

/* Changes walked over the flow table at once: a port's own MAC (one), or
 * neighbours' (C set in each). */
struct mac_walk {
	struct mac_change ch[NEXT_HOP_BATCH];
	int n;
	int prog_fd;
	long done;
};

static void set_mac(struct mac_walk *w, const struct flow_key *k,
		    const struct mac_change *ch, enum flow_mac which)
{
	struct flow_mac_arg arg = { .key = *k, .which = which };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = &arg,
		    .data_size_in = sizeof(arg));

	memcpy(arg.old_mac, ch->old_mac, 6);
	memcpy(arg.new_mac, ch->new_mac, 6);
	/* XDP_DROP: gone, or built again meanwhile: nothing to count. */
	if (!bpf_prog_test_run_opts(w->prog_fd, &run) && run.retval == XDP_PASS)
		w->done++;
}

/* Does the entry send to the neighbour that changed? When another
 * neighbour of the port shares the old MAC, only an entry whose
 * destination is the neighbour itself is surely its: one routed through
 * it cannot be told from one routed through the other, and keeps the old
 * MAC (said in the log). */
static bool sends_to(const struct flow_key *k, const struct flow_value *v,
		     const struct next_hop_change *c)
{
	if (v->nat == FLOW_NAT_CT || memcmp(v->eth_dst, c->old_mac, 6))
		return false;
	if (!c->shared)
		return true;
	if (c->family == AF_INET)
		return k->family == XNAT_AF_INET &&
		       !memcmp(&v->new_daddr.v4, c->addr, 4);
	return k->family == XNAT_AF_INET6 &&
	       !memcmp(&v->new_daddr, c->addr, 16);
}

static int mac_one(const void *key, const void *value, void *ctx)
{
	const struct flow_key *k = key;
	const struct flow_value *v = value;
	struct mac_walk *w = ctx;

	for (int i = 0; i < w->n; i++) {
		const struct mac_change *ch = &w->ch[i];
		bool egress = v->egress_ifindex == ch->parent &&
			      v->egress_vid == ch->vid;

		if (ch->c) {
			if (egress && sends_to(k, v, ch->c)) {
				set_mac(w, k, ch, FLOW_MAC_NEXT_HOP);
				break;
			}
			continue;
		}
		if (egress && !memcmp(v->eth_src, ch->old_mac, 6))
			set_mac(w, k, ch, FLOW_MAC_EGRESS);
		if (k->ifindex == ch->parent && k->vid == ch->vid &&
		    !memcmp(v->ingress_mac, ch->old_mac, 6))
			set_mac(w, k, ch, FLOW_MAC_INGRESS);
	}
	return 0;
}

static long mac_walk_run(int flows_fd, struct flow_ctl_bpf *ctl,
			 struct mac_walk *w)
{
	long err;

	w->prog_fd = bpf_program__fd(ctl->progs.xdp_flow_set_mac);
	err = map_walk(flows_fd, sizeof(struct flow_key),
		       sizeof(struct flow_value), mac_one, w);
	return err < 0 ? err : w->done;
}

long flow_mac_port_changed(__u32 parent, __u16 vid, const __u8 *old_mac,
			   const __u8 *new_mac)
{
	struct mac_walk w = { .n = 1, .ch[0] = { .parent = parent, .vid = vid,
			      .old_mac = old_mac, .new_mac = new_mac } };
	struct flow_ctl_bpf *ctl = NULL;
	int fd = pins_map_open(MAP_FLOWS);
	long ret;

	if (fd < 0)
		return fd;
	ret = flow_ctl_open(fd, &ctl);
	if (!ret)
		ret = mac_walk_run(fd, ctl, &w);
	flow_ctl_bpf__destroy(ctl);
	close(fd);
	return ret;
}

long flow_mac_neighbours(int flows_fd, int ifaces_fd, struct flow_ctl_bpf *ctl,
			 const struct next_hop_events *e, bool *shared)
{
	struct mac_walk w = { .n = 0 };
	struct iface_info port;

	*shared = false;
	for (int k = 0; k < e->n_neighs; k++) {
		const struct next_hop_change *c = &e->neighs[k];
		__u32 ifindex = c->ifindex;

		if (bpf_map_lookup_elem(ifaces_fd, &ifindex, &port))
			continue; /* not a router port: no flow sends there */
		w.ch[w.n].parent = port.parent;
		w.ch[w.n].vid = port.vid;
		w.ch[w.n].old_mac = c->old_mac;
		w.ch[w.n].new_mac = c->new_mac;
		w.ch[w.n].c = c;
		*shared |= c->shared;
		w.n++;
	}
	return w.n ? mac_walk_run(flows_fd, ctl, &w) : 0;
}
