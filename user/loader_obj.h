/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The loader's first half (loader_obj.c): the data path's object, and its
 * maps checked, pinned or reused, unpinned; and the record of what an
 * apply changed, for its undo. loader.h, the attach, includes it.
 */
#ifndef XNAT_LOADER_OBJ_H
#define XNAT_LOADER_OBJ_H

#include <stddef.h>
#include "config.h"
#include "plan.h"
#include "port_restore.h"

struct xnat_bpf;
struct bpf_object;

/* What one apply of the loader changed, so that it can be undone. */
struct loader_undo {
	int first;                  /* nothing was pinned before */
	int n_replaced;             /* config-derived maps re-created for a
				       new layout: the old ones, to re-pin */
	struct {
		char name[32];
		int old_fd;
	} replaced[16];
	int n_created;              /* maps pinned afresh */
	char created[16][32];
	int n_attached;             /* ports that had no xnat before */
	__u32 attached[PLAN_MAX_PORTS];
	int n_restore;              /* ports whose older xnat came off (a
				       swap, a move to another mode) */
	struct port_restore restore[PLAN_MAX_PORTS];
	int slow_linked;            /* the slow path's slot was filled */
	int slow_old_fd;            /* and held this program (-1: none) */
};

/*
 * Can PLAN be loaded next to what is pinned here? A pinned state map
 * (flows, mappings, ports, peers, stats) of another layout or size is
 * refused, naming `xnat down`; config-derived maps of another layout are
 * re-created by loader_pin_maps. Checked before anything changes.
 */
int loader_check(const struct plan *plan, char err[CONFIG_ERR_LEN]);
/* Have every map of the object pinned: reuse what is pinned with the same
 * layout, create (and pin) the rest. Programs are not loaded. */
int loader_pin_maps(const struct plan *plan, struct loader_undo *u);
/* Unpin every map of this netns's router and remove its pin directory.
 * 0 (also when nothing was pinned) or the first -errno; every pin is
 * tried, each failure printed. */
int loader_unpin(void);

/* For loader.c: */

/* The object with the map sizes CFG asks for; NULL with errno set. */
struct xnat_bpf *skel_open(const struct config *cfg);
/* Where the map NAME of this netns's router is pinned. */
void pin_path(char *path, size_t len, const char *name);
/* Every map of OBJ onto its pinned map (loader_pin_maps made them all):
 * 0, or -errno. */
int reuse_pinned(struct bpf_object *obj);

#endif /* XNAT_LOADER_OBJ_H */
