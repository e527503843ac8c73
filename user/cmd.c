// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every command shares beyond its options: the one way to report an
 * error (cmd.h), opening the router's maps, the --watch interval. Here rather than in main.c so that the commands depend on
 * it without depending on the command table that calls them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "cmd.h"
#include "config.h"
#include "json.h"
#include "pins.h"
#include "state.h"

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

int cmd_map_open(const struct opts *o, const char *name, const char *missing,
		 int (*kernel_mode)(const struct opts *o), int *ret)
{
	struct xnat_state st;
	int fd;

	if (!state_load(&st) && st.mode == MODE_KERNEL) {
		*ret = kernel_mode(o);
		return -1;
	}
	fd = pins_map_open(name);
	if (fd < 0)
		*ret = fail(o, EXIT_SYSTEM, "%s", missing);
	return fd < 0 ? -1 : fd;
}

void watch_interval(const struct opts *o)
{
	fflush(stdout);
	usleep((useconds_t)(o->watch * 1e6));
}
