/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Diagnostics to stderr through one function, with libbpf's own messages
 * routed here one level down: -v shows pr_debug, -vv adds libbpf's debug.
 * Results go to stdout, never through here.
 */
#ifndef XNAT_LOG_H
#define XNAT_LOG_H

enum log_level { LOG_WARN = 0, LOG_INFO = 1, LOG_DEBUG = 2, LOG_VERBOSE = 3 };

void log_setup(int verbosity, int json);
void log_print(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_warn(...) log_print(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_print(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_print(LOG_DEBUG, __VA_ARGS__)

#endif /* XNAT_LOG_H */
