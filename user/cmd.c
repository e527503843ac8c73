// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every command shares beyond its options: the one way to report an
 * error (cmd.h). Here rather than in main.c so that the commands depend on
 * it without depending on the command table that calls them.
 */
#include <stdarg.h>
#include <stdio.h>
#include "cmd.h"
#include "json.h"

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
