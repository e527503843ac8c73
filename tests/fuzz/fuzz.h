/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the data-path fuzzer's files share (tests/fuzz/, see fuzz_xdp.c):
 * the input's control byte, the independent frame parser and the
 * checksum fix-ups (fuzz_frame.c), the invariants (fuzz_checks.c), and
 * the run they are checked on, kept by the harness (fuzz_xdp.c).
 */
#ifndef XNAT_FUZZ_HARNESS_H
#define XNAT_FUZZ_HARNESS_H

#include "fixture.h"

#define FRAME_MAX PKT_MAX

/* The control byte, the first of each input. */
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

/* ---- The frame parser (fuzz_frame.c) ---------------------------------- */

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
	uint32_t frag_id;       /* IPv4 id, IPv6 fragment header's id */
	const uint8_t *l4;      /* the transport header, behind IPv6's
				 * extension headers; proto is its type */
	size_t l4_len;
	bool ip_sum_ok;
	enum l4_sum l4_sum;
	uint16_t l4_partial;    /* first fragments: the partial sum */
	bool icmp_error;
	const uint8_t *quote;   /* ICMP error: the quoted IP header */
	size_t quote_len;
	const char *malformed;  /* NULL: well formed and forwardable */
};

static inline uint16_t get16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* Parse F (LEN bytes) from scratch: RFC layouts, no code shared with
 * bpf/parsing.h; p->malformed says why it must not be forwarded. */
void parse(struct parsed *p, const uint8_t *f, size_t len);
/* Make the IPv4 header and L4 checksums valid as CTL asks. */
void fix_checksums(uint8_t *f, size_t len, uint8_t ctl);
/* 0x0000 and 0xffff are the same one's complement number. */
bool ones_eq(uint16_t a, uint16_t b);
/* Does an ICMP error's quoted IPv4 header checksum verify? -1: no whole
 * option-less IPv4 header quoted. */
int quote_sum_ok(const struct parsed *p);

/* ---- The invariants (fuzz_checks.c) ------------------------------------ */

void reason_verdicts_init(void);
bool reason_fits(uint32_t reason, uint32_t verdict);
/* The flow key of a WAN packet as the data path keys it; false: none. */
bool wan_key(const struct parsed *p, struct flow_key *k);
bool is_mac(const uint8_t *m, const uint8_t *want);
void check_forwarded_frame(const struct parsed *in, const struct parsed *out);
void check_tx_frame(const struct parsed *in, const struct parsed *out);
/* A WAN frame redirected to the LAN: by a flow, a forward or a mapping.
 * BEFORE is the entry found under K before the run (HAD_FLOW). */
void check_wan_to_lan(const struct parsed *in, bool had_flow,
		      const struct flow_value *before,
		      const struct flow_key *k, bool keyed);
/* Forget the WAN datagrams let in (at a reset). */
void wan_datagrams_reset(void);

/* ---- The run being checked (fuzz_xdp.c) -------------------------------- */

extern struct xnat_config base_cfg;  /* the config before control bits */
extern uint32_t cur_flags;           /* the control bits in force */
extern int fwd_fd, peers_fd;

/* Report a violated invariant with the run's input and output, write the
 * history, abort (libFuzzer saves the input). */
void __attribute__((noreturn, format(printf, 1, 2)))
violation(const char *fmt, ...);

#endif /* XNAT_FUZZ_HARNESS_H */
