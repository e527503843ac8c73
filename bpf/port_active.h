/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which external ports an active mapping owns, readable without a hash
 * look-up. While the port range is full, every new endpoint probes a
 * random port's owner in xnat_ports (nat.h port_probe()) and the
 * endpoint-dependent search asks each candidate's (edm_port_free()):
 * random reads of a table of tens of thousands of entries, a cache miss
 * each, about a sixth of a new flow's time in XDP (docs/BENCHMARKS.md).
 * The answer they need is one bit of the owner, NAT_EP_ACTIVE; here it is
 * again, one byte per port (64 KiB per address and protocol), which the
 * caches keep.
 *
 * A byte is 1 while the port's owner is marked active, 0 when that is not
 * known: no owner, an owner that is not active, or one this array has not
 * seen become active (a map made anew, an owner made by a program that
 * did not keep it). 1 is written only where the mark is set (a port
 * claimed for a new mapping, a mapping's first outbound flow) and 0 where
 * it is cleared, before a port is given back: so 1 is never more wrong
 * than the mark itself, which is set only by a CPU that has just added an
 * outbound flow. 0 only costs the look-up this array saves. Userspace
 * clears the array whenever it loads a program (user/loader.c): a program
 * of an older xnat, which does not know it, may have cleared marks
 * meanwhile.
 */
#ifndef XNAT_PORT_ACTIVE_H
#define XNAT_PORT_ACTIVE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"

/* PK's byte, or NULL (a pool index beyond the array's size). */
static __always_inline __u8 *port_active_byte(const struct nat_port_key *pk)
{
	__u16 port = bpf_ntohs(pk->port);
	__u32 word = port_active_word(pk->addr_idx, pk->proto, port);
	__u8 *w = bpf_map_lookup_elem(&xnat_port_active, &word);

	if (!w)
		return NULL;
	return w + (port & 7);
}

/* 1: PK's owner is active; 0: not known (look at xnat_ports). */
static __always_inline int port_active(const struct nat_port_key *pk)
{
	__u8 *b = port_active_byte(pk);

	return b && *(volatile __u8 *)b;
}

/* Say whether PK's owner is marked active (ACTIVE) or not. A plain byte
 * store: the other ports of the word are other CPUs' to write. */
static __always_inline void port_active_set(const struct nat_port_key *pk,
					    int active)
{
	__u8 *b = port_active_byte(pk);

	if (b && *(volatile __u8 *)b != !!active)
		*(volatile __u8 *)b = !!active;
}

#endif /* XNAT_PORT_ACTIVE_H */
