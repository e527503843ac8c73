// SPDX-License-Identifier: GPL-2.0-only
/* Logging for xnat and libbpf; see log.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"

static int log_verbosity;
static int log_json;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	/* libbpf and libxdp warn about what xnat expects and handles (the
	 * dispatcher falling back to a direct attach, feature probes): their
	 * warnings are our debug (-v), their debug our verbose (-vv). A real
	 * failure is reported by xnat itself, naming what failed. */
	enum xnat_log_level ours = level == LIBBPF_DEBUG ? XNAT_LOG_VERBOSE : XNAT_LOG_DEBUG;

	if ((int)ours > log_verbosity + 1 || (log_json && ours > XNAT_LOG_WARN))
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt,
			va_list args)
{
	return libbpf_print(level == LIBXDP_DEBUG ? LIBBPF_DEBUG : LIBBPF_WARN,
			    fmt, args);
}

void log_setup(int verbosity, int json)
{
	log_verbosity = verbosity;
	log_json = json;
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}

void log_print(enum xnat_log_level level, const char *fmt, ...)
{
	va_list ap;

	/* In JSON mode stdout must stay parseable and stderr quiet but for
	 * errors, as bpftool does. */
	if ((int)level > log_verbosity + 1 || (log_json && level > XNAT_LOG_WARN))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

int pr_warn_errno(const char *what)
{
	int err = -errno; /* before printing can change errno */

	pr_warn("%s: %s\n", what, strerror(-err));
	return err;
}
