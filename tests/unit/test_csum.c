// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the checksum updates (bpf/csum.h, flow.h) against the
 * independent oracle (csum_oracle.h): a UDP checksum of zero, the edges of
 * one's complement arithmetic for IPv4, UDP and TCP, and random flows.
 * Fixtures and runner: fixture.h.
 */
#include "csum_oracle.h"
#include "fixture.h"

/* ---- UDP without checksum ---------------------------------------------- */

/* UDP without a checksum, between SA:SP and DA:DP, TTL T. */
#define UDP_NOCSUM(sa, da, sp, dp, t, ...)                                   \
	UDP_PKT(sa, da, sp, dp, __VA_ARGS__, .ttl = t, .udp_csum_zero = true)

static const struct fixture fx_udp_csum0[] = {
	{ "udp csum 0 lan->wan, new flow", LAN, UDP_NOCSUM(LAN_HOST, WAN_GW, 40002, 53, 64, FROM_LAN),
	  FWD(SLOW), .has_out = true, .out = UDP_NOCSUM(NAT_ADDR, WAN_GW, 40002, 53, 63, TO_WAN) },
	{ "udp csum 0 lan->wan, same flow", LAN, UDP_NOCSUM(LAN_HOST, WAN_GW, 40002, 53, 64, FROM_LAN),
	  FWD(FAST), .has_out = true, .out = UDP_NOCSUM(NAT_ADDR, WAN_GW, 40002, 53, 63, TO_WAN) },
	{ "udp csum 0 wan->lan reply", WAN, UDP_NOCSUM(WAN_GW, NAT_ADDR, 53, 40002, 64, FROM_WAN),
	  FWD(FAST), .has_out = true, .out = UDP_NOCSUM(WAN_GW, LAN_HOST, 53, 40002, 63, TO_LAN) },
};

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
 * For the input, then the output of F, whose payload is the two bytes at
 * PL: find the payload that gives an L4 checksum of WANT, and run F so.
 */
static bool run_l4_csum_edge(struct fixture *f, uint8_t pl[2], uint16_t want,
			     const char *proto)
{
	char what[64];
	bool ok = true, found;
	uint32_t v;
	int which;

	snprintf(what, sizeof(what), "a payload for %s checksum 0x%04x", proto,
		 want);
	for (which = 0; which < 2; which++) {
		found = false;
		for (v = 0; v <= 0xffff && !found; v++) {
			pl[0] = v >> 8;
			pl[1] = v & 0xff;
			found = spec_l4_csum(which ? &f->out : &f->in) == want;
		}
		if (!ASSERT_TRUE(found, what))
			return false;
		if (!run_fixture(f)) {
			check_fail("%s checksum 0x%04x on %s (payload %02x%02x)",
				   proto, want, which ? "output" : "input",
				   pl[0], pl[1]);
			ok = false;
		}
	}
	return ok;
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
			check_fail("IPv4 checksum 0x0000 on %s (id 0x%04x)",
			     which ? "output" : "input", f.in.ip_id);
			ok = false;
		}
	}
	f.in.ip_id = f.out.ip_id = 0x1234;

	/* UDP checksum 0xffff (computed zero) in, then out; then TCP 0. */
	return run_l4_csum_edge(&f, pl, 0xffff, "UDP") && ok;
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

	if (!run_fixture(&syn))
		return false;
	f.in.payload = f.out.payload = pl;
	f.in.payload_len = f.out.payload_len = sizeof(pl);
	return run_l4_csum_edge(&f, pl, 0, "TCP");
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
			check_fail("random iteration %d: %s sport %u dport %u", i,
			     proto == IPPROTO_TCP ? "tcp" : "udp", sport, dport);
	}
	return ok;
}

static const struct test tests[] = {
	{ "udp_checksum_zero", true, STEPS(fx_udp_csum0) },
	{ "csum_edges_udp_ip", true, .fn = test_csum_edges },
	{ "csum_edges_tcp", true, .fn = test_csum_edges_tcp },
	{ "csum_random_flows", true, .fn = test_csum_random },
};

FIXTURE_MAIN(tests)
