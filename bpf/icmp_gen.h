/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ICMP errors the data path sends itself, for packets of XDP flows that it
 * cannot forward and the kernel could not handle either (it has never seen
 * the flow): "fragmentation needed" with the next-hop MTU (RFC 792,
 * RFC 1191) and "packet too big" (RFC 4443 3.2) for a packet bigger than
 * the egress port's MTU, "time exceeded" (RFC 792, RFC 4443 3.3) for one
 * whose TTL or hop limit ends here. As Cilium does for its NodePort path,
 * the packet itself becomes the error: new IP and ICMP headers are pushed
 * in front of it, the start of the offending packet stays as the quote,
 * the rest is cut, and the frame goes back out of the port it came in on
 * (XDP_TX) to the MAC it came from.
 *
 * The quote is the packet as it arrived, before any rewrite, as the
 * sender knows it: that is what its stack matches the error to. It is cut
 * to ICMP_QUOTE_MAX bytes, as Linux does for IPv4: the error stays within
 * 576 bytes (RFC 1812 4.3.2.3); for IPv6 that is less than the 1280 that
 * RFC 4443 2.4 (c) allows. Every quote holds the IP header and at least
 * the 8 bytes of L4 that stacks look at.
 *
 * The error's source is the router's address on the ingress port
 * (xnat_ifaddrs, written by userspace), as the kernel's own errors have.
 * Errors are rate limited (RFC 1812 4.3.2.8, RFC 4443 2.4 (f)) by a token
 * bucket per CPU; no error is sent for a later fragment (RFC 1122
 * 3.2.2) or without a source address: the packet is then dropped, counted
 * as drop_icmp_limit.
 */
#ifndef XNAT_ICMP_GEN_H
#define XNAT_ICMP_GEN_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parsing.h"

/* Longest quote of the offending packet, in bytes. */
#define ICMP_QUOTE_MAX 548
/* Errors per second per CPU, and the burst allowed (Linux's defaults for
 * net.ipv4.icmp_msgs_per_sec and icmp_msgs_burst). */
#define ICMP_RATE_PER_SEC 1000
#define ICMP_RATE_BURST 50
#define ICMP_TTL 64

#define ICMPV6_TIME_EXCEED_TRANSIT 0

/* May one more error go out? One token per error, ICMP_RATE_PER_SEC
 * tokens a second, at most ICMP_RATE_BURST saved up. */
static __always_inline int icmp_rate_allow(void)
{
	struct icmp_bucket *b;
	__u32 zero = 0;
	__u64 now, add;

	b = bpf_map_lookup_elem(&xnat_icmp_rate, &zero);
	if (!b)
		return 0;
	now = bpf_ktime_get_ns();
	add = (now - b->last_ns) / (1000000000ULL / ICMP_RATE_PER_SEC);
	if (add) {
		b->tokens = b->tokens + add > ICMP_RATE_BURST ?
				    ICMP_RATE_BURST : b->tokens + add;
		b->last_ns = now;
	}
	if (!b->tokens)
		return 0;
	b->tokens--;
	return 1;
}

/* One's complement sum of the 32-bit words from P to the end of the
 * (already trimmed) frame, unfolded. */
static __always_inline __u64 icmp_sum_to_end(void *p, void *end)
{
	__u32 *w = p;
	__u64 sum = 0;
	__u8 *t;
	int i;

	for (i = 0; i < (ICMP_QUOTE_MAX + 8) / 4; i++) {
		if ((void *)(w + 1) > end)
			break;
		sum += *w;
		w++;
		/* Keep the bound check on this very pointer: clang would
		 * otherwise test one and load through another. */
		asm volatile("" : "+r"(w));
	}
	/* The last 1 to 3 bytes, at an even offset: a 16-bit word, then a
	 * byte padded with zero (RFC 1071). */
	t = (void *)w;
	if ((void *)(t + 2) <= end) {
		sum += *(__u16 *)t;
		t += 2;
	}
	if ((void *)(t + 1) <= end)
		sum += *t;
	return sum;
}

static __always_inline __u16 icmp_fold64(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/*
 * Turn the frame into the start of an error towards its sender: HDR bytes
 * of new headers (IP + ICMP) before the quote, the quote cut to QUOTE,
 * the L2 header (L2 bytes) moved to the front with its MACs swapped.
 * Returns 0, or -1 if the frame could not be reshaped (then it is
 * dropped: it may be half rewritten).
 */
static __always_inline int icmp_reshape(struct xdp_md *ctx, __u32 l2,
					__u32 hdr, __u32 quote)
{
	__u8 mac[ETH_ALEN];
	struct ethhdr *eth;
	void *data, *end;
	__u32 cur;

	if (bpf_xdp_adjust_head(ctx, -(int)hdr))
		return -1;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	/* The old L2 header now sits HDR bytes in; its copy at the front
	 * takes 18 bytes whatever the tag, the rest is overwritten later. */
	if (data + hdr + 18 > end)
		return -1;
	__builtin_memcpy(data, data + hdr, 18);
	eth = data;
	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	cur = end - data;
	/* A length, not pointer arithmetic, for the verifier. */
	asm volatile("" : "+r"(cur));
	return bpf_xdp_adjust_tail(ctx, (int)(l2 + hdr + quote) - (int)cur) ?
		       -1 : 0;
}

/* icmp_reshape(), then the new IP header (and its HDR bytes of IP and
 * ICMP header, checked against *END, the new end), or NULL. */
static __always_inline void *icmp_reshape_l3(struct xdp_md *ctx, __u32 l2,
					     __u32 hdr, __u32 quote, void **end)
{
	void *l3;

	if (icmp_reshape(ctx, l2, hdr, quote))
		return NULL;
	l3 = (void *)(long)ctx->data + (l2 & 0x1f);
	*end = (void *)(long)ctx->data_end;
	if (l3 + hdr > *end)
		return NULL;
	return l3;
}

static __always_inline int icmp_build_v4(struct xdp_md *ctx, __u32 l2,
					 __be32 src, __u32 kind, __u32 mtu)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = data + (l2 & 0x1f);
	struct icmphdr *ih;
	__be32 dst;
	__u32 q;

	if ((void *)(ip + 1) > end)
		return -1;
	dst = ip->saddr;
	q = bpf_ntohs(ip->tot_len);
	q = q < ICMP_QUOTE_MAX ? q : ICMP_QUOTE_MAX;
	ip = icmp_reshape_l3(ctx, l2, sizeof(*ip) + sizeof(*ih), q, &end);
	if (!ip)
		return -1;
	ih = (void *)(ip + 1);
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = 0xc0; /* internetwork control, as Linux's errors */
	ip->tot_len = bpf_htons(sizeof(*ip) + sizeof(*ih) + q);
	ip->id = (__be16)bpf_get_prandom_u32();
	ip->frag_off = 0;
	ip->ttl = ICMP_TTL;
	ip->protocol = IPPROTO_ICMP;
	ip->check = 0;
	ip->saddr = src;
	ip->daddr = dst;
	ip->check = icmp_fold64((__u64)((__u32 *)ip)[0] + ((__u32 *)ip)[1] +
				((__u32 *)ip)[2] + ((__u32 *)ip)[3] +
				((__u32 *)ip)[4]);
	ih->type = kind == XNAT_TX_ICMP_TOO_BIG ? ICMP_DEST_UNREACH :
						  ICMP_TIME_EXCEEDED;
	ih->code = kind == XNAT_TX_ICMP_TOO_BIG ? ICMP_FRAG_NEEDED :
						  ICMP_EXC_TTL;
	ih->checksum = 0;
	ih->un.gateway = 0;
	if (kind == XNAT_TX_ICMP_TOO_BIG)
		ih->un.frag.mtu = bpf_htons(mtu);
	ih->checksum = icmp_fold64(icmp_sum_to_end(ih, end));
	return 0;
}

static __always_inline int icmp_build_v6(struct xdp_md *ctx, __u32 l2,
					 const __be32 *src, __u32 kind,
					 __u32 mtu)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = data + (l2 & 0x1f);
	struct in6_addr dst;
	struct icmp6hdr *ih;
	__u64 sum;
	__u32 q;
	int i;

	if ((void *)(ip6 + 1) > end)
		return -1;
	dst = ip6->saddr;
	q = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
	q = q < ICMP_QUOTE_MAX ? q : ICMP_QUOTE_MAX;
	ip6 = icmp_reshape_l3(ctx, l2, sizeof(*ip6) + sizeof(*ih), q, &end);
	if (!ip6)
		return -1;
	ih = (void *)(ip6 + 1);
	*(__be32 *)ip6 = bpf_htonl(6 << 28);
	ip6->payload_len = bpf_htons(sizeof(*ih) + q);
	ip6->nexthdr = IPPROTO_ICMPV6;
	ip6->hop_limit = ICMP_TTL;
	__builtin_memcpy(&ip6->saddr, src, 16);
	ip6->daddr = dst;
	ih->icmp6_type = kind == XNAT_TX_ICMP_TOO_BIG ? ICMPV6_PKT_TOOBIG :
							ICMPV6_TIME_EXCEED;
	ih->icmp6_code = 0; /* hop limit exceeded in transit */
	ih->icmp6_cksum = 0;
	ih->icmp6_dataun.un_data32[0] =
		kind == XNAT_TX_ICMP_TOO_BIG ? bpf_htonl(mtu) : 0;
	/* Pseudo-header (RFC 8200 8.1): addresses, length, next header. */
	sum = icmp_sum_to_end(ih, end);
#pragma unroll
	for (i = 0; i < 4; i++)
		sum += (__u64)src[i] + dst.in6_u.u6_addr32[i];
	sum += bpf_htonl(sizeof(*ih) + q) + bpf_htonl(IPPROTO_ICMPV6);
	ih->icmp6_cksum = icmp_fold64(sum);
	return 0;
}

/*
 * Make the frame, whose IP header starts L2 bytes in and which arrived on
 * the kernel's port IFINDEX, an error of KIND (XNAT_TX_ICMP_TOO_BIG with
 * the egress MTU, or XNAT_TX_ICMP_TIME_EXCEEDED) towards its sender.
 * Returns KIND when the frame is the error, to be sent back with XDP_TX,
 * or the reason it is to be dropped. A global function: the verifier
 * checks it once, not at every call site.
 */
__noinline int icmp_error_build(struct xdp_md *ctx, __u32 l2, __u32 ifindex,
				__u32 kind, __u32 mtu)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct iface_addrs *a;
	__u8 *l3 = data + (l2 & 0x1f);

	a = bpf_map_lookup_elem(&xnat_ifaddrs, &ifindex);
	if (!a || (void *)(l3 + 1) > end)
		return XNAT_DROP_ICMP_LIMIT;
	if ((*l3 >> 4) == 4) {
		if (!a->v4 || !icmp_rate_allow())
			return XNAT_DROP_ICMP_LIMIT;
		return icmp_build_v4(ctx, l2, a->v4, kind, mtu) ?
			       XNAT_DROP_MALFORMED : kind;
	}
	if (!(a->v6[0] | a->v6[1] | a->v6[2] | a->v6[3]) || !icmp_rate_allow())
		return XNAT_DROP_ICMP_LIMIT;
	return icmp_build_v6(ctx, l2, a->v6, kind, mtu) ? XNAT_DROP_MALFORMED :
							  kind;
}

/* The kernel's ifindex of the port P arrived on (the VLAN device for
 * tagged frames), or 0. */
static __always_inline __u32 icmp_in_ifindex(const struct pkt *p)
{
	return port_device(p->key.ifindex, p->key.vid);
}

/*
 * Answer P, a packet of a known flow, with an error instead of forwarding
 * it: KIND is XNAT_TX_ICMP_TOO_BIG (MTU is the egress port's) or
 * XNAT_TX_ICMP_TIME_EXCEEDED. Returns XDP_TX with that reason, or
 * XDP_DROP with the reason the packet could not be answered.
 */
static __always_inline int icmp_send_error(struct xdp_md *ctx, struct pkt *p,
					   __u32 kind, __u32 mtu)
{
	__u32 l2 = p->key.vid ? sizeof(struct ethhdr) + sizeof(struct vlan_hdr) :
				sizeof(struct ethhdr);
	__u32 reason;

	/* No error about a later fragment (RFC 1122 3.2.2) or an error. */
	if (p->frag == FRAG_LATER || p->icmp_error)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_ICMP_LIMIT);
	reason = icmp_error_build(ctx, l2, icmp_in_ifindex(p), kind, mtu);
	/* The frame changed under every pointer of P. */
	p->data_end = (void *)(long)ctx->data_end;
	p->eth = (void *)(long)ctx->data;
	p->ip4 = NULL;
	p->ip6 = NULL;
	p->l4 = NULL;
	if (reason == kind)
		return pkt_stop(p, XDP_TX, kind);
	return pkt_stop(p, XDP_DROP, reason);
}

#endif /* XNAT_ICMP_GEN_H */
