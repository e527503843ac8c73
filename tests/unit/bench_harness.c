// SPDX-License-Identifier: GPL-2.0-only
/* What the bench's unit tests share; see bench_harness.h. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_harness.h"
#include "check.h"
#include "log.h"
#include "pkt.h"

int bench_fds_at_start;

bool run_prog(int prog_fd, int ifindex, const uint8_t *in, uint32_t len,
	      int repeat, uint8_t *out, uint32_t *out_len, uint32_t *retval)
{
	struct xdp_md ctx = { .data_end = len, .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = in,
		.data_size_in = len,
		.data_out = out,
		.data_size_out = out ? PKT_MAX : 0,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = repeat,
	);

	if (!ASSERT_OK(bpf_prog_test_run_opts(prog_fd, &opts),
		       "bpf_prog_test_run_opts"))
		return false;
	if (out_len)
		*out_len = opts.data_size_out;
	*retval = opts.retval;
	return true;
}

bool xdp_attached(int ifindex)
{
	__u32 id = 0;

	return !bpf_xdp_query_id(ifindex, 0, &id) && id;
}

int count_fds(void)
{
	char path[64];
	int fd, n = 0;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += !access(path, F_OK);
	}
	return n;
}

int unshare_net(int *orig)
{
	if (orig) {
		*orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (*orig < 0) {
			fprintf(stderr, "setup: /proc/self/ns/net: %s\n",
				strerror(errno));
			return -1;
		}
	}
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "setup: unshare(CLONE_NEWNET): %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

int pin_this_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		fprintf(stderr, "setup: sched_setaffinity: %s\n", strerror(errno));
		return -1;
	}
	return cpu;
}

int bench_tests_main(const char *prog, int (*setup)(void),
		     const struct bench_test *tests, size_t n)
{
	int n_pass = 0, n_fail = 0;
	size_t i;

	setvbuf(stderr, NULL, _IOLBF, 0);
	log_setup(0, 0);
	if (geteuid()) {
		fprintf(stderr, "%s: must run as root\n", prog);
		printf("#1 setup:FAIL\n0 passed, 1 failed\n");
		return 1;
	}
	cur_test = "setup";
	if (setup()) {
		printf("#1 setup:FAIL\n0 passed, 1 failed\n");
		return 1;
	}
	bench_fds_at_start = count_fds();
	for (i = 0; i < n; i++) {
		unsigned int failures = check_failures;
		bool ok;

		cur_test = tests[i].name;
		ok = tests[i].fn() && check_failures == failures;
		if (ok)
			n_pass++;
		else
			n_fail++;
		printf("#%zu %s:%s\n", i + 1, tests[i].name, ok ? "OK" : "FAIL");
		fflush(stdout);
	}
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

const uint8_t mac_gen0[6] = { 0x02, 0, 0, 0, 0x0a, 0x01 };
const uint8_t mac_sink0[6] = { 0x02, 0, 0, 0, 0x0b, 0x01 };

int gen_testbed_setup(struct gen_testbed *tb)
{
	if (unshare_net(&tb->orig_netns))
		return -1;
	/* No IPv6 chatter (ND, MLD) on the veths. */
	write_file("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	if (sh("ip link add gen0 address 02:00:00:00:0a:01 type veth "
	       "peer name sink0 address 02:00:00:00:0b:01") ||
	    sh("ip link set gen0 up") || sh("ip link set sink0 up"))
		return -1;
	tb->if_gen = if_nametoindex("gen0");
	tb->if_sink = if_nametoindex("sink0");
	tb->if_lo = if_nametoindex("lo");
	if (!tb->if_gen || !tb->if_sink || !tb->if_lo) {
		fprintf(stderr, "setup: gen0/sink0/lo missing\n");
		return -1;
	}
	tb->cpu = pin_this_cpu();
	return tb->cpu < 0 ? -1 : 0;
}
