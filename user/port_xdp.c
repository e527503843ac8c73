// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat's program on one port: finding it (directly attached or under
 * libxdp's dispatcher), detaching it, describing it. See port_xdp.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <xdp/libxdp.h>
#include "log.h"
#include "names.h"
#include "port_xdp.h"

/* A foreign program attached directly (no dispatcher) makes the port
 * unusable: the kernel holds one program per mode. */
int port_find_xnat(int ifindex, struct xdp_multiprog **mp,
		   struct xdp_program **prog)
{
	struct xdp_program *p;

	*prog = NULL;
	*mp = xdp_multiprog__get_from_ifindex(ifindex);
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
	err = xdp_program__detach(prog, ifindex,
				  xdp_multiprog__attach_mode(mp), 0);
	if (err)
		pr_warn("Failed to detach XDP program from iface %s: %s\n",
			ifname_of(ifindex, name), strerror(-err));
	xdp_multiprog__close(mp);
	return err ? err : 1;
}
