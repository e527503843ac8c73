/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `xnat bench`: the pieces of the benchmark and what they share. One run
 * builds a testbed of three network namespaces (bench_testbed.c), switches
 * the router between the modes it compares (bench_modes.c), offers UDP
 * profiles and searches for the loss-free rate (bench_search.c), runs
 * iperf3 TCP tests with latency probes (bench_tcp.c) and reports text, JSON
 * and a plot (bench_report.c). cmd_bench.c drives them in order and makes
 * sure everything the run created is gone on every exit path.
 */
#ifndef XNAT_BENCH_COMMON_H
#define XNAT_BENCH_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "bench_provenance.h"
#include "gen.h"
#include "sink.h"
#include "xnat_common.h"

/* ---- what is measured ------------------------------------------------- */

enum bench_mode {
	BM_KERNEL_FWD = 0, /* ip_forward, no NAT */
	BM_KERNEL_MASQ,    /* the kernel's NAT alone: one nft masquerade rule */
	BM_KERNEL_NAT,     /* xnat mode = kernel: its whole ruleset in nft */
	BM_XDP_NAT,        /* xnat mode = xdp, fast path on */
	BM_XDP_NAT_SLOW,   /* xnat mode = xdp, XNAT_F_FASTPATH_OFF */
	BM_XDP_OFFLOAD,    /* xnat mode = offload: nftables decide, XDP
			      carries the accepted connections */
	BM_XDP_FWD,        /* bare XDP forwarder, no NAT */
	BM_DROP,           /* XDP_DROP on the router's ingress: the chain floor */
	BM_MAX,
};

extern const char *const bench_mode_names[BM_MAX];

/* Modes whose NAT is the kernel's (conntrack sets every connection up). */
static inline bool bench_mode_conntrack(enum bench_mode m)
{
	return m == BM_KERNEL_MASQ || m == BM_KERNEL_NAT || m == BM_XDP_OFFLOAD;
}

/* Modes that translate addresses (the replies go to the router). */
static inline bool bench_mode_nat(enum bench_mode m)
{
	return bench_mode_conntrack(m) || m == BM_XDP_NAT || m == BM_XDP_NAT_SLOW;
}

/* Frame size mixes; sizes on the wire include the 4 B FCS. */
enum bench_size {
	BS_64 = 0,
	BS_500,
	BS_1500,
	BS_IMIX, /* 7:4:1 of 64, 576, 1500 */
	BS_MAX,
};

extern const char *const bench_size_names[BS_MAX];

/* Ethernet framing the line-rate percentages count on top of the frame:
 * preamble 7 + SFD 1 + inter-frame gap 12. The 4 B FCS is in the frame. */
#define WIRE_OVERHEAD 20
#define FCS_LEN 4

/* Mean frame size on the wire (with FCS) of a size mix. */
double bench_size_wire_bytes(enum bench_size s);
/* Fill the generator's sizes (without FCS) and weights for S. */
void bench_size_gen(enum bench_size s, struct gen_config *cfg);

struct bench_profile {
	enum bench_size size;
	uint32_t flows;       /* 1, 10000, 100000 or 1000000 */
	/* 0: the flows are source ports of the LAN host. Else: inside
	 * endpoints of many hosts routed behind the LAN host, this many
	 * source ports each, towards BENCH_HOSTS_DPORTS destination ports
	 * (the many-endpoint profiles 100k and 1M). */
	uint32_t ports_per_host;
	bool both;            /* LAN->WAN only, or both directions at once */
	char name[24];        /* "64B/10k/up", stable: JSON key */
};

/* Test kinds, selectable with --profiles udp,newflow,tcp. */
enum bench_kind {
	BK_UDP = 1 << 0,
	BK_NEWFLOW = 1 << 1,
	BK_TCP = 1 << 2,
	BK_MICRO = 1 << 3,    /* the BPF_PROG_RUN microbenchmark */
};

/* ---- the plan of a run -------------------------------------------------- */

struct bench_plan {
	bool quick;
	int reps;
	unsigned int modes;       /* bit per enum bench_mode */
	unsigned int kinds;       /* enum bench_kind bits */
	struct bench_profile profiles[BS_MAX * 2 * 2 + 2]; /* + 100k, 1M */
	int n_profiles;
	double max_s;             /* one saturation trial */
	double step_s;            /* one loss-search step */
	int search_steps;         /* loss-search trials, at most */
	double loss_max;          /* acceptable loss fraction: 0.001 */
	uint32_t newflow_flows;   /* distinct flows of the new-flow test */
	double tcp_s;             /* one iperf3 run */
	bool tcp_all;             /* 8 down, 8 up and RRUL; else 8 up only */
	int cpu_lan_gen, cpu_wan_gen;
	const char *out_dir;
	char command[512];        /* as typed, for the report */
};

/* Parse --modes/--profiles lists into PLAN; -1 with ERR set on a bad name. */
int bench_plan_init(struct bench_plan *plan, bool quick, int reps,
		    const char *modes, const char *profiles, char *err,
		    size_t errlen);
/* Does the plan measure mode M? */
bool bench_plan_has_mode(const struct bench_plan *p, enum bench_mode m);

/* ---- the testbed -------------------------------------------------------- */

enum bench_ns { NS_LAN = 0, NS_RTR, NS_WAN, NS_MAX };

#define BENCH_MAX_CHILDREN 16

struct sink;
struct xnat_bench_bpf;
struct xnat_fwd_bpf;

struct bench {
	const struct bench_plan *plan;
	char ns_name[NS_MAX][48];
	bool ns_created[NS_MAX];
	int ns_fd[NS_MAX];
	int host_ns_fd;            /* where we came from */
	unsigned long rtr_ino;     /* router netns inode: xnat's pin dir */
	int ifindex_lan_host, ifindex_wan_host;  /* eth0 in LAN, WAN */
	int ifindex_rtr_lan, ifindex_rtr_wan;    /* lan0, wan0 in router */
	char tmp_dir[64];
	char xnat_path[256];       /* this binary, for `xnat -n NS up` */
	pid_t children[BENCH_MAX_CHILDREN];
	struct sink *sink[NS_MAX]; /* on the LAN and WAN hosts' eth0 */
	struct xnat_bench_bpf *progs; /* xdp_pass, xdp_drop */
	struct xnat_fwd_bpf *fwd;     /* the bare forwarder, in xdp-fwd mode */
	enum bench_mode mode;      /* current, or BM_MAX for none */
	bool mode_up;
	bool xnat_up;              /* `xnat up` ran: `xnat down` on cleanup */
	bool masq_up;              /* kernel-masq's nft table is loaded */
	long long masq_ct_saved[2]; /* its UDP timeouts as found, -1 none */
	/* The host's conntrack limits before bench_conntrack_raise(), put
	 * back by bench_conntrack_restore(); what was asked, and whether
	 * it is in force. */
	bool ct_saved, ct_ok;
	long long ct_max_saved, ct_hash_saved, ct_need;
	/* Forwarded pps of the last warm-up's final pass, every flow set
	 * up: the many-endpoint profiles size their trials from it. */
	double warm_pps;
};

/* Set by the signal handlers; every loop checks it. */
extern volatile sig_atomic_t bench_stop;

/* Testbed addresses, as ip(8) and inet_pton() take them. */
#define BENCH_RTR_LAN "198.18.1.1"
#define BENCH_RTR_WAN "198.19.0.1"
#define BENCH_LAN_HOST "198.18.1.10"
#define BENCH_WAN_HOST "198.19.0.2"
#define BENCH_PORT_FIRST 20000  /* LAN source ports: XDP NAT keeps them */
#define BENCH_DST_PORT 9        /* discard */
/* The many-endpoint profiles: inside hosts from this address on, behind
 * the LAN host (the router's route to 198.18.0.0/16), 1024 source ports
 * each, towards 64 destination ports from BENCH_DST_PORT. */
#define BENCH_HOSTS_FIRST "198.18.64.0"
#define BENCH_HOSTS_PORTS 1024
#define BENCH_HOSTS_DPORTS 64
/* XXX: flows of the WAN->LAN direction in "both" profiles. The generator
 * varies source ports only, and replies to N flows need N destination
 * ports; until gen_config can vary those, the reverse direction is the
 * reply of flow 0, in every mode alike. */
#define BENCH_REVERSE_FLOWS 1

extern const uint8_t bench_mac_lan_host[6], bench_mac_rtr_lan[6],
	bench_mac_rtr_wan[6], bench_mac_wan_host[6];

int bench_testbed_up(struct bench *b);
/* Remove everything the run created; safe to call twice, from any state
 * but a mode entered (bench_mode_leave first). */
void bench_testbed_down(struct bench *b);
/* Move the calling thread into namespace NS (NS_MAX: back to the host's). */
int bench_enter(struct bench *b, enum bench_ns ns);
/* Write VALUE to /proc/sys/PATH inside NS. */
int bench_sysctl(struct bench *b, enum bench_ns ns, const char *path,
		 const char *value);
/* Read an unsigned /proc/sys/PATH inside NS; -1 when missing. */
long long bench_sysctl_read(struct bench *b, enum bench_ns ns,
			    const char *path);
/* GRO on the router's two ports, or off (a veth's default). On, a veth
 * takes its peer's frames through its NAPI ring, which pushes back on a
 * sender whose queue is full, and the kernel forwards GRO's aggregates;
 * off (no XDP program either), it takes them into the CPU's backlog,
 * which never pushes back (docs/BENCHMARKS.md "TCP"). 0 or -errno. */
int bench_router_gro(struct bench *b, bool on);
/* Frames the ports of NS could not hand to the other end of their veth so
 * far (the kernel's per-device tx_dropped); -1 when unreadable. */
long long bench_port_drops(struct bench *b, enum bench_ns ns);

/*
 * Run ARGV inside NS (NS_MAX: the host's), bounded by TIMEOUT_S seconds,
 * output to LOG (NULL: the run's log file). Returns its exit status, or
 * -errno; a command killed for its bound returns -ETIMEDOUT, one stopped
 * by Ctrl-C -EINTR.
 */
int bench_run(struct bench *b, enum bench_ns ns, double timeout_s,
	      const char *log, const char *const argv[]);
/* Start ARGV in NS in the background; the PID is recorded for cleanup. */
pid_t bench_spawn(struct bench *b, enum bench_ns ns, const char *log,
		  const char *const argv[]);
/* Wait for a background child until DEADLINE (CLOCK_MONOTONIC seconds),
 * then end it. Returns its exit status or -ETIMEDOUT / -EINTR. */
int bench_reap(struct bench *b, pid_t pid, double deadline);
/* End a background child now (SIGTERM, then SIGKILL). */
void bench_kill(struct bench *b, pid_t pid);
/* End every background child still recorded. */
void bench_kill_all(struct bench *b);

/* Attach the counting sinks to the hosts' ports, or remove them (TCP). */
int bench_sinks_open(struct bench *b);
void bench_sinks_close(struct bench *b);
/* Raise the host's nf_conntrack_max and conntrack hash size to hold NEED
 * connections (bench_conntrack.c); 0, or -errno when they are not. */
int bench_conntrack_raise(struct bench *b, long long need);
/* Are the limits in force for NEED connections? */
bool bench_conntrack_ok(const struct bench *b, long long need);
/* Put the host's limits back as they were (testbed teardown). */
void bench_conntrack_restore(struct bench *b);

double bench_now(void);       /* CLOCK_MONOTONIC seconds */
void bench_sleep(double s);   /* interrupted by bench_stop */
/* Progress line to stderr, "[mm:ss] ...", also with --json. */
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Progress times count from now (the testbed's start). */
void bench_progress_restart(void);

/* ---- modes -------------------------------------------------------------- */

/* Bring the router into MODE. FLOWS_MAX sizes xnat's flow table; XDP_PASS
 * puts xdp_pass on the ports in kernel modes (needed for XDP_TX'd frames
 * from the generators, not for TCP from sockets). */
int bench_mode_enter(struct bench *b, enum bench_mode mode,
		     uint32_t flows_max, bool xdp_pass);
int bench_mode_leave(struct bench *b);

/* Router-side counters of a trial, as deltas. */
struct bench_router_counters {
	uint64_t fwd_fast, fwd_slow, fwd_routed, passed, dropped;
	uint64_t drop_seen;        /* xdp_drop's count (drop mode) */
	uint64_t kernel_fwd;       /* the kernel's Ip: ForwDatagrams */
	uint64_t reason[XNAT_REASON_MAX]; /* xnat's counters by reason */
	long long conntrack;       /* nf_conntrack_count after, -1 n/a */
};

int bench_router_read(struct bench *b, struct bench_router_counters *c);
/* DELTA = AFTER - BEFORE (conntrack: AFTER's). */
void bench_router_delta(const struct bench_router_counters *before,
			const struct bench_router_counters *after,
			struct bench_router_counters *delta);

/* ---- UDP profiles and search ------------------------------------------- */

/* One generator run (one or two directions) and what it did. */
struct bench_sample {
	int rep;
	enum bench_mode mode;
	int profile;                  /* index in plan->profiles */
	const char *kind;             /* "max", "search", "newflow" */
	double target_pps;            /* 0 = as fast as possible */
	double seconds;
	uint64_t offered, forwarded;  /* frames, both directions summed */
	int64_t lost;                 /* offered - forwarded */
	uint64_t offered_bytes, forwarded_bytes; /* without FCS */
	uint64_t dir_offered[2], dir_forwarded[2]; /* [0] LAN->WAN, [1] back */
	double gen_waited_s;          /* most a generator waited for its CPU */
	int disturbed_retries;        /* trials run again for that */
	struct bench_router_counters router;
	bool verified;                /* the mode is what it claims */
	char note[96];                /* why not verified, or "" */
};

/* Per (rep, mode, profile): the numbers the tables show. */
struct bench_cell {
	bool ran;
	double max_pps;        /* forwarded pps at saturation (drop: seen) */
	double max_mbps;       /* forwarded frames incl. FCS */
	double chain_pps;      /* the chain's packet rate (for ns/packet) */
	double noloss_pps;     /* highest offered rate with loss < loss_max */
	bool noloss_valid;
};

struct bench_newflow {
	int rep;
	enum bench_mode mode;
	uint64_t flows_offered, flows_set_up;
	double seconds, rate;  /* flows set up per second */
	uint64_t forwarded;
	double offered_pps;    /* the rate the flows were offered at */
	struct bench_router_counters router; /* xdp: summed deltas */
	const char *how;       /* what counted set-up flows: "fwd_slow", "sink" */
	bool verified;
	char note[96];
};

enum bench_tcp_test { BT_DOWN = 0, BT_UP, BT_RRUL, BT_MAX };
extern const char *const bench_tcp_names[BT_MAX];

/* The TCP tests' latency probes (ping and the UDP probe) send one every
 * BENCH_PROBE_INTERVAL_S seconds, and keep the round trips of
 * BENCH_PROBES_MAX at most (100 s). */
#define BENCH_PROBE_INTERVAL_S 0.2
#define BENCH_PROBES_MAX 512

struct bench_tcp {
	int rep;
	enum bench_mode mode;
	enum bench_tcp_test test;
	double seconds;
	double mbps_down, mbps_up, mbps;   /* aggregate = down + up */
	double ping_median_ms;             /* -1: no replies */
	int ping_sent, ping_recv;
	double udp_median_ms;              /* RRUL's UDP probe, -1: none */
	int udp_sent, udp_recv;
	/* Every round trip the probes measured, in ms (ping_recv and
	 * udp_recv of them), for the percentiles of the report. */
	double ping_rtt_ms[BENCH_PROBES_MAX], udp_rtt_ms[BENCH_PROBES_MAX];
	/* Loss, for the goodput beside it: segments the senders sent again
	 * (iperf3's count); frames the hosts could not hand to the router
	 * and the router could not hand on to the hosts during the test
	 * (bench_port_drops(): a receive ring full); -1: unknown. */
	long long retransmits, host_drops, router_drops;
	bool ok;
	char note[96];
};

/* The two flow-table sizes whose insert cost a run measures: the entries
 * of 65,536 connections (xnat's default [flows] max) and of a million. */
#define BENCH_TABLE_SMALL (2 * 65536)
#define BENCH_TABLE_LARGE (2 * 1048576)

/* Everything a run measured; grown as it goes. */
struct bench_results {
	struct bench_sample *samples;
	int n_samples, cap_samples;
	/* cells[rep][mode][profile] */
	struct bench_cell *cells;
	struct bench_newflow *newflow;
	int n_newflow, cap_newflow;
	struct bench_tcp *tcp;
	int n_tcp, cap_tcp;
	/* BPF_PROG_RUN ns/packet (microbench), -1 when not measured. */
	double micro_fast_ns, micro_slow_ns, micro_fwd_ns;
	double micro_traced_ns; /* fast path with an idle `xnat trace` */
	double micro_offload_ns; /* offload mode's hit (bpf/offload.h) */
	char micro_note[128];
	/* ns per random insert into a flow-table-shaped map of
	 * BENCH_TABLE_SMALL and BENCH_TABLE_LARGE entries (microbench.h), -1
	 * when not measured. */
	double insert_small_ns, insert_large_ns;
	char date[32];
	char kernel[96];
	char cpu_model[96];   /* /proc/cpuinfo's first "model name" */
	char xnat_version[64]; /* scripts/version.sh: tag or commit, -dirty */
	int ncpus;
	/* The tester machine and its ports (bench_provenance.h). */
	struct bench_provenance prov;
	double elapsed_s;
	bool interrupted;
};

struct bench_cell *bench_cell(struct bench_results *r,
			      const struct bench_plan *p, int rep,
			      enum bench_mode m, int profile);
int bench_results_init(struct bench_results *r, const struct bench_plan *p);
/*
 * Append a zeroed element of SIZE bytes to the growable array *ARR of *N
 * elements (room for *CAP; grows by doubling from FIRST). Returns it, or
 * NULL when memory runs out.
 */
void *bench_array_push(void *arr, int *n, int *cap, size_t size, int first);
void bench_results_free(struct bench_results *r);

/* Saturation trial plus loss search for one profile in the current mode. */
int bench_udp_profile(struct bench *b, struct bench_results *r, int rep,
		      int profile);
/* Give every flow of profile PI its NAT mapping (conntrack entry,
 * offloaded flow) before replies are sent and before anything is timed:
 * a short LAN->WAN run, or for the many-endpoint profiles passes over all
 * flows until one sets up nothing new (sets b->warm_pps). Not recorded. */
int bench_udp_warm(struct bench *b, struct bench_results *r, int pi);
/* The new-flow test in the current mode (router up with a big table),
 * flows offered at OFFER_PPS. */
int bench_newflow(struct bench *b, struct bench_results *r, int rep,
		  double offer_pps);

/* ---- TCP ------------------------------------------------------------------ */

int bench_tcp_run(struct bench *b, struct bench_results *r, int rep,
		  enum bench_tcp_test test);

/* ---- the run (bench_reps.c) ---------------------------------------------- */

/* The microbenchmark, then every repetition of every test the plan
 * selects. 0, or the first error (-EINTR when stopped). */
int bench_measure(struct bench *b, struct bench_results *r);
/* Leave the mode, then remove the testbed: safe from any state. */
void bench_teardown(struct bench *b);

/* ---- report --------------------------------------------------------------- */

/* Text tables to F. */
void bench_report_text(FILE *f, const struct bench_plan *p,
		       struct bench_results *r);
/* The JSON document to F. */
void bench_report_json(FILE *f, const struct bench_plan *p,
		       struct bench_results *r);
/* OUT_DIR/bench.png through gnuplot; -errno (printed) on failure. */
int bench_report_plot(const struct bench_plan *p, struct bench_results *r,
		      const char *out_dir);

/* Median, min and max of N values (N > 0); the array is sorted. */
void bench_stats(double *v, int n, double *med, double *min, double *max);

#endif /* XNAT_BENCH_COMMON_H */
