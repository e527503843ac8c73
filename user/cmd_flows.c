// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat flows: every entry of the flow table, one direction a line, with
 * the rewrite it applies, so a person can see what happens to a packet of
 * that flow: where it enters, what it becomes, where it leaves.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "flows_kernel.h"
#include "json.h"
#include "loader.h"
#include "state.h"

static const char *proto_name(__u8 proto)
{
	switch (proto) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "icmpv6";
	}
	return "?";
}

static const char *nat_name(__u8 nat)
{
	return nat == FLOW_NAT_SNAT ? "snat" :
	       nat == FLOW_NAT_DNAT ? "dnat" :
	       nat == FLOW_NAT_HAIRPIN ? "hairpin" :
	       nat == FLOW_NAT_INBOUND ? "inbound" : "none";
}

static const char *state_name(__u8 proto, __u8 st)
{
	static const char *tcp[] = { "syn_sent", "established", "closing",
				     "closed" };

	if (proto != IPPROTO_TCP)
		return "-";
	return st < 4 ? tcp[st] : "?";
}

/* "addr:port" or "[addr]:port"; for ICMP the port is the echo id. */
static void endpoint(char *buf, size_t len, __u8 family,
		     const union xnat_addr *a, __be16 port)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(family == XNAT_AF_INET ? AF_INET : AF_INET6, a, ip, sizeof(ip));
	snprintf(buf, len, family == XNAT_AF_INET ? "%s:%u" : "[%s]:%u", ip,
		 ntohs(port));
}

static const char *ifname(__u32 ifindex, char *buf)
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "#%u", ifindex);
	return buf;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	/* bpf_ktime_get_coarse_ns() is CLOCK_MONOTONIC_COARSE. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void print_entry(int fd, const struct opts *o, const struct flow_key *k,
			const struct flow_value *v)
{
	char src[64], dst[64], nsrc[64], ndst[64], in[IF_NAMESIZE],
		out[IF_NAMESIZE];
	struct flow_value other;
	struct flow_key ok;
	__u64 now = now_ns();
	__u64 idle = now > v->last_seen_ns ? (now - v->last_seen_ns) / 1000000000ULL : 0;
	__u8 st;
	/* The state is a property of the connection: read the other entry. */
	ok.saddr = v->new_daddr;
	ok.daddr = v->new_saddr;
	ok.sport = v->new_dport;
	ok.dport = v->new_sport;
	ok.proto = k->proto;
	ok.family = k->family;
	ok.vid = v->egress_vid;
	ok.ifindex = v->egress_ifindex;
	st = flow_tcp_state(v, bpf_map_lookup_elem(fd, &ok, &other) ? NULL : &other);

	/* ICMP echo: the id is sport in requests, dport in replies. */
	endpoint(src, sizeof(src), k->family, &k->saddr, k->sport);
	endpoint(dst, sizeof(dst), k->family, &k->daddr, k->dport);
	endpoint(nsrc, sizeof(nsrc), k->family, &v->new_saddr, v->new_sport);
	endpoint(ndst, sizeof(ndst), k->family, &v->new_daddr, v->new_dport);

	if (o->json) {
		json_obj_begin(NULL);
		json_u64("family", k->family);
		json_str("proto", proto_name(k->proto));
		json_str("dir", v->dir == FLOW_DIR_ORIG ? "orig" : "reply");
		json_str("nat", nat_name(v->nat));
		json_str("ingress", ifname(k->ifindex, in));
		json_str("egress", ifname(v->egress_ifindex, out));
		json_str("src", src);
		json_str("dst", dst);
		json_str("new_src", nsrc);
		json_str("new_dst", ndst);
		json_str("state", state_name(k->proto, st));
		json_u64("idle_s", idle);
		json_u64("age_s", now > v->created_ns ?
			 (now - v->created_ns) / 1000000000ULL : 0);
		json_u64("packets", v->packets);
		json_u64("bytes", v->bytes);
		json_obj_end();
		return;
	}
	/* One line per direction: what arrives where, what it becomes and
	 * where it leaves. Widths fit IPv4; IPv6 lines run longer. */
	printf("%-6s %-5s %-4s %-6s %-21s %-21s => %-6s %-21s %-21s %-11s %5llu %9llu %11llu\n",
	       proto_name(k->proto), v->dir == FLOW_DIR_ORIG ? "orig" : "reply",
	       nat_name(v->nat), ifname(k->ifindex, in), src, dst,
	       ifname(v->egress_ifindex, out), nsrc, ndst,
	       state_name(k->proto, st), (unsigned long long)idle,
	       (unsigned long long)v->packets, (unsigned long long)v->bytes);
}

int cmd_flows(const struct opts *o)
{
	struct flow_key key, next;
	struct flow_value v;
	void *prev = NULL;
	int fd, n = 0;
	struct xnat_state st;

	/* Kernel mode: conntrack is the flow table. */
	if (!state_load(&st) && st.mode == MODE_KERNEL)
		return flows_kernel(o);

	fd = loader_map_fd(MAP_FLOWS);
	if (fd < 0)
		return fail(o, EXIT_SYSTEM,
			    "no flow table: xnat is not up in xdp mode here");
	if (o->json) {
		json_obj_begin(NULL);
		json_arr_begin("flows");
	} else {
		printf("%-6s %-5s %-4s %-6s %-21s %-21s    %-6s %-21s %-21s %-11s %5s %9s %11s\n",
		       "proto", "dir", "nat", "in", "src", "dst", "out",
		       "new src", "new dst", "state", "idle", "packets", "bytes");
	}
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		/* Gone between the two calls: expired meanwhile. */
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		print_entry(fd, o, &key, &v);
		n++;
	}
	if (o->json) {
		json_arr_end();
		json_obj_end();
		json_done();
	} else {
		printf("%d entries\n", n);
	}
	close(fd);
	return EXIT_OK;
}
