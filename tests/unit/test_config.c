/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests of the config parser (user/config*.c): defaults, every key,
 * the comment syntax, each kind of error with its exact "FILE:LINE:
 * message". The kernel port ranges, interface resolution and the example
 * configs are in test_config_system.c; the helpers and the runner in
 * config_harness.h. Prints "#N name:OK|FAIL", reasons on stderr, and ends
 * with "N passed, N failed".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config_harness.h"


/* What the parser expects of a timeout, mss_clamp, ct_mark and address;
 * 1789569 s is a timeout every kernel takes (INT_MAX / 1200, the largest
 * HZ). */
#define SECONDS seconds_expected()
#define MSS_VALUES "expected pmtu, off or an MSS in 536-65495"
#define TWO_BITS "expected a 32-bit mask with exactly two bits set, e.g. 0xc0000000"
#define ADDRESSES                                                             \
	"expected auto, or unicast IPv4 addresses and ranges A-B, comma separated"

static int test_defaults(void)
{
	struct config cfg;

	if (parse_ok(MINIMAL, &cfg))
		return 1;
	if (expect_router(&cfg, MODE_XDP, XDP_ATTACH_AUTO, "wan0", "lan0") ||
	    expect_timeouts(&cfg, (const long long[]){ 7440, 240, 300, 60 }) ||
	    expect_nat(&cfg, 1, 20000, 65535, 1048576))
		return 1;
	EXPECT_EQ(cfg.wan.line, 2);
	EXPECT_EQ(cfg.n_lan, 1);
	EXPECT_EQ(cfg.lan[0].line, 3);
	EXPECT_EQ(cfg.nat_addr, 0);
	EXPECT_EQ(cfg.ports_line, 0);
	EXPECT_EQ(cfg.n_fwd, 0);
	EXPECT_STR(cfg.path, ini_path);
	return 0;
}

static int test_all_keys(void)
{
	struct config cfg;

	if (parse_ok("[router]\n"
		     "mode = kernel\n"
		     "wan = eth1\n"
		     "lan = eth0, eth2 ,br-lan.10\n"
		     "xdp = generic\n"
		     "[nat]\n"
		     "address = 198.19.0.1\n"
		     "ports = 30000 - 40000\n"
		     "[timeouts]\n"
		     "tcp_established = 1789569\n"
		     "tcp_transitory = 1\n"
		     "udp = 31\n"
		     "icmp = 7\n"
		     "[flows]\n"
		     "max = 16777216\n"
		     "[forward]\n"
		     "tcp/8080 = 198.18.1.10:80\n"
		     "udp/53 = 198.18.1.11\n"
		     "tcp/53 = 198.18.1.12:5353\n",
		     &cfg))
		return 1;
	if (expect_router(&cfg, MODE_KERNEL, XDP_ATTACH_GENERIC, "eth1", "eth0") ||
	    expect_timeouts(&cfg, (const long long[]){ 1789569, 1, 31, 7 }) ||
	    expect_nat(&cfg, 0, 30000, 40000, 16777216))
		return 1;
	EXPECT_EQ(cfg.n_lan, 3);
	EXPECT_STR(cfg.lan[1].name, "eth2");
	EXPECT_STR(cfg.lan[2].name, "br-lan.10");
	EXPECT_EQ(cfg.lan[2].line, 4);
	EXPECT_EQ(cfg.nat_addr, ip("198.19.0.1"));
	EXPECT_EQ(cfg.nat_addr_line, 7);
	EXPECT_EQ(cfg.ports_line, 8);
	EXPECT_EQ(cfg.n_fwd, 3);
	EXPECT_FWD(cfg.fwd[0], IPPROTO_TCP, 8080, "198.18.1.10", 80);
	EXPECT_EQ(cfg.fwd[0].line, 17);
	EXPECT_FWD(cfg.fwd[1], IPPROTO_UDP, 53, "198.18.1.11", 53);
	EXPECT_EQ(cfg.fwd[2].proto, IPPROTO_TCP);
	EXPECT_EQ(cfg.fwd[2].port, 53);
	EXPECT_EQ(cfg.fwd[2].to_port, 5353);
	return 0;
}

/*
 * The comment styles a config may use (';' and '#', whole-line and
 * inline), indented continuation comments (which
 * libinih would otherwise read as a second value), CRLF and a BOM.
 */
static int test_comments(void)
{
	struct config cfg;

	if (parse_ok("\xef\xbb\xbf; leading comment\r\n"
		     "# hash comment\r\n"
		     "\r\n"
		     "  [router]   ; section comment\r\n"
		     "mode = kernel # inline hash\r\n"
		     "xdp  = native                  ; native where\r\n"
		     "                               ; the driver supports it\r\n"
		     "\twan\t=\teth1\t;tabs\r\n"
		     "  lan = eth0;no space before comment\r\n"
		     "[nat]\r\n"
		     "address=198.19.0.1;\r\n",
		     &cfg))
		return 1;
	if (expect_router(&cfg, MODE_KERNEL, XDP_ATTACH_NATIVE, "eth1", "eth0"))
		return 1;
	EXPECT_EQ(cfg.wan.line, 8);
	EXPECT_EQ(cfg.lan[0].line, 9);
	EXPECT_EQ(cfg.nat_addr, ip("198.19.0.1"));
	return 0;
}

/* Keys may come in any order across sections, repeated sections merge. */
static int test_section_order(void)
{
	struct config cfg;

	if (parse_ok("[forward]\ntcp/80 = 198.18.1.10\n"
		     "[router]\nlan = lan0\n"
		     "[nat]\nports = 40000-50000\n"
		     "[router]\nwan = wan0\n",
		     &cfg))
		return 1;
	EXPECT_STR(cfg.wan.name, "wan0");
	EXPECT_EQ(cfg.wan.line, 8);
	EXPECT_EQ(cfg.port_min, 40000);
	EXPECT_EQ(cfg.n_fwd, 1);
	return 0;
}

static int test_no_file(void)
{
	char err[CONFIG_ERR_LEN], want[CONFIG_ERR_LEN];
	struct config cfg;

	snprintf(want, sizeof(want), "%s/nope.ini: No such file or directory",
		 tmpdir);
	snprintf(ini_path, sizeof(ini_path), "%s/nope.ini", tmpdir);
	if (!config_parse(&cfg, ini_path, err))
		return fail("parsed a missing file");
	snprintf(ini_path, sizeof(ini_path), "%s/t.ini", tmpdir);
	EXPECT_STR(err, want);
	return 0;
}

static int test_unknown_section(void)
{
	return parse_err(MINIMAL "\n; comment\n[natt]\n", 6,
			 "unknown section [natt]") ||
	       parse_err("[router]\n[router\n", 2,
			 "bad section header '[router'") ||
	       parse_err("[router] extra\n", 1,
			 "bad section header '[router] extra'");
}

static int test_unknown_key(void)
{
	return parse_err(MINIMAL "# x\n\nwann = eth3\n", 6,
			 "unknown key 'wann' in [router]") ||
	       parse_err(MINIMAL "[timeouts]\ntcp = 5\n", 5,
			 "unknown key 'tcp' in [timeouts]") ||
	       parse_err("wan = wan0\n", 1, "key 'wan' outside any section");
}

static int test_syntax(void)
{
	return parse_err(MINIMAL "mode\n", 4,
			 "expected KEY = VALUE or [section]") ||
	       parse_err(MINIMAL "mode: xdp\n", 4,
			 "expected KEY = VALUE or [section]") ||
	       parse_err(MINIMAL "= xdp\n", 4,
			 "expected KEY = VALUE or [section]");
}

static int test_duplicate_key(void)
{
	return parse_err("[router]\nwan = wan0\nlan = lan0\n\n"
			 "[nat]\n[router]\nwan = wan1\n",
			 7, "duplicate key 'wan' in [router] (first at line 2)") ||
	       parse_err(MINIMAL "[flows]\nmax=5\n;\nmax=6\n", 7,
			 "duplicate key 'max' in [flows] (first at line 5)");
}

static int test_bad_value(void)
{
	return parse_bad(NULL, "mode", "bridge", "expected offload, xdp or kernel") ||
	       parse_bad(NULL, "xdp", "offload", "expected auto, native or generic") ||
	       parse_err(MINIMAL "mode =\n", 4, "empty value for 'mode'") ||
	       parse_bad("timeouts", "udp", "0", SECONDS) ||
	       parse_bad("timeouts", "icmp", "4294968", SECONDS) ||
	       parse_bad("timeouts", "udp", "-1", SECONDS) ||
	       parse_bad("timeouts", "udp", "30s", SECONDS) ||
	       parse_bad("timeouts", "udp", "0x10", SECONDS) ||
	       parse_bad("timeouts", "udp", "99999999999999999999999", SECONDS) ||
	       parse_bad("flows", "max", "16777217", "expected an integer in 1-16777216") ||
	       parse_err("[router]\nwan = eth\"1\n", 2,
			 "bad interface name 'eth\"1': up to 15 of letters, digits, '-', '_', '.'") ||
	       parse_err("[router]\nwan = abcdefghijklmnop\n", 2,
			 "bad interface name 'abcdefghijklmnop': up to 15 of letters, digits, '-', '_', '.'") ||
	       parse_err("[router]\nlan = lan0,,lan1\n", 2,
			 "empty interface name in lan list");
}

/* [router] fastpath: on by default, on/off, nothing else. */
static long long get_fastpath(const struct config *cfg)
{
	return cfg->fastpath;
}

static int test_fastpath(void)
{
	static const struct value_case ok[] = {
		{ MINIMAL, 1 },
		{ MINIMAL "fastpath = off\n", 0 },
		{ MINIMAL "fastpath = on\n", 1 },
	};

	return parse_values(ok, sizeof(ok) / sizeof(ok[0]), get_fastpath) ||
	       parse_bad(NULL, "fastpath", "no", "expected on or off") ||
	       parse_err(MINIMAL "[nat]\nfastpath = off\n", 5,
			 "unknown key 'fastpath' in [nat]");
}

/* [router] source_check: strict by default, strict/feasible, nothing
 * else. */
static long long get_source_feasible(const struct config *cfg)
{
	return cfg->source_feasible;
}

static int test_source_check(void)
{
	static const struct value_case ok[] = {
		{ MINIMAL, 0 },
		{ MINIMAL "source_check = feasible\n", 1 },
		{ MINIMAL "source_check = strict\n", 0 },
	};

	return parse_values(ok, sizeof(ok) / sizeof(ok[0]),
			    get_source_feasible) ||
	       parse_bad(NULL, "source_check", "loose",
			 "expected strict or feasible");
}

/* [router] mss_clamp: pmtu by default, off, or an IPv4 MSS in range. */
/* The clamp, and for a fixed one its MSS: FIXED_MSS(n) for an MSS of n. */
#define FIXED_MSS(n) (MSS_CLAMP_FIXED * 100000LL + (n))
static long long get_mss(const struct config *cfg)
{
	return cfg->mss_clamp * 100000LL +
	       (cfg->mss_clamp == MSS_CLAMP_FIXED ? cfg->mss_fixed : 0);
}

static int test_mss_clamp(void)
{
	static const struct value_case ok[] = {
		{ MINIMAL, MSS_CLAMP_PMTU * 100000LL },
		{ MINIMAL "mss_clamp = off\n", MSS_CLAMP_OFF * 100000LL },
		{ MINIMAL "mss_clamp = 1452\n", FIXED_MSS(1452) },
		{ MINIMAL "mss_clamp = 536\n", FIXED_MSS(536) },
		{ MINIMAL "mss_clamp = 65495\n", FIXED_MSS(65495) },
		{ MINIMAL "mss_clamp = pmtu\n", MSS_CLAMP_PMTU * 100000LL },
	};

	return parse_values(ok, sizeof(ok) / sizeof(ok[0]), get_mss) ||
	       parse_bad(NULL, "mss_clamp", "535", MSS_VALUES) ||
	       parse_bad(NULL, "mss_clamp", "65496", MSS_VALUES) ||
	       parse_bad(NULL, "mss_clamp", "on", MSS_VALUES) ||
	       parse_bad(NULL, "mss_clamp", "1452 bytes", MSS_VALUES) ||
	       parse_err(MINIMAL "mss_clamp = off\nmss_clamp = pmtu\n", 5,
			 "duplicate key 'mss_clamp' in [router] (first at line 4)") ||
	       parse_err(MINIMAL "[nat]\nmss_clamp = pmtu\n", 5,
			 "unknown key 'mss_clamp' in [nat]");
}

/* [ipv6] inbound: stateful by default, or open; the section has no other
 * key. */
static long long get_inbound(const struct config *cfg)
{
	return cfg->ipv6_inbound;
}

static int test_ipv6_inbound(void)
{
	static const struct value_case ok[] = {
		{ MINIMAL, IPV6_INBOUND_STATEFUL },
		{ MINIMAL "[ipv6]\ninbound = open\n", IPV6_INBOUND_OPEN },
		{ MINIMAL "[ipv6]\ninbound = stateful\n", IPV6_INBOUND_STATEFUL },
	};

	return parse_values(ok, sizeof(ok) / sizeof(ok[0]), get_inbound) ||
	       parse_bad("ipv6", "inbound", "closed", "expected stateful or open") ||
	       parse_err(MINIMAL "[ipv6]\noutbound = open\n", 5,
			 "unknown key 'outbound' in [ipv6]") ||
	       parse_err(MINIMAL "[router]\ninbound = open\n", 5,
			 "unknown key 'inbound' in [router]") ||
	       parse_err(MINIMAL "[ipv4]\ninbound = open\n", 4,
			 "unknown section [ipv4]");
}

/* mode = offload and [offload]: ct_mark takes exactly two bits (hex or
 * decimal; the lower one is the original direction's), shaped is kernel
 * (default) or offload. */
static int test_offload(void)
{
	struct config cfg;

	if (parse_ok(MINIMAL "mode = offload\n", &cfg))
		return 1;
	EXPECT_EQ(cfg.mode, MODE_OFFLOAD);
	EXPECT_EQ(cfg.offload_mark, 0xc0000000u);
	EXPECT_EQ(cfg.offload_shaped, 0);
	EXPECT_STR(config_mode_name(cfg.mode), "offload");
	EXPECT_EQ(mode_runs_xdp(MODE_OFFLOAD), 1);
	EXPECT_EQ(mode_runs_xdp(MODE_KERNEL), 0);
	if (parse_ok(MINIMAL "mode = offload\n[offload]\nct_mark = 0x300\n"
			     "shaped = offload\n", &cfg))
		return 1;
	EXPECT_EQ(cfg.offload_mark, 0x300u);
	EXPECT_EQ(cfg.offload_shaped, 1);
	if (parse_ok(MINIMAL "[offload]\nct_mark = 5\nshaped = kernel\n", &cfg))
		return 1;
	EXPECT_EQ(cfg.offload_mark, 5u);
	EXPECT_EQ(cfg.offload_shaped, 0);
	return parse_bad("offload", "ct_mark", "0x40000000", TWO_BITS) ||
	       parse_bad("offload", "ct_mark", "0x7", TWO_BITS) ||
	       parse_bad("offload", "ct_mark", "0x100000003", TWO_BITS) ||
	       parse_bad("offload", "ct_mark", "-3", TWO_BITS) ||
	       parse_bad("offload", "ct_mark", "0xc0000000x", TWO_BITS) ||
	       parse_bad("offload", "shaped", "yes", "expected kernel or offload") ||
	       parse_err(MINIMAL "[offload]\nmark = 3\n", 5,
			 "unknown key 'mark' in [offload]");
}

static int test_bad_ports(void)
{
	const char *msg = "expected A-B with 1024 <= A <= B <= 65535";
	char want[128];

	snprintf(want, sizeof(want), "bad ports '1023-2000': %s", msg);
	if (parse_err(MINIMAL "[nat]\nports = 1023-2000\n", 5, want))
		return 1;
	snprintf(want, sizeof(want), "bad ports '3000-2000': %s", msg);
	if (parse_err(MINIMAL "[nat]\nports = 3000-2000\n", 5, want))
		return 1;
	snprintf(want, sizeof(want), "bad ports '30000-65536': %s", msg);
	if (parse_err(MINIMAL "[nat]\nports = 30000-65536\n", 5, want))
		return 1;
	snprintf(want, sizeof(want), "bad ports '30000': %s", msg);
	return parse_err(MINIMAL "[nat]\nports = 30000\n", 5, want);
}

static int test_bad_address(void)
{
	return parse_bad("nat", "address", "198.19.0.256", ADDRESSES) ||
	       parse_bad("nat", "address", "224.0.0.1", ADDRESSES) ||
	       parse_err(MINIMAL "[forward]\ntcp/80 = 198.18.1\n", 5,
			 "bad address '198.18.1': expected a unicast IPv4 address") ||
	       parse_err(MINIMAL "[forward]\ntcp/80 = 198.18.1.10:0\n", 5,
			 "bad forward target '198.18.1.10:0': port must be 1-65535") ||
	       parse_err(MINIMAL "[forward]\nsctp/80 = 198.18.1.10\n", 5,
			 "bad forward 'sctp/80': expected tcp/PORT or udp/PORT") ||
	       parse_err(MINIMAL "[forward]\ntcp/65536 = 198.18.1.10\n", 5,
			 "bad forward 'tcp/65536': port must be 1-65535");
}

static int test_forward_duplicated(void)
{
	return parse_err(MINIMAL "[forward]\ntcp/8080 = 198.18.1.10:80\n"
				 "udp/8080 = 198.18.1.10:80\n"
				 "; again\n"
				 "tcp/8080 = 198.18.1.11\n",
			 8, "forward tcp/8080 is duplicated (first at line 5)");
}

static int test_forward_in_nat_range(void)
{
	return parse_err(MINIMAL "[forward]\ntcp/8080 = 198.18.1.10:80\n"
				 "udp/30000 = 198.18.1.10\n"
				 "[nat]\nports = 30000-40000\n",
			 6, "forward udp/30000 lies inside [nat] ports 30000-40000 (line 8)") ||
	       parse_err(MINIMAL "[forward]\ntcp/20000 = 198.18.1.10\n", 5,
			 "forward tcp/20000 lies inside the default [nat] ports 20000-65535");
}

static int test_wan_is_lan(void)
{
	return parse_err("[router]\nlan = lan0, wan0\n\nwan = wan0\n", 2,
			 "wan wan0 is also listed as lan (wan at line 4)");
}

static int test_lan_twice(void)
{
	return parse_err("[router]\nwan = wan0\n\nlan = lan0, lan1, lan0\n", 4,
			 "lan lan0 is listed twice");
}

static int test_too_many_lans(void)
{
	return parse_err("[router]\nwan = wan0\nlan = a0,a1,a2,a3,a4,a5,a6,a7,"
			 "a8,a9,a10,a11,a12,a13,a14,a15,a16\n",
			 3, "too many lan interfaces (at most 16)");
}

static int test_missing_iface(void)
{
	return parse_err("[router]\nlan = lan0\n", 0,
			 "[router] wan is missing") ||
	       parse_err("[router]\nwan = wan0\n", 0,
			 "[router] lan is missing");
}

static int test_long_line(void)
{
	struct config cfg;
	char text[512];

	snprintf(text, sizeof(text), MINIMAL "[forward]\ntcp/1 = %0300d\n", 1);
	if (parse_err(text, 5, "line too long (at most 199 characters)"))
		return 1;
	/* A long comment is not a long line. */
	snprintf(text, sizeof(text), MINIMAL "; %0300d\nmode = kernel\n", 1);
	if (parse_ok(text, &cfg))
		return 1;
	EXPECT_EQ(cfg.mode, MODE_KERNEL);
	return 0;
}

/* [nat] address as a pool: addresses and ranges, the first is nat_addr. */
static int test_address_pool(void)
{
	struct config cfg;
	uint32_t a;

	if (parse_ok(MINIMAL "[nat]\naddress = 198.19.0.1, 198.19.0.10-198.19.0.12 ,198.19.1.1\n",
		     &cfg))
		return 1;
	EXPECT_EQ(cfg.n_pool, 5);
	EXPECT_EQ(cfg.nat_addr_auto, 0);
	EXPECT_EQ(cfg.nat_addr, cfg.pool[0]);
	inet_pton(AF_INET, "198.19.0.11", &a);
	EXPECT_EQ(cfg.pool[2], a);
	inet_pton(AF_INET, "198.19.1.1", &a);
	EXPECT_EQ(cfg.pool[4], a);
	if (parse_ok(MINIMAL "[nat]\naddress = 198.19.0.1\n", &cfg))
		return 1;
	EXPECT_EQ(cfg.n_pool, 1);
	return parse_err(MINIMAL "[nat]\naddress = 198.19.0.1, 198.19.0.0-198.19.0.2\n", 5,
			 "address 198.19.0.1 is listed twice in '198.19.0.1, 198.19.0.0-198.19.0.2'") ||
	       parse_err(MINIMAL "[nat]\naddress = 198.19.0.9-198.19.0.1\n", 5,
			 "bad address range in '198.19.0.9-198.19.0.1': the first address is above the last") ||
	       parse_err(MINIMAL "[nat]\naddress = 198.19.0.0-198.19.1.0\n", 5,
			 "too many addresses in '198.19.0.0-198.19.1.0' (at most 256)") ||
	       parse_bad("nat", "address", "198.19.0.1,", ADDRESSES);
}

/* [nat] ports_per_host and [timeouts] udp_dns: defaults and ranges. */
static int test_scale_keys(void)
{
	struct config cfg;

	if (parse_ok(MINIMAL, &cfg))
		return 1;
	EXPECT_EQ(cfg.ports_per_host, 0);
	EXPECT_EQ(cfg.timeout_udp_dns, 30);
	if (parse_ok(MINIMAL "[nat]\nports_per_host = 2048\n[timeouts]\nudp_dns = 10\n",
		     &cfg))
		return 1;
	EXPECT_EQ(cfg.ports_per_host, 2048);
	EXPECT_EQ(cfg.timeout_udp_dns, 10);
	return parse_bad("nat", "ports_per_host", "65536", "expected an integer in 0-65535") ||
	       parse_bad("timeouts", "udp_dns", "0", SECONDS);
}

static const struct config_test tests[] = {
	TEST(defaults),
	TEST(all_keys),
	TEST(comments),
	TEST(section_order),
	TEST(no_file),
	TEST(unknown_section),
	TEST(unknown_key),
	TEST(syntax),
	TEST(duplicate_key),
	TEST(bad_value),
	TEST(fastpath),
	TEST(source_check),
	TEST(offload),
	TEST(bad_ports),
	TEST(bad_address),
	TEST(forward_duplicated),
	TEST(forward_in_nat_range),
	TEST(wan_is_lan),
	TEST(lan_twice),
	TEST(too_many_lans),
	TEST(missing_iface),
	TEST(long_line),
	TEST(address_pool),
	TEST(scale_keys),
	TEST(mss_clamp),
	TEST(ipv6_inbound),
};

int main(void)
{
	return config_tests_main(tests, sizeof(tests) / sizeof(tests[0]));
}
