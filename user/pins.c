// SPDX-License-Identifier: GPL-2.0-only
/* Pin paths of the router's maps; see pins.h. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "netns.h"
#include "pins.h"
#include "xnat_common.h"

int pins_dir_of(unsigned long netns_ino, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%lu", XNAT_PIN_ROOT_DIR, netns_ino);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pins_map_path_of(unsigned long netns_ino, const char *name, char *buf,
		     size_t len)
{
	int n = snprintf(buf, len, "%s/%lu/%s", XNAT_PIN_ROOT_DIR, netns_ino,
			 name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pins_map_open_of(unsigned long netns_ino, const char *name)
{
	char path[160];
	int fd, err;

	err = pins_map_path_of(netns_ino, name, path, sizeof(path));
	if (err)
		return err;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

const char *pins_dir(void)
{
	static char dir[64];

	pins_dir_of(netns_id(), dir, sizeof(dir));
	return dir;
}

int pins_map_open(const char *name)
{
	return pins_map_open_of(netns_id(), name);
}

/* The map FD's max_entries, or -errno. */
static long fd_max_entries(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno :
							 (long)info.max_entries;
}

long pins_map_walk(const char *name, __u32 key_size, __u32 value_size,
		   __u32 *max_entries, map_walk_fn each, void *ctx)
{
	int fd = pins_map_open(name);
	long n;

	if (fd < 0)
		return fd;
	n = max_entries ? fd_max_entries(fd) : 0;
	if (n > 0)
		*max_entries = n;
	n = map_walk(fd, key_size, value_size, each, ctx);
	close(fd);
	return n;
}

long pins_map_max_entries(const char *name)
{
	int fd = pins_map_open(name);
	long n;

	if (fd < 0)
		return fd;
	n = fd_max_entries(fd);
	close(fd);
	return n;
}

int pins_map_read_first(const char *name, void *value, __u32 size)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	int fd = pins_map_open(name), err = 0;

	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	else if (info.value_size != size)
		err = -EPROTO;
	else if (bpf_map_lookup_elem(fd, &zero, value))
		err = -errno;
	close(fd);
	return err;
}
