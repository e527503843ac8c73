// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat flows: the connections in the flow table, one a line with both
 * directions together: what arrives where, what it becomes and where it
 * leaves, its state, packets and bytes both ways, age and idle time.
 * Filter words (host, port, proto, state) and --sort select and order
 * them (flow_view.c); -w S refreshes. --json keeps one object per entry
 * (direction) under "flows", with the keys scripts already read, and adds
 * the connections under "connections".
 *
 * xnat flows delete FILTER ends the matching connections as their idle
 * timeout would (bpf/flow_ctl.bpf.c), so the mapping references the data
 * path keeps stay balanced, and waits until they are gone.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "cmd.h"
#include "flow_view.h"
#include "flows_kernel.h"
#include "flow_end.h"
#include "json.h"
#include "loader.h"
#include "names.h"
#include "offload.h"
#include "pins.h"
#include "state.h"
#include "trace_filter.h"


/* SINCE_NS (monotonic, as the data path stamps it) as wall-clock UTC,
 * RFC 3339, into BUF. */
static void wall_time(char *buf, size_t len, __u64 since_ns, __u64 now)
{
	time_t secs;
	struct tm tm;
	__u64 wall;

	wall = clock_ns(CLOCK_REALTIME) - (now > since_ns ? now - since_ns : 0);
	secs = wall / 1000000000ULL;
	gmtime_r(&secs, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Offload mode: the kernel's connection the entry carries, as
 * `conntrack -L` prints its tuples, and when it moved from the kernel to
 * the fast path (SINCE_NS: the entry's, or the older of the two). */
static void json_conntrack(const struct flow_key *k, const struct flow_value *v,
			   __u64 since_ns, __u64 now)
{
	char ct[320], when[40];

	if (v->nat != FLOW_NAT_CT)
		return;
	offload_ct_tuple(ct, sizeof(ct), k, v);
	json_str("conntrack", ct);
	wall_time(when, sizeof(when), since_ns, now);
	json_str("offloaded_at", when);
	json_u64("offloaded_s", now > since_ns ?
		 (now - since_ns) / 1000000000ULL : 0);
}

/* What an entry and a connection both say: the endpoints before and
 * after NAT, the interfaces, the kind of NAT and the state. */
static void json_common(const struct conn *c, const struct flow_key *k,
			const struct flow_value *v)
{
	char src[64], dst[64], nsrc[64], ndst[64], in[IF_NAMESIZE],
		out[IF_NAMESIZE];

	flow_endpoints(k, v, src, dst, nsrc, ndst);
	json_u64("family", k->family);
	json_str("proto", proto_name(k->proto));
	json_str("nat", trace_nat_name(v->nat));
	json_str("ingress", ifname_of(k->ifindex, in));
	json_str("egress", ifname_of(v->egress_ifindex, out));
	json_str("src", src);
	json_str("dst", dst);
	json_str("new_src", nsrc);
	json_str("new_dst", ndst);
	json_str("state", conn_state(c));
}

/* One direction, with the keys `xnat flows --json` has always printed. */
static void json_entry(const struct conn *c, const struct flow_key *k,
		       const struct flow_value *v, __u64 now)
{
	json_obj_begin(NULL);
	json_common(c, k, v);
	json_str("dir", v->dir == FLOW_DIR_ORIG ? "orig" : "reply");
	json_u64("idle_s", now > v->last_seen_ns ?
		 (now - v->last_seen_ns) / 1000000000ULL : 0);
	json_u64("age_s", now > v->created_ns ?
		 (now - v->created_ns) / 1000000000ULL : 0);
	json_u64("packets", v->packets);
	json_u64("bytes", v->bytes);
	json_conntrack(k, v, v->created_ns, now);
	json_obj_end();
}

static void json_conn(const struct conn *c, __u64 now)
{
	const struct flow_key *k = conn_key(c);
	const struct flow_value *v = conn_value(c);

	json_obj_begin(NULL);
	json_common(c, k, v);
	json_bool("orig", c->has_orig);
	json_bool("reply", c->has_reply);
	json_u64("packets", conn_packets(c));
	json_u64("bytes", conn_bytes(c));
	json_u64("orig_packets", c->has_orig ? c->ov.packets : 0);
	json_u64("reply_packets", c->has_reply ? c->rv.packets : 0);
	json_u64("age_s", conn_age_ns(c, now) / 1000000000ULL);
	json_u64("idle_s", conn_idle_ns(c, now) / 1000000000ULL);
	json_conntrack(k, v, now - conn_age_ns(c, now), now);
	json_obj_end();
}

/* 1234, 12.3k, 4.5M: columns a person can scan. */
static const char *human(__u64 n, char *buf)
{
	if (n < 10000)
		snprintf(buf, 16, "%llu", (unsigned long long)n);
	else if (n < 10000000)
		snprintf(buf, 16, "%.1fk", n / 1e3);
	else if (n < 10000000000ULL)
		snprintf(buf, 16, "%.1fM", n / 1e6);
	else
		snprintf(buf, 16, "%.1fG", n / 1e9);
	return buf;
}

static void text_conn(const struct conn *c, __u64 now)
{
	const struct flow_key *k = conn_key(c);
	const struct flow_value *v = conn_value(c);
	char src[64], dst[64], nsrc[64], ndst[64], in[IF_NAMESIZE],
		out[IF_NAMESIZE], p[16], b[16], ct[320] = "";

	if (v->nat == FLOW_NAT_CT) {
		size_t l;

		offload_ct_tuple(ct, sizeof(ct), k, v);
		l = strlen(ct);
		snprintf(ct + l, sizeof(ct) - l, "  on the fast path for %llu s",
			 (unsigned long long)(conn_age_ns(c, now) / 1000000000ULL));
	}
	flow_endpoints(k, v, src, dst, nsrc, ndst);
	/* Widths fit IPv4; IPv6 lines run longer. */
	printf("%-6s %-11s %-7s %-6s %-21s %-21s %-6s %-21s %-21s %8s %8s %6llu %6llu%s%s%s\n",
	       proto_name(k->proto), conn_state(c), trace_nat_name(v->nat),
	       ifname_of(k->ifindex, in), src, dst, ifname_of(v->egress_ifindex, out),
	       nsrc, ndst, human(conn_packets(c), p), human(conn_bytes(c), b),
	       (unsigned long long)(conn_age_ns(c, now) / 1000000000ULL),
	       (unsigned long long)(conn_idle_ns(c, now) / 1000000000ULL),
	       c->has_orig ? (c->has_reply ? "" : " (no reply entry)") :
			     " (reply entry only)",
	       ct[0] ? "  conntrack: " : "", ct);
}

static int show(const struct opts *o, int fd, const struct flow_filter *f,
		enum flow_sort by)
{
	struct conn *conns;
	size_t n, shown = 0;
	/* The data path stamps with bpf_ktime_get_coarse_ns(). */
	__u64 now = clock_ns(CLOCK_MONOTONIC_COARSE);
	int err = conns_read(fd, &conns, &n);

	if (err)
		return fail(o, EXIT_SYSTEM, "flows: failed to read %s: %s",
			    MAP_FLOWS, strerror(-err));
	conns_sort(conns, n, by, now);
	if (o->json) {
		json_obj_begin(NULL);
		json_arr_begin("flows");
		for (size_t i = 0; i < n; i++) {
			if (!conn_match(&conns[i], f))
				continue;
			if (conns[i].has_orig)
				json_entry(&conns[i], &conns[i].okey, &conns[i].ov, now);
			if (conns[i].has_reply)
				json_entry(&conns[i], &conns[i].rkey, &conns[i].rv, now);
		}
		json_arr_end();
		json_arr_begin("connections");
		for (size_t i = 0; i < n; i++)
			if (conn_match(&conns[i], f))
				json_conn(&conns[i], now);
		json_arr_end();
		json_obj_end();
		json_done();
	} else {
		printf("%-6s %-11s %-7s %-6s %-21s %-21s %-6s %-21s %-21s %8s %8s %6s %6s\n",
		       "proto", "state", "nat", "in", "src", "dst", "out",
		       "as src", "as dst", "packets", "bytes", "age", "idle");
		for (size_t i = 0; i < n; i++) {
			if (!conn_match(&conns[i], f))
				continue;
			text_conn(&conns[i], now);
			shown++;
		}
		printf("%zu connections", shown);
		if (shown != n)
			printf(" (of %zu)", n);
		printf("\n");
	}
	free(conns);
	return EXIT_OK;
}

static void delete_report(const struct opts *o, const struct flow_end *d,
			size_t left)
{
	if (o->json) {
		json_obj_begin(NULL);
		json_u64("matched", d->ncon + d->orphans);
		json_u64("deleted", d->ncon - left);
		json_u64("remaining", left);
		json_obj_end();
		json_done();
		return;
	}
	printf("%zu connections matched, %zu deleted", d->ncon + d->orphans,
	       d->ncon - left);
	if (left)
		printf(", %zu marked expired but still there", left);
	printf("\n");
}

static bool filter_match(const struct conn *c, const void *f)
{
	return conn_match(c, f);
}

static int delete(const struct opts *o, int fd, const struct flow_filter *f)
{
	struct flow_end d;
	struct conn *conns = NULL;
	size_t n, done;
	long left;
	int err;

	if (!f->match)
		return fail(o, EXIT_USAGE, "flows delete: name the connections "
			    "(host, port, proto, state); `xnat down` removes "
			    "them all");
	err = conns_read(fd, &conns, &n);
	if (err)
		return fail(o, EXIT_SYSTEM, "flows delete: failed to read %s: %s",
			    MAP_FLOWS, strerror(-err));
	err = flow_end_select(&d, conns, n, filter_match, f);
	free(conns);
	if (err)
		return fail(o, EXIT_SYSTEM, "flows delete: out of memory");
	left = flow_end_run(fd, &d, 1000, &done);
	if (left < 0) {
		flow_end_free(&d);
		return fail(o, EXIT_SYSTEM, "flows delete: failed to run the "
			    "flow control program: %s (%zu of %zu connections "
			    "marked)", strerror(-left), done, d.ncon);
	}
	delete_report(o, &d, left);
	flow_end_free(&d);
	return left ? EXIT_SYSTEM : EXIT_OK;
}

int cmd_flows(const struct opts *o)
{
	struct flow_filter f;
	enum flow_sort by = FLOW_SORT_NONE;
	int is_delete = o->nargs && !strcmp(o->args[0], "delete");
	char err[256];
	int fd, ret;

	if (flow_filter_parse(o->nargs - is_delete, o->args + is_delete, &f, err,
			      sizeof(err)))
		return fail(o, EXIT_USAGE, "flows: %s", err);
	if (o->sort && flow_sort_parse(o->sort, &by))
		return fail(o, EXIT_USAGE, "flows: --sort '%s': expected bytes, "
			    "packets, age or idle", o->sort);
	/* Kernel mode: conntrack is the flow table. */
	fd = cmd_map_open(o, MAP_FLOWS, "no flow table: xnat is not up in xdp "
			  "mode here", flows_kernel, &ret);
	if (fd < 0)
		return ret;
	if (is_delete) {
		ret = delete(o, fd, &f);
		close(fd);
		return ret;
	}
	for (;;) {
		if (o->watch > 0 && !o->json && isatty(STDOUT_FILENO))
			printf("\033[H\033[2J"); /* top of a cleared screen */
		ret = show(o, fd, &f, by);
		if (ret || o->watch <= 0)
			break;
		watch_interval(o);
		if (!o->json && !isatty(STDOUT_FILENO))
			printf("\n");
	}
	close(fd);
	return ret;
}
