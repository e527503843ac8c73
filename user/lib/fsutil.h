/* SPDX-License-Identifier: GPL-2.0-only */
/* Directories: creating a path with its parents (the pin directories under
 * bpffs, the bench's results directory). */
#ifndef XNAT_LIB_FSUTIL_H
#define XNAT_LIB_FSUTIL_H

#include <sys/types.h>

/* mkdir -p PATH with MODE for what it creates; 0 or -errno. */
int mkdir_p(const char *path, mode_t mode);

#endif /* XNAT_LIB_FSUTIL_H */
