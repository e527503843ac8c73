// SPDX-License-Identifier: GPL-2.0-only
/*
 * Putting back the program a failed reload took off a port (see
 * port_restore.h). The old program stays loaded as long as we hold its fd,
 * so it can be attached again as it was, maps and all: no reload of the
 * old binary's object is needed.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "iface.h"
#include "log.h"
#include "names.h"
#include "port_restore.h"
#include "port_xdp.h"

__u32 xdp_legacy_flags(enum xdp_attach_mode mode)
{
	return mode == XDP_MODE_NATIVE ? XDP_FLAGS_DRV_MODE :
	       mode == XDP_MODE_SKB    ? XDP_FLAGS_SKB_MODE : 0;
}

int port_restore_note(struct port_restore *r, __u32 ifindex,
		      struct xdp_multiprog *mp, struct xdp_program *prog)
{
	r->fd = dup(xdp_program__fd(prog));
	if (r->fd < 0) {
		pr_warn("Cannot keep the old XDP program: %s\n",
			strerror(errno));
		return -errno;
	}
	r->ifindex = ifindex;
	r->mode = xdp_multiprog__attach_mode(mp);
	r->legacy = xdp_multiprog__is_legacy(mp);
	return 0;
}

/* The kernel runs one attach mode at a time on a port: a move to another
 * takes the old program off first, a short while without XDP (the kernel
 * carries the port's packets meanwhile). */
int port_restore_take_off(struct port_restore *r, __u32 ifindex,
			  struct xdp_multiprog *mp, struct xdp_program *prog)
{
	enum xdp_attach_mode mode = xdp_multiprog__attach_mode(mp);
	char name[IF_NAMESIZE];
	int err = port_restore_note(r, ifindex, mp, prog);

	if (err)
		return err;
	err = port_xdp_detach(prog, ifindex, mode);
	if (err) {
		pr_warn("Failed to detach XDP program from iface %s: %s\n",
			ifname_of(ifindex, name), strerror(-err));
		port_restore_close(r);
		return err;
	}
	pr_info("Iface %s: XDP detached from %s mode, to attach in the "
		"config's\n",
		ifname_of(ifindex, name),
		mode == XDP_MODE_SKB ? "generic" : "native");
	return 0;
}

/* Directly attached: the plain XDP program goes back the same way. Under
 * libxdp's dispatcher the old program is a component (freplace) program:
 * libxdp builds a dispatcher for it again. */
int port_restore_put_back(const struct port_restore *r)
{
	struct xdp_program *prog;
	char name[IF_NAMESIZE];
	int fd, err;

	if (r->legacy) {
		err = bpf_xdp_attach(r->ifindex, r->fd,
				     xdp_legacy_flags(r->mode) |
				     XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	} else {
		/* Older libxdp owns the fd it is given (a copy of ours);
		 * 1.3.1 owns a dup of its own, and the copy stays ours. */
		fd = dup(r->fd);
		prog = xdp_program__from_fd(fd);
		err = libxdp_get_error(prog);
		if (fd >= 0 && (err || xdp_program__fd(prog) != fd))
			close(fd);
		if (!err) {
			err = port_xdp_attach(prog, r->ifindex, r->mode);
			xdp_program__close(prog);
		}
	}
	if (err)
		pr_warn("Could not put the old XDP program back on iface %s: "
			"%s\n", ifname_of(r->ifindex, name), strerror(-err));
	return err;
}

void port_restore_close(struct port_restore *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}
