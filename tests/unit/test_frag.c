// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of fragments (bpf/frag.h): the first fragment of an IPv4
 * datagram NATed as any packet, later ones following its rewrite; IPv6
 * fragments following their flow, also when destination options follow
 * the fragment header; and what a reassembling host needs to
 * stay safe (RFC 1858, RFC 3128, RFC 5722): any fragment overlapping or
 * repeating bytes of its datagram already forwarded is dropped, whichever
 * fragments they came from, in IPv4 and IPv6, while fragments out of order
 * that do not overlap pass; a record expires; its room is bounded.
 * Fixtures and runner: fixture.h.
 */
#include "fixture.h"

/* The protocol in the key of the fragment record of datagram ID (as the key
 * holds it: IPv4's 16 bits first), or -1 when there is none. */
static int frag_rec_proto(uint32_t id)
{
	int fd = bpf_map__fd(skel->maps.xnat_fragments);
	struct frag_key k, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &k)) {
		if (k.id == id)
			return k.proto;
		prev = &k;
	}
	return -1;
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
	uint32_t got_len = 0, id = 0;
	size_t len, want_len;
	bool ok;

	/* First fragment: NATed, MF kept, checksums as for any packet. */
	len = mut_frag_mf(frame, pkt_build(frame, &in));
	want_len = mut_frag_mf(want, pkt_build(want, &out));
	ok = run_expect("first fragment", if_lan, frame, len, 0, XDP_REDIRECT,
			XNAT_FWD_SLOW, got, &got_len);
	ok = ok && expect_bytes(got, got_len, want, want_len, "first fragment");
	memcpy(&id, &f->ip.id, sizeof(f->ip.id));
	ok = ok && ASSERT_EQ(frag_rec_proto(id), IPPROTO_UDP,
			     "record keyed by the IPv4 protocol");

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
		check_fail("fragments of a NATed flow");
	return ok;
}
FIXTURE_TEST("ipv4_fragments", true, .fn = test_fragments);


/* Set the IPv4 fragment offset (bytes, multiple of 8) and MF of a frame. */
static void frag_set(uint8_t *frame, uint16_t off, bool more)
{
	struct pkt_v4_udp *p = (void *)frame;

	p->ip.frag_off = htons((off / 8) | (more ? 0x2000 : 0));
	pkt_ipv4_fix_csum(&p->ip);
}

/* One fragment of a datagram of IN's and what it must get. */
struct frag_try {
	const char *step;
	uint16_t off;
	bool more;
	int verdict, reason;
};

/* The N steps of S in order, stopping at the first that fails. */
static bool frag_tries(const struct pkt_spec *in, const struct frag_try *s,
		       size_t n)
{
	uint8_t frame[PKT_MAX], got[PKT_MAX];
	uint32_t got_len = 0;
	size_t len;

	for (size_t i = 0; i < n; i++) {
		len = pkt_build(frame, in);
		frag_set(frame, s[i].off, s[i].more);
		if (!run_expect(s[i].step, if_lan, frame, len, 0, s[i].verdict,
				s[i].reason, got, &got_len))
			return false;
	}
	return true;
}

/*
 * RFC 1858 / RFC 3128: a later fragment overlapping the first one (here at
 * offset 8, over the UDP ports) or repeating the latest one is dropped;
 * a second first fragment too. A record past its lifetime steers nothing.
 */
static bool test_frag_overlap(void)
{
	struct pkt_spec in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
			       .proto = IPPROTO_UDP, .sport = 40604, .dport = 53,
			       .ip_id = 777 };
	static const struct frag_try steps[] = {
		{ "first fragment", 0, true, XDP_REDIRECT, XNAT_FWD_SLOW },
		{ "overlapping the first", 8, true, XDP_DROP,
		  XNAT_DROP_FRAG_BAD },
		{ "next fragment", 32, true, XDP_REDIRECT, XNAT_FWD_FAST },
		{ "same offset again", 32, false, XDP_DROP, XNAT_DROP_FRAG_BAD },
		{ "second first fragment", 0, true, XDP_DROP,
		  XNAT_DROP_FRAG_BAD },
	}, expired[] = {
		{ "fragment after the record expired", 64, false, XDP_PASS,
		  XNAT_PASS_FRAGMENT },
	};
	int fd = bpf_map__fd(skel->maps.xnat_fragments);
	struct frag_key keys[16], *prev = NULL;
	struct frag_rec r;
	size_t n = 0;
	bool ok;

	ok = frag_tries(&in, steps, ARRAY_SIZE(steps));

	/* Age every record past its lifetime: a later fragment with the id
	 * is no longer this flow's. The keys first, then the updates: an
	 * LRU map's update puts a new element at the head of its bucket, so
	 * updating while walking revisits a bucket of two records forever. */
	while (n < ARRAY_SIZE(keys) && !bpf_map_get_next_key(fd, prev, &keys[n]))
		prev = &keys[n++];
	for (size_t i = 0; i < n; i++) {
		if (!bpf_map_lookup_elem(fd, &keys[i], &r)) {
			r.created_ns = 1;
			bpf_map_update_elem(fd, &keys[i], &r, BPF_EXIST);
		}
	}
	return ok && frag_tries(&in, expired, ARRAY_SIZE(expired));
}
FIXTURE_TEST("frag_overlap", true, .fn = test_frag_overlap);

/* An IPv6 fragment header (RFC 8200 4.5) of NH with offset OFF and M. */
static size_t frag6_build(uint8_t *frame, const struct pkt_spec *s,
			  uint16_t off, bool more, uint32_t id)
{
	uint8_t l4[PKT_MAX];
	size_t len = pkt_build(l4, s), l4_len = len - ETH_HLEN - 40;
	struct pkt_v6_udp *p = (void *)frame;
	uint8_t *fh = frame + ETH_HLEN + 40;

	memcpy(frame, l4, ETH_HLEN + 40);
	p->ip6.nexthdr = 44;
	p->ip6.payload_len = htons(8 + l4_len);
	fh[0] = IPPROTO_UDP;
	fh[1] = 0;
	fh[2] = (off | (more ? 1 : 0)) >> 8;
	fh[3] = (off | (more ? 1 : 0)) & 0xff;
	memcpy(fh + 4, &id, 4);
	memcpy(fh + 8, l4 + ETH_HLEN + 40, l4_len);
	return len + 8;
}

/* IPv6 fragments follow their first fragment's flow; overlaps dropped. */
static bool test_ipv6_fragments(void)
{
	struct pkt_spec in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST,
			       .proto = IPPROTO_UDP, .sport = 53, .dport = 40605 };
	struct fixture open = { .name = "open", .ingress = LAN,
		.in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
			.proto = IPPROTO_UDP, .sport = 40605, .dport = 53 },
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW };
	uint8_t frame[PKT_MAX], got[PKT_MAX];
	uint32_t got_len = 0;
	size_t len;
	bool ok;

	if (!run_fixture(&open))
		return false;
	len = frag6_build(frame, &in, 0, true, htonl(99));
	ok = run_expect("first fragment", if_wan, frame, len, 0, XDP_REDIRECT,
			XNAT_FWD_FAST, got, &got_len);
	ok = ok && ASSERT_EQ(frag_rec_proto(htonl(99)), IPPROTO_UDP,
			     "record keyed by the fragment header's nexthdr");
	len = frag6_build(frame, &in, 1232, false, htonl(99));
	ok = ok && run_expect("later fragment", if_wan, frame, len, 0,
			      XDP_REDIRECT, XNAT_FWD_FAST, got, &got_len);
	len = frag6_build(frame, &in, 8, false, htonl(99));
	ok = ok && run_expect("overlapping the first", if_wan, frame, len, 0,
			      XDP_DROP, XNAT_DROP_FRAG_BAD, got, &got_len);
	len = frag6_build(frame, &in, 1232, false, htonl(100));
	ok = ok && run_expect("later fragment, unknown datagram", if_wan,
			      frame, len, 0, XDP_PASS, XNAT_PASS_FRAGMENT, got,
			      &got_len);
	return ok;
}
FIXTURE_TEST("ipv6_fragments", true, .fn = test_ipv6_fragments);

/*
 * Fragment ID of the datagram S (UDP, from the WAN gateway) carried
 * behind a destination options header, as a host sends it (RFC 8200 4.1
 * order: the fragment header, then the options, which are part of the
 * fragmentable part): the first fragment (FIRST) holds the options and the
 * first 40 bytes after them, the UDP header included; the other one the
 * rest, at offset 48. Every fragment header's next header says 60, the
 * options; only the first fragment shows that UDP follows them.
 */
#define FRAG6_CUT 48
static size_t frag6_opts_build(uint8_t *frame, const struct pkt_spec *s,
			       bool first, uint32_t id)
{
	const size_t hdrs = ETH_HLEN + 40;
	uint8_t whole[PKT_MAX], opts[8];
	size_t len, off, n;
	uint16_t plen;

	pkt_ext_destopts(opts, IPPROTO_UDP);
	len = pkt_v6_ext_insert(whole, pkt_build(whole, s), PKT_NH_DEST, opts,
				sizeof(opts));
	off = first ? 0 : FRAG6_CUT;
	n = first ? FRAG6_CUT : len - hdrs - FRAG6_CUT;
	memset(frame, 0, PKT_MAX);
	memcpy(frame, whole, hdrs);
	pkt_ext_frag(frame + hdrs, PKT_NH_DEST, off, first, id);
	memcpy(frame + hdrs + 8, whole + hdrs + off, n);
	frame[ETH_HLEN + 6] = PKT_NH_FRAGMENT;
	plen = htons(8 + n);
	memcpy(frame + ETH_HLEN + 4, &plen, 2);
	return hdrs + 8 + n;
}

/* Send fragment FIRST (or the other one) of datagram ID of IN, expect
 * VERDICT and REASON, and when forwarded OUT's, byte for byte. */
static bool frag6_opts_run(const char *step, const struct pkt_spec *in,
			   const struct pkt_spec *out, bool first, uint32_t id,
			   int verdict, int reason)
{
	uint8_t frame[PKT_MAX], want[PKT_MAX], got[PKT_MAX];
	uint32_t got_len = 0;
	size_t len = frag6_opts_build(frame, in, first, id), want_len;

	if (!run_expect(step, if_wan, frame, len, 0, verdict, reason, got,
			&got_len))
		return false;
	if (verdict != XDP_REDIRECT)
		return true;
	want_len = frag6_opts_build(want, out, first, id);
	return check_forwarded(frame, len, got, got_len) &
	       expect_bytes(got, got_len, want, want_len, step);
}

/*
 * A datagram whose fragments carry destination options after the
 * fragment header: the record is keyed by the fragment header's next
 * header (60), which every fragment has, so the later fragment finds its
 * flow, and a copy of it is refused against the record's ranges. Out of
 * order, the later fragment that overtook its first goes to the kernel and
 * the first must follow it there, or the kernel could never reassemble the
 * datagram.
 */
static bool test_ipv6_fragments_destopts(void)
{
	static const struct fixture open = { .name = "open", .ingress = LAN,
		.in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
			.proto = IPPROTO_UDP, .sport = 40612, .dport = 53 },
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW };
	struct pkt_spec in = { FROM_WAN, .saddr = WAN6_GW, .daddr = LAN6_HOST,
			       .proto = IPPROTO_UDP, .sport = 53,
			       .dport = 40612, .payload = big_payload,
			       .payload_len = 64, .ttl = 64 };
	struct pkt_spec out = in;
	bool ok, keyed;

	memcpy(out.smac, mac_lan0, ETH_ALEN);
	memcpy(out.dmac, (uint8_t[])MAC_LAN_HOST, ETH_ALEN);
	out.ttl = 63;
	ok = run_fixture(&open) &&
	     frag6_opts_run("first fragment", &in, &out, true, htonl(101),
			    XDP_REDIRECT, XNAT_FWD_FAST);
	/* Reported, and the later fragments still sent: what they meet
	 * with another key is the point. */
	keyed = ok && ASSERT_EQ(frag_rec_proto(htonl(101)), PKT_NH_DEST,
				"record keyed by the fragment header's nexthdr");
	ok = ok && frag6_opts_run("later fragment", &in, &out, false,
				  htonl(101), XDP_REDIRECT, XNAT_FWD_FAST);
	ok = ok && frag6_opts_run("copy of the later fragment", &in, &out,
				  false, htonl(101), XDP_DROP,
				  XNAT_DROP_FRAG_BAD);
	/* Another datagram, out of order: run whatever the first found. */
	ok = frag6_opts_run("later fragment first", &in, &out, false,
			    htonl(102), XDP_PASS, XNAT_PASS_FRAGMENT) &&
	     frag6_opts_run("its first fragment follows it up", &in, &out,
			    true, htonl(102), XDP_PASS, XNAT_PASS_FRAGMENT) &&
	     ok;
	return ok && keyed;
}
FIXTURE_TEST("ipv6_fragments_destopts", true,
	     .fn = test_ipv6_fragments_destopts);

/* ---- Overlaps among all of a datagram's fragments ------------------------ */

/* A fragment of a scripted datagram: its offset and data length (bytes),
 * MF, and whether it must be forwarded (else dropped as drop_frag_bad). */
struct frag_step {
	const char *what;
	uint16_t off, data;
	bool more, ok;
};

#define D 40 /* the data of a full fragment below: UDP header + 32 bytes */

/* In order of arrival. The first fragment (offset 0) is the only one with
 * the UDP header the flow is found by; the others' data is opaque. */
static const struct frag_step out_of_order[] = {
	{ "first", 0, D, true, true },
	{ "fourth before the second", 3 * D, D, true, true },
	{ "second", D, D, true, true },
	{ "third fills the hole", 2 * D, D, true, true },
	{ "last", 5 * D, D, false, true },
	{ "fifth", 4 * D, D, true, true },
	{ "copy of the third, datagram complete", 2 * D, D, true, false },
};

/* The second and third overlap each other, neither of them the first
 * fragment nor the latest one. */
static const struct frag_step middle_overlap[] = {
	{ "first", 0, D, true, true },
	{ "second", 2 * D, D, true, true },
	{ "third", 4 * D, D, true, true },
	{ "over the second's tail", 2 * D + 8, D, true, false },
	{ "copy of the second", 2 * D, D, true, false },
	{ "inside the second (teardrop)", 2 * D + 16, 8, true, false },
	{ "dropped ones left no trace", D, D, true, true },
	{ "last", 5 * D, D, false, true },
};

/* Teardrop: a second fragment that starts and ends inside the first. */
static const struct frag_step teardrop[] = {
	{ "first", 0, D, true, true },
	{ "inside the first", 16, 8, false, false },
	{ "the real second", D, D, false, true },
};

/* More holes at once than the record has ranges: the fragment that needs
 * one more is dropped; once a hole is filled (two ranges merge) there is
 * room again. */
static const struct frag_step many_holes[] = {
	{ "first", 0, D, true, true },
	{ "hole 1", 2 * D, D, true, true },
	{ "hole 2", 4 * D, D, true, true },
	{ "hole 3", 6 * D, D, true, true },
	{ "hole 4", 8 * D, D, true, true },
	{ "hole 5", 10 * D, D, true, true },
	{ "hole 6", 12 * D, D, true, true },
	{ "hole 7", 14 * D, D, true, true },
	{ "hole 8: no room", 16 * D, D, true, false },
	{ "hole 1 filled", D, D, true, true },
	{ "hole 8: room again", 16 * D, D, true, true },
};

_Static_assert(XNAT_FRAG_SPANS == 8, "many_holes is written for 8 ranges");

static const uint8_t zeros[D];

/* Send the fragments STEPS (N of them) of datagram ID of flow IN (built by
 * pkt_build from the LAN host, IPv4; from the WAN gateway, IPv6) and check
 * each verdict. */
static bool run_datagram(const char *name, const struct pkt_spec *in,
			 int ifindex, uint32_t id, const struct frag_step *steps,
			 size_t n)
{
	uint8_t frame[PKT_MAX], got[PKT_MAX];
	char what[128];
	uint32_t got_len;
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		const struct frag_step *st = &steps[i];
		struct pkt_spec s = *in;
		size_t len;

		s.payload = zeros;
		s.payload_len = st->data - 8;
		s.ip_id = id;
		if (strchr(s.saddr, ':')) {
			len = frag6_build(frame, &s, st->off, st->more, htonl(id));
		} else {
			len = pkt_build(frame, &s);
			frag_set(frame, st->off, st->more);
		}
		snprintf(what, sizeof(what), "%s: %s", name, st->what);
		got_len = sizeof(got);
		ok = run_expect(what, ifindex, frame, len, 0,
				st->ok ? XDP_REDIRECT : XDP_DROP,
				st->ok ? XNAT_FWD_FAST : XNAT_DROP_FRAG_BAD,
				got, &got_len) && ok;
	}
	return ok;
}

#define RUN_DATAGRAM(in, ifindex, id, steps) \
	run_datagram(#steps, in, ifindex, id, steps, ARRAY_SIZE(steps))

static bool test_frag_spans_v4(void)
{
	static const struct fixture open = { .name = "open", .ingress = LAN,
		.in = { FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW,
			.proto = IPPROTO_UDP, .sport = 40610, .dport = 53 },
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW };
	const struct pkt_spec *in = &open.in;

	return run_fixture(&open) &&
	       RUN_DATAGRAM(in, if_lan, 1001, out_of_order) &
	       RUN_DATAGRAM(in, if_lan, 1002, middle_overlap) &
	       RUN_DATAGRAM(in, if_lan, 1003, teardrop) &
	       RUN_DATAGRAM(in, if_lan, 1004, many_holes);
}
FIXTURE_TEST("frag_spans_ipv4", true, .fn = test_frag_spans_v4);

static bool test_frag_spans_v6(void)
{
	static const struct fixture open = { .name = "open", .ingress = LAN,
		.in = { FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW,
			.proto = IPPROTO_UDP, .sport = 40611, .dport = 53 },
		.verdict = XDP_REDIRECT, .reason = XNAT_FWD_SLOW };
	static const struct pkt_spec reply = { FROM_WAN, .saddr = WAN6_GW,
		.daddr = LAN6_HOST, .proto = IPPROTO_UDP, .sport = 53,
		.dport = 40611 };

	return run_fixture(&open) &&
	       RUN_DATAGRAM(&reply, if_wan, 2001, out_of_order) &
	       RUN_DATAGRAM(&reply, if_wan, 2002, middle_overlap) &
	       RUN_DATAGRAM(&reply, if_wan, 2003, teardrop) &
	       RUN_DATAGRAM(&reply, if_wan, 2004, many_holes);
}
FIXTURE_TEST("frag_spans_ipv6", true, .fn = test_frag_spans_v6);

FIXTURE_MAIN_REGISTERED()
