// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's NAT connections for `xnat flows` in kernel mode, dumped
 * from conntrack through libnetfilter_conntrack: one line per connection
 * (conntrack keeps both directions in one entry), with the addresses as
 * the LAN side sent them and as NAT made them, the TCP state, the time
 * left before it expires and, where conntrack accounting is on
 * (net.netfilter.nf_conntrack_acct), packets and bytes of both directions.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include "flows_kernel.h"
#include "json.h"

struct dump {
	const struct opts *o;
	int n;
};

static const char *proto_name(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	}
	return "?";
}

static const char *tcp_state_name(uint8_t st)
{
	static const char *const names[] = {
		[TCP_CONNTRACK_NONE] = "none",
		[TCP_CONNTRACK_SYN_SENT] = "syn_sent",
		[TCP_CONNTRACK_SYN_RECV] = "syn_recv",
		[TCP_CONNTRACK_ESTABLISHED] = "established",
		[TCP_CONNTRACK_FIN_WAIT] = "fin_wait",
		[TCP_CONNTRACK_CLOSE_WAIT] = "close_wait",
		[TCP_CONNTRACK_LAST_ACK] = "last_ack",
		[TCP_CONNTRACK_TIME_WAIT] = "time_wait",
		[TCP_CONNTRACK_CLOSE] = "close",
		[TCP_CONNTRACK_SYN_SENT2] = "syn_sent2",
	};

	return st < sizeof(names) / sizeof(names[0]) && names[st] ? names[st] : "?";
}

/* "addr:port" from a conntrack address attribute and a port (or 0). */
static void endpoint(char *buf, size_t len, const struct nf_conntrack *ct,
		     enum nf_conntrack_attr addr, uint16_t port_be)
{
	char ip[INET_ADDRSTRLEN];
	uint32_t a = nfct_get_attr_u32(ct, addr);

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, ntohs(port_be));
}

static uint64_t attr_u64(const struct nf_conntrack *ct, enum nf_conntrack_attr a)
{
	return nfct_attr_is_set(ct, a) > 0 ? nfct_get_attr_u64(ct, a) : 0;
}

static int on_conntrack(enum nf_conntrack_msg_type type, struct nf_conntrack *ct,
			void *data)
{
	struct dump *d = data;
	uint32_t status = nfct_get_attr_u32(ct, ATTR_STATUS);
	uint8_t proto = nfct_get_attr_u8(ct, ATTR_L4PROTO);
	char src[32], dst[32], nsrc[32], ndst[32];
	const char *nat, *state = "-";
	uint16_t sport, dport, nsport, ndport;
	uint64_t packets, bytes;

	if (nfct_get_attr_u8(ct, ATTR_L3PROTO) != AF_INET ||
	    !(status & IPS_NAT_MASK))
		return NFCT_CB_CONTINUE;
	nat = (status & IPS_NAT_MASK) == IPS_NAT_MASK ? "hairpin" :
	      status & IPS_SRC_NAT ? "snat" : "dnat";
	/* What NAT made of the original direction is the reply, reversed.
	 * ICMP echo: the identifier sits where the source port would. */
	sport = nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC);
	nsport = nfct_get_attr_u16(ct, ATTR_REPL_PORT_DST);
	dport = nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST);
	ndport = nfct_get_attr_u16(ct, ATTR_REPL_PORT_SRC);
	if (proto == IPPROTO_ICMP) {
		nsport = ndport;
		dport = ndport = 0;
	}
	endpoint(src, sizeof(src), ct, ATTR_ORIG_IPV4_SRC, sport);
	endpoint(dst, sizeof(dst), ct, ATTR_ORIG_IPV4_DST, dport);
	endpoint(nsrc, sizeof(nsrc), ct, ATTR_REPL_IPV4_DST, nsport);
	endpoint(ndst, sizeof(ndst), ct, ATTR_REPL_IPV4_SRC, ndport);
	if (proto == IPPROTO_TCP)
		state = tcp_state_name(nfct_get_attr_u8(ct, ATTR_TCP_STATE));
	packets = attr_u64(ct, ATTR_ORIG_COUNTER_PACKETS) +
		  attr_u64(ct, ATTR_REPL_COUNTER_PACKETS);
	bytes = attr_u64(ct, ATTR_ORIG_COUNTER_BYTES) +
		attr_u64(ct, ATTR_REPL_COUNTER_BYTES);

	d->n++;
	if (d->o->json) {
		json_obj_begin(NULL);
		json_u64("family", 4);
		json_str("proto", proto_name(proto));
		json_str("nat", nat);
		json_str("src", src);
		json_str("dst", dst);
		json_str("new_src", nsrc);
		json_str("new_dst", ndst);
		json_str("state", state);
		json_u64("timeout_s", nfct_get_attr_u32(ct, ATTR_TIMEOUT));
		json_bool("assured", status & IPS_ASSURED);
		json_u64("packets", packets);
		json_u64("bytes", bytes);
		json_obj_end();
	} else {
		printf("%-5s %-7s %-21s %-21s => %-21s %-21s %-11s %7u %9llu %11llu\n",
		       proto_name(proto), nat, src, dst, nsrc, ndst, state,
		       nfct_get_attr_u32(ct, ATTR_TIMEOUT),
		       (unsigned long long)packets, (unsigned long long)bytes);
	}
	return NFCT_CB_CONTINUE;
}

int flows_kernel(const struct opts *o)
{
	struct dump d = { .o = o };
	uint32_t family = AF_INET;
	struct nfct_handle *h;
	int ret;

	/* They act on the XDP flow table; conntrack(8) filters and deletes
	 * the kernel's. */
	if (o->sort || o->nargs || o->watch > 0)
		return fail(o, EXIT_USAGE,
			    "flows: filters, delete, --sort and -w are for xdp mode's flow table; in kernel mode see conntrack -L");
	h = nfct_open(CONNTRACK, 0);
	if (!h)
		return fail(o, EXIT_SYSTEM, "failed to open conntrack netlink: %s",
			    strerror(errno));
	nfct_callback_register(h, NFCT_T_ALL, on_conntrack, &d);
	if (o->json) {
		json_obj_begin(NULL);
		json_str("source", "conntrack");
		json_arr_begin("flows");
	} else {
		printf("%-5s %-7s %-21s %-21s    %-21s %-21s %-11s %7s %9s %11s\n",
		       "proto", "nat", "src", "dst", "new src", "new dst",
		       "state", "timeout", "packets", "bytes");
	}
	ret = nfct_query(h, NFCT_Q_DUMP, &family);
	if (ret)
		ret = -errno;
	nfct_close(h);
	if (o->json) {
		json_arr_end();
		json_obj_end();
		json_done();
	} else {
		printf("%d NAT connections in conntrack (kernel mode)\n", d.n);
	}
	if (ret)
		return fail(o, EXIT_SYSTEM, "failed to dump conntrack: %s",
			    strerror(-ret));
	return EXIT_OK;
}
