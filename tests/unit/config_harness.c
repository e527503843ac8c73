// SPDX-License-Identifier: GPL-2.0-only
/* What the config parser's tests share; see config_harness.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_harness.h"

char tmpdir[64];
char ini_path[128];

int config_tests_main(const struct config_test *tests, size_t n)
{
	int passed = 0, failed = 0;
	size_t i;

	strcpy(tmpdir, "/tmp/xnat-test-config.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(ini_path, sizeof(ini_path), "%s/t.ini", tmpdir);
	for (i = 0; i < n; i++) {
		unsigned int failures = check_failures;

		cur_test = tests[i].name;
		if ((tests[i].fn ? tests[i].fn() : !tests[i].check()) ||
		    check_failures != failures) {
			failed++;
			printf("#%zu %s:FAIL\n", i + 1, tests[i].name);
		} else {
			passed++;
			printf("#%zu %s:OK\n", i + 1, tests[i].name);
		}
		fflush(stdout);
	}
	unlink(ini_path);
	rmdir(tmpdir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
