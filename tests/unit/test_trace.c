// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of `xnat trace` in the data path (bpf/trace.h) and of its
 * filter words (user/trace_filter.c): no event while no tracer is
 * attached; with one, an event per packet with the tuple before and after
 * NAT, the path's reason, the egress port and the new-flow decision; the
 * filter terms (host before or after NAT, port, proto, reason glob); the
 * rate limit, whose excess is counted and never lost silently; a lapsed
 * lease, which stops the trace. Fixtures and runner: fixture.h.
 */
#include <time.h>
#include "clock.h"
#include "fixture.h"
#include "trace_filter.h"

static struct ring_buffer *rb;
static struct trace_event events[16];
static int nevents;

static int on_event(void *ctx, void *data, size_t len)
{
	if (len == sizeof(struct trace_event) &&
	    nevents < (int)ARRAY_SIZE(events))
		memcpy(&events[nevents], data, len);
	nevents++;
	return 0;
}

static bool rb_open(void)
{
	if (rb)
		return true;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.xnat_trace_rb), on_event,
			      NULL, NULL);
	return ASSERT_TRUE(rb != NULL, "ring_buffer__new");
}

/* Empty the ring and forget what it held. */
static bool events_reset(void)
{
	if (!rb_open())
		return false;
	ring_buffer__consume(rb);
	nevents = 0;
	return true;
}

static int events_read(void)
{
	ring_buffer__consume(rb);
	return nevents;
}

/* Attach a tracer with the filter WORDS (NULL-terminated). */
static bool trace_on(const char *const *words, __u32 rate)
{
	struct trace_config tc;
	struct trace_cpu zero_cpu[ncpus];
	char err[200], *argv[16];
	int argc = 0;
	__u32 zero = 0;

	while (words && words[argc])
		argv[argc] = (char *)words[argc], argc++;
	if (!ASSERT_OK(trace_filter_parse(argc, argv, &tc, err, sizeof(err)),
		       "trace_filter_parse"))
		return false;
	memset(zero_cpu, 0, sizeof(zero_cpu));
	tc.active = 1;
	tc.rate = rate;
	tc.lease_end_ns = clock_ns(CLOCK_MONOTONIC) + 60 * 1000000000ULL;
	return ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_trace_cpu),
					     &zero, zero_cpu, BPF_ANY), "zero trace_cpu") &&
	       ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_trace_cfg),
					     &zero, &tc, BPF_ANY), "trace_cfg on") &&
	       events_reset();
}

static bool trace_off(void)
{
	struct trace_config tc = {};
	__u32 zero = 0;

	return ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_trace_cfg),
					     &zero, &tc, BPF_ANY), "trace_cfg off");
}

static void cpu_sums(__u64 *matched, __u64 *lost)
{
	struct trace_cpu per[ncpus];
	__u32 zero = 0;

	*matched = *lost = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xnat_trace_cpu), &zero, per))
		return;
	for (int c = 0; c < ncpus; c++) {
		*matched += per[c].matched;
		*lost += per[c].lost;
	}
}

static __be32 ip4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

/*
 * Under the tracer on: a new UDP flow from SPORT, HITS more packets on it
 * and F (*OK: they went as expected); then the tracer off. Whether the
 * ring holds N events (WHAT).
 */
static bool traced(uint16_t sport, int hits, const struct fixture *f, int n,
		   const char *what, bool *ok)
{
	*ok &= udp_out(sport, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	for (int i = 0; i < hits; i++)
		*ok &= udp_out(sport, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	*ok &= run_fixture(f);
	trace_off();
	return ASSERT_EQ(events_read(), n, what);
}

/* No tracer: packets flow, nothing reaches the ring. */
static bool test_idle(void)
{
	bool ok = trace_off() && events_reset();

	ok &= udp_out(41000, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	ok &= udp_out(41000, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= ASSERT_EQ(events_read(), 0, "events with no tracer");
	return ok;
}
FIXTURE_TEST("trace_idle_no_events", true, .fn = test_idle);

/* A new flow, then a hit and the reply: before/after, path, decision. */
static bool test_events(void)
{
	static const struct fixture reply = { .name = "reply",
		UDP_UNNAT(53, 41100, FAST, 41100) };
	const struct trace_event *e = events;
	bool ok = trace_on(NULL, 100);

	if (!traced(41100, 1, &reply, 3, "events", &ok))
		return false;
	ok &= ASSERT_EQ(e[0].reason, XNAT_FWD_SLOW, "0 reason");
	ok &= ASSERT_EQ(e[0].action, XDP_REDIRECT, "0 action");
	ok &= ASSERT_TRUE(!strcmp(trace_path(&e[0]), "slow"), "0 path slow");
	ok &= ASSERT_EQ(e[0].new_flow, 1, "0 new flow");
	ok &= ASSERT_EQ(e[0].nat, FLOW_NAT_SNAT, "0 snat");
	ok &= ASSERT_EQ(e[0].key.ifindex, if_lan, "0 ingress");
	ok &= ASSERT_EQ(e[0].egress_ifindex, if_wan, "0 egress");
	ok &= ASSERT_EQ(e[0].key.saddr.v4, ip4(LAN_HOST), "0 src before");
	ok &= ASSERT_EQ(e[0].new_saddr.v4, ip4(NAT_ADDR), "0 src after");
	ok &= ASSERT_EQ(ntohs(e[0].new_sport), 41100, "0 port kept");
	ok &= ASSERT_EQ(e[0].new_daddr.v4, ip4(WAN_GW), "0 dst after");
	ok &= ASSERT_TRUE(e[0].len >= 42, "0 len");
	ok &= ASSERT_EQ(e[1].reason, XNAT_FWD_FAST, "1 reason");
	ok &= ASSERT_TRUE(!strcmp(trace_path(&e[1]), "fast"), "1 path fast");
	ok &= ASSERT_EQ(e[1].new_flow, 0, "1 not new");
	ok &= ASSERT_EQ(e[2].key.ifindex, if_wan, "2 ingress");
	ok &= ASSERT_EQ(e[2].key.daddr.v4, ip4(NAT_ADDR), "2 dst before");
	ok &= ASSERT_EQ(e[2].new_daddr.v4, ip4(LAN_HOST), "2 dst after");
	ok &= ASSERT_EQ(e[2].egress_ifindex, if_lan, "2 egress");
	ok &= ASSERT_TRUE(e[0].ts_ns <= e[1].ts_ns && e[1].ts_ns <= e[2].ts_ns,
			  "time order");
	return ok;
}
FIXTURE_TEST("trace_events_before_after", true, .fn = test_events);

/* host matches an address after NAT too; port and proto select. */
static bool test_filter_terms(void)
{
	static const char *const nat_host[] = { "host", NAT_ADDR, NULL };
	static const char *const other_host[] = { "host", "198.19.0.99", NULL };
	static const char *const port[] = { "proto", "udp", "and", "port",
					    "41201", NULL };
	static const char *const tcp[] = { "proto", "tcp", NULL };
	__u64 matched, lost;
	bool ok = true;

	ok &= trace_on(nat_host, 100);
	ok &= udp_out(41200, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	ok &= ASSERT_EQ(events_read(), 1, "host after NAT matches");
	ok &= ASSERT_EQ(events[0].key.saddr.v4, ip4(LAN_HOST), "the packet");

	ok &= trace_on(other_host, 100);
	ok &= udp_out(41200, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= ASSERT_EQ(events_read(), 0, "other host matches nothing");
	cpu_sums(&matched, &lost);
	ok &= ASSERT_EQ(matched, 0, "nothing matched");

	ok &= trace_on(port, 100);
	ok &= udp_out(41200, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= udp_out(41201, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	ok &= ASSERT_EQ(events_read(), 1, "one port of two");
	ok &= ASSERT_EQ(ntohs(events[0].key.sport), 41201, "its port");

	ok &= trace_on(tcp, 100);
	ok &= udp_out(41201, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= ASSERT_EQ(events_read(), 0, "udp is not tcp");
	trace_off();
	return ok;
}
FIXTURE_TEST("trace_filter_terms", true, .fn = test_filter_terms);

/* reason drop_*: a forwarded packet is not shown, an unsolicited one is. */
static bool test_filter_reason(void)
{
	static const char *const drops[] = { "reason", "drop_*", NULL };
	static const struct fixture unsolicited = { .name = "unsolicited",
		UDP_REPLY(53, 42999), DROP(UNSOLICITED) };
	bool ok = trace_on(drops, 100);

	if (!traced(41300, 0, &unsolicited, 1, "drops only", &ok))
		return false;
	ok &= ASSERT_EQ(events[0].reason, XNAT_DROP_UNSOLICITED, "reason");
	ok &= ASSERT_TRUE(!strcmp(trace_path(&events[0]), "dropped"), "path");
	ok &= ASSERT_EQ(events[0].egress_ifindex, 0, "no egress");
	return ok;
}
FIXTURE_TEST("trace_filter_reason", true, .fn = test_filter_reason);

/* Over the rate: the excess is counted, shown + lost = matched. */
static bool test_rate_counted(void)
{
	__u64 matched, lost;
	bool ok = trace_on(NULL, 2);

	for (int i = 0; i < 5; i++)
		ok &= udp_out(41400, 53, XDP_REDIRECT,
			      i ? XNAT_FWD_FAST : XNAT_FWD_SLOW);
	trace_off();
	cpu_sums(&matched, &lost);
	ok &= ASSERT_EQ(events_read(), 2, "shown");
	ok &= ASSERT_EQ(matched, 5, "matched");
	ok &= ASSERT_EQ(lost, 3, "not shown, counted");
	return ok;
}
FIXTURE_TEST("trace_rate_counted", true, .fn = test_rate_counted);

/* A tracer that died without switching off: past its lease, silence. */
static bool test_lease_lapsed(void)
{
	struct trace_config tc;
	__u64 matched, lost;
	__u32 zero = 0;
	bool ok = trace_on(NULL, 100);

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xnat_trace_cfg), &zero, &tc);
	tc.lease_end_ns = clock_ns(CLOCK_MONOTONIC) - 1;
	bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_trace_cfg), &zero, &tc,
			    BPF_ANY);
	ok &= udp_out(41500, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	trace_off();
	cpu_sums(&matched, &lost);
	ok &= ASSERT_EQ(events_read(), 0, "no events past the lease");
	ok &= ASSERT_EQ(matched, 0, "nothing counted");
	return ok;
}
FIXTURE_TEST("trace_lease_lapsed", true, .fn = test_lease_lapsed);

/* The words: errors name the word, reason globs become masks. */
static bool test_filter_words(void)
{
	static const char *const bad[][3] = {
		{ "host", "198.18.1.300" }, { "port", "0" }, { "port", "x" },
		{ "proto", "sctpx" }, { "reason", "nope_*" }, { "colour", "red" },
		{ "host" },
	};
	char *ok_words[] = { "reason", "drop_*", "reason", "fwd_fast",
			     "host", "2001:2::1" };
	struct trace_config tc;
	__u64 want = 1ULL << XNAT_FWD_FAST;
	char err[200];
	bool ok = true;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int n = bad[i][1] ? 2 : 1;

		ok &= ASSERT_EQ(trace_filter_parse(n, (char **)bad[i], &tc, err,
						   sizeof(err)), -EINVAL, bad[i][0]);
		ok &= ASSERT_TRUE(strstr(err, bad[i][0]) != NULL, err);
	}
	ok &= ASSERT_OK(trace_filter_parse(6, ok_words, &tc, err, sizeof(err)),
			"good words");
	for (int r = 0; r < XNAT_REASON_MAX; r++)
		if (!strncmp(reasons[r].name, "drop_", 5))
			want |= 1ULL << r;
	ok &= ASSERT_EQ(tc.reasons, want, "reason mask");
	ok &= ASSERT_EQ(tc.match, XNAT_TRACE_HOST, "host term only");
	ok &= ASSERT_EQ(tc.host_family, XNAT_AF_INET6, "v6 host");
	ok &= ASSERT_OK(trace_filter_parse(0, NULL, &tc, err, sizeof(err)),
			"empty filter");
	ok &= ASSERT_EQ(tc.reasons, ~0ULL, "empty filter: every reason");
	return ok;
}
FIXTURE_TEST("trace_filter_words", false, .fn = test_filter_words);

FIXTURE_MAIN_REGISTERED()
