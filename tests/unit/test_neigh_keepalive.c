// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the neighbour keep-alive (user/neigh_keepalive.c): a
 * round over a flow table the data path filled from crafted packets, in
 * the fixture's namespace, tells the kernel that the neighbours XDP sends
 * to are used, as the kernel's own packets would: their STALE entry goes
 * to DELAY (the kernel will probe it), and so does that of another
 * address with the same MAC (the flows cannot tell them apart). A
 * neighbour no flow sends to stays STALE, and so does the next hop when
 * its flow was not seen since the round's start. The whole chain (a MAC
 * changed without a word, learnt) is tests/integration/test_failures.sh
 * neighbour_mac_silent. Fixtures and runner: fixture.h.
 */
#include <stdio.h>
#include <string.h>
#include "clock.h"
#include "fixture.h"
#include "neigh_keepalive.h"
#include "next_hop.h"

#define GW_MAC "02:00:00:00:02:02" /* WAN_GW's, fixture_setup.c */
#define GW_SHARED "198.19.0.98"    /* another address with WAN_GW's MAC */
#define NO_FLOWS "198.19.0.99"     /* a neighbour no flow sends to */

static void no_change(void *ctx, const struct next_hop_events *e)
{
	(void)ctx;
	(void)e;
}

/* The kernel's state of ADDR on wan0: the last word of `ip neigh show`. */
static bool state_is(const char *addr, const char *want)
{
	char cmd[128], line[256] = "", *w;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip neigh show %s dev wan0", addr);
	f = popen(cmd, "r");
	if (!f || !fgets(line, sizeof(line), f))
		line[0] = '\0';
	if (f)
		pclose(f);
	line[strcspn(line, "\n")] = '\0';
	while (strlen(line) && line[strlen(line) - 1] == ' ')
		line[strlen(line) - 1] = '\0';
	w = strrchr(line, ' ');
	if (w && !strcmp(w + 1, want))
		return true;
	fprintf(stderr, "  %s: \"%s\", expected %s\n", addr, line, want);
	return false;
}

/* WAN_GW, an address sharing its MAC, and one with another MAC, all
 * STALE (the fixture made WAN_GW permanent: put back by stale_end()). */
static bool stale_begin(void)
{
	return ASSERT_OK(sh("ip neigh replace " WAN_GW " lladdr " GW_MAC
			    " dev wan0 nud stale && "
			    "ip neigh replace " GW_SHARED " lladdr " GW_MAC
			    " dev wan0 nud stale && "
			    "ip neigh replace " NO_FLOWS
			    " lladdr 02:00:5e:00:53:99 dev wan0 nud stale"),
			 "neighbours made STALE");
}

static void stale_end(void)
{
	sh("ip neigh replace " WAN_GW " lladdr " GW_MAC " dev wan0 nud permanent; "
	   "ip neigh del " GW_SHARED " dev wan0; ip neigh del " NO_FLOWS
	   " dev wan0");
}

/* One round over the flow table, for the entries seen since SINCE_NS;
 * how many neighbours it told the kernel about, or -1. */
static int round_since(__u64 since_ns)
{
	int ifaces_fd = bpf_map__fd(skel->maps.xnat_ifaces);
	struct next_hop_watch *w = next_hop_watch_open(no_change, NULL);
	struct neigh_keepalive *k = NULL;
	int asked = -1;

	if (w)
		k = neigh_keepalive_open_maps(flows_fd, ifaces_fd);
	if (k)
		asked = neigh_keepalive_round(k, w, since_ns);
	neigh_keepalive_close(k);
	next_hop_watch_close(w);
	return asked;
}

static bool test_used_next_hop(void)
{
	bool ok = stale_begin();

	ok &= udp_out(43001, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	ok &= ASSERT_TRUE(round_since(0) >= 2, "the round told the kernel");
	ok &= state_is(WAN_GW, "DELAY");
	ok &= state_is(GW_SHARED, "DELAY");
	ok &= state_is(NO_FLOWS, "STALE");
	stale_end();
	return ok;
}
FIXTURE_TEST("keepalive_used_next_hop", true, .fn = test_used_next_hop);

static bool test_idle_flow(void)
{
	bool ok = udp_out(43002, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	/* The coarse clock the entries are stamped with lags by a tick at
	 * most: a round from a moment well after the packet. */
	__u64 after = clock_ns(CLOCK_MONOTONIC) + 50000000ULL;

	ok &= stale_begin();
	ok &= ASSERT_EQ(round_since(after), 0, "no neighbour used since");
	ok &= state_is(WAN_GW, "STALE");
	ok &= state_is(GW_SHARED, "STALE");
	stale_end();
	return ok;
}
FIXTURE_TEST("keepalive_idle_flow", true, .fn = test_idle_flow);

FIXTURE_MAIN_REGISTERED()
