// SPDX-License-Identifier: GPL-2.0-only
/* The one definition of check.h's state, its failure report and the setup
 * helpers sh(), write_file() and router_ports(). */
#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>

#include "check.h"

const char *cur_test = "setup";
unsigned int check_failures;

void check_fail(const char *fmt, ...)
{
	va_list ap;

	check_failures++;
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

int write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f) {
		fprintf(stderr, "setup: %s: %s\n", path, strerror(errno));
		return -1;
	}
	err = fputs(val, f) < 0;
	err |= fclose(f) != 0;
	if (err)
		fprintf(stderr, "setup: writing %s failed\n", path);
	return err ? -1 : 0;
}

int router_ports(const char *a, int *ia, const char *b, int *ib)
{
	if (write_file("/proc/sys/net/ipv4/ip_forward", "1") ||
	    write_file("/proc/sys/net/ipv6/conf/all/forwarding", "1"))
		return -1;
	*ia = if_nametoindex(a);
	*ib = if_nametoindex(b);
	if (!*ia || !*ib) {
		fprintf(stderr, "setup: %s/%s missing\n", a, b);
		return -1;
	}
	return 0;
}
