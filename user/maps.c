// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writing a plan into the data path's maps, and removing flow state a
 * change made wrong (see maps.h). Used on first start and on every reload,
 * so it updates in place and removes only stale keys: a port forward or a
 * port that stays in the config is never missing, not even for a moment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "fsutil.h"
#include "grow.h"
#include "iface.h"
#include "log.h"
#include "flow_end.h"
#include "flow_mac.h"
#include "maps.h"
#include "offload.h"
#include "pins.h"

struct ports_gone;
static void follow_port_mac(const __u8 *old_mac, const struct iface_info *now);

/* Delete every key of FD for which KEEP says no. */
static void delete_stale(int fd, size_t key_size,
			 int (*keep)(const void *key, const struct plan *plan),
			 const struct plan *plan)
{
	unsigned char key[64], next[64];
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, key_size);
		prev = key;
		if (!keep(key, plan)) {
			bpf_map_delete_elem(fd, key);
			/* Restart: the deleted key can't anchor the walk. */
			prev = NULL;
		}
	}
}

static int iface_keep(const void *key, const struct plan *plan)
{
	for (int i = 0; i < plan->n_ifaces; i++)
		if (plan->ifaces[i].ifindex == *(const __u32 *)key)
			return 1;
	return 0;
}

static int tx_keep(const void *key, const struct plan *plan)
{
	for (int i = 0; i < plan->n_tx; i++)
		if (plan->tx_ports[i] == *(const __u32 *)key)
			return 1;
	return 0;
}

static int vlan_keep(const void *key, const struct plan *plan)
{
	for (int i = 0; i < plan->n_vlans; i++)
		if (!memcmp(&plan->vlans[i].key, key, sizeof(struct vlan_key)))
			return 1;
	return 0;
}

static int fwd_keep(const void *key, const struct plan *plan)
{
	for (int i = 0; i < plan->n_fwd; i++)
		if (!memcmp(&plan->fwd[i].key, key, sizeof(struct fwd_key)))
			return 1;
	return 0;
}

/* Ports the maps drop, as flow entries name them: by their physical port
 * and VLAN id (struct iface_info's parent and vid); and ports whose MAC is
 * another now (old_mac, info.mac), whose flow entries must follow. */
struct ports_gone {
	struct maps_gone ports;
	int n_mac;
	struct {
		__u8 old_mac[6];
		struct iface_info info;
	} mac[XNAT_MAX_IFACES];
};

/* Before the ports are written: the ports of PLAN that FD (the pinned
 * xnat_ifaces) has with another MAC, into G. */
static void ports_new_mac(int fd, const struct plan *plan,
			  struct ports_gone *g)
{
	struct iface_info old;

	g->n_mac = 0;
	for (int i = 0; i < plan->n_ifaces; i++) {
		const struct iface_info *now = &plan->ifaces[i].info;

		if (bpf_map_lookup_elem(fd, &plan->ifaces[i].ifindex, &old) ||
		    old.parent != now->parent || old.vid != now->vid ||
		    !memcmp(old.mac, now->mac, 6))
			continue;
		memcpy(g->mac[g->n_mac].old_mac, old.mac, 6);
		g->mac[g->n_mac].info = *now;
		g->n_mac++;
	}
}

/*
 * The ports in FD (the pinned xnat_ifaces, before it is rewritten) that
 * PLAN does not have, into G: ports a reload drops, and ports deleted and
 * made again under their name (a new ifindex; the plan has the new one).
 * Their flows would redirect to an interface that is no more.
 */
static void ports_gone(int fd, const struct plan *plan, struct ports_gone *g)
{
	__u32 key, next, *prev = NULL;
	struct iface_info info;

	struct maps_gone *p = &g->ports;

	p->n = 0;
	while (p->n < XNAT_MAX_IFACES &&
	       !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (iface_keep(&key, plan) ||
		    bpf_map_lookup_elem(fd, &key, &info))
			continue;
		p->p[p->n].parent = info.parent;
		p->p[p->n].vid = info.vid;
		p->n++;
	}
}

static int write_ports(const struct plan *plan, const int fds[3],
		       struct ports_gone *gone)
{
	int i;

	ports_new_mac(fds[0], plan, gone);
	for (i = 0; i < plan->n_ifaces; i++)
		if (bpf_map_update_elem(fds[0], &plan->ifaces[i].ifindex,
					&plan->ifaces[i].info, BPF_ANY))
			return -errno;
	for (i = 0; i < plan->n_tx; i++)
		if (bpf_map_update_elem(fds[1], &plan->tx_ports[i],
					&plan->tx_ports[i], BPF_ANY))
			return -errno;
	for (i = 0; i < plan->n_vlans; i++)
		if (bpf_map_update_elem(fds[2], &plan->vlans[i].key,
					&plan->vlans[i].ifindex, BPF_ANY))
			return -errno;
	ports_gone(fds[0], plan, gone);
	delete_stale(fds[0], sizeof(__u32), iface_keep, plan);
	delete_stale(fds[1], sizeof(__u32), tx_keep, plan);
	delete_stale(fds[2], sizeof(struct vlan_key), vlan_keep, plan);
	return 0;
}

static int write_forwards(const struct plan *plan, int fd)
{
	for (int i = 0; i < plan->n_fwd; i++)
		if (bpf_map_update_elem(fd, &plan->fwd[i].key,
					&plan->fwd[i].value, BPF_ANY))
			return -errno;
	delete_stale(fd, sizeof(struct fwd_key), fwd_keep, plan);
	return 0;
}

static int pool_rev_keep(const void *key, const struct plan *plan)
{
	for (int i = 0; i < plan->cfg.n_pool; i++)
		if (plan->cfg.pool[i] == *(const __be32 *)key)
			return 1;
	return 0;
}

/* The external addresses by index, and back. The data path reads them
 * only once the config's pool_size says so, so stale indices beyond the
 * new size are harmless; stale addresses in the reverse map are not. */
static int write_pool(const struct plan *plan)
{
	int fd = pins_map_open(MAP_POOL), rev = pins_map_open(MAP_POOL_REV);
	const struct config *cfg = &plan->cfg;
	int err = 0;

	if (fd < 0 || rev < 0)
		err = fd < 0 ? fd : rev;
	for (__u32 i = 0; !err && i < (__u32)cfg->n_pool; i++)
		if (bpf_map_update_elem(fd, &i, &cfg->pool[i], BPF_ANY) ||
		    bpf_map_update_elem(rev, &cfg->pool[i], &i, BPF_ANY))
			err = -errno;
	if (!err)
		delete_stale(rev, sizeof(__be32), pool_rev_keep, plan);
	if (fd >= 0)
		close(fd);
	if (rev >= 0)
		close(rev);
	return err;
}

static int write_config(const struct plan *plan, int fd)
{
	__u32 zero = 0;

	return bpf_map_update_elem(fd, &zero, &plan->config, BPF_ANY) ?
		       -errno : 0;
}

int maps_write_keep(const struct plan *plan, struct maps_gone *dropped)
{
	static const char *const names[] = { MAP_IFACES, MAP_TX_PORTS,
					     MAP_VLANS, MAP_FORWARDS,
					     MAP_CONFIG };
	struct ports_gone gone = { .ports.n = 0, .n_mac = 0 };
	int fds[5], i, err = 0;

	for (i = 0; i < 5; i++) {
		fds[i] = pins_map_open(names[i]);
		if (fds[i] < 0 && !err)
			err = fds[i];
	}
	/* Ports and forwards before the config: the config's NAT address is
	 * what turns NAT on, and by then everything it needs is there. */
	if (!err)
		err = write_ports(plan, fds, &gone);
	if (!err)
		err = maps_sync_ifaddrs(&plan->cfg);
	if (!err)
		err = write_forwards(plan, fds[3]);
	/* Offload's settings before the flag that turns offload on. */
	if (!err && plan->cfg.mode == MODE_OFFLOAD)
		err = offload_sync(&plan->cfg);
	if (!err)
		err = write_pool(plan);
	if (!err)
		err = write_config(plan, fds[4]);
	for (i = 0; i < 5; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (err)
		pr_warn("Failed to write the config into the maps in %s: %s\n",
			pins_dir(), strerror(-err));
	*dropped = gone.ports;
	/* A port's new MAC is a fact whatever becomes of this write: the
	 * entries follow it now, for the old config as for the new. */
	for (i = 0; i < gone.n_mac; i++)
		follow_port_mac(gone.mac[i].old_mac, &gone.mac[i].info);
	return err;
}

int maps_write(const struct plan *plan)
{
	struct maps_gone dropped;
	int err = maps_write_keep(plan, &dropped);

	maps_end_dropped(&dropped);
	return err;
}

/* What a flush selects: the connections through a port, or NATed to an
 * address. */
struct flush_arg {
	bool (*entry)(const struct flow_key *k, const struct flow_value *v,
		      const void *arg);
	const void *arg;
};

static bool flush_match(const struct conn *c, const void *p)
{
	const struct flush_arg *a = p;

	return (c->has_orig && a->entry(&c->okey, &c->ov, a->arg)) ||
	       (c->has_reply && a->entry(&c->rkey, &c->rv, a->arg));
}

/*
 * End every connection an entry of which ENTRY(key, value, ARG) selects,
 * as its timeout would (flow_end.h): the mapping it holds keeps its hold
 * time and its host's charge is released, as on a timeout. Returns how
 * many connections went, or -errno.
 */
static long flush_flows(bool (*entry)(const struct flow_key *k,
				      const struct flow_value *v,
				      const void *arg),
			const void *arg)
{
	const struct flush_arg a = { entry, arg };
	int fd = pins_map_open(MAP_FLOWS);
	struct conn *conns = NULL;
	struct flow_end e = {};
	size_t n = 0, done;
	long left;

	if (fd < 0)
		return fd;
	left = conns_read(fd, &conns, &n);
	if (!left)
		left = flow_end_select(&e, conns, n, flush_match, &a);
	free(conns);
	if (!left)
		left = flow_end_run(fd, &e, 2000, &done);
	close(fd);
	if (left > 0)
		pr_warn("%ld of %zu connections were marked to end, but are "
			"still there: the flow sweeper ends them at its next "
			"pass\n", left, e.ncon);
	flow_end_free(&e);
	return left < 0 ? left : (long)e.ncon;
}

static bool uses_gone_port(const struct flow_key *k,
			   const struct flow_value *v, const void *arg)
{
	const struct maps_gone *g = arg;

	for (int i = 0; i < g->n; i++)
		if ((k->ifindex == g->p[i].parent && k->vid == g->p[i].vid) ||
		    (v->egress_ifindex == g->p[i].parent &&
		     v->egress_vid == g->p[i].vid))
			return true;
	return false;
}

static bool uses_addr(const struct flow_key *k, const struct flow_value *v,
		      const void *arg)
{
	__u32 addr = *(const __u32 *)arg;

	return k->family == XNAT_AF_INET && v->nat != FLOW_NAT_NONE &&
	       (k->saddr.v4 == addr || k->daddr.v4 == addr ||
		v->new_saddr.v4 == addr || v->new_daddr.v4 == addr);
}

/* End the connections that enter or leave by a port in G, as their
 * timeout would (flush_flows): the kernel takes them over instead of XDP
 * sending them to a port it no longer serves. */
void maps_end_dropped(const struct maps_gone *g)
{
	long n;

	if (!g->n)
		return;
	n = flush_flows(uses_gone_port, g);

	if (n < 0)
		pr_warn("Failed to end the connections of the ports dropped: "
			"%s\n", strerror(-n));
	else if (n)
		pr_info("Ended %ld connections of the ports dropped or made "
			"again: the kernel takes their traffic\n", n);
}

/* A port's MAC changed (an address set on it, a bond's active slave): the
 * entries entering and leaving by it take the new one, in place, so the
 * replies now sent to it still hit (flow_mac.h). */
static void follow_port_mac(const __u8 *old_mac, const struct iface_info *now)
{
	long n = flow_mac_port_changed(now->parent, now->vid, old_mac, now->mac);

	if (n < 0)
		pr_warn("A port's MAC changed, but its flow entries could not "
			"follow: %s\n", strerror((int)-n));
	else if (n)
		pr_info("A port's MAC changed: %ld flow entry MACs follow\n", n);
}

int maps_flush_nat_addr(__u32 old)
{
	char a[INET_ADDRSTRLEN];
	long n = flush_flows(uses_addr, &old);

	inet_ntop(AF_INET, &old, a, sizeof(a));
	if (n < 0)
		pr_warn("Failed to end the connections NATed to %s: %s\n", a,
			strerror(-n));
	else
		pr_info("Ended %ld connections NATed to the old address %s\n",
			n, a);
	return n < 0 ? n : 0;
}

int maps_put_port(const int fds[3], const char *name, __u32 ifindex,
		  enum xnat_role role)
{
	struct iface_info info = { .role = role };
	struct iface_hw hw;
	__u32 lower;
	int err = iface_query(name, &hw);

	if (err)
		return err;
	lower = if_nametoindex(hw.lower);
	if (!lower)
		return -errno;
	memcpy(info.mac, hw.mac, sizeof(info.mac));
	info.vid = hw.vid;
	info.parent = lower;
	if (bpf_map_update_elem(fds[0], &ifindex, &info, BPF_ANY) ||
	    bpf_map_update_elem(fds[1], &lower, &lower, BPF_ANY))
		return -errno;
	if (hw.vid) {
		struct vlan_key vk = { .ifindex = lower, .vid = hw.vid };

		if (bpf_map_update_elem(fds[2], &vk, &ifindex, BPF_ANY))
			return -errno;
	}
	return 0;
}
