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

/* 1 same, 0 another, -1 cannot tell (the link may not be read). */
static int same_ns(const char *pid, const char *ns)
{
	char a[64], b[64], path[64];
	ssize_t n, m;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	n = readlink(path, a, sizeof(a) - 1);
	snprintf(path, sizeof(path), "/proc/%s/ns/%s", pid, ns);
	m = readlink(path, b, sizeof(b) - 1);
	if (n < 0 || m < 0)
		return -1;
	a[n] = b[m] = 0;
	return !strcmp(a, b);
}

static void comm_of(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f || !fgets(buf, len, f))
		snprintf(buf, len, "?");
	buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
}

/*
 * The closest ancestor in another mount namespace: under `ip netns exec`
 * that is whoever ran ip, with the mounts ip hid. Only one in our own user
 * and PID namespaces qualifies: from inside a container, an ancestor
 * outside it (the host) is never joined. PID 1 is not asked first on
 * purpose: sandboxes often deny access to it, and the ancestor is the right
 * answer anyway. Returns its PID, 0 if none (or none whose namespaces we
 * may read), -EPERM if the closest one is outside our user or PID
 * namespace.
 */
static int ancestor_mnt_ns(void)
{
	char pid[16];
	int p;

	for (p = getppid(); p > 0; p = parent_of(p)) {
		snprintf(pid, sizeof(pid), "%d", p);
		switch (same_ns(pid, "mnt")) {
		case 1:
			continue;
		case -1:
			/* Its namespaces are hidden from us (a sandbox's
			 * supervisor, a non-dumpable init): not one we could
			 * join, so ours is the topmost we can use. */
			return 0;
		}
		if (same_ns(pid, "user") != 1 || same_ns(pid, "pid") != 1)
			return -EPERM;
		return p;
	}
	return 0;
}

/* Join the mount namespace of the ancestor, saying so. 1 if joined, 0 if
 * there is none, -errno (with a message) if it may not or cannot be. */
static int join_ancestor_mnt_ns(void)
{
	char path[64], comm[32];
	int p = ancestor_mnt_ns(), err;

	if (p == -EPERM) {
		pr_warn("No bpffs on %s here, and the mount namespace that has "
			"one belongs to another user or PID namespace (a "
			"container's host?): not joining it. Use xnat -n NAME, "
			"or mount a bpffs on %s that outlives this command\n",
			BPFFS, BPFFS);
		return -EPERM;
	}
	if (p == 0)
		return 0;
	comm_of(p, comm, sizeof(comm));
	pr_info("No bpffs on %s in this mount namespace (ip netns exec?): "
		"using the one of the mount namespace of pid %d (%s), where "
		"xnat's state outlives this command\n", BPFFS, p, comm);
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", p);
	err = join(path, CLONE_NEWNS);
	if (err)
		pr_warn("Failed to join the mount namespace of pid %d: %s; use "
			"xnat -n NAME instead\n", p, strerror(-err));
	return err ? err : 1;
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
	if (joined < 0)
		return joined;
	if (joined && cwd[0] && chdir(cwd))
		pr_debug("Cannot return to %s: %s\n", cwd, strerror(errno));
	if (is_bpffs(BPFFS))
		return 0;
	if (joined) {
		/* A private bpffs here would vanish with this command. */
		pr_warn("No bpffs mounted on %s in that mount namespace either; "
			"mount one there (mount -t bpf bpf %s)\n", BPFFS, BPFFS);
		return -ENOENT;
	}
	/* Nobody above us has another view: this is the host's (or the
	 * container's own) mount namespace. Mount it, as systemd would. */
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
