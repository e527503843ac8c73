// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the XDP data path (bpf/xnat.bpf.c) with BPF_PROG_RUN on
 * crafted packets. The binary unshares a private network namespace and
 * builds a router in it (veth ports lan0 and wan0, addresses, permanent
 * neighbours, forwarding on), so the program's FIB lookups see a real
 * routing table; everything disappears with the process.
 *
 * Each test is a list of fixtures, katran style: the input packet (a
 * struct pkt_spec, pkt.h), the ingress port, the expected verdict and
 * reason counter, and for redirects the complete expected output frame,
 * built from scratch with checksums from an independent oracle
 * (csum_oracle.h). Every run also checks that exactly one reason counter
 * moved, that XDP_PASS and XDP_DROP leave the frame untouched and create no
 * flow, and that a redirected IPv4 frame has TTL-1 and valid checksums.
 *
 * Besides the cases of the brief (SNAT, DNAT, ICMP echo, pass-up reasons,
 * malformed headers, IPv6, full table, fast path off, TTL) there are tests
 * of checksum edge values and random flows against the oracle, port range
 * edges and collisions, NAT mappings and filtering (RFC 4787), hairpin to
 * a port forward, ICMP error translation (RFC 5508), a flow the kernel's
 * conntrack owns, and what a kernel router never forwards
 * (multicast and broadcast, martian addresses, frames for another MAC, bad
 * IPv4 header checksums). A test that fails is a data-path bug to fix, not
 * a test to relax.
 *
 * Run as root from the repository root. Prints "#N name:OK|FAIL", the
 * reasons on stderr, and ends with "N passed, N failed".
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/if_packet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "assert.h"
#include "pkt.h"
#include "xnat_common.h"
#include "xnat.skel.h"
#include "reasons.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- The testbed ------------------------------------------------------ */

#define MAC_LAN0     { 0x02, 0x00, 0x00, 0x00, 0x01, 0x01 }
#define MAC_WAN0     { 0x02, 0x00, 0x00, 0x00, 0x02, 0x01 }
#define MAC_LAN_HOST { 0x02, 0x00, 0x00, 0x00, 0x01, 0x0a }
#define MAC_WAN_GW   { 0x02, 0x00, 0x00, 0x00, 0x02, 0x02 }
/* A second LAN host, without a neighbour entry: replies go to the MAC its
 * packets came from. */
#define MAC_LAN_HOST2 { 0x02, 0x00, 0x00, 0x00, 0x01, 0x0b }

static const uint8_t mac_lan0[ETH_ALEN] = MAC_LAN0;
static const uint8_t mac_wan0[ETH_ALEN] = MAC_WAN0;

/* A frame arriving from the LAN host / the WAN gateway, and the frame the
 * router sends towards them. */
#define FROM_LAN .smac = MAC_LAN_HOST, .dmac = MAC_LAN0
#define FROM_WAN .smac = MAC_WAN_GW, .dmac = MAC_WAN0
#define TO_WAN   .smac = MAC_WAN0, .dmac = MAC_WAN_GW
#define TO_LAN   .smac = MAC_LAN0, .dmac = MAC_LAN_HOST
#define FROM_LAN2 .smac = MAC_LAN_HOST2, .dmac = MAC_LAN0
#define TO_LAN2  .smac = MAC_LAN0, .dmac = MAC_LAN_HOST2

#define LAN_HOST   "198.18.1.10"
#define LAN_HOST2  "198.18.1.11"
#define LAN_ROUTER "198.18.1.1"
#define NAT_ADDR   "198.19.0.1" /* wan0's address */
#define WAN_GW     "198.19.0.2"
#define WAN_NONEIGH "198.19.0.3"
#define LAN6_HOST  "2001:2:0:1::10"
#define WAN6_GW    "2001:2:0:2::2"

#define PORT_MIN 20000
#define PORT_MAX 65535
#define FLOW_CONNS 8 /* the flow table holds 2 * FLOW_CONNS entries */

/* A port or echo id standing for "the one the router chose": the fixture
 * that learns it reads it from its output, later fixtures send to it. */
#define LEARNED 1

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

static struct xnat_bpf *skel;
static int prog_fd, flows_fd, stats_fd, config_fd, tx_fd;
static int if_lan, if_wan;
static int ncpus;
static uint16_t learned; /* the port/id LEARNED stands for */

static const char *verdict_name(int v)
{
	switch (v) {
	case XDP_ABORTED: return "XDP_ABORTED";
	case XDP_DROP: return "XDP_DROP";
	case XDP_PASS: return "XDP_PASS";
	case XDP_TX: return "XDP_TX";
	case XDP_REDIRECT: return "XDP_REDIRECT";
	}
	return "?";
}

static const char *reason_name(int r)
{
	return r >= 0 && r < XNAT_REASON_MAX ? reasons[r].name : "?";
}

static void hexdump_line(const char *tag, size_t off, const uint8_t *b,
			 size_t len)
{
	size_t i;

	fprintf(stderr, "    %s %04zx:", tag, off);
	for (i = off; i < off + 16 && i < len; i++)
		fprintf(stderr, " %02x", b[i]);
	fputc('\n', stderr);
}

/* Compare frames; on a difference print the differing 16-byte lines. */
static bool expect_bytes(const uint8_t *act, size_t act_len,
			 const uint8_t *exp, size_t exp_len, const char *what)
{
	size_t off, i, n = act_len > exp_len ? act_len : exp_len;
	bool ok = act_len == exp_len && !memcmp(act, exp, act_len);

	if (ok)
		return true;
	fail("%s: output differs from expected (length %zu, expected %zu)",
	     what, act_len, exp_len);
	for (off = 0; off < n; off += 16) {
		bool diff = false;

		for (i = off; i < off + 16 && i < n; i++)
			if (i >= act_len || i >= exp_len || act[i] != exp[i])
				diff = true;
		if (!diff)
			continue;
		hexdump_line("actual  ", off, act, act_len);
		hexdump_line("expected", off, exp, exp_len);
	}
	return false;
}

/* A shell command (ip, nft); its failure is reported. */
static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		fprintf(stderr, "  '%s' failed (status %d)\n", cmd, rc);
	return rc;
}

/* ---- Maps ------------------------------------------------------------- */

static void stats_read(struct xnat_counter sum[XNAT_REASON_MAX])
{
	struct xnat_counter per_cpu[ncpus];
	__u32 r;
	int c;

	memset(sum, 0, sizeof(*sum) * XNAT_REASON_MAX);
	for (r = 0; r < XNAT_REASON_MAX; r++) {
		if (bpf_map_lookup_elem(stats_fd, &r, per_cpu))
			continue;
		for (c = 0; c < ncpus; c++) {
			sum[r].packets += per_cpu[c].packets;
			sum[r].bytes += per_cpu[c].bytes;
		}
	}
}

/* Entries in the flow table (bounded walk: at most max_entries + 1). */
static int flows_count(void)
{
	struct flow_key key, next;
	int n = 0;

	if (bpf_map_get_next_key(flows_fd, NULL, &next))
		return 0;
	do {
		key = next;
		n++;
	} while (n <= 2 * FLOW_CONNS && !bpf_map_get_next_key(flows_fd, &key, &next));
	return n;
}

/* Delete every entry of FD, at most BOUND of them. */
static void map_clear(int fd, int bound)
{
	uint8_t key[64];
	int i;

	for (i = 0; i < bound; i++) {
		if (bpf_map_get_next_key(fd, NULL, key))
			break;
		bpf_map_delete_elem(fd, key);
	}
}

/*
 * Forget all NAT state: flows, and the mappings, port owners and peers
 * (nat.h) that outlive them. Deleting flows from here does not release
 * their mappings, so both go together.
 */
static void flows_clear(void)
{
	map_clear(flows_fd, 2 * FLOW_CONNS + 1);
	map_clear(bpf_map__fd(skel->maps.xnat_mappings), 65536);
	map_clear(bpf_map__fd(skel->maps.xnat_ports), 65536);
	map_clear(bpf_map__fd(skel->maps.xnat_peers), 131072);
	map_clear(bpf_map__fd(skel->maps.xnat_edm_ports), 65536);
	map_clear(bpf_map__fd(skel->maps.xnat_hosts), 65536);
}

static struct flow_key flow_key4(const char *saddr, uint16_t sport,
				 const char *daddr, uint16_t dport,
				 uint8_t proto, int ifindex)
{
	struct flow_key k = {};

	inet_pton(AF_INET, saddr, &k.saddr.v4);
	inet_pton(AF_INET, daddr, &k.daddr.v4);
	k.sport = htons(sport);
	k.dport = htons(dport);
	k.proto = proto;
	k.family = XNAT_AF_INET;
	k.ifindex = ifindex;
	return k;
}

static bool config_get(struct xnat_config *c)
{
	__u32 zero = 0;

	return ASSERT_OK(bpf_map_lookup_elem(config_fd, &zero, c), "config read");
}

static bool config_set(const struct xnat_config *c)
{
	__u32 zero = 0;

	return ASSERT_OK(bpf_map_update_elem(config_fd, &zero, c, BPF_ANY),
			 "config write");
}

/* ---- Running the program ---------------------------------------------- */

/*
 * One BPF_PROG_RUN of FRAME (LEN bytes) arriving on IFINDEX. LINEAR, when
 * not 0, puts only that many bytes in the linear part the program sees
 * (ctx.data_end) and the rest in fragments: the kernel refuses frames under
 * 14 bytes outright, so this is the only way to hand the program a shorter
 * Ethernet header. The output is the whole frame, fragments included.
 */
static bool xdp_run(int ifindex, const uint8_t *frame, uint32_t len,
		    uint32_t linear, uint8_t *out, uint32_t *out_len,
		    uint32_t *retval)
{
	struct xdp_md ctx = {
		.data = 0,
		.data_end = linear ? linear : len,
		.ingress_ifindex = ifindex,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = len,
		.data_out = out,
		.data_size_out = PKT_MAX,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = 1,
	);
	int err;

	err = bpf_prog_test_run_opts(prog_fd, &opts);
	if (!ASSERT_OK(err, "bpf_prog_test_run_opts"))
		return false;
	*retval = opts.retval;
	*out_len = opts.data_size_out;
	return true;
}

/* Expectations of a packet the program must not forward, when which of
 * XDP_PASS / XDP_DROP and which reason is the program's choice. */
#define NOT_FORWARDED (-1)
#define ANY_REASON (-1)

/*
 * Run FRAME on IFINDEX and check the verdict, that the counter of REASON
 * went up by one packet and by the bytes the program saw, that no other
 * counter moved, and for XDP_PASS and XDP_DROP that the frame came back
 * unmodified and no flow was created or removed. OUT receives the output.
 * VERDICT NOT_FORWARDED with REASON ANY_REASON accepts XDP_PASS or XDP_DROP
 * with whichever single counter moved.
 */
static bool run_expect(const char *step, int ifindex, const uint8_t *frame,
		       uint32_t len, uint32_t linear, int verdict, int reason,
		       uint8_t *out, uint32_t *out_len)
{
	struct xnat_counter before[XNAT_REASON_MAX], after[XNAT_REASON_MAX];
	uint32_t retval = ~0u, seen = linear ? linear : len;
	int r, moved = 0, flows_before = flows_count();
	char what[160];
	bool ok = true;

	stats_read(before);
	if (!xdp_run(ifindex, frame, len, linear, out, out_len, &retval))
		return false;
	stats_read(after);

	if (verdict == NOT_FORWARDED) {
		if (retval != XDP_PASS && retval != XDP_DROP) {
			fail("%s: verdict %s (%u), expected XDP_PASS or XDP_DROP",
			     step, verdict_name(retval), retval);
			ok = false;
		}
	} else if (retval != (uint32_t)verdict) {
		fail("%s: verdict %s (%u), expected %s", step,
		     verdict_name(retval), retval, verdict_name(verdict));
		ok = false;
	}
	for (r = 0; r < XNAT_REASON_MAX; r++) {
		__u64 dp = after[r].packets - before[r].packets;

		if (dp)
			moved++;
		if (reason == ANY_REASON && dp == 1 && moved == 1)
			reason = r; /* checked like an expected one below */
		else if (r != reason && dp) {
			fail("%s: counter %s moved by %llu, expected 0", step,
			     reason_name(r), (unsigned long long)dp);
			ok = false;
		}
	}
	if (reason == ANY_REASON) {
		fail("%s: no counter moved by exactly 1", step);
		return false;
	}
	if (after[reason].packets - before[reason].packets != 1) {
		fail("%s: counter %s moved by %llu packets, expected 1", step,
		     reason_name(reason),
		     (unsigned long long)(after[reason].packets -
					  before[reason].packets));
		ok = false;
	}
	if (after[reason].bytes - before[reason].bytes != seen) {
		fail("%s: counter %s moved by %llu bytes, expected %u", step,
		     reason_name(reason),
		     (unsigned long long)(after[reason].bytes -
					  before[reason].bytes), seen);
		ok = false;
	}

	/* Frames the kernel gets, or that are dropped unforwarded, must be
	 * exactly what arrived (a redirect that failed has been rewritten
	 * already, on purpose: it must not reach the kernel). */
	if ((verdict == XDP_PASS || verdict == XDP_DROP ||
	     verdict == NOT_FORWARDED) && reason != XNAT_DROP_REDIRECT) {
		snprintf(what, sizeof(what), "%s: frame not forwarded, yet modified",
			 step);
		if (!expect_bytes(out, *out_len, frame, len, what))
			ok = false;
		if (flows_count() != flows_before) {
			fail("%s: not forwarded, yet flows were created or "
			     "removed (%d -> %d)", step, flows_before,
			     flows_count());
			ok = false;
		}
	}
	return ok;
}

/* ---- Fixtures --------------------------------------------------------- */

enum side { LAN, WAN, LO /* not an xnat port */ };

static int side_ifindex(enum side side)
{
	return side == LAN ? if_lan : side == WAN ? if_wan : 1 /* lo */;
}

struct fixture {
	const char *name;
	enum side ingress;
	struct pkt_spec in;
	/* Layout of the input: pkt_build() unless set. */
	size_t (*build)(uint8_t *buf, const struct pkt_spec *s);
	/* Break the built frame; returns its new length. */
	size_t (*mutate)(uint8_t *buf, size_t len);
	uint32_t linear;        /* bytes in the linear part; 0: all */
	int verdict;
	int reason;
	/* For redirects: the whole expected output frame. */
	bool has_out;
	struct pkt_spec out;
	/* Read the router's chosen port/echo id from the output first (it
	 * must be in the XDP range); out's LEARNED fields then take it. */
	bool learn;
	/* Extra checks after the run (map contents...). */
	bool (*check)(const uint8_t *out, size_t out_len);
	/* ICMP errors: in and out are the outer headers, these the packet
	 * each quotes, cut to quote_len bytes (0: whole). */
	const struct pkt_spec *in_quote, *out_quote;
	uint16_t quote_len;
};

/* Replace LEARNED in the ports and echo id of S. */
static void spec_resolve(struct pkt_spec *s)
{
	if (s->sport == LEARNED)
		s->sport = learned;
	if (s->dport == LEARNED)
		s->dport = learned;
	if (s->icmp_id == LEARNED)
		s->icmp_id = learned;
}

/* The source port (or echo id) of a frame that left towards the WAN. */
static bool learn_port(const uint8_t *out, size_t len, uint8_t proto)
{
	const struct pkt_v4_udp *p = (const void *)out;
	uint16_t port;

	if (!ASSERT_TRUE(len >= sizeof(struct pkt_v4_icmp), "output length"))
		return false;
	if (proto == IPPROTO_ICMP)
		port = ntohs(((const struct pkt_v4_icmp *)out)->icmp.un.echo.id);
	else
		port = ntohs(p->udp.source); /* TCP has the same first word */
	learned = port;
	return ASSERT_TRUE(port >= PORT_MIN, /* PORT_MAX is 65535 */
			   "translated port in the XDP range");
}

/*
 * What every redirected frame must satisfy whatever the rewrite: IPv4 TTL
 * (or IPv6 hop limit) exactly one less, header and L4 checksums valid by
 * the oracle (a UDP checksum of 0 stays 0), same length, and for IPv6 the
 * L3 addresses and the whole L4 segment unchanged.
 */
static bool check_forwarded(const uint8_t *in, size_t in_len,
			    const uint8_t *out, size_t out_len)
{
	const struct ethhdr *eth = (const void *)out;
	bool ok = ASSERT_EQ(out_len, in_len, "redirected frame length");

	if (!ok || out_len < sizeof(struct ethhdr) + 20)
		return false;
	if (eth->h_proto == htons(ETH_P_IP)) {
		const struct pkt_v4_udp *i = (const void *)in, *o = (const void *)out;
		const uint8_t *l4 = (const uint8_t *)&o->udp;
		uint16_t l4_len = ntohs(o->ip.tot_len) - o->ip.ihl * 4;

		ok &= ASSERT_EQ(o->ip.ttl, i->ip.ttl - 1, "TTL decremented by 1");
		ok &= ASSERT_TRUE(csum_oracle_ipv4_hdr_ok(&o->ip),
				  "IPv4 header checksum verifies");
		ok &= ASSERT_EQ(csum_get16(&o->ip.check),
				csum_oracle_ipv4_hdr(&o->ip),
				"IPv4 header checksum == oracle");
		if (o->ip.protocol == IPPROTO_UDP && !i->udp.check) {
			ok &= ASSERT_EQ(o->udp.check, 0, "UDP checksum 0 kept");
		} else if (o->ip.protocol == IPPROTO_ICMP) {
			ok &= ASSERT_EQ(csum_get16(l4 + 2),
					csum_oracle_icmp4(l4, l4_len),
					"ICMP checksum == oracle");
		} else {
			long off = pkt_l4_csum_off(o->ip.protocol);

			ok &= ASSERT_TRUE(csum_oracle_l4_v4_ok(&o->ip.saddr,
							       &o->ip.daddr,
							       o->ip.protocol,
							       l4, l4_len),
					  "L4 checksum verifies");
			ok &= ASSERT_EQ(csum_get16(l4 + off),
					csum_oracle_l4_v4(&o->ip.saddr,
							  &o->ip.daddr,
							  o->ip.protocol, l4,
							  l4_len, off),
					"L4 checksum == oracle");
		}
	} else if (eth->h_proto == htons(ETH_P_IPV6)) {
		const struct pkt_v6_udp *i = (const void *)in, *o = (const void *)out;
		size_t l4_len = ntohs(o->ip6.payload_len);

		ok &= ASSERT_EQ(o->ip6.hop_limit, i->ip6.hop_limit - 1,
				"hop limit decremented by 1");
		ok &= ASSERT_TRUE(!memcmp(&o->ip6.saddr, &i->ip6.saddr, 32),
				  "IPv6 addresses unchanged");
		ok &= ASSERT_TRUE(!memcmp(&o->udp, &i->udp, l4_len),
				  "IPv6 L4 segment unchanged");
		ok &= ASSERT_TRUE(csum_oracle_l4_v6_ok(&o->ip6.saddr,
						       &o->ip6.daddr,
						       o->ip6.nexthdr, &o->udp,
						       l4_len),
				  "IPv6 L4 checksum verifies");
	} else {
		ok = ASSERT_TRUE(false, "redirected frame is IP");
	}
	return ok;
}

static bool run_fixture(const struct fixture *f)
{
	struct pkt_spec in = f->in, out = f->out;
	uint8_t frame[PKT_MAX], got[PKT_MAX], want[PKT_MAX];
	uint32_t got_len = 0;
	size_t len, want_len;
	bool ok;

	spec_resolve(&in);
	if (f->in_quote) {
		struct pkt_spec q = *f->in_quote;

		spec_resolve(&q);
		len = pkt_build_icmp_error(frame, &in, &q, f->quote_len);
	} else {
		len = f->build ? f->build(frame, &in) : pkt_build(frame, &in);
	}
	if (f->mutate)
		len = f->mutate(frame, len);
	ok = run_expect(f->name, side_ifindex(f->ingress), frame, len,
			f->linear, f->verdict, f->reason, got, &got_len);
	if (!ok) {
		fail("step '%s' failed", f->name);
		return false;
	}
	if (f->verdict == XDP_REDIRECT)
		ok &= check_forwarded(frame, len, got, got_len);
	if (f->learn)
		ok &= learn_port(got, got_len, f->in.proto);
	if (f->has_out) {
		spec_resolve(&out);
		if (f->out_quote) {
			struct pkt_spec q = *f->out_quote;

			spec_resolve(&q);
			want_len = pkt_build_icmp_error(want, &out, &q,
							f->quote_len);
		} else {
			want_len = pkt_build(want, &out);
		}
		ok &= expect_bytes(got, got_len, want, want_len, f->name);
	}
	if (f->check)
		ok &= f->check(got, got_len);
	if (!ok)
		fail("step '%s' failed", f->name);
	return ok;
}

static bool run_fixtures(const struct fixture *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!run_fixture(&f[i]))
			return false;
	return true;
}

/* Independent cases: each on an empty table, all run, all reported. */
static bool run_fixtures_each(const struct fixture *f, size_t n)
{
	bool ok = true;
	size_t i;

	for (i = 0; i < n; i++) {
		flows_clear();
		ok &= run_fixture(&f[i]);
	}
	return ok;
}

/* ---- 1-3: UDP SNAT, slow path, fast path, reply ---------------------- */

#define UDP_OUT(sp, dp)                                                      \
	.ingress = LAN,                                                       \
	.in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,                 \
		.proto = IPPROTO_UDP, .sport = sp, .dport = dp,               \
		.ttl = 64, .ip_id = 0x1234 }

#define UDP_OUT_NAT(sp, dp)                                                  \
	.has_out = true,                                                      \
	.out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,                  \
		 .proto = IPPROTO_UDP, .sport = sp, .dport = dp,              \
		 .ttl = 63, .ip_id = 0x1234 }

#define UDP_REPLY(sp, dp)                                                    \
	.ingress = WAN,                                                       \
	.in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,                 \
		.proto = IPPROTO_UDP, .sport = sp, .dport = dp,               \
		.ttl = 57, .ip_id = 0xbeef }

#define UDP_REPLY_NAT(sp, dp)                                                \
	.has_out = true,                                                      \
	.out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST,                  \
		 .proto = IPPROTO_UDP, .sport = sp, .dport = dp,              \
		 .ttl = 56, .ip_id = 0xbeef }

static const struct fixture fx_udp_slow[] = {
	{ .name = "udp lan->wan, new flow", UDP_OUT(40000, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  UDP_OUT_NAT(40000, 53) },
};

static const struct fixture fx_udp_fast[] = {
	{ .name = "udp lan->wan, same flow", UDP_OUT(40000, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  UDP_OUT_NAT(40000, 53) },
};

static const struct fixture fx_udp_reply[] = {
	{ .name = "udp wan->lan reply", UDP_REPLY(53, 40000),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  UDP_REPLY_NAT(53, 40000) },
};

/* ---- 4: inside port outside the range --------------------------------- */

static const struct fixture fx_udp_port_map[] = {
	{ .name = "udp from port 1234", UDP_OUT(1234, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .learn = true,
	  UDP_OUT_NAT(LEARNED, 53) },
	{ .name = "udp from port 1234 again", UDP_OUT(1234, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  UDP_OUT_NAT(LEARNED, 53) },
	{ .name = "reply to the mapped port", UDP_REPLY(53, LEARNED),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  UDP_REPLY_NAT(53, 1234) },
};

/* ---- 5: UDP without checksum ------------------------------------------ */

static const struct fixture fx_udp_csum0[] = {
	{ .name = "udp csum 0 lan->wan, new flow", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40002, .dport = 53, .ttl = 64,
		  .udp_csum_zero = true },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .has_out = true,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		   .proto = IPPROTO_UDP, .sport = 40002, .dport = 53,
		   .ttl = 63, .udp_csum_zero = true } },
	{ .name = "udp csum 0 lan->wan, same flow", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40002, .dport = 53, .ttl = 64,
		  .udp_csum_zero = true },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		   .proto = IPPROTO_UDP, .sport = 40002, .dport = 53,
		   .ttl = 63, .udp_csum_zero = true } },
	{ .name = "udp csum 0 wan->lan reply", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_UDP, .sport = 53, .dport = 40002, .ttl = 64,
		  .udp_csum_zero = true },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST,
		   .proto = IPPROTO_UDP, .sport = 53, .dport = 40002,
		   .ttl = 63, .udp_csum_zero = true } },
};

/* ---- 6: TCP ----------------------------------------------------------- */

#define TCP_OUT(sp, flags, sq, ak)                                           \
	.ingress = LAN,                                                       \
	.in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,                 \
		.proto = IPPROTO_TCP, .sport = sp, .dport = 443,              \
		.tcp_flags = flags, .seq = sq, .ack_seq = ak, .ttl = 64,      \
		.ip_id = 0x0101 }
#define TCP_OUT_NAT(sp, flags, sq, ak)                                       \
	.has_out = true,                                                      \
	.out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,                  \
		 .proto = IPPROTO_TCP, .sport = sp, .dport = 443,             \
		 .tcp_flags = flags, .seq = sq, .ack_seq = ak, .ttl = 63,     \
		 .ip_id = 0x0101 }

static bool check_tcp_fin_seen(const uint8_t *out, size_t len)
{
	struct flow_key ok = flow_key4(LAN_HOST, 40100, WAN_GW, 443,
				       IPPROTO_TCP, if_lan);
	struct flow_key rk = flow_key4(WAN_GW, 443, NAT_ADDR, 40100,
				       IPPROTO_TCP, if_wan);
	struct flow_value ov, rv;
	bool res = true;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, &ok, &ov), "orig entry") ||
	    !ASSERT_OK(bpf_map_lookup_elem(flows_fd, &rk, &rv), "reply entry"))
		return false;
	res &= ASSERT_TRUE(ov.tcp_flags_seen & XNAT_TCP_FIN, "orig saw FIN");
	res &= ASSERT_TRUE(ov.tcp_flags_seen & XNAT_TCP_SYN, "orig saw SYN");
	res &= ASSERT_TRUE(!(rv.tcp_flags_seen & XNAT_TCP_FIN),
			   "reply saw no FIN");
	res &= ASSERT_EQ(ov.dir, FLOW_DIR_ORIG, "orig dir");
	res &= ASSERT_EQ(rv.dir, FLOW_DIR_REPLY, "reply dir");
	res &= ASSERT_EQ(ov.nat, FLOW_NAT_SNAT, "orig nat");
	res &= ASSERT_EQ(ov.packets, 3, "orig packets (SYN, ACK, FIN)");
	res &= ASSERT_EQ(rv.packets, 1, "reply packets (SYN-ACK)");
	res &= ASSERT_EQ(flow_tcp_state(&ov, &rv), FLOW_TCP_CLOSING,
			 "connection state CLOSING");
	return res;
}

static const char tcp_data[] = "GET / HTTP/1.0\r\n\r\n";

static const struct fixture fx_tcp[] = {
	{ .name = "tcp SYN lan->wan", TCP_OUT(40100, TCP_SYN, 1000, 0),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  TCP_OUT_NAT(40100, TCP_SYN, 1000, 0) },
	{ .name = "tcp ACK without flow", TCP_OUT(40101, TCP_ACK, 5000, 77),
	  .verdict = XDP_PASS, .reason = XNAT_PASS_TCP_MIDSTREAM },
	{ .name = "tcp SYN-ACK from lan without flow",
	  TCP_OUT(40102, TCP_SYN | TCP_ACK, 5000, 77),
	  .verdict = XDP_PASS, .reason = XNAT_PASS_TCP_MIDSTREAM },
	{ .name = "tcp SYN+RST from lan without flow",
	  TCP_OUT(40103, TCP_SYN | TCP_RST, 5000, 0),
	  .verdict = XDP_PASS, .reason = XNAT_PASS_TCP_MIDSTREAM },
	{ .name = "tcp SYN-ACK wan->lan", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 443, .dport = 40100,
		  .tcp_flags = TCP_SYN | TCP_ACK, .seq = 9000, .ack_seq = 1001,
		  .ttl = 50 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST,
		   .proto = IPPROTO_TCP, .sport = 443, .dport = 40100,
		   .tcp_flags = TCP_SYN | TCP_ACK, .seq = 9000,
		   .ack_seq = 1001, .ttl = 49 } },
	{ .name = "tcp ACK with data on the flow",
	  .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_TCP, .sport = 40100, .dport = 443,
		  .tcp_flags = TCP_ACK | TCP_PSH, .seq = 1001, .ack_seq = 9001,
		  .ttl = 64, .payload = tcp_data,
		  .payload_len = sizeof(tcp_data) - 1 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		   .proto = IPPROTO_TCP, .sport = 40100, .dport = 443,
		   .tcp_flags = TCP_ACK | TCP_PSH, .seq = 1001,
		   .ack_seq = 9001, .ttl = 63, .payload = tcp_data,
		   .payload_len = sizeof(tcp_data) - 1 } },
	{ .name = "tcp FIN on the flow",
	  TCP_OUT(40100, TCP_FIN | TCP_ACK, 1019, 9001),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  TCP_OUT_NAT(40100, TCP_FIN | TCP_ACK, 1019, 9001),
	  .check = check_tcp_fin_seen },
};

/* ---- 7: ICMP echo ----------------------------------------------------- */

static const struct fixture fx_icmp[] = {
	{ .name = "echo request lan->wan id 7", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHO, .icmp_id = 7,
		  .icmp_seq = 1, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .learn = true,
	  .has_out = true,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		   .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHO,
		   .icmp_id = LEARNED, .icmp_seq = 1, .ttl = 63 } },
	{ .name = "echo reply wan->lan", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHOREPLY,
		  .icmp_id = LEARNED, .icmp_seq = 1, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST,
		   .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHOREPLY,
		   .icmp_id = 7, .icmp_seq = 1, .ttl = 63 } },
	{ .name = "second echo request", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHO, .icmp_id = 7,
		  .icmp_seq = 2, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		   .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHO,
		   .icmp_id = LEARNED, .icmp_seq = 2, .ttl = 63 } },
};

/* ---- 8, 9: unsolicited and kernel ports from the WAN ------------------ */

static const struct fixture fx_unsolicited[] = {
	{ .name = "wan udp to nat addr port 30000, no flow", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_UDP, .sport = 53, .dport = 30000 },
	  .verdict = XDP_DROP, .reason = XNAT_DROP_UNSOLICITED },
	{ .name = "wan udp straight to the lan host", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = LAN_HOST,
		  .proto = IPPROTO_UDP, .sport = 53, .dport = 40000 },
	  .verdict = XDP_DROP, .reason = XNAT_DROP_UNSOLICITED },
	{ .name = "wan ipv6 udp to the lan host, no flow", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST,
		  .proto = IPPROTO_UDP, .sport = 53, .dport = 40000 },
	  .verdict = XDP_DROP, .reason = XNAT_DROP_UNSOLICITED },
	{ .name = "wan tcp SYN to nat addr port 30000", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 4444, .dport = 30000,
		  .tcp_flags = TCP_SYN },
	  .verdict = XDP_DROP, .reason = XNAT_DROP_UNSOLICITED },
};

static const struct fixture fx_wan_in[] = {
	{ .name = "wan udp to nat addr port 5000", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_UDP, .sport = 53, .dport = 5000 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_WAN_IN },
};

/* ---- 10: port forward ------------------------------------------------- */

static const struct fixture fx_forward[] = {
	{ .name = "wan SYN to 8080", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 33333, .dport = 8080,
		  .tcp_flags = TCP_SYN, .seq = 42, .ttl = 60, .ip_id = 7 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .has_out = true,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST,
		   .proto = IPPROTO_TCP, .sport = 33333, .dport = 80,
		   .tcp_flags = TCP_SYN, .seq = 42, .ttl = 59, .ip_id = 7 } },
	{ .name = "lan server SYN-ACK", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_TCP, .sport = 80, .dport = 33333,
		  .tcp_flags = TCP_SYN | TCP_ACK, .seq = 700, .ack_seq = 43,
		  .ttl = 64, .ip_id = 8 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		   .proto = IPPROTO_TCP, .sport = 8080, .dport = 33333,
		   .tcp_flags = TCP_SYN | TCP_ACK, .seq = 700, .ack_seq = 43,
		   .ttl = 63, .ip_id = 8 } },
	{ .name = "wan ACK on the forward", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 33333, .dport = 8080,
		  .tcp_flags = TCP_ACK, .seq = 43, .ack_seq = 701, .ttl = 60 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST,
		   .proto = IPPROTO_TCP, .sport = 33333, .dport = 80,
		   .tcp_flags = TCP_ACK, .seq = 43, .ack_seq = 701,
		   .ttl = 59 } },
	{ .name = "wan ACK to 8080 without flow", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 33334, .dport = 8080,
		  .tcp_flags = TCP_ACK },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_TCP_MIDSTREAM },
	{ .name = "wan udp to 8080 (forward is tcp only)", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_UDP, .sport = 33333, .dport = 8080 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_WAN_IN },
};

/* ---- 11: handed to the kernel ----------------------------------------- */

static size_t mut_frag_mf(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->ip.frag_off = htons(0x2000); /* MF, offset 0 */
	pkt_ipv4_fix_csum(&p->ip);
	return len;
}

static size_t mut_frag_offset(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->ip.frag_off = htons(185); /* last fragment, offset 1480 */
	pkt_ipv4_fix_csum(&p->ip);
	return len;
}

static const char big_payload[1480];

/* IPv6 carrying a Fragment header (44) where UDP was. */
static size_t mut_ip6_nexthdr_frag(uint8_t *buf, size_t len)
{
	((struct pkt_v6_udp *)buf)->ip6.nexthdr = 44;
	return len;
}

static const struct fixture fx_pass[] = {
	{ .name = "pass_arp", .ingress = LAN, .build = pkt_build_arp,
	  .in = { .smac = MAC_LAN_HOST, .dmac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		  .saddr = LAN_HOST, .daddr = LAN_ROUTER },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_NOT_IP },
	{ .name = "pass_vlan", .ingress = LAN, .build = pkt_build_vlan_v4_udp,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_VLAN },
	{ .name = "pass_ip_options", .ingress = LAN,
	  .build = pkt_build_v4_opts_udp,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_IP_OPTIONS },
	/* A later fragment whose first one never passed: the kernel's. */
	{ .name = "pass_fragment_offset", .ingress = LAN,
	  .mutate = mut_frag_offset,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_FRAGMENT },
	{ .name = "pass_ttl_1", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53, .ttl = 1 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_TTL },
	{ .name = "pass_gre", .ingress = LAN, .build = pkt_build_v4_gre,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
	/* Its body (the default payload) is no IPv4 header: nothing the
	 * data path could have sent, so nothing to translate. */
	{ .name = "pass_icmp_dest_unreach", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_DEST_UNREACH,
		  .icmp_code = ICMP_PORT_UNREACH },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
	{ .name = "pass_local_lan_router", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = LAN_ROUTER,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "pass_local_wan_echo_request", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHO, .icmp_id = 99 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "pass_no_neigh", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_NONEIGH,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_NO_NEIGH },
	{ .name = "pass_ipv6_multicast", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = "ff02::1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "pass_ipv6_link_local", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "fe80::10", .daddr = "fe80::1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "pass_ipv6_hop_limit_1", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53, .ttl = 1 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_TTL },
	{ .name = "pass_no_route", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = "198.18.200.5",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_NO_ROUTE },
	{ .name = "pass_mtu_new_flow", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
		  .payload = big_payload, .payload_len = sizeof(big_payload) },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_MTU },
	{ .name = "pass_egress_hairpin", .ingress = LAN,
	  .in = { FROM_LAN2, .saddr = LAN_HOST2, .daddr = LAN_HOST,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_EGRESS },
	{ .name = "pass_ingress_not_xnat_port", .ingress = LO,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_EGRESS },
	{ .name = "pass_egress_not_xnat_port", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = "198.18.100.2",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_EGRESS },
	{ .name = "pass_egress_wan_hairpin", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = "198.19.0.7", .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_EGRESS },
	{ .name = "pass_ipv6_fragment_header", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .mutate = mut_ip6_nexthdr_frag,
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
	{ .name = "pass_ipv6_local_wan_router", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN6_GW, .daddr = "2001:2:0:2::1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "pass_echo_reply_from_lan", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHOREPLY,
		  .icmp_id = 5 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
	{ .name = "pass_echo_reply_from_wan_no_flow", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHOREPLY,
		  .icmp_id = 30000 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_WAN_IN },
};

/* ---- 12: malformed ---------------------------------------------------- */

static size_t mut_ip_truncated(uint8_t *buf, size_t len)
{
	return sizeof(struct ethhdr) + 10;
}

/* IHL 4 (16 bytes). The checksum is left as built: the program does not
 * verify it, and the header must be refused for its length alone. */
static size_t mut_ihl4(uint8_t *buf, size_t len)
{
	((struct pkt_v4_udp *)buf)->ip.ihl = 4;
	return len;
}

static size_t mut_bad_version(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->ip.version = 6;
	pkt_ipv4_fix_csum(&p->ip);
	return len;
}

static size_t mut_totlen_over_frame(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->ip.tot_len = htons(ntohs(p->ip.tot_len) + 1);
	pkt_ipv4_fix_csum(&p->ip);
	return len;
}

static size_t mut_totlen_under_ihl(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->ip.tot_len = htons(16);
	pkt_ipv4_fix_csum(&p->ip);
	return len;
}

static size_t mut_doff4(uint8_t *buf, size_t len)
{
	((struct pkt_v4_tcp *)buf)->tcp.doff = 4;
	return len;
}

static size_t mut_doff_beyond(uint8_t *buf, size_t len)
{
	((struct pkt_v4_tcp *)buf)->tcp.doff = 15; /* 60 bytes; 20+23 there */
	return len;
}

/* TCP header cut to 10 bytes: IP length and frame agree. */
static size_t mut_tcp_truncated(uint8_t *buf, size_t len)
{
	struct pkt_v4_tcp *p = (void *)buf;

	p->ip.tot_len = htons(20 + 10);
	pkt_ipv4_fix_csum(&p->ip);
	return sizeof(struct ethhdr) + 20 + 10;
}

/* Frame cut inside the TCP header while tot_len claims the whole packet. */
static size_t mut_tcp_frame_cut(uint8_t *buf, size_t len)
{
	return sizeof(struct ethhdr) + 20 + 10;
}

static size_t mut_udp_len_over(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->udp.len = htons(ntohs(p->udp.len) + 1);
	return len;
}

static size_t mut_udp_len_under(uint8_t *buf, size_t len)
{
	((struct pkt_v4_udp *)buf)->udp.len = htons(7);
	return len;
}

static size_t mut_udp_truncated(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->ip.tot_len = htons(20 + 4);
	pkt_ipv4_fix_csum(&p->ip);
	return sizeof(struct ethhdr) + 20 + 4;
}

static size_t mut_icmp_truncated(uint8_t *buf, size_t len)
{
	struct pkt_v4_icmp *p = (void *)buf;

	p->ip.tot_len = htons(20 + 4);
	pkt_ipv4_fix_csum(&p->ip);
	return sizeof(struct ethhdr) + 20 + 4;
}

static size_t mut_ip6_plen_over(uint8_t *buf, size_t len)
{
	struct pkt_v6_udp *p = (void *)buf;

	p->ip6.payload_len = htons(ntohs(p->ip6.payload_len) + 1);
	return len;
}

static size_t mut_ip6_truncated(uint8_t *buf, size_t len)
{
	return sizeof(struct ethhdr) + 30;
}

static size_t mut_ip6_udp_len_over(uint8_t *buf, size_t len)
{
	struct pkt_v6_udp *p = (void *)buf;

	p->udp.len = htons(ntohs(p->udp.len) + 1);
	return len;
}

#define MAL_UDP4                                                              \
	.in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,                 \
		.proto = IPPROTO_UDP, .sport = 40000, .dport = 53 }
#define MAL_TCP4                                                              \
	.in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,                 \
		.proto = IPPROTO_TCP, .sport = 40000, .dport = 443,           \
		.tcp_flags = TCP_SYN }
#define MAL_UDP6                                                              \
	.in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,               \
		.proto = IPPROTO_UDP, .sport = 40000, .dport = 53 }
#define MALFORMED .verdict = XDP_DROP, .reason = XNAT_DROP_MALFORMED

static const struct fixture fx_malformed[] = {
	/* 10 bytes in the linear part: dst MAC and half the source. */
	{ .name = "malformed_eth_short", .ingress = LAN, MAL_UDP4,
	  .linear = 10, MALFORMED },
	{ .name = "malformed_ipv4_truncated", .ingress = LAN, MAL_UDP4,
	  .mutate = mut_ip_truncated, MALFORMED },
	{ .name = "malformed_ipv4_ihl_4", .ingress = LAN, MAL_UDP4,
	  .mutate = mut_ihl4, MALFORMED },
	{ .name = "malformed_ipv4_version", .ingress = LAN, MAL_UDP4,
	  .mutate = mut_bad_version, MALFORMED },
	{ .name = "malformed_ipv4_tot_len_over_frame", .ingress = LAN, MAL_UDP4,
	  .mutate = mut_totlen_over_frame, MALFORMED },
	{ .name = "malformed_ipv4_tot_len_under_ihl", .ingress = LAN, MAL_UDP4,
	  .mutate = mut_totlen_under_ihl, MALFORMED },
	{ .name = "malformed_tcp_doff_4", .ingress = LAN, MAL_TCP4,
	  .mutate = mut_doff4, MALFORMED },
	{ .name = "malformed_tcp_doff_beyond_packet", .ingress = LAN, MAL_TCP4,
	  .mutate = mut_doff_beyond, MALFORMED },
	{ .name = "malformed_tcp_truncated", .ingress = LAN, MAL_TCP4,
	  .mutate = mut_tcp_truncated, MALFORMED },
	{ .name = "malformed_tcp_frame_cut", .ingress = LAN, MAL_TCP4,
	  .mutate = mut_tcp_frame_cut, MALFORMED },
	{ .name = "malformed_udp_len_over_available", .ingress = LAN, MAL_UDP4,
	  .mutate = mut_udp_len_over, MALFORMED },
	{ .name = "malformed_udp_len_under_8", .ingress = LAN, MAL_UDP4,
	  .mutate = mut_udp_len_under, MALFORMED },
	{ .name = "malformed_udp_truncated", .ingress = LAN, MAL_UDP4,
	  .mutate = mut_udp_truncated, MALFORMED },
	{ .name = "malformed_icmp_truncated", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHO, .icmp_id = 7 },
	  .mutate = mut_icmp_truncated, MALFORMED },
	{ .name = "malformed_ipv6_payload_len_over_frame", .ingress = LAN,
	  MAL_UDP6, .mutate = mut_ip6_plen_over, MALFORMED },
	{ .name = "malformed_ipv6_truncated", .ingress = LAN, MAL_UDP6,
	  .mutate = mut_ip6_truncated, MALFORMED },
	{ .name = "malformed_ipv6_udp_len_over", .ingress = LAN, MAL_UDP6,
	  .mutate = mut_ip6_udp_len_over, MALFORMED },
	{ .name = "malformed_from_wan_udp_len", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_UDP, .sport = 53, .dport = 40000 },
	  .mutate = mut_udp_len_over, MALFORMED },
};

/* ---- 13: IPv6, routed without NAT ------------------------------------- */

static const struct fixture fx_ipv6[] = {
	{ .name = "ipv6 udp lan->wan", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .has_out = true,
	  .out = { TO_WAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		   .proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
		   .ttl = 63 } },
	{ .name = "ipv6 udp wan->lan reply", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST,
		  .proto = IPPROTO_UDP, .sport = 53, .dport = 40000, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_LAN, .saddr = WAN6_GW, .daddr = LAN6_HOST,
		   .proto = IPPROTO_UDP, .sport = 53, .dport = 40000,
		   .ttl = 63 } },
	{ .name = "ipv6 udp lan->wan again", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53, .ttl = 2 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_WAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		   .proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
		   .ttl = 1 } },
	{ .name = "icmpv6 echo request lan->wan", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		  .proto = IPPROTO_ICMPV6, .icmp_type = ICMPV6_ECHO_REQUEST,
		  .icmp_id = 7, .icmp_seq = 1, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .has_out = true,
	  .out = { TO_WAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		   .proto = IPPROTO_ICMPV6, .icmp_type = ICMPV6_ECHO_REQUEST,
		   .icmp_id = 7, .icmp_seq = 1, .ttl = 63 } },
	{ .name = "icmpv6 echo reply wan->lan", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST,
		  .proto = IPPROTO_ICMPV6, .icmp_type = ICMPV6_ECHO_REPLY,
		  .icmp_id = 7, .icmp_seq = 1, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_LAN, .saddr = WAN6_GW, .daddr = LAN6_HOST,
		   .proto = IPPROTO_ICMPV6, .icmp_type = ICMPV6_ECHO_REPLY,
		   .icmp_id = 7, .icmp_seq = 1, .ttl = 63 } },
};

/* ---- MTU on the fast path --------------------------------------------- */

static const struct fixture fx_mtu_fast[] = {
	{ .name = "small packet opens the flow", UDP_OUT(40500, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  UDP_OUT_NAT(40500, 53) },
	{ .name = "1508-byte packet on the flow", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40500, .dport = 53,
		  .payload = big_payload, .payload_len = sizeof(big_payload) },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_MTU },
};

/* ---- ICMP errors about flows (RFC 5508) -------------------------------- */

/*
 * The packets an error quotes. A router on the WAN side saw the SNATed
 * packet (TTL already one less); after translation the LAN host must get
 * its own packet back, byte for byte as it sent it but for that TTL. The
 * quoted L4 checksum is then the one the host computed.
 */
static const struct pkt_spec q_udp_natted = {
	TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .proto = IPPROTO_UDP,
	.sport = 40000, .dport = 53, .ttl = 63, .ip_id = 0x1234 };
static const struct pkt_spec q_udp_orig = {
	FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_UDP,
	.sport = 40000, .dport = 53, .ttl = 63, .ip_id = 0x1234 };
/* The reply as the LAN host got it, and as the WAN sent it. */
static const struct pkt_spec q_reply_lan = {
	TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST, .proto = IPPROTO_UDP,
	.sport = 53, .dport = 40000, .ttl = 56, .ip_id = 0xbeef };
static const struct pkt_spec q_reply_wan = {
	FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .proto = IPPROTO_UDP,
	.sport = 53, .dport = 40000, .ttl = 56, .ip_id = 0xbeef };
static const struct pkt_spec q_tcp_natted = {
	TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .proto = IPPROTO_TCP,
	.sport = 40100, .dport = 443, .tcp_flags = TCP_SYN, .seq = 1000,
	.ttl = 63, .ip_id = 0x0101 };
static const struct pkt_spec q_tcp_orig = {
	FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_TCP,
	.sport = 40100, .dport = 443, .tcp_flags = TCP_SYN, .seq = 1000,
	.ttl = 63, .ip_id = 0x0101 };
static const struct pkt_spec q_echo_natted = {
	TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .proto = IPPROTO_ICMP,
	.icmp_type = ICMP_ECHO, .icmp_id = LEARNED, .icmp_seq = 1, .ttl = 63 };
static const struct pkt_spec q_echo_orig = {
	FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_ICMP,
	.icmp_type = ICMP_ECHO, .icmp_id = 7, .icmp_seq = 1, .ttl = 63 };
/* Port forward: the SYN as the LAN server got it, as the client sent it. */
static const struct pkt_spec q_fwd_lan = {
	TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST, .proto = IPPROTO_TCP,
	.sport = 33333, .dport = 80, .tcp_flags = TCP_SYN, .seq = 42,
	.ttl = 59, .ip_id = 7 };
static const struct pkt_spec q_fwd_wan = {
	FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .proto = IPPROTO_TCP,
	.sport = 33333, .dport = 8080, .tcp_flags = TCP_SYN, .seq = 42,
	.ttl = 59, .ip_id = 7 };
static const struct pkt_spec q6_udp = {
	TO_WAN, .saddr = LAN6_HOST, .daddr = WAN6_GW, .proto = IPPROTO_UDP,
	.sport = 40000, .dport = 53, .ttl = 63 };

#define ICMP_ERR(t, c) .icmp_type = t, .icmp_code = c
#define FWD_ERR .verdict = XDP_REDIRECT, .reason = XNAT_FWD_ICMP_ERROR, \
		.has_out = true

static const struct fixture fx_icmp_err_udp[] = {
	{ .name = "udp flow", UDP_OUT(40000, 53), .verdict = XDP_REDIRECT,
	  .reason = XNAT_FWD_SLOW, UDP_OUT_NAT(40000, 53) },
	{ .name = "port unreachable from the peer, whole packet quoted",
	  .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .in_quote = &q_udp_natted, FWD_ERR,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST, .ttl = 63,
		   ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .out_quote = &q_udp_orig },
	{ .name = "port unreachable, 28-byte quote (RFC 792)", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .in_quote = &q_udp_natted, .quote_len = 28, FWD_ERR,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST, .ttl = 63,
		   ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .out_quote = &q_udp_orig },
	{ .name = "time exceeded from a router further out", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = "198.19.200.9", .daddr = NAT_ADDR,
		  .ttl = 250, ICMP_ERR(ICMP_TIME_EXCEEDED, ICMP_EXC_TTL) },
	  .in_quote = &q_udp_natted, FWD_ERR,
	  .out = { TO_LAN, .saddr = "198.19.200.9", .daddr = LAN_HOST,
		   .ttl = 249, ICMP_ERR(ICMP_TIME_EXCEEDED, ICMP_EXC_TTL) },
	  .out_quote = &q_udp_orig },
	{ .name = "the flow still works", UDP_OUT(40000, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  UDP_OUT_NAT(40000, 53) },
	{ .name = "reply reaches the host", UDP_REPLY(53, 40000),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  UDP_REPLY_NAT(53, 40000) },
	{ .name = "port unreachable from the lan host about the reply",
	  .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .in_quote = &q_reply_lan, FWD_ERR,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .ttl = 63,
		   ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .out_quote = &q_reply_wan },
};

static const struct fixture fx_icmp_err_tcp[] = {
	{ .name = "tcp SYN", TCP_OUT(40100, TCP_SYN, 1000, 0),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  TCP_OUT_NAT(40100, TCP_SYN, 1000, 0) },
	{ .name = "fragmentation needed, whole header quoted", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED),
		  .icmp_seq = 1400 },
	  .in_quote = &q_tcp_natted, FWD_ERR,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST, .ttl = 63,
		   ICMP_ERR(ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED),
		   .icmp_seq = 1400 },
	  .out_quote = &q_tcp_orig },
	{ .name = "fragmentation needed, 28-byte quote", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED),
		  .icmp_seq = 1400 },
	  .in_quote = &q_tcp_natted, .quote_len = 28, FWD_ERR,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST, .ttl = 63,
		   ICMP_ERR(ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED),
		   .icmp_seq = 1400 },
	  .out_quote = &q_tcp_orig },
};

static const struct fixture fx_icmp_err_echo[] = {
	{ .name = "echo request id 7", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHO, .icmp_id = 7,
		  .icmp_seq = 1, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .learn = true,
	  .has_out = true,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		   .proto = IPPROTO_ICMP, .icmp_type = ICMP_ECHO,
		   .icmp_id = LEARNED, .icmp_seq = 1, .ttl = 63 } },
	{ .name = "time exceeded quoting the translated request",
	  .ingress = WAN,
	  .in = { FROM_WAN, .saddr = "198.19.200.9", .daddr = NAT_ADDR,
		  .ttl = 250, ICMP_ERR(ICMP_TIME_EXCEEDED, ICMP_EXC_TTL) },
	  .in_quote = &q_echo_natted, FWD_ERR,
	  .out = { TO_LAN, .saddr = "198.19.200.9", .daddr = LAN_HOST,
		   .ttl = 249, ICMP_ERR(ICMP_TIME_EXCEEDED, ICMP_EXC_TTL) },
	  .out_quote = &q_echo_orig },
};

static const struct fixture fx_icmp_err_forward[] = {
	{ .name = "wan SYN to 8080", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 33333, .dport = 8080,
		  .tcp_flags = TCP_SYN, .seq = 42, .ttl = 60, .ip_id = 7 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .has_out = true,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST,
		   .proto = IPPROTO_TCP, .sport = 33333, .dport = 80,
		   .tcp_flags = TCP_SYN, .seq = 42, .ttl = 59, .ip_id = 7 } },
	{ .name = "port unreachable from the forwarded server", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .in_quote = &q_fwd_lan, FWD_ERR,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .ttl = 63,
		   ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .out_quote = &q_fwd_wan },
};

/*
 * An error from a router inside the LAN (here a second LAN router on the
 * path to the forwarded server: fragmentation needed, which path MTU
 * discovery of the forwarded service depends on). Its private source must
 * not leave on the WAN: the kernel's NAT (nf_nat_icmp_reply_translation)
 * gives the outer header the NAT address, as for the flow's own packets;
 * a private source is dropped by source filtering (BCP 38) on the way and
 * PMTUD breaks.
 */
static const struct fixture fx_icmp_err_lan_router[] = {
	{ .name = "wan SYN to 8080", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 33333, .dport = 8080,
		  .tcp_flags = TCP_SYN, .seq = 42, .ttl = 60, .ip_id = 7 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .has_out = true,
	  .out = { TO_LAN, .saddr = WAN_GW, .daddr = LAN_HOST,
		   .proto = IPPROTO_TCP, .sport = 33333, .dport = 80,
		   .tcp_flags = TCP_SYN, .seq = 42, .ttl = 59, .ip_id = 7 } },
	{ .name = "fragmentation needed from a lan router", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST2, .dmac = MAC_LAN0,
		  .saddr = LAN_HOST2, .daddr = WAN_GW, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED),
		  .icmp_seq = 1280 },
	  .in_quote = &q_fwd_lan, FWD_ERR,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW, .ttl = 63,
		   ICMP_ERR(ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED),
		   .icmp_seq = 1280 },
	  .out_quote = &q_fwd_wan },
};

static const struct fixture fx_icmp_err_v6[] = {
	{ .name = "ipv6 udp lan->wan", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .has_out = true,
	  .out = { TO_WAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
		   .proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
		   .ttl = 63 } },
	{ .name = "packet too big from the wan", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST, .ttl = 64,
		  ICMP_ERR(ICMPV6_PKT_TOOBIG, 0), .icmp_seq = 1280 },
	  .in_quote = &q6_udp, FWD_ERR,
	  .out = { TO_LAN, .saddr = WAN6_GW, .daddr = LAN6_HOST, .ttl = 63,
		   ICMP_ERR(ICMPV6_PKT_TOOBIG, 0), .icmp_seq = 1280 },
	  .out_quote = &q6_udp },
};

/* Errors about flows XDP does not have are the kernel's. */
static const struct fixture fx_icmp_err_no_flow[] = {
	{ .name = "port unreachable about an unknown flow", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .ttl = 64,
		  ICMP_ERR(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) },
	  .in_quote = &q_udp_natted,
	  .verdict = XDP_PASS, .reason = XNAT_PASS_PROTO },
};

/*
 * Hairpin: a LAN host reaches the port forward on the WAN address. The
 * server must see the NAT address as the source (so its reply comes back
 * through the router), and the client the NAT address and forwarded port.
 */
static const struct fixture fx_hairpin[] = {
	{ .name = "host 2 SYN to nat addr:8080", .ingress = LAN,
	  .in = { FROM_LAN2, .saddr = LAN_HOST2, .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 5555, .dport = 8080,
		  .tcp_flags = TCP_SYN, .seq = 1, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .learn = true,
	  .has_out = true,
	  .out = { TO_LAN, .saddr = NAT_ADDR, .daddr = LAN_HOST,
		   .proto = IPPROTO_TCP, .sport = LEARNED, .dport = 80,
		   .tcp_flags = TCP_SYN, .seq = 1, .ttl = 63 } },
	{ .name = "server SYN-ACK to nat addr", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 80, .dport = LEARNED,
		  .tcp_flags = TCP_SYN | TCP_ACK, .seq = 500, .ack_seq = 2,
		  .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_LAN2, .saddr = NAT_ADDR, .daddr = LAN_HOST2,
		   .proto = IPPROTO_TCP, .sport = 8080, .dport = 5555,
		   .tcp_flags = TCP_SYN | TCP_ACK, .seq = 500, .ack_seq = 2,
		   .ttl = 63 } },
	{ .name = "host 2 ACK", .ingress = LAN,
	  .in = { FROM_LAN2, .saddr = LAN_HOST2, .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 5555, .dport = 8080,
		  .tcp_flags = TCP_ACK, .seq = 2, .ack_seq = 501, .ttl = 64 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_LAN, .saddr = NAT_ADDR, .daddr = LAN_HOST,
		   .proto = IPPROTO_TCP, .sport = LEARNED, .dport = 80,
		   .tcp_flags = TCP_ACK, .seq = 2, .ack_seq = 501, .ttl = 63 } },
};

/* ---- Port range edges, port collisions, padding ---------------------- */

static const struct fixture fx_port_bounds[] = {
	/* First, with no mapping at all: the range decides whose port. */
	{ .name = "wan to 19999, no flow: kernel's port", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_UDP, .sport = 99, .dport = 19999 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_WAN_IN },
	{ .name = "wan to 20000, no mapping: XDP's port", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_UDP, .sport = 99, .dport = 20000 },
	  .verdict = XDP_DROP, .reason = XNAT_DROP_UNSOLICITED },
	{ .name = "wan to 65535, no mapping: XDP's port", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_UDP, .sport = 99, .dport = 65535 },
	  .verdict = XDP_DROP, .reason = XNAT_DROP_UNSOLICITED },
	{ .name = "inside port 20000 (range start) kept", UDP_OUT(20000, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  UDP_OUT_NAT(20000, 53) },
	{ .name = "inside port 65535 (range end) kept", UDP_OUT(65535, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  UDP_OUT_NAT(65535, 53) },
	{ .name = "inside port 19999 mapped into the range", UDP_OUT(19999, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .learn = true,
	  UDP_OUT_NAT(LEARNED, 53) },
};

/*
 * Endpoint-independent mapping and address-dependent filtering (RFC 4787
 * REQ-1, REQ-8; nat.h): an inside endpoint keeps its external port towards
 * every destination; from the WAN, an address it has sent to may reach it
 * from any port, another address only with endpoint-independent filtering.
 */
static const struct fixture fx_eim_adf[] = {
	{ .name = "host:40000 to gw:53", UDP_OUT(40000, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  UDP_OUT_NAT(40000, 53) },
	{ .name = "host:1234 to gw:53 (port mapped)", UDP_OUT(1234, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .learn = true,
	  UDP_OUT_NAT(LEARNED, 53) },
	{ .name = "host:1234 to gw:54 keeps the mapping", UDP_OUT(1234, 54),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  UDP_OUT_NAT(LEARNED, 54) },
	{ .name = "gw:99 to the mapping: address known, let in", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
		  .proto = IPPROTO_UDP, .sport = 99, .dport = 40000,
		  .ttl = 57, .ip_id = 0xbeef },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  UDP_REPLY_NAT(99, 40000) },
	{ .name = "host answers gw:99 on that flow", UDP_OUT(40000, 99),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  UDP_OUT_NAT(40000, 99) },
	{ .name = "198.19.0.7 never contacted: filtered", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = "198.19.0.7", .daddr = NAT_ADDR,
		  .proto = IPPROTO_UDP, .sport = 53, .dport = 40000 },
	  .verdict = XDP_DROP, .reason = XNAT_DROP_FILTERED },
};

static bool udp_out(uint16_t sport, uint16_t dport, int verdict, int reason);

/* With [nat] filtering = endpoint-independent, any remote gets in. */
static bool test_filter_eif(void)
{
	struct fixture f = {
		.name = "198.19.0.7 to the mapping, EIF", .ingress = WAN,
		.in = { FROM_WAN, .saddr = "198.19.0.7", .daddr = NAT_ADDR,
			.proto = IPPROTO_UDP, .sport = 53, .dport = 40000,
			.ttl = 57, .ip_id = 0xbeef },
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
		.has_out = true,
		.out = { TO_LAN, .saddr = "198.19.0.7", .daddr = LAN_HOST,
			 .proto = IPPROTO_UDP, .sport = 53, .dport = 40000,
			 .ttl = 56, .ip_id = 0xbeef } };
	struct xnat_config c, saved;
	bool ok;

	if (!udp_out(40000, 53, XDP_REDIRECT, XNAT_FWD_SLOW) ||
	    !config_get(&saved))
		return false;
	c = saved;
	c.flags |= XNAT_F_FILTER_EIF;
	if (!config_set(&c))
		return false;
	ok = run_fixture(&f);
	ok &= config_set(&saved);
	return ok;
}

static bool check_not_40000(const uint8_t *out, size_t len)
{
	return ASSERT_TRUE(learned != 40000,
			   "second host got another external port");
}

/* Two inside hosts, same source port, same destination. */
static const struct fixture fx_collision[] = {
	{ .name = "host 1 from 40000", UDP_OUT(40000, 53),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
	  UDP_OUT_NAT(40000, 53) },
	{ .name = "host 2 from 40000", .ingress = LAN,
	  .in = { FROM_LAN2, .saddr = LAN_HOST2, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
		  .ttl = 64, .ip_id = 0x1234 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .learn = true,
	  .check = check_not_40000, UDP_OUT_NAT(LEARNED, 53) },
	{ .name = "reply to host 2", UDP_REPLY(53, LEARNED),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_LAN2, .saddr = WAN_GW, .daddr = LAN_HOST2,
		   .proto = IPPROTO_UDP, .sport = 53, .dport = 40000,
		   .ttl = 56, .ip_id = 0xbeef } },
	{ .name = "reply to host 1", UDP_REPLY(53, 40000),
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
	  UDP_REPLY_NAT(53, 40000) },
};

/* Minimum-size frames: Ethernet padding after the IP packet is kept and
 * not counted in the IP or UDP lengths. */
static const struct fixture fx_padded[] = {
	{ .name = "padded udp lan->wan, new flow", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40400, .dport = 53,
		  .payload = "", .payload_len = 0, .pad_to = 60 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .has_out = true,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		   .proto = IPPROTO_UDP, .sport = 40400, .dport = 53,
		   .ttl = 63, .payload = "", .payload_len = 0, .pad_to = 60 } },
	{ .name = "padded udp lan->wan, same flow", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40400, .dport = 53,
		  .payload = "ab", .payload_len = 2, .pad_to = 60 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST, .has_out = true,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		   .proto = IPPROTO_UDP, .sport = 40400, .dport = 53,
		   .ttl = 63, .payload = "ab", .payload_len = 2,
		   .pad_to = 60 } },
	{ .name = "padded tcp SYN lan->wan", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_TCP, .sport = 40401, .dport = 443,
		  .tcp_flags = TCP_SYN, .payload = "", .payload_len = 0,
		  .pad_to = 60 },
	  .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW, .has_out = true,
	  .out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
		   .proto = IPPROTO_TCP, .sport = 40401, .dport = 443,
		   .tcp_flags = TCP_SYN, .ttl = 63, .payload = "",
		   .payload_len = 0, .pad_to = 60 } },
};

/* ---- Tests with their own logic --------------------------------------- */

/* Send a LAN->WAN UDP packet of a new flow from SPORT; expect as given. */
static bool udp_out(uint16_t sport, uint16_t dport, int verdict, int reason)
{
	struct fixture f = {
		.name = "udp lan->wan", UDP_OUT(sport, dport),
		.verdict = verdict, .reason = reason,
	};

	if (verdict == XDP_REDIRECT) {
		struct fixture g = { UDP_OUT_NAT(sport, dport) };

		f.has_out = g.has_out;
		f.out = g.out;
	}
	return run_fixture(&f);
}

/* 14: a full table hands new connections to the kernel. */
static bool test_table_full(void)
{
	bool ok = true;
	int i;

	for (i = 0; i < FLOW_CONNS; i++)
		if (!udp_out(41000 + i, 53, XDP_REDIRECT, XNAT_FWD_SLOW))
			return false;
	ok &= ASSERT_EQ(flows_count(), 2 * FLOW_CONNS, "entries when full");
	/* run_expect also checks no half connection is left behind. */
	ok &= udp_out(41000 + FLOW_CONNS, 53, XDP_PASS, XNAT_PASS_TABLE_FULL);
	ok &= udp_out(41000 + FLOW_CONNS + 1, 53, XDP_PASS, XNAT_PASS_TABLE_FULL);
	/* Established flows keep working both ways. */
	ok &= udp_out(41000, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= udp_out(41000 + FLOW_CONNS - 1, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	{
		struct fixture r = { .name = "reply on a full table",
				     UDP_REPLY(53, 41003),
				     .verdict = XDP_REDIRECT,
				     .reason = XNAT_FWD_FAST,
				     UDP_REPLY_NAT(53, 41003) };

		ok &= run_fixture(&r);
	}
	/* Room again after one connection goes. */
	{
		struct flow_key ok_ = flow_key4(LAN_HOST, 41000, WAN_GW, 53,
						IPPROTO_UDP, if_lan);
		struct flow_key rk = flow_key4(WAN_GW, 53, NAT_ADDR, 41000,
					       IPPROTO_UDP, if_wan);

		ok &= ASSERT_OK(bpf_map_delete_elem(flows_fd, &ok_), "delete orig");
		ok &= ASSERT_OK(bpf_map_delete_elem(flows_fd, &rk), "delete reply");
		ok &= udp_out(41000 + FLOW_CONNS, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	}
	return ok;
}

/*
 * One slot left: the reply entry of a new connection fits, its orig entry
 * does not. The half-inserted reply must be taken out again (run_expect
 * checks the entry count is unchanged) and the table stay usable.
 */
static bool test_table_full_rollback(void)
{
	struct flow_key dummy = flow_key4("198.18.250.1", 1, "198.18.250.2", 2,
					  IPPROTO_UDP, if_wan);
	struct flow_value zero = {};
	bool ok = true;
	int i;

	if (!ASSERT_OK(bpf_map_update_elem(flows_fd, &dummy, &zero, BPF_NOEXIST),
		       "insert a lone entry"))
		return false;
	for (i = 0; i < FLOW_CONNS - 1; i++)
		if (!udp_out(41100 + i, 53, XDP_REDIRECT, XNAT_FWD_SLOW))
			return false;
	ok &= ASSERT_EQ(flows_count(), 2 * FLOW_CONNS - 1, "one slot left");
	ok &= udp_out(41199, 53, XDP_PASS, XNAT_PASS_TABLE_FULL);
	ok &= udp_out(41199, 53, XDP_PASS, XNAT_PASS_TABLE_FULL);
	ok &= udp_out(41100, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= ASSERT_OK(bpf_map_delete_elem(flows_fd, &dummy), "delete lone entry");
	ok &= udp_out(41199, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	return ok;
}

/* Run F and copy its output to OUT. */
static bool run_save(const struct fixture *f, uint8_t *out, uint32_t *out_len)
{
	uint8_t frame[PKT_MAX];
	struct pkt_spec in = f->in;
	size_t len;

	spec_resolve(&in);
	len = pkt_build(frame, &in);
	return run_expect(f->name, side_ifindex(f->ingress), frame, len, 0,
			  f->verdict, f->reason, out, out_len);
}

/* 15: with the fast path off, hits are routed again, same bytes out. */
static bool test_fastpath_off(void)
{
	static const struct fixture o_slow = { .name = "orig slow",
		UDP_OUT(1234, 5353), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_SLOW, .learn = true };
	static const struct fixture o_fast = { .name = "orig fast",
		UDP_OUT(1234, 5353), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST };
	static const struct fixture r_fast = { .name = "reply fast",
		UDP_REPLY(5353, LEARNED), .verdict = XDP_REDIRECT,
		.reason = XNAT_FWD_FAST };
	struct fixture o_routed = o_fast, r_routed = r_fast;
	uint8_t fast_o[PKT_MAX], fast_r[PKT_MAX];
	uint8_t got_o[PKT_MAX], got_r[PKT_MAX];
	uint32_t fo_len, fr_len, go_len, gr_len;
	struct xnat_config c, saved;
	bool ok = true;

	if (!run_fixture(&o_slow) || !run_save(&o_fast, fast_o, &fo_len) ||
	    !run_save(&r_fast, fast_r, &fr_len) || !config_get(&saved))
		return false;
	c = saved;
	c.flags |= XNAT_F_FASTPATH_OFF;
	if (!config_set(&c))
		return false;
	o_routed.name = "orig routed";
	o_routed.reason = XNAT_FWD_ROUTED;
	r_routed.name = "reply routed";
	r_routed.reason = XNAT_FWD_ROUTED;
	ok &= run_save(&o_routed, got_o, &go_len) &&
	      expect_bytes(got_o, go_len, fast_o, fo_len, "orig routed == fast");
	ok &= run_save(&r_routed, got_r, &gr_len) &&
	      expect_bytes(got_r, gr_len, fast_r, fr_len, "reply routed == fast");
	/* A new flow still takes the slow path, then is routed. */
	ok &= udp_out(40800, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	ok &= udp_out(40800, 53, XDP_REDIRECT, XNAT_FWD_ROUTED);
	ok &= config_set(&saved);
	ok &= run_fixture(&o_fast);
	return ok;
}

/* 16: TTL exactly one less, checksum right, over values with carries. */
static bool test_ttl(void)
{
	static const struct { uint8_t ttl; uint16_t id; } cases[] = {
		{ 2, 0x0000 }, { 3, 0xffff }, { 64, 0x1234 }, { 65, 0xfeff },
		{ 128, 0x00ff }, { 129, 0x8000 }, { 255, 0xffff },
		{ 255, 0x0000 }, { 17, 0xff00 },
	};
	bool ok = true;
	size_t i;

	if (!udp_out(40700, 53, XDP_REDIRECT, XNAT_FWD_SLOW))
		return false;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fixture f = { .name = "ttl", UDP_OUT(40700, 53),
				     .verdict = XDP_REDIRECT,
				     .reason = XNAT_FWD_FAST,
				     UDP_OUT_NAT(40700, 53) };
		struct fixture r = { .name = "ttl reply", UDP_REPLY(53, 40700),
				     .verdict = XDP_REDIRECT,
				     .reason = XNAT_FWD_FAST,
				     UDP_REPLY_NAT(53, 40700) };

		f.in.ttl = r.in.ttl = cases[i].ttl;
		f.out.ttl = r.out.ttl = cases[i].ttl - 1;
		f.in.ip_id = f.out.ip_id = r.in.ip_id = r.out.ip_id = cases[i].id;
		if (!run_fixture(&f) || !run_fixture(&r)) {
			fail("ttl %u id 0x%04x", cases[i].ttl, cases[i].id);
			ok = false;
		}
	}
	return ok;
}

/* Built-frame checksum (host order) of a spec: IPv4 header or L4. */
static uint16_t spec_ip_csum(const struct pkt_spec *s)
{
	uint8_t buf[PKT_MAX];

	pkt_build(buf, s);
	return csum_get16(&((struct pkt_v4_udp *)buf)->ip.check);
}

static uint16_t spec_l4_csum(const struct pkt_spec *s)
{
	uint8_t buf[PKT_MAX];
	struct pkt_v4_udp *p = (void *)buf;

	pkt_build(buf, s);
	return csum_get16((uint8_t *)&p->udp + pkt_l4_csum_off(s->proto));
}

/*
 * Checksums at the edges of one's complement arithmetic: input and output
 * IPv4 header checksums of 0x0000; a UDP checksum that computes to zero
 * (sent as 0xffff) on input and on output; TCP checksums of 0x0000. Found
 * by searching IP ids and two payload bytes, with the oracle.
 */
static bool test_csum_edges(void)
{
	struct fixture f = { .name = "csum edge", UDP_OUT(40900, 53),
			     .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
			     UDP_OUT_NAT(40900, 53) };
	uint8_t pl[2];
	bool ok = true, found;
	uint32_t v;
	int which;

	if (!udp_out(40900, 53, XDP_REDIRECT, XNAT_FWD_SLOW))
		return false;
	f.in.payload = f.out.payload = pl;
	f.in.payload_len = f.out.payload_len = sizeof(pl);
	pl[0] = pl[1] = 0;

	/* IP header checksum 0x0000 in, then out. */
	for (which = 0; which < 2; which++) {
		found = false;
		for (v = 0; v <= 0xffff && !found; v++) {
			f.in.ip_id = f.out.ip_id = v;
			found = !spec_ip_csum(which ? &f.out : &f.in);
		}
		if (!ASSERT_TRUE(found, "an IP id for checksum 0"))
			return false;
		if (!run_fixture(&f)) {
			fail("IPv4 checksum 0x0000 on %s (id 0x%04x)",
			     which ? "output" : "input", f.in.ip_id);
			ok = false;
		}
	}
	f.in.ip_id = f.out.ip_id = 0x1234;

	/* UDP checksum 0xffff (computed zero) in, then out; then TCP 0. */
	for (which = 0; which < 2; which++) {
		found = false;
		for (v = 0; v <= 0xffff && !found; v++) {
			pl[0] = v >> 8;
			pl[1] = v & 0xff;
			found = spec_l4_csum(which ? &f.out : &f.in) == 0xffff;
		}
		if (!ASSERT_TRUE(found, "a payload for UDP checksum 0xffff"))
			return false;
		if (!run_fixture(&f)) {
			fail("UDP checksum 0xffff on %s (payload %02x%02x)",
			     which ? "output" : "input", pl[0], pl[1]);
			ok = false;
		}
	}
	return ok;
}

static bool test_csum_edges_tcp(void)
{
	struct fixture f = { .name = "tcp csum edge",
			     TCP_OUT(40950, TCP_ACK, 1, 1),
			     .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
			     TCP_OUT_NAT(40950, TCP_ACK, 1, 1) };
	struct fixture syn = { .name = "tcp SYN",
			       TCP_OUT(40950, TCP_SYN, 0, 0),
			       .verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW,
			       TCP_OUT_NAT(40950, TCP_SYN, 0, 0) };
	uint8_t pl[2];
	bool ok = true, found;
	uint32_t v;
	int which;

	if (!run_fixture(&syn))
		return false;
	f.in.payload = f.out.payload = pl;
	f.in.payload_len = f.out.payload_len = sizeof(pl);
	for (which = 0; which < 2; which++) {
		found = false;
		for (v = 0; v <= 0xffff && !found; v++) {
			pl[0] = v >> 8;
			pl[1] = v & 0xff;
			found = spec_l4_csum(which ? &f.out : &f.in) == 0;
		}
		if (!ASSERT_TRUE(found, "a payload for TCP checksum 0"))
			return false;
		if (!run_fixture(&f)) {
			fail("TCP checksum 0x0000 on %s (payload %02x%02x)",
			     which ? "output" : "input", pl[0], pl[1]);
			ok = false;
		}
	}
	return ok;
}

/* Deterministic xorshift, so a failure reproduces. */
static uint32_t rnd_state = 0x2545f491;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

/*
 * Random flows (UDP and TCP, inside ports in and out of the range, random
 * ids, TTLs, TOS, payloads of odd and even length) through slow path, fast
 * path and reply; every output compared byte for byte with a frame built
 * from scratch.
 */
static bool test_csum_random(void)
{
	static uint8_t payloads[3][96];
	bool ok = true;
	int i, j, k;

	for (i = 0; i < 48 && ok; i++) {
		uint8_t proto = i % 2 ? IPPROTO_TCP : IPPROTO_UDP;
		uint16_t sport = 1024 + rnd() % (65536 - 1024);
		uint16_t dport = 1000 + i; /* distinct: no collisions */
		struct fixture f[3];

		if (i % FLOW_CONNS == 0)
			flows_clear();
		for (j = 0; j < 3; j++)
			for (k = 0; k < (int)sizeof(payloads[j]); k++)
				payloads[j][k] = rnd();
		memset(f, 0, sizeof(f));
		/* 0: new flow from LAN, 1: same flow, 2: reply from WAN. */
		for (j = 0; j < 3; j++) {
			struct fixture *x = &f[j];
			bool reply = j == 2;

			x->name = j == 0 ? "random slow" : j == 1 ? "random fast" :
								"random reply";
			x->ingress = reply ? WAN : LAN;
			x->verdict = XDP_REDIRECT;
			x->reason = j == 0 ? XNAT_FWD_SLOW : XNAT_FWD_FAST;
			x->has_out = true;
			x->learn = j == 0; /* checks the port is in range */
			x->in = (struct pkt_spec){
				.saddr = reply ? WAN_GW : LAN_HOST,
				.daddr = reply ? NAT_ADDR : WAN_GW,
				.proto = proto,
				.sport = reply ? dport : sport,
				.dport = reply ? LEARNED : dport,
				.ttl = 2 + rnd() % 254,
				.tos = rnd(),
				.ip_id = rnd(),
				.tcp_flags = proto != IPPROTO_TCP ? 0 :
					     j == 0 ? TCP_SYN :
					     j == 1 ? TCP_ACK : TCP_SYN | TCP_ACK,
				.seq = rnd(),
				.ack_seq = rnd(),
				.payload = payloads[j],
				.payload_len = rnd() % sizeof(payloads[j]),
			};
			memcpy(x->in.smac, reply ? (uint8_t[])MAC_WAN_GW :
						   (uint8_t[])MAC_LAN_HOST, 6);
			memcpy(x->in.dmac, reply ? mac_wan0 : mac_lan0, 6);
			x->out = x->in;
			x->out.ttl--;
			if (reply) {
				x->out.daddr = LAN_HOST;
				x->out.dport = sport;
				memcpy(x->out.smac, mac_lan0, 6);
				memcpy(x->out.dmac, (uint8_t[])MAC_LAN_HOST, 6);
			} else {
				x->out.saddr = NAT_ADDR;
				/* Preserved when in range, else the chosen one. */
				x->out.sport = sport >= PORT_MIN ? sport : LEARNED;
				memcpy(x->out.smac, mac_wan0, 6);
				memcpy(x->out.dmac, (uint8_t[])MAC_WAN_GW, 6);
			}
		}
		for (j = 0; j < 3 && ok; j++)
			ok = run_fixture(&f[j]);
		if (!ok)
			fail("random iteration %d: %s sport %u dport %u", i,
			     proto == IPPROTO_TCP ? "tcp" : "udp", sport, dport);
	}
	return ok;
}

/* A one-port range: the second connection to the same destination finds
 * no free port and goes to the kernel; another destination reuses it. */
static bool test_no_port(void)
{
	struct xnat_config c, saved;
	struct fixture f = { .name = "first endpoint takes port 30000",
			     UDP_OUT(1234, 53), .verdict = XDP_REDIRECT,
			     .reason = XNAT_FWD_SLOW, UDP_OUT_NAT(30000, 53) };
	bool ok;

	if (!config_get(&saved))
		return false;
	c = saved;
	c.port_min = c.port_max = 30000;
	if (!config_set(&c))
		return false;
	ok = run_fixture(&f);
	/* Another inside endpoint: the only port is taken, and towards this
	 * peer even as an endpoint-dependent port: the kernel's NAT, with its
	 * own range, takes it. */
	ok &= udp_out(1235, 53, XDP_PASS, XNAT_PASS_NO_PORT);
	/* The same endpoint to another peer uses its mapping. */
	f.name = "same endpoint, other peer: same port";
	f.in.dport = f.out.dport = 54;
	ok &= run_fixture(&f);
	/* Towards a third peer the other endpoint shares the port as an
	 * endpoint-dependent one (tests/unit/test_scale.c has the rest). */
	f.name = "other endpoint, third peer: the port, endpoint-dependent";
	f.in.sport = 1235;
	f.in.dport = f.out.dport = 55;
	f.reason = XNAT_FWD_SLOW_EDM;
	ok &= run_fixture(&f);
	ok &= ASSERT_EQ(flows_count(), 6, "entries of the three flows");
	ok &= config_set(&saved);
	return ok;
}

/* ---- IPv4 fragments of a NATed flow ------------------------------------ */

/*
 * The first fragment (MF, offset 0) has the ports: it is NATed like any
 * packet, its L4 checksum updated for the whole datagram. A later fragment
 * of the same datagram (same addresses, id, protocol) has none: it gets
 * the same address rewrite, and its bytes past the IP header stay as
 * they are. The expected frames are built here from the input.
 */
static bool test_fragments(void)
{
	struct pkt_spec in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
			       .proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
			       .ip_id = 4242 };
	struct pkt_spec out = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
				.proto = IPPROTO_UDP, .sport = 40000, .dport = 53,
				.ip_id = 4242, .ttl = 63 };
	uint8_t frame[PKT_MAX], want[PKT_MAX], got[PKT_MAX];
	struct pkt_v4_udp *f = (void *)frame, *w = (void *)want;
	uint32_t got_len = 0;
	size_t len, want_len;
	bool ok;

	/* First fragment: NATed, MF kept, checksums as for any packet. */
	len = mut_frag_mf(frame, pkt_build(frame, &in));
	want_len = mut_frag_mf(want, pkt_build(want, &out));
	ok = run_expect("first fragment", if_lan, frame, len, 0, XDP_REDIRECT,
			XNAT_FWD_SLOW, got, &got_len);
	ok = ok && expect_bytes(got, got_len, want, want_len, "first fragment");

	/* A later fragment: same datagram, offset 1480, no ports. What
	 * follows its IP header must come out untouched. */
	len = mut_frag_offset(frame, pkt_build(frame, &in));
	memcpy(want, frame, len);
	memcpy(w->eth.h_dest, (uint8_t[])MAC_WAN_GW, ETH_ALEN);
	memcpy(w->eth.h_source, (uint8_t[])MAC_WAN0, ETH_ALEN);
	inet_pton(AF_INET, NAT_ADDR, &w->ip.saddr);
	w->ip.ttl = f->ip.ttl - 1;
	pkt_ipv4_fix_csum(&w->ip);
	ok = ok && run_expect("later fragment", if_lan, frame, len, 0,
			      XDP_REDIRECT, XNAT_FWD_FAST, got, &got_len);
	ok = ok && expect_bytes(got, got_len, want, len, "later fragment");

	/* Another datagram's later fragment (other id): not this flow's. */
	f->ip.id = htons(4243);
	pkt_ipv4_fix_csum(&f->ip);
	ok = ok && run_expect("later fragment, unknown datagram", if_lan,
			      frame, len, 0, XDP_PASS, XNAT_PASS_FRAGMENT, got,
			      &got_len);
	if (!ok)
		fail("fragments of a NATed flow");
	return ok;
}

/* ---- 802.1Q VLANs ------------------------------------------------------ */

/*
 * A VLAN device stands for its tagged frames on a physical port. This
 * kernel has no 8021q, so the test's "VLAN device" is a veth (vl100) with
 * the VLAN's subnet: the FIB routes with it exactly as with a VLAN device,
 * and the maps say its frames travel on lan0 tagged 100, as user/maps.c
 * writes them for a real one. What is tested is the data path's part:
 * tagged ingress found by (port, VID), tags popped, pushed, kept.
 */
#define VLAN_ID      100
#define VLAN_HOST    "198.18.3.10"
#define MAC_VLAN_HOST { 0x02, 0x00, 0x00, 0x00, 0x04, 0x0a }

/* Insert an 802.1Q tag after the MACs of the LEN-byte frame in BUF. */
static size_t vlan_tag(uint8_t *buf, size_t len, uint16_t vid)
{
	uint16_t tag[2] = { htons(ETH_P_8021Q), htons(vid) };

	memmove(buf + 16, buf + 12, len - 12);
	memcpy(buf + 12, tag, sizeof(tag));
	return len + 4;
}

/* Run FRAME in on IFINDEX and compare the output with WANT. */
static bool vlan_step(const char *name, int ifindex, uint8_t *frame,
		      size_t len, int verdict, int reason, const uint8_t *want,
		      size_t want_len)
{
	uint8_t got[PKT_MAX];
	uint32_t got_len = 0;
	bool ok;

	ok = run_expect(name, ifindex, frame, len, 0, verdict, reason, got,
			&got_len);
	if (ok && want)
		ok = expect_bytes(got, got_len, want, want_len, name);
	if (!ok)
		fail("step '%s' failed", name);
	return ok;
}

static bool test_vlan(void)
{
	struct pkt_spec out_wan = { TO_WAN, .saddr = NAT_ADDR, .daddr = WAN_GW,
				    .proto = IPPROTO_UDP, .sport = 41000,
				    .dport = 53, .ttl = 63 };
	struct pkt_spec in_vlan = { .smac = MAC_VLAN_HOST, .dmac = MAC_LAN0,
				    .saddr = VLAN_HOST, .daddr = WAN_GW,
				    .proto = IPPROTO_UDP, .sport = 41000,
				    .dport = 53 };
	struct pkt_spec in_wan = { FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR,
				   .proto = IPPROTO_UDP, .sport = 53,
				   .dport = 41000 };
	struct pkt_spec out_vlan = { .smac = MAC_LAN0, .dmac = MAC_VLAN_HOST,
				     .saddr = WAN_GW, .daddr = VLAN_HOST,
				     .proto = IPPROTO_UDP, .sport = 53,
				     .dport = 41000, .ttl = 63 };
	struct pkt_spec lan_to_vlan = { FROM_LAN, .saddr = LAN_HOST,
					.daddr = VLAN_HOST, .proto = IPPROTO_UDP,
					.sport = 42000, .dport = 7 };
	struct pkt_spec lan_to_vlan_out = { .smac = MAC_LAN0,
					    .dmac = MAC_VLAN_HOST,
					    .saddr = LAN_HOST, .daddr = VLAN_HOST,
					    .proto = IPPROTO_UDP, .sport = 42000,
					    .dport = 7, .ttl = 63 };
	struct iface_info vinfo = { .role = XNAT_ROLE_LAN,
				    .mac = MAC_LAN0, .vid = VLAN_ID,
				    .parent = if_lan };
	struct vlan_key vk = { .ifindex = if_lan, .vid = VLAN_ID };
	int ifaces_fd = bpf_map__fd(skel->maps.xnat_ifaces);
	int vlans_fd = bpf_map__fd(skel->maps.xnat_vlans);
	uint8_t frame[PKT_MAX], want[PKT_MAX];
	__u32 vdev = if_nametoindex("vl100");
	size_t len, want_len;
	bool ok = ASSERT_TRUE(vdev != 0, "vl100 exists");

	if (!ok || bpf_map_update_elem(ifaces_fd, &vdev, &vinfo, BPF_ANY) ||
	    bpf_map_update_elem(vlans_fd, &vk, &vdev, BPF_ANY))
		return ASSERT_TRUE(false, "VLAN entries written");

	/* Tagged from the VLAN to the WAN: routed as from vl100, tag
	 * popped, SNATed (port 41000 preserved). */
	len = vlan_tag(frame, pkt_build(frame, &in_vlan), VLAN_ID);
	want_len = pkt_build(want, &out_wan);
	ok &= vlan_step("tagged VLAN 100 to WAN: tag popped", if_lan, frame,
			len, XDP_REDIRECT, XNAT_FWD_SLOW, want, want_len);
	/* The reply: tag pushed, out of the physical LAN port. */
	len = pkt_build(frame, &in_wan);
	want_len = vlan_tag(want, pkt_build(want, &out_vlan), VLAN_ID);
	ok &= vlan_step("reply from WAN: tag 100 pushed", if_wan, frame, len,
			XDP_REDIRECT, XNAT_FWD_FAST, want, want_len);
	/* And again on the fast path from the VLAN side. */
	len = vlan_tag(frame, pkt_build(frame, &in_vlan), VLAN_ID);
	want_len = pkt_build(want, &out_wan);
	ok &= vlan_step("tagged, fast path: tag popped", if_lan, frame, len,
			XDP_REDIRECT, XNAT_FWD_FAST, want, want_len);
	/* Untagged LAN to the VLAN on the same port: routed, tag pushed. */
	len = pkt_build(frame, &lan_to_vlan);
	want_len = vlan_tag(want, pkt_build(want, &lan_to_vlan_out), VLAN_ID);
	ok &= vlan_step("untagged LAN to VLAN 100: tag pushed", if_lan, frame,
			len, XDP_REDIRECT, XNAT_FWD_SLOW, want, want_len);
	/* VLANs xnat does not run on, and priority tags, are the kernel's. */
	len = vlan_tag(frame, pkt_build(frame, &in_vlan), 200);
	ok &= vlan_step("tagged VLAN 200 (not ours)", if_lan, frame, len,
			XDP_PASS, XNAT_PASS_VLAN, NULL, 0);
	len = vlan_tag(frame, pkt_build(frame, &in_vlan), 0);
	ok &= vlan_step("priority tag (VLAN 0)", if_lan, frame, len, XDP_PASS,
			XNAT_PASS_VLAN, NULL, 0);

	bpf_map_delete_elem(vlans_fd, &vk);
	bpf_map_delete_elem(ifaces_fd, &vdev);
	return ok;
}

/*
 * A connection the kernel forwarded (its conntrack has it) stays the
 * kernel's: XDP must not open a second, differently NATed flow for it. The
 * kernel sees one real packet: conntrack is switched on with an nft rule,
 * the frame is sent into lan0 through its veth peer and waited for on
 * wan0's peer (so the entry is confirmed), then the same tuple is run
 * through the program from both sides.
 */
static bool test_kernel_flow(void)
{
	static const struct fixture lan = {
		.name = "lan packet of a kernel flow", UDP_OUT(43000, 53),
		.verdict = XDP_PASS, .reason = XNAT_PASS_KERNEL_FLOW };
	static const struct fixture wan = {
		.name = "wan reply of a kernel flow", .ingress = WAN,
		.in = { FROM_WAN, .saddr = WAN_GW, .daddr = LAN_HOST,
			.proto = IPPROTO_UDP, .sport = 53, .dport = 43000 },
		.verdict = XDP_PASS, .reason = XNAT_PASS_KERNEL_FLOW };
	struct timeval tv = { .tv_sec = 2 };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	uint8_t frame[PKT_MAX], buf[PKT_MAX];
	int tx = -1, rx = -1, i;
	struct pkt_spec in = lan.in;
	bool seen = false, ok = false;
	size_t len;

	if (sh("nft add table ip xnat_test && "
	       "nft add chain ip xnat_test forward_chain '{ type filter "
	       "hook forward priority 0; policy accept; }' && "
	       "nft add rule ip xnat_test forward_chain ct state new accept"))
		return ASSERT_TRUE(false, "nft rules for conntrack");
	tx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	rx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (!ASSERT_TRUE(tx >= 0 && rx >= 0, "packet sockets"))
		goto out;
	sll.sll_ifindex = if_nametoindex("wan0p");
	if (!ASSERT_OK(bind(rx, (struct sockaddr *)&sll, sizeof(sll)), "bind wan0p") ||
	    !ASSERT_OK(setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)),
		       "SO_RCVTIMEO"))
		goto out;
	len = pkt_build(frame, &in);
	sll.sll_ifindex = if_nametoindex("lan0p");
	if (!ASSERT_EQ(sendto(tx, frame, len, 0, (struct sockaddr *)&sll,
			      sizeof(sll)), (long long)len, "send into lan0"))
		goto out;
	/* Bounded: other frames (IPv6 ND, MLD) may come first. */
	for (i = 0; i < 64 && !seen; i++) {
		ssize_t n = recv(rx, buf, sizeof(buf), 0);
		const struct pkt_v4_udp *p = (const void *)buf;

		if (n < 0)
			break;
		seen = n >= (ssize_t)sizeof(*p) &&
		       p->eth.h_proto == htons(ETH_P_IP) &&
		       p->ip.protocol == IPPROTO_UDP &&
		       p->udp.source == htons(43000);
	}
	if (!ASSERT_TRUE(seen, "the kernel forwarded the frame to wan0"))
		goto out;
	ok = run_fixture(&lan);
	ok &= run_fixture(&wan);
out:
	if (tx >= 0)
		close(tx);
	if (rx >= 0)
		close(rx);
	sh("nft delete table ip xnat_test");
	return ok;
}

/* Set the last-seen time of the flow entry KEY to 1 ns. */
static bool flow_age(const struct flow_key *key)
{
	struct flow_value v;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, key, &v), "flow entry"))
		return false;
	v.last_seen_ns = 1;
	return ASSERT_OK(bpf_map_update_elem(flows_fd, key, &v, BPF_EXIST),
			 "flow entry update");
}

static bool flow_refreshed(const struct flow_key *key, bool want)
{
	struct flow_value v;

	if (!ASSERT_OK(bpf_map_lookup_elem(flows_fd, key, &v), "flow entry"))
		return false;
	return want ? ASSERT_TRUE(v.last_seen_ns > 1, "entry refreshed") :
		      ASSERT_EQ(v.last_seen_ns, 1, "entry not refreshed");
}

/*
 * RFC 4787 REQ-6: outbound UDP keeps a flow (and so its mapping) alive,
 * inbound only with [nat] inbound_refresh. Checked on the entries' last
 * seen times, which the test sets back first: no clock involved.
 */
static bool test_udp_refresh(void)
{
	struct flow_key ok_ = flow_key4(LAN_HOST, 40000, WAN_GW, 53,
					IPPROTO_UDP, if_lan);
	struct flow_key rk = flow_key4(WAN_GW, 53, NAT_ADDR, 40000,
				       IPPROTO_UDP, if_wan);
	struct fixture r = { .name = "reply", UDP_REPLY(53, 40000),
			     .verdict = XDP_REDIRECT, .reason = XNAT_FWD_FAST,
			     UDP_REPLY_NAT(53, 40000) };
	struct xnat_config c, saved;
	bool ok = true;

	if (!udp_out(40000, 53, XDP_REDIRECT, XNAT_FWD_SLOW) ||
	    !flow_age(&ok_) || !flow_age(&rk))
		return false;
	ok &= run_fixture(&r);
	ok &= flow_refreshed(&rk, false);
	ok &= udp_out(40000, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	ok &= flow_refreshed(&ok_, true);
	if (!config_get(&saved))
		return false;
	c = saved;
	c.flags |= XNAT_F_INBOUND_REFRESH;
	if (!config_set(&c))
		return false;
	ok &= run_fixture(&r);
	ok &= flow_refreshed(&rk, true);
	ok &= config_set(&saved);
	return ok;
}

/* No NAT address: new LAN->WAN IPv4 connections go to the kernel. */
static bool test_no_nat_addr(void)
{
	struct xnat_config c, saved;
	bool ok;

	if (!config_get(&saved))
		return false;
	c = saved;
	c.nat_addr = 0;
	if (!config_set(&c))
		return false;
	ok = udp_out(42000, 53, XDP_PASS, XNAT_PASS_NO_NAT_ADDR);
	ok &= config_set(&saved);
	ok &= udp_out(42000, 53, XDP_REDIRECT, XNAT_FWD_SLOW);
	return ok;
}

/* The egress port left the devmap: the packet is dropped, not passed. */
static bool test_redirect_fail(void)
{
	__u32 key = if_wan, val = if_wan;
	bool ok;

	if (!udp_out(42100, 53, XDP_REDIRECT, XNAT_FWD_SLOW))
		return false;
	if (!ASSERT_OK(bpf_map_delete_elem(tx_fd, &key), "devmap delete"))
		return false;
	ok = udp_out(42100, 53, XDP_DROP, XNAT_DROP_REDIRECT);
	ok &= ASSERT_OK(bpf_map_update_elem(tx_fd, &key, &val, BPF_ANY),
			"devmap restore");
	ok &= udp_out(42100, 53, XDP_REDIRECT, XNAT_FWD_FAST);
	return ok;
}

/* ---- What a kernel router never forwards ------------------------------ */

/*
 * A NAT router has a default route out of its WAN port. With one, the FIB
 * finds a unicast route for almost any destination, so everything the
 * kernel's input route (ip_route_input_slow(), ip6_rcv_core()) rejects
 * before any lookup must be caught by the program itself. These tests add
 * the default routes for their duration.
 */
#define MAC_BCAST { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }
#define NOT_FWD .verdict = NOT_FORWARDED, .reason = ANY_REASON

/* IPv4 multicast and limited broadcast are for the router (mDNS, SSDP,
 * DHCP DISCOVER), as IPv6 multicast is; never NATed out of the WAN. */
static const struct fixture fx_v4_group_dst[] = {
	{ .name = "mDNS to 224.0.0.251", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST, .dmac = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb },
		  .saddr = LAN_HOST, .daddr = "224.0.0.251",
		  .proto = IPPROTO_UDP, .sport = 5353, .dport = 5353, .ttl = 255 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "SSDP to 239.255.255.250", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST, .dmac = { 0x01, 0x00, 0x5e, 0x7f, 0xff, 0xfa },
		  .saddr = LAN_HOST, .daddr = "239.255.255.250",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 1900, .ttl = 4 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "DHCP DISCOVER 0.0.0.0 to 255.255.255.255", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST, .dmac = MAC_BCAST,
		  .saddr = "0.0.0.0", .daddr = "255.255.255.255",
		  .proto = IPPROTO_UDP, .sport = 68, .dport = 67 },
	  .verdict = XDP_PASS, .reason = XNAT_PASS_LOCAL },
	{ .name = "to 0.0.0.0 (martian destination)", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_HOST, .daddr = "0.0.0.0",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
};

/* Martian sources (RFC 1812 5.3.7; the kernel drops them as such). */
static const struct fixture fx_v4_martian_src[] = {
	{ .name = "from 127.0.0.1", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "127.0.0.1", .daddr = "198.19.99.1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "from 0.0.0.0 to a unicast address", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "0.0.0.0", .daddr = "198.19.99.1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "from multicast 224.0.0.9", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "224.0.0.9", .daddr = "198.19.99.1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "from 255.255.255.255", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "255.255.255.255", .daddr = "198.19.99.1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "from the router's own LAN address", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = LAN_ROUTER, .daddr = "198.19.99.1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "WAN SYN to the port forward from 127.0.0.1", .ingress = WAN,
	  .in = { FROM_WAN, .saddr = "127.0.0.1", .daddr = NAT_ADDR,
		  .proto = IPPROTO_TCP, .sport = 40000, .dport = 8080,
		  .tcp_flags = TCP_SYN },
	  NOT_FWD },
};

/* IPv6: loopback and multicast sources (RFC 4291 2.5.3, 2.7). */
static const struct fixture fx_v6_martian_src[] = {
	{ .name = "from ::1", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "::1", .daddr = "2001:2:0:99::1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "from multicast ff0e::1", .ingress = LAN,
	  .in = { FROM_LAN, .saddr = "ff0e::1", .daddr = "2001:2:0:99::1",
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
};

/* RFC 1812 5.3.4: a unicast IP packet in a link-layer broadcast, or in a
 * frame for another station's MAC (promiscuous port, switch flooding), is
 * not the router's to forward; the kernel drops both (ip_forward() wants
 * PACKET_HOST). No default route needed. */
static const struct fixture fx_l2_not_for_us[] = {
	{ .name = "unicast IP in a broadcast frame", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST, .dmac = MAC_BCAST,
		  .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
	{ .name = "frame for another host's MAC", .ingress = LAN,
	  .in = { .smac = MAC_LAN_HOST, .dmac = { 0x02, 0, 0, 0, 0x01, 0x99 },
		  .saddr = LAN_HOST, .daddr = WAN_GW,
		  .proto = IPPROTO_UDP, .sport = 40000, .dport = 53 },
	  NOT_FWD },
};

/* RFC 1812 5.2.2: a router MUST verify the IPv4 header checksum and
 * discard the packet if it is wrong; the kernel does (ip_rcv_core()). */
static size_t mut_ip_csum_bad(uint8_t *buf, size_t len)
{
	struct pkt_v4_udp *p = (void *)buf;

	p->ip.check ^= htons(0x0101);
	return len;
}

static const struct fixture fx_v4_bad_hdr_csum[] = {
	{ .name = "udp with a wrong IPv4 header checksum", .ingress = LAN,
	  MAL_UDP4, .mutate = mut_ip_csum_bad, NOT_FWD },
};

static bool with_default_routes(const struct fixture *f, size_t n)
{
	bool ok;

	if (sh("ip route add default via " WAN_GW) ||
	    sh("ip -6 route add default via " WAN6_GW))
		ok = ASSERT_TRUE(false, "default routes");
	else
		ok = run_fixtures_each(f, n);
	sh("ip route del default 2>/dev/null; ip -6 route del default 2>/dev/null; true");
	return ok;
}

static bool test_v4_group_dst(void)
{
	return with_default_routes(fx_v4_group_dst, ARRAY_SIZE(fx_v4_group_dst));
}

static bool test_v4_martian_src(void)
{
	return with_default_routes(fx_v4_martian_src,
				   ARRAY_SIZE(fx_v4_martian_src));
}

static bool test_v6_martian_src(void)
{
	return with_default_routes(fx_v6_martian_src,
				   ARRAY_SIZE(fx_v6_martian_src));
}

static bool test_v4_bad_hdr_csum(void)
{
	return run_fixtures_each(fx_v4_bad_hdr_csum,
				 ARRAY_SIZE(fx_v4_bad_hdr_csum));
}

static bool test_l2_not_for_us(void)
{
	return run_fixtures_each(fx_l2_not_for_us, ARRAY_SIZE(fx_l2_not_for_us));
}

/* ---- The test list ---------------------------------------------------- */

#define STEPS(a) .steps = a, .nsteps = ARRAY_SIZE(a)

struct test {
	const char *name;
	bool clean; /* empty the flow table first */
	const struct fixture *steps;
	size_t nsteps;
	bool (*fn)(void);
};

static const struct test tests[] = {
	{ "udp_snat_slow", true, STEPS(fx_udp_slow) },
	{ "udp_snat_fast", false, STEPS(fx_udp_fast) },
	{ "udp_snat_reply", false, STEPS(fx_udp_reply) },
	{ "udp_port_outside_range", true, STEPS(fx_udp_port_map) },
	{ "udp_checksum_zero", true, STEPS(fx_udp_csum0) },
	{ "tcp_snat_flags", true, STEPS(fx_tcp) },
	{ "icmp_echo_id", true, STEPS(fx_icmp) },
	{ "wan_unsolicited", true, STEPS(fx_unsolicited) },
	{ "wan_kernel_port", true, STEPS(fx_wan_in) },
	{ "port_forward", true, STEPS(fx_forward) },
	/* 11 and 12 (pass-up and malformed) follow, one test each */
	{ "ipv6_routed", true, STEPS(fx_ipv6) },
	{ "port_range_bounds", true, STEPS(fx_port_bounds) },
	{ "nat_mapping_and_filtering", true, STEPS(fx_eim_adf) },
	{ "nat_filtering_endpoint_independent", true, .fn = test_filter_eif },
	{ "nat_udp_refresh_outbound_only", true, .fn = test_udp_refresh },
	{ "hairpin_to_port_forward", true, STEPS(fx_hairpin) },
	{ "icmp_error_udp", true, STEPS(fx_icmp_err_udp) },
	{ "icmp_error_tcp", true, STEPS(fx_icmp_err_tcp) },
	{ "icmp_error_echo", true, STEPS(fx_icmp_err_echo) },
	{ "icmp_error_port_forward", true, STEPS(fx_icmp_err_forward) },
	{ "icmp_error_ipv6", true, STEPS(fx_icmp_err_v6) },
	{ "icmp_error_no_flow", true, STEPS(fx_icmp_err_no_flow) },
	{ "icmp_error_from_lan_router", true, STEPS(fx_icmp_err_lan_router) },
	{ "port_collision_two_hosts", true, STEPS(fx_collision) },
	{ "ethernet_padding", true, STEPS(fx_padded) },
	{ "table_full", true, .fn = test_table_full },
	{ "table_full_rollback", true, .fn = test_table_full_rollback },
	{ "fastpath_off", true, .fn = test_fastpath_off },
	{ "ttl_decrement", true, .fn = test_ttl },
	{ "mtu_fast_path", true, STEPS(fx_mtu_fast) },
	{ "csum_edges_udp_ip", true, .fn = test_csum_edges },
	{ "csum_edges_tcp", true, .fn = test_csum_edges_tcp },
	{ "csum_random_flows", true, .fn = test_csum_random },
	{ "no_nat_addr", true, .fn = test_no_nat_addr },
	{ "redirect_fail", true, .fn = test_redirect_fail },
	{ "no_free_port", true, .fn = test_no_port },
	{ "vlan_tags", true, .fn = test_vlan },
	{ "ipv4_fragments", true, .fn = test_fragments },
	/* What a kernel router never forwards (see the fixtures). */
	{ "ipv4_multicast_broadcast_dst", true, .fn = test_v4_group_dst },
	{ "ipv4_martian_src", true, .fn = test_v4_martian_src },
	{ "ipv6_martian_src", true, .fn = test_v6_martian_src },
	{ "l2_frame_not_for_router", true, .fn = test_l2_not_for_us },
	{ "ipv4_bad_header_checksum", true, .fn = test_v4_bad_hdr_csum },
	/* Last: it leaves a conntrack entry behind (port 43000 only). */
	{ "kernel_owns_flow", true, .fn = test_kernel_flow },
};

/* ---- Setup ------------------------------------------------------------ */

static int write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f) {
		fprintf(stderr, "setup: %s: %s\n", path, strerror(errno));
		return -1;
	}
	err = fputs(val, f) < 0;
	err |= fclose(f) != 0;
	if (err)
		fprintf(stderr, "setup: writing %s failed\n", path);
	return err ? -1 : 0;
}

static int check_mac(const char *ifname, const uint8_t *want)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	rc = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (rc || memcmp(ifr.ifr_hwaddr.sa_data, want, ETH_ALEN)) {
		fprintf(stderr, "setup: %s has not the expected MAC\n", ifname);
		return -1;
	}
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int setup_netns(void)
{
	static const char *const cmds[] = {
		"ip link set lo up",
		"ip link add lan0 address 02:00:00:00:01:01 type veth peer name lan0p",
		"ip link add wan0 address 02:00:00:00:02:01 type veth peer name wan0p",
		"ip link set lan0 up",
		"ip link set lan0p up",
		"ip link set wan0 up",
		"ip link set wan0p up",
		"ip addr add 198.18.1.1/24 dev lan0",
		"ip addr add 2001:2:0:1::1/64 dev lan0 nodad",
		"ip addr add 198.19.0.1/24 dev wan0",
		"ip addr add 2001:2:0:2::1/64 dev wan0 nodad",
		"ip neigh add 198.18.1.10 lladdr 02:00:00:00:01:0a dev lan0 nud permanent",
		"ip neigh add 198.19.0.2 lladdr 02:00:00:00:02:02 dev wan0 nud permanent",
		"ip -6 neigh add 2001:2:0:1::10 lladdr 02:00:00:00:01:0a dev lan0 nud permanent",
		"ip -6 neigh add 2001:2:0:2::2 lladdr 02:00:00:00:02:02 dev wan0 nud permanent",
		"ip route add unreachable 198.18.200.0/24",
		/* A port xnat does not run on, for PASS_EGRESS. */
		"ip link add ext0 type veth peer name ext0p",
		"ip link set ext0p up",
		"ip link set ext0 up",
		"ip addr add 198.18.100.1/24 dev ext0",
		/* The VLAN 100 device's stand-in (see test_vlan). */
		/* A VLAN device takes its port's MAC unless told otherwise. */
		"ip link add vl100 address 02:00:00:00:01:01 type veth peer name vl100p",
		"ip link set vl100p up",
		"ip link set vl100 up",
		"ip addr add 198.18.3.1/24 dev vl100",
		"ip neigh add " VLAN_HOST " lladdr 02:00:00:00:04:0a dev vl100 nud permanent",
		"ip neigh add 198.18.100.2 lladdr 02:00:00:00:03:02 dev ext0 nud permanent",
	};
	size_t i;

	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "setup: unshare(CLONE_NEWNET): %s\n",
			strerror(errno));
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (sh(cmds[i]))
			return -1;
	if (write_file("/proc/sys/net/ipv4/ip_forward", "1") ||
	    write_file("/proc/sys/net/ipv6/conf/all/forwarding", "1"))
		return -1;
	if_lan = if_nametoindex("lan0");
	if_wan = if_nametoindex("wan0");
	if (!if_lan || !if_wan) {
		fprintf(stderr, "setup: lan0/wan0 missing\n");
		return -1;
	}
	if (check_mac("lan0", mac_lan0) || check_mac("wan0", mac_wan0))
		return -1;
	return 0;
}

static int setup_bpf(void)
{
	struct xnat_config cfg = {
		.port_min = PORT_MIN,
		.port_max = PORT_MAX,
		.wan_ifindex = if_wan,
		.timeout_tcp_est = 7440,
		.timeout_tcp_trans = 240,
		.timeout_udp = 300,
		.timeout_icmp = 60,
	};
	struct iface_info lan = { .role = XNAT_ROLE_LAN,
				  .mac = MAC_LAN0, .parent = if_lan };
	struct iface_info wan = { .role = XNAT_ROLE_WAN,
				  .mac = MAC_WAN0, .parent = if_wan };
	struct fwd_key fk = { .port = htons(8080), .proto = IPPROTO_TCP };
	struct fwd_value fv = { .port = htons(80) };
	__u32 zero = 0, l = if_lan, w = if_wan;
	int ifaces_fd, fwd_fd, err;

	libbpf_set_print(libbpf_print);
	inet_pton(AF_INET, NAT_ADDR, &cfg.nat_addr);
	inet_pton(AF_INET, LAN_HOST, &fv.addr);

	skel = xnat_bpf__open();
	if (!skel) {
		fprintf(stderr, "setup: xnat_bpf__open failed\n");
		return -1;
	}
	err = bpf_map__set_max_entries(skel->maps.xnat_flows, 2 * FLOW_CONNS);
	if (!err)
		err = xnat_bpf__load(skel);
	if (err) {
		fprintf(stderr, "setup: loading the XDP program: %s\n",
			strerror(-err));
		return -1;
	}
	prog_fd = bpf_program__fd(skel->progs.xdp_xnat);
	flows_fd = bpf_map__fd(skel->maps.xnat_flows);
	stats_fd = bpf_map__fd(skel->maps.xnat_stats);
	config_fd = bpf_map__fd(skel->maps.xnat_config);
	tx_fd = bpf_map__fd(skel->maps.xnat_tx_ports);
	ifaces_fd = bpf_map__fd(skel->maps.xnat_ifaces);
	fwd_fd = bpf_map__fd(skel->maps.xnat_forwards);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "setup: libbpf_num_possible_cpus failed\n");
		return -1;
	}

	/* In the order user/maps.c writes them: ports, forwards, config. */
	if (bpf_map_update_elem(ifaces_fd, &l, &lan, BPF_ANY) ||
	    bpf_map_update_elem(ifaces_fd, &w, &wan, BPF_ANY) ||
	    bpf_map_update_elem(tx_fd, &l, &l, BPF_ANY) ||
	    bpf_map_update_elem(tx_fd, &w, &w, BPF_ANY) ||
	    bpf_map_update_elem(fwd_fd, &fk, &fv, BPF_ANY) ||
	    bpf_map_update_elem(config_fd, &zero, &cfg, BPF_ANY)) {
		fprintf(stderr, "setup: filling the maps: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- main ------------------------------------------------------------- */

static int n_run, n_pass, n_fail;

static void report(const char *name, bool ok)
{
	n_run++;
	if (ok)
		n_pass++;
	else
		n_fail++;
	printf("#%d %s:%s\n", n_run, name, ok ? "OK" : "FAIL");
	fflush(stdout);
}

static void run_test(const struct test *t)
{
	bool ok;

	cur_test = t->name;
	if (t->clean)
		flows_clear();
	ok = t->fn ? t->fn() : run_fixtures(t->steps, t->nsteps);
	report(t->name, ok);
}

static void run_single(const struct fixture *f)
{
	cur_test = f->name;
	flows_clear();
	report(f->name, run_fixture(f));
}

int main(void)
{
	size_t i;

	setvbuf(stderr, NULL, _IOLBF, 0);
	if (geteuid()) {
		fprintf(stderr, "test_xdp: must run as root\n");
		printf("#1 setup:FAIL\n0 passed, 1 failed\n");
		return 1;
	}
	cur_test = "setup";
	if (setup_netns() || setup_bpf()) {
		printf("#1 setup:FAIL\n0 passed, 1 failed\n");
		return 1;
	}

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		run_test(&tests[i]);
		if (!strcmp(tests[i].name, "port_forward")) {
			size_t j;

			for (j = 0; j < ARRAY_SIZE(fx_pass); j++)
				run_single(&fx_pass[j]);
			for (j = 0; j < ARRAY_SIZE(fx_malformed); j++)
				run_single(&fx_malformed[j]);
		}
	}

	printf("%d passed, %d failed\n", n_pass, n_fail);
	xnat_bpf__destroy(skel);
	return n_fail ? 1 : 0;
}
