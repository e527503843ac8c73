// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-packet microbenchmark; see microbench.h for what and why.
 *
 * The testbed is the unit tests' router (tests/unit/test_xdp.c): lan0 and
 * wan0, veths with fixed MACs, a LAN host and the WAN gateway as permanent
 * neighbours, NAT to wan0's address. The data path's maps are filled the
 * way user/maps.c fills them; keep the two in step when a map changes.
 *
 * Every call runs the harness bpf/xnat_mbench.bpf.c, which restores the
 * packet and tail-calls the program under test. The harness stays attached
 * (generic XDP on the private namespace's lo, which is down) so that calls
 * with repeat > 1 do not pay for adding it to the XDP dispatcher each time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xnat_common.h"
#include "xnat.skel.h"
#include "xnat_fwd.skel.h"
#include "xnat_bench.skel.h"
#include "xnat_mbench.skel.h"
#include "loader.h"
#include "maps.h"
#include "log.h"
#include "microbench.h"
#include "reasons.h"

#define MB_LAN_HOST  "198.18.1.10"
#define MB_NAT_ADDR  "198.19.0.1" /* wan0's address */
#define MB_WAN_GW    "198.19.0.2"
#define MB_SPORT     40000        /* in the XDP range: kept by the NAT */
#define MB_DPORT     9
#define MB_TTL       64
#define MB_FRAME_LEN 60           /* 64 B on the wire */
#define MB_FLOWS_MAX 64           /* flow table entries */
#define MB_WARMUP    20           /* unmeasured calls per case */

static const uint8_t mac_lan0[ETH_ALEN] = { 0x02, 0, 0, 0, 0x01, 0x01 };
static const uint8_t mac_lan_host[ETH_ALEN] = { 0x02, 0, 0, 0, 0x01, 0x0a };

/* One per line for `ip -batch`: the test_xdp.c router, IPv4 only. */
static const char testbed_cmds[] =
	"link add lan0 address 02:00:00:00:01:01 type veth peer name lan0p\n"
	"link add wan0 address 02:00:00:00:02:01 type veth peer name wan0p\n"
	"link set lan0 up\n"
	"link set lan0p up\n"
	"link set wan0 up\n"
	"link set wan0p up\n"
	"addr add 198.18.1.1/24 dev lan0\n"
	"addr add " MB_NAT_ADDR "/24 dev wan0\n"
	"neigh add " MB_LAN_HOST " lladdr 02:00:00:00:01:0a dev lan0 nud permanent\n"
	"neigh add " MB_WAN_GW " lladdr 02:00:00:00:02:02 dev wan0 nud permanent\n";

struct mb {
	struct xnat_bpf *xnat;
	struct xnat_fwd_bpf *fwd;
	struct xnat_bench_bpf *empty; /* its xdp_pass */
	struct xnat_mbench_bpf *harness;
	int harness_link;
	int if_lan, if_wan;
	int stats_fd, config_fd;
	int nreasons, ncpus;
	struct xnat_config cfg;
	uint8_t pkt[MB_FRAME_LEN];
};

static int write_sysctl(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* The router, in the current (fresh) network namespace. */
static int testbed_up(struct mb *m)
{
	FILE *ip;
	int err, rc;

	/* IPv6 off: no neighbour discovery or MLD chatter in the testbed. */
	write_sysctl("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	write_sysctl("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	err = write_sysctl("/proc/sys/net/ipv4/ip_forward", "1");
	if (err) {
		pr_warn("Microbenchmark: cannot enable forwarding: %s\n",
			strerror(-err));
		return err;
	}
	ip = popen("ip -batch -", "w");
	if (!ip) {
		err = -errno;
		pr_warn("Microbenchmark: cannot run ip: %s\n", strerror(-err));
		return err;
	}
	fputs(testbed_cmds, ip);
	rc = pclose(ip);
	if (rc) {
		pr_warn("Microbenchmark: building the testbed with ip failed "
			"(status %d)\n", rc);
		return -ECHILD;
	}
	m->if_lan = if_nametoindex("lan0");
	m->if_wan = if_nametoindex("wan0");
	if (!m->if_lan || !m->if_wan) {
		pr_warn("Microbenchmark: lan0/wan0 missing after setup\n");
		return -ENODEV;
	}
	return 0;
}


static int load_xnat(struct mb *m)
{
	__u32 zero = 0;
	int fds[3], err;

	m->xnat = xnat_bpf__open();
	if (!m->xnat) {
		err = -errno;
		pr_warn("Microbenchmark: failed to open the XDP object: %s\n",
			strerror(-err));
		return err;
	}
	err = bpf_map__set_max_entries(m->xnat->maps.xnat_flows, MB_FLOWS_MAX);
	if (!err)
		err = xnat_bpf__load(m->xnat);
	if (err) {
		pr_warn("Microbenchmark: failed to load the XDP program: %s\n",
			strerror(-err));
		return err;
	}
	m->stats_fd = bpf_map__fd(m->xnat->maps.xnat_stats);
	m->config_fd = bpf_map__fd(m->xnat->maps.xnat_config);
	m->nreasons = bpf_map__max_entries(m->xnat->maps.xnat_stats);

	m->cfg = (struct xnat_config){
		.port_min = 20000,
		.port_max = 65535,
		.wan_ifindex = m->if_wan,
		.timeout_tcp_est = 7440,
		.timeout_tcp_trans = 240,
		.timeout_udp = 300,
		.timeout_icmp = 60,
	};
	inet_pton(AF_INET, MB_NAT_ADDR, &m->cfg.nat_addr);
	/* Ports first, then the config (its NAT address turns NAT on). */
	fds[0] = bpf_map__fd(m->xnat->maps.xnat_ifaces);
	fds[1] = bpf_map__fd(m->xnat->maps.xnat_tx_ports);
	fds[2] = bpf_map__fd(m->xnat->maps.xnat_vlans);
	err = maps_put_port(fds, "lan0", m->if_lan, XNAT_ROLE_LAN);
	if (!err)
		err = maps_put_port(fds, "wan0", m->if_wan, XNAT_ROLE_WAN);
	if (!err && bpf_map_update_elem(m->config_fd, &zero, &m->cfg, BPF_ANY))
		err = -errno;
	if (err)
		pr_warn("Microbenchmark: filling the data path's maps: %s\n",
			strerror(-err));
	return err;
}

static int load_fwd(struct mb *m)
{
	__u32 ports[2] = { m->if_lan, m->if_wan };
	int fd, i, err;

	m->fwd = xnat_fwd_bpf__open_and_load();
	m->empty = xnat_bench_bpf__open_and_load();
	if (!m->fwd || !m->empty) {
		err = -errno;
		pr_warn("Microbenchmark: failed to load xdp_fwd: %s\n",
			strerror(-err));
		return err;
	}
	fd = bpf_map__fd(m->fwd->maps.xdp_tx_ports);
	for (i = 0; i < 2; i++) {
		if (bpf_map_update_elem(fd, &ports[i], &ports[i], BPF_ANY)) {
			err = -errno;
			pr_warn("Microbenchmark: filling xdp_tx_ports: %s\n",
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The harness, its program slots filled and the packet in place. */
static int load_harness(struct mb *m)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .flags = XDP_FLAGS_SKB_MODE);
	int progs[MICROBENCH_CASES] = {
		[MICROBENCH_FAST] = bpf_program__fd(m->xnat->progs.xdp_xnat),
		[MICROBENCH_FP_OFF] = bpf_program__fd(m->xnat->progs.xdp_xnat),
		[MICROBENCH_FLOOR] = bpf_program__fd(m->fwd->progs.xdp_fwd),
		[MICROBENCH_EMPTY] = bpf_program__fd(m->empty->progs.xdp_pass),
	};
	int fd, lo, err;
	__u32 c;

	_Static_assert(sizeof(m->harness->bss->mb_pkt) >= MB_FRAME_LEN,
		       "the harness restores the whole frame");
	m->harness = xnat_mbench_bpf__open_and_load();
	if (!m->harness) {
		err = -errno;
		pr_warn("Microbenchmark: failed to load its harness: %s\n",
			strerror(-err));
		return err;
	}
	memcpy(m->harness->bss->mb_pkt, m->pkt, MB_FRAME_LEN);
	fd = bpf_map__fd(m->harness->maps.mb_progs);
	for (c = 0; c < MICROBENCH_CASES; c++) {
		if (bpf_map_update_elem(fd, &c, &progs[c], BPF_ANY)) {
			err = -errno;
			pr_warn("Microbenchmark: adding %s to the harness: %s\n",
				c == MICROBENCH_FLOOR ? "xdp_fwd" :
				c == MICROBENCH_EMPTY ? "xdp_pass" : "xdp_xnat",
				strerror(-err));
			return err;
		}
	}
	lo = if_nametoindex("lo");
	m->harness_link = lo ? bpf_link_create(bpf_program__fd(
						       m->harness->progs.xdp_mbench),
					       lo, BPF_XDP, &lopts) : -1;
	if (m->harness_link < 0) {
		err = -errno;
		pr_warn("Microbenchmark: attaching its harness to lo: %s\n",
			strerror(-err));
		return err;
	}
	return 0;
}

static uint16_t csum_finish(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t csum_words(uint32_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i += 2)
		sum += b[i] << 8 | (i + 1 < len ? b[i + 1] : 0);
	return sum;
}

/* UDP MB_LAN_HOST:MB_SPORT -> MB_WAN_GW:MB_DPORT from the LAN host to
 * lan0, 60 bytes (zero payload), with both checksums. */
static void build_packet(uint8_t *pkt)
{
	struct ethhdr *eth = (void *)pkt;
	struct iphdr ip = {};
	struct udphdr udp = {};
	uint8_t pseudo[12];
	uint16_t l4_len = MB_FRAME_LEN - sizeof(*eth) - sizeof(ip);

	memset(pkt, 0, MB_FRAME_LEN);
	memcpy(eth->h_dest, mac_lan0, ETH_ALEN);
	memcpy(eth->h_source, mac_lan_host, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);

	ip.version = 4;
	ip.ihl = 5;
	ip.tot_len = htons(sizeof(ip) + l4_len);
	ip.frag_off = htons(0x4000);
	ip.ttl = MB_TTL;
	ip.protocol = IPPROTO_UDP;
	inet_pton(AF_INET, MB_LAN_HOST, &ip.saddr);
	inet_pton(AF_INET, MB_WAN_GW, &ip.daddr);
	ip.check = htons(csum_finish(csum_words(0, &ip, sizeof(ip))));

	udp.source = htons(MB_SPORT);
	udp.dest = htons(MB_DPORT);
	udp.len = htons(l4_len);
	memcpy(pseudo, &ip.saddr, 4);
	memcpy(pseudo + 4, &ip.daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	pseudo[10] = l4_len >> 8;
	pseudo[11] = l4_len & 0xff;
	udp.check = htons(csum_finish(csum_words(csum_words(0, pseudo, 12),
						 &udp, sizeof(udp))));
	memcpy(pkt + sizeof(*eth), &ip, sizeof(ip));
	memcpy(pkt + sizeof(*eth) + sizeof(ip), &udp, sizeof(udp));
}

/* Packets counted under each reason, summed over CPUs. */
static int stats_read(struct mb *m, uint64_t *packets)
{
	struct xnat_counter c[m->ncpus];
	__u32 r;
	int i;

	for (r = 0; r < (__u32)m->nreasons; r++) {
		if (bpf_map_lookup_elem(m->stats_fd, &r, c))
			return -errno;
		packets[r] = 0;
		for (i = 0; i < m->ncpus; i++)
			packets[r] += c[i].packets;
	}
	return 0;
}

static int config_flags(struct mb *m, __u32 flags)
{
	__u32 zero = 0;

	m->cfg.flags = flags;
	return bpf_map_update_elem(m->config_fd, &zero, &m->cfg, BPF_ANY) ?
		       -errno : 0;
}

/*
 * One call of case C: MICROBENCH_BATCH fresh packets. *NS is the kernel's
 * time per packet. Returns 1 when the verdict and the output of the last
 * pass say it took the case's path (for the forwarding cases the TTL is
 * one less than sent: less would mean the packet was not restored), 0 when
 * not, -errno when the call failed.
 */
static int run_once(struct mb *m, enum microbench_case c, uint32_t *ns)
{
	struct xdp_md ctx = {
		.data_end = MB_FRAME_LEN,
		.ingress_ifindex = m->if_lan,
	};
	uint8_t out[MB_FRAME_LEN + 64];
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = m->pkt,
		.data_size_in = MB_FRAME_LEN,
		.data_out = out,
		.data_size_out = sizeof(out),
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = MICROBENCH_BATCH,
	);
	const struct iphdr *ip = (const void *)(out + sizeof(struct ethhdr));
	int err;

	m->harness->bss->mb_target = c;
	if (c == MICROBENCH_FP_OFF) {
		err = config_flags(m, XNAT_F_FASTPATH_OFF);
		if (err)
			return err;
	}
	err = bpf_prog_test_run_opts(bpf_program__fd(m->harness->progs.xdp_mbench),
				     &opts);
	if (err)
		err = -errno;
	if (c == MICROBENCH_FP_OFF && !err)
		err = config_flags(m, 0);
	if (err)
		return err;
	*ns = opts.duration;
	if (c == MICROBENCH_EMPTY)
		return opts.retval == XDP_PASS;
	return opts.retval == XDP_REDIRECT &&
	       opts.data_size_out == MB_FRAME_LEN && ip->ttl == MB_TTL - 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static const char *const case_names[MICROBENCH_CASES] = {
	[MICROBENCH_FAST] = "fast path",
	[MICROBENCH_FP_OFF] = "fast path off",
	[MICROBENCH_FLOOR] = "xdp_fwd",
	[MICROBENCH_EMPTY] = "empty",
};

/*
 * The measurement proper, in the testbed. Cases rotate within each round so
 * none always follows the same one; the counters are compared over the
 * whole run: fwd_fast must have grown by the fast path's packets,
 * fwd_routed by the fast-path-off ones, and nothing else at all.
 */
static int measure(struct mb *m, struct microbench_result *r, int calls)
{
	uint64_t before[m->nreasons], after[m->nreasons], other = 0;
	uint64_t bad[MICROBENCH_CASES] = {};
	uint32_t *ns[MICROBENCH_CASES] = {};
	int i, j, c, ok, err;
	uint32_t t;

	for (c = 0; c < MICROBENCH_CASES; c++) {
		ns[c] = calloc(calls, sizeof(*ns[c]));
		if (!ns[c]) {
			err = -ENOMEM;
			goto out;
		}
	}
	/* The first xdp_xnat pass creates the flow (slow path); then every
	 * case warms its code and maps. */
	for (i = 0; i < MB_WARMUP; i++)
		for (c = 0; c < MICROBENCH_CASES; c++) {
			err = run_once(m, c, &t);
			if (err < 0)
				goto out_call;
		}

	err = stats_read(m, before);
	if (err)
		goto out_stats;
	for (i = 0; i < calls; i++) {
		for (j = 0; j < MICROBENCH_CASES; j++) {
			c = (i + j) % MICROBENCH_CASES;
			ok = run_once(m, c, &ns[c][i]);
			if (ok < 0) {
				err = ok;
				goto out_call;
			}
			bad[c] += !ok;
		}
	}
	err = stats_read(m, after);
	if (err)
		goto out_stats;

	/* xdp_xnat's path is proven by its counters, the others' by their
	 * verdicts and output alone. */
	for (c = 0; c < MICROBENCH_CASES; c++)
		r->c[c].on_path = (uint64_t)(calls - bad[c]) * MICROBENCH_BATCH;
	for (i = 0; i < m->nreasons; i++) {
		if (i == XNAT_FWD_FAST || i == XNAT_FWD_ROUTED ||
		    after[i] == before[i])
			continue;
		other += after[i] - before[i];
		pr_warn("Microbenchmark: xdp_xnat counted %llu packets as %s\n",
			(unsigned long long)(after[i] - before[i]),
			i < XNAT_REASON_MAX ? reasons[i].name : "?");
	}
	if (other) {
		r->c[MICROBENCH_FAST].on_path = 0;
		r->c[MICROBENCH_FP_OFF].on_path = 0;
	}
	for (c = 0; c < MICROBENCH_FP_OFF + 1; c++) {
		int reason = c == MICROBENCH_FAST ? XNAT_FWD_FAST : XNAT_FWD_ROUTED;
		uint64_t moved = after[reason] - before[reason];

		if (moved < r->c[c].on_path)
			r->c[c].on_path = moved;
	}

	for (c = 0; c < MICROBENCH_CASES; c++) {
		struct microbench_stat *s = &r->c[c];

		qsort(ns[c], calls, sizeof(*ns[c]), cmp_u32);
		s->name = case_names[c];
		s->calls = calls;
		s->packets = (uint64_t)calls * MICROBENCH_BATCH;
		s->min_ns = ns[c][0];
		s->max_ns = ns[c][calls - 1];
		s->median_ns = calls % 2 ? ns[c][calls / 2] :
				(ns[c][calls / 2 - 1] + ns[c][calls / 2]) / 2.0;
	}
	err = 0;
	goto out;

out_call:
	pr_warn("Microbenchmark: BPF_PROG_RUN of %s failed: %s\n",
		case_names[c], strerror(-err));
	goto out;
out_stats:
	pr_warn("Microbenchmark: reading the data path's counters: %s\n",
		strerror(-err));
out:
	for (c = 0; c < MICROBENCH_CASES; c++)
		free(ns[c]);
	return err;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

int microbench_run(struct microbench_result *r, int repeat)
{
	struct mb m = { .harness_link = -1 };
	cpu_set_t old, one;
	int saved_ns, c, err, pinned;

	memset(r, 0, sizeof(*r));
	if (repeat <= 0)
		repeat = MICROBENCH_DEFAULT_CALLS;
	if (repeat < MICROBENCH_MIN_CALLS)
		repeat = MICROBENCH_MIN_CALLS;
	if (repeat > MICROBENCH_MAX_CALLS)
		repeat = MICROBENCH_MAX_CALLS;
	m.ncpus = libbpf_num_possible_cpus();
	if (m.ncpus <= 0) {
		pr_warn("Microbenchmark: cannot count the CPUs\n");
		return -EINVAL;
	}

	/* Stay on one CPU: the counters are per CPU anyway, and a migration
	 * in the middle would mix two caches' numbers. */
	r->cpu = sched_getcpu();
	pinned = !pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
	if (pinned && r->cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(r->cpu, &one);
		pinned = !pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	}

	saved_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved_ns < 0) {
		err = -errno;
		pr_warn("Microbenchmark: cannot open this thread's network "
			"namespace: %s\n", strerror(-err));
		goto out_pin;
	}
	/* This thread only; the namespace goes away with the last reference
	 * (our setns back below), and the veths with it. */
	if (unshare(CLONE_NEWNET)) {
		err = -errno;
		pr_warn("Microbenchmark: cannot create a network namespace: %s\n",
			strerror(-err));
		goto out_close;
	}
	err = testbed_up(&m);
	if (!err)
		err = load_xnat(&m);
	if (!err)
		err = load_fwd(&m);
	build_packet(m.pkt);
	if (!err)
		err = load_harness(&m);
	if (!err)
		err = measure(&m, r, repeat);
	if (m.harness_link >= 0)
		close(m.harness_link);
	xnat_mbench_bpf__destroy(m.harness);
	xnat_fwd_bpf__destroy(m.fwd);
	xnat_bench_bpf__destroy(m.empty);
	xnat_bpf__destroy(m.xnat);
	if (setns(saved_ns, CLONE_NEWNET)) {
		int e = -errno;

		pr_warn("Microbenchmark: cannot return to the caller's network "
			"namespace: %s\n", strerror(-e));
		err = err ? err : e;
	}
out_close:
	close(saved_ns);
out_pin:
	if (pinned)
		pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	if (err)
		return err;

	for (c = 0; c < MICROBENCH_CASES; c++)
		r->c[c].net_ns = c == MICROBENCH_EMPTY ? 0 :
			r->c[c].median_ns - r->c[MICROBENCH_EMPTY].median_ns;
	r->fast_vs_floor = ratio(r->c[MICROBENCH_FAST].net_ns,
				 r->c[MICROBENCH_FLOOR].net_ns);
	r->off_vs_floor = ratio(r->c[MICROBENCH_FP_OFF].net_ns,
				r->c[MICROBENCH_FLOOR].net_ns);
	r->off_vs_fast = ratio(r->c[MICROBENCH_FP_OFF].net_ns,
			       r->c[MICROBENCH_FAST].net_ns);
	for (c = 0; c < MICROBENCH_CASES; c++) {
		if (r->c[c].on_path != r->c[c].packets) {
			pr_warn("Microbenchmark: %s: %llu of %llu packets took "
				"another path\n", r->c[c].name,
				(unsigned long long)(r->c[c].packets - r->c[c].on_path),
				(unsigned long long)r->c[c].packets);
			err = -EPROTO;
		}
	}
	return err;
}
