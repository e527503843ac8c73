/* SPDX-License-Identifier: GPL-2.0-only */
/* Files and directories: closing an fd that may be unset, creating a path
 * with its parents (the pin directories under bpffs, the bench's results
 * directory). */
#ifndef XNAT_LIB_FSUTIL_H
#define XNAT_LIB_FSUTIL_H

#include <sys/types.h>
#include <unistd.h>

/* close(FD) unless FD is negative (not opened, or failed to open). */
static inline void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* mkdir -p PATH with MODE for what it creates; 0 or -errno. */
int mkdir_p(const char *path, mode_t mode);

#endif /* XNAT_LIB_FSUTIL_H */
