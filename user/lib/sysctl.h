/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading and writing kernel settings under /proc/sys. PATH is relative to
 * /proc/sys ("net/ipv4/ip_forward"). /proc/sys/net belongs to the network
 * namespace of the thread that opens it, so callers enter the namespace
 * first.
 */
#ifndef XNAT_LIB_SYSCTL_H
#define XNAT_LIB_SYSCTL_H

#include <stddef.h>

/* The value as one line: no newline, tabs (ip_local_port_range) turned
 * into spaces so that it can be written back as read. 0 or -errno. */
int sysctl_read(const char *path, char *buf, size_t len);
/* 0 or -errno. */
int sysctl_write(const char *path, const char *value);

#endif /* XNAT_LIB_SYSCTL_H */
