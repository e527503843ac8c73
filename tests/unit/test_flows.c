// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the connection view behind `xnat flows` (user/flow_view.c)
 * on a flow table the data path filled from crafted packets, and of
 * `xnat flows delete`'s program (bpf/flow_ctl.bpf.c): a connection's two
 * entries paired, filters, sorting, and a deleted connection removed by
 * the flow sweeper (bpf/sweep.h) at once, with the mapping's references
 * back to zero.
 * Fixtures and runner: fixture.h.
 */
#include <time.h>
#include <arpa/inet.h>
#include "clock.h"
#include "fixture.h"
#include "flow_view.h"
#include "flow_ctl.skel.h"

/* Two UDP connections (1 and 3 packets out, one reply each). */
static bool two_conns(void)
{
	static const struct fixture r1 = { .name = "reply 1",
		UDP_REPLY(53, 42001), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST, UDP_REPLY_NAT(53, 42001) };
	static const struct fixture r2 = { .name = "reply 2",
		UDP_REPLY(53, 42002), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST, UDP_REPLY_NAT(53, 42002) };
	bool ok = udp_out(42001, 53, XDP_REDIRECT, XNAT_FWD_SLOW);

	ok &= run_fixture(&r1);
	ok &= udp_out(42002, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	ok &= udp_out(42002, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= udp_out(42002, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= run_fixture(&r2);
	return ok;
}

static bool filter(const char *a, const char *b, const char *c,
		   const char *d, struct flow_filter *f)
{
	char *argv[] = { (char *)a, (char *)b, (char *)c, (char *)d };
	char err[200];
	int n = d ? 4 : c ? 3 : 2;

	return ASSERT_OK(flow_filter_parse(n, argv, f, err, sizeof(err)), err);
}

static bool test_pairs_filter_sort(void)
{
	struct flow_filter f, none = {};
	struct conn *c = NULL;
	size_t n = 0, hits = 0;
	bool ok = two_conns();

	ok &= ASSERT_OK(conns_read(flows_fd, &c, &n), "conns_read");
	if (!ASSERT_EQ(n, 2, "two connections"))
		goto out;
	for (size_t i = 0; i < n; i++) {
		ok &= ASSERT_TRUE(c[i].has_orig && c[i].has_reply, "paired");
		ok &= ASSERT_EQ(c[i].okey.ifindex, if_lan, "orig from the LAN");
		ok &= ASSERT_EQ(c[i].rkey.ifindex, if_wan, "reply from the WAN");
		ok &= ASSERT_TRUE(conn_match(&c[i], &none), "empty filter");
		ok &= ASSERT_TRUE(!strcmp(conn_state(&c[i]), "-"), "udp state");
	}
	conns_sort(c, n, FLOW_SORT_PACKETS, clock_ns(CLOCK_MONOTONIC_COARSE));
	ok &= ASSERT_EQ(conn_packets(&c[0]), 4, "largest first");
	ok &= ASSERT_EQ(conn_packets(&c[1]), 2, "then");
	ok &= ASSERT_EQ(ntohs(c[0].okey.sport), 42002, "the 4-packet one");
	ok &= ASSERT_TRUE(conn_bytes(&c[0]) > conn_bytes(&c[1]), "bytes too");

	/* The reply's destination port, before NAT back, is the mapping's. */
	ok &= filter("port", "42001", NULL, NULL, &f);
	for (size_t i = 0; i < n; i++)
		hits += conn_match(&c[i], &f);
	ok &= ASSERT_EQ(hits, 1, "port 42001");
	ok &= filter("host", NAT_ADDR, "proto", "udp", &f);
	ok &= ASSERT_TRUE(conn_match(&c[0], &f) && conn_match(&c[1], &f),
			  "host after NAT");
	ok &= filter("proto", "tcp", NULL, NULL, &f);
	ok &= ASSERT_TRUE(!conn_match(&c[0], &f), "udp is not tcp");
	ok &= filter("state", "established", NULL, NULL, &f);
	ok &= ASSERT_TRUE(!conn_match(&c[0], &f), "udp has no tcp state");
out:
	free(c);
	return ok;
}

/* A connection whose REPLY entry is gone is listed with its ORIG entry
 * alone, one whose ORIG entry is gone with its REPLY entry alone (the data
 * path deletes the two one after the other); none is listed twice. */
static bool test_lone_entries(void)
{
	struct conn *c = NULL, *c2 = NULL;
	size_t n = 0, n2 = 0, lone_orig = 0, lone_reply = 0;
	bool ok = two_conns();

	ok &= ASSERT_OK(conns_read(flows_fd, &c, &n), "conns_read");
	if (!ASSERT_EQ(n, 2, "two connections"))
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct flow_key *gone = ntohs(c[i].okey.sport) == 42001 ?
					      &c[i].rkey : &c[i].okey;

		ok &= ASSERT_OK(bpf_map_delete_elem(flows_fd, gone),
				"delete one entry");
	}
	ok &= ASSERT_OK(conns_read(flows_fd, &c2, &n2), "conns_read again");
	if (!ASSERT_EQ(n2, 2, "still two connections"))
		goto out;
	for (size_t i = 0; i < n2; i++) {
		if (c2[i].has_orig && !c2[i].has_reply) {
			lone_orig++;
			ok &= ASSERT_EQ(ntohs(c2[i].okey.sport), 42001,
					"the one without its reply");
		} else if (c2[i].has_reply && !c2[i].has_orig) {
			lone_reply++;
			ok &= ASSERT_EQ(c2[i].rkey.ifindex, if_wan,
					"the reply entry, from the WAN");
			ok &= ASSERT_EQ(c2[i].rv.dir, FLOW_DIR_REPLY,
					"a REPLY entry");
		}
	}
	ok &= ASSERT_EQ(lone_orig, 1, "one ORIG alone");
	ok &= ASSERT_EQ(lone_reply, 1, "one REPLY alone");
out:
	free(c);
	free(c2);
	return ok;
}

static bool test_filter_words(void)
{
	static const char *const bad[][2] = {
		{ "state", "open" }, { "port", "65536" }, { "proto", "gre" },
		{ "host", "nope" }, { "size", "1" },
	};
	enum flow_sort s;
	struct flow_filter f;
	char err[200];
	bool ok = true;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ok &= ASSERT_EQ(flow_filter_parse(2, (char **)bad[i], &f, err,
						  sizeof(err)), -EINVAL, bad[i][0]);
	ok &= ASSERT_EQ(flow_sort_parse("size", &s), -EINVAL, "sort size");
	ok &= ASSERT_OK(flow_sort_parse("idle", &s), "sort idle");
	ok &= ASSERT_EQ(s, FLOW_SORT_IDLE, "idle");
	return ok;
}

static bool mapping_flows(__u16 port, __u32 *flows, __u32 *out_flows)
{
	struct nat_endpoint ep = { .proto = IPPROTO_UDP, .port = htons(port) };
	struct nat_mapping m;

	inet_pton(AF_INET, LAN_HOST, &ep.addr);
	if (!ASSERT_OK(bpf_map_lookup_elem(bpf_map__fd(skel->maps.xnat_mappings),
					   &ep, &m), "mapping lookup"))
		return false;
	*flows = m.flows;
	*out_flows = m.out_flows;
	return true;
}

/* The flow control program on the data path's maps (each of its maps is
 * one of the data path's, by name); NULL on failure. */
static struct flow_ctl_bpf *ctl_open(void)
{
	struct flow_ctl_bpf *ctl = flow_ctl_bpf__open();
	struct bpf_map *m, *dp;
	bool ok = ASSERT_TRUE(ctl, "flow_ctl open");

	if (ok)
		bpf_object__for_each_map(m, ctl->obj) {
			dp = bpf_object__find_map_by_name(skel->obj,
							  bpf_map__name(m));
			ok &= ASSERT_TRUE(dp, bpf_map__name(m)) &&
			      ASSERT_OK(bpf_map__reuse_fd(m, bpf_map__fd(dp)),
					bpf_map__name(m));
		}
	if (!ok || !ASSERT_OK(flow_ctl_bpf__load(ctl), "flow_ctl load")) {
		flow_ctl_bpf__destroy(ctl);
		return NULL;
	}
	return ctl;
}

/* Delete one connection: both entries go, by the sweeper, and the mapping's
 * references drop to zero; the other connection stays. */
static bool test_delete(void)
{
	struct flow_ctl_bpf *ctl;
	struct conn *c = NULL;
	size_t n = 0;
	__u32 flows = 9, out_flows = 9;
	bool ok = two_conns();
	int i;

	ok &= mapping_flows(42001, &flows, &out_flows);
	ok &= ASSERT_EQ(flows, 1, "references before");
	ctl = ctl_open();
	if (!ctl)
		return false;
	ok &= ASSERT_OK(conns_read(flows_fd, &c, &n), "conns_read");
	for (size_t k = 0; k < n; k++) {
		LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = &c[k].okey,
			    .data_size_in = sizeof(c[k].okey));

		if (ntohs(c[k].okey.sport) != 42001)
			continue;
		/* The reply key is not an ORIG entry: refused. */
		run.data_in = &c[k].rkey;
		ok &= ASSERT_OK(bpf_prog_test_run_opts(
			bpf_program__fd(ctl->progs.xdp_flow_expire), &run), "run");
		ok &= ASSERT_EQ(run.retval, XDP_ABORTED, "reply key refused");
		run.data_in = &c[k].okey;
		ok &= ASSERT_OK(bpf_prog_test_run_opts(
			bpf_program__fd(ctl->progs.xdp_flow_expire), &run), "run");
		ok &= ASSERT_EQ(run.retval, XDP_PASS, "marked and kicked");
	}
	for (i = 0; i < 100 && flows_count() != 2; i++)
		usleep(10000);
	ok &= ASSERT_EQ(flows_count(), 2, "one connection left");
	ok &= mapping_flows(42001, &flows, &out_flows);
	ok &= ASSERT_EQ(flows, 0, "references after");
	ok &= ASSERT_EQ(out_flows, 0, "outbound references after");
	ok &= mapping_flows(42002, &flows, &out_flows);
	ok &= ASSERT_EQ(flows, 1, "the other mapping keeps its reference");
	free(c);
	flow_ctl_bpf__destroy(ctl);
	return ok;
}

/* The MAC tests' set-up: two connections, the flow control program, and
 * the ORIG and REPLY entries of the connection from port 42001. */
struct mac_case {
	struct flow_ctl_bpf *ctl;
	struct conn *conns;
	const struct conn *c;
	struct flow_value o, r;
};

static bool mac_case_open(struct mac_case *m)
{
	size_t n = 0, k;

	memset(m, 0, sizeof(*m));
	if (!two_conns())
		return false;
	m->ctl = ctl_open();
	if (!m->ctl || !ASSERT_OK(conns_read(flows_fd, &m->conns, &n), "conns"))
		return false;
	for (k = 0; k < n && ntohs(m->conns[k].okey.sport) != 42001; k++)
		;
	if (!ASSERT_TRUE(k < n, "the connection"))
		return false;
	m->c = &m->conns[k];
	return ASSERT_OK(bpf_map_lookup_elem(flows_fd, &m->c->okey, &m->o), "orig") &&
	       ASSERT_OK(bpf_map_lookup_elem(flows_fd, &m->c->rkey, &m->r), "reply");
}

static void mac_case_close(struct mac_case *m)
{
	free(m->conns);
	flow_ctl_bpf__destroy(m->ctl);
}

/* xdp_flow_set_mac on KEY's WHICH, OLD to NEW: its verdict, -1 if it
 * could not run. */
static int set_mac(const struct mac_case *m, const struct flow_key *key,
		   __u8 which, const __u8 *old_mac, const __u8 *new_mac)
{
	struct flow_mac_arg arg = { .key = *key, .which = which };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = &arg,
		    .data_size_in = sizeof(arg));

	memcpy(arg.old_mac, old_mac, 6);
	memcpy(arg.new_mac, new_mac, 6);
	if (bpf_prog_test_run_opts(bpf_program__fd(m->ctl->progs.xdp_flow_set_mac),
				   &run))
		return -1;
	return run.retval;
}

/* `xnat run` in xdp mode when a next hop's MAC changed: the entry that
 * sent to the old MAC gets the new one; a wrong old MAC changes nothing;
 * the fast path then sends there. */
static bool test_next_hop(void)
{
	static const __u8 new_mac[6] = { 0x02, 0, 0x5e, 0, 0x53, 0x77 };
	struct fixture f = { .name = "to the new MAC", UDP_OUT(42001, 53),
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
		UDP_OUT_NAT(42001, 53) };
	struct mac_case m;
	struct flow_value v, r;
	__u8 wrong[6];
	bool ok = mac_case_open(&m);

	if (!ok)
		goto out;
	memcpy(wrong, m.o.eth_dst, 6);
	wrong[5] ^= 1; /* not what it sends to */
	ok &= ASSERT_EQ(set_mac(&m, &m.c->okey, FLOW_MAC_NEXT_HOP, wrong,
				new_mac), XDP_DROP, "another old MAC: nothing");
	ok &= ASSERT_EQ(set_mac(&m, &m.c->okey, FLOW_MAC_NEXT_HOP, m.o.eth_dst,
				new_mac), XDP_PASS, "the old MAC: replaced");
	ok &= ASSERT_OK(bpf_map_lookup_elem(flows_fd, &m.c->okey, &v), "entry");
	ok &= ASSERT_EQ(memcmp(v.eth_dst, new_mac, 6), 0, "sends to the new MAC");
	ok &= ASSERT_OK(bpf_map_lookup_elem(flows_fd, &m.c->rkey, &r), "reply");
	ok &= ASSERT_TRUE(memcmp(r.eth_dst, new_mac, 6) != 0, "the reply's kept");
	ok &= ASSERT_EQ(v.packets, 1, "the counters kept");
	/* Its next packet: the fast path, to the new MAC, the rest as it
	 * was (the whole frame is compared). */
	memcpy(f.out.dmac, new_mac, 6);
	ok &= run_fixture(&f);
out:
	mac_case_close(&m);
	return ok;
}

/* A router port's own MAC changed (user/maps.c): the entries entering by
 * it take the new one as theirs, those leaving by it send from it. A
 * reply to the new MAC then hits; one to the old MAC is another host's. */
static bool test_port_mac(void)
{
	static const __u8 new_mac[6] = { 0x02, 0, 0x5e, 0, 0x53, 0x79 };
	struct fixture to_new = { .name = "reply to the new MAC",
		UDP_REPLY(53, 42001), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST, UDP_REPLY_NAT(53, 42001) };
	struct fixture to_old = { .name = "reply to the old MAC",
		UDP_REPLY(53, 42001), .verdict = XDP_PASS,
		.reason = XNAT_PASS_OTHERHOST };
	struct fixture out = { .name = "from the new MAC",
		UDP_OUT(42001, 53), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST, UDP_OUT_NAT(42001, 53) };
	struct mac_case m;
	bool ok = mac_case_open(&m);

	if (!ok)
		goto done;
	/* The WAN port: the reply entry enters by it, the ORIG leaves. */
	ok &= ASSERT_EQ(set_mac(&m, &m.c->rkey, FLOW_MAC_INGRESS,
				m.r.ingress_mac, new_mac),
			XDP_PASS, "ingress MAC replaced");
	ok &= ASSERT_EQ(set_mac(&m, &m.c->okey, FLOW_MAC_EGRESS, m.o.eth_src,
				new_mac), XDP_PASS, "source MAC replaced");
	ok &= ASSERT_EQ(set_mac(&m, &m.c->okey, 7, new_mac, new_mac),
			XDP_ABORTED, "no such MAC: refused");
	memcpy(to_new.in.dmac, new_mac, 6);
	ok &= run_fixture(&to_new);
	ok &= run_fixture(&to_old);
	memcpy(out.out.smac, new_mac, 6);
	ok &= run_fixture(&out);
done:
	mac_case_close(&m);
	return ok;
}

/* xdp_flow_reroute on KEY: its verdict (-1: could not run), the answer
 * in *ARG. */
static int reroute(const struct mac_case *m, const struct flow_key *key,
		   struct flow_route_arg *arg)
{
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = arg,
		    .data_size_in = sizeof(*arg), .data_out = arg,
		    .data_size_out = sizeof(*arg));

	memset(arg, 0, sizeof(*arg));
	arg->key = *key;
	if (bpf_prog_test_run_opts(bpf_program__fd(m->ctl->progs.xdp_flow_reroute),
				   &run))
		return -1;
	return run.retval;
}

/* Route the connection again after ROUTE (an `ip route` command): is the
 * answer (in *A) WANT? */
static bool rerouted(const struct mac_case *m, const char *route, int want,
		     struct flow_route_arg *a)
{
	return ASSERT_OK(sh(route), route) &&
	       ASSERT_EQ(reroute(m, &m->c->okey, a), XDP_PASS, route) &&
	       ASSERT_EQ(a->result, want, route);
}

/* `xnat run` in xdp mode when a route changed: the connection's ORIG entry
 * is routed again. The same next hop: nothing; another on the same port:
 * the entry sends there, and its packets go there; one not resolved yet:
 * its address, the entry unchanged; out of another port, or no route:
 * the connection must end. Only ORIG entries of xdp mode are routed. */
static bool test_reroute(void)
{
	static const __u8 gw3[6] = { 0x02, 0, 0, 0, 0x02, 0x03 };
	struct fixture f = { .name = "to the new next hop", UDP_OUT(42001, 53),
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
		UDP_OUT_NAT(42001, 53) };
	struct flow_route_arg a;
	struct in6_addr gw6;
	struct flow_key unknown;
	struct flow_value v, r;
	struct mac_case m;
	bool ok = mac_case_open(&m);

	if (!ok)
		goto out;
	ok &= ASSERT_EQ(reroute(&m, &m.c->okey, &a), XDP_PASS, "routed");
	ok &= ASSERT_EQ(a.result, FLOW_ROUTE_SAME, "the same next hop");
	ok &= ASSERT_EQ(reroute(&m, &m.c->rkey, &a), XDP_ABORTED,
			"a reply entry: refused");
	unknown = m.c->okey;
	unknown.sport = htons(1);
	ok &= ASSERT_EQ(reroute(&m, &unknown, &a), XDP_DROP, "no such entry");

	ok &= ASSERT_OK(sh("ip neigh add 198.19.0.3 lladdr 02:00:00:00:02:03 "
			   "dev wan0 nud permanent"), "neighbour");
	ok &= rerouted(&m, "ip route add 198.19.0.2/32 via 198.19.0.3",
		       FLOW_ROUTE_MOVED, &a);
	ok &= ASSERT_OK(bpf_map_lookup_elem(flows_fd, &m.c->okey, &v), "entry");
	ok &= ASSERT_EQ(memcmp(v.eth_dst, gw3, 6), 0, "sends to the new hop");
	ok &= ASSERT_EQ(v.egress_ifindex, m.o.egress_ifindex, "same port");
	ok &= ASSERT_EQ(v.packets, m.o.packets, "the counters kept");
	ok &= ASSERT_OK(bpf_map_lookup_elem(flows_fd, &m.c->rkey, &r), "reply");
	ok &= ASSERT_EQ(memcmp(r.eth_dst, m.r.eth_dst, 6), 0, "the reply's kept");
	memcpy(f.out.dmac, gw3, 6);
	ok &= run_fixture(&f);

	ok &= rerouted(&m, "ip route replace 198.19.0.2/32 via 198.19.0.4",
		       FLOW_ROUTE_NO_NEIGH, &a);
	ok &= ASSERT_EQ(a.next_hop.v4, inet_addr("198.19.0.4"), "its address");
	ok &= ASSERT_EQ(a.next_hop_family, AF_INET, "an IPv4 next hop");
	ok &= ASSERT_EQ(a.ifindex, if_wan, "on the WAN port");
	/* An IPv4 route through an IPv6 next hop (RFC 8950): resolved as
	 * IPv6, by neighbour discovery. */
	ok &= rerouted(&m, "ip route replace 198.19.0.2/32 via inet6 "
		       "2001:2:0:2::4 dev wan0", FLOW_ROUTE_NO_NEIGH, &a);
	ok &= ASSERT_EQ(a.next_hop_family, AF_INET6, "an IPv6 next hop");
	inet_pton(AF_INET6, "2001:2:0:2::4", &gw6);
	ok &= ASSERT_EQ(memcmp(&a.next_hop, &gw6, 16), 0, "its IPv6 address");
	ok &= ASSERT_OK(bpf_map_lookup_elem(flows_fd, &m.c->okey, &v), "entry");
	ok &= ASSERT_EQ(memcmp(v.eth_dst, gw3, 6), 0, "unchanged meanwhile");

	ok &= rerouted(&m, "ip route replace 198.19.0.2/32 via 198.18.1.10 dev lan0",
		       FLOW_ROUTE_GONE, &a);
	ok &= rerouted(&m, "ip route replace blackhole 198.19.0.2/32",
		       FLOW_ROUTE_GONE, &a);
	ok &= rerouted(&m, "ip route del 198.19.0.2/32", FLOW_ROUTE_MOVED, &a);
	ok &= ASSERT_OK(sh("ip neigh del 198.19.0.3 dev wan0"), "cleanup");
out:
	mac_case_close(&m);
	return ok;
}

/* The same for an IPv6 connection (routed, no NAT): its next hop's
 * address comes back as IPv6. */
static bool test_reroute_v6(void)
{
	static const struct fixture out = { .name = "ipv6 lan->wan",
		UDP6_OUT(40000, 53, 64), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_SLOW, UDP6_OUT_ROUTED(40000, 53, 64) };
	struct mac_case m = { 0 };
	struct flow_route_arg a;
	struct in6_addr gw;
	size_t n = 0, k;
	bool ok = run_fixture(&out);

	m.ctl = ctl_open();
	if (!ok || !m.ctl ||
	    !ASSERT_OK(conns_read(flows_fd, &m.conns, &n), "conns")) {
		ok = false;
		goto out;
	}
	for (k = 0; k < n && m.conns[k].okey.family != XNAT_AF_INET6; k++)
		;
	if (!ASSERT_TRUE(k < n, "the connection")) {
		ok = false;
		goto out;
	}
	m.c = &m.conns[k];
	ok &= ASSERT_OK(sh("ip -6 neigh add 2001:2:0:2::3 lladdr "
			   "02:00:00:00:02:03 dev wan0 nud permanent"), "neighbour");
	ok &= rerouted(&m, "ip -6 route add 2001:2:0:2::2/128 via 2001:2:0:2::3",
		       FLOW_ROUTE_MOVED, &a);
	ok &= rerouted(&m, "ip -6 route replace 2001:2:0:2::2/128 via 2001:2:0:2::4",
		       FLOW_ROUTE_NO_NEIGH, &a);
	inet_pton(AF_INET6, "2001:2:0:2::4", &gw);
	ok &= ASSERT_EQ(memcmp(&a.next_hop, &gw, 16), 0, "its address");
	ok &= ASSERT_EQ(a.next_hop_family, AF_INET6, "an IPv6 next hop");
	ok &= rerouted(&m, "ip -6 route del 2001:2:0:2::2/128", FLOW_ROUTE_MOVED,
		       &a);
	ok &= ASSERT_OK(sh("ip -6 neigh del 2001:2:0:2::3 dev wan0"), "cleanup");
out:
	mac_case_close(&m);
	return ok;
}

static const struct test tests[] = {
	{ "flows_pairs_filter_sort", true, .fn = test_pairs_filter_sort },
	{ "flows_lone_entries", true, .fn = test_lone_entries },
	{ "flows_filter_words", false, .fn = test_filter_words },
	{ "flows_delete_by_sweeper", true, .fn = test_delete },
	{ "flows_next_hop_mac", true, .fn = test_next_hop },
	{ "flows_port_mac", true, .fn = test_port_mac },
	{ "flows_reroute", true, .fn = test_reroute },
	{ "flows_reroute_v6", true, .fn = test_reroute_v6 },
};

FIXTURE_MAIN(tests)
