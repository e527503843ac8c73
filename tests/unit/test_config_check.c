// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the config checks behind `xnat check` (user/config.c,
 * config_parse_all and config_resolve_all): every error of a file is
 * reported with its line, in file order, while what only repeats an
 * earlier error is not (keys of an unknown section, "missing" for a key
 * whose line was wrong, ranges against ports that did not parse);
 * config_parse still reports the first. Prints "#N name:OK|FAIL" and ends
 * with "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_harness.h"

/*
 * Parse TEXT collecting errors: it must fail with exactly the WANT lines
 * (NULL-terminated), each "LINE: message" (or ": message" without a
 * line), the path prefixed here.
 */
static bool errors_are(const char *text, const char *const *want)
{
	static struct config_errors errs;
	struct config cfg;
	char full[CONFIG_ERR_LEN + 160];
	bool ok = true;
	int n = 0;

	if (write_ini(text))
		return false;
	while (want[n])
		n++;
	ok &= ASSERT_EQ(config_parse_all(&cfg, ini_path, &errs), n ? -1 : 0,
			"config_parse_all result");
	ok &= ASSERT_EQ(errs.n, n, "number of errors");
	for (int i = 0; i < n && i < errs.n; i++) {
		snprintf(full, sizeof(full), "%s%s%s", ini_path,
			 want[i][0] == ':' ? "" : ":", want[i]);
		if (strcmp(errs.msg[i], full)) {
			check_fail("error %d is '%s', expected '%s'", i,
				   errs.msg[i], full);
			ok = false;
		}
	}
	return ok;
}

static bool test_every_error(void)
{
	char udp[256];
	const char *const want[] = {
		"2: bad mode 'router': expected offload, xdp or kernel",
		"4: lan lan0 is listed twice",
		"5: unknown key 'colour' in [router]",
		"7: bad address '127.0.0.1': expected auto, or unicast IPv4 addresses and ranges A-B, comma separated",
		udp,
		"10: duplicate key 'udp' in [timeouts] (first at line 9)",
		"13: forward tcp/80 is duplicated (first at line 12)",
		"14: bad forward 'sctp/1': expected tcp/PORT or udp/PORT",
		NULL,
	};

	snprintf(udp, sizeof(udp), "9: bad udp 'x': %s", seconds_expected());
	return errors_are("[router]\n"
			  "mode = router\n"
			  "wan = wan0\n"
			  "lan = lan0, lan0\n"
			  "colour = blue\n"
			  "[nat]\n"
			  "address = 127.0.0.1\n"
			  "[timeouts]\n"
			  "udp = x\n"
			  "udp = 5\n"
			  "[forward]\n"
			  "tcp/80 = 198.18.1.10\n"
			  "tcp/80 = 198.18.1.11\n"
			  "sctp/1 = 198.18.1.10\n",
			  want);
}

/* The keys under a bad header are not reported one by one. */
static bool test_unknown_section_keys(void)
{
	static const char *const want[] = {
		"4: unknown section [routr]",
		"7: unknown key 'x' in [nat]",
		NULL,
	};

	return errors_are("[router]\nwan = wan0\nlan = lan0\n"
			  "[routr]\nmode = xdp\n"
			  "[nat]\nx = 1\n",
			  want);
}

/* A wan or lan line in error is not also "missing"; absent ones are. */
static bool test_missing_not_repeated(void)
{
	static const char *const bad_lines[] = {
		"2: bad interface name 'w/0': up to 15 of letters, digits, '-', '_', '.'",
		"3: empty value for 'lan'",
		NULL,
	};
	static const char *const absent[] = {
		": [router] wan is missing",
		": [router] lan is missing",
		NULL,
	};

	return errors_are("[router]\nwan = w/0\nlan =\n", bad_lines) &
	       errors_are("[router]\nmode = xdp\n", absent);
}

/* Forwards and kernel ranges are checked against ports that parsed only. */
static bool test_ranges_need_ports(void)
{
	static const char *const bad_ports[] = {
		"5: bad ports '20000-': expected A-B with 1024 <= A <= B <= 65535",
		NULL,
	};
	static const char *const in_range[] = {
		"7: forward tcp/30000 lies inside [nat] ports 20000-40000 (line 5)",
		"8: forward udp/30001 lies inside [nat] ports 20000-40000 (line 5)",
		NULL,
	};
	const char *head = "[router]\nwan = wan0\nlan = lan0\n[nat]\n";
	char text[512];

	snprintf(text, sizeof(text), "%sports = 20000-\n[forward]\n"
		 "tcp/30000 = 198.18.1.10\n", head);
	if (!errors_are(text, bad_ports))
		return false;
	snprintf(text, sizeof(text), "%sports = 20000-40000\n[forward]\n"
		 "tcp/30000 = 198.18.1.10\nudp/30001 = 198.18.1.10\n", head);
	return errors_are(text, in_range);
}

/* config_parse keeps its contract: the first error, one line. */
static bool test_parse_reports_first(void)
{
	char err[CONFIG_ERR_LEN], want[CONFIG_ERR_LEN + 160];
	struct config cfg;

	if (write_ini("[router]\nwan = wan0\nlan = lan0\nmode = x\nxdp = y\n"))
		return false;
	snprintf(want, sizeof(want), "%s:4: bad mode 'x': expected offload, xdp or kernel",
		 ini_path);
	if (!ASSERT_EQ(config_parse(&cfg, ini_path, err), -1, "config_parse"))
		return false;
	if (strcmp(err, want)) {
		check_fail("got '%s', expected '%s'", err, want);
		return false;
	}
	return true;
}

/* More errors than are kept: all counted, the first ones kept. */
static bool test_many_errors(void)
{
	static struct config_errors errs;
	char text[4096] = "[router]\nwan = wan0\nlan = lan0\n", want[300];
	struct config cfg;
	bool ok = true;

	for (int i = 0; i < CONFIG_MAX_ERRORS + 8; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "k%d = 1\n", i);
	if (write_ini(text))
		return false;
	config_parse_all(&cfg, ini_path, &errs);
	ok &= ASSERT_EQ(errs.n, CONFIG_MAX_ERRORS + 8, "errors counted");
	snprintf(want, sizeof(want), "%s:%d: unknown key 'k%d' in [router]",
		 ini_path, 3 + CONFIG_MAX_ERRORS, CONFIG_MAX_ERRORS - 1);
	if (strcmp(errs.msg[CONFIG_MAX_ERRORS - 1], want)) {
		check_fail("last kept is '%s', expected '%s'",
			   errs.msg[CONFIG_MAX_ERRORS - 1], want);
		ok = false;
	}
	return ok;
}

/* Every interface that is not there, each at its line. */
static bool test_resolve_every_interface(void)
{
	static struct config_errors errs;
	struct config cfg;
	char want[300];
	bool ok = true;

	if (write_ini("[router]\nwan = xnat-nowan0\nlan = lo, xnat-nolan1\n"))
		return false;
	if (!ASSERT_OK(config_parse_all(&cfg, ini_path, &errs), "parse"))
		return false;
	ok &= ASSERT_EQ(config_resolve_all(&cfg, &errs), -1, "resolve_all");
	ok &= ASSERT_EQ(errs.n, 2, "errors");
	snprintf(want, sizeof(want), "%s:2: interface xnat-nowan0 not found",
		 ini_path);
	if (errs.n > 0 && strcmp(errs.msg[0], want)) {
		check_fail("got '%s', expected '%s'", errs.msg[0], want);
		ok = false;
	}
	snprintf(want, sizeof(want), "%s:3: interface xnat-nolan1 not found",
		 ini_path);
	if (errs.n > 1 && strcmp(errs.msg[1], want)) {
		check_fail("got '%s', expected '%s'", errs.msg[1], want);
		ok = false;
	}
	return ok;
}

static const struct config_test tests[] = {
	CHECK(every_error),
	CHECK(unknown_section_keys),
	CHECK(missing_not_repeated),
	CHECK(ranges_need_ports),
	CHECK(parse_reports_first),
	CHECK(many_errors),
	CHECK(resolve_every_interface),
};

int main(void)
{
	return config_tests_main(tests, sizeof(tests) / sizeof(tests[0]));
}
