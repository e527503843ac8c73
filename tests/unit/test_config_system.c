// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the config beyond the file (user/config_nat.c,
 * user/config_iface.c): the kernel port ranges of xdp mode, interface
 * resolution in the running system, and the example configs in configs/
 * (run from the repository root). Helpers and runner: config_harness.h.
 * Prints "#N name:OK|FAIL", reasons on stderr, and ends with "N passed,
 * N failed".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config_harness.h"

static int ranges(uint16_t lo, uint16_t hi, int ports_line, uint16_t local[2],
		  uint16_t knat[2], char *err)
{
	struct config cfg;

	config_init(&cfg);
	strcpy(cfg.path, "x.ini");
	cfg.port_min = lo;
	cfg.port_max = hi;
	cfg.ports_line = ports_line;
	return config_kernel_ranges(&cfg, local, knat, err);
}

#define EXPECT_RANGES(lo, hi, l0, l1, k0, k1)                               \
	do {                                                                \
		if (ranges(lo, hi, 1, local, knat, err))                    \
			return fail("%d-%d: %s", lo, hi, err);              \
		if (local[0] != (l0) || local[1] != (l1) ||                 \
		    knat[0] != (k0) || knat[1] != (k1))                     \
			return fail("%d-%d: local %u-%u knat %u-%u", lo, hi, \
				    local[0], local[1], knat[0], knat[1]);  \
	} while (0)

/*
 * The local range has an even length (different parity at its ends, as the
 * kernel prefers), is below the kernel NAT range, and neither touches the
 * XDP range.
 */
static int test_kernel_ranges(void)
{
	uint16_t local[2], knat[2];
	char err[CONFIG_ERR_LEN];

	EXPECT_RANGES(20000, 65535, 1024, 10511, 10512, 19999);
	EXPECT_RANGES(2048, 64511, 1024, 2047, 64512, 65535);
	EXPECT_RANGES(20001, 60000, 1024, 19999, 60001, 65535);
	EXPECT_RANGES(1024, 40000, 40001, 52766, 52767, 65535);
	EXPECT_RANGES(20001, 65535, 1024, 10511, 10512, 20000);
	EXPECT_RANGES(3072, 65535, 1024, 2047, 2048, 3071);
	EXPECT_RANGES(20000, 65000, 1024, 10511, 10512, 19999);
	if (!ranges(3071, 65535, 4, local, knat, err))
		return fail("3071-65535 accepted");
	EXPECT_STR(err, "x.ini:4: [nat] ports 3071-65535 leave too few ports to the kernel: need 1024 for local sockets and 1024 for kernel NAT, both within 1024-65535");
	if (!ranges(2000, 65000, 0, local, knat, err))
		return fail("2000-65000 accepted");
	EXPECT_STR(err, "x.ini: [nat] ports 2000-65000 leave too few ports to the kernel: need 1024 for local sockets and 1024 for kernel NAT, both within 1024-65535");
	return 0;
}

/* config_parse() refuses what config_kernel_ranges() refuses. */
static int test_ports_leave_too_few(void)
{
	return parse_err(MINIMAL "[nat]\n\nports = 1024-64000\n", 6,
			 "[nat] ports 1024-64000 leave too few ports to the kernel: need 1024 for local sockets and 1024 for kernel NAT, both within 1024-65535");
}

static int test_resolve_missing(void)
{
	char err[CONFIG_ERR_LEN], want[CONFIG_ERR_LEN + 64];
	struct config cfg;

	if (parse_ok("[router]\nwan = lo\n\nlan = xnat-nope0\n", &cfg))
		return 1;
	snprintf(want, sizeof(want), "%s:4: interface xnat-nope0 not found",
		 ini_path);
	if (!config_resolve(&cfg, err))
		return fail("resolved a missing interface");
	EXPECT_STR(err, want);
	return 0;
}

/* lo's address by ioctl, an oracle independent of getifaddrs(). */
static int lo_addr(uint32_t *addr)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret;

	ret = ioctl(fd, SIOCGIFADDR, &ifr);
	close(fd);
	if (ret)
		return -1;
	*addr = ((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr;
	return 0;
}

/* wan = lo: resolves, with auto address if lo has one (not in a new netns). */
static int test_resolve_auto(void)
{
	char err[CONFIG_ERR_LEN], want[CONFIG_ERR_LEN + 64];
	struct config cfg;
	uint32_t addr;

	if (parse_ok("[router]\nwan = lo\nlan = xnat-nope0\n", &cfg))
		return 1;
	cfg.n_lan = 0;
	if (lo_addr(&addr)) {
		snprintf(want, sizeof(want),
			 "%s:2: wan lo has no IPv4 address; set [nat] address",
			 ini_path);
		if (!config_resolve(&cfg, err))
			return fail("resolved lo without an address");
		EXPECT_STR(err, want);
		return 0;
	}
	if (config_resolve(&cfg, err))
		return fail("%s", err);
	EXPECT_EQ(cfg.wan.ifindex, if_nametoindex("lo"));
	EXPECT_EQ(cfg.nat_addr, addr);
	return 0;
}

static int test_resolve_fixed(void)
{
	char err[CONFIG_ERR_LEN];
	struct config cfg;

	if (parse_ok("[router]\nwan = lo\nlan = xnat-nope0\n"
		     "[nat]\naddress = 198.19.0.1\n",
		     &cfg))
		return 1;
	cfg.n_lan = 0;
	if (config_resolve(&cfg, err))
		return fail("%s", err);
	EXPECT_EQ(cfg.nat_addr, ip("198.19.0.1"));
	return 0;
}

/* All its LAN ports gone, a config is not one a router can run: the
 * error is the whole config's, and no port is named gone. */
static int test_resolve_running_none_left(void)
{
	char err[CONFIG_ERR_LEN], want[CONFIG_ERR_LEN + 64];
	struct config_gone gone = { .n = 3 };
	struct config cfg;

	if (parse_ok("[router]\nwan = lo\nlan = xnat-nope0, xnat-nope1\n"
		     "[nat]\naddress = 198.19.0.1\n", &cfg))
		return 1;
	snprintf(want, sizeof(want), "%s:3: interface xnat-nope0 not found",
		 ini_path);
	if (!config_resolve_running(&cfg, &gone, err))
		return fail("resolved without any LAN port");
	EXPECT_STR(err, want);
	EXPECT_EQ(gone.n, 0);
	return 0;
}

/* What run, up and status say of the ports gone: one, or several. */
static int test_gone_say(void)
{
	struct config_gone gone = { .n = 1, .name = { "lan1", "usb0" } };
	char buf[CONFIG_ERR_LEN], list[CONFIG_GONE_LEN];

	EXPECT_STR(config_gone_list(&gone, list), "lan1");
	EXPECT_STR(config_gone_say(&gone, false, buf),
		   "lan1, in the running config, is gone: the router runs "
		   "without it");
	gone.n = 2;
	EXPECT_STR(config_gone_list(&gone, list), "lan1, usb0");
	EXPECT_STR(config_gone_say(&gone, true, buf),
		   "lan1, usb0, in the running config, are gone: the router "
		   "runs without them until they are back");
	return 0;
}

static int check_example(const char *path, enum router_mode mode)
{
	char err[CONFIG_ERR_LEN];
	struct config cfg;

	if (config_parse(&cfg, path, err))
		return fail("%s", err);
	if (expect_router(&cfg, mode, XDP_ATTACH_AUTO, "wan0", "lan0") ||
	    expect_nat(&cfg, 1, 20000, 65535, 65536))
		return 1;
	EXPECT_EQ(cfg.n_lan, 1);
	EXPECT_EQ(cfg.n_fwd, 2);
	EXPECT_FWD(cfg.fwd[0], IPPROTO_TCP, 8080, "198.18.1.10", 80);
	EXPECT_FWD(cfg.fwd[1], IPPROTO_UDP, 5353, "198.18.1.10", 53);
	return 0;
}

static int test_example_xdp(void)
{
	return check_example("configs/xdp.ini", MODE_XDP);
}

static int test_example_kernel(void)
{
	return check_example("configs/kernel.ini", MODE_KERNEL);
}

static int test_example_offload(void)
{
	return check_example("configs/offload.ini", MODE_OFFLOAD);
}

static const struct config_test tests[] = {
	TEST(kernel_ranges),
	TEST(ports_leave_too_few),
	TEST(resolve_missing),
	TEST(resolve_auto),
	TEST(resolve_fixed),
	TEST(resolve_running_none_left),
	TEST(gone_say),
	TEST(example_xdp),
	TEST(example_kernel),
	TEST(example_offload),
};

int main(void)
{
	return config_tests_main(tests, sizeof(tests) / sizeof(tests[0]));
}
