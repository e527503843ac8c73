// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the NAT's per-host state (bpf/nat.h, bpf/slowpath.h) with
 * BPF_PROG_RUN: per-host port limits (RFC 6888 REQ-4), not bypassed by
 * forged sources, expiry giving everything back, and the short DNS
 * timeout (RFC 4787 REQ-5a). The
 * expiry tests wait for the flow sweeper (bpf/sweep.h) and the mappings'
 * timers with one-second timeouts (waiting, not timing: nothing
 * measures).
 *
 * Runs on the fixture's testbed with a large flow table (scale_harness.h):
 * every forwarded frame is checked whole, both checksums against the
 * independent oracle (csum_oracle.h). Run as root from the repository
 * root. Prints "#N name:OK|FAIL" and ends with "N passed, N failed".
 */
#include "scale_harness.h"

/* ---- Per-host limits (RFC 6888 REQ-4) ----------------------------------- */

static long host_ports(int hostn)
{
	struct nat_host nh = {};
	__be32 addr;
	char h[32];

	inet_pton(AF_INET, scale_host(hostn, h), &addr);
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xnat_hosts), &addr, &nh))
		return -1;
	return nh.ports;
}

/*
 * C with a one-port range (30000) and two ports a host, on a fresh table
 * (false if it cannot be set); then HOST's first flow takes the range's
 * port and its second an endpoint-dependent one (*OK).
 */
static bool two_ports_taken(struct xnat_config *c, int host, bool *ok)
{
	c->port_min = c->port_max = 30000;
	c->ports_per_host = 2;
	if (!scale_reset(c))
		return false;
	*ok &= out_expect(c, host, 30000, 9, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			  NULL);
	*ok &= out_expect(c, host, 1001, 10, XDP_REDIRECT, XNAT_FWD_SLOW_EDM,
			  NULL, NULL);
	return true;
}

/*
 * ports_per_host = 4: host .30 gets four mappings, then its own counted
 * refusals (dropped: the kernel must not NAT around the limit), while host
 * .31 still gets ports, and so does .30 through its existing mappings.
 * Endpoint-dependent ports count too.
 */
static bool test_host_limit(void)
{
	struct xnat_config c = scale_cfg;
	uint16_t port;
	bool ok = true;
	int i;

	c.ports_per_host = 4;
	if (!scale_reset(&c))
		return false;
	for (i = 0; i < 4; i++)
		ok &= out_expect(&c, 30, 40000 + i, 9, XDP_REDIRECT,
				 XNAT_FWD_SLOW, NULL, NULL);
	ok &= ASSERT_EQ(host_ports(30), 4, "ports of .30");
	ok &= out_expect(&c, 30, 40004, 9, XDP_DROP, XNAT_DROP_HOST_LIMIT, NULL,
			 NULL);
	ok &= out_expect(&c, 30, 40005, 10, XDP_DROP, XNAT_DROP_HOST_LIMIT,
			 NULL, NULL);
	ok &= ASSERT_EQ(host_ports(30), 4, "refusals take nothing");
	/* Its mappings still work towards new remotes. */
	ok &= out_expect(&c, 30, 40000, 11, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 &port);
	ok &= ASSERT_EQ(port, 40000, "existing mapping");
	/* Others are not affected. */
	for (i = 0; i < 4; i++)
		ok &= out_expect(&c, 31, 40000 + i, 9, XDP_REDIRECT,
				 XNAT_FWD_SLOW, NULL, NULL);
	ok &= ASSERT_EQ(host_ports(31), 4, "ports of .31");

	/* Endpoint-dependent ports count against the limit as well. */
	if (!two_ports_taken(&c, 32, &ok))
		return false;
	ok &= out_expect(&c, 32, 1002, 11, XDP_DROP, XNAT_DROP_HOST_LIMIT,
			 NULL, NULL);
	ok &= out_expect(&c, 33, 1002, 11, XDP_REDIRECT, XNAT_FWD_SLOW_EDM,
			 NULL, NULL);
	ok &= ASSERT_EQ(host_ports(32), 2, "ports of .32");
	return ok;
}
FIXTURE_TEST(.name = "host_limit", .fn = test_host_limit);

/*
 * ports_per_host counts by source address: a host at its limit that could
 * forge sources would take ports under other names. Sources another port
 * routes (the WAN's default route, the VLAN's subnet on vl100) are dropped
 * as spoofed by the LAN ports' source check (bpf/fib.h) before a port is
 * taken or a host counted. Addresses of lan0's own subnet it can still
 * forge: on one link nothing tells a host's addresses from another's.
 */
static bool test_host_limit_spoofed(void)
{
	static const char *const forged[] = { "198.19.200.30", "198.18.3.30" };
	int hosts_fd = bpf_map__fd(skel->maps.xnat_hosts);
	uint8_t frame[PKT_MAX], out[PKT_MAX];
	struct xnat_config c = scale_cfg;
	uint32_t out_len, got;
	struct nat_host nh;
	uint64_t before;
	bool ok = true;
	__be32 addr;
	size_t i, len;

	c.ports_per_host = 4;
	if (!scale_reset(&c))
		return false;
	for (i = 0; i < 4; i++)
		ok &= out_expect(&c, 30, 40000 + i, 9, XDP_REDIRECT,
				 XNAT_FWD_SLOW, NULL, NULL);
	ok &= out_expect(&c, 30, 40004, 9, XDP_DROP, XNAT_DROP_HOST_LIMIT, NULL,
			 NULL);
	for (i = 0; i < ARRAY_SIZE(forged); i++) {
		before = scale_counter(XNAT_DROP_SPOOFED);
		len = udp_frame(frame, false, forged[i], 40004, REMOTE, 9);
		if (!xdp_run(if_lan, frame, len, 0, out, &out_len, &got))
			return false;
		ok &= ASSERT_EQ(got, XDP_DROP, forged[i]);
		ok &= ASSERT_EQ(scale_counter(XNAT_DROP_SPOOFED) - before, 1,
				"drop_spoofed counted");
		inet_pton(AF_INET, forged[i], &addr);
		ok &= ASSERT_TRUE(bpf_map_lookup_elem(hosts_fd, &addr, &nh),
				  "no ports for the forged source");
	}
	ok &= ASSERT_EQ(map_count(bpf_map__fd(skel->maps.xnat_ports)), 4,
			"the host's four ports, no more");
	return ok;
}
FIXTURE_TEST(.name = "host_limit_spoofed", .fn = test_host_limit_spoofed);

/* Wait up to LIMIT seconds for FD to hold N entries. */
static bool wait_count(int fd, long n, int limit, const char *what)
{
	for (int i = 0; i < limit * 10 && map_count(fd) != n; i++)
		usleep(100 * 1000);
	return ASSERT_EQ(map_count(fd), n, what);
}

/* Ports xnat_port_active says an active mapping owns (any protocol). */
static long port_active_count(void)
{
	int fd = bpf_map__fd(skel->maps.xnat_port_active);
	long n = 0;
	uint8_t b[8];

	for (__u32 w = 0; w < PORT_ACTIVE_WORDS; w++) {
		if (bpf_map_lookup_elem(fd, &w, b))
			return -1;
		for (int i = 0; i < 8; i++)
			n += !!b[i];
	}
	return n;
}

/*
 * Expiry gives everything back: flows (and with them their endpoint-
 * dependent ports), mappings (one hold time after their last flow), and the hosts' counts.
 * With a 1 s UDP timeout this takes about 2 s of waiting.
 */
static bool test_expiry_releases(void)
{
	struct xnat_config c = scale_cfg;
	bool ok = true;

	c.timeout_udp = 1;
	if (!two_ports_taken(&c, 40, &ok))
		return false;
	ok &= ASSERT_EQ(host_ports(40), 2, "ports held");
	ok &= ASSERT_EQ(port_active_count(), 1, "the mapping's port active");
	ok &= wait_count(bpf_map__fd(skel->maps.xnat_flows), 0, 10, "flows expired");
	if (!wait_count(bpf_map__fd(skel->maps.xnat_mappings), 0, 10,
			"mapping released after its hold")) {
		struct nat_endpoint k;
		struct nat_mapping m;

		ok = false;
		if (!bpf_map_get_next_key(bpf_map__fd(skel->maps.xnat_mappings), NULL,
					  &k) &&
		    !bpf_map_lookup_elem(bpf_map__fd(skel->maps.xnat_mappings), &k,
					 &m))
			fprintf(stderr, "    mapping left: flows %u out %u flags %#x\n",
				m.flows, m.out_flows, m.flags);
	}
	ok &= ASSERT_EQ(map_count(bpf_map__fd(skel->maps.xnat_ports)), 0,
			"port released");
	ok &= ASSERT_EQ(port_active_count(), 0, "no port said active");
	ok &= ASSERT_EQ(host_ports(40), 0, "host's ports given back");
	/* And the host may open flows again. */
	ok &= out_expect(&c, 40, 1003, 11, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 NULL);
	return ok;
}
FIXTURE_TEST(.name = "expiry_releases", .fn = test_expiry_releases);

/*
 * RFC 4787 REQ-5a: UDP to port 53 may time out sooner. With udp_dns = 1
 * and udp = 300 the DNS flow and its mapping go, the other flow stays.
 */
static bool test_dns_timeout(void)
{
	struct xnat_config c = scale_cfg;
	bool ok = true;

	c.timeout_udp_dns = 1;
	if (!scale_reset(&c))
		return false;
	ok &= out_expect(&c, 41, 40000, 53, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 NULL);
	ok &= out_expect(&c, 41, 40001, 54, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 NULL);
	ok &= wait_count(flows_fd, 2, 10, "DNS flow expired, the other kept");
	ok &= wait_count(bpf_map__fd(skel->maps.xnat_mappings), 1, 10,
			 "DNS-only mapping released");
	/* A mapping used for DNS and more keeps the long hold: here the
	 * reply of the kept flow still comes through. */
	ok &= reply_expect(41, 40001, 54, NULL, 40001);
	return ok;
}
FIXTURE_TEST(.name = "dns_timeout", .fn = test_dns_timeout);

/* Does host HOSTN's SPORT have a mapping that no connection holds? */
static bool mapping_unused(int hostn, uint16_t sport)
{
	struct nat_endpoint ep = { .port = htons(sport), .proto = IPPROTO_UDP };
	struct nat_mapping m;
	char h[32];

	inet_pton(AF_INET, scale_host(hostn, h), &ep.addr);
	if (!ASSERT_OK(bpf_map_lookup_elem(bpf_map__fd(skel->maps.xnat_mappings),
					   &ep, &m), "the mapping"))
		return false;
	return ASSERT_EQ(m.flows, 0, "no reference on the mapping") &
	       ASSERT_EQ(m.out_flows, 0, "no outbound reference");
}

/*
 * The expiry queue full (bpf/sweep.h): a new connection that could not be
 * queued would never expire, so it is not made; the kernel's NAT gets it
 * (pass_table_full) and XDP keeps no entry of it, nor a reference on the
 * mapping made for it (which waits out its hold time, as after any failed
 * insert). The queue is filled from userspace with copies of a live
 * connection's reference, which the running sweeper pushes back as it
 * pops them (a stale one it would drop, making room), then emptied.
 */
static bool test_expiry_queue_full(void)
{
	int qfd = bpf_map__fd(skel->maps.xnat_expiry);
	struct xnat_config c = scale_cfg;
	struct expiry_ref ref;
	struct flow_value v;
	bool ok = true;
	char h[32];

	if (!scale_reset(&c))
		return false;
	ok &= out_expect(&c, 42, 40000, 9, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 NULL);
	ref.key = flow_key4(scale_host(42, h), 40000, REMOTE, 9, IPPROTO_UDP,
			    if_lan);
	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &ref.key, &v),
		       "the live connection"))
		return false;
	ref.created = (__u32)v.created_ns;
	while (!bpf_map_update_elem(qfd, NULL, &ref, BPF_ANY))
		;
	ok &= ASSERT_EQ(errno, E2BIG, "the queue is full");
	ok &= out_expect(&c, 42, 40001, 9, XDP_PASS, XNAT_PASS_TABLE_FULL,
			 NULL, NULL);
	ok &= ASSERT_EQ(map_count(flows_fd), 2, "no entry but the first's");
	ok &= mapping_unused(42, 40001);
	while (!bpf_map_lookup_and_delete_elem(qfd, NULL, &ref))
		;
	/* Room again: the same endpoint's connection is made. */
	ok &= out_expect(&c, 42, 40001, 9, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 NULL);
	return ok;
}
FIXTURE_TEST(.name = "expiry_queue_full", .fn = test_expiry_queue_full);

/* The sweeper's state (bpf/map_sweep.h struct flow_sweep). */
struct sweep_state {
	struct bpf_timer timer;
	__u64 queued;
	__u64 swept;
};

static bool sweep_queued_add(long long n)
{
	int fd = bpf_map__fd(skel->maps.xnat_sweep);
	struct sweep_state st;
	__u32 zero = 0;

	if (!ASSERT_OK(bpf_map_lookup_elem(fd, &zero, &st), "the sweeper's state"))
		return false;
	st.queued += n;
	return ASSERT_OK(bpf_map_update_elem(fd, &zero, &st, BPF_EXIST),
			 "the sweeper's count");
}

/*
 * The sweeper pops a live connection's reference and pushes it back: a
 * new connection on another CPU must not take that slot in between, or
 * the live one is ended early for want of room. New connections leave
 * SWEEP_RESERVE (64) slots free by the count of queued references: with
 * the count 64 short of the capacity, although the queue itself has room,
 * the next one goes to the kernel (pass_table_full) and leaves nothing
 * behind; one fewer counted, it is made.
 */
static bool test_expiry_reserve(void)
{
	struct xnat_config c = scale_cfg;
	__u32 max = skel->rodata->sweep_queue_max;
	int fd = bpf_map__fd(skel->maps.xnat_sweep);
	struct sweep_state st;
	__u32 zero = 0;
	bool ok = true;
	long long pad;

	struct expiry_ref ref;
	int i;

	if (!scale_reset(&c) ||
	    !ASSERT_EQ(max, bpf_map__max_entries(skel->maps.xnat_expiry),
		       "the sweeper knows the queue's capacity"))
		return false;
	/* The sweeper drops the references flows_clear() left stale (one
	 * cycle, a second here); until then it changes the count, which
	 * the test rewrites. */
	for (i = 0; i < 100 && !bpf_map_lookup_elem(
				       bpf_map__fd(skel->maps.xnat_expiry),
				       NULL, &ref);
	     i++)
		usleep(100000);
	if (!ASSERT_EQ(i < 100, true, "the queue empties") ||
	    !ASSERT_OK(bpf_map_lookup_elem(fd, &zero, &st), "the sweeper's state"))
		return false;
	pad = (long long)max - 64 - (long long)st.queued;
	ok &= sweep_queued_add(pad);
	ok &= out_expect(&c, 43, 40000, 9, XDP_PASS, XNAT_PASS_TABLE_FULL,
			 NULL, NULL);
	ok &= ASSERT_EQ(map_count(flows_fd), 0, "no entry");
	ok &= mapping_unused(43, 40000);
	ok &= sweep_queued_add(-1);
	ok &= out_expect(&c, 43, 40001, 9, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 NULL);
	ok &= sweep_queued_add(1 - pad);
	return ok;
}

FIXTURE_TEST(.name = "expiry_reserve", .fn = test_expiry_reserve);

SCALE_MAIN_REGISTERED()
