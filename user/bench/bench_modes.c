// SPDX-License-Identifier: GPL-2.0-only
/*
 * The router modes the bench compares, and how to tell that the router
 * really is in the one it claims:
 *
 *   kernel-fwd    ip_forward only, no NAT, no conntrack
 *   kernel-masq   the kernel's NAT at its cheapest: ip_forward and one
 *                 nftables masquerade rule, nothing else (MASQ_RULESET),
 *                 with kernel-nat's UDP timeouts (masq_timeouts())
 *   kernel-nat    `xnat up` with mode = kernel: the same router and policy
 *                 as xdp-nat (source checks, forward filter, port
 *                 forwards...) in nftables and conntrack
 *   xdp-nat       `xnat up` with mode = xdp
 *   xdp-nat-slow  the same with XNAT_F_FASTPATH_OFF in the pinned config
 *                 map: every packet of a known flow is routed again
 *   xdp-offload   `xnat up` with mode = offload (nftables masquerade and
 *                 conntrack decide, XDP carries what they accepted)
 *   xdp-fwd       the bare forwarder bpf/bench/xnat_fwd.bpf.c on both ports
 *   drop          xdp_drop on the router's ports: the chain's floor
 *
 * Every mode starts from a clean router (xnat down, programs detached), so
 * no state of one mode flatters the next. Kernel modes get xdp_pass on the
 * router's ports for the UDP profiles: a veth takes the generator's XDP_TX
 * frames only if its receiver runs XDP (veth_xdp_xmit).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xnat_bench.skel.h"
#include "xnat_fwd.skel.h"
#include "bench_common.h"
#include "log.h"
#include "percpu.h"
#include "pins.h"
#include "reasons.h"

const char *const bench_mode_names[BM_MAX] = {
	[BM_KERNEL_FWD] = "kernel-fwd",
	[BM_KERNEL_MASQ] = "kernel-masq",
	[BM_KERNEL_NAT] = "kernel-nat",
	[BM_XDP_NAT] = "xdp-nat",
	[BM_XDP_NAT_SLOW] = "xdp-nat-slow",
	[BM_XDP_OFFLOAD] = "xdp-offload",
	[BM_XDP_FWD] = "xdp-fwd",
	[BM_DROP] = "drop",
};

static int write_config(struct bench *b, enum bench_mode m, uint32_t flows_max,
			char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/router-%s.ini", b->tmp_dir, bench_mode_names[m]);
	f = fopen(path, "we");
	if (!f) {
		pr_warn("xnat bench: cannot write %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "; written by xnat bench for mode %s\n"
		   "[router]\n"
		   "mode = %s\n"
		   "wan  = wan0\n"
		   "lan  = lan0\n"
		   "xdp  = native\n"
		   "\n[nat]\n"
		   "address = auto\n"
		   "ports   = 20000-65535\n"
		   "\n[flows]\n"
		   "max = %u\n",
		bench_mode_names[m], m == BM_KERNEL_NAT ? "kernel" :
		m == BM_XDP_OFFLOAD ? "offload" : "xdp", flows_max);
	if (fclose(f))
		return -errno;
	return 0;
}

/*
 * kernel-masq's table: what a plain Linux box that masquerades its LAN
 * would load, and not a rule more. Family ip, so only the IPv4 hooks
 * (the testbed has no IPv6); the NAT chain alone (a filter chain on any
 * hook would cost every packet); no counter. Connection tracking comes
 * with the NAT chain.
 */
#define MASQ_FAMILY "ip"
#define MASQ_NAME "xnat_bench_masq"
#define MASQ_RULESET \
	"table " MASQ_FAMILY " " MASQ_NAME " {\n" \
	"\tchain postrouting {\n" \
	"\t\ttype nat hook postrouting priority srcnat; policy accept;\n" \
	"\t\toifname \"wan0\" masquerade\n" \
	"\t}\n" \
	"}\n"

/*
 * conntrack's UDP timeouts in kernel-masq: kernel-nat's (xnat's default
 * [timeouts] udp, which its `xnat up` sets), not Linux's 30 and 120 s. A
 * plain box keeps its defaults, but here they would let a million cycled
 * one-way flows expire between two visits on a slow run, and time their
 * setup instead of their forwarding; the timeout costs a packet nothing.
 * Put back as found when the mode ends.
 */
static const char *const masq_ct_sysctls[] = {
	"net/netfilter/nf_conntrack_udp_timeout",
	"net/netfilter/nf_conntrack_udp_timeout_stream",
};
#define MASQ_UDP_TIMEOUT "300"

static void masq_timeouts(struct bench *b, bool set)
{
	char v[24];

	for (int i = 0; i < 2; i++) {
		if (set)
			b->masq_ct_saved[i] = bench_sysctl_read(b, NS_RTR,
								masq_ct_sysctls[i]);
		if (!set && b->masq_ct_saved[i] < 0)
			continue;
		snprintf(v, sizeof(v), "%lld", b->masq_ct_saved[i]);
		bench_sysctl(b, NS_RTR, masq_ct_sysctls[i],
			     set ? MASQ_UDP_TIMEOUT : v);
	}
}

static int masq_nft(struct bench *b, bool add)
{
	const char *del[] = { "nft", "delete", "table", MASQ_FAMILY, MASQ_NAME,
			      NULL };
	const char *load[] = { "nft", "-f", NULL, NULL };
	char path[128];
	FILE *f;
	int err;

	if (!add)
		return bench_run(b, NS_RTR, 10, NULL, del);
	snprintf(path, sizeof(path), "%s/router-kernel-masq.nft", b->tmp_dir);
	f = fopen(path, "we");
	if (!f) {
		err = -errno;
		pr_warn("xnat bench: cannot write %s: %s\n", path, strerror(-err));
		return err;
	}
	fputs(MASQ_RULESET, f);
	if (fclose(f))
		return -errno;
	load[2] = path;
	err = bench_run(b, NS_RTR, 10, NULL, load);
	if (err)
		pr_warn("xnat bench: nft could not load %s's table (%s)\n",
			bench_mode_names[BM_KERNEL_MASQ], path);
	return err < 0 ? err : err ? -EIO : 0;
}

static int xnat_cmd(struct bench *b, const char *cmd, const char *config)
{
	const char *argv[] = { b->xnat_path, "-n", b->ns_name[NS_RTR], cmd,
			       config ? "-c" : NULL, config, NULL };

	/* Loading the XDP object and creating a million-flow table can take
	 * a few seconds on a busy 2-vCPU machine. */
	return bench_run(b, NS_MAX, 60, NULL, argv);
}

static int attach(struct bench *b, int ifindex, int prog_fd, const char *what)
{
	int err = bench_enter(b, NS_RTR);

	if (err)
		return err;
	err = bpf_xdp_attach(ifindex, prog_fd,
			     XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST,
			     NULL);
	bench_enter(b, NS_MAX);
	if (err)
		pr_warn("xnat bench: failed to attach %s to the router's port #%d: %s\n",
			what, ifindex, strerror(-err));
	return err;
}

static void detach_all(struct bench *b)
{
	if (bench_enter(b, NS_RTR))
		return;
	/* Nothing attached is not an error here. */
	bpf_xdp_detach(b->ifindex_rtr_lan, XDP_FLAGS_DRV_MODE, NULL);
	bpf_xdp_detach(b->ifindex_rtr_wan, XDP_FLAGS_DRV_MODE, NULL);
	bench_enter(b, NS_MAX);
}

static int attach_both(struct bench *b, struct bpf_program *prog)
{
	int fd = bpf_program__fd(prog);
	const char *name = bpf_program__name(prog);

	return attach(b, b->ifindex_rtr_lan, fd, name) ?:
	       attach(b, b->ifindex_rtr_wan, fd, name);
}

static int fwd_up(struct bench *b)
{
	__u32 ports[2] = { b->ifindex_rtr_lan, b->ifindex_rtr_wan };
	int err, fd;

	b->fwd = xnat_fwd_bpf__open_and_load();
	if (!b->fwd)
		return pr_warn_errno("xnat bench: failed to load bpf/bench/xnat_fwd.bpf.c");
	/* A devmap entry names a device of the namespace it is added from. */
	err = bench_enter(b, NS_RTR);
	if (err)
		return err;
	fd = bpf_map__fd(b->fwd->maps.xdp_tx_ports);
	for (int i = 0; i < 2 && !err; i++)
		if (bpf_map_update_elem(fd, &ports[i], &ports[i], BPF_ANY))
			err = -errno;
	bench_enter(b, NS_MAX);
	if (err) {
		pr_warn("xnat bench: failed to fill the forwarder's xdp_tx_ports: %s\n",
			strerror(-err));
		return err;
	}
	return attach_both(b, b->fwd->progs.xdp_fwd);
}

static int set_fastpath_off(struct bench *b)
{
	struct xnat_config c;
	char path[128];
	__u32 zero = 0;
	int fd, err = 0;

	pins_map_path_of(b->rtr_ino, MAP_CONFIG, path, sizeof(path));
	fd = pins_map_open_of(b->rtr_ino, MAP_CONFIG);
	if (fd < 0) {
		err = fd;
		pr_warn("xnat bench: cannot open %s: %s\n", path, strerror(-err));
		return err;
	}
	if (bpf_map_lookup_elem(fd, &zero, &c)) {
		err = -errno;
	} else {
		c.flags |= XNAT_F_FASTPATH_OFF;
		if (bpf_map_update_elem(fd, &zero, &c, BPF_EXIST))
			err = -errno;
	}
	close(fd);
	if (err)
		pr_warn("xnat bench: cannot set XNAT_F_FASTPATH_OFF in %s: %s\n",
			path, strerror(-err));
	return err;
}

/*
 * Empty the router's conntrack table (ctnetlink IPCTNL_MSG_CT_DELETE with no
 * tuple: all entries of the namespace, as `conntrack -F` does). Entries
 * outlive the nftables table that made them: kernel-nat's flows, still
 * known to conntrack, would make xdp-nat pass the same tuples up as the
 * kernel's (pass_kernel_flow), and the new-flow test would find them set
 * up already.
 */
static int conntrack_flush(struct bench *b)
{
	struct {
		struct nlmsghdr nh;
		struct nfgenmsg nf;
	} req = {
		.nh = {
			.nlmsg_len = sizeof(req),
			.nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
			.nlmsg_seq = 1,
		},
		.nf = { .nfgen_family = AF_INET, .version = NFNETLINK_V0 },
	};
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char buf[512];
	int fd, err = 0;
	ssize_t n;

	err = bench_enter(b, NS_RTR);
	if (err)
		return err;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	bench_enter(b, NS_MAX);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
	} else {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			err = -errno;
		} else if (n >= (ssize_t)(sizeof(struct nlmsghdr) + sizeof(int))) {
			struct nlmsghdr *h = (struct nlmsghdr *)buf;

			if (h->nlmsg_type == NLMSG_ERROR)
				err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
		}
	}
	close(fd);
	/* No conntrack in the namespace (module not loaded): nothing to do. */
	if (err == -ENOENT || err == -EOPNOTSUPP || err == -EPROTONOSUPPORT)
		err = 0;
	if (err)
		pr_warn("xnat bench: cannot flush the router's conntrack table: %s\n",
			strerror(-err));
	return err;
}

int bench_mode_enter(struct bench *b, enum bench_mode mode,
		     uint32_t flows_max, bool xdp_pass)
{
	char config[128];
	int err = 0;

	b->mode = mode;
	b->mode_up = true;
	/* A clean router: nothing of the previous mode's flows. */
	err = conntrack_flush(b);
	if (err)
		return err;
	switch (mode) {
	case BM_KERNEL_FWD:
	case BM_KERNEL_MASQ:
	case BM_XDP_FWD:
		/* bpf_fib_lookup, like the kernel, forwards only where
		 * forwarding is on. */
		err = bench_sysctl(b, NS_RTR, "net/ipv4/ip_forward", "1");
		if (!err && mode == BM_KERNEL_MASQ) {
			b->masq_up = true;
			b->masq_ct_saved[0] = b->masq_ct_saved[1] = -1;
			/* The NAT table brings conntrack into the namespace,
			 * and with it its sysctls. */
			err = masq_nft(b, true);
			if (!err)
				masq_timeouts(b, true);
		}
		if (!err && mode == BM_XDP_FWD)
			err = fwd_up(b);
		else if (!err && xdp_pass)
			err = attach_both(b, b->progs->progs.xdp_pass);
		break;
	case BM_KERNEL_NAT:
	case BM_XDP_NAT:
	case BM_XDP_NAT_SLOW:
	case BM_XDP_OFFLOAD:
		err = write_config(b, mode, flows_max, config, sizeof(config));
		if (err)
			break;
		b->xnat_up = true;
		err = xnat_cmd(b, "up", config);
		if (err) {
			err = err < 0 ? err : -EIO;
			break;
		}
		if (mode == BM_XDP_NAT_SLOW)
			err = set_fastpath_off(b);
		else if (mode == BM_KERNEL_NAT && xdp_pass)
			err = attach_both(b, b->progs->progs.xdp_pass);
		break;
	case BM_DROP:
		err = attach_both(b, b->progs->progs.xdp_drop);
		break;
	default:
		err = -EINVAL;
	}
	return err;
}

int bench_mode_leave(struct bench *b)
{
	int err = 0;

	if (!b->mode_up && !b->xnat_up)
		return 0;
	if (b->xnat_up) {
		err = xnat_cmd(b, "down", NULL);
		if (err > 0)
			err = -EIO;
		b->xnat_up = false;
	}
	/* What we attached ourselves (xnat down removed its own). */
	if (b->mode != BM_XDP_NAT && b->mode != BM_XDP_NAT_SLOW &&
	    b->mode != BM_XDP_OFFLOAD)
		detach_all(b);
	if (b->fwd) {
		xnat_fwd_bpf__destroy(b->fwd);
		b->fwd = NULL;
	}
	if (b->masq_up) {
		masq_timeouts(b, false);
		if (masq_nft(b, false) && !err)
			err = -EIO;
		b->masq_up = false;
	}
	if (b->mode == BM_KERNEL_FWD || b->mode == BM_KERNEL_MASQ ||
	    b->mode == BM_XDP_FWD)
		bench_sysctl(b, NS_RTR, "net/ipv4/ip_forward", "0");
	b->mode_up = false;
	b->mode = BM_MAX;
	return err;
}

/* xnat's per-CPU counters, summed, classified by their stable names. */
static int read_xnat_stats(struct bench *b, struct bench_router_counters *c)
{
	int fd = pins_map_open_of(b->rtr_ino, MAP_STATS);

	if (fd < 0)
		return fd;
	for (__u32 r = 0; r < XNAT_REASON_MAX; r++) {
		struct xnat_counter sum;
		uint64_t n;

		if (percpu_counter_sum(fd, r, &sum))
			continue;
		n = sum.packets;
		c->reason[r] = n;
		if (r == XNAT_FWD_FAST)
			c->fwd_fast += n;
		else if (r == XNAT_FWD_SLOW || r == XNAT_FWD_OFFLOAD ||
			 r == XNAT_FWD_SLOW_EDM)
			/* offload mode's miss; a new flow through an
			 * endpoint-dependent port is a new flow too */
			c->fwd_slow += n;
		else if (r == XNAT_FWD_ROUTED)
			c->fwd_routed += n;
		else if (!strncmp(reasons[r].name, "pass_", 5))
			c->passed += n;
		else if (!strncmp(reasons[r].name, "drop_", 5))
			c->dropped += n;
	}
	close(fd);
	return 0;
}

static uint64_t read_drop_seen(struct bench *b)
{
	__u64 n;

	percpu_u64_sum(bpf_map__fd(b->progs->maps.bench_dropped), 0, &n);
	return n;
}

int bench_router_read(struct bench *b, struct bench_router_counters *c)
{
	int err = 0;

	memset(c, 0, sizeof(*c));
	c->conntrack = -1;
	if (b->mode == BM_XDP_NAT || b->mode == BM_XDP_NAT_SLOW ||
	    b->mode == BM_XDP_OFFLOAD)
		err = read_xnat_stats(b, c);
	if (b->mode == BM_DROP)
		c->drop_seen = read_drop_seen(b);
	if (bench_mode_conntrack(b->mode))
		c->conntrack = bench_sysctl_read(b, NS_RTR,
						 "net/netfilter/nf_conntrack_count");
	return err;
}

void bench_router_delta(const struct bench_router_counters *before,
			const struct bench_router_counters *after,
			struct bench_router_counters *d)
{
	d->fwd_fast = after->fwd_fast - before->fwd_fast;
	d->fwd_slow = after->fwd_slow - before->fwd_slow;
	d->fwd_routed = after->fwd_routed - before->fwd_routed;
	d->passed = after->passed - before->passed;
	d->dropped = after->dropped - before->dropped;
	d->drop_seen = after->drop_seen - before->drop_seen;
	d->kernel_fwd = after->kernel_fwd - before->kernel_fwd;
	d->conntrack = after->conntrack;
	for (int r = 0; r < XNAT_REASON_MAX; r++)
		d->reason[r] = after->reason[r] - before->reason[r];
}
