// SPDX-License-Identifier: GPL-2.0-only
/* Network and mount namespace handling; see netns.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "log.h"
#include "netns.h"

#define BPFFS "/sys/fs/bpf"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static int join(const char *path, int nstype)
{
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, nstype))
		err = -errno;
	close(fd);
	return err;
}

int netns_enter(const char *name)
{
	char path[PATH_MAX];
	int err;

	if (!name)
		return 0;
	if (strchr(name, '/') || !*name) {
		pr_warn("Invalid network namespace name '%s'\n", name);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	err = join(path, CLONE_NEWNET);
	if (err)
		pr_warn("Failed to enter network namespace %s: %s\n", name,
			strerror(-err));
	return err;
}

static int is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

static int mnt_ns_of(const char *pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/ns/mnt", pid);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

static int parent_of(int pid)
{
	char path[64], line[256];
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %d", &ppid) == 1)
			break;
	fclose(f);
	return ppid;
}

/*
 * Join the mount namespace of the closest ancestor that is in another one:
 * under `ip netns exec` that is whoever ran ip, with the host's mounts.
 * PID 1 is not asked first on purpose: sandboxes and containers often
 * deny access to it, and the ancestor is the right answer anyway.
 * Returns 1 if joined, 0 if no ancestor is elsewhere, -errno on failure.
 */
static int join_ancestor_mnt_ns(void)
{
	char self[64], other[64], pid[16], path[64];
	int p, err;

	err = mnt_ns_of("self", self, sizeof(self));
	if (err)
		return err;
	for (p = getppid(); p > 0; p = parent_of(p)) {
		snprintf(pid, sizeof(pid), "%d", p);
		if (mnt_ns_of(pid, other, sizeof(other)))
			continue;
		if (!strcmp(self, other))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", p);
		err = join(path, CLONE_NEWNS);
		return err ? err : 1;
	}
	return 0;
}

int netns_bpffs_ready(void)
{
	char cwd[PATH_MAX];
	int joined, err;

	if (is_bpffs(BPFFS))
		return 0;
	/* Joining a mount namespace moves us to its root: come back to the
	 * same path so relative config paths keep working. */
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	joined = join_ancestor_mnt_ns();
	if (joined < 0) {
		pr_warn("Cannot reach the host's bpffs from this mount namespace "
			"(%s); use xnat --netns NAME instead\n", strerror(-joined));
		return joined;
	}
	if (joined && cwd[0] && chdir(cwd))
		pr_debug("Cannot return to %s: %s\n", cwd, strerror(errno));
	if (is_bpffs(BPFFS))
		return 0;
	if (joined) {
		/* A private bpffs here would vanish with this command. */
		pr_warn("No bpffs mounted on %s in the host mount namespace\n",
			BPFFS);
		return -ENOENT;
	}
	/* The host itself has none: mount it, as systemd would. */
	if (mount("bpf", BPFFS, "bpf", 0, "mode=0700")) {
		err = -errno;
		pr_warn("Failed to mount bpffs on %s: %s\n", BPFFS,
			strerror(-err));
		return err;
	}
	return 0;
}

unsigned long long netns_cookie(void)
{
	unsigned long long cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
		cookie = 0;
	close(fd);
	return cookie;
}

unsigned long netns_id(void)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return 0;
	return (unsigned long)st.st_ino;
}
