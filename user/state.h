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
#include <stddef.h>
#include <stdint.h>

#define STATE_MAX_SYSCTLS 24
#define STATE_MAX_IFACES 64

struct saved_sysctl {
	char path[96];   /* under /proc/sys */
	char value[64];  /* what it was before xnat up */
};

struct xnat_state {
	int mode;                          /* enum router_mode */
	char config_path[256];             /* the operator's file */
	/* Bumped by every command that changes the router: `xnat run` sees
	 * that another command applied a config since its own. */
	unsigned long generation;
	/* Drawn by each commit that started the router anew, on maps of its
	 * own (a first `up`, a mode switch), kept by reloads: after `down`,
	 * the next router's generations count from 1 again, and only this
	 * tells them from the ones `xnat run` applied. 0 in a record from
	 * before it. */
	unsigned long long instance;
	int n_ifaces;
	char ifaces[STATE_MAX_IFACES][IF_NAMESIZE];    /* where xnat attached, xdp mode */
	int n_sysctls;
	struct saved_sysctl sysctls[STATE_MAX_SYSCTLS];
	/* For `xnat status`, kept by state_save(): when the router came up
	 * (kept across reloads; 0 makes it now), when it was last loaded
	 * (now), in Unix seconds, and a hash of the config as applied (set
	 * by the caller: state_staged_hash()), to tell an edited file from
	 * the running config. */
	long long up_since;
	long long loaded_at;
	unsigned long long config_hash;
	/* What runs on the ports (loader_prog_id): a reload that keeps it
	 * and the ports needs no program swap. */
	unsigned long long prog_hash;
};

/* The record's directory for the current network namespace, created on
 * demand by save; the pins are pins.h's. */
const char *state_run_dir(void);   /* /run/xnat/<ino> */

/* The config as applied, copied at commit: what a failed reload restores
 * (the operator's file may have been edited since). */
const char *state_applied_config(void);  /* /run/xnat/<ino>/applied.ini */

/*
 * Serialize the commands that change this router: an exclusive flock on
 * /run/xnat/<ino>/lock, waited for up to WAIT_S seconds. Returns the fd to
 * pass to state_unlock, or -errno (-EWOULDBLOCK: still held by another).
 */
int state_lock(int wait_s);
void state_unlock(int fd);

/* 0 on success, -ENOENT when xnat is not up here, -errno otherwise. */
int state_load(struct xnat_state *st);
/* A new, non-zero instance number (struct xnat_state's instance). */
unsigned long long state_new_instance(void);
int state_save(const struct xnat_state *st);
/*
 * The config as applied, in two steps around state_save (the commit
 * point): stage a copy of PATH next to state_applied_config(), then
 * publish it (an atomic rename), or discard it when the record failed.
 * state_staged_hash() is the staged copy's state_file_hash, for the
 * record's config_hash.
 */
int state_stage_config(const char *path);
unsigned long long state_staged_hash(void);
int state_publish_config(void);
void state_discard_config(void);
/* FNV-1a of the file at PATH, 0 if it cannot be read. */
unsigned long long state_file_hash(const char *path);
/*
 * Remove the record, the pin directory (if empty), then the lock file and
 * the record's directory: the last step of a command that holds the lock
 * and ends the router (`down`, a first `up` that failed), which unlocks
 * right after. Never for a teardown in place (a mode switch), which keeps
 * the lock it holds.
 */
int state_remove(void);

/*
 * Set a sysctl, remembering its old value in ST the first time. Restoring
 * puts back every remembered value and forgets it; one that cannot be
 * written back stays in ST, and the first -errno is returned (each
 * failure printed), 0 when all are back.
 */
int state_sysctl_set(struct xnat_state *st, const char *path, const char *value);
int state_sysctl_restore(struct xnat_state *st);


#endif /* XNAT_STATE_H */
