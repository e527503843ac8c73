// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat bench compare DIR...: read each run's bench.json, line their
 * figures up by profile, and print them with their ratios to a base row
 * (--base RUN:MODE, else the first run's first mode) and a warning for
 * each procedure difference between the runs (bench_compare.h). Exit 0,
 * 1 when an argument is not a bench run this xnat reads (file:line), 2
 * when a file cannot be read.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "bench_compare.h"
#include "cmd.h"
#include "log.h"

/* The options of a bench run mean nothing to compare. */
static const char *run_option(const struct opts *o)
{
	if (o->quick)
		return "--quick";
	if (o->reps)
		return "--reps";
	if (o->modes)
		return "--modes";
	if (o->profiles)
		return "--profiles";
	if (o->out_dir)
		return "--out";
	if (o->netns)
		return "-n/--netns";
	return NULL;
}

int cmd_bench_compare(const struct opts *o)
{
	const char *bad = run_option(o);
	struct cmp_table t;
	char err[1024];
	int rc = EXIT_OK;

	if (bad)
		return fail(o, EXIT_USAGE, "bench compare: %s applies to a bench run, not to "
			    "compare (xnat bench --help)", bad);
	if (o->nargs < 2)
		return fail(o, EXIT_USAGE, "bench compare: name one or more runs (directories "
			    "holding bench.json, or the files)");
	cmp_table_init(&t);
	for (int i = 1; i < o->nargs && rc == EXIT_OK; i++) {
		int err_load = cmp_load(&t, o->args[i], err, sizeof(err));

		if (err_load)
			rc = fail(o, err_load > 0 ? EXIT_USAGE : EXIT_SYSTEM,
				  "bench compare: %s", err);
	}
	if (rc == EXIT_OK && cmp_base_set(&t, o->base, err, sizeof(err)))
		rc = fail(o, EXIT_USAGE, "bench compare: %s", err);
	if (rc == EXIT_OK && cmp_find_differences(&t))
		rc = fail(o, EXIT_SYSTEM, "bench compare: %s", strerror(ENOMEM));
	if (rc == EXIT_OK) {
		/* The warnings on stderr also with --json, where they are in
		 * the document too: a procedure difference must be seen. */
		if (o->json)
			cmp_report_warnings(stderr, &t);
		if (o->json)
			cmp_report_json(stdout, &t, o->pretty);
		else
			cmp_report_text(stdout, &t);
		fflush(stdout);
	}
	cmp_table_free(&t);
	return rc;
}
