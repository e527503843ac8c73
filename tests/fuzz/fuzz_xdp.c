// SPDX-License-Identifier: GPL-2.0-only
/*
 * The data-path fuzzer behind `make fuzz` (tests/fuzz/run.sh runs it).
 * libFuzzer mutates frames; each input is one frame run through the XDP
 * program by BPF_PROG_RUN on the LAN or the WAN port of the unit tests'
 * testbed (tests/unit/fixture.c: a network namespace with routes and
 * neighbours, the maps filled as user/maps.c fills them), with flows
 * already installed by sending their real first packets. State carries
 * over from input to input (flows the fuzzer opens, fragment records) and
 * goes back to that baseline every RESET_EVERY inputs.
 *
 * Coverage is the BPF program's: the program is built with -DXNAT_FUZZ
 * (bpf/fuzz.h), which counts every place that stops a packet and the marked
 * decisions in a .bss array; after each run the harness copies it into
 * libFuzzer's extra counters. The harness itself is not instrumented.
 *
 * Input: byte 0 selects the port (bit 0: WAN) and config flags for this
 * packet (bit 1 fast path off, bit 2 endpoint-independent filtering, bit 3
 * inbound refresh, bit 4 offload mode, bits 5 and 6 make the IPv4 header
 * and the L4 checksums valid before the run, bit 7 clears the NAT address
 * as before the WAN has one); the rest is the frame.
 *
 * Every run is checked (an independent parser below, checksums by
 * tests/unit/csum_oracle.h), and a violation aborts, which libFuzzer
 * reports as a crash with the input saved:
 *  - the verdict is never XDP_ABORTED, the program goes through count()
 *    exactly once, and the reason's kind matches the verdict (fwd_*
 *    redirect, pass_* pass, drop_* drop); every RESET_EVERY runs and at
 *    the end the stats map must hold exactly the runs' counts;
 *  - a frame passed to the kernel or dropped is unmodified;
 *  - a forwarded frame was well formed and is well formed, its TTL went
 *    down by one, its IPv4 header checksum verifies, and its TCP, UDP,
 *    ICMP checksums (and a quoted header's, for ICMP errors) verify from
 *    scratch if and only if the input's did (for a first fragment: the
 *    checksum's partial sum is preserved); IPv6 is forwarded unchanged;
 *  - a frame from the WAN reaches the LAN only through a flow opened from
 *    the LAN, a port forward or a mapping open to inbound traffic.
 * The inputs since the last reset are written to fuzz-history.bin on a
 * violation: FUZZ_PRELUDE=fuzz-history.bin replays them before a crash
 * input, to reproduce a violation that depends on state.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <net/if.h>
#include <linux/if_link.h>
#include "csum_oracle.h"
#include "fixture.h"

/* bpf/fuzz.h's array; the program's counters come first in the extra
 * counters, then one per (reason, port). */
#define COV_SLOTS 1024
/* The fixture's flow table holds 8 connections, 6 of them the baseline's:
 * a frequent reset keeps room for the flows the fuzzer opens. */
#define RESET_EVERY 512
#define FRAME_MAX PKT_MAX

#define CTL_WAN (1u << 0)
#define CTL_FLAGS_SHIFT 1 /* bits 1-4: XNAT_F_* bits 0-3 */
/* Checksums a mutation broke are made valid again before the run, so the
 * fuzzer gets past the IPv4 header check and the L4 one. */
#define CTL_FIX_IP (1u << 5)
#define CTL_FIX_L4 (1u << 6)
/* The WAN address not known yet ([nat] address = auto before DHCP). */
#define CTL_NO_NAT_ADDR (1u << 7)
#define CTL_FLAGS_MASK (XNAT_F_FASTPATH_OFF | XNAT_F_FILTER_EIF | \
			XNAT_F_INBOUND_REFRESH | XNAT_F_OFFLOAD)

__attribute__((section("__libfuzzer_extra_counters"), used))
static uint8_t extra_counters[COV_SLOTS + 2 * XNAT_REASON_MAX];

static uint32_t sites;              /* XNAT_COV() expansions in the program */
static uint8_t ever[COV_SLOTS];     /* reached at least once */
static uint64_t reason_runs[XNAT_REASON_MAX]; /* by the harness's count */
static bool reason_ever[XNAT_REASON_MAX];       /* over the whole campaign */
static struct xnat_counter stats_base[XNAT_REASON_MAX];
static uint64_t runs, since_reset;
static struct xnat_config base_cfg;
static uint32_t cur_flags;
static int frags_fd, fwd_fd, peers_fd;

/* Inputs since the last reset, for fuzz-history.bin. */
static uint8_t *history;
static size_t history_len;
#define HISTORY_MAX ((size_t)RESET_EVERY * (FRAME_MAX + 3))

/* WAN first fragments forwarded to the LAN, so their later fragments are
 * known to belong to an authorized datagram (a small ring). */
struct datagram {
	uint32_t saddr, daddr;
	uint16_t id;
	uint8_t proto;
};
static struct datagram wan_datagrams[256];
static unsigned int wan_datagrams_n;

/* ---- An independent parser ------------------------------------------ */

enum l4_sum { L4_NONE, L4_VALID, L4_INVALID, L4_UNCHECKED /* UDP csum 0 */ };

struct parsed {
	const uint8_t *f;
	size_t len;
	uint16_t vid;
	int family;             /* 4, 6, 0: not IP */
	const uint8_t *ip;
	size_t l3_len;          /* tot_len, or 40 + payload_len */
	unsigned int ihl;
	uint8_t ttl, proto;
	bool later, first;      /* fragment offset > 0; MF with offset 0 */
	const uint8_t *l4;
	size_t l4_len;
	bool ip_sum_ok;
	enum l4_sum l4_sum;
	uint16_t l4_partial;    /* first fragments: the partial sum */
	bool icmp_error;
	const uint8_t *quote;   /* ICMP error: the quoted IP header */
	size_t quote_len;
	const char *malformed;  /* NULL: well formed and forwardable */
};

static uint16_t get16(const uint8_t *b) { return (uint16_t)(b[0] << 8 | b[1]); }

static bool v4_martian(const uint8_t *s, const uint8_t *d)
{
	return s[0] == 0 || s[0] == 127 || s[0] >= 224 || d[0] == 0 ||
	       d[0] == 127 || d[0] >= 224;
}

static bool v6_bad(const uint8_t *a, bool src)
{
	static const uint8_t zero[16];

	if (a[0] == 0xff || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80))
		return true; /* multicast, link-local */
	if (!memcmp(a, zero, 15) && (a[15] == 0 || a[15] == 1))
		return true; /* unspecified, loopback */
	return false;
}

static bool is_icmp_error(uint8_t proto, uint8_t type)
{
	if (proto == IPPROTO_ICMP)
		return type == 3 || type == 11 || type == 12;
	return type >= 1 && type <= 4;
}

/* The L4 checks of a non-later fragment. */
static const char *l4_malformed(struct parsed *p)
{
	switch (p->proto) {
	case IPPROTO_TCP:
		if (p->l4_len < 20)
			return "TCP header truncated";
		if ((p->l4[12] >> 4) < 5 || (size_t)(p->l4[12] >> 4) * 4 > p->l4_len)
			return "TCP data offset";
		return NULL;
	case IPPROTO_UDP:
		if (p->l4_len < 8)
			return "UDP header truncated";
		if (get16(p->l4 + 4) < 8 || (!p->first && get16(p->l4 + 4) > p->l4_len))
			return "UDP length";
		return NULL;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (p->l4_len < 8)
			return "ICMP header truncated";
		return NULL;
	}
	return NULL;
}

static uint64_t pseudo_sum(const struct parsed *p)
{
	if (p->family == 4)
		return csum_oracle_add(0, p->ip + 12, 8, -1) + p->proto;
	return csum_oracle_add(0, p->ip + 8, 32, -1) + p->proto;
}

/* Checksum state of the L4 segment. */
static void l4_checksum(struct parsed *p)
{
	bool pseudo = p->proto != IPPROTO_ICMP;
	uint64_t acc;

	p->l4_sum = L4_NONE;
	if (p->later || p->malformed)
		return;
	if (p->proto != IPPROTO_TCP && p->proto != IPPROTO_UDP &&
	    p->proto != IPPROTO_ICMP && p->proto != IPPROTO_ICMPV6)
		return;
	if (p->proto == IPPROTO_UDP && p->family == 4 && !get16(p->l4 + 6)) {
		p->l4_sum = L4_UNCHECKED;
		return;
	}
	/* Addresses, protocol and the bytes present: what NAT may change
	 * is in here, the length (which it never changes) is not. */
	acc = pseudo ? pseudo_sum(p) : 0;
	acc = csum_oracle_add(acc, p->l4, p->l4_len, -1);
	p->l4_partial = csum_oracle_fold(acc);
	if (p->first)
		return;
	if (pseudo)
		acc += p->l4_len; /* the pseudo-header's length (RFC 793, 8200) */
	p->l4_sum = csum_oracle_fold(acc) == 0xffff ? L4_VALID : L4_INVALID;
}

static void parse(struct parsed *p, const uint8_t *f, size_t len)
{
	size_t off = 14;
	uint16_t type;

	memset(p, 0, sizeof(*p));
	p->f = f;
	p->len = len;
	p->malformed = "not IP";
	if (len < 14)
		return;
	type = get16(f + 12);
	if (type == ETH_P_8021Q) {
		if (len < 18)
			return;
		p->vid = get16(f + 14) & 0xfff;
		type = get16(f + 16);
		off = 18;
	}
	p->ip = f + off;
	if (type == ETH_P_IP) {
		const uint8_t *ip = p->ip;
		size_t avail = len - off;
		uint16_t fo;

		p->family = 4;
		p->malformed = "IPv4 header truncated";
		if (avail < 20)
			return;
		p->ihl = (ip[0] & 0xf) * 4;
		p->l3_len = get16(ip + 2);
		p->ttl = ip[8];
		p->proto = ip[9];
		p->malformed = "IPv4 version, IHL or total length";
		if ((ip[0] >> 4) != 4 || p->ihl < 20 || p->l3_len < p->ihl ||
		    p->l3_len > avail)
			return;
		p->ip_sum_ok = csum_oracle_ipv4_hdr_ok(ip);
		fo = get16(ip + 6);
		p->later = fo & 0x1fff;
		p->first = !p->later && (fo & 0x2000);
		p->l4 = ip + p->ihl;
		p->l4_len = p->l3_len - p->ihl;
		p->malformed = !p->ip_sum_ok ? "IPv4 header checksum" :
			       p->ttl < 1 ? "TTL 0" :
			       v4_martian(ip + 12, ip + 16) ? "martian address" :
			       NULL;
	} else if (type == ETH_P_IPV6) {
		const uint8_t *ip6 = p->ip;
		size_t avail = len - off;

		p->family = 6;
		p->malformed = "IPv6 header truncated";
		if (avail < 40)
			return;
		p->l3_len = 40 + get16(ip6 + 4);
		p->ttl = ip6[7];
		p->proto = ip6[6];
		p->malformed = "IPv6 version or payload length";
		if ((ip6[0] >> 4) != 6 || p->l3_len > avail)
			return;
		p->l4 = ip6 + 40;
		p->l4_len = p->l3_len - 40;
		p->malformed = p->ttl < 1 ? "hop limit 0" :
			       v6_bad(ip6 + 8, true) || v6_bad(ip6 + 24, false) ?
			       "martian address" : NULL;
	} else {
		return;
	}
	if (!p->malformed && !p->later)
		p->malformed = l4_malformed(p);
	l4_checksum(p);
	if (!p->malformed && !p->later &&
	    (p->proto == IPPROTO_ICMP || p->proto == IPPROTO_ICMPV6) &&
	    is_icmp_error(p->proto, p->l4[0])) {
		p->icmp_error = true;
		p->quote = p->l4 + 8;
		p->quote_len = p->l4_len - 8;
	}
}

/* ---- Checks ----------------------------------------------------------- */

static void hexdump(const char *tag, const uint8_t *b, size_t len)
{
	size_t i;

	fprintf(stderr, "  %s (%zu bytes):", tag, len);
	for (i = 0; i < len; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n    ", b[i]);
	fputc('\n', stderr);
}

static void history_dump(void)
{
	int fd = open("fuzz-history.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, history, history_len) != (ssize_t)history_len)
		fprintf(stderr, "fuzz: writing fuzz-history.bin: %s\n",
			strerror(errno));
	else
		fprintf(stderr, "fuzz: the %llu inputs since the last reset are "
			"in fuzz-history.bin (FUZZ_PRELUDE replays them)\n",
			(unsigned long long)since_reset);
	if (fd >= 0)
		close(fd);
}

static const uint8_t *cur_in;
static size_t cur_in_len;
static const uint8_t *cur_out;
static size_t cur_out_len;
static uint32_t cur_verdict, cur_reason, cur_side;

static void __attribute__((noreturn, format(printf, 1, 2)))
violation(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\nfuzz: INVARIANT VIOLATED after %llu packets: ",
		(unsigned long long)runs);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  ingress %s, verdict %s, reason %s, flags 0x%x\n",
		cur_side ? "WAN" : "LAN", verdict_name(cur_verdict),
		reason_name(cur_reason), cur_flags);
	if (cur_in)
		hexdump("input", cur_in, cur_in_len);
	if (cur_out)
		hexdump("output", cur_out, cur_out_len);
	history_dump();
	abort();
}

/* The verdict each reason stands for, by its name (fwd_, pass_, drop_);
 * -1 for a kind this harness does not know. Worked out once: comparisons
 * in the loop would feed libFuzzer's dictionary with reason names. */
static int reason_verdict[XNAT_REASON_MAX];

static void reason_verdicts_init(void)
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
static bool reason_fits(uint32_t reason, uint32_t verdict)
{
	if (reason_verdict[reason] < 0)
		return verdict != XDP_ABORTED;
	return verdict == (uint32_t)reason_verdict[reason];
}

/* The stats map holds exactly what the runs counted. */
static void stats_check(void)
{
	struct xnat_counter now[XNAT_REASON_MAX];
	int r;

	stats_read(now);
	for (r = 0; r < XNAT_REASON_MAX; r++)
		if (now[r].packets - stats_base[r].packets != reason_runs[r])
			violation("stats counter %s says %llu packets, the runs "
				  "counted %llu", reason_name(r),
				  (unsigned long long)(now[r].packets -
						       stats_base[r].packets),
				  (unsigned long long)reason_runs[r]);
}

/* 0x0000 and 0xffff are the same one's complement number. */
static bool ones_eq(uint16_t a, uint16_t b)
{
	return a == b || ((a | b) == 0xffff && (a == 0 || b == 0));
}

/* Quoted IPv4 header of an ICMP error: does its checksum verify? -1: no
 * whole option-less IPv4 header quoted. */
static int quote_sum_ok(const struct parsed *p)
{
	if (p->family != 4 || p->quote_len < 20 || (p->quote[0] >> 4) != 4 ||
	    (p->quote[0] & 0xf) != 5)
		return -1;
	return csum_oracle_ipv4_hdr_ok(p->quote);
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

/* The flow key of a WAN packet as the data path keys it (parsing.h's
 * rules, written again from the RFCs' layouts). false: none. */
static bool wan_key(const struct parsed *p, struct flow_key *k)
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
		const uint8_t *q = p->quote, *ql4;

		if (p->family == 4) {
			if (p->quote_len < 28)
				return false;
			proto = q[9];
			memcpy(&k->saddr, q + 16, 4);
			memcpy(&k->daddr, q + 12, 4);
			ql4 = q + 20;
		} else {
			if (p->quote_len < 48)
				return false;
			proto = q[6];
			memcpy(&k->saddr, q + 24, 16);
			memcpy(&k->daddr, q + 8, 16);
			ql4 = q + 40;
		}
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
	struct datagram d = { .proto = p->proto, .id = get16(p->ip + 4) };

	memcpy(&d.saddr, p->ip + 12, 4);
	memcpy(&d.daddr, p->ip + 16, 4);
	return d;
}

static bool datagram_known(const struct datagram *d)
{
	unsigned int i, n = wan_datagrams_n < 256 ? wan_datagrams_n : 256;

	for (i = 0; i < n; i++)
		if (!memcmp(&wan_datagrams[i], d, sizeof(*d)))
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
	}
	return false;
}

static void check_wan_to_lan(const struct parsed *in, bool had_flow,
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
	if (in->first && in->family == 4)
		wan_datagrams[wan_datagrams_n++ % 256] = datagram_of(in);
}

static bool is_mac(const uint8_t *m, const uint8_t *want)
{
	return !memcmp(m, want, ETH_ALEN);
}

static void check_forwarded_frame(const struct parsed *in,
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
	if (out->family == 6 &&
	    (memcmp(in->ip + 8, out->ip + 8, 32) ||
	     memcmp(in->ip + 40, out->ip + 40, in->l3_len - 40)))
		violation("IPv6 addresses or payload changed");
	check_checksums(in, out);
}

/* An XDP_TX reply the router built itself (an ICMP error): well formed,
 * every checksum valid, back to the sender. */
static void check_tx_frame(const struct parsed *in, const struct parsed *out)
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

/* ---- Running ----------------------------------------------------------- */

/* Make the IPv4 header checksum (CTL_FIX_IP) and the L4 checksum
 * (CTL_FIX_L4, whole non-fragments only) valid, where the lengths allow. */
static void fix_checksums(uint8_t *f, size_t len, uint8_t ctl)
{
	size_t off = 14;
	uint16_t type;
	uint8_t *ip, *l4, proto;
	size_t l4_len;
	long coff;

	if (len < 18)
		return;
	type = get16(f + 12);
	if (type == ETH_P_8021Q) {
		type = get16(f + 16);
		off = 18;
	}
	ip = f + off;
	if (type == ETH_P_IP && len - off >= 20) {
		size_t ihl = (ip[0] & 0xf) * 4, tot = get16(ip + 2);

		if (ihl < 20 || ihl > len - off)
			return;
		if (ctl & CTL_FIX_IP)
			pkt_ipv4_fix_csum(ip);
		if (!(ctl & CTL_FIX_L4) || (get16(ip + 6) & 0x3fff) ||
		    tot < ihl || tot > len - off)
			return;
		proto = ip[9];
		l4 = ip + ihl;
		l4_len = tot - ihl;
		coff = pkt_l4_csum_off(proto);
		if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP &&
		     proto != IPPROTO_ICMP) || l4_len < (size_t)coff + 2)
			return;
		l4[coff] = l4[coff + 1] = 0;
		csum_put16(l4 + coff, proto == IPPROTO_ICMP ?
			   csum_oracle_icmp4(l4, l4_len) :
			   csum_oracle_l4_v4(ip + 12, ip + 16, proto, l4,
					     l4_len, coff));
		if (ctl & CTL_FIX_IP)
			pkt_ipv4_fix_csum(ip); /* in case IHL is over 5 */
	} else if (type == ETH_P_IPV6 && len - off >= 40 &&
		   (ctl & CTL_FIX_L4)) {
		proto = ip[6];
		l4 = ip + 40;
		l4_len = get16(ip + 4);
		coff = pkt_l4_csum_off(proto);
		if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP &&
		     proto != IPPROTO_ICMPV6) || l4_len > len - off - 40 ||
		    l4_len < (size_t)coff + 2)
			return;
		l4[coff] = l4[coff + 1] = 0;
		csum_put16(l4 + coff, csum_oracle_l4_v6(ip + 8, ip + 24, proto,
							l4, l4_len, coff));
	}
}

static void set_flags(uint32_t flags)
{
	struct xnat_config c = base_cfg;

	if (flags == cur_flags)
		return;
	c.flags = (base_cfg.flags & ~CTL_FLAGS_MASK) | (flags & CTL_FLAGS_MASK);
	if (flags & CTL_NO_NAT_ADDR)
		c.nat_addr = 0;
	if (!config_set(&c))
		violation("writing the config map failed");
	cur_flags = flags;
}

static void run_packet(const uint8_t *data, size_t size)
{
	static uint8_t frame[FRAME_MAX], out[FRAME_MAX];
	struct flow_value before;
	struct parsed pin, pout;
	struct flow_key key;
	uint32_t out_len = 0, retval = ~0u, len, i;
	uint8_t ctl = size ? data[0] : 0;
	bool keyed = false, had_flow = false;
	int side = ctl & CTL_WAN ? 1 : 0;

	len = size > 1 ? size - 1 : 0;
	if (len > FRAME_MAX)
		len = FRAME_MAX;
	memset(frame, 0, 14);
	memcpy(frame, data + 1, len);
	if (len < 14)
		len = 14; /* the kernel refuses shorter frames */
	fix_checksums(frame, len, ctl);
	set_flags(((ctl >> CTL_FLAGS_SHIFT) & CTL_FLAGS_MASK) |
		  (ctl & CTL_NO_NAT_ADDR));
	parse(&pin, frame, len);
	if (side && pin.family && !pin.malformed) {
		keyed = wan_key(&pin, &key);
		had_flow = keyed && !bpf_map_lookup_elem(flows_fd, &key, &before);
	}

	cur_in = frame;
	cur_in_len = len;
	cur_out = NULL;
	cur_side = side;
	cur_verdict = ~0u;
	cur_reason = ~0u;
	skel->bss->xnat_fuzz_counted = 0;
	if (!xdp_run(side ? if_wan : if_lan, frame, len, 0, out, &out_len,
		     &retval))
		violation("BPF_PROG_RUN failed");
	runs++;
	cur_out = out;
	cur_out_len = out_len;
	cur_verdict = retval;
	cur_reason = skel->bss->xnat_fuzz_reason;

	if (skel->bss->xnat_fuzz_counted != 1)
		violation("the run went through count() %u times",
			  skel->bss->xnat_fuzz_counted);
	if (cur_reason >= XNAT_REASON_MAX)
		violation("reason %u out of range", cur_reason);
	reason_runs[cur_reason]++;
	reason_ever[cur_reason] = true;
	if (retval == XDP_ABORTED)
		violation("XDP_ABORTED");
	if (!reason_fits(cur_reason, retval))
		violation("verdict does not fit the reason");

	/* Coverage: the program's branches, then (reason, port). */
	for (i = 0; i < sites; i++) {
		uint32_t c = skel->bss->xnat_fuzz_cov[i];

		if (!c)
			continue;
		extra_counters[i] = c > 255 ? 255 : c;
		ever[i] = 1;
		skel->bss->xnat_fuzz_cov[i] = 0;
	}
	extra_counters[COV_SLOTS + 2 * cur_reason + side] = 1;

	switch (retval) {
	case XDP_PASS:
	case XDP_DROP:
		if (cur_reason == XNAT_DROP_REDIRECT)
			break; /* rewritten on purpose, never reaches the kernel */
		if (out_len != len || memcmp(out, frame, len))
			violation("a frame passed or dropped was modified");
		break;
	case XDP_REDIRECT:
		parse(&pout, out, out_len);
		check_forwarded_frame(&pin, &pout);
		if (side && is_mac(out + 6, mac_lan0))
			check_wan_to_lan(&pin, had_flow, &before, &key, keyed);
		break;
	case XDP_TX:
		parse(&pout, out, out_len);
		check_tx_frame(&pin, &pout);
		break;
	default:
		violation("unknown verdict %u", retval);
	}
}

/* The first packets of the flows every run starts from, as LAN hosts and
 * a WAN client send them; each must be forwarded. */
static const struct pkt_spec baseline[] = {
	{ FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_UDP,
	  .sport = 40000, .dport = 53 },
	{ FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_TCP,
	  .sport = 40001, .dport = 443, .tcp_flags = TCP_SYN, .seq = 1000 },
	{ FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_ICMP,
	  .icmp_type = 8, .icmp_id = 40002, .icmp_seq = 1 },
	{ FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW, .proto = IPPROTO_UDP,
	  .sport = 40003, .dport = 53 },
	{ FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW, .proto = IPPROTO_TCP,
	  .sport = 40004, .dport = 443, .tcp_flags = TCP_SYN, .seq = 2000 },
	{ FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .proto = IPPROTO_TCP,
	  .sport = 50000, .dport = 8080, .tcp_flags = TCP_SYN, .seq = 3000 },
};

static void baseline_install(void)
{
	uint8_t frame[PKT_MAX], out[PKT_MAX];
	uint32_t out_len, retval;
	struct xnat_counter now[XNAT_REASON_MAX];
	size_t i, len;

	set_flags(0);
	flows_clear();
	/* Connections the program taught the kernel (kernel_adopt_flow, on
	 * the way to pass_mtu or pass_fragment) would make the baseline's
	 * first packets the kernel's. */
	if ((reason_runs[XNAT_PASS_MTU] || reason_runs[XNAT_PASS_FRAGMENT] ||
	     !runs) && sh("conntrack -F 2>/dev/null"))
		abort();
	map_clear(frags_fd, 8192 + 1);
	wan_datagrams_n = 0;
	for (i = 0; i < ARRAY_SIZE(baseline); i++) {
		len = pkt_build(frame, &baseline[i]);
		if (!xdp_run(i == ARRAY_SIZE(baseline) - 1 ? if_wan : if_lan,
			     frame, len, 0, out, &out_len, &retval) ||
		    retval != XDP_REDIRECT) {
			fprintf(stderr, "fuzz: baseline flow %zu not forwarded "
				"(verdict %s, reason %s)\n", i,
				verdict_name(retval),
				reason_name(skel->bss->xnat_fuzz_reason));
			abort();
		}
	}
	/* The stats from here on are the runs'. */
	stats_read(now);
	memcpy(stats_base, now, sizeof(now));
	memset(reason_runs, 0, sizeof(reason_runs));
	memset((void *)skel->bss->xnat_fuzz_cov, 0,
	       sizeof(skel->bss->xnat_fuzz_cov));
	since_reset = 0;
	history_len = 0;
}

static void history_add(const uint8_t *data, size_t size)
{
	if (size > FRAME_MAX + 1)
		size = FRAME_MAX + 1;
	if (history_len + size + 2 > HISTORY_MAX)
		return;
	history[history_len++] = size >> 8;
	history[history_len++] = size & 0xff;
	memcpy(history + history_len, data, size);
	history_len += size;
}

static void one_input(const uint8_t *data, size_t size)
{
	if (since_reset == RESET_EVERY) {
		stats_check();
		baseline_install();
	}
	history_add(data, size);
	since_reset++;
	run_packet(data, size);
}

/* FUZZ_PRELUDE: inputs (2-byte length, bytes) run before the fuzzing. */
static void prelude(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t buf[FRAME_MAX + 1], hdr[2];
	size_t n, count = 0;

	if (!f) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	while (fread(hdr, 1, 2, f) == 2) {
		n = get16(hdr);
		if (n > sizeof(buf) || fread(buf, 1, n, f) != n)
			break;
		one_input(buf, n);
		count++;
	}
	fclose(f);
	fprintf(stderr, "fuzz: replayed %zu inputs from %s\n", count, path);
}

static void report(void)
{
	uint32_t i, reached = 0, reasons_seen = 0;

	if (!skel)
		return;
	stats_check();
	for (i = 0; i < sites; i++)
		reached += ever[i];
	for (i = 0; i < XNAT_REASON_MAX; i++)
		reasons_seen += reason_ever[i];
	fprintf(stderr, "fuzz: reasons never counted:");
	for (i = 0; i < XNAT_REASON_MAX; i++)
		if (!reason_ever[i])
			fprintf(stderr, " %s", reason_name(i));
	fprintf(stderr, "\nfuzz: %llu packets, %u of %u branches of the data "
		"path reached, %u of %u reasons, invariants held\n",
		(unsigned long long)runs, reached, sites, reasons_seen,
		XNAT_REASON_MAX);
}

/* An XDP program attached nowhere makes every BPF_PROG_RUN pay for adding
 * it to the XDP dispatcher and removing it again; attached in generic mode
 * to a port that is down and never carries a packet, the runs skip that. */
static void attach_idle(void)
{
	int ifindex, err;

	if (sh("ip link add fz0 type veth peer name fz0p"))
		return;
	ifindex = if_nametoindex("fz0");
	err = bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_SKB_MODE, NULL);
	if (err)
		fprintf(stderr, "fuzz: attaching to fz0 (runs will be slow): %s\n",
			strerror(-err));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fwd_key fk = { .port = htons(5353), .proto = IPPROTO_UDP };
	struct fwd_value fv = { .port = htons(53) };
	const char *pre = getenv("FUZZ_PRELUDE");

	if (fixture_setup())
		exit(2);
	cur_test = "fuzz";
	reason_verdicts_init();
	sites = skel->rodata->xnat_fuzz_sites;
	if (sites > COV_SLOTS) {
		fprintf(stderr, "fuzz: %u branches, more than %u slots\n", sites,
			COV_SLOTS);
		exit(2);
	}
	frags_fd = bpf_map__fd(skel->maps.xnat_frags);
	fwd_fd = bpf_map__fd(skel->maps.xnat_forwards);
	peers_fd = bpf_map__fd(skel->maps.xnat_peers);
	inet_pton(AF_INET, LAN_HOST, &fv.addr);
	if (bpf_map_update_elem(fwd_fd, &fk, &fv, BPF_ANY)) {
		fprintf(stderr, "fuzz: adding the UDP forward: %s\n",
			strerror(errno));
		exit(2);
	}
	if (!config_get(&base_cfg))
		exit(2);
	cur_flags = base_cfg.flags & CTL_FLAGS_MASK;
	history = malloc(HISTORY_MAX);
	if (!history)
		exit(2);
	attach_idle();
	baseline_install();
	atexit(report);
	if (pre)
		prelude(pre);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one_input(data, size);
	return 0;
}
