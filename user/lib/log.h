/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Diagnostics to stderr through one function, with libbpf's own messages
 * routed here one level down: -v shows pr_debug, -vv adds libbpf's debug.
 * Results go to stdout, never through here.
 */
#ifndef XNAT_LOG_H
#define XNAT_LOG_H

/* XNAT_ prefixed: <syslog.h> defines LOG_INFO and LOG_DEBUG. */
enum xnat_log_level {
	XNAT_LOG_WARN = 0,
	XNAT_LOG_INFO = 1,
	XNAT_LOG_DEBUG = 2,
	XNAT_LOG_VERBOSE = 3,
};

void log_setup(int verbosity, int json);
void log_print(enum xnat_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* After a call that failed and set errno: "WHAT: <its strerror>" warned,
 * and -errno returned for the caller to pass on. */
int pr_warn_errno(const char *what);

#define pr_warn(...) log_print(XNAT_LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_print(XNAT_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_print(XNAT_LOG_DEBUG, __VA_ARGS__)

#endif /* XNAT_LOG_H */
