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

/* One change, walked over the flow table. */
struct mac_walk {
	/* The port, as entries name it: physical port and VLAN id. */
	__u32 parent;
	__u16 vid;
	const __u8 *old_mac, *new_mac;
	/* A neighbour's change (NULL: the port's own MAC changed). */
	const struct next_hop_change *c;
	int prog_fd;
	long done;
};

static void set_mac(struct mac_walk *w, const struct flow_key *k,
		    enum flow_mac which)
{
	struct flow_mac_arg arg = { .key = *k, .which = which };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = &arg,
		    .data_size_in = sizeof(arg));

	memcpy(arg.old_mac, w->old_mac, 6);
	memcpy(arg.new_mac, w->new_mac, 6);
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
	bool egress = v->egress_ifindex == w->parent && v->egress_vid == w->vid;

	if (w->c) {
		if (egress && sends_to(k, v, w->c))
			set_mac(w, k, FLOW_MAC_NEXT_HOP);
		return 0;
	}
	if (egress && !memcmp(v->eth_src, w->old_mac, 6))
		set_mac(w, k, FLOW_MAC_EGRESS);
	if (k->ifindex == w->parent && k->vid == w->vid &&
	    !memcmp(v->ingress_mac, w->old_mac, 6))
		set_mac(w, k, FLOW_MAC_INGRESS);
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
	struct mac_walk w = { .parent = parent, .vid = vid,
			      .old_mac = old_mac, .new_mac = new_mac };
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

struct flow_mac_watch {
	int flows_fd;
	int ifaces_fd;
	struct flow_ctl_bpf *ctl;
};

void flow_mac_next_hop_changed(void *ctx, const struct next_hop_change *c)
{
	struct flow_mac_watch *f = ctx;
	struct mac_walk w = { .c = c };
	struct iface_info port;
	__u32 ifindex;
	long n;

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
	w.old_mac = c->old_mac;
	w.new_mac = c->new_mac;
	n = mac_walk_run(f->flows_fd, f->ctl, &w);
	if (n < 0)
		pr_warn("xnat: a neighbour's MAC changed, but the flow table "
			"could not be read: %s\n", strerror((int)-n));
	else
		pr_info("A neighbour's MAC changed: %ld flow entries sent to "
			"it now send to the new one%s\n", n,
			c->shared ? " (another neighbour had the old MAC: only "
				    "those addressed to it directly)" : "");
}

struct flow_mac_watch *flow_mac_open(void)
{
	struct flow_mac_watch *f = calloc(1, sizeof(*f));
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
	flow_mac_close(f);
	errno = err;
	return NULL;
}

void flow_mac_close(struct flow_mac_watch *f)
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
