// SPDX-License-Identifier: GPL-2.0-only
/*
 * The TCP side of the bench, flent-style: iperf3 through the router with 8
 * streams down (server on the WAN host, LAN client with -R), 8 up, and the
 * RRUL-like 4 up + 4 down at once, each with latency probes running
 * alongside: ping (ICMP echo every 0.2 s) and a UDP round-trip probe of our
 * own (one datagram every 0.2 s to an echo thread on the WAN host). What
 * is reported is the aggregate goodput in Mbit/s and the median ping, as
 * "940 (2)" in the router test threads.
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
#define PROBE_INTERVAL 0.2

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
	double rtt_ms[512];
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
	     next += PROBE_INTERVAL) {
		double t0 = bench_now(), echo;

		if (send(fd, &t0, sizeof(t0), 0) == sizeof(t0))
			p->sent++;
		/* Wait for the answer until the next probe is due; a late
		 * answer to an earlier probe is recognised by its stamp. */
		for (;;) {
			double left = next + PROBE_INTERVAL - bench_now();
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

/* bits_per_second of "sum_received" in iperf3's -J output: what the
 * receiving side got, whichever way the data flowed. */
static double iperf_mbps(const char *path)
{
	char *buf = NULL, *p;
	size_t cap = 0;
	double bps = -1;
	FILE *f = fopen(path, "re");
	ssize_t n;

	if (!f)
		return -1;
	n = getdelim(&buf, &cap, 0, f);
	fclose(f);
	if (n > 0 && (p = strstr(buf, "\"sum_received\"")) &&
	    (p = strstr(p, "\"bits_per_second\":")))
		bps = strtod(p + strlen("\"bits_per_second\":"), NULL);
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

int bench_tcp_run(struct bench *b, struct bench_results *r, int rep,
		  enum bench_tcp_test test)
{
	const double secs = b->plan->tcp_s;
	char tsec[16], wsec[16], log[2][128], plog[128], port[2][8];
	pid_t srv[2] = { 0, 0 }, cli[2] = { 0, 0 }, ping = 0;
	int n = test == BT_RRUL ? 2 : 1, err = 0;
	struct probe pr = { .secs = secs };
	pthread_t th[2];
	bool probe_up = false;
	double rtt[512];
	struct bench_tcp *t;
	sigset_t all, old;

	t = new_tcp(r);
	if (!t)
		return -ENOMEM;
	t->rep = rep;
	t->mode = b->mode;
	t->test = test;
	t->seconds = secs;
	t->ping_median_ms = t->udp_median_ms = -1;
	snprintf(tsec, sizeof(tsec), "%g", secs);
	snprintf(wsec, sizeof(wsec), "%d", (int)secs + 1);

	for (int i = 0; i < n; i++) {
		const char *argv[] = { "iperf3", "-s", "-1", "-p", port[i], NULL };

		snprintf(port[i], sizeof(port[i]), "%d", IPERF_PORT + i);
		srv[i] = bench_spawn(b, NS_WAN, NULL, argv);
		if (srv[i] < 0) {
			err = srv[i];
			srv[i] = 0;
			goto out;
		}
	}
	for (int i = 0; i < n; i++) {
		double until = bench_now() + 5;

		while (!listening(b, NS_WAN, IPERF_PORT + i) && !bench_stop &&
		       bench_now() < until)
			bench_sleep(0.02);
		if (!listening(b, NS_WAN, IPERF_PORT + i)) {
			snprintf(t->note, sizeof(t->note), "iperf3 server did not start");
			err = bench_stop ? -EINTR : -ETIMEDOUT;
			goto out;
		}
	}

	/* Latency probes first, so they see the whole transfer. */
	pr.ns_fd[0] = b->ns_fd[NS_LAN];
	pr.ns_fd[1] = b->ns_fd[NS_WAN];
	pthread_mutex_init(&pr.lock, NULL);
	pthread_cond_init(&pr.cond, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (!pthread_create(&th[1], NULL, probe_echo, &pr)) {
		pthread_mutex_lock(&pr.lock);
		while (!pr.ready)
			pthread_cond_wait(&pr.cond, &pr.lock);
		pthread_mutex_unlock(&pr.lock);
		if (!pthread_create(&th[0], NULL, probe_client, &pr)) {
			probe_up = true;
		} else {
			pr.stop = 1;
			pthread_join(th[1], NULL);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	{
		const char *argv[] = { "ping", "-n", "-i", "0.2", "-W", "1", "-w",
				       wsec, BENCH_WAN_HOST, NULL };

		snprintf(plog, sizeof(plog), "%s/ping.log", b->tmp_dir);
		unlink(plog);
		ping = bench_spawn(b, NS_LAN, plog, argv);
		if (ping < 0)
			ping = 0;
	}

	for (int i = 0; i < n; i++) {
		/* RRUL: client 0 uploads, client 1 downloads. */
		bool down = test == BT_DOWN || (test == BT_RRUL && i == 1);
		const char *argv[] = { "iperf3", "-c", BENCH_WAN_HOST, "-p", port[i],
				       "-P", test == BT_RRUL ? "4" : "8", "-t", tsec,
				       "-J", "--connect-timeout", "3000",
				       down ? "-R" : NULL, NULL };

		snprintf(log[i], sizeof(log[i]), "%s/iperf-%d.json", b->tmp_dir, i);
		unlink(log[i]);
		cli[i] = bench_spawn(b, NS_LAN, log[i], argv);
		if (cli[i] < 0) {
			err = cli[i];
			cli[i] = 0;
			goto out;
		}
	}
	for (int i = 0; i < n; i++) {
		int rc = bench_reap(b, cli[i], bench_now() + secs + 15);
		bool down = test == BT_DOWN || (test == BT_RRUL && i == 1);
		double mbps;

		cli[i] = 0;
		if (rc) {
			snprintf(t->note, sizeof(t->note), "iperf3 client %s",
				 rc == -ETIMEDOUT ? "timed out" : "failed");
			err = rc == -EINTR ? rc : 0;
			continue;
		}
		mbps = iperf_mbps(log[i]);
		if (mbps < 0) {
			snprintf(t->note, sizeof(t->note), "no iperf3 result");
			continue;
		}
		if (down)
			t->mbps_down += mbps;
		else
			t->mbps_up += mbps;
	}
	t->mbps = t->mbps_down + t->mbps_up;
	t->ok = !t->note[0] && t->mbps > 0;

out:
	if (ping) {
		bench_reap(b, ping, bench_now() + 3);
		ping = 0;
		t->ping_recv = ping_rtts(plog, rtt, 512, &t->ping_sent);
		if (t->ping_recv) {
			double mn, mx;

			bench_stats(rtt, t->ping_recv, &t->ping_median_ms, &mn, &mx);
		}
	}
	if (probe_up) {
		pthread_join(th[0], NULL);
		pr.stop = 1;
		pthread_join(th[1], NULL);
		t->udp_sent = pr.sent;
		t->udp_recv = pr.recv;
		if (pr.recv) {
			double mn, mx;

			bench_stats(pr.rtt_ms, pr.recv, &t->udp_median_ms, &mn, &mx);
		}
	}
	for (int i = 0; i < 2; i++) {
		if (cli[i])
			bench_kill(b, cli[i]);
		/* One-off servers end with their test; any left is ended. */
		if (srv[i] && bench_reap(b, srv[i], bench_now() + 2) == -ETIMEDOUT)
			pr_debug("iperf3 server %d killed\n", srv[i]);
	}
	if (!err)
		bench_progress("  rep %d %-12s %-11s %.0f Mbit/s (ping %.2f ms, udp %.2f ms)%s%s",
			       rep + 1, bench_mode_names[b->mode],
			       bench_tcp_names[test], t->mbps, t->ping_median_ms,
			       t->udp_median_ms, t->note[0] ? ": " : "", t->note);
	return err;
}
