// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat metrics --listen ADDR:PORT: a Prometheus scrape target. GET /metrics
 * answers with what `xnat stats --format prometheus` prints (metrics.c),
 * read afresh for each request. The HTTP side is libmicrohttpd's, with its
 * own thread, created after main() entered the router's network namespace
 * so it listens there. Runs until SIGINT or SIGTERM.
 *
 * A router's metrics port is reachable by whoever can reach the address it
 * is given (there is no default: ":PORT" would be every address, the
 * WAN's too), and must stay up for the scraper whatever they do: the
 * thread waits with epoll, not select (which stops at descriptor 1023);
 * connections are limited in all and per client address, the rest
 * closed as accepted; an unfinished request is closed after
 * METRICS_IDLE_S without a byte, and may use METRICS_CONN_BYTES; and
 * libmicrohttpd's complaints (one per refused connection) are rate
 * limited, so a flood cannot fill the log either.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include "cmd.h"
#include "log.h"
#include "metrics.h"

/* Connections at once, and from one address: a Prometheus server scrapes
 * a target one request at a time; a few more for people with curl. A
 * client flooding from one address gets METRICS_CONN_PER_IP, the others
 * go on being served. */
#define METRICS_CONN_MAX 256
#define METRICS_CONN_PER_IP 4
/* Seconds an unfinished request may stay silent: a scraper sends its
 * request at once, in one segment. */
#define METRICS_IDLE_S 5
/* A connection's buffers (request line, headers, reply headers): a
 * scrape's request is a few hundred bytes; the body is sent apart. */
#define METRICS_CONN_BYTES (16 * 1024)
/* libmicrohttpd's messages: at most one each this many seconds, the
 * count of those held back said with the next. */
#define METRICS_LOG_EVERY_S 10

static volatile sig_atomic_t stop;

static struct {
	pthread_mutex_t lock;
	time_t last;
	unsigned long held;
} mhd_log = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* libmicrohttpd's logger (its thread), rate limited. */
static void log_mhd(void *cls, const char *fmt, va_list ap)
{
	struct timespec now;
	char msg[256];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&mhd_log.lock);
	if (mhd_log.last && now.tv_sec - mhd_log.last < METRICS_LOG_EVERY_S) {
		mhd_log.held++;
	} else {
		if (mhd_log.held)
			pr_warn("xnat metrics: %s (and %lu more since the last one shown)\n",
				msg, mhd_log.held);
		else
			pr_warn("xnat metrics: %s\n", msg);
		mhd_log.last = now.tv_sec;
		mhd_log.held = 0;
	}
	pthread_mutex_unlock(&mhd_log.lock);
}

static void on_signal(int sig)
{
	stop = 1;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code,
			     char *body, size_t len, const char *type)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int code,
			    const char *msg)
{
	char *body = strdup(msg);

	return body ? reply(conn, code, body, strlen(body),
			    "text/plain; charset=utf-8") : MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	char err[256], line[300], *body = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "only GET and HEAD\n");
	if (strcmp(url, "/metrics"))
		return text(conn, MHD_HTTP_NOT_FOUND, "xnat serves /metrics\n");
	f = open_memstream(&body, &len);
	if (!f)
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "out of memory\n");
	ret = metrics_write(f, err, sizeof(err));
	fclose(f);
	if (ret) {
		free(body);
		/* Down or in kernel mode: unavailable, and says why. */
		snprintf(line, sizeof(line), "%s\n", err);
		return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, line);
	}
	return reply(conn, MHD_HTTP_OK, body, len, METRICS_CONTENT_TYPE);
}

/* "198.18.0.1:9417" or "[2001:2::1]:9417"; the address is required. */
static int parse_listen(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (void *)ss;
	struct sockaddr_in6 *in6 = (void *)ss;
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2];
	unsigned long port;
	char *end;
	size_t n;

	memset(ss, 0, sizeof(*ss));
	if (!colon)
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port < 1 || port > 65535)
		return -EINVAL;
	n = colon - s;
	if (n >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = 0;
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = 0;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return inet_pton(AF_INET6, host + 1, &in6->sin6_addr) == 1 ?
			       0 : -EINVAL;
	}
	in4->sin_family = AF_INET;
	in4->sin_port = htons(port);
	if (!n)
		return -EDESTADDRREQ;
	return inet_pton(AF_INET, host, &in4->sin_addr) == 1 ? 0 : -EINVAL;
}

/* 0.0.0.0 or [::]: every address of the namespace, the WAN's too. */
static int is_wildcard(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *in4 = (const void *)ss;
	const struct sockaddr_in6 *in6 = (const void *)ss;

	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
	return in4->sin_addr.s_addr == htonl(INADDR_ANY);
}

int cmd_metrics(const struct opts *o)
{
	struct sockaddr_storage ss;
	struct sigaction sa = { .sa_handler = on_signal };
	struct MHD_Daemon *d;
	/* epoll where there is (Linux), else poll: never select. */
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	char err[256];
	FILE *probe;
	int ret;

	if (!o->listen)
		return fail(o, EXIT_USAGE, "metrics: --listen ADDR:PORT is "
			    "required (e.g. 127.0.0.1:9417, or a LAN address)");
	ret = parse_listen(o->listen, &ss);
	if (ret == -EDESTADDRREQ)
		return fail(o, EXIT_USAGE, "metrics: --listen '%s': give the "
			    "address to serve on: 127.0.0.1 for this machine, a "
			    "LAN or management address, or 0.0.0.0 for every "
			    "address, the WAN's too", o->listen);
	if (ret)
		return fail(o, EXIT_USAGE, "metrics: --listen '%s': expected "
			    "ADDR:PORT or [ADDR6]:PORT", o->listen);
	/* Refuse to serve a router that is not there: say it now, not in
	 * every scrape's 503. */
	probe = fopen("/dev/null", "w");
	if (probe && metrics_write(probe, err, sizeof(err))) {
		fclose(probe);
		return fail(o, EXIT_SYSTEM, "metrics: %s", err);
	}
	if (probe)
		fclose(probe);
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	d = MHD_start_daemon(flags, ntohs(((struct sockaddr_in *)&ss)->sin_port),
			     NULL, NULL, on_request, NULL,
			     MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_CONNECTION_LIMIT,
			     (unsigned int)METRICS_CONN_MAX,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT,
			     (unsigned int)METRICS_CONN_PER_IP,
			     MHD_OPTION_CONNECTION_TIMEOUT,
			     (unsigned int)METRICS_IDLE_S,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			     (size_t)METRICS_CONN_BYTES,
			     MHD_OPTION_END);
	if (!d)
		return fail(o, EXIT_SYSTEM, "metrics: failed to listen on %s: "
			    "%s", o->listen, strerror(errno));
	if (is_wildcard(&ss))
		pr_warn("xnat metrics: serving on every address, the WAN's "
			"too: filter the port (nftables) or give a LAN address\n");
	if (!o->json)
		fprintf(stderr, "xnat metrics: serving http://%s/metrics\n",
			o->listen);
	while (!stop)
		sleep(1); /* a signal ends it early */
	MHD_stop_daemon(d);
	if (mhd_log.held)
		pr_warn("xnat metrics: %lu more messages of libmicrohttpd held back\n",
			mhd_log.held);
	return EXIT_OK;
}
