/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The bench's own XDP programs (generator, sink) attach through BPF links:
 * closing the link detaches exactly that program, and the kernel does it
 * too when the process dies, so a killed benchmark leaves no XDP program
 * behind.
 */
#ifndef XNAT_BENCH_XDP_LINK_H
#define XNAT_BENCH_XDP_LINK_H

#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* Attach PROG_FD to IFINDEX with a BPF link in MODE (XDP_FLAGS_*_MODE):
 * the link's fd, or -errno. */
static inline int xdp_link(int prog_fd, int ifindex, __u32 mode)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = mode);
	int fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);

	return fd < 0 ? -errno : fd;
}

#endif /* XNAT_BENCH_XDP_LINK_H */
