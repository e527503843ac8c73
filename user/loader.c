// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loader: the slow path into its slot, attach through libxdp with its
 * direct-attach fallback, hitless replace on reload, undo, detach. The
 * object and its pinned maps are loader_obj.c's. See loader.h for the why.
 */
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "xnat.skel.h"
#include "iface.h"
#include "log.h"
#include "loader.h"
#include "loader_obj.h"
#include "pins.h"
#include "port_restore.h"
#include "port_xdp.h"
#include "fsutil.h"
#include "names.h"

static enum xdp_attach_mode libxdp_mode(enum xdp_attach a)
{
	return a == XDP_ATTACH_NATIVE  ? XDP_MODE_NATIVE :
	       a == XDP_ATTACH_GENERIC ? XDP_MODE_SKB :
					 XDP_MODE_UNSPEC;
}

/*
 * Attach the freshly loaded program FD to a port that runs an older xnat
 * directly: one atomic swap, no window without a program.
 */
static int replace_legacy(int ifindex, struct xdp_multiprog *mp,
			  struct xdp_program *old, int fd)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts,
		    .old_prog_fd = xdp_program__fd(old));
	__u32 flags = xdp_legacy_flags(xdp_multiprog__attach_mode(mp));
	char name[IF_NAMESIZE];
	int err;

	err = bpf_xdp_attach(ifindex, fd, flags | XDP_FLAGS_REPLACE, &opts);
	if (err)
		pr_warn("Failed to replace XDP program on iface %s: %s\n",
			ifname_of(ifindex, name), strerror(-err));
	return err;
}

struct port {
	__u32 ifindex;
	struct xdp_multiprog *mp;
	struct xdp_program *old;   /* xnat running there now, or NULL */
	int move;                  /* OLD runs in another mode than wanted */
};

/* The ports of PLAN, with what runs on each now. `auto` (MODE unspec)
 * moves no port: it keeps the mode the kernel chose. */
static int collect_ports(const struct plan *plan, enum xdp_attach_mode mode,
			 struct port *ports)
{
	int i, err;

	for (i = 0; i < plan->n_ports; i++) {
		ports[i].ifindex = plan->ports[i].ifindex;
		err = port_find_xnat(ports[i].ifindex, &ports[i].mp,
				    &ports[i].old);
		if (err) {
			pr_warn("Iface %s has another XDP program attached "
				"without a dispatcher; detach it first\n",
				plan->ports[i].name);
			return err;
		}
		ports[i].move = ports[i].old && mode != XDP_MODE_UNSPEC &&
				xdp_multiprog__attach_mode(ports[i].mp) != mode;
	}
	return plan->n_ports;
}

/* Note the older xnat on P, about to be swapped out, for the undo. */
static int note_old(struct port *p, struct loader_undo *u)
{
	int err = port_restore_note(&u->restore[u->n_restore], p->ifindex,
				    p->mp, p->old);

	u->n_restore += !err;
	return err;
}

/* It was not swapped out after all. */
static void unnote_old(struct loader_undo *u)
{
	port_restore_close(&u->restore[--u->n_restore]);
}

/* P runs the older xnat in another mode: take it off (noted for the
 * undo); P is then a port without xnat. */
static int take_off(struct port *p, struct loader_undo *u)
{
	int err = port_restore_take_off(&u->restore[u->n_restore], p->ifindex,
					p->mp, p->old);

	if (err)
		return err;
	u->n_restore++;
	p->old = NULL;
	return 0;
}

static void release_ports(struct port *ports, int n)
{
	for (int i = 0; i < n; i++)
		xdp_multiprog__close(ports[i].mp);
}

static int attach_err(__u32 ifindex, int err, enum xdp_attach_mode mode)
{
	char name[IF_NAMESIZE];

	pr_warn("Failed to attach XDP program to iface %s%s: %s\n",
		ifname_of(ifindex, name),
		mode == XDP_MODE_NATIVE ? " in native mode (xdp = native)" :
		mode == XDP_MODE_SKB ? " in generic mode (xdp = generic)" : "",
		strerror(-err));
	return err;
}

/* One port, directly: a port running xnat in the wanted mode swaps
 * atomically; the others get the program in that mode. */
static int legacy_port(struct port *p, int fd, enum xdp_attach_mode mode,
		       struct loader_undo *u)
{
	int err;

	if (p->move && (err = take_off(p, u)))
		return err;
	if (p->old) {
		if ((err = note_old(p, u)))
			return err;
		err = replace_legacy(p->ifindex, p->mp, p->old, fd);
		if (err)
			unnote_old(u);
		return err;
	}
	err = bpf_xdp_attach(p->ifindex, fd, xdp_legacy_flags(mode) |
			     XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err)
		return attach_err(p->ifindex, err, mode);
	u->attached[u->n_attached++] = p->ifindex;
	return 0;
}

/* Running directly attached somewhere: load as a plain XDP program and
 * swap it in port by port (new ports first). */
static int attach_legacy(struct xnat_bpf *skel, enum xdp_attach_mode mode,
			 struct port *ports, int n, struct loader_undo *u)
{
	int i, pass, fd, err = xnat_bpf__load(skel);

	if (err) {
		pr_warn("Failed to load XDP object: %s\n", strerror(-err));
		return err;
	}
	fd = bpf_program__fd(skel->progs.xdp_xnat);
	for (pass = 0; pass < 2 && !err; pass++)
		for (i = 0; i < n && !err; i++)
			if (!!ports[i].old == pass)
				err = legacy_port(&ports[i], fd, mode, u);
	return err;
}

/* One port through libxdp: new program in, then the old one out, each an
 * atomic swap of the port's dispatcher; a port running xnat in another
 * mode is emptied first. */
static int libxdp_port(struct port *p, struct xdp_program *prog,
		       enum xdp_attach_mode mode, struct loader_undo *u)
{
	int err;

	if (p->move && (err = take_off(p, u)))
		return err;
	if (p->old && (err = note_old(p, u)))
		return err;
	err = port_xdp_attach(prog, p->ifindex, mode);
	if (err) {
		if (p->old)
			unnote_old(u);
		return attach_err(p->ifindex, err, mode);
	}
	if (!p->old) {
		u->attached[u->n_attached++] = p->ifindex;
		return 0;
	}
	port_xdp_detach(p->old, p->ifindex, xdp_multiprog__attach_mode(p->mp));
	return 0;
}

/* Through libxdp's dispatcher, new ports first. */
static int attach_libxdp(struct xnat_bpf *skel, enum xdp_attach_mode mode,
			 struct port *ports, int n, struct loader_undo *u)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, opts, .obj = skel->obj,
			    .prog_name = XNAT_PROG_NAME);
	struct xdp_program *prog = xdp_program__create(&opts);
	int i, pass, err = libxdp_get_error(prog);

	if (err) {
		pr_warn("Failed to create libxdp program: %s\n", strerror(-err));
		return err;
	}
	for (pass = 0; pass < 2 && !err; pass++)
		for (i = 0; i < n && !err; i++)
			if (!!ports[i].old == pass)
				err = libxdp_port(&ports[i], prog, mode, u);
	/* The kernel holds the attachment; our handle can go. The object
	 * belongs to the skeleton, which the caller destroys. */
	xdp_program__close(prog);
	return err;
}


int loader_slow_path_link(struct bpf_object *obj, int *old_fd)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, MAP_SLOW_PATH);
	struct bpf_program *prog =
		bpf_object__find_program_by_name(obj, "xdp_xnat_slow");
	int map_fd = map ? bpf_map__fd(map) : -1;
	int fd = prog ? bpf_program__fd(prog) : -1;
	__u32 zero = 0, id;

	if (map_fd < 0 || fd < 0)
		return -ENOENT;

	if (old_fd) {
		*old_fd = -1;
		if (!bpf_map_lookup_elem(map_fd, &zero, &id))
			*old_fd = bpf_prog_get_fd_by_id(id);
	}
	if (bpf_map_update_elem(map_fd, &zero, &fd, BPF_ANY))
		return -errno;
	return 0;
}

/*
 * The slow path into its slot before the program that tail-calls it
 * attaches anywhere: a new flow must never find the slot empty, or it
 * would go up to the kernel, which would NAT it on its own. Loaded from a
 * skeleton of its own on the pinned maps (libxdp loads the other one
 * itself, at attach); the slot's previous program is kept in U. Ports
 * still running an older copy use this slow path from now on: it reads
 * nothing from them but the packet.
 */
static int link_slow_path(const struct plan *plan, struct loader_undo *u)
{
	struct xnat_bpf *skel = skel_open(&plan->cfg);
	int err;

	if (!skel)
		return -errno;
	err = reuse_pinned(skel->obj);
	bpf_program__set_autoload(skel->progs.xdp_xnat, false);
	if (!err)
		err = xnat_bpf__load(skel);
	if (!err)
		err = loader_slow_path_link(skel->obj, &u->slow_old_fd);
	if (err)
		pr_warn("Failed to load the slow path: %s\n", strerror(-err));
	else
		u->slow_linked = 1;
	xnat_bpf__destroy(skel);
	return err;
}

/* The slot as it was before link_slow_path: the old program, or empty. */
static void unlink_slow_path(struct loader_undo *u)
{
	char path[160];
	__u32 zero = 0;
	int fd;

	if (!u->slow_linked)
		return;
	pin_path(path, sizeof(path), MAP_SLOW_PATH);
	fd = bpf_obj_get(path);
	if (fd >= 0 && (u->slow_old_fd >= 0 ?
			bpf_map_update_elem(fd, &zero, &u->slow_old_fd, BPF_ANY) :
			bpf_map_delete_elem(fd, &zero)) && errno != ENOENT)
		pr_warn("Failed to put the old slow path back: %s\n",
			strerror(errno));
	if (fd >= 0)
		close(fd);
}

/*
 * xnat_port_active all unknown (bpf/port_active.h) before a program is
 * loaded: a program of an older xnat that ran meanwhile may have cleared
 * marks that the array still says are set. Zero is never wrong there;
 * the data path sets the marks again as they are made. One memset of the
 * mapped array, whatever the pool's size.
 */
int loader_port_active_clear(const struct bpf_map *map)
{
	size_t len = (size_t)bpf_map__max_entries(map) *
		     bpf_map__value_size(map);
	int fd = bpf_map__fd(map);
	void *mem;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	memset(mem, 0, len);
	munmap(mem, len);
	return 0;
}

/*
 * Every port that had an older xnat taken off is noted in U (its program
 * kept open): when a later port fails, loader_undo puts each back, in its
 * old mode, so a reload completes on every port or on none.
 */
int loader_attach(const struct plan *plan, struct loader_undo *u)
{
	struct port ports[PLAN_MAX_PORTS] = {};
	enum xdp_attach_mode mode = libxdp_mode(plan->cfg.xdp_attach);
	struct xnat_bpf *skel = skel_open(&plan->cfg);
	int i, n, legacy = 0, err;

	if (!skel) {
		err = -errno;
		pr_warn("Failed to open XDP object: %s\n", strerror(-err));
		return err;
	}
	err = reuse_pinned(skel->obj);
	if (err) {
		pr_warn("Failed to open the pinned maps in %s: %s\n",
			pins_dir(), strerror(-err));
		goto out;
	}
	err = loader_port_active_clear(skel->maps.xnat_port_active);
	if (err) {
		pr_warn("Failed to clear %s: %s\n", MAP_PORT_ACTIVE,
			strerror(-err));
		goto out;
	}
	err = link_slow_path(plan, u);
	if (err)
		goto out;
	bpf_program__set_autoload(skel->progs.xdp_xnat_slow, false);
	n = collect_ports(plan, mode, ports);
	if (n < 0) {
		err = n;
		goto out;
	}
	for (i = 0; i < n; i++)
		legacy |= ports[i].old && xdp_multiprog__is_legacy(ports[i].mp);
	err = legacy ? attach_legacy(skel, mode, ports, n, u) :
		       attach_libxdp(skel, mode, ports, n, u);
	release_ports(ports, n);
out:
	/* Destroying the skeleton closes our fds only: the programs stay
	 * attached and the maps stay pinned. */
	xnat_bpf__destroy(skel);
	return err;
}

unsigned long long loader_prog_id(const struct plan *plan)
{
	unsigned long long h = 0xcbf29ce484222325ULL; /* FNV-1a */
	const unsigned char *b;
	size_t n;

	b = xnat_bpf__elf_bytes(&n);
	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	h = (h ^ plan->cfg.flows_max) * 0x100000001b3ULL;
	/* Another attach mode needs the program attached anew too. */
	return (h ^ plan->cfg.xdp_attach) * 0x100000001b3ULL;
}

int loader_check_ports(const struct plan *plan, char err[CONFIG_ERR_LEN])
{
	char name[BPF_OBJ_NAME_LEN];
	int i, ret;

	for (i = 0; i < plan->n_ports; i++) {
		ret = port_xdp_foreign(plan->ports[i].ifindex, name);
		if (ret < 0) {
			snprintf(err, CONFIG_ERR_LEN, "iface %s: cannot query "
				 "its XDP program: %s", plan->ports[i].name,
				 strerror(-ret));
			return ret;
		}
		if (ret) {
			snprintf(err, CONFIG_ERR_LEN, "%s: iface %s runs "
				 "another XDP program (%s) attached directly, "
				 "which xnat cannot share the port with; detach "
				 "it first (ip link set dev %s xdp off)",
				 plan->cfg.path, plan->ports[i].name, name,
				 plan->ports[i].name);
			return -EINVAL;
		}
	}
	return 0;
}

int loader_ports_attached(const struct plan *plan)
{
	struct xdp_multiprog *mp;
	struct xdp_program *prog;
	int i, ok = 1;

	for (i = 0; i < plan->n_ports && ok; i++) {
		ok = !port_find_xnat(plan->ports[i].ifindex, &mp, &prog) && prog;
		xdp_multiprog__close(mp);
	}
	return ok;
}

int loader_detach(char names[][IF_NAMESIZE], int n)
{
	struct if_nameindex *all = NULL;
	int i, ret, count = 0, err = 0;
	__u32 ifindex;

	if (n < 0) {
		all = if_nameindex();
		if (!all)
			return -errno;
		for (n = 0; all[n].if_index; n++)
			;
	}
	for (i = 0; i < n; i++) {
		ifindex = all ? all[i].if_index : if_nametoindex(names[i]);
		if (!ifindex)
			continue; /* the port is gone, and its program with it */
		ret = port_detach_xnat(ifindex);
		if (ret < 0)
			err = ret;
		else
			count += ret;
	}
	if (all)
		if_freenameindex(all);
	return err ? err : count;
}

void loader_undo(struct loader_undo *u)
{
	char path[160];
	int i;

	for (i = u->n_attached - 1; i >= 0; i--)
		port_detach_xnat(u->attached[i]);
	u->n_attached = 0;
	/* The new program off (a swapped port), the old one back on. */
	for (i = u->n_restore - 1; i >= 0; i--) {
		port_detach_xnat(u->restore[i].ifindex);
		port_restore_put_back(&u->restore[i]);
	}
	unlink_slow_path(u);
	if (u->first) {
		loader_unpin();
		loader_undo_forget(u);
		return;
	}
	for (i = 0; i < u->n_created; i++) {
		pin_path(path, sizeof(path), u->created[i]);
		unlink(path);
	}
	for (i = 0; i < u->n_replaced; i++) {
		pin_path(path, sizeof(path), u->replaced[i].name);
		unlink(path);
		if (bpf_obj_pin(u->replaced[i].old_fd, path))
			pr_warn("Failed to re-pin the old %s: %s\n", path,
				strerror(errno));
	}
	loader_undo_forget(u);
}

void loader_undo_forget(struct loader_undo *u)
{
	for (int i = 0; i < u->n_replaced; i++)
		close(u->replaced[i].old_fd);
	for (int i = 0; i < u->n_restore; i++)
		port_restore_close(&u->restore[i]);
	if (u->slow_linked && u->slow_old_fd >= 0)
		close(u->slow_old_fd);
	u->slow_linked = 0;
	u->n_restore = 0;
	u->n_replaced = 0;
	u->n_created = 0;
	u->n_attached = 0;
}

int loader_attach_info(int ifindex, struct attach_info *info)
{
	struct xdp_multiprog *mp;
	struct xdp_program *prog;
	enum xdp_attach_mode mode;

	port_find_xnat(ifindex, &mp, &prog);
	if (!prog) {
		xdp_multiprog__close(mp);
		return -ENOENT;
	}
	mode = xdp_multiprog__attach_mode(mp);
	snprintf(info->method, sizeof(info->method), "%s",
		 xdp_multiprog__is_legacy(mp) ? "legacy" : "libxdp");
	snprintf(info->mode, sizeof(info->mode), "%s",
		 mode == XDP_MODE_SKB ? "generic" :
		 mode == XDP_MODE_HW  ? "hw" : "native");
	info->prog_id = xdp_program__id(prog);
	xdp_multiprog__close(mp);
	return 0;
}
