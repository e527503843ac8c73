/* SPDX-License-Identifier: GPL-2.0-only */
/* A clock's time in nanoseconds, the unit the data path's timestamps use
 * (bpf_ktime_get_ns() is CLOCK_MONOTONIC, bpf_ktime_get_coarse_ns()
 * CLOCK_MONOTONIC_COARSE). */
#ifndef XNAT_LIB_CLOCK_H
#define XNAT_LIB_CLOCK_H

#include <time.h>
#include <linux/types.h>

__u64 clock_ns(clockid_t clock);

#endif /* XNAT_LIB_CLOCK_H */
