/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Closing the BPF program fds libxdp 1.3.1 (Debian 12) opens and never
 * closes. xdp_multiprog__get_from_ifindex(), and every libxdp call that
 * makes one inside (xdp_program__attach, xdp_program__detach), opens the
 * attached program by id and keeps only a dup of that fd (likewise each
 * component program it opens from its pin): one fd per call, each keeping
 * a program, replaced or not, and the maps it holds in kernel memory for
 * as long as `xnat run` lives. Newer libxdp closes them itself; then there
 * is nothing left to close here.
 *
 * How: the program fds open before the call, and after it; one that is new
 * and held by none of the handles the call returned (KEEP) is referenced
 * by nothing libxdp will ever close. xnat is single-threaded, so nothing
 * else opens fds meanwhile.
 */
#ifndef XNAT_LIBXDP_FDS_H
#define XNAT_LIBXDP_FDS_H

#define PROG_FDS_MAX 128

struct prog_fds {
	int n;
	int over;               /* more than PROG_FDS_MAX: close nothing */
	int fd[PROG_FDS_MAX];
};

/* Note the program fds open now, before a libxdp call. */
void prog_fds_before(struct prog_fds *s);
/* After it: close each program fd opened since BEFORE that is none of the
 * N_KEEP fds of KEEP (negative ones are ignored). */
void prog_fds_close_new(const struct prog_fds *before, const int *keep,
			int n_keep);

#endif /* XNAT_LIBXDP_FDS_H */
