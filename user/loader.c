// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loader: skeleton open, map pinning and reuse, attach through libxdp with
 * its direct-attach fallback, hitless replace on reload, detach. See
 * loader.h for the why.
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "xnat.skel.h"
#include "iface.h"
#include "log.h"
#include "loader.h"
#include "maps.h"
#include "memory.h"
#include "pins.h"
#include "fsutil.h"
#include "names.h"

/* A pinned flow table of another size cannot be reused: say so plainly
 * rather than let libbpf fail with "couldn't reuse pinned map". */
static int check_flow_table_size(const struct config *cfg, char *err)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd, ret;

	fd = pins_map_open(MAP_FLOWS);
	if (fd < 0)
		return 0;
	ret = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (ret)
		return 0;
	if (info.max_entries != 2 * cfg->flows_max) {
		snprintf(err, CONFIG_ERR_LEN,
			 "%s: [flows] max changed from %u to %u; the flow table "
			 "cannot be resized live, run `xnat down` first",
			 cfg->path, info.max_entries / 2, cfg->flows_max);
		return -EINVAL;
	}
	return 0;
}

/*
 * Maps whose contents userspace derives from the config (and the counters
 * and scratch space): when a new xnat changes their layout, the new
 * program gets new ones, filled by maps_sync(), instead of a refusal. The
 * running program keeps its old copies until it is replaced. Counters
 * restart from zero then. The NAT state (flows, mappings, ports) is never
 * re-created: its layout changes must stay compatible.
 */
static const char *const derived_maps[] = {
	MAP_CONFIG, MAP_IFACES, MAP_TX_PORTS, MAP_FORWARDS, MAP_STATS,
	MAP_VLANS, MAP_POOL, MAP_POOL_REV, "xnat_scratch", "xnat_alloc",
};

static bool map_is_derived(const char *name)
{
	for (size_t i = 0; i < sizeof(derived_maps) / sizeof(derived_maps[0]); i++)
		if (!strcmp(name, derived_maps[i]))
			return true;
	return false;
}

/*
 * Reuse the maps a running router pinned, or have libbpf create and pin
 * them. Reuse is done here rather than by libbpf's pin_path check, which
 * compares map flags and so refuses every devmap (the kernel adds
 * BPF_F_RDONLY_PROG to them, and refuses it at creation).
 */
static int pin_maps(struct bpf_object *obj, bool check_only, char *errbuf)
{
	const char *dir = pins_dir();
	struct bpf_map_info info;
	struct bpf_map *map;
	char path[160];
	__u32 len;
	int fd, err;

	if (!check_only) {
		err = mkdir_p(dir, 0700);
		if (err) {
			snprintf(errbuf, CONFIG_ERR_LEN,
				 "failed to create pin directory %s: %s", dir,
				 strerror(-err));
			return err;
		}
	}
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, bpf_map__name(map));
		fd = bpf_obj_get(path);
		if (fd < 0) {
			err = check_only ? 0 : bpf_map__set_pin_path(map, path);
			if (err)
				return err;
			continue;
		}
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		err = bpf_obj_get_info_by_fd(fd, &info, &len);
		if (!err && (info.type != bpf_map__type(map) ||
			     info.key_size != bpf_map__key_size(map) ||
			     info.value_size != bpf_map__value_size(map) ||
			     info.max_entries != bpf_map__max_entries(map)) &&
		    map_is_derived(bpf_map__name(map))) {
			close(fd);
			if (check_only)
				continue;
			pr_info("Map %s has a new layout: re-created\n",
				bpf_map__name(map));
			if (unlink(path))
				return -errno;
			err = bpf_map__set_pin_path(map, path);
			if (err)
				return err;
			continue;
		}
		if (!err && (info.type != bpf_map__type(map) ||
			     info.key_size != bpf_map__key_size(map) ||
			     info.value_size != bpf_map__value_size(map) ||
			     info.max_entries != bpf_map__max_entries(map))) {
			snprintf(errbuf, CONFIG_ERR_LEN,
				 "pinned map %s has another layout than this "
				 "xnat's; run `xnat down` to start afresh", path);
			err = -EINVAL;
		}
		if (!err && !check_only)
			err = bpf_map__reuse_fd(map, fd);
		close(fd);
		if (err)
			return err;
	}
	return 0;
}

static int unpin_maps(void)
{
	const char *dir = pins_dir();
	struct dirent *de;
	char path[320];
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path))
			pr_warn("Failed to unpin %s: %s\n", path, strerror(errno));
	}
	closedir(d);
	return 0;
}

/*
 * Find xnat's program on IFINDEX. Returns the multiprog in *MP (caller
 * closes) and xnat's program in *PROG, or NULL. A foreign program attached
 * directly (no dispatcher) makes the port unusable: -EBUSY.
 */
static int find_attached(int ifindex, struct xdp_multiprog **mp,
			 struct xdp_program **prog)
{
	struct xdp_program *p;

	*prog = NULL;
	*mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (libxdp_get_error(*mp)) {
		*mp = NULL;
		return 0;
	}
	if (xdp_multiprog__is_legacy(*mp)) {
		p = xdp_multiprog__main_prog(*mp);
		if (p && strcmp(xdp_program__name(p), XNAT_PROG_NAME))
			return -EBUSY;
		*prog = p;
		return 0;
	}
	for (p = xdp_multiprog__next_prog(NULL, *mp); p;
	     p = xdp_multiprog__next_prog(p, *mp))
		if (!strcmp(xdp_program__name(p), XNAT_PROG_NAME))
			*prog = p;
	return 0;
}

static enum xdp_attach_mode libxdp_mode(enum xdp_attach a)
{
	return a == XDP_ATTACH_NATIVE  ? XDP_MODE_NATIVE :
	       a == XDP_ATTACH_GENERIC ? XDP_MODE_SKB :
					 XDP_MODE_UNSPEC;
}

static __u32 legacy_flags(enum xdp_attach_mode mode)
{
	return mode == XDP_MODE_NATIVE ? XDP_FLAGS_DRV_MODE :
	       mode == XDP_MODE_SKB    ? XDP_FLAGS_SKB_MODE : 0;
}

/*
 * Attach the freshly loaded program FD to a port that runs an older xnat
 * directly: one atomic swap, no window without a program.
 */
static int replace_legacy(int ifindex, struct xdp_multiprog *mp,
			  struct xdp_program *old, int fd)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts,
		    .old_prog_fd = xdp_program__fd(old));
	__u32 flags = legacy_flags(xdp_multiprog__attach_mode(mp));
	char name[IF_NAMESIZE];
	int err;

	err = bpf_xdp_attach(ifindex, fd, flags | XDP_FLAGS_REPLACE, &opts);
	if (err)
		pr_warn("Failed to replace XDP program on iface %s: %s\n",
			ifname_of(ifindex, name), strerror(-err));
	return err;
}

struct port {
	int ifindex;
	struct xdp_multiprog *mp;
	struct xdp_program *old;
};

/* The physical ports of CFG, with what runs on each now. */
static int collect_ports(const struct config *cfg, struct port *ports)
{
	char names[1 + CONFIG_MAX_LAN][IF_NAMESIZE];
	int i, n, err;

	n = iface_physical_ports(cfg, names);
	for (i = 0; i < n; i++) {
		ports[i].ifindex = if_nametoindex(names[i]);
		err = find_attached(ports[i].ifindex, &ports[i].mp,
				    &ports[i].old);
		if (err) {
			pr_warn("Iface %s has another XDP program attached "
				"without a dispatcher; detach it first\n",
				names[i]);
			return err;
		}
	}
	return n;
}

static void release_ports(struct port *ports, int n)
{
	for (int i = 0; i < n; i++)
		xdp_multiprog__close(ports[i].mp);
}

/* Ports where xnat ran before but which the new config dropped. */
static void detach_dropped(const struct xnat_state *old_st,
			   const struct config *cfg)
{
	char names[1 + CONFIG_MAX_LAN][IF_NAMESIZE];
	struct xnat_state drop = { 0 };
	int i, j, n = iface_physical_ports(cfg, names);

	for (i = 0; i < old_st->n_ifaces; i++) {
		for (j = 0; j < n && strcmp(old_st->ifaces[i], names[j]); j++)
			;
		if (j == n)
			snprintf(drop.ifaces[drop.n_ifaces++], IF_NAMESIZE,
				 "%s", old_st->ifaces[i]);
	}
	if (drop.n_ifaces)
		loader_down_ports(&drop);
}

static int attach_all(struct xnat_bpf *skel, const struct config *cfg,
		      struct port *ports, int n)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, opts, .obj = skel->obj,
			    .prog_name = XNAT_PROG_NAME);
	enum xdp_attach_mode mode = libxdp_mode(cfg->xdp_attach);
	struct xdp_program *prog = NULL;
	char name[IF_NAMESIZE];
	int i, err = 0, legacy = 0;

	for (i = 0; i < n; i++)
		legacy |= ports[i].old && xdp_multiprog__is_legacy(ports[i].mp);

	if (legacy) {
		/* Running directly attached: load as a plain XDP program and
		 * swap it in port by port. */
		err = xnat_bpf__load(skel);
		if (err) {
			pr_warn("Failed to load XDP object: %s\n",
				strerror(-err));
			return err;
		}
		err = maps_sync(cfg);
		for (i = 0; i < n && !err; i++) {
			int fd = bpf_program__fd(skel->progs.xdp_xnat);

			if (ports[i].old)
				err = replace_legacy(ports[i].ifindex,
						     ports[i].mp, ports[i].old, fd);
			else
				err = bpf_xdp_attach(ports[i].ifindex, fd,
						     legacy_flags(mode) |
						     XDP_FLAGS_UPDATE_IF_NOEXIST,
						     NULL);
		}
		return err;
	}

	prog = xdp_program__create(&opts);
	err = libxdp_get_error(prog);
	if (err) {
		pr_warn("Failed to create libxdp program: %s\n", strerror(-err));
		return err;
	}
	for (i = 0; i < n; i++) {
		/* New program first, then the old one out: each step is an
		 * atomic swap of the port's dispatcher. */
		err = xdp_program__attach(prog, ports[i].ifindex, mode, 0);
		if (err) {
			pr_warn("Failed to attach XDP program to iface %s: %s\n",
				ifname_of(ports[i].ifindex, name),
				strerror(-err));
			break;
		}
		if (i == 0 && (err = maps_sync(cfg)))
			break;
		if (ports[i].old)
			xdp_program__detach(ports[i].old, ports[i].ifindex,
					    xdp_multiprog__attach_mode(ports[i].mp),
					    0);
	}
	/* The kernel holds the attachment; our handle can go. The object
	 * belongs to the skeleton, which the caller destroys. */
	xdp_program__close(prog);
	return err;
}

/* Open the object with the map sizes CFG asks for. */
static struct xnat_bpf *skel_open(const struct config *cfg)
{
	struct xnat_bpf *skel = xnat_bpf__open();
	int err;

	if (!skel)
		return NULL;
	/* Two entries per connection; at most one mapping, one port and
	 * (LRU) two peers per connection, or one endpoint-dependent
	 * binding. */
	err = bpf_map__set_max_entries(skel->maps.xnat_flows,
				       2 * cfg->flows_max);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.xnat_mappings,
					       cfg->flows_max);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.xnat_ports,
					       cfg->flows_max);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.xnat_peers,
					       2 * cfg->flows_max);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.xnat_edm_ports,
					       cfg->flows_max);
	if (err) {
		xnat_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/*
 * Will the new maps (those not pinned already) and the timers of a full
 * table fit in memory? The hash maps are preallocated: a table the machine
 * cannot hold fails at creation, or worse, succeeds and starves the rest.
 */
static int check_memory(const struct config *cfg, struct bpf_object *obj,
			char *err)
{
	unsigned long long need, per_conn, fits;
	long long avail = mem_available();
	char path[160];

	if (avail <= 0)
		return 0; /* no /proc/meminfo: nothing to check against */
	need = mem_object_bytes(obj, pins_dir());
	snprintf(path, sizeof(path), "%s/%s", pins_dir(), MAP_FLOWS);
	if (access(path, F_OK))
		need += mem_timers_bytes(cfg->flows_max);
	if (need <= (unsigned long long)avail / MEM_SHARE_DEN * MEM_SHARE_NUM)
		return 0;
	per_conn = need / cfg->flows_max + 1;
	fits = (unsigned long long)avail / MEM_SHARE_DEN * MEM_SHARE_NUM /
	       per_conn;
	snprintf(err, CONFIG_ERR_LEN,
		 "%s: [flows] max = %u needs about %llu MB of kernel memory "
		 "(preallocated maps and timers), more than %d/%d of the "
		 "%lld MB available; at most about %llu connections fit",
		 cfg->path, cfg->flows_max, need >> 20, MEM_SHARE_NUM,
		 MEM_SHARE_DEN, avail >> 20, fits);
	return -ENOMEM;
}

int loader_check(const struct config *cfg, char err[CONFIG_ERR_LEN])
{
	struct xnat_bpf *skel;
	int ret;

	ret = check_flow_table_size(cfg, err);
	if (ret)
		return ret;
	skel = skel_open(cfg);
	if (!skel) {
		ret = -errno;
		snprintf(err, CONFIG_ERR_LEN, "failed to open XDP object: %s",
			 strerror(-ret));
		return ret;
	}
	ret = pin_maps(skel->obj, true, err);
	if (!ret)
		ret = check_memory(cfg, skel->obj, err);
	xnat_bpf__destroy(skel);
	return ret;
}

int loader_up(const struct config *cfg, struct xnat_state *st)
{
	struct xnat_state old_st = *st;
	struct port ports[1 + CONFIG_MAX_LAN] = {};
	char errbuf[CONFIG_ERR_LEN] = "";
	struct xnat_bpf *skel;
	int n, err;

	skel = skel_open(cfg);
	if (!skel) {
		err = -errno;
		pr_warn("Failed to open XDP object: %s\n", strerror(-err));
		return err;
	}
	err = pin_maps(skel->obj, false, errbuf);
	if (err) {
		pr_warn("%s\n", errbuf[0] ? errbuf : strerror(-err));
		goto out;
	}

	n = collect_ports(cfg, ports);
	if (n < 0) {
		err = n;
		goto out;
	}
	err = attach_all(skel, cfg, ports, n);
	release_ports(ports, n);
	if (err)
		goto out;

	detach_dropped(&old_st, cfg);
out:
	/* Destroying the skeleton closes our fds only: the programs stay
	 * attached and the maps stay pinned. */
	xnat_bpf__destroy(skel);
	return err;
}

int loader_down_ports(const struct xnat_state *st)
{
	struct xdp_multiprog *mp;
	struct xdp_program *prog;
	char name[IF_NAMESIZE];
	int i, ifindex, err, ret = 0;

	for (i = 0; i < st->n_ifaces; i++) {
		ifindex = if_nametoindex(st->ifaces[i]);
		if (!ifindex)
			continue; /* the port is gone, and its program with it */
		if (find_attached(ifindex, &mp, &prog) || !prog) {
			xdp_multiprog__close(mp);
			continue;
		}
		err = xdp_program__detach(prog, ifindex,
					  xdp_multiprog__attach_mode(mp), 0);
		if (err) {
			pr_warn("Failed to detach XDP program from iface %s: %s\n",
				ifname_of(ifindex, name), strerror(-err));
			ret = err;
		}
		xdp_multiprog__close(mp);
	}
	return ret;
}

int loader_down(const struct xnat_state *st)
{
	int err = loader_down_ports(st);

	unpin_maps();
	return err;
}

int loader_attach_info(int ifindex, struct attach_info *info)
{
	struct xdp_multiprog *mp;
	struct xdp_program *prog;
	enum xdp_attach_mode mode;

	find_attached(ifindex, &mp, &prog);
	if (!prog) {
		xdp_multiprog__close(mp);
		return -ENOENT;
	}
	mode = xdp_multiprog__attach_mode(mp);
	snprintf(info->method, sizeof(info->method), "%s",
		 xdp_multiprog__is_legacy(mp) ? "legacy" : "libxdp");
	snprintf(info->mode, sizeof(info->mode), "%s",
		 mode == XDP_MODE_SKB ? "generic" :
		 mode == XDP_MODE_HW  ? "hw" : "native");
	info->prog_id = xdp_program__id(prog);
	xdp_multiprog__close(mp);
	return 0;
}
