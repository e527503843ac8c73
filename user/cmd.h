/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The commands of `xnat` and their options. main.c parses the command line
 * once against its command and option tables (which say how to add either)
 * and hands each command the result.
 */
#ifndef XNAT_CMD_H
#define XNAT_CMD_H

#include <stdbool.h>

/* Exit statuses: usage/config error 1, system error 2, and for `xnat
 * status` 3 when xnat is not up in this network namespace (like
 * `systemctl status` on an inactive unit) and 4 when it is up but not
 * whole. README and xnat.8 list them. */
#define EXIT_OK 0
#define EXIT_USAGE 1
#define EXIT_SYSTEM 2
#define EXIT_NOT_UP 3
/* status: up, but not whole (its nft table was removed) */
#define EXIT_DEGRADED 4

/* The config `up`, `run` and `check` read when -c is not given. */
#define XNAT_DEFAULT_CONFIG "/etc/xnat/xnat.ini"

struct opts {
	const char *config;   /* -c */
	const char *netns;    /* -n */
	bool json;            /* -j, implied by -p */
	bool pretty;          /* -p */
	double watch;         /* -w seconds, 0 = once */
	int verbose;          /* -v, repeatable */
	bool help;            /* -h: main.c prints the command's help */
	bool commands;        /* help --commands */
	/* check only */
	bool print;           /* --print: the nftables ruleset too */
	/* bench only */
	bool quick;           /* --quick: the CI-sized subset */
	const char *out_dir;  /* --out DIR, default ./bench-results */
	int reps;             /* --reps N, 0 = default */
	const char *modes;    /* --modes LIST */
	const char *profiles; /* --profiles LIST */
	const char *base;     /* bench compare: --base RUN:MODE */
	/* trace, flows, stats, metrics, help */
	int nargs;            /* words after the command (filters...) */
	char **args;
	const char *count;    /* trace: -c COUNT (-c is the config elsewhere) */
	const char *rate;     /* trace: --rate N events/s per CPU */
	const char *format;   /* stats: --format text|json|prometheus */
	const char *listen;   /* metrics: --listen ADDR:PORT */
	const char *sort;     /* flows: --sort bytes|packets|age|idle */
};

int cmd_up(const struct opts *o);
int cmd_down(const struct opts *o);
int cmd_run(const struct opts *o);
int cmd_check(const struct opts *o);
int cmd_status(const struct opts *o);
int cmd_flows(const struct opts *o);
int cmd_stats(const struct opts *o);
int cmd_bench(const struct opts *o);
/* `xnat bench compare DIR...` (o->args[0] is "compare"). */
int cmd_bench_compare(const struct opts *o);
int cmd_trace(const struct opts *o);
int cmd_metrics(const struct opts *o);

/* An error line: JSON object on stdout with --json, else text on stderr.
 * Returns CODE so commands can `return fail(...)`. */
int fail(const struct opts *o, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The router's pinned map NAME, for the read-only commands (flows,
 * stats): its fd; or -1 with *RET the exit code, that of KERNEL_MODE(O)
 * when the router runs in kernel mode (no maps: the kernel's own state is
 * read instead), else EXIT_SYSTEM once fail() reported MISSING (no router
 * in xdp or offload mode here). */
int cmd_map_open(const struct opts *o, const char *name, const char *missing,
		 int (*kernel_mode)(const struct opts *o), int *ret);

/* --watch: the screen out, then the interval. */
void watch_interval(const struct opts *o);

#endif /* XNAT_CMD_H */
