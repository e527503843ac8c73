/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Packet parsing: Ethernet (802.1Q noted), IPv4, IPv6, TCP, UDP, ICMP echo.
 * parse_packet() fills a struct pkt whose flow key is what the flow table is
 * looked up with, or returns the verdict for a packet XDP does not handle:
 * XDP_PASS (with its reason) for what the kernel must see, XDP_DROP for
 * headers that are truncated or contradict themselves. The kernel would drop
 * those too; dropping here keeps them off the fast path and counts them.
 */
#ifndef XNAT_PARSING_H
#define XNAT_PARSING_H

#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include "xnat_common.h"

/* Return of the stages: go on, or the XDP action to stop with. */
#define XNAT_CONTINUE -1

#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

struct pkt {
	void *data_end;
	struct ethhdr *eth;
	struct iphdr *ip4;       /* exactly one of ip4/ip6 is set */
	struct ipv6hdr *ip6;
	void *l4;
	__u32 len;               /* frame length, for byte counters */
	__u16 l3_len;            /* IPv4 tot_len or IPv6 40 + payload_len */
	__u8 tcp_flags;          /* byte 13 of the TCP header, else 0 */
	__u8 icmp_echo_request;  /* 1 request, 0 reply (ICMP only) */
	struct flow_key key;
	__u32 reason;            /* enum xnat_reason when not continuing */
};

static __always_inline int pkt_stop(struct pkt *p, int action, __u32 reason)
{
	p->reason = reason;
	return action;
}

/* The L4 header: ports, or the ICMP echo id standing in for one. */
static __always_inline int parse_l4(struct pkt *p, __u8 proto, void *l4,
				    __u32 l4_len)
{
	void *end = p->data_end;

	p->key.proto = proto;
	p->l4 = l4;
	switch (proto) {
	case IPPROTO_TCP: {
		struct tcphdr *th = l4;

		if ((void *)(th + 1) > end || l4_len < sizeof(*th))
			return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
		if (th->doff < 5 || th->doff * 4 > l4_len)
			return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
		p->key.sport = th->source;
		p->key.dport = th->dest;
		p->tcp_flags = ((__u8 *)th)[13];
		return XNAT_CONTINUE;
	}
	case IPPROTO_UDP: {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > end || l4_len < sizeof(*uh))
			return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
		if (bpf_ntohs(uh->len) < sizeof(*uh) ||
		    bpf_ntohs(uh->len) > l4_len)
			return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
		p->key.sport = uh->source;
		p->key.dport = uh->dest;
		return XNAT_CONTINUE;
	}
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		/* Echo has the same layout in both: type, code, csum, id, seq. */
		struct icmphdr *ih = l4;
		__u8 req = proto == IPPROTO_ICMP ? ICMP_ECHO : ICMPV6_ECHO_REQUEST;
		__u8 rep = proto == IPPROTO_ICMP ? ICMP_ECHOREPLY : ICMPV6_ECHO_REPLY;

		if ((void *)(ih + 1) > end || l4_len < sizeof(*ih))
			return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
		/* Errors, ND, router advertisements: the kernel's. */
		if (ih->type != req && ih->type != rep)
			return pkt_stop(p, XDP_PASS, XNAT_PASS_PROTO);
		p->icmp_echo_request = ih->type == req;
		if (p->icmp_echo_request)
			p->key.sport = ih->un.echo.id;
		else
			p->key.dport = ih->un.echo.id;
		return XNAT_CONTINUE;
	}
	}
	return pkt_stop(p, XDP_PASS, XNAT_PASS_PROTO);
}

static __always_inline int parse_ipv4(struct pkt *p, struct iphdr *ip)
{
	__u32 avail, hlen, tot;

	if ((void *)(ip + 1) > p->data_end)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
	hlen = ip->ihl * 4;
	tot = bpf_ntohs(ip->tot_len);
	avail = p->data_end - (void *)ip;
	if (ip->version != 4 || hlen < sizeof(*ip) || tot < hlen || tot > avail)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
	if (hlen != sizeof(*ip))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_IP_OPTIONS);
	if (ip->frag_off & bpf_htons(IP_MF | IP_OFFSET))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_FRAGMENT);
	if (ip->ttl <= 1)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_TTL);

	p->ip4 = ip;
	p->l3_len = tot;
	p->key.family = XNAT_AF_INET;
	p->key.saddr.v4 = ip->saddr;
	p->key.daddr.v4 = ip->daddr;
	return parse_l4(p, ip->protocol, ip + 1, tot - hlen);
}

static __always_inline int parse_ipv6(struct pkt *p, struct ipv6hdr *ip6)
{
	__u32 avail, plen;

	if ((void *)(ip6 + 1) > p->data_end)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
	plen = bpf_ntohs(ip6->payload_len);
	avail = p->data_end - (void *)(ip6 + 1);
	if (ip6->version != 6 || plen > avail)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
	/* Link-local and multicast never leave the link: ND, RA, MLD. */
	if ((ip6->daddr.in6_u.u6_addr8[0] == 0xff) ||
	    (ip6->daddr.in6_u.u6_addr16[0] & bpf_htons(0xffc0)) ==
		    bpf_htons(0xfe80) ||
	    (ip6->saddr.in6_u.u6_addr16[0] & bpf_htons(0xffc0)) ==
		    bpf_htons(0xfe80))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_LOCAL);
	if (ip6->hop_limit <= 1)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_TTL);

	p->ip6 = ip6;
	p->l3_len = sizeof(*ip6) + plen;
	p->key.family = XNAT_AF_INET6;
	__builtin_memcpy(p->key.saddr.v6, &ip6->saddr, 16);
	__builtin_memcpy(p->key.daddr.v6, &ip6->daddr, 16);
	/* XXX: extension headers (and so IPv6 fragments) go to the kernel
	 * as unknown protocols; TCP/UDP behind them are rare in practice. */
	return parse_l4(p, ip6->nexthdr, ip6 + 1, plen);
}

static __always_inline int parse_packet(struct xdp_md *ctx, struct pkt *p)
{
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;

	__builtin_memset(p, 0, sizeof(*p));
	p->data_end = (void *)(long)ctx->data_end;
	p->len = p->data_end - data;
	p->key.ifindex = ctx->ingress_ifindex;
	if ((void *)(eth + 1) > p->data_end)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
	p->eth = eth;

	switch (eth->h_proto) {
	case bpf_htons(ETH_P_IP):
		return parse_ipv4(p, (void *)(eth + 1));
	case bpf_htons(ETH_P_IPV6):
		return parse_ipv6(p, (void *)(eth + 1));
	case bpf_htons(ETH_P_8021Q):
	case bpf_htons(ETH_P_8021AD):
		/* XXX: tagged frames belong to the kernel's VLAN devices;
		 * forwarding them in XDP needs a (port, vid) to VLAN device
		 * map for fib lookups and tag push/pop on egress. */
		return pkt_stop(p, XDP_PASS, XNAT_PASS_VLAN);
	}
	return pkt_stop(p, XDP_PASS, XNAT_PASS_NOT_IP);
}

#endif /* XNAT_PARSING_H */
