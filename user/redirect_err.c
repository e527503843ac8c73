// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loading and pinning the drop_redirect counters (see redirect_err.h). The
 * links are pinned as xnat_redirect_err and xnat_devmap_xmit in the pin
 * directory: they stay attached while pinned, and `xnat down` removes them
 * with the maps.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "redirect_err.skel.h"
#include "log.h"
#include "netns.h"
#include "pins.h"
#include "redirect_err.h"

#define LINK_PIN "xnat_redirect_err"
#define LINK_PIN_XMIT "xnat_devmap_xmit"

static int attach_pin(struct bpf_program *prog, const char *name)
{
	struct bpf_link *link = bpf_program__attach(prog);
	char path[160];
	int err = libbpf_get_error(link);

	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%s", pins_dir(), name);
	err = bpf_link__pin(link, path);
	bpf_link__destroy(link); /* the pin holds it */
	return err;
}

static int load_and_pin(struct redirect_err_bpf *skel)
{
	int fd = pins_map_open(MAP_STATS), err;

	if (fd < 0)
		return fd;
	skel->rodata->router_netns = netns_id();
	err = bpf_map__reuse_fd(skel->maps.xnat_stats, fd);
	close(fd);
	if (!err)
		err = redirect_err_bpf__load(skel);
	if (!err)
		err = attach_pin(skel->progs.xnat_redirect_err, LINK_PIN);
	if (!err)
		err = attach_pin(skel->progs.xnat_devmap_xmit, LINK_PIN_XMIT);
	return err;
}

void redirect_err_detach(void)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", pins_dir(), LINK_PIN_XMIT);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", pins_dir(), LINK_PIN);
	unlink(path);
}

int redirect_err_attach(void)
{
	struct redirect_err_bpf *skel;
	char path[160];
	int fd, err;

	/* The second link is pinned last: both are there, or neither
	 * counts as done (a half is unpinned below and made again). */
	snprintf(path, sizeof(path), "%s/%s", pins_dir(), LINK_PIN_XMIT);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", pins_dir(), LINK_PIN);
	unlink(path);
	skel = redirect_err_bpf__open();
	err = skel ? load_and_pin(skel) : -errno;
	redirect_err_bpf__destroy(skel);
	if (err)
		pr_warn("Warning: cannot count failed redirects (tracepoints "
			"xdp_redirect_err, xdp_devmap_xmit): %s; drop_redirect "
			"shows only what the program sees\n", strerror(-err));
	return err;
}
