/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the config parser's tests share (test_config.c,
 * test_config_system.c, test_config_check.c): each test writes its INI
 * into ini_path, in a private temporary directory the runner makes and
 * removes; EXPECT_* checks return 0 when they hold and report on stderr
 * under the running test's name otherwise (1); tests written with check.h's
 * ASSERT_* return true when they pass instead.
 */
#ifndef XNAT_TEST_CONFIG_HARNESS_H
#define XNAT_TEST_CONFIG_HARNESS_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "clock.h"
#include "config.h"

/* The runner's temporary directory, and the file in it each test writes
 * its config into. */
extern char tmpdir[64];
extern char ini_path[128];

/* Report a failure of the running test (check.h's cur_test), printf
 * style; 1. */
#define fail(...) (check_fail(__VA_ARGS__), 1)

static inline int write_ini(const char *text)
{
	FILE *f = fopen(ini_path, "w");

	if (!f)
		return fail("cannot write %s: %s", ini_path, strerror(errno));
	fputs(text, f);
	fclose(f);
	return 0;
}

#define MINIMAL "[router]\nwan = wan0\nlan = lan0\n"

/* Parse TEXT; 0 if it parses, with CFG filled. */
static inline int parse_ok(const char *text, struct config *cfg)
{
	char err[CONFIG_ERR_LEN];

	if (write_ini(text))
		return 1;
	if (config_parse(cfg, ini_path, err))
		return fail("unexpected error: %s", err);
	return 0;
}

/* An accepted value of a key: TEXT parses, and the test's getter reads
 * WANT from the result. */
struct value_case {
	const char *text;
	long long want;
};

/* The N cases of C in order, each read by GET; 0 when all hold. */
static inline int parse_values(const struct value_case *c, size_t n,
			       long long (*get)(const struct config *cfg))
{
	struct config cfg;
	size_t i;

	for (i = 0; i < n; i++) {
		if (parse_ok(c[i].text, &cfg))
			return 1;
		if (get(&cfg) != c[i].want)
			return fail("'%s': read %lld, expected %lld", c[i].text,
				    get(&cfg), c[i].want);
	}
	return 0;
}

/* TEXT must fail with "PATH:LINE: MSG" ("PATH: MSG" for line 0). */
static inline int parse_err(const char *text, int line, const char *msg)
{
	char err[CONFIG_ERR_LEN], want[CONFIG_ERR_LEN + 64];
	struct config cfg;

	if (write_ini(text))
		return 1;
	if (line)
		snprintf(want, sizeof(want), "%s:%d: %s", ini_path, line, msg);
	else
		snprintf(want, sizeof(want), "%s: %s", ini_path, msg);
	if (!config_parse(&cfg, ini_path, err))
		return fail("parsed, expected error '%s'", want);
	if (strcmp(err, want))
		return fail("got '%s', expected '%s'", err, want);
	return 0;
}

/* KEY = VALUE after MINIMAL, in [SECTION] (NULL: in [router]), must fail
 * with "bad KEY 'VALUE': EXPECTED" at its line. */
static inline int parse_bad(const char *section, const char *key,
			    const char *value, const char *expected)
{
	char text[512], msg[384];

	snprintf(text, sizeof(text), "%s%s%s%s%s = %s\n", MINIMAL,
		 section ? "[" : "", section ? section : "",
		 section ? "]\n" : "", key, value);
	snprintf(msg, sizeof(msg), "bad %s '%s': %s", key, value, expected);
	return parse_err(text, section ? 5 : 4, msg);
}

/* What the parser says a [timeouts] value must be, on this kernel
 * (test_config_limits.c checks the bound itself). */
static inline const char *seconds_expected(void)
{
	static char s[128];
	unsigned int hz = clock_hz();

	snprintf(s, sizeof(s),
		 "expected an integer in 1-%lu (seconds; the kernel takes no more at HZ %u)",
		 config_timeout_max(hz), hz);
	return s;
}

/* An IPv4 address (dotted quad) in network order. */
static inline uint32_t ip(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

#define EXPECT_EQ(a, b)                                                   \
	do {                                                              \
		long long _a = (a), _b = (b);                             \
		if (_a != _b)                                             \
			return fail("%s is %lld, expected %lld", #a, _a, _b); \
	} while (0)

#define EXPECT_STR(a, b)                                                  \
	do {                                                              \
		if (strcmp((a), (b)))                                     \
			return fail("%s is '%s', expected '%s'", #a, (a), (b)); \
	} while (0)

/* A [forward] rule as parsed: protocol, WAN port, inside address, port. */
#define EXPECT_FWD(f, want_proto, want_port, want_addr, want_to_port)     \
	do {                                                              \
		EXPECT_EQ((f).proto, (want_proto));                       \
		EXPECT_EQ((f).port, (want_port));                         \
		EXPECT_EQ((f).addr, ip(want_addr));                       \
		EXPECT_EQ((f).to_port, (want_to_port));                   \
	} while (0)


/* [router] as parsed: the mode, how XDP attaches, the WAN and the first
 * LAN port; 0 when they hold. */
static inline int expect_router(const struct config *cfg, int mode, int xdp,
				const char *wan, const char *lan0)
{
	EXPECT_EQ(cfg->mode, mode);
	EXPECT_EQ(cfg->xdp_attach, xdp);
	EXPECT_STR(cfg->wan.name, wan);
	EXPECT_STR(cfg->lan[0].name, lan0);
	return 0;
}

/* [nat] and [flows] as parsed: the address taken from the WAN port or
 * not, the port range, the flow table's size; 0 when they hold. */
static inline int expect_nat(const struct config *cfg, int addr_auto,
			     long long port_min, long long port_max,
			     long long flows_max)
{
	EXPECT_EQ(cfg->nat_addr_auto, addr_auto);
	EXPECT_EQ(cfg->port_min, port_min);
	EXPECT_EQ(cfg->port_max, port_max);
	EXPECT_EQ(cfg->flows_max, flows_max);
	return 0;
}

/* [timeouts] as parsed, in seconds: tcp_established, tcp_transitory,
 * udp, icmp; 0 when they hold. */
static inline int expect_timeouts(const struct config *cfg,
				  const long long want[4])
{
	static const char *const key[4] = { "tcp_established",
					    "tcp_transitory", "udp", "icmp" };
	const long long got[4] = { cfg->timeout_tcp_est, cfg->timeout_tcp_trans,
				   cfg->timeout_udp, cfg->timeout_icmp };

	for (int i = 0; i < 4; i++)
		if (got[i] != want[i])
			return fail("timeout %s is %lld, expected %lld", key[i],
				    got[i], want[i]);
	return 0;
}

struct config_test {
	const char *name;
	int (*fn)(void);     /* 0 when it passes (EXPECT_*) */
	bool (*check)(void); /* or: true when it passes (ASSERT_*) */
};

#define TEST(name) { #name, test_##name, NULL }
#define CHECK(name) { #name, NULL, test_##name }

/* Run TESTS in order; the exit status of main. */
int config_tests_main(const struct config_test *tests, size_t n);

#endif /* XNAT_TEST_CONFIG_HARNESS_H */
