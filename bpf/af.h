/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Address family numbers for bpf_fib_lookup's family (from the kernel's
 * include/linux/socket.h, which BPF programs cannot include), shared by
 * the data path's FIB lookups (fib.h) and the bench's bare forwarder
 * (bench/xnat_fwd.bpf.c).
 */
#ifndef XNAT_AF_H
#define XNAT_AF_H

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

#endif /* XNAT_AF_H */
