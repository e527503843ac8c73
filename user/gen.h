/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The benchmark's packet generator and sink.
 *
 * The generator is bpf/xnat_gen.bpf.c run through BPF_PROG_RUN in live-frames
 * mode (BPF_F_TEST_XDP_LIVE_FRAMES): the kernel builds frames from a template
 * and the program rewrites each one (flow index, size, checksums) and sends
 * it with XDP_TX out of the port given as ingress, i.e. to the veth peer, the
 * router. It offers several Mpps from one core, far above what any router
 * mode forwards here (shared/TESTBED.md).
 *
 * The sink is bpf/xnat_sink.bpf.c attached to the receiving host's port: it
 * counts frames per CPU and drops them, so offered, forwarded and lost
 * packets are all known.
 */
#ifndef XNAT_GEN_H
#define XNAT_GEN_H

#include <stdint.h>

#define GEN_MAX_SIZES 4

struct gen_config {
	int ifindex;              /* transmit port, in the current netns */
	uint8_t src_mac[6];       /* this host's port */
	uint8_t dst_mac[6];       /* the router's port */
	uint32_t src_ip, dst_ip;  /* network order */
	uint16_t src_port;        /* host order: first source port */
	uint16_t dst_port;        /* host order */
	uint32_t flows;           /* distinct flows: source ports
				     src_port .. src_port + flows - 1 */
	/* Frame sizes without FCS (64 B on the wire = 60 here), and their
	 * weights: imix is {60, 572, 1496} x {7, 4, 1}. */
	uint16_t sizes[GEN_MAX_SIZES];
	uint8_t weights[GEN_MAX_SIZES];
	int n_sizes;
	double rate_pps;          /* offered rate; 0 = as fast as possible */
	double duration_s;        /* bounded: at most 60 */
	int cpu;                  /* CPU the sending thread is pinned to */
};

struct gen_result {
	uint64_t packets;         /* frames handed to XDP_TX */
	uint64_t bytes;           /* their sizes, without FCS */
	double seconds;           /* wall time of the run */
};

struct gen;

/* Load the generator for CFG in the current network namespace. */
int gen_open(struct gen **g, const struct gen_config *cfg);
/* Offer CFG's load for CFG's duration; blocks. */
int gen_run(struct gen *g, struct gen_result *res);
void gen_close(struct gen *g);

struct sink;

/* Attach the counting sink to IFINDEX (current netns), native XDP. */
int sink_open(struct sink **s, int ifindex);
/* Totals since sink_open, summed over CPUs. */
int sink_read(struct sink *s, uint64_t *packets, uint64_t *bytes);
void sink_close(struct sink *s);

#endif /* XNAT_GEN_H */
