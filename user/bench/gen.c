// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmark's packet generator; see gen.h for the contract and
 * bpf/bench/xnat_gen.bpf.c for the program (the sink: sink.c).
 *
 * A run is a loop of BPF_PROG_RUN calls in live-frames mode. Unpaced, each
 * call is sized to last about GEN_CALL_S at the rate the previous call
 * achieved, and the last one to what is left of the duration. Paced, time
 * is cut into periods of GEN_PACE_NS: at the start of each period one call
 * sends what the target rate owes by the period's end (counted from the
 * start of the run, so rounding and late wake-ups never accumulate), then
 * the thread sleeps to the next period boundary (clock_nanosleep,
 * TIMER_ABSTIME). Frames go out in bursts at full speed, one period's worth
 * each; on veth the receiver processes them on the sending CPU as they go.
 *
 * The program attaches through a BPF link (xdp_link.h), as the sink's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "xnat_common.h"
#include "xnat_gen.skel.h"
#include "gen.h"
#include "xdp_link.h"
#include "log.h"
#include "percpu.h"

/* Wall time one unpaced call aims at: long enough that the per-call cost
 * (page pool setup, syscall) vanishes, short enough to end on time. */
#define GEN_CALL_S 0.2
/* The first call of a run, before the rate is known. */
#define GEN_PROBE_FRAMES 4096
/* Pacing period: bursts of rate * 1 ms. */
#define GEN_PACE_NS 1000000ULL
/* Frames per live-frames batch (one page pool refill and one redirect
 * flush each). 64 is the kernel's default; it also stays well inside a
 * veth's 256-frame receive ring, which the receiver only drains after the
 * batch is flushed. */
#define GEN_BATCH 64
#define NSEC_PER_SEC 1000000000ULL

/* Sync note: struct gen_state of bpf/bench/xnat_gen.bpf.c. */
struct gen_state {
	uint64_t packets;
	uint64_t bytes;
	uint32_t flow;
	uint32_t slot;
};
_Static_assert(sizeof(struct gen_state) == 24, "gen_state layout");

struct gen {
	struct xnat_gen_bpf *skel;
	struct gen_config cfg;
	int link_fd;        /* xdp_gen on lo */
	int netns_fd;       /* the namespace of gen_open */
	ino_t netns_ino;
	int ncpus;
	uint8_t *frame;     /* the template: zeros, the largest size */
	uint32_t frame_len;
};

/* -EINTR when a signal came: the caller stops the run, as a signal
 * during a BPF_PROG_RUN call would. */
static int sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = t / NSEC_PER_SEC,
			       .tv_nsec = t % NSEC_PER_SEC };

	return -clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* Sum of the 16-bit words at P as they sit in memory (RFC 1071: the byte
 * order does not matter as long as the program adds the same way). */
static uint32_t sum16(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t sum = 0;
	uint16_t w;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		memcpy(&w, b + i, 2);
		sum += w;
	}
	return sum;
}

/*
 * The size cycle: each size as often as its weight, spread out (smooth
 * weighted round robin, as nginx balances upstreams), so imix 7:4:1 is a
 * 12-frame pattern with the large frame once and the mediums apart, not
 * seven small frames in a row. Returns the cycle length.
 */
static uint32_t size_cycle(const struct gen_config *cfg, uint16_t *cycle,
			   uint32_t max)
{
	int cur[GEN_MAX_SIZES] = {}, w[GEN_MAX_SIZES], total = 0, i;
	uint32_t n;

	for (i = 0; i < cfg->n_sizes; i++)
		total += w[i] = cfg->weights[i];
	if (!total) /* no weights given: equal shares */
		for (i = 0; i < cfg->n_sizes; i++)
			total += w[i] = 1;
	for (n = 0; n < (uint32_t)total && n < max; n++) {
		int best = 0;

		for (i = 0; i < cfg->n_sizes; i++) {
			cur[i] += w[i];
			if (cur[i] > cur[best])
				best = i;
		}
		cur[best] -= total;
		cycle[n] = cfg->sizes[best];
	}
	return n;
}

static int gen_check(const struct gen_config *cfg)
{
	int i;

	if (cfg->ifindex <= 0) {
		pr_warn("Generator: no transmit port\n");
		return -EINVAL;
	}
	if (!gen_flows_fit(cfg)) {
		pr_warn("Generator: %u flows from source port %u do not fit in "
			"ports 1-65535\n", cfg->flows, cfg->src_port);
		return -EINVAL;
	}
	if (cfg->n_sizes < 1 || cfg->n_sizes > GEN_MAX_SIZES) {
		pr_warn("Generator: %d frame sizes, expected 1 to %d\n",
			cfg->n_sizes, GEN_MAX_SIZES);
		return -EINVAL;
	}
	for (i = 0; i < cfg->n_sizes; i++) {
		if (cfg->sizes[i] < GEN_MIN_FRAME || cfg->sizes[i] > GEN_MAX_FRAME) {
			pr_warn("Generator: frame size %u outside %d-%d bytes "
				"(without FCS)\n", cfg->sizes[i], GEN_MIN_FRAME,
				GEN_MAX_FRAME);
			return -EINVAL;
		}
	}
	if (!(cfg->rate_pps >= 0) || cfg->rate_pps > 1e9) {
		pr_warn("Generator: rate %g pps out of range\n", cfg->rate_pps);
		return -EINVAL;
	}
	if (!(cfg->duration_s > 0) || cfg->duration_s > 60) {
		pr_warn("Generator: duration %g s, expected more than 0 and at "
			"most 60\n", cfg->duration_s);
		return -EINVAL;
	}
	if (cfg->cpu < 0 || cfg->cpu >= CPU_SETSIZE) {
		pr_warn("Generator: invalid CPU %d\n", cfg->cpu);
		return -EINVAL;
	}
	return 0;
}

/* The header template and checksum bases into the program's rodata. */
static void gen_set_rodata(struct xnat_gen_bpf *skel,
			   const struct gen_config *cfg)
{
	struct xnat_gen_bpf__rodata *ro = skel->rodata;
	uint8_t hdr[48] = {}, *ip = hdr + 14, *udp = hdr + 34;
	uint8_t pseudo[10];
	uint16_t be;

	memcpy(hdr, cfg->dst_mac, 6);
	memcpy(hdr + 6, cfg->src_mac, 6);
	hdr[12] = 0x08; /* ETH_P_IP */
	hdr[13] = 0x00;
	ip[0] = 0x45;   /* IPv4, IHL 5 */
	ip[6] = 0x40;   /* DF; id 0 (RFC 6864: fine for atomic datagrams) */
	ip[8] = 64;     /* TTL */
	ip[9] = 17;     /* UDP */
	memcpy(ip + 12, &cfg->src_ip, 4);
	memcpy(ip + 16, &cfg->dst_ip, 4);
	be = htons(cfg->src_port);
	memcpy(udp, &be, 2);
	be = htons(cfg->dst_port);
	memcpy(udp + 2, &be, 2);

	_Static_assert(sizeof(ro->hdr_tmpl) == 40, "template: bytes 0..39");
	memcpy((void *)ro->hdr_tmpl, hdr, sizeof(ro->hdr_tmpl));
	ro->ports_per_host = cfg->ports_per_host;
	ro->src_ip_first = ntohl(cfg->src_ip);
	ro->dst_port_first = cfg->dst_port;
	ro->n_dports = cfg->n_dports ?: 1;
	ro->flow_first = cfg->flow_first;
	ro->stamp = cfg->stamp;
	if (cfg->ports_per_host) /* source address, destination port: per frame */
		memset(ip + 12, 0, 4), memset(udp + 2, 0, 2);
	ro->ip_csum_base = sum16(ip, 20); /* tot_len, check still 0 */
	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = 17;
	ro->udp_csum_base = sum16(pseudo, sizeof(pseudo)) + sum16(udp + 2, 2);
	ro->tx_ifindex = cfg->ifindex;
	ro->src_port = cfg->src_port;
	ro->n_flows = cfg->flows;
	ro->cycle_len = size_cycle(cfg, (uint16_t *)ro->cycle,
				   sizeof(ro->cycle) / sizeof(ro->cycle[0]));
}

static int netns_ino_of(int fd, ino_t *ino)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	*ino = st.st_ino;
	return 0;
}

/* Load the generator's program and attach it to lo (generic XDP), where
 * it stays for the generator's life. */
static int gen_load_attach(struct gen *g, const struct gen_config *cfg)
{
	int lo, err;

	g->skel = xnat_gen_bpf__open();
	if (!g->skel)
		return pr_warn_errno("Failed to open the generator's BPF object");
	gen_set_rodata(g->skel, cfg);
	err = xnat_gen_bpf__load(g->skel);
	if (err) {
		pr_warn("Failed to load the generator's XDP program: %s\n",
			strerror(-err));
		goto err_destroy;
	}
	lo = if_nametoindex("lo");
	if (!lo) {
		err = pr_warn_errno("Generator: no lo in this network namespace");
		goto err_destroy;
	}
	g->link_fd = xdp_link(bpf_program__fd(g->skel->progs.xdp_gen), lo,
			      XDP_FLAGS_SKB_MODE);
	if (g->link_fd < 0) {
		err = g->link_fd;
		pr_warn("Failed to attach the generator to lo (generic XDP): %s%s\n",
			strerror(-err),
			err == -EBUSY || err == -EEXIST ?
				"; lo has an XDP program already (one generator per "
				"network namespace; threads share it with gen_run_on)" : "");
		goto err_destroy;
	}
	return 0;

err_destroy:
	xnat_gen_bpf__destroy(g->skel);
	g->skel = NULL;
	return err;
}

int gen_open(struct gen **gp, const struct gen_config *cfg)
{
	struct gen *g;
	int i, err;

	*gp = NULL;
	err = gen_check(cfg);
	if (err)
		return err;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->cfg = *cfg;
	g->link_fd = -1;
	g->netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (g->netns_fd < 0) {
		err = -errno;
		pr_warn("Generator: cannot open this thread's network namespace: "
			"%s\n", strerror(-err));
		goto err_free;
	}
	err = netns_ino_of(g->netns_fd, &g->netns_ino);
	if (err)
		goto err_free;
	g->ncpus = libbpf_num_possible_cpus();
	if (g->ncpus <= 0) {
		err = g->ncpus ? g->ncpus : -EINVAL;
		pr_warn("Generator: cannot count the CPUs: %s\n", strerror(-err));
		goto err_free;
	}
	for (i = 0; i < cfg->n_sizes; i++)
		if (cfg->sizes[i] > g->frame_len)
			g->frame_len = cfg->sizes[i];
	g->frame = calloc(1, g->frame_len);
	if (!g->frame) {
		err = -ENOMEM;
		goto err_free;
	}

	err = gen_load_attach(g, cfg);
	if (err)
		goto err_free;
	*gp = g;
	return 0;

err_free:
	if (g->netns_fd >= 0)
		close(g->netns_fd);
	free(g->frame);
	free(g);
	return err;
}

void gen_close(struct gen *g)
{
	if (!g)
		return;
	if (g->link_fd >= 0)
		close(g->link_fd);
	xnat_gen_bpf__destroy(g->skel);
	close(g->netns_fd);
	free(g->frame);
	free(g);
}

int gen_prog_fd(const struct gen *g)
{
	return bpf_program__fd(g->skel->progs.xdp_gen);
}

static int gen_state_read(struct gen *g, int cpu, struct gen_state *out)
{
	struct gen_state st[g->ncpus];
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.gen_state), &zero, st))
		return -errno;
	*out = cpu < g->ncpus ? st[cpu] : (struct gen_state){};
	return 0;
}

/* One BPF_PROG_RUN call: N live frames from the template. */
static int gen_call(struct gen *g, int n)
{
	struct xdp_md ctx = {
		.data = 0,
		.data_end = g->frame_len, /* live frames: must be the length */
		.ingress_ifindex = g->cfg.ifindex,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = g->frame,
		.data_size_in = g->frame_len,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = n,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		.batch_size = GEN_BATCH,
	);
	int err = bpf_prog_test_run_opts(gen_prog_fd(g), &opts);

	return err < 0 ? -errno : 0;
}

/* Frames owed by T ns into the run at RATE. */
static uint64_t frames_by(double rate, uint64_t t)
{
	return (uint64_t)(rate * t / 1e9 + 0.5);
}

static int clamp_frames(double n)
{
	if (n < 1)
		return 1;
	if (n > 1 << 30)
		return 1 << 30;
	return (int)n;
}

/*
 * How long the next full-speed call should take with LEFT seconds to go:
 * GEN_CALL_S, and near the end half of what is left, since the rate varies
 * from call to call (by 20 % on a busy VM) and the run should end on time.
 */
static double call_seconds(double left)
{
	if (left >= 2 * GEN_CALL_S)
		return GEN_CALL_S;
	return left > 0.002 ? left / 2 : left;
}

/* As fast as possible for DUR_NS. */
static int gen_loop_full(struct gen *g, uint64_t t0, uint64_t dur_ns)
{
	uint64_t t, end = t0 + dur_ns;
	double pps = 0;
	int n, err;

	while ((t = clock_ns(CLOCK_MONOTONIC)) < end) {
		uint64_t t1;

		n = pps ? clamp_frames(pps * call_seconds((end - t) / 1e9)) :
			  GEN_PROBE_FRAMES;
		err = gen_call(g, n);
		if (err)
			return err;
		t1 = clock_ns(CLOCK_MONOTONIC);
		if (t1 > t)
			pps = n * 1e9 / (t1 - t);
	}
	return 0;
}

/*
 * RATE for DUR_NS, in bursts of one pacing period. When behind, a call
 * catches up, but sized to last no longer than an unpaced call at the best
 * rate seen so far: one slow call (the VM was busy) must not shrink the
 * next ones and leave the run short at the end.
 */
static int gen_loop_paced(struct gen *g, uint64_t t0, uint64_t dur_ns,
			  double rate)
{
	uint64_t sent = 0, t;
	double best_pps = 0;
	int err;

	while ((t = clock_ns(CLOCK_MONOTONIC) - t0) < dur_ns) {
		uint64_t period_end = (t / GEN_PACE_NS + 1) * GEN_PACE_NS;
		uint64_t owed;

		if (period_end > dur_ns)
			period_end = dur_ns;
		owed = frames_by(rate, period_end);
		if (owed > sent) {
			double most = best_pps * call_seconds((dur_ns - t) / 1e9);
			int n = clamp_frames(best_pps && owed - sent > most ?
					     most : owed - sent);
			uint64_t c0 = clock_ns(CLOCK_MONOTONIC), c1;

			err = gen_call(g, n);
			if (err)
				return err;
			c1 = clock_ns(CLOCK_MONOTONIC);
			sent += n;
			if (c1 > c0 && n * 1e9 / (c1 - c0) > best_pps)
				best_pps = n * 1e9 / (c1 - c0);
		}
		err = sleep_until(t0 + period_end);
		if (err)
			return err;
	}
	/* A late wake-up (the VM was busy) can skip the last period: send
	 * what it owed if that is little. More means the path cannot keep
	 * up, and the run is over. */
	if (frames_by(rate, dur_ns) > sent &&
	    frames_by(rate, dur_ns) - sent <= frames_by(rate, 2 * GEN_PACE_NS)) {
		int n = frames_by(rate, dur_ns) - sent;

		err = gen_call(g, n);
		if (err)
			return err;
		sent += n;
	}
	if (sent < frames_by(rate, dur_ns))
		pr_debug("Generator: offered %llu of %llu frames: the path "
			 "cannot take %.0f pps\n", (unsigned long long)sent,
			 (unsigned long long)frames_by(rate, dur_ns), rate);
	return 0;
}

/* Pin the calling thread to CPU; OLD receives the affinity to restore. */
static int pin_thread(int cpu, cpu_set_t *old)
{
	cpu_set_t set;
	int err;

	err = pthread_getaffinity_np(pthread_self(), sizeof(*old), old);
	if (err)
		return -err;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		return -err;
	/* The kernel moves us before returning; make sure of it. */
	if (sched_getcpu() != cpu)
		sched_yield();
	return 0;
}

int gen_run_on(struct gen *g, int cpu, struct gen_result *res)
{
	struct gen_state before, after;
	uint64_t t0, t1, dur_ns = g->cfg.duration_s * 1e9;
	int saved_ns = -1, err, err2;
	ino_t ino = g->netns_ino;
	cpu_set_t old;

	memset(res, 0, sizeof(*res));
	if (cpu < 0 || cpu >= CPU_SETSIZE || cpu >= g->ncpus) {
		pr_warn("Generator: invalid CPU %d\n", cpu);
		return -EINVAL;
	}
	/* The transmit port's ifindex means something in gen_open's netns
	 * only: a thread elsewhere joins it for the run. */
	saved_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved_ns < 0 || netns_ino_of(saved_ns, &ino)) {
		err = -errno;
		pr_warn("Generator: cannot open this thread's network namespace: "
			"%s\n", strerror(-err));
		goto out_close;
	}
	if (ino != g->netns_ino && setns(g->netns_fd, CLONE_NEWNET)) {
		err = -errno;
		pr_warn("Generator: cannot enter the generator's network "
			"namespace: %s\n", strerror(-err));
		goto out_close;
	}
	err = pin_thread(cpu, &old);
	if (err) {
		pr_warn("Generator: cannot pin the sending thread to CPU %d: %s\n",
			cpu, strerror(-err));
		goto out_ns;
	}

	err = gen_state_read(g, cpu, &before);
	if (err) {
		pr_warn("Generator: reading its counters failed: %s\n",
			strerror(-err));
		goto out_pin;
	}
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (g->cfg.rate_pps > 0)
		err = gen_loop_paced(g, t0, dur_ns, g->cfg.rate_pps);
	else
		err = gen_loop_full(g, t0, dur_ns);
	t1 = clock_ns(CLOCK_MONOTONIC);
	if (err == -EINTR)
		pr_debug("Generator: interrupted by a signal\n");
	else if (err)
		pr_warn("Generator: BPF_PROG_RUN (live frames) failed on ifindex "
			"%d: %s\n", g->cfg.ifindex, strerror(-err));

	err2 = gen_state_read(g, cpu, &after);
	if (err2) {
		pr_warn("Generator: reading its counters failed: %s\n",
			strerror(-err2));
		err = err ? err : err2;
	} else {
		res->packets = after.packets - before.packets;
		res->bytes = after.bytes - before.bytes;
	}
	res->seconds = (t1 - t0) / 1e9;
out_pin:
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
out_ns:
	if (ino != g->netns_ino && setns(saved_ns, CLONE_NEWNET))
		pr_warn("Generator: cannot return to the caller's network "
			"namespace: %s\n", strerror(errno));
out_close:
	if (saved_ns >= 0)
		close(saved_ns);
	return err;
}

int gen_run(struct gen *g, struct gen_result *res)
{
	return gen_run_on(g, g->cfg.cpu, res);
}
