// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bench's testbed: three network namespaces (LAN host, router, WAN
 * host) joined by two veth pairs, with fixed MACs and static permanent
 * neighbours so that no ARP ever runs during a measurement; the counting
 * sinks on the hosts' ports; and the teardown that removes all of it,
 * whatever state the run is in (the caller leaves the router's mode
 * first: bench_modes.c builds on this file, not the other way round).
 * Commands run through bench_exec.c.
 *
 *   LAN host                      router                      WAN host
 *   eth0 198.18.1.10/24 -- lan0 198.18.1.1/24  wan0 198.19.0.1/24 -- eth0 198.19.0.2/24
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "xnat_bench.skel.h"
#include "bench_common.h"
#include "log.h"
#include "pins.h"

/* Locally administered, one per port, so frames are easy to read in a
 * capture and the generator needs no lookup. */
const uint8_t bench_mac_lan_host[6] = { 0x02, 0x58, 0x4e, 0x00, 0x01, 0x0a };
const uint8_t bench_mac_rtr_lan[6] = { 0x02, 0x58, 0x4e, 0x00, 0x01, 0x01 };
const uint8_t bench_mac_rtr_wan[6] = { 0x02, 0x58, 0x4e, 0x00, 0x02, 0x01 };
const uint8_t bench_mac_wan_host[6] = { 0x02, 0x58, 0x4e, 0x00, 0x02, 0x02 };

static void mac_str(const uint8_t *m, char *buf)
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
}

/* `ip ARGS...` in the host namespace (ip -n does the joining). */
static int ip(struct bench *b, const char *a0, ...)
{
	const char *argv[24] = { "ip" };
	va_list ap;
	int n = 1;

	argv[n++] = a0;
	va_start(ap, a0);
	while (n < 23 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return bench_run(b, NS_MAX, 10, NULL, argv);
}

/* ---- the testbed ------------------------------------------------------------ */

static int ns_add(struct bench *b, enum bench_ns ns)
{
	char path[96];
	struct stat st;
	int err;

	snprintf(path, sizeof(path), "/run/netns/%s", b->ns_name[ns]);
	if (!stat(path, &st)) {
		pr_warn("xnat bench: network namespace %s exists and is not ours\n",
			b->ns_name[ns]);
		return -EEXIST;
	}
	err = ip(b, "netns", "add", b->ns_name[ns], NULL);
	if (err)
		return err < 0 ? err : -EIO;
	b->ns_created[ns] = true;
	b->ns_fd[ns] = open(path, O_RDONLY | O_CLOEXEC);
	if (b->ns_fd[ns] < 0)
		return -errno;
	if (ns == NS_RTR) {
		if (fstat(b->ns_fd[ns], &st))
			return -errno;
		b->rtr_ino = st.st_ino;
	}
	/* No IPv6 at all: router solicitations and MLD reports would reach
	 * the sinks and be counted as forwarded. Set before the veths exist
	 * so that they inherit it. */
	err = bench_sysctl(b, ns, "net/ipv6/conf/default/disable_ipv6", "1");
	if (!err)
		err = bench_sysctl(b, ns, "net/ipv6/conf/all/disable_ipv6", "1");
	if (err && err != -ENOENT)
		return err;
	return ip(b, "-n", b->ns_name[ns], "link", "set", "lo", "up", NULL);
}

static int veth(struct bench *b, const char *rtr_if, const uint8_t *rtr_mac,
		enum bench_ns host, const uint8_t *host_mac)
{
	char rmac[18], hmac[18];

	mac_str(rtr_mac, rmac);
	mac_str(host_mac, hmac);
	/* Created from inside the router namespace, the peer straight into
	 * the host's: nothing ever appears in the namespace we run in. */
	return ip(b, "-n", b->ns_name[NS_RTR], "link", "add", rtr_if,
		  "address", rmac, "type", "veth", "peer", "name", "eth0",
		  "address", hmac, "netns", b->ns_name[host], NULL);
}

static int neigh(struct bench *b, enum bench_ns ns, const char *dev,
		 const char *addr, const uint8_t *mac)
{
	char m[18];

	mac_str(mac, m);
	return ip(b, "-n", b->ns_name[ns], "neigh", "replace", addr, "lladdr",
		  m, "dev", dev, "nud", "permanent", NULL);
}

/* Host ports: transmit checksum offload off, or the XDP NAT would rewrite
 * CHECKSUM_PARTIAL frames whose L4 checksum is only the pseudo-header
 * (a veth hands them over as they are); GRO on, or a veth drops frames that XDP redirects into it
 * while no XDP program runs on it (the TCP tests); and a queue, as a
 * host's NIC has one. A veth has none (noqueue): when the router's port
 * runs XDP its frames go through that port's ring of 256, and a full ring
 * dropped the host's own TCP segments (tens of thousands in 10 s, each a
 * retransmission) where a NIC's host would have waited; with a qdisc the
 * veth stops its queue instead (docs/BENCHMARKS.md "The hosts' queue").
 * In the kernel modes the router's ports take frames into the CPU's
 * backlog instead, and the queue stays empty. */
static int host_port(struct bench *b, enum bench_ns ns)
{
	const char *offloads[] = { "ethtool", "-K", "eth0", "tx", "off", "gro",
				   "on", NULL };
	const char *qdisc[] = { "tc", "qdisc", "replace", "dev", "eth0", "root",
				"pfifo_fast", NULL };
	int err = bench_run(b, ns, 10, NULL, offloads);

	return err ? err : bench_run(b, ns, 10, NULL, qdisc);
}

int bench_router_gro(struct bench *b, bool on)
{
	static const char *const ports[] = { "lan0", "wan0" };
	int err = 0;

	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]) && !err; i++) {
		const char *argv[] = { "ethtool", "-K", ports[i], "gro",
				       on ? "on" : "off", NULL };

		err = bench_run(b, NS_RTR, 10, NULL, argv);
	}
	return err > 0 ? -EIO : err;
}

static int ifindex_in(struct bench *b, enum bench_ns ns, const char *name)
{
	int idx;

	if (bench_enter(b, ns))
		return -1;
	idx = if_nametoindex(name);
	bench_enter(b, NS_MAX);
	return idx ? idx : -1;
}

int bench_testbed_up(struct bench *b)
{
	const char *lan = b->ns_name[NS_LAN], *rtr = b->ns_name[NS_RTR],
		   *wan = b->ns_name[NS_WAN];
	int err;

	bench_progress_restart();
	for (int i = 0; i < NS_MAX; i++) {
		err = ns_add(b, i);
		if (err)
			return err;
	}
	if (veth(b, "lan0", bench_mac_rtr_lan, NS_LAN, bench_mac_lan_host) ||
	    veth(b, "wan0", bench_mac_rtr_wan, NS_WAN, bench_mac_wan_host) ||
	    host_port(b, NS_LAN) || host_port(b, NS_WAN))
		return -EIO;

	if (ip(b, "-n", rtr, "addr", "add", BENCH_RTR_LAN "/24", "dev", "lan0", NULL) ||
	    ip(b, "-n", rtr, "addr", "add", BENCH_RTR_WAN "/24", "dev", "wan0", NULL) ||
	    ip(b, "-n", lan, "addr", "add", BENCH_LAN_HOST "/24", "dev", "eth0", NULL) ||
	    ip(b, "-n", wan, "addr", "add", BENCH_WAN_HOST "/24", "dev", "eth0", NULL) ||
	    ip(b, "-n", rtr, "link", "set", "lan0", "up", NULL) ||
	    ip(b, "-n", rtr, "link", "set", "wan0", "up", NULL) ||
	    ip(b, "-n", lan, "link", "set", "eth0", "up", NULL) ||
	    ip(b, "-n", wan, "link", "set", "eth0", "up", NULL))
		return -EIO;

	/* The LAN host routes everything via the router. The WAN host
	 * reaches the LAN only in the modes without NAT (kernel-fwd, xdp-fwd);
	 * the NAT modes filter what it sends there. The router sees the
	 * new-flow test's sources from all of 198.18.0.0/16 behind the LAN
	 * host (a route, so reverse-path filtering accepts them). */
	if (ip(b, "-n", lan, "route", "add", "default", "via", BENCH_RTR_LAN, NULL) ||
	    ip(b, "-n", wan, "route", "add", "198.18.0.0/15", "via", BENCH_RTR_WAN, NULL) ||
	    ip(b, "-n", rtr, "route", "add", "198.18.0.0/16", "via", BENCH_LAN_HOST, NULL))
		return -EIO;

	if (neigh(b, NS_RTR, "lan0", BENCH_LAN_HOST, bench_mac_lan_host) ||
	    neigh(b, NS_RTR, "wan0", BENCH_WAN_HOST, bench_mac_wan_host) ||
	    neigh(b, NS_LAN, "eth0", BENCH_RTR_LAN, bench_mac_rtr_lan) ||
	    neigh(b, NS_WAN, "eth0", BENCH_RTR_WAN, bench_mac_rtr_wan))
		return -EIO;

	b->ifindex_lan_host = ifindex_in(b, NS_LAN, "eth0");
	b->ifindex_wan_host = ifindex_in(b, NS_WAN, "eth0");
	b->ifindex_rtr_lan = ifindex_in(b, NS_RTR, "lan0");
	b->ifindex_rtr_wan = ifindex_in(b, NS_RTR, "wan0");
	if (b->ifindex_lan_host < 0 || b->ifindex_wan_host < 0 ||
	    b->ifindex_rtr_lan < 0 || b->ifindex_rtr_wan < 0) {
		pr_warn("xnat bench: testbed interfaces missing after setup\n");
		return -ENODEV;
	}

	b->progs = xnat_bench_bpf__open_and_load();
	if (!b->progs)
		return pr_warn_errno("xnat bench: failed to load bpf/bench/xnat_bench.bpf.c");
	return 0;
}

int bench_sinks_open(struct bench *b)
{
	static const enum bench_ns hosts[] = { NS_LAN, NS_WAN };
	int err = 0;

	for (int i = 0; i < 2 && !err; i++) {
		enum bench_ns ns = hosts[i];

		if (b->sink[ns])
			continue;
		err = bench_enter(b, ns);
		if (err)
			break;
		err = sink_open(&b->sink[ns], ns == NS_LAN ? b->ifindex_lan_host :
							     b->ifindex_wan_host);
		if (err) {
			b->sink[ns] = NULL;
			pr_warn("xnat bench: failed to attach the sink in %s: %s\n",
				b->ns_name[ns], strerror(-err));
		}
		bench_enter(b, NS_MAX);
	}
	return err;
}

void bench_sinks_close(struct bench *b)
{
	for (int ns = 0; ns < NS_MAX; ns++) {
		if (!b->sink[ns])
			continue;
		/* Detaching talks netlink in the sink's namespace. */
		bench_enter(b, ns);
		sink_close(b->sink[ns]);
		b->sink[ns] = NULL;
		bench_enter(b, NS_MAX);
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	return remove(path);
}

/* xnat's own state for the router namespace, if `xnat down` left any. */
static void remove_xnat_leftovers(struct bench *b)
{
	char dir[96];
	struct stat st;

	if (!b->rtr_ino)
		return;
	pins_dir_of(b->rtr_ino, dir, sizeof(dir));
	if (!stat(dir, &st)) {
		pr_warn("xnat bench: %s left behind by xnat down; removing it\n",
			dir);
		nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	}
	snprintf(dir, sizeof(dir), "/run/xnat/%lu", b->rtr_ino);
	if (!stat(dir, &st)) {
		pr_warn("xnat bench: %s left behind by xnat down; removing it\n",
			dir);
		nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	}
}

void bench_testbed_down(struct bench *b)
{
	sig_atomic_t stopped = bench_stop;

	/* Our own commands must run to completion here even after Ctrl-C. */
	bench_stop = 0;
	bench_kill_all(b);
	bench_sinks_close(b);
	bench_conntrack_restore(b);
	if (b->progs) {
		xnat_bench_bpf__destroy(b->progs);
		b->progs = NULL;
	}
	if (b->host_ns_fd >= 0)
		bench_enter(b, NS_MAX);
	for (int ns = 0; ns < NS_MAX; ns++) {
		if (b->ns_fd[ns] >= 0)
			close(b->ns_fd[ns]);
		b->ns_fd[ns] = -1;
	}
	remove_xnat_leftovers(b);
	for (int ns = 0; ns < NS_MAX; ns++) {
		if (!b->ns_created[ns])
			continue;
		if (ip(b, "netns", "del", b->ns_name[ns], NULL))
			pr_warn("xnat bench: could not delete namespace %s\n",
				b->ns_name[ns]);
		b->ns_created[ns] = false;
	}
	b->rtr_ino = 0;
	if (b->tmp_dir[0]) {
		nftw(b->tmp_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
		b->tmp_dir[0] = 0;
	}
	if (b->host_ns_fd >= 0) {
		close(b->host_ns_fd);
		b->host_ns_fd = -1;
	}
	bench_stop = stopped;
}
