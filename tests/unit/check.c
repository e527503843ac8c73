// SPDX-License-Identifier: GPL-2.0-only
/* The one definition of check.h's state, its failure report and sh(). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "check.h"

const char *cur_test = "setup";

void check_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "  %s: ", cur_test);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		fprintf(stderr, "  '%s' failed (status %d)\n", cmd, rc);
	return rc;
}
