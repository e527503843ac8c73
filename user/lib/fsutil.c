// SPDX-License-Identifier: GPL-2.0-only
/* Directory helpers; see fsutil.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include "fsutil.h"

int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *c = buf + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = 0;
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		*c = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	return 0;
}
