/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Branch coverage of the data path, for `make fuzz` only (tests/fuzz/).
 * Compiled in with -DXNAT_FUZZ; in every other build XNAT_COV() expands
 * to nothing that runs, and the counters do not exist. Each expansion
 * gets its own slot (__COUNTER__: the program is one translation unit), so
 * every place that stops a packet (each pkt_stop() and count() call, see
 * parsing.h and stats.h) and each marked decision in xnat.bpf.c is a branch
 * the fuzzer can tell apart. The slots live in .bss, an array map that
 * the harness reads through the skeleton's mmap after every run and hands
 * to libFuzzer as extra counters: coverage is the BPF program's, not the
 * harness's. xnat_fuzz_counted and xnat_fuzz_reason let the harness check
 * that every run went through count() exactly once.
 */
#ifndef XNAT_FUZZ_H
#define XNAT_FUZZ_H

#ifdef XNAT_FUZZ
#include <linux/types.h>

#define XNAT_FUZZ_SLOTS 1024

__u32 xnat_fuzz_cov[XNAT_FUZZ_SLOTS];
__u32 xnat_fuzz_counted;
__u32 xnat_fuzz_reason;

static __always_inline void fuzz_hit(__u32 slot)
{
	if (slot < XNAT_FUZZ_SLOTS)
		xnat_fuzz_cov[slot]++;
}

/* count() was called with REASON (see stats.h). */
static __always_inline void fuzz_counted(__u32 reason)
{
	xnat_fuzz_counted++;
	xnat_fuzz_reason = reason;
}

#define XNAT_COV() fuzz_hit(__COUNTER__)
#else
#define XNAT_COV() ((void)0)
#endif

#endif /* XNAT_FUZZ_H */
