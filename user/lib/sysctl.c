// SPDX-License-Identifier: GPL-2.0-only
/* Kernel settings under /proc/sys; see sysctl.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sysctl.h"

/* An fd on /proc/sys/PATH, or -errno. */
static int sysctl_open(const char *path, int flags)
{
	char full[256];
	int fd;

	if (snprintf(full, sizeof(full), "/proc/sys/%s", path) >= (int)sizeof(full))
		return -ENAMETOOLONG;
	fd = open(full, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int sysctl_read(const char *path, char *buf, size_t len)
{
	int fd = sysctl_open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	for (char *c = buf; *c; c++)
		if (*c == '\t')
			*c = ' ';
	return 0;
}

int sysctl_write(const char *path, const char *value)
{
	int fd = sysctl_open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return fd;
	if (write(fd, value, strlen(value)) < 0)
		err = -errno;
	close(fd);
	return err;
}
