/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * xnat's program on one port, as the kernel and libxdp report it: shared
 * by the loader's attach (loader.c) and its queries and detach
 * (port_xdp.c).
 */
#ifndef XNAT_PORT_XDP_H
#define XNAT_PORT_XDP_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <xdp/libxdp.h>

#define XNAT_PROG_NAME "xdp_xnat"
/* libxdp's dispatcher, under which programs share a port. */
#define LIBXDP_DISPATCHER_NAME "xdp_dispatcher"

/* What runs on IFINDEX: the multiprog in *MP (caller closes; NULL if
 * nothing; no fd leaked, see libxdp_fds.h) and xnat's program in *PROG, or NULL. -EBUSY: a foreign
 * program attached directly (no dispatcher). */
int port_find_xnat(int ifindex, struct xdp_multiprog **mp,
		   struct xdp_program **prog);
/* xdp_program__attach and __detach (flags 0), closing the program fds
 * libxdp 1.3.1 leaks in them (libxdp_fds.h). 0 or -errno. */
int port_xdp_attach(struct xdp_program *prog, int ifindex,
		    enum xdp_attach_mode mode);
int port_xdp_detach(struct xdp_program *prog, int ifindex,
		    enum xdp_attach_mode mode);
/* 1 if IFINDEX runs an XDP program attached directly that is neither
 * xnat's nor libxdp's dispatcher (its name into NAME): xnat cannot attach
 * beside it. 0 if not, -errno if the kernel cannot say. */
int port_xdp_foreign(int ifindex, char name[BPF_OBJ_NAME_LEN]);
/* Detach xnat from IFINDEX: 1 if it was there, 0 if not, -errno. */
int port_detach_xnat(__u32 ifindex);

#endif /* XNAT_PORT_XDP_H */
