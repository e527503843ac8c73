// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat trace: every packet the filter selects, live, one line each: when,
 * where it came in, the tuple it arrived with and the one it left with,
 * its path (fast, slow, kernel, dropped) and reason (the names of `xnat
 * stats`), where it went out, and for a packet that created its flow, what
 * was decided. The data path does the selecting (bpf/trace.h): this
 * command writes the filter and a lease into xnat_trace_cfg, reads events
 * from the xnat_trace_rb ring buffer, and switches the trace off again on
 * every way out (COUNT reached, Ctrl-C, SIGTERM, a closed pipe); a tracer
 * killed outright stops costing when its lease runs out. One tracer per
 * router at a time (a lock file next to the state), because a ring buffer
 * has one reader. What the filter matched but was not shown (over the
 * rate, ring full) is counted in the BPF program and reported, never lost
 * silently.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "cmd.h"
#include "config.h"
#include "fsutil.h"
#include "json.h"
#include "loader.h"
#include "names.h"
#include "natlog.h"
#include "pins.h"
#include "reasons.h"
#include "state.h"
#include "trace_filter.h"

/* The lease the data path honours, and how often it is renewed. */
#define LEASE_NS (5 * 1000000000ULL)
#define POLL_MS 250

static volatile sig_atomic_t stop;

struct tracer {
	const struct opts *o;
	int cfg_fd, cpu_fd;
	__u64 shown, limit;     /* limit 0: until stopped */
	__u64 lost_reported;
	__s64 realtime_off_ns;  /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	int write_failed;
	int discard;            /* draining events of an earlier tracer */
};

static void on_signal(int sig)
{
	stop = 1;
}

static const char *ifname(__u32 ifindex, char *buf)
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "#%u", ifindex);
	return buf;
}

/* What a new flow's first packet decided, in words. */
static void decision(const struct trace_event *e, const char *src,
		     const char *dst, const char *nsrc, const char *ndst,
		     char *buf, size_t len)
{
	switch (e->nat) {
	case FLOW_NAT_SNAT:
		snprintf(buf, len, "snat: mapping %s -> %s", src, nsrc);
		break;
	case FLOW_NAT_DNAT:
		snprintf(buf, len, "dnat: port forward %s -> %s", dst, ndst);
		break;
	case FLOW_NAT_HAIRPIN:
		snprintf(buf, len, "hairpin: port forward %s -> %s, source %s",
			 dst, ndst, nsrc);
		break;
	case FLOW_NAT_INBOUND:
		snprintf(buf, len, "inbound: through the mapping %s -> %s",
			 dst, ndst);
		break;
	case FLOW_NAT_CT:
		snprintf(buf, len, "offloaded: the kernel's conntrack entry, "
			 "%s > %s as %s > %s", src, dst, nsrc, ndst);
		break;
	default:
		snprintf(buf, len, "routed, no NAT");
	}
}

/* Offload mode's timer took an entry off the fast path: no packet. */
static void print_returned(struct tracer *t, const struct trace_event *e,
			   const char *when, const char *in, const char *src,
			   const char *dst, const char *nsrc, const char *ndst,
			   const char *why)
{
	if (t->o->json) {
		json_obj_begin(NULL);
		json_str("time", when);
		json_u64("ts_ns", e->ts_ns);
		json_str("event", "flow_returned");
		json_str("why", why);
		json_str("ingress", in);
		json_str("proto", proto_name(e->key.proto));
		json_str("src", src);
		json_str("dst", dst);
		json_str("new_src", nsrc);
		json_str("new_dst", ndst);
		json_obj_end();
		json_done();
		return;
	}
	printf("%s %-6s %-4s %s > %s", when, in, proto_name(e->key.proto), src,
	       dst);
	if (strcmp(src, nsrc) || strcmp(dst, ndst))
		printf(" => %s > %s", nsrc, ndst);
	printf("  flow returned to the kernel: %s\n", why);
}

static void print_event(struct tracer *t, const struct trace_event *e)
{
	char src[64], dst[64], nsrc[64], ndst[64], in[IF_NAMESIZE],
		out[IF_NAMESIZE], when[32], what[320];
	__u64 wall = e->ts_ns + t->realtime_off_ns;
	const char *returned = NULL;
	time_t secs = wall / 1000000000ULL;
	const char *reason = e->reason < XNAT_REASON_MAX ?
				     reasons[e->reason].name : "?";
	struct tm tm;
	size_t n;

	localtime_r(&secs, &tm);
	n = strftime(when, sizeof(when), "%H:%M:%S", &tm);
	snprintf(when + n, sizeof(when) - n, ".%06llu",
		 (unsigned long long)(wall % 1000000000ULL) / 1000);
	trace_endpoints(e, src, dst, nsrc, ndst);
	ifname(e->key.ifindex, in);
	if (e->egress_ifindex)
		ifname(e->egress_ifindex, out);
	if (e->new_flow)
		decision(e, src, dst, nsrc, ndst, what, sizeof(what));
	/* An offloaded connection handed back to the kernel: by this
	 * packet, or (flow_returned) by the entry's timer. */
	if (e->flow_returned)
		returned = flowlog_why_name(e->flow_returned);
	else if (e->reason == XNAT_PASS_CT_TCP_END)
		returned = flowlog_why_name(FLOWLOG_WHY_TCP_END);
	else if (e->reason == XNAT_PASS_CT_GONE)
		returned = flowlog_why_name(FLOWLOG_WHY_CT_GONE);

	if (e->flow_returned) {
		print_returned(t, e, when, in, src, dst, nsrc, ndst, returned);
	} else if (t->o->json) {
		json_obj_begin(NULL);
		json_str("time", when);
		json_u64("ts_ns", e->ts_ns);
		json_str("ingress", in);
		if (e->key.vid)
			json_u64("ingress_vlan", e->key.vid);
		json_str("proto", proto_name(e->key.proto));
		json_str("src", src);
		json_str("dst", dst);
		json_str("new_src", nsrc);
		json_str("new_dst", ndst);
		json_str("path", trace_path(e));
		json_str("reason", reason);
		if (e->egress_ifindex) {
			json_str("egress", out);
			if (e->egress_vid)
				json_u64("egress_vlan", e->egress_vid);
		}
		json_u64("len", e->len);
		json_u64("cpu", e->cpu);
		if (e->new_flow) {
			json_obj_begin("new_flow");
			json_str("nat", trace_nat_name(e->nat));
			json_str("decision", what);
			json_obj_end();
		}
		if (returned)
			json_str("flow_returned", returned);
		json_obj_end();
		json_done();
	} else {
		printf("%s %-6s %-4s %s > %s", when, in,
		       proto_name(e->key.proto), src, dst);
		if (strcmp(src, nsrc) || strcmp(dst, ndst))
			printf(" => %s > %s", nsrc, ndst);
		printf("  %s %s", trace_path(e), reason);
		if (e->egress_ifindex)
			printf(" -> %s", out);
		if (e->new_flow)
			printf("  new flow: %s", what);
		if (returned)
			printf("  flow returned to the kernel: %s", returned);
		printf("\n");
	}
	if (fflush(stdout) || ferror(stdout))
		t->write_failed = 1;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct tracer *t = ctx;

	if (len < sizeof(struct trace_event))
		return 0;
	/* Past COUNT, or left by an earlier tracer: not shown (the summary
	 * counts it). A callback's error would stop libbpf mid-ring. */
	if (t->discard || (t->limit && t->shown >= t->limit) || t->write_failed)
		return 0;
	print_event(t, data);
	t->shown++;
	return 0;
}

/* Matched and lost summed over the CPUs. */
static int read_cpu_counts(int fd, __u64 *matched, __u64 *lost)
{
	int ncpu = libbpf_num_possible_cpus();
	struct trace_cpu per[ncpu > 0 ? ncpu : 1];
	__u32 zero = 0;

	*matched = *lost = 0;
	if (ncpu <= 0 || bpf_map_lookup_elem(fd, &zero, per))
		return -errno;
	for (int c = 0; c < ncpu; c++) {
		*matched += per[c].matched;
		*lost += per[c].lost;
	}
	return 0;
}

static void report_lost(struct tracer *t, __u64 lost)
{
	if (lost <= t->lost_reported)
		return;
	if (t->o->json) {
		json_obj_begin(NULL);
		json_u64("not_shown", lost);
		json_obj_end();
		json_done();
	} else {
		printf("-- %llu packets matched but not shown so far (over "
		       "the rate or the ring buffer full)\n",
		       (unsigned long long)lost);
		fflush(stdout);
	}
	t->lost_reported = lost;
}

static int zero_cpu_counts(int fd)
{
	int ncpu = libbpf_num_possible_cpus();
	struct trace_cpu per[ncpu > 0 ? ncpu : 1];
	__u32 zero = 0;

	memset(per, 0, sizeof(per));
	return bpf_map_update_elem(fd, &zero, per, BPF_ANY) ? -errno : 0;
}

static int set_config(int fd, struct trace_config *tc)
{
	__u32 zero = 0;

	return bpf_map_update_elem(fd, &zero, tc, BPF_ANY) ? -errno : 0;
}

/* The router here runs no XDP: say what sees its packets instead. */
static int kernel_mode_hint(const struct opts *o)
{
	return fail(o, EXIT_USAGE,
		    "trace: the router runs in kernel mode, where XDP sees no "
		    "packet; use `nft monitor trace` with a rule that sets "
		    "`meta nftrace set 1` (see nft(8))");
}

/*
 * One tracer per router: a lock file in the router's run directory, removed
 * again on exit so that `xnat down` finds the directory empty. A tracer that
 * locked a file another one has just removed retries on the new one.
 */
static int lock_tracer(const struct opts *o, char *path, size_t len)
{
	struct stat a, b;
	int fd;

	snprintf(path, len, "%s/trace.lock", state_run_dir());
	for (int tries = 0; tries < 10; tries++) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			fail(o, EXIT_SYSTEM, "trace: failed to open %s: %s",
			     path, strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int busy = errno == EWOULDBLOCK;

			fail(o, EXIT_SYSTEM, "trace: %s", busy ?
			     "another xnat trace runs on this router; one at "
			     "a time (the ring buffer has one reader)" :
			     strerror(errno));
			close(fd);
			return -1;
		}
		if (!fstat(fd, &a) && !stat(path, &b) && a.st_ino == b.st_ino)
			return fd;
		close(fd);
	}
	fail(o, EXIT_SYSTEM, "trace: failed to lock %s", path);
	return -1;
}

/* -c COUNT and --rate N into the tracer and the filter: 0, or the exit
 * code of a usage error (already reported). */
static int parse_limits(const struct opts *o, struct tracer *t,
			struct trace_config *tc)
{
	char *end;

	if (o->count) {
		errno = 0;
		t->limit = strtoull(o->count, &end, 10);
		if (errno || end == o->count || *end || !t->limit)
			return fail(o, EXIT_USAGE,
				    "trace: -c '%s' is not a positive count",
				    o->count);
	}
	if (o->rate) {
		unsigned long r;

		errno = 0;
		r = strtoul(o->rate, &end, 10);
		if (errno || end == o->rate || *end || !r || r > 10000000)
			return fail(o, EXIT_USAGE, "trace: --rate '%s' is not "
				    "a number in [1, 10000000]", o->rate);
		tc->rate = r;
	}
	return 0;
}

/* Read events until a signal, a write error or COUNT, renewing the lease
 * every second and saying how many were lost: 0, or -1 on a failure
 * (already reported). */
static int trace_loop(const struct opts *o, struct tracer *t,
		      struct ring_buffer *rb, struct trace_config *tc)
{
	__u64 renewed = clock_ns(CLOCK_MONOTONIC), matched, lost;
	int e;

	while (!stop && !t->write_failed && !(t->limit && t->shown >= t->limit)) {
		__u64 now;

		e = ring_buffer__poll(rb, POLL_MS);
		if (e < 0 && e != -EINTR) {
			fail(o, EXIT_SYSTEM, "trace: failed to read %s: %s",
			     MAP_TRACE_RB, strerror(-e));
			return -1;
		}
		now = clock_ns(CLOCK_MONOTONIC);
		if (now - renewed >= 1000000000ULL) {
			tc->lease_end_ns = now + LEASE_NS;
			if ((e = set_config(t->cfg_fd, tc))) {
				fail(o, EXIT_SYSTEM, "trace: failed to renew the "
				     "lease in %s: %s", MAP_TRACE_CFG,
				     strerror(-e));
				return -1;
			}
			renewed = now;
		}
		if (!read_cpu_counts(t->cpu_fd, &matched, &lost))
			report_lost(t, lost);
	}
	return 0;
}

/* The last word: matched, shown and not shown. */
static void print_summary(const struct opts *o, struct tracer *t)
{
	__u64 matched, lost, not_shown;

	if (t->write_failed || read_cpu_counts(t->cpu_fd, &matched, &lost))
		return;
	/* Matched but never printed: over the rate, ring full, or still in
	 * the ring when COUNT was reached. */
	not_shown = matched > t->shown ? matched - t->shown : 0;
	if (o->json) {
		json_obj_begin(NULL);
		json_obj_begin("summary");
		json_u64("matched", matched);
		json_u64("shown", t->shown);
		json_u64("not_shown", not_shown);
		json_u64("over_rate_or_ring_full", lost);
		json_obj_end();
		json_obj_end();
		json_done();
	} else {
		fprintf(stderr, "xnat trace: %llu packets matched, %llu "
			"shown, %llu not shown (%llu over the rate or "
			"the ring full)\n",
			(unsigned long long)matched,
			(unsigned long long)t->shown,
			(unsigned long long)not_shown,
			(unsigned long long)lost);
	}
}

/* The ring buffer over the pinned trace maps, with what a tracer before us
 * left unread dropped: NULL on a failure (already reported). */
static struct ring_buffer *open_ring(const struct opts *o, struct tracer *t,
				     int rb_fd)
{
	struct ring_buffer *rb;

	rb = ring_buffer__new(rb_fd, on_event, t, NULL);
	if (!rb) {
		fail(o, EXIT_SYSTEM, "trace: failed to open ring buffer "
		     "%s: %s", MAP_TRACE_RB, strerror(errno));
		return NULL;
	}
	t->discard = 1;
	ring_buffer__consume(rb);
	t->discard = 0;
	return rb;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* `xnat trace | head`: a write error ends the trace, not SIGPIPE,
	 * so the trace is switched off on the way out. */
	signal(SIGPIPE, SIG_IGN);
}

static void close_fds(int rb_fd, int cpu_fd, int cfg_fd)
{
	close_fd(rb_fd);
	close_fd(cpu_fd);
	close_fd(cfg_fd);
}

int cmd_trace(const struct opts *o)
{
	struct tracer t = { .o = o, .cfg_fd = -1, .cpu_fd = -1 };
	struct ring_buffer *rb = NULL;
	struct trace_config tc;
	struct xnat_state st;
	char err[256], lock_path[128];
	int rb_fd = -1, lock_fd = -1, ret = EXIT_SYSTEM, e;

	if (trace_filter_parse(o->nargs, o->args, &tc, err, sizeof(err)))
		return fail(o, EXIT_USAGE, "trace: %s", err);
	if ((e = parse_limits(o, &t, &tc)))
		return e;
	if (state_load(&st))
		return fail(o, EXIT_SYSTEM, "trace: xnat is not up here");
	if (st.mode == MODE_KERNEL)
		return kernel_mode_hint(o);

	t.cfg_fd = pins_map_open(MAP_TRACE_CFG);
	t.cpu_fd = pins_map_open(MAP_TRACE_CPU);
	rb_fd = pins_map_open(MAP_TRACE_RB);
	if (t.cfg_fd < 0 || t.cpu_fd < 0 || rb_fd < 0) {
		ret = fail(o, EXIT_SYSTEM, "trace: the running router has no "
			   "trace maps (started by an older xnat); reload it "
			   "with `xnat up -c FILE`");
		goto out;
	}
	lock_fd = lock_tracer(o, lock_path, sizeof(lock_path));
	if (lock_fd < 0)
		goto out;
	rb = open_ring(o, &t, rb_fd);
	if (!rb)
		goto out;
	catch_signals();

	t.realtime_off_ns = (__s64)(clock_ns(CLOCK_REALTIME) -
				    clock_ns(CLOCK_MONOTONIC));
	/* Counters first, then the filter, then switch on: the data path
	 * never sees half a filter. */
	tc.active = 0;
	tc.lease_end_ns = clock_ns(CLOCK_MONOTONIC) + LEASE_NS;
	if ((e = zero_cpu_counts(t.cpu_fd)) || (e = set_config(t.cfg_fd, &tc))) {
		ret = fail(o, EXIT_SYSTEM, "trace: failed to write the filter "
			   "to %s: %s", MAP_TRACE_CFG, strerror(-e));
		goto out;
	}
	tc.active = 1;
	if ((e = set_config(t.cfg_fd, &tc))) {
		ret = fail(o, EXIT_SYSTEM, "trace: failed to switch the trace "
			   "on in %s: %s", MAP_TRACE_CFG, strerror(-e));
		goto off;
	}
	if (!o->json)
		fprintf(stderr, "xnat trace: tracing, at most %u events/s per "
			"CPU; Ctrl-C stops\n", tc.rate);

	if (trace_loop(o, &t, rb, &tc))
		goto off;
	ret = t.write_failed ? EXIT_SYSTEM : EXIT_OK;
off:
	tc.active = 0;
	if ((e = set_config(t.cfg_fd, &tc))) {
		fail(o, EXIT_SYSTEM, "trace: failed to switch the trace off in "
		     "%s: %s (it stops by itself within %llu s)", MAP_TRACE_CFG,
		     strerror(-e), LEASE_NS / 1000000000ULL);
		ret = EXIT_SYSTEM;
	}
	/* Events already in the ring: shown if the count allows. */
	if (!t.write_failed)
		ring_buffer__consume(rb);
	print_summary(o, &t);
out:
	ring_buffer__free(rb);
	if (lock_fd >= 0) {
		unlink(lock_path);
		close(lock_fd);
	}
	close_fds(rb_fd, t.cpu_fd, t.cfg_fd);
	return ret;
}
