/* SPDX-License-Identifier: GPL-2.0-only */
/* Names printed for numbers: IP protocols, interfaces and endpoints, the same in every
 * command's output, in nftables rules and in error messages. */
#ifndef XNAT_LIB_NAMES_H
#define XNAT_LIB_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <net/if.h>
#include "xnat_common.h"

/* "tcp", "udp", "icmp", "icmpv6", or "?" for another protocol. */
const char *proto_name(uint8_t proto);
/* The name of interface IFINDEX, or "#IFINDEX" when it has none (gone, or
 * in another namespace), in BUF; returns BUF. */
const char *ifname_of(unsigned int ifindex, char buf[IF_NAMESIZE]);

/* "addr:port" or "[addr]:port" (for ICMP the port is the echo id) in
 * BUF of LEN bytes; returns BUF. */
const char *endpoint_name(char *buf, size_t len, __u8 family,
			  const union xnat_addr *a, __be16 port);
/* A flow entry's four endpoints: what arrived (K) and what it becomes (V),
 * each in a buffer of 64 bytes. */
void flow_endpoints(const struct flow_key *k, const struct flow_value *v,
		    char src[64], char dst[64], char nsrc[64], char ndst[64]);

#endif /* XNAT_LIB_NAMES_H */
