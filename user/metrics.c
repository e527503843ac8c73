// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prometheus metrics of the router; see metrics.h. Everything is read
 * afresh on each call from the pinned maps and the kernel, so that a
 * scrape never shows a stale or half-reloaded router: the reason counters
 * (summed over CPUs), the ports' interface counters from the kernel
 * (rtnetlink, via getifaddrs: the router's network namespace, whatever
 * /sys shows), and entries counted in the flow, mapping and port maps.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h"
#include "loader.h"
#include "metrics.h"
#include "percpu.h"
#include "pins.h"
#include "reasons.h"
#include "state.h"


static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Where a reason's packets went, as `xnat trace` names the paths. */
static const char *reason_path(int r)
{
	const char *n = reasons[r].name;

	if (r == XNAT_FWD_FAST || r == XNAT_FWD_ICMP_ERROR)
		return "fast";
	if (!strncmp(n, "fwd_", 4))
		return "slow";
	if (!strncmp(n, "pass_", 5))
		return "kernel";
	return "dropped";
}

static int write_reasons(FILE *f, char *err, size_t errlen)
{
	__u64 packets[XNAT_REASON_MAX] = {}, bytes[XNAT_REASON_MAX] = {};
	int fd = pins_map_open(MAP_STATS);

	if (fd < 0) {
		snprintf(err, errlen, "no counters: xnat is not up in xdp mode here");
		return fd;
	}
	/* A reason the map does not have (an older program) reads as 0. */
	for (__u32 r = 0; r < XNAT_REASON_MAX; r++) {
		struct xnat_counter sum;

		if (percpu_counter_sum(fd, r, &sum))
			continue;
		packets[r] = sum.packets;
		bytes[r] = sum.bytes;
	}
	close(fd);
	family(f, "xnat_packets_total", "counter",
	       "Packets the XDP program handled, by the reason it counted "
	       "them under (the names of xnat stats) and the path they took.");
	for (int r = 0; r < XNAT_REASON_MAX; r++)
		fprintf(f, "xnat_packets_total{reason=\"%s\",path=\"%s\"} %llu\n",
			reasons[r].name, reason_path(r),
			(unsigned long long)packets[r]);
	family(f, "xnat_bytes_total", "counter",
	       "Bytes (whole frames) the XDP program handled, by reason.");
	for (int r = 0; r < XNAT_REASON_MAX; r++)
		fprintf(f, "xnat_bytes_total{reason=\"%s\",path=\"%s\"} %llu\n",
			reasons[r].name, reason_path(r),
			(unsigned long long)bytes[r]);
	return 0;
}

/* The kernel's counters of xnat's ports (every packet the port received
 * or sent, XDP-forwarded or not, as the driver counts them). */
static void write_ports(FILE *f, const struct xnat_state *st)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} cols[] = {
		{ "xnat_port_rx_packets_total", "Packets received on an xnat port (the kernel's interface counter).",
		  offsetof(struct rtnl_link_stats, rx_packets) },
		{ "xnat_port_tx_packets_total", "Packets sent on an xnat port (the kernel's interface counter).",
		  offsetof(struct rtnl_link_stats, tx_packets) },
		{ "xnat_port_rx_bytes_total", "Bytes received on an xnat port (the kernel's interface counter).",
		  offsetof(struct rtnl_link_stats, rx_bytes) },
		{ "xnat_port_tx_bytes_total", "Bytes sent on an xnat port (the kernel's interface counter).",
		  offsetof(struct rtnl_link_stats, tx_bytes) },
		{ "xnat_port_rx_dropped_total", "Packets an xnat port dropped on receive (the kernel's interface counter).",
		  offsetof(struct rtnl_link_stats, rx_dropped) },
	};
	struct ifaddrs *ifas, *a;

	if (getifaddrs(&ifas))
		return;
	for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
		family(f, cols[c].name, "counter", cols[c].help);
		for (a = ifas; a; a = a->ifa_next) {
			const struct rtnl_link_stats *s = a->ifa_data;
			int ours = 0;

			if (!a->ifa_addr || a->ifa_addr->sa_family != AF_PACKET ||
			    !s)
				continue;
			for (int i = 0; i < st->n_ifaces; i++)
				ours |= !strcmp(st->ifaces[i], a->ifa_name);
			if (!ours)
				continue;
			fprintf(f, "%s{port=\"%s\"} %u\n", cols[c].name,
				a->ifa_name,
				*(const __u32 *)((const char *)s + cols[c].off));
		}
	}
	freeifaddrs(ifas);
}

struct port_use {
	unsigned long tcp, udp, icmp;
};

static int count_port(const void *key, const void *value, void *ctx)
{
	const struct nat_port_key *k = key;
	struct port_use *u = ctx;

	if (k->proto == IPPROTO_TCP)
		u->tcp++;
	else if (k->proto == IPPROTO_UDP)
		u->udp++;
	else
		u->icmp++;
	return 0;
}

static void write_tables(FILE *f)
{
	struct xnat_config c = {};
	struct port_use use = {};
	__u32 max = 0;
	char addr[INET_ADDRSTRLEN] = "";
	long n;

	n = pins_map_walk(MAP_FLOWS, sizeof(struct flow_key),
			  sizeof(struct flow_value), &max, NULL, NULL);
	if (n >= 0) {
		family(f, "xnat_flow_entries", "gauge",
		       "Entries in the flow table (one per direction of a "
		       "connection).");
		fprintf(f, "xnat_flow_entries %ld\n", n);
		family(f, "xnat_flow_entries_max", "gauge",
		       "Size of the flow table ([flows] max, two entries per "
		       "connection).");
		fprintf(f, "xnat_flow_entries_max %u\n", max);
	}

	pins_map_read_first(MAP_CONFIG, &c, sizeof(c));
	inet_ntop(AF_INET, &c.nat_addr, addr, sizeof(addr));

	n = pins_map_walk(MAP_MAPPINGS, sizeof(struct nat_endpoint),
			  sizeof(struct nat_mapping), NULL, NULL, NULL);
	if (n >= 0) {
		family(f, "xnat_nat_mappings", "gauge",
		       "NAT mappings (inside endpoint to external port) alive, "
		       "in use or waiting out their timeout.");
		fprintf(f, "xnat_nat_mappings{address=\"%s\"} %ld\n", addr, n);
	}
	n = pins_map_walk(MAP_PORTS, sizeof(struct nat_port_key),
			  sizeof(struct nat_endpoint), NULL, count_port, &use);
	if (n >= 0) {
		family(f, "xnat_nat_ports_in_use", "gauge",
		       "External ports (ICMP: echo ids) of the XDP NAT held by "
		       "a mapping, by address and protocol.");
		fprintf(f, "xnat_nat_ports_in_use{address=\"%s\",proto=\"tcp\"} %lu\n",
			addr, use.tcp);
		fprintf(f, "xnat_nat_ports_in_use{address=\"%s\",proto=\"udp\"} %lu\n",
			addr, use.udp);
		fprintf(f, "xnat_nat_ports_in_use{address=\"%s\",proto=\"icmp\"} %lu\n",
			addr, use.icmp);
		family(f, "xnat_nat_ports", "gauge",
		       "External ports of the XDP NAT range ([nat] ports) on "
		       "an address, the same number for each protocol.");
		fprintf(f, "xnat_nat_ports{address=\"%s\"} %u\n", addr,
			c.port_max >= c.port_min && c.port_max ?
				c.port_max - c.port_min + 1 : 0);
	}
}

int metrics_write(FILE *f, char *err, size_t errlen)
{
	struct xnat_state st;
	int ret;

	if (state_load(&st)) {
		snprintf(err, errlen, "xnat is not up here");
		return -ENOENT;
	}
	if (st.mode == MODE_KERNEL) {
		snprintf(err, errlen, "no XDP counters: the router runs in "
			 "kernel mode");
		return -ENOENT;
	}
	ret = write_reasons(f, err, errlen);
	if (ret)
		return ret;
	write_ports(f, &st);
	write_tables(f);
	family(f, "xnat_info", "gauge", "The router's mode; always 1.");
	fprintf(f, "xnat_info{mode=\"%s\"} 1\n", config_mode_name(st.mode));
	return ferror(f) ? -EIO : 0;
}
