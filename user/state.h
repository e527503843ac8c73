/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `xnat up` changed, so that `xnat down` (possibly run much later, from
 * another shell or under `ip netns exec`) can undo exactly that. Kept as a
 * small text file in /run/xnat/<netns inode>/state next to the map pins in
 * /sys/fs/bpf/xnat/<netns inode>/; the netns inode names the router the same
 * way whether we got there with --netns or with `ip netns exec`.
 */
#ifndef XNAT_STATE_H
#define XNAT_STATE_H

#include <net/if.h>
#include <stdint.h>

#define STATE_MAX_SYSCTLS 24
#define STATE_MAX_IFACES 64

struct saved_sysctl {
	char path[96];   /* under /proc/sys */
	char value[64];  /* what it was before xnat up */
};

struct xnat_state {
	int mode;                          /* enum router_mode */
	char config_path[256];
	int n_ifaces;
	char ifaces[STATE_MAX_IFACES][IF_NAMESIZE];    /* where xnat attached, xdp mode */
	int n_sysctls;
	struct saved_sysctl sysctls[STATE_MAX_SYSCTLS];
};

/* The record's directory for the current network namespace, created on
 * demand by save; the pins are pins.h's. */
const char *state_run_dir(void);   /* /run/xnat/<ino> */

/* 0 on success, -ENOENT when xnat is not up here, -errno otherwise. */
int state_load(struct xnat_state *st);
int state_save(const struct xnat_state *st);
/* Remove the state file, its directory and the pin directory (if empty). */
int state_remove(void);

/*
 * Set a sysctl, remembering its old value in ST the first time. Restoring
 * puts back every remembered value.
 */
int state_sysctl_set(struct xnat_state *st, const char *path, const char *value);
void state_sysctl_restore(struct xnat_state *st);

#endif /* XNAT_STATE_H */
