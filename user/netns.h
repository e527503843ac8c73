/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Getting into the router's network namespace with the host's bpffs in
 * view. `ip netns exec` gives a private mount namespace where /sys/fs/bpf is
 * missing, and a bpffs mounted there dies with the command: pins must live
 * in a bpffs that outlives it, so xnat joins the mount namespace of the
 * ancestor that ran `ip` (keeping its network namespace), as `nsenter
 * --net` would have left it, and says so. It never joins one outside its
 * own user and PID namespaces (a container's host).
 */
#ifndef XNAT_NETNS_H
#define XNAT_NETNS_H

/* Enter /run/netns/NAME (NULL: stay). -errno with a message printed. */
int netns_enter(const char *name);
/* Make /sys/fs/bpf the host's bpffs. -errno with a message printed. */
int netns_bpffs_ready(void);
/* Inode of the current network namespace: names the router's state. */
unsigned long netns_id(void);
/* The namespace's cookie: unlike its inode, never reused while the machine
 * runs, so state left by a deleted namespace is told from ours. 0 if the
 * kernel has none (before 5.14). */
unsigned long long netns_cookie(void);

#endif /* XNAT_NETNS_H */
