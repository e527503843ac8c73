// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat's program on one port: finding it (directly attached or under
 * libxdp's dispatcher), detaching it, describing it. See port_xdp.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "libxdp_fds.h"
#include "log.h"
#include "names.h"
#include "port_xdp.h"

/* The fds the programs of MP hold, into KEEP (room for N). */
static int multiprog_fds(struct xdp_multiprog *mp, int *keep, int n)
{
	struct xdp_program *p;
	int k = 0;

	keep[k++] = xdp_program__fd(xdp_multiprog__main_prog(mp));
	keep[k++] = xdp_program__fd(xdp_multiprog__hw_prog(mp));
	for (p = xdp_multiprog__next_prog(NULL, mp); p && k < n;
	     p = xdp_multiprog__next_prog(p, mp))
		keep[k++] = xdp_program__fd(p);
	return k;
}

/* xdp_multiprog__get_from_ifindex, without the fds it leaks
 * (libxdp_fds.h). */
static struct xdp_multiprog *multiprog_get(int ifindex)
{
	int keep[PROG_FDS_MAX], n = 0;
	struct xdp_multiprog *mp;
	struct prog_fds before;

	prog_fds_before(&before);
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (!libxdp_get_error(mp))
		n = multiprog_fds(mp, keep, PROG_FDS_MAX);
	prog_fds_close_new(&before, keep, n);
	return mp;
}

/* The fds of PROG's own object (its sibling programs loaded with it, e.g.
 * by an attach), and PROG's, into KEEP (room for N). */
static int object_fds(struct xdp_program *prog, int *keep, int n)
{
	struct bpf_object *obj = xdp_program__bpf_obj(prog);
	struct bpf_program *p;
	int k = 0;

	keep[k++] = xdp_program__fd(prog);
	if (obj)
		bpf_object__for_each_program(p, obj)
			if (k < n)
				keep[k++] = bpf_program__fd(p);
	return k;
}

/* libxdp's xdp_program__attach or __detach: the same signature. */
typedef int (*xdp_attach_fn)(struct xdp_program *prog, int ifindex,
			     enum xdp_attach_mode mode, unsigned int flags);

/* CALL (flags 0), closing the program fds it leaks but those PROG's object
 * holds (libxdp_fds.h). */
static int without_leaked_fds(xdp_attach_fn call, struct xdp_program *prog,
			      int ifindex, enum xdp_attach_mode mode)
{
	int keep[PROG_FDS_MAX], err;
	struct prog_fds before;

	prog_fds_before(&before);
	err = call(prog, ifindex, mode, 0);
	prog_fds_close_new(&before, keep, object_fds(prog, keep, PROG_FDS_MAX));
	return err;
}

int port_xdp_attach(struct xdp_program *prog, int ifindex,
		    enum xdp_attach_mode mode)
{
	return without_leaked_fds(xdp_program__attach, prog, ifindex, mode);
}

int port_xdp_detach(struct xdp_program *prog, int ifindex,
		    enum xdp_attach_mode mode)
{
	return without_leaked_fds(xdp_program__detach, prog, ifindex, mode);
}

/* A foreign program attached directly (no dispatcher) makes the port
 * unusable: the kernel holds one program per mode. */
int port_find_xnat(int ifindex, struct xdp_multiprog **mp,
		   struct xdp_program **prog)
{
	struct xdp_program *p;

	*prog = NULL;
	*mp = multiprog_get(ifindex);
	if (libxdp_get_error(*mp)) {
		*mp = NULL;
		return 0;
	}
	if (xdp_multiprog__is_legacy(*mp)) {
		p = xdp_multiprog__main_prog(*mp);
		if (p && strcmp(xdp_program__name(p), XNAT_PROG_NAME))
			return -EBUSY;
		*prog = p;
		return 0;
	}
	for (p = xdp_multiprog__next_prog(NULL, *mp); p;
	     p = xdp_multiprog__next_prog(p, *mp))
		if (!strcmp(xdp_program__name(p), XNAT_PROG_NAME))
			*prog = p;
	return 0;
}

/* The name of program ID, into NAME; 0 or -errno. */
static int prog_name(__u32 id, char name[BPF_OBJ_NAME_LEN])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id), err = 0;

	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	close(fd);
	snprintf(name, BPF_OBJ_NAME_LEN, "%s", info.name);
	return err;
}

/* By the kernel's word alone (bpf_xdp_query), not libxdp's: a query here
 * opens nothing that stays open. */
int port_xdp_foreign(int ifindex, char name[BPF_OBJ_NAME_LEN])
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	__u32 ids[2];
	int i, err = bpf_xdp_query(ifindex, 0, &q);

	if (err)
		return err == -ENODEV ? 0 : err;
	ids[0] = q.drv_prog_id;
	ids[1] = q.skb_prog_id;
	for (i = 0; i < 2; i++) {
		if (!ids[i])
			continue;
		err = prog_name(ids[i], name);
		if (err == -ENOENT)
			continue; /* detached meanwhile */
		if (err)
			return err;
		if (strcmp(name, XNAT_PROG_NAME) &&
		    strcmp(name, LIBXDP_DISPATCHER_NAME))
			return 1;
	}
	return 0;
}

int port_detach_xnat(__u32 ifindex)
{
	struct xdp_multiprog *mp;
	struct xdp_program *prog;
	char name[IF_NAMESIZE];
	int err;

	if (port_find_xnat(ifindex, &mp, &prog) || !prog) {
		xdp_multiprog__close(mp);
		return 0;
	}
	err = port_xdp_detach(prog, ifindex, xdp_multiprog__attach_mode(mp));
	if (err)
		pr_warn("Failed to detach XDP program from iface %s: %s\n",
			ifname_of(ifindex, name), strerror(-err));
	xdp_multiprog__close(mp);
	return err ? err : 1;
}
