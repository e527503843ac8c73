/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Offload mode's userspace side (the data path is bpf/offload.h): the
 * nftables chain that marks what the ruleset accepted, the [offload]
 * settings and the ports' shaping in the maps, the conntrack tuple of an
 * offloaded flow for display, and, for `xnat run`, taking flows off the
 * fast path when their conntrack entry is destroyed or the ruleset changes.
 */
#ifndef XNAT_OFFLOAD_H
#define XNAT_OFFLOAD_H

#include <stddef.h>
#include <stdio.h>
#include "config.h"

/* The chain "offload" of table inet xnat, written into F (mode offload). */
void offload_emit_nft(FILE *f, const struct config *cfg);

/* [offload] into xnat_offload, each port's shaping into its iface_info
 * flags. 0 or -errno. */
int offload_sync(const struct config *cfg);

/*
 * Does a qdisc on IFINDEX's way out shape or schedule (htb, tbf, cake,
 * fq_codel, prio, ...), at the root or below one (mq's children)? 1 yes,
 * 0 no, -errno if the kernel could not be asked. KIND gets the root's
 * name, or "root/child" when a child shapes and the root does not.
 */
int offload_port_shaped(int ifindex, char kind[16]);

/* The connection of an offloaded flow entry as `conntrack -L` prints it:
 * "src=A dst=B sport=P dport=Q src=... " (original, then reply). */
void offload_ct_tuple(char *buf, size_t len, const struct flow_key *k,
		      const struct flow_value *v);

/*
 * For `xnat run`: wait up to TIMEOUT_MS for conntrack destroy events
 * (their flows leave the fast path) and nftables ruleset changes (all
 * offloaded flows leave it: the ruleset must judge them again). The
 * watch is opened on first use; without it this just sleeps.
 */
struct offload_watch;
struct offload_watch *offload_watch_open(const struct config *cfg);
void offload_watch_wait(struct offload_watch *w, int timeout_ms);
/* Write the flows the watch takes off the fast path to LOG (NULL: no). */
struct natlog;
void offload_watch_log(struct offload_watch *w, struct natlog *log);
void offload_watch_close(struct offload_watch *w);

#endif /* XNAT_OFFLOAD_H */
