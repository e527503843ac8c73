// SPDX-License-Identifier: GPL-2.0-only
/*
 * The room under this process's memory cgroup limits; see memcg.h. A
 * level's room is its limit less what is charged to it, plus its inactive
 * file pages, which the kernel reclaims before it fails a charge (so a
 * cgroup that has read a lot of files is not taken for full).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "memcg.h"

/* v1 writes "no limit" as the largest page count in bytes. */
#define V1_UNLIMITED (1LL << 62)

struct memcg_files {
	const char *limit, *usage, *inactive;
};

static const struct memcg_files files_v1 = {
	"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file",
};
static const struct memcg_files files_v2 = {
	"memory.max", "memory.current", "inactive_file",
};

/* Is WORD one of the comma-separated LIST? */
static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ',') && (!p[n] || p[n] == ','))
			return 1;
	return 0;
}

/* The number in DIR/NAME: 0, -1 ("max" or unreadable). */
static int read_num(const char *dir, const char *name, long long *n)
{
	char path[PATH_MAX], buf[32];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fgets(buf, sizeof(buf), f) && sscanf(buf, "%lld", n) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* KEY's value in DIR/memory.stat, or 0. */
static long long stat_value(const char *dir, const char *key)
{
	char path[PATH_MAX], line[128], name[64];
	long long v, found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", name, &v) == 2 &&
		    !strcmp(name, key)) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

long long memcg_room_at(const char *dir, const char *top, int version,
			char *who, size_t len)
{
	const struct memcg_files *fl = version == 1 ? &files_v1 : &files_v2;
	long long best = -ENOENT, limit, usage, room;
	char cur[PATH_MAX], *slash;
	size_t top_len = strlen(top);

	if (strlen(dir) >= sizeof(cur) || strncmp(dir, top, top_len))
		return -ENOENT;
	strcpy(cur, dir);
	for (;;) {
		if (!read_num(cur, fl->limit, &limit) &&
		    !(version == 1 && limit >= V1_UNLIMITED) &&
		    !read_num(cur, fl->usage, &usage)) {
			room = limit - usage + stat_value(cur, fl->inactive);
			if (room < 0)
				room = 0;
			if (best < 0 || room < best) {
				best = room;
				snprintf(who, len, "%s/%s", cur, fl->limit);
			}
		}
		if (strlen(cur) <= top_len)
			break;
		slash = strrchr(cur, '/');
		if (!slash || slash - cur < (long)top_len)
			break;
		*slash = '\0';
	}
	return best;
}

/*
 * The mount of the hierarchy that has the memory controller: a v1
 * "cgroup" mount with the memory option, else the cgroup2 one. Its mount
 * point into MNT and the cgroup it shows at its top into ROOT; the
 * version, or 0 when there is none.
 */
static int memcg_mount(char *mnt, char *root)
{
	char line[1024], m[PATH_MAX], r[PATH_MAX], type[32], opts[512];
	int version = 0;
	char *sep;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		if (!sep ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 ||
		    sscanf(sep + 3, "%31s %*s %511s", type, opts) != 2)
			continue;
		if (!strcmp(type, "cgroup") && has_word(opts, "memory")) {
			strcpy(mnt, m);
			strcpy(root, r);
			version = 1;
			break;
		}
		if (!strcmp(type, "cgroup2") && !version) {
			strcpy(mnt, m);
			strcpy(root, r);
			version = 2;
		}
	}
	fclose(f);
	return version;
}

/* This process's cgroup in hierarchy VERSION (v1: the memory one) into
 * PATH: 0, or -1. */
static int memcg_path(int version, char *path)
{
	char line[PATH_MAX + 64], *ctl, *p;
	FILE *f = fopen("/proc/self/cgroup", "r");
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ctl = strchr(line, ':');
		p = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!p)
			continue;
		*p++ = '\0';
		ctl++;
		if (version == 2 ? !*ctl : has_word(ctl, "memory")) {
			snprintf(path, PATH_MAX, "%s", p);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

long long memcg_room(char *who, size_t len)
{
	char mnt[PATH_MAX], root[PATH_MAX], path[PATH_MAX], dir[2 * PATH_MAX];
	int version = memcg_mount(mnt, root);
	size_t rl;

	if (!version || memcg_path(version, path))
		return -ENOENT;
	/* The path is the cgroup's from the hierarchy's top; the mount may
	 * show a cgroup below that top (a container's). */
	rl = strcmp(root, "/") ? strlen(root) : 0;
	if (strncmp(path, root, rl))
		return -ENOENT;
	snprintf(dir, sizeof(dir), "%s%s", mnt, path + rl);
	/* "/" as the path: the top itself, without its trailing slash. */
	if (strlen(dir) > strlen(mnt) && dir[strlen(dir) - 1] == '/')
		dir[strlen(dir) - 1] = '\0';
	return memcg_room_at(dir, mnt, version, who, len);
}
