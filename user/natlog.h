/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The NAT event log of `xnat run`: mapping created / expired, read from the
 * data path's ring buffer (bpf/natlog.h) and written as JSON lines, one
 * event a line, with the count of events the ring could not hold:
 *
 *   {"time":"2026-11-30T10:52:01.123456Z","event":"mapping_created",
 *    "proto":"udp","inside":"198.18.1.10:40001",
 *    "external":"198.19.0.1:40001","remote":"198.19.0.2:5001"}
 *   {"time":...,"event":"mapping_expired",...}
 *   {"time":...,"event":"events_lost","lost":3}   (total so far, when it grows)
 *
 * and in offload mode, when one direction of a connection the kernel
 * accepted moves onto XDP's fast path and when it is handed back, and why
 * (tcp_end, conntrack_gone, idle, deleted, conntrack_destroyed,
 * ruleset_changed):
 *
 *   {"time":...,"event":"flow_offloaded","proto":"udp","dir":"orig",
 *    "ingress":"lan0","src":"198.18.1.10:40001","dst":"198.19.0.2:5001",
 *    "new_src":"198.19.0.1:40001","new_dst":"198.19.0.2:5001"}
 *   {"time":...,"event":"flow_returned","why":"idle",...,
 *    "offloaded":TIME,"packets":12,"bytes":1234}
 */
#ifndef XNAT_USER_NATLOG_H
#define XNAT_USER_NATLOG_H

#include <stdio.h>
#include "../bpf/xnat_common.h"

struct natlog;

/* Switch the log on and open its ring; events go to OUT; FLOWS: offload
 * mode's flow moves too. NULL with a warning printed when the router has
 * no log maps (an older data path). */
struct natlog *natlog_open(FILE *out, int flows);
/* "tcp_end", "idle"...: enum flowlog_why's name, "?" past it. */
const char *flowlog_why_name(unsigned int why);
/* Offload mode's flow moves in the log too (after a reload to it), or not. */
void natlog_flows(struct natlog *l, int on);
/* An offloaded entry userspace took off the fast path (enum flowlog_why);
 * L may be NULL (no log). */
void natlog_flow_returned(struct natlog *l, const struct flow_key *k,
			  const struct flow_value *v, int why);
/* Write events as they come for up to MS milliseconds; returns early on a
 * signal. */
void natlog_wait(struct natlog *l, int ms);
/* Switch the log off, write what is left and the final lost count. */
void natlog_close(struct natlog *l);

#endif /* XNAT_USER_NATLOG_H */
