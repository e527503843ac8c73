/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The benchmark's sink: bpf/bench/xnat_sink.bpf.c attached to the
 * receiving host's port. It counts frames per CPU and drops them, so
 * offered, forwarded and lost packets are all known; with a trial's stamp
 * set, a late frame of an earlier trial is counted apart.
 */
#ifndef XNAT_SINK_H
#define XNAT_SINK_H

#include <stdint.h>

struct sink;

/* Attach the counting sink to IFINDEX (current netns), native XDP (generic
 * if the driver has none). Every frame is counted and dropped, ARP too:
 * the sending side needs a permanent neighbour entry, or use
 * sink_open_port. */
int sink_open(struct sink **s, int ifindex);
/* The same, counting and dropping only IPv4 UDP to DST_PORT (host order);
 * everything else goes on to the host (ARP, probes, TCP). 0: every frame. */
int sink_open_port(struct sink **s, int ifindex, uint16_t dst_port);
/* Totals since sink_open, summed over CPUs: frames of the trial running
 * (all frames while no stamp is set). */
int sink_read(struct sink *s, uint64_t *packets, uint64_t *bytes);
/* From now on count only frames stamped STAMP (gen_config.stamp; 0: all);
 * the others are late, of an earlier trial. */
void sink_stamp(struct sink *s, uint16_t stamp);
/* Late frames since sink_open, summed over CPUs. */
int sink_read_late(struct sink *s, uint64_t *packets);
/* Detaches the sink's own program only (closing its BPF link). */
void sink_close(struct sink *s);
/* "native" or "generic"; and the program, for tests. */
const char *sink_mode(const struct sink *s);
int sink_prog_fd(const struct sink *s);

#endif /* XNAT_SINK_H */
