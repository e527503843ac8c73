// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the NAT's endpoint-dependent fallback (bpf/nat.h,
 * bpf/slowpath.h) with BPF_PROG_RUN: ports shared towards distinct
 * remotes when the range holds fewer ports than inside endpoints, the
 * reservation of a mapping that is over (RFC 4787 REQ-3), the fallback's
 * capacity, and the bound on what a packet that cannot be NATed costs.
 *
 * Runs on the fixture's testbed with a large flow table (scale_harness.h):
 * every forwarded frame is checked whole, both checksums against the
 * independent oracle (csum_oracle.h). Run as root from the repository
 * root. Prints "#N name:OK|FAIL" and ends with "N passed, N failed".
 */
#include <time.h>
#include "scale_harness.h"

/* ---- Endpoint-dependent fallback --------------------------------------- */

/* Fill the flow table to its last entry with flows of no one (from
 * 198.18.250.1 port 1 up, *K the key they share but for the ports), so
 * that the next insert finds it full. */
static bool flow_table_fill(struct flow_key *k)
{
	struct flow_value v = {};
	long n, filler = 0;

	*k = flow_key4("198.18.250.1", 1, "198.18.250.2", 1, IPPROTO_UDP,
		       if_lan);
	for (n = map_count(flows_fd); n < SCALE_FLOWS_MAX; n++, filler++) {
		k->sport = htons(1 + filler % 60000);
		k->dport = htons(1 + filler / 60000);
		if (!ASSERT_OK(bpf_map_update_elem(flows_fd, k, &v,
						   BPF_NOEXIST), "filler"))
			return false;
	}
	return true;
}

/* The range cut to the one port 30000, held by host HOSTN's flow from
 * its port 30000: where the tests of what else may use that port start.
 * *PORT (if not NULL) gets the mapped port. A failure here ends the test,
 * as every later step needs the mapping. */
static bool single_port_held(struct xnat_config *c, int hostn, uint16_t *port)
{
	c->port_min = c->port_max = 30000;
	if (!scale_reset(c))
		return false;
	return out_expect(c, hostn, 30000, 9, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			  port);
}

/*
 * Four ports, more endpoints: the first four keep a port of their own
 * (port preservation makes it deterministic), the others share ports
 * towards distinct remotes, as Linux's masquerade would. Replies find
 * their way back to the right endpoint; a fifth endpoint towards a remote
 * port whose four ports are all in use is dropped and counted, and leaves
 * no state behind.
 */
static bool test_edm_fallback(void)
{
	struct xnat_config c = scale_cfg;
	uint16_t port[4];
	bool ok = true;
	int i;

	c.port_min = 30000;
	c.port_max = 30003;
	if (!scale_reset(&c))
		return false;
	for (i = 0; i < 4; i++) {
		ok &= out_expect(&c, 10, 30000 + i, 9, XDP_REDIRECT,
				 XNAT_FWD_SLOW, NULL, &port[i]);
		ok &= ASSERT_EQ(port[i], 30000 + i, "port preserved");
	}
	/* Towards port 9 every external port is in use: the kernel's NAT,
	 * with its own range, gets the flow. */
	ok &= out_expect(&c, 11, 5000, 9, XDP_PASS, XNAT_PASS_NO_PORT, NULL,
			 NULL);
	ok &= ASSERT_EQ(edm_flows(), 0, "no endpoint-dependent flow left by the drop");
	/* Each candidate's reply entry was tried and found taken by a
	 * mapping's flow: none of them stays behind. */
	ok &= ASSERT_EQ(map_count(flows_fd), 8, "the four flows' entries only");
	/* Towards port 10: four endpoints of host .11, each its own port. */
	for (i = 0; i < 4; i++) {
		ok &= out_expect(&c, 11, 5000 + i, 10, XDP_REDIRECT,
				 XNAT_FWD_SLOW_EDM, NULL, &port[i]);
		for (int j = 0; j < i; j++)
			ok &= ASSERT_TRUE(port[j] != port[i],
					  "distinct ports towards one remote");
	}
	ok &= ASSERT_EQ(edm_flows(), 4, "endpoint-dependent flows");
	ok &= out_expect(&c, 11, 5004, 10, XDP_PASS, XNAT_PASS_NO_PORT, NULL,
			 NULL);
	/* Replies reach the endpoint that owns the port towards them. */
	for (i = 0; i < 4; i++)
		ok &= reply_expect(11, 5000 + i, 10, NULL, port[i]);
	/* An endpoint with a mapping keeps it towards new remotes. */
	ok &= out_expect(&c, 10, 30001, 11, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 &port[0]);
	ok &= ASSERT_EQ(port[0], 30001, "mapping kept");
	return ok;
}
FIXTURE_TEST(.name = "edm_fallback", .fn = test_edm_fallback);

/* Port PORT's owner entry (UDP, first address) in *OWNER. */
static bool port_owner(uint16_t port, struct nat_endpoint *owner)
{
	struct nat_port_key pk = { .port = htons(port), .proto = IPPROTO_UDP };

	return ASSERT_OK(bpf_map_lookup_elem(bpf_map__fd(skel->maps.xnat_ports),
					     &pk, owner), "port owner");
}

/* UDP port PORT's byte of xnat_port_active (first address), or -1. */
static int port_active_byte(uint16_t port)
{
	__u32 word = port_active_word(0, IPPROTO_UDP, port);
	uint8_t b[8];

	if (!ASSERT_OK(bpf_map_lookup_elem(
			       bpf_map__fd(skel->maps.xnat_port_active),
			       &word, b), "port_active word"))
		return -1;
	return b[port % 8];
}

/* Set the flags of port PORT's owner entry (UDP, first address), and its
 * byte of xnat_port_active with them, as the data path writes both. */
static bool port_owner_set(uint16_t port, uint8_t flags)
{
	struct nat_port_key pk = { .port = htons(port), .proto = IPPROTO_UDP };
	int fd = bpf_map__fd(skel->maps.xnat_port_active);
	__u32 word = port_active_word(0, IPPROTO_UDP, port);
	struct nat_endpoint owner;
	uint8_t b[8];

	if (!port_owner(port, &owner) ||
	    !ASSERT_OK(bpf_map_lookup_elem(fd, &word, b), "port_active word"))
		return false;
	owner.flags = flags;
	b[port % 8] = !!(flags & NAT_EP_ACTIVE);
	return ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_ports),
					     &pk, &owner, BPF_EXIST),
			 "port owner written") &&
	       ASSERT_OK(bpf_map_update_elem(fd, &word, b, BPF_ANY),
			 "port_active written");
}

/* Set the counts of host HOSTN's mapping of SPORT (UDP). */
static bool mapping_counts(int hostn, uint16_t sport, uint32_t flows,
			   uint32_t out_flows)
{
	int fd = bpf_map__fd(skel->maps.xnat_mappings);
	struct nat_endpoint ep = { .port = htons(sport), .proto = IPPROTO_UDP };
	struct nat_mapping m;
	char h[32];

	inet_pton(AF_INET, scale_host(hostn, h), &ep.addr);
	if (!ASSERT_OK(bpf_map_lookup_elem(fd, &ep, &m), "mapping"))
		return false;
	m.flows = flows;
	m.out_flows = out_flows;
	return ASSERT_OK(bpf_map_update_elem(fd, &ep, &m, BPF_EXIST),
			 "mapping counts");
}

/*
 * RFC 4787 REQ-3: a mapping that is over keeps its port for one timeout,
 * and an endpoint-dependent flow of another host may not take it either
 * (a remote of the old mapping would reach that host). The "over, but
 * waiting" state is set up directly: the flow's entries removed, the
 * mapping's counts at zero and its port's owner no longer marked active,
 * as flow expiry leaves them (edm_owner_mark checks that the data path
 * leaves them so).
 */
static bool test_edm_respects_reserved_port(void)
{
	struct xnat_config c = scale_cfg;
	int mappings_fd = bpf_map__fd(skel->maps.xnat_mappings);
	struct nat_endpoint ep = { .port = htons(30000), .proto = IPPROTO_UDP };
	struct nat_mapping m;
	char h[32];
	bool ok = true;

	if (!single_port_held(&c, 70, NULL))
		return false;
	/* While the mapping is in use, others may share its port. */
	ok &= out_expect(&c, 71, 1000, 10, XDP_REDIRECT, XNAT_FWD_SLOW_EDM,
			 NULL, NULL);
	map_clear(flows_fd, SCALE_FLOWS_MAX + 1);
	inet_pton(AF_INET, scale_host(70, h), &ep.addr);
	if (!ASSERT_OK(bpf_map_lookup_elem(mappings_fd, &ep, &m), "mapping"))
		return false;
	m.flows = m.out_flows = 0;
	if (!ASSERT_OK(bpf_map_update_elem(mappings_fd, &ep, &m, BPF_EXIST),
		       "mapping over") ||
	    !port_owner_set(30000, 0))
		return false;
	ok &= out_expect(&c, 71, 1001, 9, XDP_PASS, XNAT_PASS_NO_PORT, NULL,
			 NULL);
	ok &= out_expect(&c, 71, 1002, 11, XDP_PASS, XNAT_PASS_NO_PORT, NULL,
			 NULL);
	ok &= ASSERT_EQ(map_count(flows_fd), 0, "no flow");
	return ok;
}
FIXTURE_TEST(.name = "edm_reserved_port", .fn = test_edm_respects_reserved_port);

/*
 * The port owner's NAT_EP_ACTIVE mark (struct nat_endpoint), which spares
 * the fallback the look-up of the owner's mapping, follows the mapping's
 * outbound flows through the data path: set when the mapping is made,
 * cleared when its last outbound flow goes (here: a revived mapping whose
 * flow finds the table full), set again when one comes back. An entry
 * without the mark (as an older xnat made them) leaves the decision to
 * the mapping, as before.
 */
static bool test_edm_owner_mark(void)
{
	struct xnat_config c = scale_cfg;
	struct nat_endpoint owner;
	struct flow_key k;
	bool ok = true;

	c.port_min = c.port_max = 30000;
	if (!scale_reset(&c))
		return false;
	ok &= out_expect(&c, 90, 30000, 9, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 NULL);
	ok &= port_owner(30000, &owner);
	ok &= ASSERT_EQ(owner.flags, NAT_EP_ACTIVE, "marked at creation");
	ok &= ASSERT_EQ(port_active_byte(30000), 1, "its byte set at creation");
	/* Unmarked, mapping in use: the mapping decides, the port is free. */
	ok &= port_owner_set(30000, 0);
	ok &= out_expect(&c, 91, 1000, 10, XDP_REDIRECT, XNAT_FWD_SLOW_EDM,
			 NULL, NULL);

	/* The mapping over (its flows gone), then a flow of its endpoint
	 * revives it but finds the flow table full: marked, then unmarked
	 * by the reference given back. */
	map_clear(flows_fd, SCALE_FLOWS_MAX + 1);
	ok &= mapping_counts(90, 30000, 0, 0);
	ok &= port_owner_set(30000, NAT_EP_ACTIVE);
	if (!flow_table_fill(&k))
		return false;
	ok &= out_expect(&c, 90, 30000, 11, XDP_PASS, XNAT_PASS_TABLE_FULL,
			 NULL, NULL);
	ok &= port_owner(30000, &owner);
	ok &= ASSERT_EQ(owner.flags, 0, "unmarked with its last outbound flow");
	ok &= ASSERT_EQ(port_active_byte(30000), 0, "its byte cleared with it");
	map_clear(flows_fd, SCALE_FLOWS_MAX + 1);
	/* Over and unmarked: the port is reserved (REQ-3). */
	ok &= out_expect(&c, 92, 1000, 9, XDP_PASS, XNAT_PASS_NO_PORT, NULL,
			 NULL);
	/* Its endpoint comes back: marked, and the port may be shared. */
	ok &= out_expect(&c, 90, 30000, 12, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 NULL);
	ok &= port_owner(30000, &owner);
	ok &= ASSERT_EQ(owner.flags, NAT_EP_ACTIVE, "marked when revived");
	ok &= ASSERT_EQ(port_active_byte(30000), 1, "its byte set again");
	ok &= out_expect(&c, 92, 1000, 9, XDP_REDIRECT, XNAT_FWD_SLOW_EDM,
			 NULL, NULL);
	return ok;
}
FIXTURE_TEST(.name = "edm_owner_mark", .fn = test_edm_owner_mark);

/* Every CPU's "no endpoint-independent port lately" hint (struct
 * nat_alloc_hint) set to now, or cleared: which of mapping_port()'s two
 * ways a new endpoint takes does not depend on the CPU the test runs on. */
static bool full_hint_set(bool on)
{
	int fd = bpf_map__fd(skel->maps.xnat_alloc);
	struct nat_alloc_hint h[ncpus];
	struct timespec ts;
	__u32 zero = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	memset(h, 0, sizeof(h));
	for (int i = 0; i < ncpus; i++)
		h[i].eim_full_ns = on ? (__u64)ts.tv_sec * 1000000000ULL +
						ts.tv_nsec : 0;
	return ASSERT_OK(bpf_map_update_elem(fd, &zero, h, BPF_ANY),
			 "allocation hint");
}

/*
 * The mapping of host OWNER's SPORT, the only one of the one-port range
 * 30000, over (its flows gone, counts at zero, its port's owner
 * unmarked: as flow expiry leaves it): host HOSTN's flow to DPORT, probing
 * the full range, must not get the port (REQ-3) and leaves no flow.
 */
static bool full_probe_reserved(const struct xnat_config *c, int owner,
				uint16_t sport, int hostn, uint16_t dport)
{
	bool ok = true;

	map_clear(flows_fd, SCALE_FLOWS_MAX + 1);
	ok &= mapping_counts(owner, sport, 0, 0);
	ok &= port_owner_set(30000, 0);
	ok &= ASSERT_TRUE(full_hint_set(true), "hint");
	ok &= out_expect(c, hostn, 1000, dport, XDP_PASS, XNAT_PASS_NO_PORT,
			 NULL, NULL);
	ok &= ASSERT_EQ(map_count(flows_fd), 0, "no flow");
	ok &= ASSERT_TRUE(full_hint_set(false), "hint cleared");
	return ok;
}

/*
 * While the range is full (the hint set), a new endpoint tries one random
 * port (port_probe()): found free, it is the endpoint's mapping; found
 * held by a mapping with outbound flows, it is where the endpoint-
 * dependent search starts, without a second look at its owner; held by a
 * mapping that is over (REQ-3), it is not used. A one-port range makes
 * "random" that port.
 */
static bool test_edm_full_probe(void)
{
	struct xnat_config c = scale_cfg;
	uint16_t port = 0;
	bool ok = true;

	c.port_min = c.port_max = 30000;
	if (!scale_reset(&c) || !full_hint_set(true))
		return false;
	ok &= out_expect(&c, 80, 1000, 9, XDP_REDIRECT, XNAT_FWD_SLOW, NULL,
			 &port);
	ok &= ASSERT_EQ(port, 30000, "the probed port, free: a mapping");
	ok &= ASSERT_TRUE(full_hint_set(true), "hint");
	ok &= out_expect(&c, 81, 1000, 10, XDP_REDIRECT, XNAT_FWD_SLOW_EDM,
			 NULL, &port);
	ok &= ASSERT_EQ(port, 30000, "the probed port, active: shared");
	ok &= reply_expect(81, 1000, 10, NULL, 30000);
	ok &= reply_expect(80, 1000, 9, NULL, 30000);
	return ok && full_probe_reserved(&c, 80, 1000, 82, 11);
}
FIXTURE_TEST(.name = "edm_full_probe", .fn = test_edm_full_probe);

/*
 * xnat_port_active cleared (as the loader clears it before each program
 * load, bpf/port_active.h) says "not known", never "free" or "over": an
 * active owner's port is still shared, through a look-up of its owner,
 * and a port whose mapping is over is still reserved (REQ-3).
 */
static bool test_edm_port_active_unknown(void)
{
	int fd = bpf_map__fd(skel->maps.xnat_port_active);
	struct xnat_config c = scale_cfg;
	__u32 word = port_active_word(0, IPPROTO_UDP, 30000);
	uint64_t zero = 0;
	bool ok = true;

	if (!single_port_held(&c, 60, NULL))
		return false;
	ok &= ASSERT_EQ(port_active_byte(30000), 1, "set by the mapping");
	ok &= ASSERT_OK(bpf_map_update_elem(fd, &word, &zero, BPF_ANY),
			"cleared");
	ok &= ASSERT_TRUE(full_hint_set(true), "hint");
	ok &= out_expect(&c, 61, 1000, 10, XDP_REDIRECT, XNAT_FWD_SLOW_EDM,
			 NULL, NULL);
	return ok && full_probe_reserved(&c, 60, 30000, 62, 9);
}
FIXTURE_TEST(.name = "edm_port_active_unknown",
	     .fn = test_edm_port_active_unknown);

/*
 * An endpoint-dependent flow leaves the address-dependent filter of its
 * port's owner alone: it records no peer (inbound traffic through a port
 * is the owner's, so such a record could admit nothing) and so cannot
 * overwrite the owner's record for the same remote address, which let the
 * remote's other ports in before.
 */
static bool test_edm_keeps_owner_filter(void)
{
	struct xnat_config c = scale_cfg;
	uint16_t port = 0;
	bool ok = true;

	if (!single_port_held(&c, 51, &port))
		return false;
	ok &= out_expect(&c, 52, 5000, 10, XDP_REDIRECT, XNAT_FWD_SLOW_EDM,
			 NULL, &port);
	ok &= ASSERT_EQ(port, 30000, "the owner's port, towards another port");
	ok &= ASSERT_EQ(map_count(bpf_map__fd(skel->maps.xnat_peers)), 1,
			"the owner's peer record only");
	/* The remote from a port neither flow uses: the owner sent to its
	 * address, so address-dependent filtering lets it in. */
	ok &= reply_expect(51, 30000, 11, NULL, 30000);
	return ok;
}
FIXTURE_TEST(.name = "edm_keeps_owner_filter", .fn = test_edm_keeps_owner_filter);

/*
 * The scale of the fallback: a NAT with one address holds as many flows
 * from as many endpoints as it has (port, remote) pairs, as Linux's
 * masquerade does; here 16 ports and 64 remote ports, 1024 endpoints of 16
 * hosts (64 ports each). The search over a range of up to 16 ports is
 * complete, so every one of them must get through, even the last.
 */
static bool test_edm_capacity(void)
{
	static bool used[64][16];
	struct xnat_config c = scale_cfg;
	int mappings_fd = bpf_map__fd(skel->maps.xnat_mappings);
	uint16_t port;
	bool ok = true;
	int h, i, n = 0;

	c.port_min = 30000;
	c.port_max = 30015;
	if (!scale_reset(&c))
		return false;
	memset(used, 0, sizeof(used));
	for (h = 0; h < 16 && ok; h++) {
		for (i = 0; i < 64 && ok; i++, n++) {
			int d = n % 64;

			ok &= out_expect(&c, 20 + h, 2000 + i, 1000 + d,
					 XDP_REDIRECT, ANY_FWD_SLOW, NULL,
					 &port);
			ok &= ASSERT_TRUE(!used[d][port - 30000],
					  "(remote, port) used once");
			used[d][port - 30000] = true;
		}
	}
	ok &= ASSERT_EQ(n, 1024, "flows offered");
	ok &= ASSERT_EQ(map_count(mappings_fd) + edm_flows(), 1024,
			"one mapping or endpoint-dependent port per flow");
	ok &= ASSERT_TRUE(map_count(mappings_fd) >= 1, "some mappings");
	/* Full: the next one goes to the kernel, with no state left. */
	ok &= out_expect(&c, 99, 2000, 1000, XDP_PASS, XNAT_PASS_NO_PORT, NULL,
			 NULL);
	ok &= ASSERT_EQ(map_count(mappings_fd) + edm_flows(), 1024,
			"nothing left by the drop");
	return ok;
}
FIXTURE_TEST(.name = "edm_capacity", .fn = test_edm_capacity);

/*
 * The order of an endpoint-dependent flow's candidates. 2,048 ports, all
 * held by mappings (their flows go to remote port 9), then endpoints of
 * their own towards remote port 10 until 90 % of its 2,048 pairs are in
 * use, as many flows towards one remote as a busy server draws. Walking
 * consecutive ports from a random start, runs of taken ports grow where
 * searches end (as linear probing does), and 82-98 of the 1,843 flows
 * met NAT_PORT_TRIES taken ports in a row (5 runs); drawn at random, each
 * candidate is taken with the probability of the load alone: 16-26 (8
 * runs). At most 45 may go without, and no pair is used twice.
 */
static bool test_edm_spread(void)
{
	enum { PORTS = 2048, OFFERED = PORTS * 9 / 10 };
	static bool used[PORTS];
	struct xnat_config c = scale_cfg;
	int n, rc, refused = 0;
	uint16_t port;
	bool ok = true;

	c.port_min = 30000;
	c.port_max = 30000 + PORTS - 1;
	if (!scale_reset(&c))
		return false;
	/* Each mapping keeps its own port (preservation). */
	for (n = 0; n < PORTS && ok; n++)
		ok &= out_expect(&c, 10 + n / 64, 30000 + n, 9, XDP_REDIRECT,
				 XNAT_FWD_SLOW, NULL, NULL);
	memset(used, 0, sizeof(used));
	for (n = 0; n < OFFERED && ok; n++) {
		rc = out_try(&c, 100 + n / 64, 2000 + n % 64, 10, &port);
		ok &= ASSERT_TRUE(rc >= 0, "forwarded or refused for want of a port");
		if (rc == 1) {
			ok &= ASSERT_TRUE(!used[port - 30000],
					  "(remote, port) used once");
			used[port - 30000] = true;
		}
		refused += rc == 0;
	}
	fprintf(stderr, "    %d flows towards %d (port, remote) pairs: %d without a port\n",
		OFFERED, PORTS, refused);
	ok &= ASSERT_TRUE(refused <= 45, "at most 45 without a port");
	ok &= ASSERT_EQ(edm_flows(), OFFERED - refused,
			"an endpoint-dependent flow for each port given");
	return ok;
}
FIXTURE_TEST(.name = "edm_spread", .fn = test_edm_spread);

/*
 * Bounded failure: flows that get no port at all go to the kernel's NAT
 * only within a budget per CPU (bpf/nat.h NAT_NO_PORT_PASS_BURST per
 * window); a flood of them beyond it is dropped and counted, and leaves
 * no state. 1000 such flows, as fast as BPF_PROG_RUN goes: some pass,
 * most are dropped.
 */
static bool test_no_port_budget(void)
{
	struct xnat_config c = scale_cfg;
	uint64_t pass0 = scale_counter(XNAT_PASS_NO_PORT);
	uint64_t drop0 = scale_counter(XNAT_DROP_NO_PORT);
	uint8_t frame[PKT_MAX], out[PKT_MAX];
	uint32_t out_len, got;
	uint64_t passed, dropped;
	bool ok = true;
	char h[32];
	int i;

	if (!single_port_held(&c, 60, NULL))
		return false;
	pass0 = scale_counter(XNAT_PASS_NO_PORT);
	for (i = 0; i < 1000 && ok; i++) {
		size_t len = udp_frame(frame, false, scale_host(61, h), 1000 + i,
				       REMOTE, 9);

		ok &= xdp_run(if_lan, frame, len, 0, out, &out_len, &got);
		ok &= ASSERT_TRUE(got == XDP_PASS || got == XDP_DROP,
				  "not forwarded");
	}
	passed = scale_counter(XNAT_PASS_NO_PORT) - pass0;
	dropped = scale_counter(XNAT_DROP_NO_PORT) - drop0;
	fprintf(stderr, "    1000 flows without a port: %llu to the kernel, %llu dropped\n",
		(unsigned long long)passed, (unsigned long long)dropped);
	ok &= ASSERT_EQ(passed + dropped, 1000, "each counted once");
	ok &= ASSERT_TRUE(passed >= 64, "a burst reaches the kernel");
	ok &= ASSERT_TRUE(dropped > 0, "the flood beyond it is dropped");
	ok &= ASSERT_EQ(map_count(bpf_map__fd(skel->maps.xnat_flows)), 2,
			"no state but the first flow's");
	ok &= ASSERT_EQ(edm_flows(), 0, "no endpoint-dependent flow left");
	return ok;
}
FIXTURE_TEST(.name = "no_port_budget", .fn = test_no_port_budget);

/*
 * An endpoint-dependent port is claimed by inserting the flow's reply
 * entry (the test that no other flow uses the port towards the remote):
 * when that insert fails because the flow table is full, the kernel's NAT
 * gets the flow, with nothing left behind.
 */
static bool test_edm_table_full(void)
{
	struct xnat_config c = scale_cfg;
	struct flow_key k;
	bool ok = true;

	if (!single_port_held(&c, 80, NULL))
		return false;
	/* Fill the table to the last entry with flows of no one. */
	if (!flow_table_fill(&k))
		return false;
	ok &= out_expect(&c, 81, 5000, 10, XDP_PASS, XNAT_PASS_TABLE_FULL,
			 NULL, NULL);
	ok &= ASSERT_EQ(edm_flows(), 0, "no endpoint-dependent flow");
	ok &= ASSERT_EQ(map_count(flows_fd), SCALE_FLOWS_MAX, "no entry added");
	/* Room again: the same flow gets the port towards its remote. */
	k.sport = htons(1);
	k.dport = htons(1);
	ok &= ASSERT_OK(bpf_map_delete_elem(flows_fd, &k), "one filler out");
	k.sport = htons(2);
	ok &= ASSERT_OK(bpf_map_delete_elem(flows_fd, &k), "two fillers out");
	ok &= out_expect(&c, 81, 5000, 10, XDP_REDIRECT, XNAT_FWD_SLOW_EDM,
			 NULL, NULL);
	ok &= ASSERT_EQ(edm_flows(), 1, "its endpoint-dependent flow");
	return ok;
}
FIXTURE_TEST(.name = "edm_table_full", .fn = test_edm_table_full);

SCALE_MAIN_REGISTERED()
