/* SPDX-License-Identifier: GPL-2.0-only */
/* Names printed for numbers: IP protocols and interfaces, the same in every
 * command's output, in nftables rules and in error messages. */
#ifndef XNAT_LIB_NAMES_H
#define XNAT_LIB_NAMES_H

#include <stdint.h>
#include <net/if.h>

/* "tcp", "udp", "icmp", "icmpv6", or "?" for another protocol. */
const char *proto_name(uint8_t proto);
/* The name of interface IFINDEX, or "#IFINDEX" when it has none (gone, or
 * in another namespace), in BUF; returns BUF. */
const char *ifname_of(unsigned int ifindex, char buf[IF_NAMESIZE]);

#endif /* XNAT_LIB_NAMES_H */
