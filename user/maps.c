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
#include "loader.h"

/* The port's MTU and MAC, which the data path checks frames against. */
static int iface_read(const char *name, struct iface_info *info)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFMTU, &ifr))
		err = -errno;
	info->mtu = ifr.ifr_mtu;
	if (!err && ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	memcpy(info->mac, ifr.ifr_hwaddr.sa_data, sizeof(info->mac));
	close(fd);
	return err;
}

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

static int port_keep(const void *key, const struct config *cfg)
{
	__u32 ifindex = *(const __u32 *)key;

	if (ifindex == cfg->wan.ifindex)
		return 1;
	for (int i = 0; i < cfg->n_lan; i++)
		if (ifindex == cfg->lan[i].ifindex)
			return 1;
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

static int put_port(int ifaces_fd, int tx_fd, const struct config_iface *ci,
		    enum xnat_role role)
{
	struct iface_info info = { .role = role };
	__u32 ifindex = ci->ifindex;
	int err = iface_read(ci->name, &info);

	if (err)
		return err;
	if (bpf_map_update_elem(ifaces_fd, &ifindex, &info, BPF_ANY) ||
	    bpf_map_update_elem(tx_fd, &ifindex, &ifindex, BPF_ANY))
		return -errno;
	return 0;
}

static int sync_ports(const struct config *cfg)
{
	int ifaces_fd = loader_map_fd(MAP_IFACES);
	int tx_fd = loader_map_fd(MAP_TX_PORTS);
	int i, err = 0;

	if (ifaces_fd < 0 || tx_fd < 0) {
		err = ifaces_fd < 0 ? ifaces_fd : tx_fd;
		goto out;
	}
	err = put_port(ifaces_fd, tx_fd, &cfg->wan, XNAT_ROLE_WAN);
	for (i = 0; i < cfg->n_lan && !err; i++)
		err = put_port(ifaces_fd, tx_fd, &cfg->lan[i], XNAT_ROLE_LAN);
	if (!err) {
		delete_stale(ifaces_fd, sizeof(__u32), port_keep, cfg);
		delete_stale(tx_fd, sizeof(__u32), port_keep, cfg);
	}
out:
	if (ifaces_fd >= 0)
		close(ifaces_fd);
	if (tx_fd >= 0)
		close(tx_fd);
	return err;
}

static int sync_forwards(const struct config *cfg)
{
	int fd = loader_map_fd(MAP_FORWARDS);
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

static int sync_config(const struct config *cfg)
{
	struct xnat_config c = {};
	__u32 zero = 0;
	int fd = loader_map_fd(MAP_CONFIG), err = 0;

	if (fd < 0)
		return fd;
	/* XNAT_F_FASTPATH_OFF is a runtime switch (benchmarks), not config:
	 * keep it; the others come from the config. */
	bpf_map_lookup_elem(fd, &zero, &c);
	c.flags &= XNAT_F_FASTPATH_OFF;
	if (cfg->filter_eif)
		c.flags |= XNAT_F_FILTER_EIF;
	if (cfg->inbound_refresh)
		c.flags |= XNAT_F_INBOUND_REFRESH;
	c.nat_addr = cfg->nat_addr;
	c.port_min = cfg->port_min;
	c.port_max = cfg->port_max;
	c.wan_ifindex = cfg->wan.ifindex;
	c.timeout_tcp_est = cfg->timeout_tcp_est;
	c.timeout_tcp_trans = cfg->timeout_tcp_trans;
	c.timeout_udp = cfg->timeout_udp;
	c.timeout_icmp = cfg->timeout_icmp;
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
		err = sync_forwards(cfg);
	if (!err)
		err = sync_config(cfg);
	if (err)
		pr_warn("Failed to write config into the maps: %s\n",
			strerror(-err));
	return err;
}
