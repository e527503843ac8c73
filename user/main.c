// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat: the command table, option parsing, and entering the router's
 * network namespace before any command runs.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "json.h"
#include "log.h"
#include "netns.h"

/* Long-only options (bench). */
enum {
	OPT_QUICK = 0x100,
	OPT_OUT,
	OPT_REPS,
	OPT_MODES,
	OPT_PROFILES,
	OPT_RATE,
	OPT_FORMAT,
	OPT_LISTEN,
	OPT_SORT,
};

struct cmd {
	const char *name;
	int (*fn)(const struct opts *o);
	const char *args;
	const char *help;
	int max_args;   /* words allowed after the command */
};

static const struct cmd commands[] = {
	{ "up", cmd_up, "-c FILE", "attach and configure (or reload hitlessly)", 0 },
	{ "down", cmd_down, "", "detach, remove state and kernel settings", 0 },
	{ "run", cmd_run, "-c FILE", "up, then stay in the foreground; SIGHUP reloads, SIGTERM takes it down", 0 },
	{ "status", cmd_status, "[--json]", "mode, interfaces, program ids, table fill", 0 },
	{ "flows", cmd_flows, "[FILTER] [--sort K] [-w S]", "connections, both directions a line; flows delete FILTER", 17 },
	{ "stats", cmd_stats, "[--json] [-w S] [--format F]", "counters: fast path, slow path, passed, dropped by reason", 0 },
	{ "bench", cmd_bench, "[--quick] [...]", "build a namespace testbed, measure every mode, print tables", 0 },
	{ "trace", cmd_trace, "[FILTER] [-c N]", "live: one line per packet, its path and reason", 16 },
	{ "metrics", cmd_metrics, "--listen A:P", "serve the counters on http://A:P/metrics (Prometheus)", 0 },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: xnat [-n NETNS] [-j|-p] [-v] COMMAND [options]\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-7s %-16s %s\n", commands[i].name,
			commands[i].args, commands[i].help);
	fprintf(f, "\nOptions:\n"
		   "  -c, --config FILE  router config (INI)\n"
		   "  -n, --netns NAME   act in network namespace NAME (like ip -n)\n"
		   "  -j, --json         JSON output\n"
		   "  -p, --pretty       indented JSON output (implies -j)\n"
		   "  -w, --watch S      stats, flows: refresh every S seconds\n"
		   "      --quick        bench: the CI subset, under 2 minutes\n"
		   "      --out DIR      bench: results directory (./bench-results)\n"
		   "      --reps N       bench: repetitions (3; --quick 1)\n"
		   "      --modes LIST   bench: kernel-fwd,kernel-nat,xdp-nat,xdp-nat-slow,\n"
		   "                     xdp-fwd,drop (all)\n"
		   "      --profiles LIST\n"
		   "                     bench: 64,500,1500,imix 1,10k up,both udp,newflow,\n"
		   "                     tcp (each group filters; all by default)\n"
		   "  -c COUNT           trace: stop after COUNT events\n"
		   "      --rate N       trace: at most N events/s per CPU (1000)\n"
		   "                     FILTER: host ADDR, port N, proto P, reason GLOB\n"
		   "      --format F     stats: text, json or prometheus\n"
		   "      --listen A:P   metrics: address and port to serve on\n"
		   "      --sort K       flows: bytes, packets, age or idle, largest first\n"
		   "                     flows FILTER: host ADDR, port N, proto P, state S\n"
		   "  -v, --verbose      more diagnostics (-vv: libbpf debug)\n"
		   "  -h, --help         this text\n");
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

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "netns", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "watch", required_argument, NULL, 'w' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "reps", required_argument, NULL, OPT_REPS },
		{ "modes", required_argument, NULL, OPT_MODES },
		{ "profiles", required_argument, NULL, OPT_PROFILES },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "sort", required_argument, NULL, OPT_SORT },
		{}
	};
	struct opts o = {};
	const char *name;
	char *end;
	int c;

	/* Options may come before or after the command (GNU permutation). */
	while ((c = getopt_long(argc, argv, "c:n:jpw:vh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'c': o.config = optarg; break;
		case 'n': o.netns = optarg; break;
		case 'j': o.json = true; break;
		case 'p': o.json = o.pretty = true; break;
		case 'v': o.verbose++; break;
		case 'w':
			errno = 0;
			o.watch = strtod(optarg, &end);
			if (errno || end == optarg || *end || o.watch <= 0 ||
			    o.watch > 86400)
				return fail(&o, EXIT_USAGE,
					    "-w: '%s' is not a number of seconds in (0, 86400]",
					    optarg);
			break;
		case OPT_QUICK: o.quick = true; break;
		case OPT_OUT: o.out_dir = optarg; break;
		case OPT_MODES: o.modes = optarg; break;
		case OPT_PROFILES: o.profiles = optarg; break;
		case OPT_RATE: o.rate = optarg; break;
		case OPT_FORMAT: o.format = optarg; break;
		case OPT_LISTEN: o.listen = optarg; break;
		case OPT_SORT: o.sort = optarg; break;
		case OPT_REPS: {
			unsigned long n;

			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 1 || n > 50)
				return fail(&o, EXIT_USAGE,
					    "--reps: '%s' is not a number in [1, 50]",
					    optarg);
			o.reps = (int)n;
			break;
		}
		case 'h': usage(stdout); return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	name = argv[optind];
	o.nargs = argc - optind - 1;
	o.args = argv + optind + 1;
	if (!strcmp(name, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	log_setup(o.verbose, o.json);
	json_set_pretty(o.pretty);

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		if (o.nargs > commands[i].max_args) {
			fprintf(stderr, "xnat %s: unexpected argument '%s'\n",
				name, o.args[commands[i].max_args]);
			return EXIT_USAGE;
		}
		/* trace counts with -c, as ping and tcpdump do. */
		if (!strcmp(name, "trace")) {
			o.count = o.config;
			o.config = NULL;
		}
		/* Enter the namespace first: everything after acts in it,
		 * and the bpffs must be the host's to find state again. */
		if (netns_enter(o.netns) || netns_bpffs_ready())
			return EXIT_SYSTEM;
		return commands[i].fn(&o);
	}
	fprintf(stderr, "xnat: unknown command '%s'\n", name);
	usage(stderr);
	return EXIT_USAGE;
}
