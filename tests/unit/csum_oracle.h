/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Checksum oracle for the unit tests: the Internet checksum computed from
 * scratch, RFC 1071 style, over bytes. Deliberately shares nothing with
 * bpf/csum.h (which updates checksums incrementally, RFC 1624): words are
 * assembled from bytes in network order, summed into 64 bits and folded at
 * the end, so a byte-order or carry mistake in the data path cannot be
 * mirrored here. Every checksum is returned in host order; store it with
 * csum_put16() and read a packet's with csum_get16().
 */
#ifndef XNAT_TEST_CSUM_ORACLE_H
#define XNAT_TEST_CSUM_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint16_t csum_get16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] << 8 | b[1]);
}

static inline void csum_put16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = v >> 8;
	b[1] = v & 0xff;
}

/*
 * Add LEN bytes at DATA to the running sum ACC as 16-bit big-endian words.
 * SKIP (an offset into DATA, or -1) names a 2-byte checksum field counted as
 * zero. An odd last byte is padded with a zero byte (RFC 1071 4.1).
 */
static inline uint8_t csum_oracle_byte(const uint8_t *b, size_t len, size_t i,
				       long skip)
{
	if (i >= len)
		return 0; /* odd length: pad */
	if (skip >= 0 && (i == (size_t)skip || i == (size_t)skip + 1))
		return 0; /* the checksum field itself */
	return b[i];
}

static inline uint64_t csum_oracle_add(uint64_t acc, const void *data,
				       size_t len, long skip)
{
	const uint8_t *b = data;
	size_t i;

	for (i = 0; i < len; i += 2)
		acc += (uint64_t)csum_oracle_byte(b, len, i, skip) << 8 |
		       csum_oracle_byte(b, len, i + 1, skip);
	return acc;
}

/* Fold the 64-bit sum to 16 bits with end-around carries. */
static inline uint16_t csum_oracle_fold(uint64_t acc)
{
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

/* The checksum field's value: one's complement of the folded sum. */
static inline uint16_t csum_oracle_finish(uint64_t acc)
{
	return (uint16_t)~csum_oracle_fold(acc);
}

/* IPv4 header checksum of the IHL*4 bytes at HDR (check field at 10). */
static inline uint16_t csum_oracle_ipv4_hdr(const void *hdr)
{
	size_t hlen = (((const uint8_t *)hdr)[0] & 0x0f) * 4;

	return csum_oracle_finish(csum_oracle_add(0, hdr, hlen, 10));
}

/* Pseudo-header of RFC 768/793: addresses (network order bytes), zero,
 * protocol, L4 length. */
static inline uint64_t csum_oracle_pseudo4(const void *saddr, const void *daddr,
					   uint8_t proto, uint16_t l4_len)
{
	uint8_t ph[12];
	const uint8_t *s = saddr, *d = daddr;
	int i;

	for (i = 0; i < 4; i++) {
		ph[i] = s[i];
		ph[4 + i] = d[i];
	}
	ph[8] = 0;
	ph[9] = proto;
	ph[10] = l4_len >> 8;
	ph[11] = l4_len & 0xff;
	return csum_oracle_add(0, ph, sizeof(ph), -1);
}

/* Pseudo-header of RFC 8200 8.1: addresses, 32-bit length, next header. */
static inline uint64_t csum_oracle_pseudo6(const void *saddr, const void *daddr,
					   uint8_t nexthdr, uint32_t l4_len)
{
	uint8_t ph[40];
	const uint8_t *s = saddr, *d = daddr;
	int i;

	for (i = 0; i < 16; i++) {
		ph[i] = s[i];
		ph[16 + i] = d[i];
	}
	ph[32] = l4_len >> 24;
	ph[33] = (l4_len >> 16) & 0xff;
	ph[34] = (l4_len >> 8) & 0xff;
	ph[35] = l4_len & 0xff;
	ph[36] = ph[37] = ph[38] = 0;
	ph[39] = nexthdr;
	return csum_oracle_add(0, ph, sizeof(ph), -1);
}

/*
 * TCP/UDP checksum over IPv4: pseudo-header plus L4 header and payload
 * (LEN bytes at L4, checksum at CSUM_OFF counted as zero). For UDP a
 * computed zero is sent as 0xffff (RFC 768, RFC 8200 8.1).
 */
static inline uint16_t csum_oracle_l4_v4(const void *saddr, const void *daddr,
					 uint8_t proto, const void *l4,
					 uint16_t len, long csum_off)
{
	uint64_t acc = csum_oracle_pseudo4(saddr, daddr, proto, len);
	uint16_t c = csum_oracle_finish(csum_oracle_add(acc, l4, len, csum_off));

	if (proto == 17 && c == 0)
		c = 0xffff;
	return c;
}

static inline uint16_t csum_oracle_l4_v6(const void *saddr, const void *daddr,
					 uint8_t nexthdr, const void *l4,
					 uint32_t len, long csum_off)
{
	uint64_t acc = csum_oracle_pseudo6(saddr, daddr, nexthdr, len);
	uint16_t c = csum_oracle_finish(csum_oracle_add(acc, l4, len, csum_off));

	if (nexthdr == 17 && c == 0)
		c = 0xffff;
	return c;
}

/* ICMPv4: no pseudo-header. */
static inline uint16_t csum_oracle_icmp4(const void *icmp, uint16_t len)
{
	return csum_oracle_finish(csum_oracle_add(0, icmp, len, 2));
}

/*
 * Verification the receiver's way: the sum over everything including the
 * checksum field must fold to 0xffff (RFC 1071 "checking").
 */
static inline bool csum_oracle_ipv4_hdr_ok(const void *hdr)
{
	size_t hlen = (((const uint8_t *)hdr)[0] & 0x0f) * 4;

	return csum_oracle_fold(csum_oracle_add(0, hdr, hlen, -1)) == 0xffff;
}

static inline bool csum_oracle_l4_v4_ok(const void *saddr, const void *daddr,
					uint8_t proto, const void *l4, uint16_t len)
{
	uint64_t acc = csum_oracle_pseudo4(saddr, daddr, proto, len);

	return csum_oracle_fold(csum_oracle_add(acc, l4, len, -1)) == 0xffff;
}

static inline bool csum_oracle_l4_v6_ok(const void *saddr, const void *daddr,
					uint8_t nexthdr, const void *l4,
					uint32_t len)
{
	uint64_t acc = csum_oracle_pseudo6(saddr, daddr, nexthdr, len);

	return csum_oracle_fold(csum_oracle_add(acc, l4, len, -1)) == 0xffff;
}

#endif /* XNAT_TEST_CSUM_ORACLE_H */
