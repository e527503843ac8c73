/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `xnat trace` apart from the command: the filter words turned into the
 * struct trace_config the data path evaluates (bpf/trace.h), and a traced
 * packet's path and text line. Kept out of cmd_trace.c so unit tests can
 * link them.
 */
#ifndef XNAT_TRACE_FILTER_H
#define XNAT_TRACE_FILTER_H

#include <stddef.h>
#include <stdio.h>
#include "../bpf/xnat_common.h"

#define TRACE_DEFAULT_RATE 1000   /* events per second and CPU */

/*
 * Filter words (tcpdump-like, terms ANDed, an optional "and" between):
 *   host ADDR     IPv4 or IPv6 address, source or destination, before or
 *                 after NAT
 *   port N        TCP or UDP port, source or destination, before or after
 *   proto P       tcp, udp, icmp, icmpv6 or a number
 *   reason GLOB   reasons whose `xnat stats` name matches (fnmatch), e.g.
 *                 drop_*; repeatable, the sets add up
 * Fills TC (active left 0, rate set to TRACE_DEFAULT_RATE). 0, or -EINVAL
 * with one line in ERR.
 */
int trace_filter_parse(int argc, char **argv, struct trace_config *tc,
		       char *err, size_t errlen);

/* "fast", "slow", "kernel" or "dropped": where the packet went. */
const char *trace_path(const struct trace_event *e);

/* The event's tuple before and after ("addr:port" or "[addr]:port"). */
void trace_endpoints(const struct trace_event *e, char src[64],
		     char dst[64], char nsrc[64], char ndst[64]);

const char *trace_nat_name(__u8 nat);

#endif /* XNAT_TRACE_FILTER_H */
