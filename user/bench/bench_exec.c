// SPDX-License-Identifier: GPL-2.0-only
/*
 * Running things inside the bench's namespaces: entering one (per thread),
 * its sysctls, and commands (ip, ethtool, iperf3, ping, xnat itself) run or
 * started in it, each bounded in time and recorded so that the teardown can
 * end what is left; and the clock, sleep and progress line every part of
 * the bench uses.
 *
 * Commands run in a namespace by forking and joining it (setns) before the
 * exec, not through `ip netns exec`, which would also remount /sys.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "bench_common.h"
#include "log.h"
#include "sysctl.h"

volatile sig_atomic_t bench_stop;

static double t_start;

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void bench_sleep(double s)
{
	double end = bench_now() + s;

	while (!bench_stop) {
		double left = end - bench_now();
		struct timespec ts;

		if (left <= 0)
			break;
		if (left > 0.05)
			left = 0.05;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(left * 1e9);
		nanosleep(&ts, NULL);
	}
}

void bench_progress_restart(void)
{
	t_start = bench_now();
}

void bench_progress(const char *fmt, ...)
{
	double t;
	va_list ap;

	if (!t_start)
		t_start = bench_now();
	t = bench_now() - t_start;
	fprintf(stderr, "[%02d:%02d] ", (int)t / 60, (int)t % 60);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int bench_enter(struct bench *b, enum bench_ns ns)
{
	int fd = ns == NS_MAX ? b->host_ns_fd : b->ns_fd[ns];

	if (fd < 0)
		return -ENOENT;
	if (setns(fd, CLONE_NEWNET)) {
		int err = -errno;

		pr_warn("xnat bench: cannot enter network namespace %s: %s\n",
			ns == NS_MAX ? "of the host" : b->ns_name[ns],
			strerror(-err));
		return err;
	}
	return 0;
}

int bench_sysctl(struct bench *b, enum bench_ns ns, const char *path,
		 const char *value)
{
	int err;

	/* /proc/sys/net belongs to the network namespace of the thread
	 * that opens it. */
	err = bench_enter(b, ns);
	if (err)
		return err;
	err = sysctl_write(path, value);
	bench_enter(b, NS_MAX);
	if (err)
		pr_warn("xnat bench: sysctl %s = %s in %s: %s\n", path, value,
			b->ns_name[ns], strerror(-err));
	return err;
}

long long bench_sysctl_read(struct bench *b, enum bench_ns ns,
			    const char *path)
{
	char buf[32];
	long long v = -1;

	if (bench_enter(b, ns))
		return -1;
	if (!sysctl_read(path, buf, sizeof(buf)) && sscanf(buf, "%lld", &v) != 1)
		v = -1;
	bench_enter(b, NS_MAX);
	return v;
}

long long bench_port_drops(struct bench *b, enum bench_ns ns)
{
	char line[512];
	long long sum = 0;
	FILE *f;

	/* Transmit drops only: a veth that cannot hand a frame to its peer
	 * (the peer's receive ring full) counts it as the sender's
	 * tx_dropped, and for XDP frames as the receiver's rx_dropped too;
	 * the sender's count alone says once where each was lost. */
	if (bench_enter(b, ns))
		return -1;
	/* thread-self: /proc/self/net is the main thread's namespace. */
	f = fopen("/proc/thread-self/net/dev", "re");
	bench_enter(b, NS_MAX);
	if (!f)
		return -1;
	/* "  name: rx bytes packets errs drop fifo frame compressed
	 * multicast, tx bytes packets errs drop ..." after two header
	 * lines. */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[12];
		char *colon = strchr(line, ':');
		char name[IF_NAMESIZE + 1];

		if (!colon || sscanf(line, " %16[^:]", name) != 1 ||
		    !strcmp(name, "lo"))
			continue;
		if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu "
			   "%llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10],
			   &v[11]) != 12) {
			sum = -1;
			break;
		}
		sum += v[11];
	}
	fclose(f);
	return sum;
}

/* ---- child processes ------------------------------------------------------ */

static void child_forget(struct bench *b, pid_t pid)
{
	for (int i = 0; i < BENCH_MAX_CHILDREN; i++)
		if (b->children[i] == pid)
			b->children[i] = 0;
}

pid_t bench_spawn(struct bench *b, enum bench_ns ns, const char *log,
		  const char *const argv[])
{
	int slot = -1, fd = ns == NS_MAX ? b->host_ns_fd : b->ns_fd[ns];
	sigset_t all;
	pid_t pid;

	for (int i = 0; i < BENCH_MAX_CHILDREN && slot < 0; i++)
		if (!b->children[i])
			slot = i;
	if (slot < 0 || fd < 0)
		return -EBUSY;
	if (!log)
		log = "/dev/null";

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int out;

		/* Only async-signal-safe calls until exec: we may have
		 * threads. The child dies with us rather than outlive the
		 * namespace it runs in. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		if (setns(fd, CLONE_NEWNET))
			_exit(126);
		out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		out = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (out >= 0)
			dup2(out, 0);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	b->children[slot] = pid;
	return pid;
}

void bench_kill(struct bench *b, pid_t pid)
{
	double end;
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	for (end = bench_now() + 2; bench_now() < end;) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			child_forget(b, pid);
			return;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	child_forget(b, pid);
}

int bench_reap(struct bench *b, pid_t pid, double deadline)
{
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid) {
			child_forget(b, pid);
			if (WIFEXITED(st))
				return WEXITSTATUS(st);
			return 128 + WTERMSIG(st);
		}
		if (r < 0 && errno != EINTR) {
			child_forget(b, pid);
			return -errno;
		}
		if (bench_stop) {
			bench_kill(b, pid);
			return -EINTR;
		}
		if (bench_now() > deadline) {
			bench_kill(b, pid);
			return -ETIMEDOUT;
		}
		usleep(5000);
	}
}

/* The tail of a command's output, for the one-line error. */
static void last_line(const char *log, char *buf, size_t len)
{
	char line[256];
	FILE *f = fopen(log, "re");

	buf[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0])
			snprintf(buf, len, "%.190s", line);
	}
	fclose(f);
}

/* Append a command's output to OUT/bench.log, under the command line. */
static void keep_log(struct bench *b, const char *log, const char *const argv[],
		     int rc)
{
	char path[512], line[512];
	FILE *in, *out;

	snprintf(path, sizeof(path), "%s/bench.log", b->plan->out_dir);
	out = fopen(path, "ae");
	if (!out)
		return;
	fprintf(out, "$");
	for (int i = 0; argv[i]; i++)
		fprintf(out, " %s", argv[i]);
	fprintf(out, "   # exit %d\n", rc);
	in = fopen(log, "re");
	if (in) {
		while (fgets(line, sizeof(line), in))
			fputs(line, out);
		fclose(in);
	}
	fclose(out);
}

int bench_run(struct bench *b, enum bench_ns ns, double timeout_s,
	      const char *log, const char *const argv[])
{
	char own[96], tail[200];
	pid_t pid;
	int rc;

	if (!log) {
		snprintf(own, sizeof(own), "%s/cmd.log", b->tmp_dir);
		unlink(own);
		log = own;
	}
	pid = bench_spawn(b, ns, log, argv);
	if (pid < 0)
		return pid;
	rc = bench_reap(b, pid, bench_now() + timeout_s);
	if (log == own) {
		keep_log(b, log, argv, rc);
		if (rc && rc != -EINTR) {
			last_line(log, tail, sizeof(tail));
			pr_warn("xnat bench: %s ... in %s failed (%s%d)%s%s\n",
				argv[0], ns == NS_MAX ? "host" : b->ns_name[ns],
				rc == -ETIMEDOUT ? "timed out, " : "exit ",
				rc, tail[0] ? ": " : "", tail);
		}
	}
	return rc;
}

void bench_kill_all(struct bench *b)
{
	for (int i = 0; i < BENCH_MAX_CHILDREN; i++)
		if (b->children[i])
			bench_kill(b, b->children[i]);
}
