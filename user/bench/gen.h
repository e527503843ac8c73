/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The benchmark's packet generator.
 *
 * The generator is bpf/bench/xnat_gen.bpf.c run through BPF_PROG_RUN in live-frames
 * mode (BPF_F_TEST_XDP_LIVE_FRAMES): the kernel builds frames from a template
 * and the program rewrites each one (flow index, size, checksums) and sends
 * it with XDP_TX out of the port given as ingress, i.e. to the veth peer, the
 * router. It offers several Mpps from one core, far above what any router
 * mode forwards here (docs/BENCHMARKS.md).
 * What it sends is counted at the receiving host by the sink (sink.h).
 */
#ifndef XNAT_GEN_H
#define XNAT_GEN_H

#include <stdbool.h>
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
	/* Or, when not 0, inside endpoints of many hosts: flow i comes from
	 * address src_ip + i / ports_per_host (host order arithmetic), port
	 * src_port + i % ports_per_host, to port dst_port + i % n_dports. */
	uint32_t ports_per_host;
	uint32_t n_dports;
	uint32_t flow_first;      /* with ports_per_host: flow 0 is endpoint
				     flow_first (a run continuing another) */
	uint16_t stamp;           /* not 0: the trial, in each frame's first
				     payload word, for the sink (sink_stamp) */
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

/* Frame sizes a generator accepts: Ethernet + IPv4 + UDP headers at
 * least, and what a veth with MTU 1500 takes (plus a VLAN tag's room). */
#define GEN_MIN_FRAME 42
#define GEN_MAX_FRAME 1518
/* At most this many flows (source ports src_port .. src_port + flows - 1
 * must stay within 65535). */
#define GEN_MAX_FLOWS 65535
/* With ports_per_host: at most this many flows (hosts x ports). */
#define GEN_MAX_HOST_FLOWS (1U << 24)

/* Do CFG's flows fit the port space (and the limits above)? */
static inline bool gen_flows_fit(const struct gen_config *c)
{
	uint32_t span = c->ports_per_host ? c->ports_per_host : c->flows;
	uint64_t most = c->ports_per_host ? GEN_MAX_HOST_FLOWS : GEN_MAX_FLOWS;

	return c->flows >= 1 && c->src_port &&
	       c->flow_first + (uint64_t)c->flows <= most &&
	       c->src_port + span - 1 <= 65535 &&
	       c->dst_port + (c->n_dports ? c->n_dports : 1) - 1 <= 65535;
}

struct gen;

/*
 * Load the generator for CFG in the current network namespace and attach
 * it (generic XDP, a BPF link) to this namespace's lo, where it stays until
 * gen_close: a BPF_PROG_RUN call on a program attached nowhere pays tens of
 * ms, as measured on the kernels we run. Frames arriving on lo pass
 * untouched (generic XDP does linearize big GSO packets on lo meanwhile:
 * keep bulk traffic off the generator namespace's lo). One generator per network namespace (lo
 * takes one program); several sending threads share it through
 * gen_run_on. 0, or -errno with a message (-EINVAL for a bad CFG, -EBUSY
 * when lo already has an XDP program).
 *
 * The frames: Ethernet, IPv4 (DF, TTL 64, id 0, no options), UDP with a
 * zero payload; lengths and both checksums correct for every size.
 */
int gen_open(struct gen **g, const struct gen_config *cfg);
/*
 * Offer CFG's load for CFG's duration; blocks. Pins the calling thread to
 * cfg->cpu and runs in the generator's network namespace (both restored
 * on return). packets/bytes are what the program sent, counted by itself;
 * on a signal the calls stop and -EINTR comes back with res filled in.
 */
int gen_run(struct gen *g, struct gen_result *res);
/* gen_run on CPU instead of cfg->cpu. Threads on different CPUs may run
 * one generator concurrently: each offers cfg->rate_pps (so N threads
 * offer N times that), each cycles through all flows and sizes, each
 * result counts that thread's frames only. */
int gen_run_on(struct gen *g, int cpu, struct gen_result *res);
void gen_close(struct gen *g);
/* The loaded xdp_gen program, for tests and diagnostics. */
int gen_prog_fd(const struct gen *g);

#endif /* XNAT_GEN_H */
