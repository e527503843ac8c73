// SPDX-License-Identifier: GPL-2.0-only
/*
 * The TCP side of the bench, flent-style: iperf3 through the router with 8
 * streams down (server on the WAN host, LAN client with -R), 8 up, and the
 * RRUL-like 4 up + 4 down at once, each with latency probes running
 * alongside: ping (ICMP echo every 0.2 s) and a UDP round-trip probe of our
 * own (one datagram every 0.2 s to an echo thread on the WAN host). What
 * is reported is the aggregate goodput in Mbit/s and the median ping, as
 * "940 (2)" in the router test threads, and every round trip the probes
 * measured (the report's percentiles).
 *
 * Every process is bounded: iperf3 by -t plus a margin, ping by -w, and
 * all of them killed by PID if they overstay.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "bench_common.h"
#include "log.h"

const char *const bench_tcp_names[BT_MAX] = {
	[BT_DOWN] = "tcp-8-down", [BT_UP] = "tcp-8-up", [BT_RRUL] = "rrul-4+4",
};

#define IPERF_PORT 5201
#define PROBE_PORT 7      /* echo */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_stats(double *v, int n, double *med, double *min, double *max)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*min = v[0];
	*max = v[n - 1];
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the UDP probe ------------------------------------------------------------ */

struct probe {
	int ns_fd[2];               /* LAN (client), WAN (echo) */
	double secs;
	volatile int stop;          /* tells the echo thread to end */
	int ready;                  /* echo socket bound */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	double rtt_ms[BENCH_PROBES_MAX];
	int sent, recv;
	int err;
};

static void *probe_echo(void *arg)
{
	struct probe *p = arg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PROBE_PORT) };
	int fd = -1;

	if (setns(p->ns_fd[1], CLONE_NEWNET) ||
	    (fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)))
		p->err = -errno;
	pthread_mutex_lock(&p->lock);
	p->ready = p->err ? -1 : 1;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	while (!p->err && !p->stop) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		char buf[64];
		ssize_t n;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
		if (n > 0)
			sendto(fd, buf, n, 0, (struct sockaddr *)&from, flen);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void *probe_client(void *arg)
{
	struct probe *p = arg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PROBE_PORT) };
	double end, next;
	int fd;

	inet_pton(AF_INET, BENCH_WAN_HOST, &a.sin_addr);
	if (setns(p->ns_fd[0], CLONE_NEWNET) ||
	    (fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
		p->err = -errno;
		return NULL;
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		p->err = -errno;
		close(fd);
		return NULL;
	}
	end = bench_now() + p->secs;
	for (next = bench_now(); next < end && !bench_stop &&
	     p->sent < (int)(sizeof(p->rtt_ms) / sizeof(p->rtt_ms[0]));
	     next += BENCH_PROBE_INTERVAL_S) {
		double t0 = bench_now(), echo;

		if (send(fd, &t0, sizeof(t0), 0) == sizeof(t0))
			p->sent++;
		/* Wait for the answer until the next probe is due; a late
		 * answer to an earlier probe is recognised by its stamp. */
		for (;;) {
			double left = next + BENCH_PROBE_INTERVAL_S - bench_now();
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
				break;
			if (recv(fd, &echo, sizeof(echo), 0) != sizeof(echo))
				continue;
			if (p->recv < (int)(sizeof(p->rtt_ms) / sizeof(p->rtt_ms[0])))
				p->rtt_ms[p->recv++] = (bench_now() - echo) * 1e3;
		}
	}
	close(fd);
	return NULL;
}

/* ---- helpers -------------------------------------------------------------------- */

/* Is something listening on TCP PORT in NS? */
static bool listening(struct bench *b, enum bench_ns ns, int port)
{
	static const char *const files[] = { "/proc/thread-self/net/tcp6",
					     "/proc/thread-self/net/tcp" };
	char line[256];
	bool found = false;

	if (bench_enter(b, ns))
		return false;
	for (int i = 0; i < 2 && !found; i++) {
		FILE *f = fopen(files[i], "re");

		if (!f)
			continue;
		while (!found && fgets(line, sizeof(line), f)) {
			char local[64];
			unsigned int st;
			char *colon;

			if (sscanf(line, "%*d: %63s %*s %x", local, &st) != 2)
				continue;
			colon = strrchr(local, ':');
			found = st == 0x0a && colon &&
				strtoul(colon + 1, NULL, 16) == (unsigned long)port;
		}
		fclose(f);
	}
	bench_enter(b, NS_MAX);
	return found;
}

/* From an iperf3 -J document: the receiving side's goodput in Mbit/s,
 * whichever way the data flowed (-1: none),
 * and in *RETRANS the sender's retransmitted segments (its "end" summary's
 * "sum_sent", which a -R client has from the server; -1: none). */
static double iperf_result(const char *path, long long *retrans)
{
	static const char bps_key[] = "\"bits_per_second\":",
			  re_key[] = "\"retransmits\":";
	char *buf = NULL, *end, *sent, *recv, *p;
	size_t cap = 0;
	double bps = -1;
	FILE *f = fopen(path, "re");
	ssize_t n;

	*retrans = -1;
	if (!f)
		return -1;
	n = getdelim(&buf, &cap, 0, f);
	fclose(f);
	/* After "end": the intervals before it have sums of their own. */
	if (n > 0 && (end = strstr(buf, "\"end\"")) &&
	    (sent = strstr(end, "\"sum_sent\"")) &&
	    (recv = strstr(end, "\"sum_received\""))) {
		if ((p = strstr(recv, bps_key)))
			bps = strtod(p + strlen(bps_key), NULL);
		if ((p = strstr(sent, re_key)) && p < recv)
			*retrans = strtoll(p + strlen(re_key), NULL, 10);
	}
	free(buf);
	return bps < 0 ? -1 : bps / 1e6;
}

/* Round-trip times from ping's "time=X ms" lines. */
static int ping_rtts(const char *path, double *v, int max, int *sent)
{
	char line[256];
	int n = 0;
	FILE *f = fopen(path, "re");

	*sent = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *t = strstr(line, "time=");
		int tx;

		if (t && n < max)
			v[n++] = strtod(t + 5, NULL);
		if (sscanf(line, "%d packets transmitted", &tx) == 1)
			*sent = tx;
	}
	fclose(f);
	return n;
}

static struct bench_tcp *new_tcp(struct bench_results *r)
{
	return bench_array_push(&r->tcp, &r->n_tcp, &r->cap_tcp,
				sizeof(*r->tcp), 16);
}

/* ---- one TCP test ------------------------------------------------------------------ */

/* One TCP test's processes and probes, for its steps below. */
struct tcp_run {
	struct bench *b;
	struct bench_tcp *t;
	enum bench_tcp_test test;
	int n;                     /* iperf3 pairs: 2 for RRUL */
	char tsec[16], wsec[16], log[2][128], plog[128], port[2][8];
	pid_t srv[2], cli[2], ping;
	struct probe pr;
	pthread_t th[2];
	bool probe_up;
	long long drops0[2];       /* hosts', router's ports before the test */
};

/* Start the one-off iperf3 servers in the WAN host and wait until they
 * listen. */
static int servers_start(struct tcp_run *x)
{
	struct bench *b = x->b;

	for (int i = 0; i < x->n; i++) {
		const char *argv[] = { "iperf3", "-s", "-1", "-p", x->port[i], NULL };

		snprintf(x->port[i], sizeof(x->port[i]), "%d", IPERF_PORT + i);
		x->srv[i] = bench_spawn(b, NS_WAN, NULL, argv);
		if (x->srv[i] < 0) {
			int err = x->srv[i];

			x->srv[i] = 0;
			return err;
		}
	}
	for (int i = 0; i < x->n; i++) {
		double until = bench_now() + 5;

		while (!listening(b, NS_WAN, IPERF_PORT + i) && !bench_stop &&
		       bench_now() < until)
			bench_sleep(0.02);
		if (!listening(b, NS_WAN, IPERF_PORT + i)) {
			snprintf(x->t->note, sizeof(x->t->note), "iperf3 server did not start");
			return bench_stop ? -EINTR : -ETIMEDOUT;
		}
	}
	return 0;
}

/* The latency probes (UDP echo threads and ping), started before the
 * transfer so that they see all of it. */
static void probes_start(struct tcp_run *x)
{
	struct probe *pr = &x->pr;
	char interval[16];
	const char *argv[] = { "ping", "-n", "-i", interval, "-W", "1", "-w",
			       x->wsec, BENCH_WAN_HOST, NULL };
	sigset_t all, old;

	snprintf(interval, sizeof(interval), "%g", BENCH_PROBE_INTERVAL_S);
	pr->ns_fd[0] = x->b->ns_fd[NS_LAN];
	pr->ns_fd[1] = x->b->ns_fd[NS_WAN];
	pthread_mutex_init(&pr->lock, NULL);
	pthread_cond_init(&pr->cond, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (!pthread_create(&x->th[1], NULL, probe_echo, pr)) {
		pthread_mutex_lock(&pr->lock);
		while (!pr->ready)
			pthread_cond_wait(&pr->cond, &pr->lock);
		pthread_mutex_unlock(&pr->lock);
		if (!pthread_create(&x->th[0], NULL, probe_client, pr)) {
			x->probe_up = true;
		} else {
			pr->stop = 1;
			pthread_join(x->th[1], NULL);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	snprintf(x->plog, sizeof(x->plog), "%s/ping.log", x->b->tmp_dir);
	unlink(x->plog);
	x->ping = bench_spawn(x->b, NS_LAN, x->plog, argv);
	if (x->ping < 0)
		x->ping = 0;
}

/* RRUL: client 0 uploads, client 1 downloads. */
static bool client_down(const struct tcp_run *x, int i)
{
	return x->test == BT_DOWN || (x->test == BT_RRUL && i == 1);
}

/* Run the iperf3 clients in the LAN host to their end; their Mbit/s. */
static int clients_run(struct tcp_run *x)
{
	struct bench_tcp *t = x->t;
	int err = 0;

	for (int i = 0; i < x->n; i++) {
		const char *argv[] = { "iperf3", "-c", BENCH_WAN_HOST, "-p", x->port[i],
				       "-P", x->test == BT_RRUL ? "4" : "8", "-t", x->tsec,
				       "-J", "--connect-timeout", "3000",
				       client_down(x, i) ? "-R" : NULL, NULL };

		snprintf(x->log[i], sizeof(x->log[i]), "%s/iperf-%d.json",
			 x->b->tmp_dir, i);
		unlink(x->log[i]);
		x->cli[i] = bench_spawn(x->b, NS_LAN, x->log[i], argv);
		if (x->cli[i] < 0) {
			err = x->cli[i];
			x->cli[i] = 0;
			return err;
		}
	}
	t->retransmits = 0;
	for (int i = 0; i < x->n; i++) {
		int rc = bench_reap(x->b, x->cli[i], bench_now() + t->seconds + 15);
		long long retrans;
		double mbps;

		x->cli[i] = 0;
		if (rc) {
			snprintf(t->note, sizeof(t->note), "iperf3 client %s",
				 rc == -ETIMEDOUT ? "timed out" : "failed");
			err = rc == -EINTR ? rc : 0;
			continue;
		}
		mbps = iperf_result(x->log[i], &retrans);
		if (mbps < 0) {
			snprintf(t->note, sizeof(t->note), "no iperf3 result");
			continue;
		}
		if (retrans < 0 || t->retransmits < 0)
			t->retransmits = -1;
		else
			t->retransmits += retrans;
		if (client_down(x, i))
			t->mbps_down += mbps;
		else
			t->mbps_up += mbps;
	}
	t->mbps = t->mbps_down + t->mbps_up;
	t->ok = !t->note[0] && t->mbps > 0;
	return err;
}

/* The ports' drop counters before the test (AFTER 0), then the test's
 * drops, hosts' and router's apart. */
static void port_drops(struct tcp_run *x, int after)
{
	long long lan = bench_port_drops(x->b, NS_LAN),
		  wan = bench_port_drops(x->b, NS_WAN),
		  rtr = bench_port_drops(x->b, NS_RTR);
	long long hosts = lan < 0 || wan < 0 ? -1 : lan + wan;

	if (!after) {
		x->drops0[0] = hosts;
		x->drops0[1] = rtr;
		return;
	}
	x->t->host_drops = hosts < 0 || x->drops0[0] < 0 ? -1 :
			   hosts - x->drops0[0];
	x->t->router_drops = rtr < 0 || x->drops0[1] < 0 ? -1 :
			     rtr - x->drops0[1];
}

/* Stop the probes; keep every round trip (sorted) and the medians. */
static void probes_collect(struct tcp_run *x)
{
	struct bench_tcp *t = x->t;
	double mn, mx;

	if (x->ping) {
		bench_reap(x->b, x->ping, bench_now() + 3);
		x->ping = 0;
		t->ping_recv = ping_rtts(x->plog, t->ping_rtt_ms, BENCH_PROBES_MAX,
					 &t->ping_sent);
		if (t->ping_recv)
			bench_stats(t->ping_rtt_ms, t->ping_recv, &t->ping_median_ms,
				    &mn, &mx);
	}
	if (x->probe_up) {
		pthread_join(x->th[0], NULL);
		x->pr.stop = 1;
		pthread_join(x->th[1], NULL);
		t->udp_sent = x->pr.sent;
		t->udp_recv = x->pr.recv;
		memcpy(t->udp_rtt_ms, x->pr.rtt_ms, sizeof(t->udp_rtt_ms));
		if (t->udp_recv)
			bench_stats(t->udp_rtt_ms, t->udp_recv, &t->udp_median_ms,
				    &mn, &mx);
	}
}

/* End whatever iperf3 is left. */
static void procs_end(struct tcp_run *x)
{
	for (int i = 0; i < 2; i++) {
		if (x->cli[i])
			bench_kill(x->b, x->cli[i]);
		/* One-off servers end with their test; any left is ended. */
		if (x->srv[i] && bench_reap(x->b, x->srv[i], bench_now() + 2) == -ETIMEDOUT)
			pr_debug("iperf3 server %d killed\n", x->srv[i]);
	}
}

int bench_tcp_run(struct bench *b, struct bench_results *r, int rep,
		  enum bench_tcp_test test)
{
	struct tcp_run x = {
		.b = b, .test = test, .n = test == BT_RRUL ? 2 : 1,
		.pr = { .secs = b->plan->tcp_s },
	};
	struct bench_tcp *t;
	int err;

	t = x.t = new_tcp(r);
	if (!t)
		return -ENOMEM;
	t->rep = rep;
	t->mode = b->mode;
	t->test = test;
	t->seconds = b->plan->tcp_s;
	t->ping_median_ms = t->udp_median_ms = -1;
	snprintf(x.tsec, sizeof(x.tsec), "%g", t->seconds);
	snprintf(x.wsec, sizeof(x.wsec), "%d", (int)t->seconds + 1);

	port_drops(&x, 0);
	err = servers_start(&x);
	if (!err) {
		probes_start(&x);
		err = clients_run(&x);
	}
	probes_collect(&x);
	procs_end(&x);
	port_drops(&x, 1);
	if (!err)
		bench_progress("  rep %d %-12s %-11s %.0f Mbit/s (ping %.2f ms, udp %.2f ms, "
			       "%lld retransmitted, %lld + %lld dropped)%s%s",
			       rep + 1, bench_mode_names[b->mode],
			       bench_tcp_names[test], t->mbps, t->ping_median_ms,
			       t->udp_median_ms, t->retransmits, t->host_drops,
			       t->router_drops, t->note[0] ? ": " : "", t->note);
	return err;
}
