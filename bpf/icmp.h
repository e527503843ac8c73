/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ICMPv4 header and the message types the data path handles (RFC 792,
 * RFC 1191 for "fragmentation needed"). Defined here rather than taken from
 * <linux/icmp.h>: that header includes <linux/if.h>, which includes glibc's
 * <sys/socket.h>, and glibc's headers cannot be compiled for the BPF target
 * (they ask for gnu/stubs-32.h). Only BPF code includes it.
 */
#ifndef XNAT_ICMP_H
#define XNAT_ICMP_H

#include <linux/types.h>

#define ICMP_ECHOREPLY		0
#define ICMP_DEST_UNREACH	3
#define ICMP_ECHO		8
#define ICMP_TIME_EXCEEDED	11
#define ICMP_PARAMETERPROB	12
/* Codes of ICMP_DEST_UNREACH and ICMP_TIME_EXCEEDED. */
#define ICMP_FRAG_NEEDED	4
#define ICMP_EXC_TTL		0

struct icmphdr {
	__u8 type;
	__u8 code;
	__sum16 checksum;
	union {
		struct {
			__be16 id;
			__be16 sequence;
		} echo;
		__be32 gateway;
		struct {
			__be16 __unused;
			__be16 mtu;
		} frag;
		__u8 reserved[4];
	} un;
};

#endif /* XNAT_ICMP_H */
