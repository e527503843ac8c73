/* SPDX-License-Identifier: GPL-2.0-only */
/* A clock's time in nanoseconds, the unit the data path's timestamps use
 * (bpf_ktime_get_ns() is CLOCK_MONOTONIC, bpf_ktime_get_coarse_ns()
 * CLOCK_MONOTONIC_COARSE), and the kernel's tick rate. */
#ifndef XNAT_LIB_CLOCK_H
#define XNAT_LIB_CLOCK_H

#include <time.h>
#include <linux/types.h>

__u64 clock_ns(clockid_t clock);

/*
 * The kernel's HZ, which the jiffies of conntrack's timeouts count: the
 * resolution of the coarse clocks is one tick (clock_getres() returns
 * LOW_RES_NSEC, TICK_NSEC = (NSEC_PER_SEC + HZ / 2) / HZ: the kernel's
 * include/vdso/ktime.h and include/vdso/jiffies.h). 0 when unknown. Not
 * sysconf(_SC_CLK_TCK): that is USER_HZ, 100 on most machines whatever
 * HZ is.
 */
unsigned int clock_hz(void);
/* The HZ whose TICK_NSEC is TICK_NS (clock_hz's arithmetic), 0 for none. */
unsigned int clock_hz_of_tick(long tick_ns);

#endif /* XNAT_LIB_CLOCK_H */
