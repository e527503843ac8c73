/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a port ran before a reload took its xnat program off (a swap to the
 * new program, or a move to another attach mode), so that a failed reload
 * can put exactly that program back in exactly that mode. The loader notes
 * one per port as it goes (loader.c) and replays them on undo.
 */
#ifndef XNAT_PORT_RESTORE_H
#define XNAT_PORT_RESTORE_H

#include <linux/types.h>
#include <xdp/libxdp.h>

struct port_restore {
	__u32 ifindex;
	int fd;                      /* our own reference to the old program */
	enum xdp_attach_mode mode;   /* the mode it ran in */
	int legacy;                  /* attached directly, not by libxdp */
};

/* The XDP_FLAGS_* mode bit of a direct attach in MODE (0: the kernel's
 * choice). */
__u32 xdp_legacy_flags(enum xdp_attach_mode mode);
/* Note that PROG, attached to IFINDEX in MP's mode, is about to come off.
 * Takes a reference of its own (the multiprog closes). 0 or -errno. */
int port_restore_note(struct port_restore *r, __u32 ifindex,
		      struct xdp_multiprog *mp, struct xdp_program *prog);
/* Note PROG, attached to IFINDEX in MP's mode, and take it off: the port
 * moves to another mode. 0 or -errno (printed; then nothing noted). */
int port_restore_take_off(struct port_restore *r, __u32 ifindex,
			  struct xdp_multiprog *mp, struct xdp_program *prog);
/* Attach the noted program again (the port must run no xnat now). */
int port_restore_put_back(const struct port_restore *r);
void port_restore_close(struct port_restore *r);

#endif /* XNAT_PORT_RESTORE_H */
