// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the reason counters: every enum xnat_reason has a name and
 * a meaning in user/reasons.c (a missing entry fails here, not in a
 * stats output with a hole), and the reasons that say what happened where
 * an older one was reused: the insert race (pass_insert_race, once
 * counted as pass_kernel_flow). LAN echo replies (pass_echo_reply) are in
 * test_pass.c. Fixtures and runner: fixture.h.
 */
#include "fixture.h"

/* Names and meanings present, names unique and lower_snake (JSON keys). */
static bool test_reasons_named(void)
{
	bool ok = true;
	int r, q;

	for (r = 0; r < XNAT_REASON_MAX; r++) {
		const char *n = reasons[r].name;

		if (!n || !*n || !reasons[r].meaning || !*reasons[r].meaning) {
			check_fail("reason %d has no name or no meaning in user/reasons.c", r);
			ok = false;
			continue;
		}
		if (strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(n)) {
			check_fail("reason %d: name '%s' is not lower_snake", r, n);
			ok = false;
		}
		for (q = 0; q < r; q++) {
			if (reasons[q].name && !strcmp(reasons[q].name, n)) {
				check_fail("reasons %d and %d share the name '%s'", q, r, n);
				ok = false;
			}
		}
	}
	return ok;
}

/*
 * Another CPU inserted the same flow between this CPU's lookup and its
 * insert: the reply entry exists already. Planted here before the packet,
 * it makes the insert fail with EEXIST as the race would. The packet goes
 * up as pass_insert_race and leaves the table as it found it; once the
 * planted entry is gone, the same connection opens on its preserved port.
 */
static bool test_insert_race(void)
{
	struct flow_key rk = flow_key4(WAN_GW, 53, NAT_ADDR, 40000,
				       IPPROTO_UDP, if_wan);
	struct flow_value planted = { .dir = FLOW_DIR_REPLY };
	bool ok = true;

	/* As the racing CPU has it: the reply towards the same endpoint
	 * (another endpoint's would be a port clash, which the flow escapes
	 * with an endpoint-dependent port: test_scale_edm.c). */
	inet_pton(AF_INET, LAN_HOST, &planted.new_daddr.v4);
	planted.new_dport = htons(40000);

	ok &= ASSERT_OK(bpf_map_update_elem(flows_fd, &rk, &planted, BPF_NOEXIST),
			"plant the racing reply entry");
	ok &= udp_out(40000, 53, XDP_PASS, XNAT_PASS_INSERT_RACE);
	ok &= ASSERT_OK(bpf_map_delete_elem(flows_fd, &rk),
			"remove the racing reply entry");
	ok &= udp_out(40000, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	return ok;
}

static const struct test tests[] = {
	{ "reasons_named", false, .fn = test_reasons_named },
	{ "insert_race_counted", true, .fn = test_insert_race },
};

FIXTURE_MAIN(tests)
