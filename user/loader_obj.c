// SPDX-License-Identifier: GPL-2.0-only
/*
 * The data path's object opened with the plan's map sizes, and its maps:
 * checked against what is pinned, pinned or reused, unpinned. The attach
 * and its undo are loader.c's. See loader.h and loader_obj.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xnat.skel.h"
#include "log.h"
#include "loader_obj.h"
#include "map_size.h"
#include "memory.h"
#include "pins.h"
#include "fsutil.h"
#include "names.h"

/* Maps whose contents the config and the ports define: a new layout is
 * re-created and refilled from the plan. The counters too: they restart
 * from zero. The others hold the router's NAT state (flows, mappings,
 * ports, peers): a new layout of one is refused, naming `xnat down`. */
static int map_is_derived(const char *name)
{
	static const char *const derived[] = {
		MAP_CONFIG, MAP_IFACES, MAP_TX_PORTS, MAP_FORWARDS, MAP_VLANS,
		MAP_OFFLOAD, MAP_POOL, MAP_POOL_REV, MAP_STATS, "xnat_alloc",
		/* transient, not state: fragments in flight, scratch space,
		 * offload's first-packet and table filters (a table
		 * filter made anew costs each offloaded entry one packet
		 * through the kernel, bpf/offload_filter.h),
		 * the trace's and the NAT log's settings and rings */
		"xnat_fragments", "xnat_scratch", "xnat_ct_seen",
		"xnat_offloaded", "xnat_offloaded_epoch",
		/* a mirror of xnat_ports' marks, cleared at every attach
		 * anyway (bpf/port_active.h) */
		MAP_PORT_ACTIVE,
		MAP_SLOW_PATH,
		MAP_TRACE_CFG, MAP_TRACE_CPU,
		MAP_TRACE_RB, MAP_NATLOG_CFG, MAP_NATLOG_CPU, MAP_NATLOG_RB,
	};

	for (size_t i = 0; i < sizeof(derived) / sizeof(*derived); i++)
		if (!strcmp(name, derived[i]))
			return 1;
	return 0;
}

/* Same type, key, value and size as the object's MAP? */
static int same_layout(int fd, const struct bpf_map *map)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.type == bpf_map__type(map) &&
	       info.key_size == bpf_map__key_size(map) &&
	       info.value_size == bpf_map__value_size(map) &&
	       info.max_entries == bpf_map__max_entries(map);
}

/* The map sizes CFG asks for: 0 or -errno. */
static int skel_size_maps(struct xnat_bpf *skel, const struct config *cfg)
{
	const struct {
		struct bpf_map *map;
		__u32 n;
	} sizes[] = {
		/* Two entries per connection (and one for the buckets,
		 * map_size.c); at most one mapping, one port
		 * and (LRU) two peers per connection; mappings and ports
		 * also at most one per external port (map_size.c). An
		 * endpoint-dependent port is held by its flow's reply
		 * entry. */
		{ skel->maps.xnat_flows, map_size_flow_table(cfg) },
		{ skel->maps.xnat_mappings,
		  map_size_nat_table(cfg, MAP_MAPPINGS) },
		{ skel->maps.xnat_ports, map_size_nat_table(cfg, MAP_PORTS) },
		{ skel->maps.xnat_peers, 2 * cfg->flows_max },
		/* One reference per connection, and a quarter more for those
		 * of connections that ended some other way until the sweeper
		 * skips them (bpf/sweep.h). */
		{ skel->maps.xnat_expiry,
		  cfg->flows_max + cfg->flows_max / 4 + 64 },
		/* A byte per port of each pool address. */
		{ skel->maps.xnat_port_active,
		  (cfg->n_pool > 1 ? cfg->n_pool : 1) * PORT_ACTIVE_WORDS },
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && !err; i++)
		err = bpf_map__set_max_entries(sizes[i].map, sizes[i].n);
	return err;
}

/* Open the object with the map sizes CFG asks for. */
struct xnat_bpf *skel_open(const struct config *cfg)
{
	struct xnat_bpf *skel = xnat_bpf__open();
	int err;

	if (!skel)
		return NULL;
	err = skel_size_maps(skel, cfg);
	/* The sweeper keeps room in it by this count (bpf/sweep.h). */
	skel->rodata->sweep_queue_max =
		bpf_map__max_entries(skel->maps.xnat_expiry);
	if (err) {
		xnat_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

void pin_path(char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s", pins_dir(), name);
}

/* -EINVAL for what the config changed ([flows] max), -EEXIST for a map
 * this binary lays out differently. */
static int refuse_layout(const struct config *cfg, const struct bpf_map *map,
			 int fd, char *err)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	bpf_obj_get_info_by_fd(fd, &info, &len);
	if (!strcmp(bpf_map__name(map), MAP_FLOWS) &&
	    info.type == bpf_map__type(map) &&
	    info.key_size == bpf_map__key_size(map) &&
	    info.value_size == bpf_map__value_size(map)) {
		snprintf(err, CONFIG_ERR_LEN,
			 "%s: [flows] max changed from %u to %u; the flow table "
			 "cannot be resized live, run `xnat down` first",
			 cfg->path, info.max_entries / 2, cfg->flows_max);
		return -EINVAL;
	}
	if ((!strcmp(bpf_map__name(map), MAP_MAPPINGS) ||
	     !strcmp(bpf_map__name(map), MAP_PORTS)) &&
	    info.type == bpf_map__type(map) &&
	    info.key_size == bpf_map__key_size(map) &&
	    info.value_size == bpf_map__value_size(map)) {
		snprintf(err, CONFIG_ERR_LEN,
			 "%s: the NAT addresses need room for %u mappings, the "
			 "running router's %s holds %u; it cannot be resized "
			 "live, run `xnat down` first",
			 cfg->path, bpf_map__max_entries(map),
			 bpf_map__name(map), info.max_entries);
		return -EINVAL;
	}
	snprintf(err, CONFIG_ERR_LEN,
		 "the running router's map %s has another layout than this "
		 "xnat's (type %u, key %u, value %u, %u entries; this xnat: "
		 "%u, %u, %u, %u): its state cannot be carried over; run `xnat "
		 "down` first (established flows are lost)",
		 bpf_map__name(map), info.type, info.key_size, info.value_size,
		 info.max_entries, bpf_map__type(map), bpf_map__key_size(map),
		 bpf_map__value_size(map), bpf_map__max_entries(map));
	return -EEXIST;
}

/*
 * Will the new maps (those not pinned already) and the timers of a full
 * table fit in memory? The hash maps are preallocated: a table the machine
 * cannot hold fails at creation, or worse, succeeds and starves the rest.
 * The memory is the machine's, or less under a cgroup limit (a unit's
 * MemoryMax=), where the kernel charges the maps and fails them.
 */
static int check_memory(const struct config *cfg, struct bpf_object *obj,
			char *err)
{
	unsigned long long need, fits;
	char path[160], who[192];
	long long avail = mem_available(who, sizeof(who));

	need = mem_object_bytes(obj, pins_dir());
	snprintf(path, sizeof(path), "%s/%s", pins_dir(), MAP_FLOWS);
	if (access(path, F_OK))
		need += mem_timers_bytes(cfg->flows_max);
	if (mem_fits(need, avail, cfg->flows_max, &fits))
		return 0;
	snprintf(err, CONFIG_ERR_LEN,
		 "%s: [flows] max = %u needs about %llu MB of kernel memory "
		 "(preallocated maps and timers), more than %d/%d of the "
		 "%lld MB available (%s); at most about %llu connections fit",
		 cfg->path, cfg->flows_max, need >> 20, MEM_SHARE_NUM,
		 MEM_SHARE_DEN, avail >> 20, who, fits);
	/* A config error, like any other value the machine cannot take. */
	return -EINVAL;
}

int loader_check(const struct plan *plan, char err[CONFIG_ERR_LEN])
{
	struct xnat_bpf *skel = skel_open(&plan->cfg);
	struct bpf_map *map;
	char path[160];
	int fd, ret = 0;

	if (!skel) {
		ret = -errno;
		snprintf(err, CONFIG_ERR_LEN, "failed to open XDP object: %s",
			 strerror(-ret));
		return ret;
	}
	bpf_object__for_each_map(map, skel->obj) {
		if (bpf_map__is_internal(map))
			continue;
		pin_path(path, sizeof(path), bpf_map__name(map));
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!same_layout(fd, map) && !map_is_derived(bpf_map__name(map)))
			ret = refuse_layout(&plan->cfg, map, fd, err);
		close(fd);
		if (ret)
			break;
	}
	if (!ret)
		ret = check_memory(&plan->cfg, skel->obj, err);
	xnat_bpf__destroy(skel);
	return ret;
}

/*
 * Reuse the pinned map at PATH for MAP, or have libbpf create and pin it.
 * Reuse is done here rather than by libbpf's pin_path check, which
 * compares map flags and so refuses every devmap (the kernel adds
 * BPF_F_RDONLY_PROG to them, and refuses it at creation). A derived map of
 * another layout is unpinned (and kept in U, to re-pin on undo).
 */
static int pin_one(struct bpf_map *map, const char *path, struct loader_undo *u)
{
	const char *name = bpf_map__name(map);
	int fd = bpf_obj_get(path), err;

	if (fd >= 0 && same_layout(fd, map)) {
		err = bpf_map__reuse_fd(map, fd);
		close(fd);
		return err;
	}
	if (fd >= 0) {
		if (!map_is_derived(name) || u->n_replaced == 16) {
			close(fd);
			return -EINVAL; /* loader_check refused it already */
		}
		pr_info("Map %s has a new layout: re-creating it\n", name);
		unlink(path);
		snprintf(u->replaced[u->n_replaced].name, 32, "%s", name);
		u->replaced[u->n_replaced++].old_fd = fd;
	} else if (u->n_created < 16) {
		snprintf(u->created[u->n_created++], 32, "%s", name);
	}
	return bpf_map__set_pin_path(map, path);
}

int loader_pin_maps(const struct plan *plan, struct loader_undo *u)
{
	struct xnat_bpf *skel = skel_open(&plan->cfg);
	struct bpf_program *prog;
	struct bpf_map *map;
	char path[160];
	int err;

	if (!skel) {
		err = -errno;
		pr_warn("Failed to open XDP object: %s\n", strerror(-err));
		return err;
	}
	err = mkdir_p(pins_dir(), 0700);
	if (err)
		pr_warn("Failed to create pin directory %s: %s\n",
			pins_dir(), strerror(-err));
	bpf_object__for_each_map(map, skel->obj) {
		if (err || bpf_map__is_internal(map))
			continue;
		pin_path(path, sizeof(path), bpf_map__name(map));
		err = pin_one(map, path, u);
	}
	/* Maps only: the programs load when they attach. */
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, false);
	if (!err && (err = xnat_bpf__load(skel)))
		pr_warn("Failed to create the maps in %s: %s\n",
			pins_dir(), strerror(-err));
	xnat_bpf__destroy(skel);
	return err;
}

int loader_unpin(void)
{
	const char *dir = pins_dir();
	struct dirent *de;
	char path[320];
	int err = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!unlink(path) || errno == ENOENT)
			continue;
		if (!err)
			err = -errno;
		pr_warn("Failed to unpin %s: %s\n", path, strerror(errno));
	}
	closedir(d);
	if (rmdir(dir) && errno != ENOENT && !err)
		err = -errno;
	return err;
}
/* Reuse every pinned map (loader_pin_maps made them all). */
int reuse_pinned(struct bpf_object *obj)
{
	struct bpf_map *map;
	char path[160];
	int fd, err = 0;

	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map))
			continue;
		pin_path(path, sizeof(path), bpf_map__name(map));
		fd = bpf_obj_get(path);
		if (fd < 0)
			return -errno;
		err = bpf_map__reuse_fd(map, fd);
		close(fd);
		if (err)
			return err;
	}
	return 0;
}
