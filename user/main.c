// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat: the command table, the option table, parsing the command line
 * against both, the help generated from them, and entering the router's
 * network namespace before any command runs.
 *
 * Each option is declared once in options[] (long name, short letter,
 * metavar, help, where its value goes in struct opts, how it is checked);
 * each command in commands[] lists the options it takes and how many words
 * may follow it. An option given to a command that does not list it is
 * refused, and `xnat COMMAND --help` prints exactly that command's options.
 * The global options (-n, -j, -p, -v, -h) apply to every command. Two
 * options may share a short letter when no command takes both (-c is the
 * config of up, run and check, and the count of trace); both must then
 * take an argument, or both not, since getopt sees the letter first.
 *
 * To add a command: write `int cmd_NAME(const struct opts *o)` in
 * user/cmd_NAME.c, declare it in cmd.h, and add a row to commands[].
 * To add an option: a field in struct opts (cmd.h), an OPT_ id below, a
 * row in options[], and the id in the commands[] rows that take it.
 * Help, the man page's synopsis and bash completion follow (completion asks
 * `xnat help --commands` and `xnat COMMAND --help`); describe the option in
 * user/xnat.8 and README.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench_profiles.h"
#include "cmd.h"
#include "json.h"
#include "log.h"
#include "netns.h"
#include "version.h"

enum opt_id {
	OPT_NONE,         /* ends a command's option list */
	/* global */
	OPT_NETNS,
	OPT_JSON,
	OPT_PRETTY,
	OPT_VERBOSE,
	OPT_HELP,
	/* per command */
	OPT_CONFIG,
	OPT_PRINT,
	OPT_WATCH,
	OPT_FORMAT,
	OPT_SORT,
	OPT_COUNT,
	OPT_RATE,
	OPT_LISTEN,
	OPT_COMMANDS,
	OPT_QUICK,
	OPT_OUT,
	OPT_REPS,
	OPT_MODES,
	OPT_PROFILES,
	OPT_BASE,
	N_OPTS,
};

enum opt_kind {
	OPT_FLAG,       /* bool (verbose: counted) */
	OPT_STRING,     /* const char *, checked by the command */
	OPT_INT,        /* int in [min, max] */
	OPT_SECONDS,    /* double in (0, max] */
};

struct opt_def {
	char letter;            /* short option, or 0 */
	const char *name;       /* long option */
	const char *metavar;    /* NULL for a flag */
	const char *help;
	enum opt_kind kind;
	size_t offset;          /* of the field in struct opts */
	long min, max;
	bool global;
};

#define OPT(l, n, mv, h, kd, field) \
	.letter = l, .name = n, .metavar = mv, .help = h, .kind = kd, \
	.offset = offsetof(struct opts, field)
#define FLAG(l, n, field, h) { OPT(l, n, NULL, h, OPT_FLAG, field) }
#define STRING(l, n, mv, field, h) { OPT(l, n, mv, h, OPT_STRING, field) }
#define INT(l, n, mv, field, lo, hi, h) \
	{ OPT(l, n, mv, h, OPT_INT, field), .min = lo, .max = hi }
#define SECONDS(l, n, mv, field, hi, h) \
	{ OPT(l, n, mv, h, OPT_SECONDS, field), .max = hi }
#define GLOBAL(...) { __VA_ARGS__, .global = true }

static const struct opt_def options[N_OPTS] = {
	[OPT_NETNS] = GLOBAL(OPT('n', "netns", "NAME",
		"act in network namespace NAME (like ip -n)", OPT_STRING, netns)),
	[OPT_JSON] = GLOBAL(OPT('j', "json", NULL,
		"JSON output; errors as {\"error\": ...}", OPT_FLAG, json)),
	[OPT_PRETTY] = GLOBAL(OPT('p', "pretty", NULL,
		"indented JSON output (implies -j)", OPT_FLAG, pretty)),
	[OPT_VERBOSE] = GLOBAL(OPT('v', "verbose", NULL,
		"more diagnostics (-vv: libbpf debug)", OPT_FLAG, verbose)),
	[OPT_HELP] = GLOBAL(OPT('h', "help", NULL,
		"this text", OPT_FLAG, help)),

	[OPT_CONFIG] = STRING('c', "config", "FILE", config,
		"router config (default " XNAT_DEFAULT_CONFIG ")"),
	[OPT_PRINT] = FLAG(0, "print", print,
		"also print the nftables ruleset the config loads"),
	[OPT_WATCH] = SECONDS('w', "watch", "S", watch, 86400,
		"refresh every S seconds, with rates"),
	[OPT_FORMAT] = STRING(0, "format", "F", format,
		"text, json or prometheus"),
	[OPT_SORT] = STRING(0, "sort", "KEY", sort,
		"bytes, packets, age or idle"),
	[OPT_COUNT] = STRING('c', "count", "COUNT", count,
		"stop after COUNT events"),
	[OPT_RATE] = STRING(0, "rate", "N", rate,
		"at most N events/s per CPU (1000)"),
	[OPT_LISTEN] = STRING(0, "listen", "A:P", listen,
		"address (required) and port, e.g. 127.0.0.1:9417 or a LAN address; 0.0.0.0 includes the WAN"),
	[OPT_COMMANDS] = FLAG(0, "commands", commands,
		"only the command names, one a line (for completion)"),
	[OPT_QUICK] = FLAG(0, "quick", quick, "the CI subset, under 2 minutes"),
	[OPT_OUT] = STRING(0, "out", "DIR", out_dir,
		"results directory (./bench-results)"),
	[OPT_REPS] = INT(0, "reps", "N", reps, 1, 50,
		"repetitions (3; --quick 1)"),
	[OPT_MODES] = STRING(0, "modes", "LIST", modes,
		"kernel-fwd,kernel-masq,kernel-nat,xdp-nat,xdp-nat-slow,xdp-offload,xdp-fwd,drop (all)"),
	[OPT_PROFILES] = STRING(0, "profiles", "LIST", profiles,
		BENCH_PROFILES_HELP),
	[OPT_BASE] = STRING(0, "base", "RUN:MODE", base,
		"compare: the row ratios are to (first run's first mode)"),
};

#define CMD_MAX_OPTS 8

struct cmd {
	const char *name;
	int (*fn)(const struct opts *o);
	const char *summary;
	enum opt_id opts[CMD_MAX_OPTS];  /* OPT_NONE-terminated */
	const char *args;        /* metavar of the words after it, or NULL */
	int max_args;            /* how many words may follow */
};

static int cmd_help(const struct opts *o);

static const struct cmd commands[] = {
	{ .name = "up", .fn = cmd_up, .opts = { OPT_CONFIG },
	  .summary = "attach and configure (or reload hitlessly)" },
	{ .name = "down", .fn = cmd_down,
	  .summary = "detach, remove state and kernel settings" },
	{ .name = "run", .fn = cmd_run, .opts = { OPT_CONFIG },
	  .summary = "up, then stay in the foreground for systemd; SIGHUP reloads, SIGTERM takes it down" },
	{ .name = "check", .fn = cmd_check, .opts = { OPT_CONFIG, OPT_PRINT },
	  .summary = "validate a config and change nothing; every error with file:line" },
	{ .name = "status", .fn = cmd_status,
	  .summary = "mode, interfaces, NAT address and ports, uptime, nft table; exit 3 when not up, 4 when not whole" },
	{ .name = "flows", .fn = cmd_flows, .opts = { OPT_SORT, OPT_WATCH },
	  .args = "[delete] FILTER...", .max_args = 17,
	  .summary = "connections, both directions a line (xdp), or the kernel's NAT connections (kernel mode); FILTER: host ADDR, port N, proto P, state S; delete FILTER ends them" },
	{ .name = "stats", .fn = cmd_stats, .opts = { OPT_WATCH, OPT_FORMAT },
	  .summary = "counters: fast path, slow path, passed, dropped by reason; nft counters in kernel mode" },
	{ .name = "trace", .fn = cmd_trace, .opts = { OPT_COUNT, OPT_RATE },
	  .args = "FILTER...", .max_args = 16,
	  .summary = "live: one line per packet, its path and reason; FILTER: host ADDR, port N, proto P, reason GLOB" },
	{ .name = "metrics", .fn = cmd_metrics, .opts = { OPT_LISTEN },
	  .summary = "serve the counters on http://A:P/metrics (Prometheus); bind A to loopback or a LAN address, never the WAN's" },
	{ .name = "bench", .fn = cmd_bench,
	  .opts = { OPT_QUICK, OPT_OUT, OPT_REPS, OPT_MODES, OPT_PROFILES, OPT_BASE },
	  .args = "compare DIR...", .max_args = 65,
	  .summary = "build a namespace testbed, measure every mode, print tables; "
		     "bench compare DIR... puts saved runs in one table, with ratios "
		     "and their provenance" },
	{ .name = "help", .fn = cmd_help, .opts = { OPT_COMMANDS },
	  .args = "COMMAND", .max_args = 1,
	  .summary = "this text, or a command's options" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static bool cmd_takes(const struct cmd *c, enum opt_id id)
{
	if (options[id].global)
		return true;
	for (int i = 0; i < CMD_MAX_OPTS && c->opts[i]; i++)
		if (c->opts[i] == id)
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

	if (d->letter)
		n = snprintf(head, sizeof(head), "-%c, --%s", d->letter, d->name);
	else
		n = snprintf(head, sizeof(head), "    --%s", d->name);
	if (d->metavar && n > 0 && (size_t)n < sizeof(head))
		snprintf(head + n, sizeof(head) - n, " %s", d->metavar);
	if (strlen(head) > 20)
		fprintf(f, "  %s\n  %-20s %s\n", head, "", d->help);
	else
		fprintf(f, "  %-20s %s\n", head, d->help);
}

/* "Usage: xnat [global options] check [-c FILE] [--print]" */
static void print_synopsis(FILE *f, const struct cmd *c)
{
	fprintf(f, "Usage: xnat [global options] %s", c->name);
	for (int i = 0; i < CMD_MAX_OPTS && c->opts[i]; i++) {
		const struct opt_def *d = &options[c->opts[i]];

		if (d->letter)
			fprintf(f, " [-%c", d->letter);
		else
			fprintf(f, " [--%s", d->name);
		fprintf(f, "%s%s]", d->metavar ? " " : "",
			d->metavar ? d->metavar : "");
	}
	if (c->args)
		fprintf(f, " [%s]", c->args);
	fprintf(f, "\n");
}

static void print_globals(FILE *f)
{
	fprintf(f, "\nGlobal options:\n");
	for (int id = 0; id < N_OPTS; id++)
		if (options[id].global)
			print_option(f, &options[id]);
}

static void usage_command(FILE *f, const struct cmd *c)
{
	print_synopsis(f, c);
	fprintf(f, "\n%s\n", c->summary);
	if (c->opts[0]) {
		fprintf(f, "\nOptions:\n");
		for (int i = 0; i < CMD_MAX_OPTS && c->opts[i]; i++)
			print_option(f, &options[c->opts[i]]);
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
	fprintf(f, "\nExit status: 0 ok, 1 usage or config error, 2 system error;\n"
		   "status: 3 xnat is not up here, 4 up but its nft table is missing.\n");
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
	if (!o->nargs) {
		usage(stdout);
		return EXIT_OK;
	}
	c = find_command(o->args[0]);
	if (!c)
		return fail(o, EXIT_USAGE, "help: unknown command '%s' (xnat help lists them)",
			    o->args[0]);
	usage_command(stdout, c);
	return EXIT_OK;
}

/* "-w/--watch" or "--quick", as the user would name it in a message. */
static const char *opt_label(const struct opt_def *d, char *buf, size_t len)
{
	if (d->letter)
		snprintf(buf, len, "-%c/--%s", d->letter, d->name);
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

/* getopt returns the letter for a short option and LONG_BASE + id for a
 * long one; which option a letter means depends on the command. */
#define LONG_BASE 0x100
#define VERSION_KEY (LONG_BASE + N_OPTS)

static void build_getopt(struct option *lo, char *shorts)
{
	size_t n = 0, s = 0;

	shorts[s++] = ':';   /* a missing argument is ':', not '?' */
	for (int id = 1; id < N_OPTS; id++) {
		const struct opt_def *d = &options[id];

		lo[n++] = (struct option){ d->name, d->metavar ? required_argument :
					   no_argument, NULL, LONG_BASE + id };
		if (d->letter && !memchr(shorts, d->letter, s)) {
			shorts[s++] = d->letter;
			if (d->metavar)
				shorts[s++] = ':';
		}
	}
	lo[n++] = (struct option){ "version", no_argument, NULL, VERSION_KEY };
	lo[n] = (struct option){};
	shorts[s] = 0;
}

/* The option KEY names for command C: by id, or by letter among those C
 * takes (else the first with that letter, which C then refuses). */
static enum opt_id resolve_key(const struct cmd *c, int key)
{
	enum opt_id first = OPT_NONE;

	if (key >= LONG_BASE)
		return key - LONG_BASE;
	for (int id = 1; id < N_OPTS; id++) {
		if (options[id].letter != key)
			continue;
		if (cmd_takes(c, id))
			return id;
		if (!first)
			first = id;
	}
	return first;
}

struct given {
	int key;
	const char *arg;
};

#define MAX_GIVEN 64

/*
 * Read the options, which may come before or after the command (GNU
 * permutation); what they mean is decided once the command is known.
 * -1 to go on, or the exit code (--version, or an error reported).
 */
static int read_options(int argc, char **argv, struct opts *o,
			struct given *given, int *n_given, bool *help)
{
	struct option long_opts[N_OPTS + 1];
	char shorts[2 * N_OPTS + 2];
	int c;

	build_getopt(long_opts, shorts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
		if (c == VERSION_KEY) {
			printf("xnat %s\n", XNAT_VERSION);
			return EXIT_OK;
		}
		if (c == '?') {
			if (optopt && optopt < LONG_BASE)
				return fail(o, EXIT_USAGE, "unknown option '-%c' (xnat help)",
					    optopt);
			return fail(o, EXIT_USAGE, "unknown option '%s' (xnat help)",
				    argv[optind - 1]);
		}
		if (c == ':')
			return fail(o, EXIT_USAGE, "option '%s' needs an argument",
				    argv[optind - 1]);
		if (*n_given == MAX_GIVEN)
			return fail(o, EXIT_USAGE, "too many options");
		given[(*n_given)++] = (struct given){ c, optarg };
		/* Known early, so that every error below is JSON with -j. */
		if (c == 'j' || c == 'p' || c == LONG_BASE + OPT_JSON ||
		    c == LONG_BASE + OPT_PRETTY)
			o->json = true;
		if (c == 'h' || c == LONG_BASE + OPT_HELP)
			*help = true;
	}
	return -1;
}

/* The options read, now that the command is known: each must be one it
 * takes. 0, or the exit code of an error (reported). */
static int apply_options(struct opts *o, const struct cmd *cmd,
			 const struct given *given, int n_given)
{
	char label[40];
	int rc;

	for (int i = 0; i < n_given; i++) {
		enum opt_id id = resolve_key(cmd, given[i].key);

		if (!cmd_takes(cmd, id))
			return fail(o, EXIT_USAGE,
				    "option %s does not apply to '%s' (xnat %s --help)",
				    opt_label(&options[id], label, sizeof(label)),
				    cmd->name, cmd->name);
		if ((rc = set_option(o, &options[id], given[i].arg)))
			return rc;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct given given[MAX_GIVEN];
	const struct cmd *cmd;
	struct opts o = {};
	int n_given = 0, rc;
	bool help = false;

	rc = read_options(argc, argv, &o, given, &n_given, &help);
	if (rc >= 0)
		return rc;
	if (optind == argc) {
		if (help) {
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
	o.nargs = argc - optind - 1;
	o.args = argv + optind + 1;
	if (o.nargs > cmd->max_args)
		return fail(&o, EXIT_USAGE, "%s: unexpected argument '%s'",
			    cmd->name, o.args[cmd->max_args]);
	if ((rc = apply_options(&o, cmd, given, n_given)))
		return rc;
	if (o.help) {
		usage_command(stdout, cmd);
		return EXIT_OK;
	}
	if (o.pretty)
		o.json = true;
	if (cmd->fn == cmd_help)
		return cmd_help(&o);
	if (cmd_takes(cmd, OPT_CONFIG) && !o.config)
		o.config = XNAT_DEFAULT_CONFIG;

	log_setup(o.verbose, o.json);
	json_set_pretty(o.pretty);
	/* Enter the namespace first: everything after acts in it, and the
	 * bpffs must be the host's to find state again. */
	if (netns_enter(o.netns) || netns_bpffs_ready())
		return EXIT_SYSTEM;
	return cmd->fn(&o);
}
