// SPDX-License-Identifier: GPL-2.0-only
/*
 * The apply step of `xnat up` (see apply.h). Order: the kernel first (it
 * must handle what XDP passes up from the first packet on; nft replaces
 * its table in one transaction), then the sysctls (forwarding last), then
 * the maps, filled before any new port runs the program, then the ports.
 * Each step notes what it changed in struct undo; undo() walks it back.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "apply.h"
#include "kernel_mode.h"
#include "loader.h"
#include "log.h"
#include "maps.h"
#include "redirect_err.h"
#include "sysctl.h"

static int step_nft(const struct plan *plan, struct apply_undo *u, char *err)
{
	int ret = kernel_nft_apply(plan->kernel.nft, err);

	u->nft = !ret;
	return ret;
}

static int step_sysctls(const struct plan *plan, struct xnat_state *st,
			struct apply_undo *u, char *err)
{
	const struct kernel_sysctl *s;
	struct kernel_sysctl *p;
	int i, ret;

	for (i = 0; i < plan->kernel.n_sysctls; i++) {
		s = &plan->kernel.sysctls[i];
		p = &u->prior[u->n_sysctls];
		ret = sysctl_read(s->path, p->value, sizeof(p->value));
		if (ret == -ENOENT && s->optional) {
			pr_debug("No %s here; the kernel keeps its default\n",
				 s->path);
			continue;
		}
		if (!ret)
			ret = state_sysctl_set(st, s->path, s->value);
		if (ret) {
			snprintf(err, CONFIG_ERR_LEN, "sysctl %s = %s: %s",
				 s->path, s->value, strerror(-ret));
			return ret;
		}
		snprintf(p->path, sizeof(p->path), "%s", s->path);
		u->n_sysctls++;
	}
	return 0;
}

static int step_maps(const struct plan *plan, struct apply_undo *u,
		     struct maps_gone *dropped, char *err)
{
	int ret;

	u->maps = 1;
	u->loader.first = !u->old || !u->old->xdp;
	ret = loader_pin_maps(plan, &u->loader);
	if (!ret)
		ret = maps_write_keep(plan, dropped);
	if (ret)
		snprintf(err, CONFIG_ERR_LEN, "failed to set up the maps in "
			 "the pin directory: %s", strerror(-ret));
	return ret;
}

/* The counters of failed redirects write into the stats map: a re-created
 * one needs them attached anew. Not fatal: redirect_err_attach warns. */
static void attach_counters(const struct loader_undo *lu)
{
	for (int i = 0; i < lu->n_replaced; i++)
		if (!strcmp(lu->replaced[i].name, MAP_STATS))
			redirect_err_detach();
	redirect_err_attach();
}

/*
 * The program running on the ports already is this one (same object, same
 * map sizes, recorded by the last commit), on the same maps, on every port
 * of PLAN: then nothing needs attaching. Dropped ports are detached after
 * the commit.
 */
static int attach_needed(const struct plan *plan, const struct xnat_state *st,
			 const struct apply_undo *u)
{
	return !u->old || !u->old->xdp || u->loader.n_replaced ||
	       u->loader.n_created || st->prog_hash != loader_prog_id(plan) ||
	       !loader_ports_attached(plan);
}

static int step_attach(const struct plan *plan, const struct xnat_state *st,
		       struct apply_undo *u, char *err)
{
	int ret;

	if (!attach_needed(plan, st, u)) {
		pr_debug("Program and ports unchanged: no swap\n");
		return 0;
	}
	ret = loader_attach(plan, &u->loader);

	if (ret)
		snprintf(err, CONFIG_ERR_LEN, "failed to attach XDP to the "
			 "ports of %s: %s", plan->cfg.path, strerror(-ret));
	else
		attach_counters(&u->loader);
	return ret;
}

static void undo(struct apply_undo *u)
{
	char err[CONFIG_ERR_LEN];
	int i;

	if (u->maps) {
		loader_undo(&u->loader);
		if (u->old && u->old->xdp && maps_write(u->old))
			pr_warn("Could not restore the old map contents\n");
	}
	for (i = u->n_sysctls - 1; i >= 0; i--)
		if (sysctl_write(u->prior[i].path, u->prior[i].value))
			pr_warn("Could not restore sysctl %s to %s\n",
				u->prior[i].path, u->prior[i].value);
	if (u->nft && u->old &&
	    kernel_nft_apply(u->old->kernel.nft, err))
		pr_warn("Could not restore the old nft table: %s\n", err);
	else if (u->nft && !u->old && kernel_nft_remove(err))
		pr_warn("Could not delete table inet xnat: %s\n", err);
}

int apply_plan(const struct plan *plan, const struct plan *old,
	       struct xnat_state *st, struct maps_gone *dropped,
	       struct apply_undo *u, char err[CONFIG_ERR_LEN])
{
	int ret;

	memset(u, 0, sizeof(*u));
	u->old = old;
	dropped->n = 0;
	ret = step_nft(plan, u, err);
	if (!ret)
		ret = step_sysctls(plan, st, u, err);
	if (!ret && plan->xdp)
		ret = step_maps(plan, u, dropped, err);
	/* The flows through ports the plan drops are still there: undo()
	 * can put their ports back, and they go on. */
	if (!ret && plan->xdp)
		ret = step_attach(plan, st, u, err);
	if (ret)
		undo(u);
	return ret;
}

void apply_commit(struct apply_undo *u)
{
	loader_undo_forget(&u->loader);
}

void apply_abort(struct apply_undo *u)
{
	undo(u);
}

void apply_finish(const struct plan *plan, const struct plan *old,
		  const struct maps_gone *dropped)
{
	char drop[PLAN_MAX_PORTS][IF_NAMESIZE];
	int i, n = 0;

	/* Before the detach, as before the commit: XDP sends none of them
	 * to a port it no longer serves. */
	if (plan->xdp)
		maps_end_dropped(dropped);
	for (i = 0; old && i < old->n_ports; i++)
		if (!plan_has_port(plan, old->ports[i].ifindex))
			snprintf(drop[n++], IF_NAMESIZE, "%s",
				 old->ports[i].name);
	if (n && loader_detach(drop, n) < 0)
		pr_warn("Could not detach XDP from every dropped port\n");
}

int apply_refresh(const struct plan *plan, char err[CONFIG_ERR_LEN])
{
	int ret = kernel_nft_apply(plan->kernel.nft, err);

	if (!ret && plan->xdp && (ret = maps_write(plan)))
		snprintf(err, CONFIG_ERR_LEN, "failed to update the maps: %s",
			 strerror(-ret));
	return ret;
}
