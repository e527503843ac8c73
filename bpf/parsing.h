/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Packet parsing: Ethernet (one 802.1Q tag), IPv4, IPv6, TCP, UDP, ICMP.
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
#include "icmp.h"
#include <linux/icmpv6.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include "xnat_common.h"
#include "maps.h"
#include "fuzz.h"

/* 802.1Q tag, after the MACs; h_proto of the frame says 0x8100. */
struct vlan_hdr {
	__be16 tci;
	__be16 proto;
};

#define VLAN_VID_MASK 0x0fff

enum frag_kind {
	FRAG_NONE = 0,
	FRAG_FIRST = 1,  /* offset 0, more fragments: has the L4 header */
	FRAG_LATER = 2,  /* offset > 0: no L4 header */
};

/*
 * Return of the stages: go on, or the XDP action to stop with (the reason
 * set through pkt_stop). Helpers return 0 or -errno; see bpf/README.md.
 */
#define XNAT_CONTINUE -1

/* The errno values the helpers return: the BPF target has no libc. */
#define EEXIST 17
#define EINVAL 22
#define ENOSPC 28

#define IP_DF 0x4000
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

struct pkt {
	void *data_end;
	struct ethhdr *eth;
	struct iphdr *ip4;       /* exactly one of ip4/ip6 is set */
	struct ipv6hdr *ip6;
	void *l4;
	__u32 len;               /* frame length, for byte counters */
	/* The port the kernel routes the packet as arriving on: the VLAN
	 * device for tagged frames (set by the slow path), else key.ifindex. */
	__u32 in_ifindex;
	__u16 l3_len;            /* IPv4 tot_len or IPv6 40 + payload_len */
	__u8 tcp_flags;          /* byte 13 of the TCP header, else 0 */
	__u8 frag;               /* enum frag_kind */
	__u8 icmp_echo_request;  /* 1 request, 0 reply (ICMP only) */
	/* ICMP error (RFC 5508): key is then the flow entry that the quoted
	 * packet's reply would hit, so the lookup finds the translation. */
	__u8 icmp_error;
	/* Exceptions parsed through rather than stopped at, so that packets
	 * of a known flow are handled by XDP (handoff.h): TTL or hop limit
	 * expiring here, IPv4 options. */
	__u8 ttl_expired;
	__u8 ip_options;
	void *inner_l3;          /* the quoted IP header */
	void *inner_l4;          /* its first 8 bytes of L4 */
	struct flow_key key;
	__u32 reason;            /* enum xnat_reason when not continuing */
	/* The flow entry whose rewrite the packet left with, for `xnat
	 * trace`; NULL when it was not forwarded. */
	const struct flow_value *out;
};

static __always_inline int pkt_stop(struct pkt *p, int action, __u32 reason)
{
	p->reason = reason;
	return action;
}

#ifdef XNAT_FUZZ
/* Every place that stops a packet is a branch of its own (fuzz.h). */
#define pkt_stop(p, action, reason) (XNAT_COV(), pkt_stop(p, action, reason))
#endif

static __always_inline int icmp_is_error(__u8 proto, __u8 type)
{
	if (proto == IPPROTO_ICMP)
		return type == ICMP_DEST_UNREACH || type == ICMP_TIME_EXCEEDED ||
		       type == ICMP_PARAMETERPROB;
	return type == ICMPV6_DEST_UNREACH || type == ICMPV6_PKT_TOOBIG ||
	       type == ICMPV6_TIME_EXCEED || type == ICMPV6_PARAMPROB;
}

/*
 * An ICMP error quotes a packet that went the other way. Key it as that
 * packet's reply: the flow entry found is the one whose rewrite the error
 * needs (RFC 5508 section 4.2). Only quotes the data path could have made
 * are keyed: option-less IPv4 or plain IPv6 with TCP, UDP or an echo
 * request; anything else goes to the kernel. The quote is QUOTE_LEN bytes,
 * up to the end of the IP packet: bytes after it in the frame (padding, a
 * trailer) are not part of it.
 */
static __always_inline int parse_icmp_error(struct pkt *p, __u8 proto,
					    void *inner, __u32 quote_len)
{
	void *end = p->data_end;
	__u8 inner_proto, echo_req;
	__be16 *ports;

	if (proto == IPPROTO_ICMP) {
		struct iphdr *ip = inner;

		if ((void *)(ip + 1) > end || ip->ihl != 5 || ip->version != 4 ||
		    quote_len < sizeof(*ip) + 8)
			return pkt_stop(p, XDP_PASS, XNAT_PASS_PROTO);
		inner_proto = ip->protocol;
		p->key.saddr.v4 = ip->daddr;
		p->key.daddr.v4 = ip->saddr;
		p->inner_l4 = ip + 1;
		echo_req = ICMP_ECHO;
	} else {
		struct ipv6hdr *ip6 = inner;

		if ((void *)(ip6 + 1) > end || ip6->version != 6 ||
		    quote_len < sizeof(*ip6) + 8)
			return pkt_stop(p, XDP_PASS, XNAT_PASS_PROTO);
		inner_proto = ip6->nexthdr;
		__builtin_memcpy(p->key.saddr.v6, &ip6->daddr, 16);
		__builtin_memcpy(p->key.daddr.v6, &ip6->saddr, 16);
		p->inner_l4 = ip6 + 1;
		echo_req = ICMPV6_ECHO_REQUEST;
	}
	/* The first 8 bytes of L4: every error quotes at least these. */
	if (p->inner_l4 + 8 > end)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_PROTO);
	ports = p->inner_l4;
	if (inner_proto == IPPROTO_TCP || inner_proto == IPPROTO_UDP) {
		p->key.sport = ports[1];
		p->key.dport = ports[0];
	} else if (inner_proto == proto &&
		   ((struct icmphdr *)p->inner_l4)->type == echo_req) {
		p->key.dport = ((struct icmphdr *)p->inner_l4)->un.echo.id;
	} else {
		return pkt_stop(p, XDP_PASS, XNAT_PASS_PROTO);
	}
	p->key.proto = inner_proto;
	p->inner_l3 = inner;
	p->icmp_error = 1;
	return XNAT_CONTINUE;
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
		/* A first fragment holds only part of the datagram. */
		if (bpf_ntohs(uh->len) < sizeof(*uh) ||
		    (bpf_ntohs(uh->len) > l4_len && !p->frag))
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

		/* Protocol 58 in IPv4 (or 1 in IPv6) is no ICMP this path
		 * knows: an unknown protocol, the kernel's. */
		if ((proto == IPPROTO_ICMP) != !!p->ip4)
			return pkt_stop(p, XDP_PASS, XNAT_PASS_PROTO);
		if ((void *)(ih + 1) > end || l4_len < sizeof(*ih))
			return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
		if (icmp_is_error(proto, ih->type))
			return parse_icmp_error(p, proto, ih + 1,
						l4_len - sizeof(*ih));
		/* ND, router advertisements, timestamps: the kernel's. */
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

/*
 * RFC 1812 5.2.2: a router verifies the header checksum, as ip_rcv() does.
 * An option-less header is ten words: summing them is a few instructions,
 * and incremental updates would otherwise carry a corrupt header on.
 */
static __always_inline int ipv4_csum_ok(const struct iphdr *ip)
{
	const __u16 *w = (const __u16 *)ip;
	__u32 sum = 0;

#pragma unroll
	for (int i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* Multicast or limited broadcast: for the router's own services. */
static __always_inline int ipv4_is_group(__be32 daddr)
{
	__u8 d0 = bpf_ntohl(daddr) >> 24;

	return (d0 >= 224 && d0 < 240) || daddr == 0xffffffff;
}

/*
 * RFC 1812 5.3.7: sources in 0/8, 127/8 or 224/3, destinations in 0/8,
 * 127/8 or 240/4 are never forwarded; the kernel drops (and can log) them.
 * Addresses of the router itself are checked in the slow path with a FIB
 * lookup (fib_src_check), which knows them.
 */
static __always_inline int ipv4_is_martian(__be32 saddr, __be32 daddr)
{
	__u8 s0 = bpf_ntohl(saddr) >> 24, d0 = bpf_ntohl(daddr) >> 24;

	return s0 == 0 || s0 == 127 || s0 >= 224 ||
	       d0 == 0 || d0 == 127 || d0 >= 240;
}

static __always_inline int ipv6_is_loopback_or_any(const struct in6_addr *a)
{
	return !(a->in6_u.u6_addr32[0] | a->in6_u.u6_addr32[1] |
		 a->in6_u.u6_addr32[2]) &&
	       (a->in6_u.u6_addr32[3] | bpf_htonl(1)) == bpf_htonl(1);
}

/* RFC 1812 5.3.4: unicast IP in a link-layer broadcast or multicast is not
 * forwarded. Frames for another station's MAC are caught against the
 * port's MAC (flow entry or iface map). */
static __always_inline int eth_is_unicast(const struct ethhdr *eth)
{
	return !(eth->h_dest[0] & 1);
}

static __always_inline int mac_eq(const __u8 *a, const __u8 *b)
{
	return *(const __u32 *)a == *(const __u32 *)b &&
	       *(const __u16 *)(a + 4) == *(const __u16 *)(b + 4);
}

/* Extension headers walked before giving up (RFC 8200 4.1 order: hop-by-
 * hop, destination options, routing, fragment, destination options). */
#define IPV6_EXT_MAX 4

#define IPV6_NEXTHDR_HOP 0
#define IPV6_NEXTHDR_ROUTING 43
#define IPV6_NEXTHDR_FRAGMENT 44
#define IPV6_NEXTHDR_DEST 60

struct ipv6_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off; /* offset in 8-byte units << 3, M flag in bit 0 */
	__be32 id;
};

enum l4_peek_verdict {
	L4_PEEK_OK = 0,
	L4_PEEK_MALFORMED = 1,
	L4_PEEK_PROTO = 2,    /* not something XDP forwards: the kernel's */
};

/*
 * The ports (or echo id) of the L4 header LEN bytes long at OFF, into OUT
 * (proto already set). The header is copied out: the callers have no
 * fixed offset for it, and a copy keeps variable packet offsets out of the
 * main program, where the verifier would follow them through every path.
 */
static __always_inline int l4_peek_at(struct xdp_md *ctx, __u32 off,
				      __u32 len, __u32 v6, struct l4_peek *out,
				      __u8 *h)
{

	if (out->proto == IPPROTO_TCP) {
		if (len < 20 || bpf_xdp_load_bytes(ctx, off, h, 14))
			return L4_PEEK_MALFORMED;
		if ((h[12] >> 4) < 5 || (__u32)(h[12] >> 4) * 4 > len)
			return L4_PEEK_MALFORMED;
		out->tcp_flags = h[13];
	} else if (out->proto == IPPROTO_UDP) {
		if (len < 8 || bpf_xdp_load_bytes(ctx, off, h, 8))
			return L4_PEEK_MALFORMED;
		if (((h[4] << 8) | h[5]) < 8 ||
		    (((h[4] << 8) | h[5]) > len && out->frag != FRAG_FIRST))
			return L4_PEEK_MALFORMED;
	} else if (out->proto == (v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP)) {
		__u8 req = v6 ? ICMPV6_ECHO_REQUEST : ICMP_ECHO;
		__u8 rep = v6 ? ICMPV6_ECHO_REPLY : ICMP_ECHOREPLY;

		if (len < 8 || bpf_xdp_load_bytes(ctx, off, h, 8))
			return L4_PEEK_MALFORMED;
		/* Errors and everything but echo: the kernel's. */
		if (h[0] != req && h[0] != rep)
			return L4_PEEK_PROTO;
		out->icmp_echo_request = h[0] == req;
		if (out->icmp_echo_request)
			__builtin_memcpy(&out->sport, &h[4], 2);
		else
			__builtin_memcpy(&out->dport, &h[4], 2);
		return L4_PEEK_OK;
	} else {
		return L4_PEEK_PROTO;
	}
	__builtin_memcpy(&out->sport, &h[0], 2);
	__builtin_memcpy(&out->dport, &h[2], 2);
	return L4_PEEK_OK;
}

/* IPv4 with options: the L4 header at OFF (enum l4_peek_verdict). A
 * global function, verified once. */
__noinline int ipv4_opts_peek(struct xdp_md *ctx, __u32 off, __u32 len,
			      struct l4_peek *out)
{
	__u8 h[16] = {};

	if (!out)
		return L4_PEEK_MALFORMED;
	return l4_peek_at(ctx, off, len, 0, out, h);
}

/*
 * Walk the extension headers after the IPv6 header at L3 (payload PLEN
 * bytes) to the L4 header, so that TCP, UDP and echo behind them are
 * flows like any other: a router forwards them unchanged (the hop-by-hop
 * header may be ignored, RFC 8200 4.3). A fragment header makes the
 * packet a fragment of its datagram as in IPv4: the first one carries the
 * L4 header (RFC 7112 requires the whole chain in it), later ones find
 * their flow through its record (frag.h). A global function, verified
 * once (enum l4_peek_verdict).
 */
__noinline int ipv6_ext_peek(struct xdp_md *ctx, __u32 l3, __u32 plen,
			     struct l4_peek *out)
{
	__u32 off = l3 + 40, end = l3 + 40 + plen;
	__u8 nexthdr, h[16] = {};
	int i;

	/* One small buffer for every read: this stack adds to the main
	 * program's at the call. */
	if (!out || bpf_xdp_load_bytes(ctx, l3 + 6, h, 1))
		return L4_PEEK_MALFORMED;
	nexthdr = h[0];
	for (i = 0; i < IPV6_EXT_MAX; i++) {
		if (nexthdr != IPV6_NEXTHDR_HOP && nexthdr != IPV6_NEXTHDR_ROUTING &&
		    nexthdr != IPV6_NEXTHDR_DEST && nexthdr != IPV6_NEXTHDR_FRAGMENT)
			break;
		if (off + 8 > end || bpf_xdp_load_bytes(ctx, off, h, 8))
			return L4_PEEK_MALFORMED;
		if (nexthdr == IPV6_NEXTHDR_FRAGMENT) {
			struct ipv6_frag_hdr *fh = (void *)h;
			__u16 fo = bpf_ntohs(fh->frag_off);

			off += 8;
			nexthdr = fh->nexthdr;
			/* An atomic fragment (offset 0, no more) is a whole
			 * datagram (RFC 6946). */
			if (!(fo & 0xfff9))
				continue;
			out->frag_id = fh->id;
			out->frag_nexthdr = nexthdr;
			out->frag_start = fo & 0xfff8;
			out->frag_end = out->frag_start + end - off;
			if (fo & 0xfff8) {
				out->frag = FRAG_LATER;
				out->proto = nexthdr;
				return L4_PEEK_OK;
			}
			out->frag = FRAG_FIRST;
			continue;
		}
		nexthdr = h[0];
		off += (h[1] + 1) * 8;
	}
	out->proto = nexthdr;
	if (off > end)
		return L4_PEEK_MALFORMED;
	out->l4_off = off;
	return l4_peek_at(ctx, off, end - off, 1, out, h);
}

/* The furthest into the frame an L4 header behind extension headers can
 * start: a VLAN tag, the IPv6 header and IPV6_EXT_MAX headers of the
 * largest size (8 * 256 bytes). The walk never goes further; parse_slow
 * tests it only so that the verifier knows the bound of the offset. */
#define IPV6_L4_OFF_MAX                                                     \
	(sizeof(struct ethhdr) + sizeof(struct vlan_hdr) +                  \
	 sizeof(struct ipv6hdr) + IPV6_EXT_MAX * 8 * 256)

/*
 * The L4 key behind IPv4 options (V6 0: the L4 header at OFF, LEN bytes) or
 * IPv6 extension headers (V6 1: the IPv6 header at OFF, payload LEN).
 * IPv4 with options gets no L4 pointer (p->l4 NULL): it never leaves
 * through XDP (handoff.h), so nothing reads or rewrites its L4 header.
 * IPv6 is forwarded by XDP, and a TCP segment must be judged and tracked
 * (tcp_track.h) and its SYN clamped (mss.h) whatever headers precede it,
 * or a RST behind a destination options header would close a flow that
 * the same RST without one cannot: a TCP header behind extension headers
 * gets its pointer, at a variable offset that only this branch has. Like
 * any TCP header (parse_l4), it must lie within the linear data. UDP and
 * echo behind them need none: IPv6 is routed, nothing rewrites them.
 */
static __always_inline int parse_slow(struct xdp_md *ctx, struct pkt *p,
				      __u32 v6, __u32 off, __u32 len)
{
	struct xnat_tmp *t = xnat_tmp_get();
	struct l4_peek *lp;
	int rc;

	if (!t)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_INTERNAL);
	lp = &t->lp;
	__builtin_memset(lp, 0, sizeof(*lp));
	if (v6) {
		rc = ipv6_ext_peek(ctx, off, len, lp);
	} else {
		lp->proto = p->ip4->protocol;
		lp->frag = p->frag;
		rc = ipv4_opts_peek(ctx, off, len, lp);
	}
	if (rc == L4_PEEK_MALFORMED)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
	if (rc != L4_PEEK_OK)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_PROTO);
	p->key.proto = lp->proto;
	p->key.sport = lp->sport;
	p->key.dport = lp->dport;
	p->tcp_flags = lp->tcp_flags;
	p->icmp_echo_request = lp->icmp_echo_request;
	if (!v6)
		return XNAT_CONTINUE;
	/* IPv6 fragment details stay in lp for frag.h (frag_range). */
	p->frag = lp->frag;
	/* A later fragment has no TCP header: proto is only what its
	 * fragment header says follows. */
	if (lp->proto == IPPROTO_TCP && lp->frag != FRAG_LATER) {
		__u32 l4 = lp->l4_off;
		struct tcphdr *th;

		if (l4 > IPV6_L4_OFF_MAX)
			return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
		th = (void *)p->eth + l4;
		if ((void *)(th + 1) > p->data_end)
			return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
		p->l4 = th;
	}
	return XNAT_CONTINUE;
}

static __always_inline int parse_ipv4(struct xdp_md *ctx, struct pkt *p,
				      struct iphdr *ip)
{
	__u32 avail, hlen, tot;

	if ((void *)(ip + 1) > p->data_end)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
	hlen = ip->ihl * 4;
	tot = bpf_ntohs(ip->tot_len);
	avail = p->data_end - (void *)ip;
	if (ip->version != 4 || hlen < sizeof(*ip) || tot < hlen || tot > avail)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
	/* Options: parsed on so the flow is found, never forwarded here
	 * (handoff.h); the kernel checks their header's checksum. */
	p->ip_options = hlen != sizeof(*ip);
	if (!p->ip_options && !ipv4_csum_ok(ip))
		return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
	if (ipv4_is_group(ip->daddr))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_LOCAL);
	if (ipv4_is_martian(ip->saddr, ip->daddr))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_MARTIAN);
	if (!eth_is_unicast(p->eth))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_OTHERHOST);
	p->ttl_expired = ip->ttl <= 1;

	p->ip4 = ip;
	p->l3_len = tot;
	p->key.family = XNAT_AF_INET;
	p->key.saddr.v4 = ip->saddr;
	p->key.daddr.v4 = ip->daddr;
	/* Fragments: the first carries the L4 header and is parsed as any
	 * packet; the others have no ports and find their flow through
	 * the first one's record (frag.h). */
	if (ip->frag_off & bpf_htons(IP_OFFSET)) {
		p->frag = FRAG_LATER;
		p->key.proto = ip->protocol;
		return XNAT_CONTINUE;
	}
	if (ip->frag_off & bpf_htons(IP_MF))
		p->frag = FRAG_FIRST;
	if (p->ip_options)
		return parse_slow(ctx, p, 0, (void *)ip - (void *)p->eth + hlen,
				  tot - hlen);
	return parse_l4(p, ip->protocol, ip + 1, tot - hlen);
}

static __always_inline int parse_ipv6(struct xdp_md *ctx, struct pkt *p,
				      struct ipv6hdr *ip6)
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
	/* Multicast, loopback or unspecified source (RFC 4291), loopback or
	 * unspecified destination. */
	if (ip6->saddr.in6_u.u6_addr8[0] == 0xff ||
	    ipv6_is_loopback_or_any(&ip6->saddr) ||
	    ipv6_is_loopback_or_any(&ip6->daddr))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_MARTIAN);
	if (!eth_is_unicast(p->eth))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_OTHERHOST);
	p->ttl_expired = ip6->hop_limit <= 1;

	p->ip6 = ip6;
	p->l3_len = sizeof(*ip6) + plen;
	p->key.family = XNAT_AF_INET6;
	__builtin_memcpy(p->key.saddr.v6, &ip6->saddr, 16);
	__builtin_memcpy(p->key.daddr.v6, &ip6->daddr, 16);
	if (ip6->nexthdr == IPV6_NEXTHDR_HOP || ip6->nexthdr == IPV6_NEXTHDR_ROUTING ||
	    ip6->nexthdr == IPV6_NEXTHDR_DEST || ip6->nexthdr == IPV6_NEXTHDR_FRAGMENT)
		return parse_slow(ctx, p, 1, (void *)ip6 - (void *)p->eth, plen);
	return parse_l4(p, ip6->nexthdr, ip6 + 1, plen);
}

static __always_inline int parse_packet(struct xdp_md *ctx, struct pkt *p)
{
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__be16 proto;
	void *l3;

	__builtin_memset(p, 0, sizeof(*p));
	p->data_end = (void *)(long)ctx->data_end;
	p->len = p->data_end - data;
	p->key.ifindex = ctx->ingress_ifindex;
	p->in_ifindex = ctx->ingress_ifindex;
	if ((void *)(eth + 1) > p->data_end)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
	p->eth = eth;

	proto = eth->h_proto;
	l3 = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q)) {
		struct vlan_hdr *vh = l3;

		if ((void *)(vh + 1) > p->data_end)
			return pkt_stop(p, XDP_DROP, XNAT_DROP_MALFORMED);
		/* VLAN 0 (priority tags) and QinQ are the kernel's. */
		p->key.vid = bpf_ntohs(vh->tci) & VLAN_VID_MASK;
		if (!p->key.vid)
			return pkt_stop(p, XDP_PASS, XNAT_PASS_VLAN);
		proto = vh->proto;
		l3 = vh + 1;
	}

	switch (proto) {
	case bpf_htons(ETH_P_IP):
		return parse_ipv4(ctx, p, l3);
	case bpf_htons(ETH_P_IPV6):
		return parse_ipv6(ctx, p, l3);
	case bpf_htons(ETH_P_8021Q):
	case bpf_htons(ETH_P_8021AD):
		return pkt_stop(p, XDP_PASS, XNAT_PASS_VLAN);
	}
	return pkt_stop(p, XDP_PASS, XNAT_PASS_NOT_IP);
}

#endif /* XNAT_PARSING_H */
