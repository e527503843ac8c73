// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the neighbour keep-alive (user/neigh_keepalive.c): a
 * round over a flow table the data path filled from crafted packets, in
 * the fixture's namespace, tells the kernel that the neighbours XDP sends
 * to are used, as the kernel's own packets would: their STALE entry goes
 * to DELAY (the kernel will probe it), and so does that of another
 * address with the same MAC (the flows cannot tell them apart). A
 * neighbour no flow sends to stays STALE, and so does the next hop when
 * its flow was not seen since the round's start. Once every neighbour's
 * MAC is found used, the walk stops: it reads fewer entries than the
 * table holds, and still tells the kernel about each. The whole chain
 * (a MAC changed without a word, learnt) is
 * tests/integration/test_failures.sh neighbour_mac_silent. Fixtures and
 * runner: fixture.h.
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
#define LAN_MAC "02:00:00:00:01:0a"  /* LAN_HOST's, fixture_setup.c */

static void no_change(void *ctx, const struct next_hop_events *e)
{
	(void)ctx;
	(void)e;
}

/* The kernel's state of ADDR on DEV: the last word of `ip neigh show`. */
static bool state_on(const char *dev, const char *addr, const char *want)
{
	char cmd[128], line[256] = "", *w;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip neigh show %s dev %s", addr, dev);
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

static bool state_is(const char *addr, const char *want)
{
	return state_on("wan0", addr, want);
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
 * how many neighbours it told the kernel about, or -1. The entries it
 * read into *WALKED, if not NULL. */
static int round_walked(__u64 since_ns, size_t *walked)
{
	int ifaces_fd = bpf_map__fd(skel->maps.xnat_ifaces);
	struct next_hop_watch *w = next_hop_watch_open(no_change, NULL);
	struct neigh_keepalive *k = NULL;
	int asked = -1;

	if (w)
		k = neigh_keepalive_open_maps(flows_fd, ifaces_fd);
	if (k)
		asked = neigh_keepalive_round(k, w, since_ns);
	if (k && walked)
		*walked = neigh_keepalive_walked(k);
	neigh_keepalive_close(k);
	next_hop_watch_close(w);
	return asked;
}

static int round_since(__u64 since_ns)
{
	return round_walked(since_ns, NULL);
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

/*
 * The router's ports hold two neighbours' MACs, WAN_GW's and LAN_HOST's,
 * besides the multicast entries of the groups the ports joined (ff02::16,
 * solicited-node addresses: NOARP, never a next hop, which once kept this
 * walk from ever stopping); every UDP flow out sends to both (its ORIG
 * entry to the gateway, its reply entry to the host). The peers' IPv6 is
 * off and the ports' entries flushed and made again, so no other MAC (a
 * peer's router solicitation, say) can keep the walk from stopping.
 */
static bool test_early_stop(void)
{
	size_t walked = 0;
	int entries;
	bool ok = ASSERT_OK(sh("sysctl -qw "
			       "net.ipv6.conf.lan0p.disable_ipv6=1 "
			       "net.ipv6.conf.wan0p.disable_ipv6=1 && "
			       "ip neigh flush dev lan0 && "
			       "ip neigh flush dev wan0"),
			    "only the fixture's neighbours");

	/* Six connections in the clean table (it holds eight): twelve
	 * entries, half to each MAC, of which a walk that stops at the
	 * second MAC reads at most seven. */
	for (int i = 0; i < 6; i++)
		ok &= udp_out(44000 + i, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	entries = flows_count();
	ok &= ASSERT_OK(sh("ip neigh replace " WAN_GW " lladdr " GW_MAC
			   " dev wan0 nud stale && "
			   "ip neigh replace " LAN_HOST " lladdr " LAN_MAC
			   " dev lan0 nud stale"),
			"both neighbours made STALE");
	ok &= ASSERT_TRUE(round_walked(0, &walked) >= 2,
			  "the round told the kernel");
	ok &= state_is(WAN_GW, "DELAY");
	ok &= state_on("lan0", LAN_HOST, "DELAY");
	if (walked >= (size_t)entries)
		fprintf(stderr, "  read %zu entries of %d\n", walked, entries);
	ok &= ASSERT_TRUE(walked < (size_t)entries,
			  "the walk stopped once both MACs were found");
	sh("ip neigh replace " WAN_GW " lladdr " GW_MAC
	   " dev wan0 nud permanent; "
	   "ip neigh replace " LAN_HOST " lladdr " LAN_MAC
	   " dev lan0 nud permanent; "
	   "ip neigh replace " WAN6_GW " lladdr " GW_MAC
	   " dev wan0 nud permanent; "
	   "ip neigh replace " LAN6_HOST " lladdr " LAN_MAC
	   " dev lan0 nud permanent; "
	   "sysctl -qw net.ipv6.conf.lan0p.disable_ipv6=0 "
	   "net.ipv6.conf.wan0p.disable_ipv6=0");
	return ok;
}
FIXTURE_TEST("keepalive_early_stop", true, .fn = test_early_stop);

FIXTURE_MAIN_REGISTERED()
