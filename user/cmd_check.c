// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat check: validate a config the way `xnat up` would, and change
 * nothing (like `nft -c` or `nginx -t`). Every error is listed, each as
 * "FILE:LINE: what", not only the first: the syntax and values, the
 * interfaces and the WAN address in this network namespace, whether the
 * XDP object fits what is pinned here (a running router), and the nftables
 * transaction, checked by the kernel in a dry run (as root). --print shows
 * the plan `up` would apply (plan_print: ports, map contents and sysctls as
 * "#" comments, then that transaction), which is valid `nft -f` input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "config.h"
#include "json.h"
#include "kernel_mode.h"
#include "loader.h"
#include "plan.h"

/* The plan as plan_print writes it, malloc'ed; NULL on ENOMEM. */
static char *plan_text(const struct plan *plan)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	plan_print(plan, f);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* Build the plan for CFG and check it against what is pinned here; its
 * nftables transaction (malloc'ed) and, in *TEXT, the whole plan printed;
 * or NULL with ERR. */
static char *plan_check(const struct config *cfg, char **text, char *err)
{
	struct plan *plan = calloc(1, sizeof(*plan));
	char *cmds = NULL;

	if (!plan) {
		snprintf(err, CONFIG_ERR_LEN, "plan: out of memory");
		return NULL;
	}
	if (!plan_build(cfg, plan, err) &&
	    !(plan->xdp && (loader_check(plan, err) ||
			    loader_check_ports(plan, err)))) {
		*text = plan_text(plan);
		cmds = plan->kernel.nft;
		plan->kernel.nft = NULL;
		if (!*text) {
			snprintf(err, CONFIG_ERR_LEN, "plan: out of memory");
			free(cmds);
			cmds = NULL;
		}
	}
	plan_free(plan);
	free(plan);
	return cmds;
}

/* One error more, kept if there is room (N counts them all). */
static void add_error(struct config_errors *errs, const char *msg)
{
	if (errs->n < CONFIG_MAX_ERRORS)
		snprintf(errs->msg[errs->n], CONFIG_ERR_LEN, "%s", msg);
	errs->n++;
}

static void merge_errors(struct config_errors *into,
			 const struct config_errors *from)
{
	for (int i = 0; i < from->n && i < CONFIG_MAX_ERRORS; i++)
		add_error(into, from->msg[i]);
	into->n += from->n > CONFIG_MAX_ERRORS ? from->n - CONFIG_MAX_ERRORS : 0;
}

/*
 * Everything `up` checks before it changes anything. The system checks run
 * only on a config that parsed, since they need its values; a config file
 * that cannot be read gets no further. Returns the ruleset (or NULL).
 */
static char *check_all(const char *path, struct config *cfg,
		       struct config_errors *errs, struct config_errors *tmp,
		       bool *kernel_checked, char **text)
{
	char err[CONFIG_ERR_LEN];
	char *cmds;

	*kernel_checked = false;
	if (config_parse_all(cfg, path, errs)) {
		/* The interfaces that parsed can still be looked up. */
		if (access(path, R_OK) == 0 && config_resolve_all(cfg, tmp))
			merge_errors(errs, tmp);
		return NULL;
	}
	if (config_resolve_all(cfg, tmp)) {
		merge_errors(errs, tmp);
		return NULL;
	}
	/* The plan `up` would apply (plan.c): ports XDP can serve, the
	 * maps against what is pinned, the nftables transaction. */
	cmds = plan_check(cfg, text, err);
	if (!cmds) {
		add_error(errs, err);
		return NULL;
	}
	/* The kernel's word needs CAP_NET_ADMIN; without it say so, and
	 * still report what could be checked. */
	if (geteuid() == 0) {
		*kernel_checked = true;
		if (kernel_ruleset_check(cmds, err))
			add_error(errs, err);
	}
	return cmds;
}

/* The line of "PATH:LINE: ..."; errors without one sort last. */
static long error_line(const char *msg, const char *path)
{
	size_t n = strlen(path);
	char *end;
	long line;

	if (strncmp(msg, path, n) || msg[n] != ':')
		return __LONG_MAX__;
	line = strtol(msg + n + 1, &end, 10);
	return end > msg + n + 1 && *end == ':' ? line : __LONG_MAX__;
}

/* File order, stable: the parse's and the system's errors interleave. */
static void sort_errors(struct config_errors *errs, const char *path)
{
	int n = errs->n < CONFIG_MAX_ERRORS ? errs->n : CONFIG_MAX_ERRORS;
	char tmp[CONFIG_ERR_LEN];

	for (int i = 1; i < n; i++) {
		long key = error_line(errs->msg[i], path);
		int j = i;

		memcpy(tmp, errs->msg[i], CONFIG_ERR_LEN);
		for (; j > 0 && error_line(errs->msg[j - 1], path) > key; j--)
			memcpy(errs->msg[j], errs->msg[j - 1], CONFIG_ERR_LEN);
		memcpy(errs->msg[j], tmp, CONFIG_ERR_LEN);
	}
}

int cmd_check(const struct opts *o)
{
	struct config_errors *errs = calloc(1, sizeof(*errs));
	struct config_errors *tmp = calloc(1, sizeof(*tmp));
	struct config *cfg = calloc(1, sizeof(*cfg));
	bool kernel_checked;
	char *cmds = NULL, *text = NULL;
	int i, rc;

	if (!errs || !tmp || !cfg) {
		rc = fail(o, EXIT_SYSTEM, "check %s: out of memory", o->config);
		goto out;
	}
	cmds = check_all(o->config, cfg, errs, tmp, &kernel_checked, &text);
	sort_errors(errs, o->config);
	rc = errs->n ? EXIT_USAGE : EXIT_OK;

	if (o->json) {
		json_obj_begin(NULL);
		json_str("config", o->config);
		json_bool("ok", !errs->n);
		json_arr_begin("errors");
		for (i = 0; i < errs->n && i < CONFIG_MAX_ERRORS; i++)
			json_str(NULL, errs->msg[i]);
		json_arr_end();
		json_u64("n_errors", errs->n);
		json_bool("nft_checked", kernel_checked);
		if (o->print && cmds) {
			json_str("ruleset", cmds);
			json_str("plan", text);
		}
		json_obj_end();
		json_done();
		goto out;
	}
	for (i = 0; i < errs->n && i < CONFIG_MAX_ERRORS; i++)
		fprintf(stderr, "xnat: %s\n", errs->msg[i]);
	if (errs->n > CONFIG_MAX_ERRORS)
		fprintf(stderr, "xnat: %s: %d more errors not shown\n",
			o->config, errs->n - CONFIG_MAX_ERRORS);
	if (errs->n) {
		fprintf(stderr, "xnat: %s: %d error%s; nothing was changed\n",
			o->config, errs->n, errs->n == 1 ? "" : "s");
		goto out;
	}
	if (!kernel_checked)
		fprintf(stderr, "xnat: nftables ruleset not checked by the kernel (needs root)\n");
	if (o->print)
		fputs(text, stdout);
	else
		printf("%s: ok\n", o->config);
out:
	free(text);
	free(cmds);
	free(cfg);
	free(tmp);
	free(errs);
	return rc;
}
