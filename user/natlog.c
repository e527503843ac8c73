// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NAT event log of `xnat run`; see natlog.h. Times are wall-clock UTC
 * (RFC 3339), converted from the data path's monotonic clock with the
 * offset measured when the log opened. The ring carries two records, told
 * apart by size: struct natlog_event (a mapping) and struct flowlog_event
 * (offload mode: a flow entry onto the fast path or off it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "log.h"
#include "names.h"
#include "natlog.h"
#include "pins.h"
#include "xnat_common.h"

struct natlog {
	FILE *out;
	int cfg_fd, cpu_fd, rb_fd;
	struct ring_buffer *rb;
	__s64 realtime_off_ns;
	__u64 lost_reported;
	int flows;
};

/* Sync note: enum flowlog_why in bpf/common_events.h. */
static const char *const why_names[FLOWLOG_WHY_MAX] = {
	[FLOWLOG_WHY_NONE] = "-",
	[FLOWLOG_WHY_TCP_END] = "tcp_end",
	[FLOWLOG_WHY_CT_GONE] = "conntrack_gone",
	[FLOWLOG_WHY_IDLE] = "idle",
	[FLOWLOG_WHY_DELETED] = "deleted",
	[FLOWLOG_WHY_CT_DESTROYED] = "conntrack_destroyed",
	[FLOWLOG_WHY_RULESET] = "ruleset_changed",
	[FLOWLOG_WHY_CT_EVENTS_LOST] = "conntrack_events_lost",
	[FLOWLOG_WHY_NEIGH] = "next_hop_changed",
	[FLOWLOG_WHY_ROUTE] = "route_changed",
	[FLOWLOG_WHY_WATCH_START] = "watch_started",
};

static void endpoint(char *buf, size_t len, __be32 addr, __be16 port)
{
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, ntohs(port));
}

const char *flowlog_why_name(unsigned int why)
{
	return why < FLOWLOG_WHY_MAX ? why_names[why] : "?";
}

static void rfc3339(char *buf, size_t len, __u64 wall_ns)
{
	time_t secs = wall_ns / 1000000000ULL;
	struct tm tm;
	size_t n;

	gmtime_r(&secs, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%06lluZ",
		 (unsigned long long)(wall_ns % 1000000000ULL) / 1000);
}

/*
 * One direction of an offloaded connection onto the fast path or off it:
 *   {"time":...,"event":"flow_offloaded","proto":"tcp","dir":"orig",
 *    "ingress":"lan0","src":...,"dst":...,"new_src":...,"new_dst":...}
 *   {"time":...,"event":"flow_returned","why":"tcp_end",...,
 *    "offloaded":TIME,"packets":N,"bytes":N}
 */
static void write_flow(struct natlog *l, __u64 ts_ns, __u8 type, __u8 why,
		       const struct flow_key *k, const struct flow_value *v)
{
	char when[40], since[40], src[64], dst[64], nsrc[64], ndst[64],
		in[IF_NAMESIZE];

	rfc3339(when, sizeof(when), ts_ns + l->realtime_off_ns);
	flow_endpoints(k, v, src, dst, nsrc, ndst);
	fprintf(l->out, "{\"time\":\"%s\",\"event\":\"%s\"", when,
		type == NATLOG_OFFLOADED ? "flow_offloaded" : "flow_returned");
	if (type != NATLOG_OFFLOADED)
		fprintf(l->out, ",\"why\":\"%s\"", flowlog_why_name(why));
	fprintf(l->out, ",\"proto\":\"%s\",\"dir\":\"%s\",\"ingress\":\"%s\","
		"\"src\":\"%s\",\"dst\":\"%s\",\"new_src\":\"%s\",\"new_dst\":\"%s\"",
		proto_name(k->proto), v->dir == FLOW_DIR_ORIG ? "orig" : "reply",
		ifname_of(k->ifindex, in), src, dst, nsrc, ndst);
	if (type != NATLOG_OFFLOADED) {
		rfc3339(since, sizeof(since), v->created_ns + l->realtime_off_ns);
		fprintf(l->out, ",\"offloaded\":\"%s\",\"packets\":%llu,\"bytes\":%llu",
			since, (unsigned long long)v->packets,
			(unsigned long long)v->bytes);
	}
	fprintf(l->out, "}\n");
}

static int on_flow_event(struct natlog *l, const struct flowlog_event *e)
{
	struct flow_value v = {
		.new_saddr = e->new_saddr,
		.new_daddr = e->new_daddr,
		.new_sport = e->new_sport,
		.new_dport = e->new_dport,
		.dir = e->dir,
		.created_ns = e->since_ns,
		.packets = e->packets,
		.bytes = e->bytes,
	};

	write_flow(l, e->ts_ns, e->type, e->why, &e->key, &v);
	return 0;
}

void natlog_flow_returned(struct natlog *l, const struct flow_key *k,
			  const struct flow_value *v, int why)
{
	if (!l || !l->flows)
		return;
	write_flow(l, clock_ns(CLOCK_MONOTONIC), NATLOG_UNLOADED, why, k, v);
}

static int on_event(void *ctx, void *data, size_t len)
{
	const struct natlog_event *e = data;
	struct natlog *l = ctx;
	char when[40], in[32], ext[32], rem[32];

	if (len == sizeof(struct flowlog_event))
		return on_flow_event(l, data);
	if (len < sizeof(*e))
		return 0;
	rfc3339(when, sizeof(when), e->ts_ns + l->realtime_off_ns);
	endpoint(in, sizeof(in), e->inside_addr, e->inside_port);
	endpoint(ext, sizeof(ext), e->ext_addr, e->ext_port);
	fprintf(l->out, "{\"time\":\"%s\",\"event\":\"%s\",\"proto\":\"%s\","
		"\"inside\":\"%s\",\"external\":\"%s\"", when,
		e->type == NATLOG_CREATED ? "mapping_created" : "mapping_expired",
		proto_name(e->proto), in, ext);
	if (e->type == NATLOG_CREATED) {
		endpoint(rem, sizeof(rem), e->remote_addr, e->remote_port);
		fprintf(l->out, ",\"remote\":\"%s\"", rem);
	}
	fprintf(l->out, "}\n");
	return 0;
}

static __u64 lost_sum(struct natlog *l)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 per[ncpu > 0 ? ncpu : 1], n = 0;
	__u32 zero = 0;

	if (ncpu <= 0 || bpf_map_lookup_elem(l->cpu_fd, &zero, per))
		return l->lost_reported;
	for (int c = 0; c < ncpu; c++)
		n += per[c];
	return n;
}

static void report_lost(struct natlog *l, int always)
{
	__u64 lost = lost_sum(l);
	char when[40];

	if (!always && lost <= l->lost_reported)
		return;
	rfc3339(when, sizeof(when), clock_ns(CLOCK_REALTIME));
	fprintf(l->out, "{\"time\":\"%s\",\"event\":\"%s\",\"lost\":%llu}\n",
		when, always ? "log_closed" : "events_lost",
		(unsigned long long)lost);
	l->lost_reported = lost;
}

static int set_active(struct natlog *l, __u32 on)
{
	struct natlog_config c = { .active = on, .flows = on && l->flows };
	__u32 zero = 0;

	return bpf_map_update_elem(l->cfg_fd, &zero, &c, BPF_ANY) ? -errno : 0;
}

struct natlog *natlog_open(FILE *out, int flows)
{
	struct natlog *l = calloc(1, sizeof(*l));
	int ncpu = libbpf_num_possible_cpus();
	__u32 zero = 0;
	int err;

	if (!l)
		return NULL;
	l->out = out;
	l->flows = flows;
	l->cfg_fd = pins_map_open(MAP_NATLOG_CFG);
	l->cpu_fd = pins_map_open(MAP_NATLOG_CPU);
	l->rb_fd = pins_map_open(MAP_NATLOG_RB);
	if (l->cfg_fd < 0 || l->cpu_fd < 0 || l->rb_fd < 0 || ncpu <= 0) {
		pr_warn("xnat run: no NAT event log (the data path has no %s)\n",
			MAP_NATLOG_RB);
		goto fail;
	}
	{
		__u64 zeros[ncpu];

		memset(zeros, 0, sizeof(zeros));
		bpf_map_update_elem(l->cpu_fd, &zero, zeros, BPF_ANY);
	}
	l->rb = ring_buffer__new(l->rb_fd, on_event, l, NULL);
	if (!l->rb) {
		pr_warn("xnat run: failed to open ring buffer %s: %s\n",
			MAP_NATLOG_RB, strerror(errno));
		goto fail;
	}
	l->realtime_off_ns = (__s64)(clock_ns(CLOCK_REALTIME) -
				     clock_ns(CLOCK_MONOTONIC));
	err = set_active(l, 1);
	if (err) {
		pr_warn("xnat run: failed to switch the NAT event log on: %s\n",
			strerror(-err));
		goto fail;
	}
	return l;
fail:
	natlog_close(l);
	return NULL;
}

void natlog_wait(struct natlog *l, int ms)
{
	__u64 end = clock_ns(CLOCK_MONOTONIC) + (__u64)ms * 1000000ULL;

	for (;;) {
		__u64 now = clock_ns(CLOCK_MONOTONIC);
		int err;

		if (now >= end)
			break;
		err = ring_buffer__poll(l->rb, (int)((end - now) / 1000000ULL) + 1);
		fflush(l->out);
		if (err == -EINTR)
			break; /* a signal: the caller looks at it */
		if (err < 0) {
			pr_warn("xnat run: reading the NAT event log: %s\n",
				strerror(-err));
			usleep(100000);
		}
	}
	report_lost(l, 0);
	fflush(l->out);
}

void natlog_flows(struct natlog *l, int on)
{
	int err;

	l->flows = on;
	err = set_active(l, 1);
	if (err)
		pr_warn("xnat run: failed to switch offload flow events %s: %s\n",
			on ? "on" : "off", strerror(-err));
}

void natlog_close(struct natlog *l)
{
	if (!l)
		return;
	if (l->cfg_fd >= 0 && l->rb) {
		set_active(l, 0);
		ring_buffer__consume(l->rb);
		report_lost(l, 1);
		fflush(l->out);
	}
	ring_buffer__free(l->rb);
	if (l->rb_fd >= 0)
		close(l->rb_fd);
	if (l->cpu_fd >= 0)
		close(l->cpu_fd);
	if (l->cfg_fd >= 0)
		close(l->cfg_fd);
	free(l);
}
