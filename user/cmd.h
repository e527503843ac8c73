/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The commands of `xnat` and the options they share. main.c parses the
 * command line once and hands each command the result.
 */
#ifndef XNAT_CMD_H
#define XNAT_CMD_H

#include <stdbool.h>

/* Exit statuses (DESIGN.md): usage/config error 1, system error 2. */
#define EXIT_OK 0
#define EXIT_USAGE 1
#define EXIT_SYSTEM 2
/* status: up, but not whole (e.g. the nft table was removed) */
#define EXIT_DEGRADED 4

struct opts {
	const char *config;   /* -c */
	const char *netns;    /* -n */
	bool json;            /* -j, implied by -p */
	bool pretty;          /* -p */
	double watch;         /* -w seconds, 0 = once */
	int verbose;          /* -v, repeatable */
	/* bench only */
	bool quick;           /* --quick: the CI-sized subset */
	const char *out_dir;  /* --out DIR, default ./bench-results */
	int reps;             /* --reps N, 0 = default */
	const char *modes;    /* --modes LIST */
	const char *profiles; /* --profiles LIST */
};

int cmd_up(const struct opts *o);
int cmd_down(const struct opts *o);
int cmd_run(const struct opts *o);
int cmd_status(const struct opts *o);
int cmd_flows(const struct opts *o);
int cmd_stats(const struct opts *o);
int cmd_bench(const struct opts *o);

/* An error line: JSON object on stdout with --json, else text on stderr.
 * Returns CODE so commands can `return fail(...)`. */
int fail(const struct opts *o, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* XNAT_CMD_H */
