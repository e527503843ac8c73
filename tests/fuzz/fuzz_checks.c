// SPDX-License-Identifier: GPL-2.0-only
/*
 * The invariants the fuzzer checks on every run (fuzz.h, fuzz_xdp.c): a
 * reason of the verdict's kind; forwarded frames well formed, TTL-1, with
 * checksums valid after if and only if before; and frames from the WAN
 * reaching the LAN only through a flow the LAN opened, a port forward or
 * a mapping open to them.
 */
#include "csum_oracle.h"
#include "fuzz.h"

/* WAN first fragments forwarded to the LAN, so their later fragments are
 * known to belong to an authorized datagram (a small ring). */
struct datagram {
	uint8_t saddr[16], daddr[16]; /* IPv4: the first 4 bytes */
	uint32_t id;
	uint8_t family, proto;
};
static struct datagram wan_datagrams[256];
static unsigned int wan_datagrams_n;

void wan_datagrams_reset(void)
{
	wan_datagrams_n = 0;
}

/* The verdict each reason stands for, by its name (fwd_, pass_, drop_);
 * -1 for a kind this harness does not know. Worked out once: comparisons
 * in the loop would feed libFuzzer's dictionary with reason names. */
static int reason_verdict[XNAT_REASON_MAX];

void reason_verdicts_init(void)
{
	int r;

	for (r = 0; r < XNAT_REASON_MAX; r++) {
		const char *n = reasons[r].name;

		reason_verdict[r] = !strncmp(n, "fwd_", 4) ? XDP_REDIRECT :
				    !strncmp(n, "pass_", 5) ? XDP_PASS :
				    !strncmp(n, "drop_", 5) ? XDP_DROP : -1;
	}
}

/* Is a run's stop reason of the verdict's kind? */
bool reason_fits(uint32_t reason, uint32_t verdict)
{
	if (reason_verdict[reason] < 0)
		return verdict != XDP_ABORTED;
	return verdict == (uint32_t)reason_verdict[reason];
}

static void check_checksums(const struct parsed *in, const struct parsed *out)
{
	if (out->family == 4 && !out->ip_sum_ok)
		violation("forwarded IPv4 header checksum does not verify");
	if (in->first) {
		if (!ones_eq(in->l4_partial, out->l4_partial))
			violation("first fragment: L4 checksum no longer matches "
				  "the rest of the datagram (partial sum %04x -> %04x)",
				  in->l4_partial, out->l4_partial);
	} else if (in->l4_sum != out->l4_sum) {
		violation("L4 checksum state %d in, %d out (1 valid, 2 invalid, "
			  "3 UDP without checksum)", in->l4_sum, out->l4_sum);
	}
	if (in->icmp_error && quote_sum_ok(in) != quote_sum_ok(out))
		violation("quoted IPv4 header checksum %s in, %s out",
			  quote_sum_ok(in) ? "valid" : "invalid",
			  quote_sum_ok(out) ? "valid" : "invalid");
}

/* parsing.h's keying rules, written again from the RFCs' layouts. */
bool wan_key(const struct parsed *p, struct flow_key *k)
{
	const uint8_t *l4 = p->l4;
	uint8_t proto = p->proto;
	size_t alen = p->family == 4 ? 4 : 16;
	const uint8_t *src = p->ip + (p->family == 4 ? 12 : 8);

	memset(k, 0, sizeof(*k));
	k->family = p->family == 4 ? XNAT_AF_INET : XNAT_AF_INET6;
	k->ifindex = if_wan;
	k->vid = p->vid;
	if (p->later)
		return false;
	if (p->icmp_error) {
		/* The quoted header is laid out as the outer one (SRC); the
		 * quoted packet went the other way: its source is the key's
		 * destination. Its first 8 bytes of L4 are needed. */
		const uint8_t *q = p->quote, *qsrc = q + (src - p->ip);
		size_t hl = p->family == 4 ? 20 : 40;
		const uint8_t *ql4 = q + hl;

		if (p->quote_len < hl + 8)
			return false;
		proto = q[p->family == 4 ? 9 : 6];
		memcpy(&k->saddr, qsrc + alen, alen);
		memcpy(&k->daddr, qsrc, alen);
		k->proto = proto;
		if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
			memcpy(&k->sport, ql4 + 2, 2);
			memcpy(&k->dport, ql4, 2);
		} else {
			memcpy(&k->dport, ql4 + 4, 2); /* the echo request's id */
		}
		return true;
	}
	memcpy(&k->saddr, src, alen);
	memcpy(&k->daddr, src + alen, alen);
	k->proto = proto;
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		memcpy(&k->sport, l4, 2);
		memcpy(&k->dport, l4 + 2, 2);
	} else if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		bool req = l4[0] == (proto == IPPROTO_ICMP ? 8 : 128);

		memcpy(req ? &k->sport : &k->dport, l4 + 4, 2);
	}
	return true;
}

static struct datagram datagram_of(const struct parsed *p)
{
	struct datagram d;
	size_t alen = p->family == 4 ? 4 : 16;
	const uint8_t *src = p->ip + (p->family == 4 ? 12 : 8);

	memset(&d, 0, sizeof(d)); /* IPv4 leaves 12 bytes of each address */
	d.family = (uint8_t)p->family;
	d.proto = p->proto;
	d.id = p->frag_id;
	memcpy(d.saddr, src, alen);
	memcpy(d.daddr, src + alen, alen);
	return d;
}

static bool datagram_same(const struct datagram *a, const struct datagram *b)
{
	return a->family == b->family && a->proto == b->proto &&
	       a->id == b->id && !memcmp(a->saddr, b->saddr, 16) &&
	       !memcmp(a->daddr, b->daddr, 16);
}

static bool datagram_known(const struct datagram *d)
{
	unsigned int i, n = wan_datagrams_n < 256 ? wan_datagrams_n : 256;

	for (i = 0; i < n; i++)
		if (datagram_same(&wan_datagrams[i], d))
			return true;
	return false;
}

/* May this flow entry carry a packet from the WAN into the LAN? NEW: the
 * packet created it. */
static bool entry_admits(const struct flow_value *v, const struct flow_key *k,
			 bool new)
{
	struct fwd_key fk = { .port = k->dport, .proto = k->proto };
	struct nat_peer_key pk = { .remote = k->saddr.v4,
				   .ext_port = k->dport, .proto = k->proto };
	struct nat_endpoint ep;
	struct fwd_value fv;

	if (v->dir == FLOW_DIR_REPLY)
		return true; /* a connection the LAN opened */
	switch (v->nat) {
	case FLOW_NAT_DNAT:
		return !bpf_map_lookup_elem(fwd_fd, &fk, &fv) &&
		       k->daddr.v4 == base_cfg.nat_addr;
	case FLOW_NAT_INBOUND:
		/* Through a mapping: with address-dependent filtering, only
		 * from an address the inside endpoint has sent to. */
		return !new || (cur_flags & XNAT_F_FILTER_EIF) ||
		       !bpf_map_lookup_elem(peers_fd, &pk, &ep);
	case FLOW_NAT_CT: /* the kernel's conntrack accepted it */
		return true;
	case FLOW_NAT_NONE:
		/* Routed IPv6 that [ipv6] inbound lets in: with "open"
		 * anything, else only echo requests (the one kind of ICMPv6
		 * flow the WAN can open). */
		return k->family == XNAT_AF_INET6 &&
		       ((base_cfg.flags & XNAT_F_IPV6_OPEN) ||
			k->proto == IPPROTO_ICMPV6);
	}
	return false;
}

void check_wan_to_lan(const struct parsed *in, bool had_flow,
			     const struct flow_value *before,
			     const struct flow_key *k, bool keyed)
{
	struct flow_value after;

	if (in->later) {
		struct datagram d = datagram_of(in);

		if (!datagram_known(&d))
			violation("a later fragment from the WAN reached the LAN "
				  "without its first fragment");
		return;
	}
	if (!keyed)
		violation("a packet from the WAN without a flow key reached the LAN");
	if (had_flow && entry_admits(before, k, false))
		goto ok;
	if (!bpf_map_lookup_elem(flows_fd, k, &after) &&
	    entry_admits(&after, k, !had_flow))
		goto ok;
	violation("from the WAN into the LAN without a flow opened from the "
		  "LAN, a port forward or an open mapping");
ok:
	if (in->first)
		wan_datagrams[wan_datagrams_n++ % 256] = datagram_of(in);
}

bool is_mac(const uint8_t *m, const uint8_t *want)
{
	return !memcmp(m, want, ETH_ALEN);
}

/*
 * IPv6 is routed, not NATed: addresses and payload leave as they came,
 * except a TCP SYN's options and checksum (MSS clamping may lower the MSS
 * option; the checksum's validity is checked on its own), behind
 * extension headers too (pkt_v6_l4 finds its header).
 */
static bool v6_payload_same(const struct parsed *in, const struct parsed *out)
{
	size_t n = in->l3_len - 40, doff, at;
	uint8_t proto = 0;
	long l4 = pkt_v6_l4(in->ip, n, &proto);
	const uint8_t *i = in->ip, *o = out->ip;

	if (memcmp(in->ip + 8, out->ip + 8, 32) || in->l3_len != out->l3_len)
		return false;
	if (l4 < 0 || proto != IPPROTO_TCP || in->l3_len < (size_t)l4 + 20 ||
	    !(i[l4 + 13] & 0x02))
		return !memcmp(i + 40, o + 40, n);
	at = (size_t)l4;
	doff = (size_t)(i[at + 12] >> 4) * 4;
	if (at + doff > in->l3_len)
		return !memcmp(i + 40, o + 40, n);
	return !memcmp(i + 40, o + 40, at - 40 + 16) &&
	       !memcmp(i + at + 18, o + at + 18, 2) &&
	       !memcmp(i + at + doff, o + at + doff, in->l3_len - at - doff);
}

void check_forwarded_frame(const struct parsed *in,
				  const struct parsed *out)
{
	if (in->malformed)
		violation("forwarded a malformed frame (%s)", in->malformed);
	if (out->malformed)
		violation("forwarded frame is malformed (%s)", out->malformed);
	if (in->family != out->family || in->proto != out->proto)
		violation("forwarded frame changed family or protocol");
	if (out->len != in->len && out->len + 4 != in->len &&
	    out->len != in->len + 4)
		violation("forwarded frame length %zu, arrived %zu",
			  out->len, in->len);
	if (out->ttl != in->ttl - 1)
		violation("TTL %u in, %u out", in->ttl, out->ttl);
	if (!is_mac(out->f + 6, mac_lan0) && !is_mac(out->f + 6, mac_wan0))
		violation("forwarded with a source MAC not the router's");
	if (out->family == 6 && !v6_payload_same(in, out))
		violation("IPv6 addresses or payload changed");
	check_checksums(in, out);
}

/* An XDP_TX reply the router built itself (an ICMP error): well formed,
 * every checksum valid, back to the sender. */
void check_tx_frame(const struct parsed *in, const struct parsed *out)
{
	if (out->malformed)
		violation("XDP_TX frame is malformed (%s)", out->malformed);
	if (out->family == 4 && !out->ip_sum_ok)
		violation("XDP_TX IPv4 header checksum does not verify");
	if (out->l4_sum == L4_INVALID)
		violation("XDP_TX L4 checksum does not verify");
	if (!is_mac(out->f, in->f + 6))
		violation("XDP_TX frame not addressed to the sender");
}
