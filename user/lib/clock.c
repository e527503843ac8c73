// SPDX-License-Identifier: GPL-2.0-only
/* Clocks in nanoseconds; see clock.h. */
#include "clock.h"

__u64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
