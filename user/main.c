// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat: the command table, the option table, parsing the command line
 * against both, the help generated from them, and entering the router's
 * network namespace before any command runs.
 *
 * Each option is declared once in options[] (name, short letter, metavar,
 * help, where its value goes in struct opts, how it is checked); each
 * command in commands[] lists the options it takes. An option given to a
 * command that does not list it is refused, and `xnat COMMAND --help` prints
 * exactly that command's options. The global options (-n, -j, -p, -v, -h)
 * apply to every command.
 *
 * To add a command: write `int cmd_NAME(const struct opts *o)` in
 * user/cmd_NAME.c, declare it in cmd.h, and add a row to commands[].
 * To add an option: a field in struct opts (cmd.h), an OPT_ key below
 * (or a free short letter), a row in options[], and its key in the
 * commands[] rows that take it. Completion (packaging/xnat.bash-completion)
 * asks `xnat help --commands` and `xnat COMMAND --help`, so it follows.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "json.h"
#include "log.h"
#include "netns.h"
#include "version.h"

/* Keys of long-only options: past any character getopt could return. */
enum {
	OPT_QUICK = 0x100,
	OPT_OUT,
	OPT_REPS,
	OPT_MODES,
	OPT_PROFILES,
	OPT_PRINT,
	OPT_COMMANDS,
	OPT_VERSION,
};

enum opt_kind {
	OPT_FLAG,       /* bool */
	OPT_STRING,     /* const char * */
	OPT_INT,        /* int in [min, max] */
	OPT_SECONDS,    /* double in (0, max] */
};

struct opt_def {
	int key;                /* short letter, or an OPT_ value */
	const char *name;       /* long name */
	const char *metavar;    /* NULL for a flag */
	const char *help;
	enum opt_kind kind;
	size_t offset;          /* of the field in struct opts */
	long min, max;
};

#define OPT(k, n, mv, h, kd, field) \
	.key = k, .name = n, .metavar = mv, .help = h, .kind = kd, \
	.offset = offsetof(struct opts, field)
#define FLAG(k, n, field, h) { OPT(k, n, NULL, h, OPT_FLAG, field) }
#define STRING(k, n, mv, field, h) { OPT(k, n, mv, h, OPT_STRING, field) }
#define INT(k, n, mv, field, lo, hi, h) \
	{ OPT(k, n, mv, h, OPT_INT, field), .min = lo, .max = hi }
#define SECONDS(k, n, mv, field, hi, h) \
	{ OPT(k, n, mv, h, OPT_SECONDS, field), .max = hi }

/* Global options: every command takes them. */
static const struct opt_def global_options[] = {
	STRING('n', "netns", "NAME", netns,
	       "act in network namespace NAME (like ip -n)"),
	FLAG('j', "json", json, "JSON output; errors as {\"error\": ...}"),
	FLAG('p', "pretty", pretty, "indented JSON output (implies -j)"),
	FLAG('v', "verbose", verbose, "more diagnostics (-vv: libbpf debug)"),
	FLAG('h', "help", help, "this text"),
};

/* Every command option, once; commands[] says which command takes which. */
static const struct opt_def options[] = {
	STRING('c', "config", "FILE", config,
	       "router config (default " XNAT_DEFAULT_CONFIG ")"),
	SECONDS('w', "watch", "S", watch, 86400,
		"refresh every S seconds, with rates"),
	FLAG(OPT_PRINT, "print", print,
	     "also print the nftables ruleset the config loads"),
	FLAG(OPT_COMMANDS, "commands", commands,
	     "only the command names, one a line (for completion)"),
	FLAG(OPT_QUICK, "quick", quick, "the CI subset, under 2 minutes"),
	STRING(OPT_OUT, "out", "DIR", out_dir,
	       "results directory (./bench-results)"),
	INT(OPT_REPS, "reps", "N", reps, 1, 50, "repetitions (3; --quick 1)"),
	STRING(OPT_MODES, "modes", "LIST", modes,
	       "kernel-fwd,kernel-nat,xdp-nat,xdp-nat-slow,xdp-fwd,drop (all)"),
	STRING(OPT_PROFILES, "profiles", "LIST", profiles,
	       "64,500,1500,imix 1,10k up,both udp,newflow,tcp (each group filters; all by default)"),
};

#define N_GLOBAL (sizeof(global_options) / sizeof(global_options[0]))
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))
#define CMD_MAX_OPTS 8

struct cmd {
	const char *name;
	int (*fn)(const struct opts *o);
	const char *summary;
	int opts[CMD_MAX_OPTS];  /* keys into options[], 0-terminated */
	const char *arg;         /* one optional argument (o->arg), or NULL */
};

static int cmd_help(const struct opts *o);

static const struct cmd commands[] = {
	{ .name = "up", .fn = cmd_up, .opts = { 'c' },
	  .summary = "attach and configure (or reload hitlessly)" },
	{ .name = "down", .fn = cmd_down,
	  .summary = "detach, remove state and kernel settings" },
	{ .name = "run", .fn = cmd_run, .opts = { 'c' },
	  .summary = "up, then stay in the foreground for systemd; SIGHUP reloads, SIGTERM takes it down" },
	{ .name = "check", .fn = cmd_check, .opts = { 'c', OPT_PRINT },
	  .summary = "validate a config and change nothing; every error with file:line" },
	{ .name = "status", .fn = cmd_status,
	  .summary = "mode, interfaces, NAT address and ports, uptime, nft table; exit 3 when not up" },
	{ .name = "flows", .fn = cmd_flows,
	  .summary = "the flow table (xdp) or the kernel's NAT connections (kernel mode)" },
	{ .name = "stats", .fn = cmd_stats, .opts = { 'w' },
	  .summary = "counters: fast path, slow path, passed, dropped by reason; nft counters in kernel mode" },
	{ .name = "bench", .fn = cmd_bench,
	  .opts = { OPT_QUICK, OPT_OUT, OPT_REPS, OPT_MODES, OPT_PROFILES },
	  .summary = "build a namespace testbed, measure every mode, print tables" },
	{ .name = "help", .fn = cmd_help, .opts = { OPT_COMMANDS }, .arg = "COMMAND",
	  .summary = "this text, or a command's options" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct opt_def *find_option(int key)
{
	for (size_t i = 0; i < N_GLOBAL; i++)
		if (global_options[i].key == key)
			return &global_options[i];
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (options[i].key == key)
			return &options[i];
	return NULL;
}

static bool cmd_takes(const struct cmd *c, int key)
{
	for (int i = 0; i < CMD_MAX_OPTS && c->opts[i]; i++)
		if (c->opts[i] == key)
			return true;
	return false;
}

static const struct cmd *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* "-c, --config FILE" or "    --quick" */
static void print_option(FILE *f, const struct opt_def *d)
{
	char head[64];
	int n;

	if (d->key < 0x100)
		n = snprintf(head, sizeof(head), "-%c, --%s", d->key, d->name);
	else
		n = snprintf(head, sizeof(head), "    --%s", d->name);
	if (d->metavar && n > 0 && (size_t)n < sizeof(head))
		snprintf(head + n, sizeof(head) - n, " %s", d->metavar);
	if (strlen(head) > 20)
		fprintf(f, "  %s\n  %-20s %s\n", head, "", d->help);
	else
		fprintf(f, "  %-20s %s\n", head, d->help);
}

/* The options of C in its synopsis: "[-c FILE] [--print]". */
static void print_synopsis(FILE *f, const struct cmd *c)
{
	fprintf(f, "Usage: xnat [global options] %s", c->name);
	if (c->arg)
		fprintf(f, " [%s]", c->arg);
	for (int i = 0; i < CMD_MAX_OPTS && c->opts[i]; i++) {
		const struct opt_def *d = find_option(c->opts[i]);

		if (d->key < 0x100)
			fprintf(f, " [-%c%s%s]", d->key, d->metavar ? " " : "",
				d->metavar ? d->metavar : "");
		else
			fprintf(f, " [--%s%s%s]", d->name, d->metavar ? " " : "",
				d->metavar ? d->metavar : "");
	}
	fprintf(f, "\n");
}

static void print_globals(FILE *f)
{
	fprintf(f, "\nGlobal options:\n");
	for (size_t i = 0; i < N_GLOBAL; i++)
		print_option(f, &global_options[i]);
}

static void usage_command(FILE *f, const struct cmd *c)
{
	print_synopsis(f, c);
	fprintf(f, "\n%s\n", c->summary);
	if (c->opts[0]) {
		fprintf(f, "\nOptions:\n");
		for (int i = 0; i < CMD_MAX_OPTS && c->opts[i]; i++)
			print_option(f, find_option(c->opts[i]));
	}
	print_globals(f);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: xnat [global options] COMMAND [options]\n"
		   "       xnat COMMAND --help | xnat help [COMMAND] | xnat --version\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	print_globals(f);
	fprintf(f, "\nExit status: 0 ok, 1 usage or config error, 2 system error,\n"
		   "3 (status) xnat is not up here.\n");
}

/* `xnat help [COMMAND]`; --commands lists the names for completion. */
static int cmd_help(const struct opts *o)
{
	const struct cmd *c;

	if (o->commands) {
		for (size_t i = 0; i < N_COMMANDS; i++)
			printf("%s\n", commands[i].name);
		return EXIT_OK;
	}
	if (!o->arg) {
		usage(stdout);
		return EXIT_OK;
	}
	c = find_command(o->arg);
	if (!c)
		return fail(o, EXIT_USAGE, "help: unknown command '%s' (xnat help lists them)",
			    o->arg);
	usage_command(stdout, c);
	return EXIT_OK;
}

int fail(const struct opts *o, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (o->json) {
		json_obj_begin(NULL);
		json_str("error", msg);
		json_obj_end();
		json_done();
	} else {
		fprintf(stderr, "xnat: %s\n", msg);
	}
	return code;
}

/* "--watch" as the user would name it in a message. */
static const char *opt_label(const struct opt_def *d, char *buf, size_t len)
{
	if (d->key < 0x100)
		snprintf(buf, len, "-%c/--%s", d->key, d->name);
	else
		snprintf(buf, len, "--%s", d->name);
	return buf;
}

/* Store ARG into O as D says; an error line and EXIT_USAGE if it is bad. */
static int set_option(struct opts *o, const struct opt_def *d, const char *arg)
{
	void *field = (char *)o + d->offset;
	char label[40], *end;

	switch (d->kind) {
	case OPT_FLAG:
		if (d->offset == offsetof(struct opts, verbose))
			o->verbose++;
		else
			*(bool *)field = true;
		return EXIT_OK;
	case OPT_STRING:
		*(const char **)field = arg;
		return EXIT_OK;
	case OPT_INT: {
		long n;

		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || end == arg || *end || n < d->min || n > d->max)
			return fail(o, EXIT_USAGE, "%s: '%s' is not a number in [%ld, %ld]",
				    opt_label(d, label, sizeof(label)), arg,
				    d->min, d->max);
		*(int *)field = (int)n;
		return EXIT_OK;
	}
	case OPT_SECONDS: {
		double s;

		errno = 0;
		s = strtod(arg, &end);
		if (errno || end == arg || *end || !(s > 0) || s > d->max)
			return fail(o, EXIT_USAGE,
				    "%s: '%s' is not a number of seconds in (0, %ld]",
				    opt_label(d, label, sizeof(label)), arg, d->max);
		*(double *)field = s;
		return EXIT_OK;
	}
	}
	return EXIT_USAGE;
}

/* The getopt tables: every option of every command, checked per command
 * once the command is known (options may come before or after it). */
static void build_getopt(struct option *lo, char *shorts)
{
	const struct opt_def *d;
	size_t n = 0, s = 0;

	shorts[s++] = ':';   /* a missing argument is ':', not '?' */
	for (size_t i = 0; i < N_GLOBAL + N_OPTIONS; i++) {
		d = i < N_GLOBAL ? &global_options[i] : &options[i - N_GLOBAL];
		lo[n++] = (struct option){ d->name, d->metavar ? required_argument :
					   no_argument, NULL, d->key };
		if (d->key < 0x100) {
			shorts[s++] = (char)d->key;
			if (d->metavar)
				shorts[s++] = ':';
		}
	}
	lo[n++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	lo[n] = (struct option){};
	shorts[s] = 0;
}

struct given {
	const struct opt_def *def;
	const char *arg;
};

int main(int argc, char **argv)
{
	struct option long_opts[N_GLOBAL + N_OPTIONS + 2];
	char shorts[2 * (N_GLOBAL + N_OPTIONS) + 2], label[40];
	struct given given[64];
	const struct cmd *cmd;
	struct opts o = {};
	int c, n_given = 0, rc;

	build_getopt(long_opts, shorts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
		if (c == OPT_VERSION) {
			printf("xnat %s\n", XNAT_VERSION);
			return EXIT_OK;
		}
		if (c == '?') {
			if (optopt)
				return fail(&o, EXIT_USAGE, "unknown option '-%c' (xnat help)",
					    optopt);
			return fail(&o, EXIT_USAGE, "unknown option '%s' (xnat help)",
				    argv[optind - 1]);
		}
		if (c == ':') {
			const struct opt_def *d = find_option(optopt);

			return fail(&o, EXIT_USAGE, "%s needs an argument (%s)",
				    d ? opt_label(d, label, sizeof(label)) : argv[optind - 1],
				    d && d->metavar ? d->metavar : "?");
		}
		if (n_given == (int)(sizeof(given) / sizeof(given[0])))
			return fail(&o, EXIT_USAGE, "too many options");
		given[n_given++] = (struct given){ find_option(c), optarg };
		/* Known early so that errors below are JSON with -j. */
		if (c == 'j' || c == 'p')
			o.json = true;
	}

	if (optind == argc) {
		for (int i = 0; i < n_given; i++)
			if (given[i].def->key == 'h') {
				usage(stdout);
				return EXIT_OK;
			}
		if (o.json)
			return fail(&o, EXIT_USAGE, "no command (xnat help)");
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = find_command(argv[optind]);
	if (!cmd)
		return fail(&o, EXIT_USAGE, "unknown command '%s' (xnat help lists them)",
			    argv[optind]);
	if (cmd->arg && optind + 1 < argc)
		o.arg = argv[optind + 1];
	if (optind + 1 + !!cmd->arg < argc)
		return fail(&o, EXIT_USAGE, "%s: unexpected argument '%s'",
			    cmd->name, argv[optind + 1 + !!cmd->arg]);

	for (int i = 0; i < n_given; i++) {
		const struct opt_def *d = given[i].def;
		bool global = d >= global_options && d < global_options + N_GLOBAL;

		if (!global && !cmd_takes(cmd, d->key))
			return fail(&o, EXIT_USAGE,
				    "option %s does not apply to '%s' (xnat %s --help)",
				    opt_label(d, label, sizeof(label)), cmd->name,
				    cmd->name);
		if ((rc = set_option(&o, d, given[i].arg)))
			return rc;
	}
	if (o.help) {
		usage_command(stdout, cmd);
		return EXIT_OK;
	}
	if (o.pretty)
		o.json = true;
	if (cmd->fn == cmd_help)
		return cmd_help(&o);
	if (cmd_takes(cmd, 'c') && !o.config)
		o.config = XNAT_DEFAULT_CONFIG;

	log_setup(o.verbose, o.json);
	json_set_pretty(o.pretty);
	/* Enter the namespace first: everything after acts in it, and the
	 * bpffs must be the host's to find state again. */
	if (netns_enter(o.netns) || netns_bpffs_ready())
		return EXIT_SYSTEM;
	return cmd->fn(&o);
}
