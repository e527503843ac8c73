// SPDX-License-Identifier: GPL-2.0-only
/* Clocks in nanoseconds and the kernel's tick rate; see clock.h. */
#include "clock.h"

__u64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* TICK_NSEC rounds 1e9 / HZ down after adding HZ / 2: rounding 1e9 /
 * TICK_NSEC to the nearest gives HZ back for every HZ from 1 to 12287,
 * the most include/linux/jiffies.h allows (tests/unit/test_config_limits.c
 * tries each). */
unsigned int clock_hz_of_tick(long tick_ns)
{
	if (tick_ns <= 0 || tick_ns > 1000000000L)
		return 0;
	return (1000000000L + tick_ns / 2) / tick_ns;
}

unsigned int clock_hz(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || res.tv_sec)
		return 0;
	return clock_hz_of_tick(res.tv_nsec);
}
