/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Checks for the unit tests, in the style of the kernel's test_progs.h:
 * each reports what failed, under the name of the running test (cur_test),
 * and returns whether it held, so a test can go on and report all. Named
 * check.h, not assert.h, so that it never stands in for <assert.h>.
 */
#ifndef XNAT_TEST_CHECK_H
#define XNAT_TEST_CHECK_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The test running now, for the messages (set by the runner). */
extern const char *cur_test;

/* Report a failed check of cur_test on stderr, printf style. */
void check_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* How many checks have failed so far. A runner fails a test during which
 * this grew, whatever the test returned: a test that reports a failed
 * check and then returns without clearing its own result (`if
 * (!ASSERT_EQ(...)) goto out;`) is not passed. */
extern unsigned int check_failures;

/* A shell command of a test's setup (ip, nft): system(CMD), its failure
 * reported on stderr; 0 or its status. */
int sh(const char *cmd);
/* VAL into the file PATH (a sysctl), a failure reported: 0 or -1. */
int write_file(const char *path, const char *val);
/* A test router's forwarding on (IPv4 and IPv6) and the ifindexes of its
 * ports A and B, which must exist; a failure reported: 0 or -1. */
int router_ports(const char *a, int *ia, const char *b, int *ib);

#define ASSERT_EQ(actual, expected, name)                                    \
	({                                                                   \
		long long ___a = (long long)(actual);                        \
		long long ___e = (long long)(expected);                      \
		bool ___ok = ___a == ___e;                                   \
		if (!___ok)                                                  \
			check_fail("%s:%d %s: actual %lld (0x%llx) != "      \
				   "expected %lld (0x%llx)", __func__,       \
				   __LINE__, name, ___a, ___a, ___e, ___e);  \
		___ok;                                                       \
	})

#define ASSERT_TRUE(cond, name)                                              \
	({                                                                   \
		bool ___ok = !!(cond);                                       \
		if (!___ok)                                                  \
			check_fail("%s:%d %s: unexpected false", __func__,   \
				   __LINE__, name);                          \
		___ok;                                                       \
	})

#define ASSERT_OK(err, name)                                                 \
	({                                                                   \
		long long ___e = (long long)(err);                           \
		if (___e)                                                    \
			check_fail("%s:%d %s: error %lld (%s)", __func__,    \
				   __LINE__, name, ___e,                     \
				   strerror(___e < 0 ? -___e : errno));      \
		!___e;                                                       \
	})

#endif /* XNAT_TEST_CHECK_H */
