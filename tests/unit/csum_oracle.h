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

/*
 * The pseudo-header's sum, laid out byte by byte as the RFCs draw it. ALEN
 * (4 or 16) is the address length and says which: IPv4 (RFC 768/793):
 * source, destination, zero, protocol, 16-bit L4 length; IPv6 (RFC 8200
 * 8.1): source, destination, 32-bit L4 length, three zero bytes, next
 * header.
 */
static inline uint64_t csum_oracle_pseudo(const void *saddr, const void *daddr,
					  size_t alen, uint8_t proto,
					  uint32_t l4_len)
{
	uint8_t ph[40] = { 0 };
	uint8_t *tail = ph + 2 * alen;
	const uint8_t *s = saddr, *d = daddr;
	size_t i;

	for (i = 0; i < alen; i++) {
		ph[i] = s[i];
		ph[alen + i] = d[i];
	}
	if (alen == 4) {
		tail[0] = 0;
		tail[1] = proto;
		tail[2] = l4_len >> 8;
		tail[3] = l4_len & 0xff;
		return csum_oracle_add(0, ph, 12, -1);
	}
	tail[0] = l4_len >> 24;
	tail[1] = (l4_len >> 16) & 0xff;
	tail[2] = (l4_len >> 8) & 0xff;
	tail[3] = l4_len & 0xff;
	tail[4] = tail[5] = tail[6] = 0;
	tail[7] = proto;
	return csum_oracle_add(0, ph, 40, -1);
}

/*
 * TCP/UDP checksum over IPv4 (ALEN 4) or IPv6 (ALEN 16): pseudo-header
 * plus L4 header and payload (LEN bytes at L4, checksum at CSUM_OFF
 * counted as zero). For UDP a computed zero is sent as 0xffff (RFC 768,
 * RFC 8200 8.1).
 */
static inline uint16_t csum_oracle_l4(const void *saddr, const void *daddr,
				      size_t alen, uint8_t proto,
				      const void *l4, uint32_t len,
				      long csum_off)
{
	uint64_t acc = csum_oracle_pseudo(saddr, daddr, alen, proto, len);
	uint16_t c = csum_oracle_finish(csum_oracle_add(acc, l4, len, csum_off));

	if (proto == 17 && c == 0)
		c = 0xffff;
	return c;
}

static inline uint16_t csum_oracle_l4_v4(const void *saddr, const void *daddr,
					 uint8_t proto, const void *l4,
					 uint16_t len, long csum_off)
{
	return csum_oracle_l4(saddr, daddr, 4, proto, l4, len, csum_off);
}

static inline uint16_t csum_oracle_l4_v6(const void *saddr, const void *daddr,
					 uint8_t nexthdr, const void *l4,
					 uint32_t len, long csum_off)
{
	return csum_oracle_l4(saddr, daddr, 16, nexthdr, l4, len, csum_off);
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

/* The same for TCP/UDP over IPv4 (ALEN 4) or IPv6 (ALEN 16). */
static inline bool csum_oracle_l4_ok(const void *saddr, const void *daddr,
				     size_t alen, uint8_t proto,
				     const void *l4, uint32_t len)
{
	uint64_t acc = csum_oracle_pseudo(saddr, daddr, alen, proto, len);

	return csum_oracle_fold(csum_oracle_add(acc, l4, len, -1)) == 0xffff;
}

static inline bool csum_oracle_l4_v4_ok(const void *saddr, const void *daddr,
					uint8_t proto, const void *l4, uint16_t len)
{
	return csum_oracle_l4_ok(saddr, daddr, 4, proto, l4, len);
}

static inline bool csum_oracle_l4_v6_ok(const void *saddr, const void *daddr,
					uint8_t nexthdr, const void *l4,
					uint32_t len)
{
	return csum_oracle_l4_ok(saddr, daddr, 16, nexthdr, l4, len);
}

#endif /* XNAT_TEST_CSUM_ORACLE_H */
