/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the bench's unit tests share (test_gen.c: generator; test_sink.c:
 * sink; test_fwd.c: bare forwarder and microbenchmark): BPF_PROG_RUN of a
 * program as if a frame arrived on a port, whether a port has XDP
 * attached, the namespace and CPU steps of their setup (and the whole
 * testbed of the generator's and the sink's tests), a count of open
 * descriptors, and the runner that prints "#N name:OK|FAIL" and
 * "N passed, N failed".
 */
#ifndef XNAT_TEST_BENCH_HARNESS_H
#define XNAT_TEST_BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One non-live BPF_PROG_RUN of PROG_FD on IN (LEN bytes) arriving on
 * IFINDEX, REPEAT times; OUT (PKT_MAX bytes) and OUT_LEN may be NULL. */
bool run_prog(int prog_fd, int ifindex, const uint8_t *in, uint32_t len,
	      int repeat, uint8_t *out, uint32_t *out_len, uint32_t *retval);
/* Is any XDP program attached to IFINDEX? */
bool xdp_attached(int ifindex);

/* Descriptors open in this process. */
int count_fds(void);
/* count_fds() after the setup, before the first test (the runner's). */
extern int bench_fds_at_start;

/* Move this process into a new network namespace of its own (gone with
 * it); with ORIG, first open the one it was in there. 0 or -1 (said). */
int unshare_net(int *orig);
/* Stay on the CPU this runs on (non-live runs execute there, and the
 * generator's sequence is per CPU): the CPU, or -1 (said). */
int pin_this_cpu(void);

/* The generator's and the sink's testbed: a veth pair gen0 (the
 * generator's port, MAC mac_gen0) and sink0 (mac_sink0), addresses
 * GEN_SRC and GEN_DST for the frames between them, in a namespace of its
 * own. */
#define GEN_SRC "198.18.0.1"
#define GEN_DST "198.18.0.2"
extern const uint8_t mac_gen0[6], mac_sink0[6];

struct gen_testbed {
	int orig_netns; /* the namespace the process started in */
	int if_gen, if_sink, if_lo;
	int cpu;        /* the CPU the process is pinned to */
};

/* Build it and pin this process to its CPU: 0, or -1 (said). */
int gen_testbed_setup(struct gen_testbed *tb);

struct bench_test {
	const char *name;
	bool (*fn)(void);
};

/* As root: SETUP, then every test in order; the exit status of main. */
int bench_tests_main(const char *prog, int (*setup)(void),
		     const struct bench_test *tests, size_t n);

#endif /* XNAT_TEST_BENCH_HARNESS_H */
