/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Shared with user/ through xnat_common.h: the NAT's records (mappings,
 * port owners, peers, endpoint-dependent bindings, per-host counts) and
 * the pool hash that the kernel's SNAT must agree with.
 */
#ifndef XNAT_COMMON_NAT_H
#define XNAT_COMMON_NAT_H

#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_timer */

/*
 * NAT mappings (RFC 4787 REQ-1, endpoint-independent mapping): an inside
 * endpoint (address, port or echo id, protocol) keeps one external port
 * towards every destination while any of its flows lives, and for the
 * protocol's timeout after the last one ends (REQ-3: no reuse before).
 * xnat_ports owns each external port exclusively: its BPF_NOEXIST insert is
 * the lock-free allocation, and it answers "whose port is this" for
 * inbound filtering.
 */
struct nat_endpoint {
	__be32 addr;
	__be16 port;
	__u8 proto;
	/* 0 wherever an endpoint is a key or names one. In an xnat_ports
	 * value (the port's owner): NAT_EP_ACTIVE while the owner's mapping
	 * has outbound flows, so that the endpoint-dependent fallback need
	 * not look the mapping up (bpf/nat.h edm_port_free()); 0 says
	 * nothing (entries of an older xnat), the mapping decides. */
	__u8 flags;
};
_Static_assert(sizeof(struct nat_endpoint) == 8, "nat_endpoint layout");

#define NAT_EP_ACTIVE 0x01

struct nat_mapping {
	__be16 ext_port;
	__u8 addr_idx;         /* external address: xnat_pool index */
	/* Bits: NAT_MAPPING_CHARGED counted against its inside host,
	 * NAT_MAPPING_DNS only DNS (UDP port 53) flows so far. */
	__u8 flags;
	__u32 flows;           /* connections using it, atomic */
	/* Of those, the ones the inside opened. Only they keep the mapping
	 * open to inbound traffic: once the last one expired (outbound
	 * silence, REQ-6), the mapping is over even while its port waits
	 * out its timeout (REQ-3) and inbound flows still drain. */
	__u32 out_flows;
	__u32 pad2;
	__u64 last_used_ns;    /* when the last connection ended */
	struct bpf_timer timer;
};
_Static_assert(sizeof(struct nat_mapping) == 40, "nat_mapping layout");

struct nat_port_key {
	__be16 port;
	__u8 proto;
	__u8 addr_idx; /* external address: xnat_pool index (0: nat_addr) */
};
_Static_assert(sizeof(struct nat_port_key) == 4, "nat_port_key layout");

/* xnat_port_active (bpf/port_active.h): a byte per port, per protocol
 * (TCP, UDP, ICMP echo ids) and pool address, eight to a word. */
#define PORT_ACTIVE_PROTOS 3
#define PORT_ACTIVE_PROTO_WORDS (65536 / 8)
#define PORT_ACTIVE_WORDS (PORT_ACTIVE_PROTOS * PORT_ACTIVE_PROTO_WORDS)

/* The word of xnat_port_active that holds PORT (host order) of PROTO on
 * pool address ADDR_IDX; its byte is PORT % 8. */
static inline __u32 port_active_word(__u8 addr_idx, __u8 proto, __u16 port)
{
	__u32 p = proto == 6 /* TCP */ ? 0 : proto == 17 /* UDP */ ? 1 : 2;

	return ((__u32)addr_idx * PORT_ACTIVE_PROTOS + p) *
		       PORT_ACTIVE_PROTO_WORDS + port / 8;
}

/* Address-dependent filtering: remote addresses a mapping has sent to. */
struct nat_peer_key {
	__be32 remote;
	__be16 ext_port;
	__u8 proto;
	__u8 addr_idx;
};
_Static_assert(sizeof(struct nat_peer_key) == 8, "nat_peer_key layout");

#define NAT_MAPPING_CHARGED 0x01
#define NAT_MAPPING_DNS 0x02

/* Per inside address: external ports it holds (RFC 6888 REQ-4). */
struct nat_host {
	__u32 ports;   /* mappings plus endpoint-dependent bindings, atomic */
	__u32 pad;
};
_Static_assert(sizeof(struct nat_host) == 8, "nat_host layout");

/* Per CPU (xnat_alloc): when this CPU last found no endpoint-independent
 * port (while that is recent, a new endpoint tries one such port, not
 * NAT_PORT_TRIES, before the endpoint-dependent fallback: a full range
 * would fail all the tries), and how many flows without any port it
 * handed to the kernel lately. Shared with the unit tests, which set it. */
struct nat_alloc_hint {
	__u64 eim_full_ns;    /* CLOCK_MONOTONIC, bpf_ktime_get_ns() */
	__u64 pass_window_ns; /* start of the current window */
	__u32 passed;         /* flows handed up in it */
	__u32 pad;
};
_Static_assert(sizeof(struct nat_alloc_hint) == 24, "nat_alloc_hint layout");

/*
 * Paired pooling (RFC 4787 REQ-2): the external address of inside address
 * INSIDE is pool index xnat_pool_hash(INSIDE, N) of N. It is nftables'
 * `jhash ip saddr mod N seed XNAT_POOL_SEED` (the kernel's jhash() of the
 * four address bytes, scaled to N as reciprocal_scale() does), so the
 * kernel's SNAT of passed-up traffic picks the same address as XDP.
 */
#define XNAT_POOL_SEED 0x786e6174 /* "xnat" */

static inline __u32 xnat_rol32(__u32 w, unsigned int s)
{
	return (w << s) | (w >> (32 - s));
}

static inline __u32 xnat_pool_hash(__be32 inside, __u32 n)
{
	const __u8 *k = (const __u8 *)&inside;
	__u32 a, b, c;

	/* jhash(key, 4, seed) from include/linux/jhash.h */
	a = b = c = 0xdeadbeef + 4 + XNAT_POOL_SEED;
	a += (__u32)k[3] << 24 | (__u32)k[2] << 16 | (__u32)k[1] << 8 | k[0];
	c ^= b; c -= xnat_rol32(b, 14);
	a ^= c; a -= xnat_rol32(c, 11);
	b ^= a; b -= xnat_rol32(a, 25);
	c ^= b; c -= xnat_rol32(b, 16);
	a ^= c; a -= xnat_rol32(c, 4);
	b ^= a; b -= xnat_rol32(a, 14);
	c ^= b; c -= xnat_rol32(b, 24);
	/* reciprocal_scale() from include/linux/kernel.h */
	return (__u32)(((__u64)c * n) >> 32);
}

#endif /* XNAT_COMMON_NAT_H */
