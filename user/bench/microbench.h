/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-packet cost of the XDP programs, measured with BPF_PROG_RUN: the data
 * path (bpf/xnat.bpf.c) on a fast-path hit and with the fast path off, and
 * the bare forwarder (bpf/bench/xnat_fwd.bpf.c) as the floor, all on the same
 * 64 B UDP LAN->WAN packet, interleaved call by call so that they share the
 * machine's conditions, on the calling thread's current CPU.
 *
 * Each call runs MICROBENCH_BATCH passes (BPF_PROG_RUN repeat) and the
 * kernel reports its mean time per pass in whole ns (opts.duration). The
 * passes share one buffer, which the programs rewrite (after one pass of
 * the data path the packet carries the NAT address and the next hop's MAC,
 * a key no flow has, and the TTL drains), so a harness program
 * (bpf/bench/xnat_mbench.bpf.c) writes the original packet back before every
 * pass and tail-calls the program under test: every pass is a fresh packet.
 * The harness's own share (the copy, the tail call, BPF_PROG_RUN's loop) is
 * measured with an empty program and subtracted in net_ns.
 *
 * It runs in a private network namespace it creates (two veth ports with
 * addresses and permanent neighbours, forwarding on) and leaves again;
 * nothing outside it is touched. Needs root.
 */
#ifndef XNAT_MICROBENCH_H
#define XNAT_MICROBENCH_H

#include <stdbool.h>
#include <stdint.h>

enum microbench_case {
	MICROBENCH_FAST = 0,  /* xdp_xnat, a packet of an existing flow: fwd_fast */
	MICROBENCH_FP_OFF,    /* the same with XNAT_F_FASTPATH_OFF: the hit is
				 routed again as a miss would be (fwd_routed);
				 stands in for the slow path, whose real miss
				 (a new flow per packet) BPF_PROG_RUN cannot
				 repeat. Report it as "fast path off". */
	MICROBENCH_FLOOR,     /* xdp_fwd: fib lookup, MACs, TTL, redirect */
	MICROBENCH_EMPTY,     /* xdp_pass: the harness's own cost */
	MICROBENCH_TRACED,    /* MICROBENCH_FAST with `xnat trace` attached
				 and a filter that matches nothing: what a
				 running trace costs the packets it does not
				 show (bpf/trace.h) */
	MICROBENCH_OFFLOAD,   /* MICROBENCH_FAST's flow as offload mode holds
				 it (FLOW_NAT_CT, conntrack refreshed): a hit
				 of bpf/offload.h, same rewrite and redirect */
	MICROBENCH_CASES,
};

/* Passes per call (BPF_PROG_RUN repeat). */
#define MICROBENCH_BATCH 200

struct microbench_stat {
	const char *name;     /* "fast path", "fast path off", "xdp_fwd", "empty" */
	/* ns per packet over the calls (each a mean of MICROBENCH_BATCH
	 * passes, whole ns), the harness's share included. */
	double min_ns, median_ns, max_ns;
	/* median_ns minus the empty program's median_ns (0 for it): the
	 * program's own cost. */
	double net_ns;
	uint64_t calls;       /* measured calls */
	uint64_t packets;     /* calls * MICROBENCH_BATCH */
	/* Of those packets, how many were shown to take this case's path:
	 * for xdp_xnat its reason counter (fwd_fast, fwd_routed) grew by
	 * them while every other counter stood still; for xdp_fwd each call
	 * ended in XDP_REDIRECT with the TTL one less than sent (so the
	 * packet was fresh); for xdp_pass each ended in XDP_PASS. Equals
	 * packets unless something is wrong. */
	uint64_t on_path;
};

struct microbench_result {
	struct microbench_stat c[MICROBENCH_CASES];
	int cpu;              /* the CPU it ran on */
	/* Same-run ratios of the net medians: fast path / floor, fast path
	 * off / floor, fast path off / fast path. */
	double fast_vs_floor;
	double off_vs_floor;
	double off_vs_fast;
	/* fast path with an idle trace / fast path, net medians. */
	double traced_vs_fast;
	/* offload mode's hit / xdp mode's hit, net medians. */
	double offload_vs_fast;
};

/* Calls per case when REPEAT <= 0; fewer than MICROBENCH_MIN_CALLS are
 * raised to it, more than MICROBENCH_MAX_CALLS lowered. */
#define MICROBENCH_DEFAULT_CALLS 301
#define MICROBENCH_MIN_CALLS 5
#define MICROBENCH_MAX_CALLS 100000

/*
 * Measure each case in REPEAT calls of MICROBENCH_BATCH packets, on the
 * calling thread's current CPU (pinned for the duration, then restored);
 * about 0.1 ms per call, so the default takes a quarter of a second. 0, or
 * -errno with a message (pr_warn); -EPROTO when packets did not take their
 * case's path (R is filled in all the same).
 */
int microbench_run(struct microbench_result *r, int repeat);

/*
 * MICROBENCH_OFFLOAD's setup in the loaded XNAT object: XNAT_F_OFFLOAD on,
 * and the packet's entry (the one ORIG entry from port IF_LAN) a
 * FLOW_NAT_CT entry whose conntrack timeout was just refreshed, so a pass
 * is an offload hit with the same rewrite (bpf/offload.h); ON false
 * restores both. 0 or -errno. (It also counts as fwd_fast.)
 */
struct xnat_bpf;
int microbench_offload(struct xnat_bpf *xnat, int if_lan, bool on);

/*
 * ns per insert of random keys into a preallocated hash map shaped like
 * the flow table (bpf/bench/xnat_tables.bpf.c) of ENTRIES entries, filled to
 * half: the median of MICROBENCH_TABLE_RUNS runs, each in a table made
 * anew, into *NS. What a new connection's two inserts cost on this
 * machine, apart from everything else it does. 0, or -errno (pr_warn).
 */
#define MICROBENCH_TABLE_RUNS 3
int microbench_table_insert(uint32_t entries, double *ns);

#endif /* XNAT_MICROBENCH_H */
