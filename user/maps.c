// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writing the config into the data path's maps. Used on first start and on
 * every reload, so it updates in place and removes only stale keys: a port
 * forward or a port that stays in the config is never missing, not even for
 * a moment.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include "log.h"
#include "iface.h"
#include "maps.h"
#include "pins.h"
#include "offload.h"

/* Delete every key of FD for which KEEP says no. */
static void delete_stale(int fd, size_t key_size,
			 int (*keep)(const void *key, const struct config *cfg),
			 const struct config *cfg)
{
	unsigned char key[64], next[64];
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, key_size);
		prev = key;
		if (!keep(key, cfg)) {
			bpf_map_delete_elem(fd, key);
			/* Restart: the deleted key can't anchor the walk. */
			prev = NULL;
		}
	}
}

/* Is KEY (an ifindex) one of CFG's ports? */
static int port_keep(const void *key, const struct config *cfg)
{
	__u32 ifindex = *(const __u32 *)key;

	for (int i = -1; i < cfg->n_lan; i++)
		if (ifindex == (i < 0 ? cfg->wan.ifindex : cfg->lan[i].ifindex))
			return 1;
	return 0;
}

/* Is KEY (an ifindex) a physical port XDP runs on for CFG? */
static int lower_keep(const void *key, const struct config *cfg)
{
	char ports[1 + CONFIG_MAX_LAN][IF_NAMESIZE];
	int n = iface_physical_ports(cfg, ports);

	for (int i = 0; i < n; i++)
		if (*(const __u32 *)key == if_nametoindex(ports[i]))
			return 1;
	return 0;
}

static int vlan_keep(const void *key, const struct config *cfg)
{
	const struct vlan_key *k = key;
	struct iface_hw hw;

	for (int i = -1; i < cfg->n_lan; i++) {
		const struct config_iface *ci = i < 0 ? &cfg->wan : &cfg->lan[i];

		if (!iface_query(ci->name, &hw) && hw.vid == k->vid &&
		    if_nametoindex(hw.lower) == k->ifindex)
			return 1;
	}
	return 0;
}

static int fwd_keep(const void *key, const struct config *cfg)
{
	const struct fwd_key *k = key;

	for (int i = 0; i < cfg->n_fwd; i++)
		if (k->proto == cfg->fwd[i].proto &&
		    k->port == htons(cfg->fwd[i].port))
			return 1;
	return 0;
}

/*
 * One port into the maps: its own entry (what the kernel routes with), and
 * for a VLAN device also the physical port under it, which is where XDP
 * runs and frames are sent, and the (port, VLAN id) -> device entry.
 */
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

static int sync_ports(const struct config *cfg)
{
	int fds[3] = { pins_map_open(MAP_IFACES), pins_map_open(MAP_TX_PORTS),
		       pins_map_open(MAP_VLANS) };
	int i, err = 0;

	for (i = 0; i < 3 && !err; i++)
		if (fds[i] < 0)
			err = fds[i];
	if (!err)
		err = maps_put_port(fds, cfg->wan.name, cfg->wan.ifindex,
				    XNAT_ROLE_WAN);
	for (i = 0; i < cfg->n_lan && !err; i++)
		err = maps_put_port(fds, cfg->lan[i].name,
				    cfg->lan[i].ifindex, XNAT_ROLE_LAN);
	if (!err) {
		delete_stale(fds[0], sizeof(__u32), port_keep, cfg);
		delete_stale(fds[1], sizeof(__u32), lower_keep, cfg);
		delete_stale(fds[2], sizeof(struct vlan_key), vlan_keep, cfg);
	}
	for (i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return err;
}

static int sync_forwards(const struct config *cfg)
{
	int fd = pins_map_open(MAP_FORWARDS);
	int i, err = 0;

	if (fd < 0)
		return fd;
	for (i = 0; i < cfg->n_fwd && !err; i++) {
		struct fwd_key k = { .port = htons(cfg->fwd[i].port),
				     .proto = cfg->fwd[i].proto };
		struct fwd_value v = { .addr = cfg->fwd[i].addr,
				       .port = htons(cfg->fwd[i].to_port) };

		if (bpf_map_update_elem(fd, &k, &v, BPF_ANY))
			err = -errno;
	}
	if (!err)
		delete_stale(fd, sizeof(struct fwd_key), fwd_keep, cfg);
	close(fd);
	return err;
}

static int pool_rev_keep(const void *key, const struct config *cfg)
{
	for (int i = 0; i < cfg->n_pool; i++)
		if (cfg->pool[i] == *(const __be32 *)key)
			return 1;
	return 0;
}

/* The external addresses by index, and back. The data path reads them
 * only once the config's pool_size says so, so stale indices beyond the
 * new size are harmless; addresses no longer in the pool are removed. */
static int sync_pool(const struct config *cfg)
{
	int fd = pins_map_open(MAP_POOL), rev = pins_map_open(MAP_POOL_REV);
	int err = 0;

	if (fd < 0 || rev < 0)
		err = fd < 0 ? fd : rev;
	for (__u32 i = 0; !err && i < (__u32)cfg->n_pool; i++)
		if (bpf_map_update_elem(fd, &i, &cfg->pool[i], BPF_ANY) ||
		    bpf_map_update_elem(rev, &cfg->pool[i], &i, BPF_ANY))
			err = -errno;
	if (!err)
		delete_stale(rev, sizeof(__be32), pool_rev_keep, cfg);
	if (fd >= 0)
		close(fd);
	if (rev >= 0)
		close(rev);
	return err;
}

static int sync_config(const struct config *cfg)
{
	struct xnat_config c = {};
	__u32 zero = 0;
	int fd = pins_map_open(MAP_CONFIG), err = 0;

	if (fd < 0)
		return fd;
	/* Every flag comes from the config, so a reload applies it. */
	if (!cfg->fastpath)
		c.flags |= XNAT_F_FASTPATH_OFF;
	if (cfg->filter_eif)
		c.flags |= XNAT_F_FILTER_EIF;
	if (cfg->inbound_refresh)
		c.flags |= XNAT_F_INBOUND_REFRESH;
	if (cfg->mode == MODE_OFFLOAD)
		c.flags |= XNAT_F_OFFLOAD;
	c.nat_addr = cfg->nat_addr;
	c.port_min = cfg->port_min;
	c.port_max = cfg->port_max;
	c.wan_ifindex = cfg->wan.ifindex;
	c.timeout_tcp_est = cfg->timeout_tcp_est;
	c.timeout_tcp_trans = cfg->timeout_tcp_trans;
	c.timeout_udp = cfg->timeout_udp;
	c.timeout_icmp = cfg->timeout_icmp;
	c.timeout_udp_dns = cfg->timeout_udp_dns;
	c.ports_per_host = cfg->ports_per_host;
	c.pool_size = cfg->n_pool > 1 ? cfg->n_pool : 0;
	if (bpf_map_update_elem(fd, &zero, &c, BPF_ANY))
		err = -errno;
	close(fd);
	return err;
}

int maps_sync(const struct config *cfg)
{
	int err;

	/* Ports and forwards before the config: the config's NAT address is
	 * what turns NAT on, and by then everything it needs is there. */
	err = sync_ports(cfg);
	if (!err)
		err = maps_sync_ifaddrs(cfg);
	if (!err)
		err = sync_forwards(cfg);
	/* Offload's settings before the flag that turns offload on. */
	if (!err && cfg->mode == MODE_OFFLOAD)
		err = offload_sync(cfg);
	if (!err)
		err = sync_pool(cfg);
	if (!err)
		err = sync_config(cfg);
	if (err)
		pr_warn("Failed to write config into the maps: %s\n",
			strerror(-err));
	return err;
}
