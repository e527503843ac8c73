// SPDX-License-Identifier: GPL-2.0-only
/*
 * The program fds libxdp leaks, found by /proc/self/fd (see libxdp_fds.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libxdp_fds.h"
#include "log.h"

static int is_prog_fd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:bpf-prog");
}

/* Call FN(fd, ARG) for each program fd open now; -1 if /proc says no. */
static int each_prog_fd(void (*fn)(int fd, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		/* The directory's own fd is no program: is_prog_fd says so. */
		if (is_prog_fd(fd))
			fn(fd, arg);
	}
	closedir(d);
	return 0;
}

static void note(int fd, void *arg)
{
	struct prog_fds *s = arg;

	if (s->n < PROG_FDS_MAX)
		s->fd[s->n++] = fd;
	else
		s->over = 1;
}

void prog_fds_before(struct prog_fds *s)
{
	s->n = 0;
	s->over = each_prog_fd(note, s) < 0;
}

static int has(const int *fds, int n, int fd)
{
	for (int i = 0; i < n; i++)
		if (fds[i] == fd)
			return 1;
	return 0;
}

struct close_arg {
	const struct prog_fds *before;
	const int *keep;
	int n_keep;
};

static void close_new(int fd, void *arg)
{
	const struct close_arg *a = arg;

	if (has(a->before->fd, a->before->n, fd) ||
	    has(a->keep, a->n_keep, fd))
		return;
	pr_debug("Closing program fd %d libxdp left open\n", fd);
	close(fd);
}

void prog_fds_close_new(const struct prog_fds *before, const int *keep,
			int n_keep)
{
	struct close_arg a = { before, keep, n_keep };

	/* Without the full list of before, a new fd cannot be told from
	 * one of ours: leak rather than close one we use. */
	if (!before->over)
		each_prog_fd(close_new, &a);
}
