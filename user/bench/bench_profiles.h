/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The names `xnat bench --profiles` takes, by group: the one list that the
 * parser accepts (bench_plan.c) and that --help (main.c) and the error for
 * an unknown name print, so that neither can name a profile the other
 * does not know.
 */
#ifndef XNAT_BENCH_PROFILES_H
#define XNAT_BENCH_PROFILES_H

/* Frame sizes: 64, 500 and 1500 bytes, and the IMIX mix. */
#define BENCH_PROFILE_SIZES "64,500,1500,imix"
/* Flows: 1 and 10,000 from one host; 100,000 and 1,000,000 from as many
 * inside endpoints (the many-endpoint profiles, 64 B one way only). */
#define BENCH_PROFILE_FLOWS "1,10k,100k,1M"
/* Directions: LAN to WAN only, or both at once. */
#define BENCH_PROFILE_DIRS "up,both"
/* Tests: UDP throughput, new-flow rate, TCP (iperf3), BPF_PROG_RUN. */
#define BENCH_PROFILE_TESTS "udp,newflow,tcp,micro"

/* What --help says: the groups, space separated. */
#define BENCH_PROFILES_HELP                                               \
	BENCH_PROFILE_SIZES " " BENCH_PROFILE_FLOWS " " BENCH_PROFILE_DIRS \
	" " BENCH_PROFILE_TESTS " (each group filters; all by default)"

#endif /* XNAT_BENCH_PROFILES_H */
