// SPDX-License-Identifier: GPL-2.0-only
/*
 * The data-path tests' testbed (see fixture.h): a private network
 * namespace with lan0, wan0, a port xnat does not run on (ext0) and a VLAN
 * stand-in (vl100), their neighbours, and the XDP program loaded with its
 * maps filled as user/maps.c fills them. fixture_setup() is also the
 * fuzzer's (tests/fuzz/).
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "fixture.h"
#include "loader.h"

static int check_mac(const char *ifname, const uint8_t *want)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	rc = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (rc || memcmp(ifr.ifr_hwaddr.sa_data, want, ETH_ALEN)) {
		fprintf(stderr, "setup: %s has not the expected MAC\n", ifname);
		return -1;
	}
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int setup_netns(void)
{
	static const char *const cmds[] = {
		"ip link set lo up",
		"ip link add lan0 address 02:00:00:00:01:01 type veth peer name lan0p",
		"ip link add wan0 address 02:00:00:00:02:01 type veth peer name wan0p",
		"ip link set lan0 up",
		"ip link set lan0p up",
		"ip link set wan0 up",
		"ip link set wan0p up",
		"ip addr add 198.18.1.1/24 dev lan0",
		"ip addr add 2001:2:0:1::1/64 dev lan0 nodad",
		"ip addr add 198.19.0.1/24 dev wan0",
		"ip addr add 2001:2:0:2::1/64 dev wan0 nodad",
		"ip neigh add 198.18.1.10 lladdr 02:00:00:00:01:0a dev lan0 nud permanent",
		"ip neigh add 198.19.0.2 lladdr 02:00:00:00:02:02 dev wan0 nud permanent",
		"ip -6 neigh add 2001:2:0:1::10 lladdr 02:00:00:00:01:0a dev lan0 nud permanent",
		"ip -6 neigh add 2001:2:0:2::2 lladdr 02:00:00:00:02:02 dev wan0 nud permanent",
		"ip route add unreachable 198.18.200.0/24",
		/* A port xnat does not run on, for PASS_EGRESS. */
		"ip link add ext0 type veth peer name ext0p",
		"ip link set ext0p up",
		"ip link set ext0 up",
		"ip addr add 198.18.100.1/24 dev ext0",
		/* The VLAN 100 device's stand-in (see test_vlan). */
		/* A VLAN device takes its port's MAC unless told otherwise. */
		"ip link add vl100 address 02:00:00:00:01:01 type veth peer name vl100p",
		"ip link set vl100p up",
		"ip link set vl100 up",
		"ip addr add 198.18.3.1/24 dev vl100",
		"ip neigh add " VLAN_HOST " lladdr 02:00:00:00:04:0a dev vl100 nud permanent",
		"ip neigh add 198.18.100.2 lladdr 02:00:00:00:03:02 dev ext0 nud permanent",
		/* The VLAN 200 device's stand-in (test_vlan's tag change). */
		"ip link add vl200 address 02:00:00:00:01:01 type veth peer name vl200p",
		"ip link set vl200p up",
		"ip link set vl200 up",
		"ip addr add 198.18.4.1/24 dev vl200",
		"ip neigh add " VLAN2_HOST " lladdr 02:00:00:00:05:0a dev vl200 nud permanent",
	};
	size_t i;

	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "setup: unshare(CLONE_NEWNET): %s\n",
			strerror(errno));
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (sh(cmds[i]))
			return -1;
	if (router_ports("lan0", &if_lan, "wan0", &if_wan))
		return -1;
	if (check_mac("lan0", mac_lan0) || check_mac("wan0", mac_wan0))
		return -1;
	return 0;
}

static int setup_bpf(unsigned int flow_entries)
{
	struct xnat_config cfg = {
		.port_min = PORT_MIN,
		.port_max = PORT_MAX,
		.wan_ifindex = if_wan,
		.timeout_tcp_est = 7440,
		.timeout_tcp_trans = 240,
		.timeout_udp = 300,
		.timeout_icmp = 60,
	};
	struct iface_info lan = { .role = XNAT_ROLE_LAN,
				  .mac = MAC_LAN0, .parent = if_lan };
	struct iface_info wan = { .role = XNAT_ROLE_WAN,
				  .mac = MAC_WAN0, .parent = if_wan };
	struct fwd_key fk = { .port = htons(8080), .proto = IPPROTO_TCP };
	struct fwd_value fv = { .port = htons(80) };
	__u32 zero = 0, l = if_lan, w = if_wan;
	int ifaces_fd, fwd_fd, err;

	libbpf_set_print(libbpf_print);
	inet_pton(AF_INET, NAT_ADDR, &cfg.nat_addr);
	inet_pton(AF_INET, LAN_HOST, &fv.addr);

	skel = xnat_bpf__open();
	if (!skel) {
		fprintf(stderr, "setup: xnat_bpf__open failed\n");
		return -1;
	}
	err = bpf_map__set_max_entries(skel->maps.xnat_flows, flow_entries);
	if (!err)
		err = xnat_bpf__load(skel);
	if (!err)
		err = loader_slow_path_link(skel->obj, NULL);
	if (err) {
		fprintf(stderr, "setup: loading the XDP program: %s\n",
			strerror(-err));
		return -1;
	}
	prog_fd = bpf_program__fd(skel->progs.xdp_xnat);
	flows_fd = bpf_map__fd(skel->maps.xnat_flows);
	stats_fd = bpf_map__fd(skel->maps.xnat_stats);
	config_fd = bpf_map__fd(skel->maps.xnat_config);
	tx_fd = bpf_map__fd(skel->maps.xnat_tx_ports);
	ifaces_fd = bpf_map__fd(skel->maps.xnat_ifaces);
	fwd_fd = bpf_map__fd(skel->maps.xnat_forwards);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "setup: libbpf_num_possible_cpus failed\n");
		return -1;
	}

	/* In the order user/maps.c writes them: ports, forwards, config. */
	if (bpf_map_update_elem(ifaces_fd, &l, &lan, BPF_ANY) ||
	    bpf_map_update_elem(ifaces_fd, &w, &wan, BPF_ANY) ||
	    bpf_map_update_elem(tx_fd, &l, &l, BPF_ANY) ||
	    bpf_map_update_elem(tx_fd, &w, &w, BPF_ANY) ||
	    bpf_map_update_elem(fwd_fd, &fk, &fv, BPF_ANY) ||
	    bpf_map_update_elem(config_fd, &zero, &cfg, BPF_ANY)) {
		fprintf(stderr, "setup: filling the maps: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int fixture_testbed_opts(const struct fixture_opts *o)
{
	if (setup_netns() ||
	    setup_bpf(o->flow_entries ? o->flow_entries : 2 * FLOW_CONNS))
		return -1;
	return o->setup ? o->setup() : 0;
}

int fixture_testbed(void)
{
	static const struct fixture_opts dflt;

	return fixture_testbed_opts(&dflt);
}

/* The testbed and the loaded program, without the test runner (for the
 * fuzzer, tests/fuzz/). 0 or -1 with the failure reported. */
int fixture_setup(void)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (geteuid()) {
		fprintf(stderr, "fixture: must run as root\n");
		return -1;
	}
	return fixture_testbed();
}
