/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the router's maps are pinned, and under which names: one place for
 * the loader (which pins them), the commands and maps.c (which open them)
 * and the bench (which reads a router in another namespace). A router's
 * maps live in XNAT_PIN_ROOT_DIR/<netns inode>/<map name>: the inode of its
 * network namespace names it the same way whether xnat got there with
 * --netns or under `ip netns exec`.
 */
#ifndef XNAT_PINS_H
#define XNAT_PINS_H

#include <stddef.h>
#include <linux/types.h>
#include "map_walk.h"

/* Names of the maps, as pinned (the map names in bpf/maps.h). */
#define MAP_FLOWS    "xnat_flows"
#define MAP_CONFIG   "xnat_config"
#define MAP_IFACES   "xnat_ifaces"
#define MAP_TX_PORTS "xnat_tx_ports"
#define MAP_FORWARDS "xnat_forwards"
#define MAP_STATS    "xnat_stats"
#define MAP_VLANS    "xnat_vlans"
#define MAP_IFADDRS  "xnat_ifaddrs"
#define MAP_MAPPINGS "xnat_mappings"
#define MAP_PORTS    "xnat_ports"
#define MAP_PORT_ACTIVE "xnat_port_active"
#define MAP_HOSTS    "xnat_hosts"
#define MAP_POOL     "xnat_pool"
#define MAP_POOL_REV "xnat_pool_rev"
#define MAP_OFFLOAD  "xnat_offload"
#define MAP_TRACE_CFG "xnat_trace_cfg"
#define MAP_TRACE_CPU "xnat_trace_cpu"
#define MAP_TRACE_RB  "xnat_trace_rb"
#define MAP_NATLOG_CFG "xnat_natlog_cfg"
#define MAP_NATLOG_CPU "xnat_natlog_cpu"
#define MAP_NATLOG_RB  "xnat_natlog_rb"
#define MAP_EXPIRE_NOW "xnat_expire_now"
#define MAP_SWEEP      "xnat_sweep"
#define MAP_EXPIRY     "xnat_expiry"
#define MAP_SLOW_PATH  "xnat_slow_path"
#define MAP_OFFLOADED_EPOCH "xnat_offloaded_epoch"

/* The pin directory of the router in the network namespace with inode
 * NETNS_INO, in BUF. 0, or -ENAMETOOLONG. */
int pins_dir_of(unsigned long netns_ino, char *buf, size_t len);
/* The pinned map NAME of that router, in BUF. 0, or -ENAMETOOLONG. */
int pins_map_path_of(unsigned long netns_ino, const char *name, char *buf,
		     size_t len);
/* Open the pinned map NAME of that router: an fd, or -errno (-ENOENT: not
 * up there). */
int pins_map_open_of(unsigned long netns_ino, const char *name);

/* The same for the router of the current network namespace. */
const char *pins_dir(void);
int pins_map_open(const char *name);

/* map_walk() (user/lib/map_walk.h) over the pinned map NAME of the router
 * here, its size in *MAX_ENTRIES if not NULL: the number of entries, or
 * -errno (-ENOENT: not up here). */
long pins_map_walk(const char *name, __u32 key_size, __u32 value_size,
		   __u32 *max_entries, map_walk_fn each, void *ctx);

/* The max_entries of the pinned map NAME of the router here, or -errno
 * (-ENOENT: not up here). */
long pins_map_max_entries(const char *name);

/* The value of key 0 of the pinned map NAME of the router here, into
 * VALUE, of SIZE bytes. 0, or -errno: -ENOENT not up here, -EPROTO values
 * of another size (a map of an older data path, whose layout this binary
 * does not read). */
int pins_map_read_first(const char *name, void *value, __u32 size);

#endif /* XNAT_PINS_H */
