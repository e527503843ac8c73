// SPDX-License-Identifier: GPL-2.0-only
/*
 * The data path's programs against the verifier's limit: each must verify
 * in at most 90 % of the 1,000,000 instructions the kernel lets it walk
 * (BPF_COMPLEXITY_LIMIT_INSNS), so that a change that brings one near the
 * limit fails here, with the figure, and not as a load that fails on a
 * kernel whose verifier explores a little more. The figure is the
 * verifier's own ("processed N insns", log level BPF_LOG_STATS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "check.h"
#include "xnat.skel.h"

#define VERIFIER_LIMIT 1000000
#define BUDGET (VERIFIER_LIMIT / 10 * 9)
#define LOG_STATS 4 /* BPF_LOG_STATS: the summary lines only */

static char logs[2][64 * 1024];

static long processed(const char *log)
{
	const char *p = strstr(log, "processed ");

	return p ? strtol(p + strlen("processed "), NULL, 10) : -1;
}

int main(void)
{
	struct xnat_bpf *skel = xnat_bpf__open();
	struct bpf_program *prog;
	int i = 0, failed = 0, err;

	cur_test = "verifier_budget";

	if (!ASSERT_TRUE(skel, "open the XDP object"))
		return 1;
	bpf_object__for_each_program(prog, skel->obj) {
		if (i == 2) {
			check_fail("more programs than this test has logs for");
			return 1;
		}
		bpf_program__set_log_buf(prog, logs[i], sizeof(logs[i]));
		bpf_program__set_log_level(prog, LOG_STATS);
		i++;
	}
	err = xnat_bpf__load(skel);
	if (!ASSERT_OK(err, "load the XDP object"))
		failed = 1;
	i = 0;
	bpf_object__for_each_program(prog, skel->obj) {
		long n = processed(logs[i++]);

		printf("%s: %ld of %d instructions\n", bpf_program__name(prog),
		       n, VERIFIER_LIMIT);
		if (!ASSERT_TRUE(n > 0, "the verifier's figure in the log") ||
		    !ASSERT_TRUE(n <= BUDGET, "within 90 % of the limit"))
			failed = 1;
	}
	xnat_bpf__destroy(skel);
	printf("%d passed, %d failed\n", !failed, failed);
	return failed;
}
