// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the config's bounds, what `xnat check` refuses because
 * `xnat up` could not apply it: the longest [timeouts] the kernel takes
 * (its HZ read from the coarse clocks' resolution, user/lib/clock.c, and
 * checked against the kernel's own CONFIG_HZ), the config file's size,
 * line length and NUL bytes (user/config_read.c), and the room under a
 * memory cgroup's limit that [flows] max must fit (user/lib/memcg.c).
 * Prints "#N name:OK|FAIL", reasons on stderr, and ends with "N passed, N
 * failed".
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config_harness.h"
#include "memcg.h"

#define LINE_MAX_BYTES 4096
#define FILE_MAX_BYTES (1 << 20)

/* Every HZ the kernel can be built with (1-12287, include/linux/jiffies.h)
 * comes back from its tick, TICK_NSEC = (NSEC_PER_SEC + HZ / 2) / HZ. */
static bool test_hz_of_tick(void)
{
	bool ok = true;

	for (long hz = 1; hz < 12288 && ok; hz++)
		ok = ASSERT_EQ(clock_hz_of_tick((1000000000L + hz / 2) / hz), hz,
			       "HZ from its tick");
	return ok && ASSERT_EQ(clock_hz_of_tick(0), 0, "no tick") &&
	       ASSERT_EQ(clock_hz_of_tick(-1), 0, "negative tick");
}

/* CONFIG_HZ of the running kernel from /proc/config.gz or
 * /boot/config-RELEASE; 0 when neither is there. */
static long kernel_config_hz(void)
{
	char cmd[256], line[128];
	struct utsname u;
	long hz = 0;
	FILE *f;

	uname(&u);
	snprintf(cmd, sizeof(cmd),
		 "{ zcat /proc/config.gz || cat /boot/config-%s; } 2>/dev/null",
		 u.release);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CONFIG_HZ=%ld", &hz) == 1)
			break;
	pclose(f);
	return hz;
}

/* clock_hz() is the kernel's HZ, not USER_HZ. Without the kernel's
 * config it is at least one of the values some architecture offers. */
static bool test_hz_is_kernel_hz(void)
{
	static const long kconfig[] = { 24, 32, 48, 64, 100, 128, 200, 250,
					256, 300, 500, 1000, 1024, 1200 };
	long want = kernel_config_hz(), hz = clock_hz();

	if (want)
		return ASSERT_EQ(hz, want, "clock_hz() against CONFIG_HZ");
	fprintf(stderr, "%s: no kernel config to compare HZ %ld with\n",
		cur_test, hz);
	for (size_t i = 0; i < sizeof(kconfig) / sizeof(*kconfig); i++)
		if (hz == kconfig[i])
			return true;
	check_fail("HZ %ld is none the kernel builds with", hz);
	return false;
}

/* INT_MAX jiffies (conntrack's sysctls and timeouts) or INT_MAX ms
 * (offload's bpf_ct_change_timeout()), whichever is less; at an unknown
 * HZ the bound of the largest, 1200. */
static bool test_timeout_max(void)
{
	static const struct {
		unsigned int hz;
		unsigned long max;
	} c[] = {
		{ 100, 2147483 }, { 250, 2147483 }, { 300, 2147483 },
		{ 500, 2147483 }, { 1000, 2147483 }, { 1024, 2097151 },
		{ 1200, 1789569 }, { 0, 1789569 },
	};
	bool ok = true;

	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++)
		ok &= ASSERT_EQ(config_timeout_max(c[i].hz), c[i].max, "bound");
	return ok;
}

/* Each [timeouts] key takes the bound on this kernel, not one more. */
static int test_timeout_keys(void)
{
	static const char *const keys[] = { "tcp_established",
					    "tcp_transitory", "udp", "icmp",
					    "udp_dns" };
	unsigned long max = config_timeout_max(clock_hz());
	char text[256], v[32];
	struct config cfg;

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		snprintf(text, sizeof(text), MINIMAL "[timeouts]\n%s = %lu\n",
			 keys[i], max);
		if (parse_ok(text, &cfg))
			return 1;
		snprintf(v, sizeof(v), "%lu", max + 1);
		if (parse_bad("timeouts", keys[i], v, seconds_expected()))
			return 1;
	}
	EXPECT_EQ(cfg.timeout_udp_dns, max);
	return 0;
}

/* LEN bytes of TEXT (NULs and all) into the test's config file. */
static int write_bytes(const char *text, size_t len)
{
	FILE *f = fopen(ini_path, "w");

	if (!f)
		return fail("cannot write %s", ini_path);
	fwrite(text, 1, len, f);
	fclose(f);
	return 0;
}

/* Every error of the config file as it is now: exactly WANT (N of them,
 * each "LINE: message" after the path). */
static int errors_are(const char *const *want, int n)
{
	struct config_errors *errs = malloc(sizeof(*errs));
	char full[CONFIG_ERR_LEN + 64];
	struct config cfg;
	int ret = 0;

	if (!errs)
		return fail("out of memory");
	if (!config_parse_all(&cfg, ini_path, errs))
		ret = fail("parsed, expected %d errors", n);
	else if (errs->n != n)
		ret = fail("%d errors, expected %d; the first '%s'", errs->n, n,
			   errs->msg[0]);
	for (int i = 0; !ret && i < n; i++) {
		snprintf(full, sizeof(full), "%s:%s", ini_path, want[i]);
		if (strcmp(errs->msg[i], full))
			ret = fail("error %d is '%s', expected '%s'", i,
				   errs->msg[i], full);
	}
	free(errs);
	return ret;
}

/* A NUL cuts no value short unnoticed, in a value or a comment; the key
 * still counts as given (no "lan is missing" too). */
static int test_nul_byte(void)
{
	static const char value[] = "[router]\nwan = wan0\nlan = lan0\0junk\n";
	static const char comment[] = MINIMAL "; a\0b\n";
	const char *const want_value[] = {
		"3: NUL byte at column 11: a config is text" };
	const char *const want_comment[] = {
		"4: NUL byte at column 4: a config is text" };

	return write_bytes(value, sizeof(value) - 1) ||
	       errors_are(want_value, 1) ||
	       write_bytes(comment, sizeof(comment) - 1) ||
	       errors_are(want_comment, 1);
}

/* A comment line of LEN bytes, its newline included, at P. */
static void comment_line(char *p, size_t len)
{
	memset(p, 'x', len);
	p[0] = len > 1 ? ';' : '\n';
	p[len - 1] = '\n';
}

/* A config of LEN bytes: MINIMAL, comment lines of 100 bytes or less (a
 * comment is read too), the last one of LAST bytes; malloc'ed. */
static char *padded(size_t len, size_t last)
{
	char *text = malloc(len + 1);
	size_t n = strlen(MINIMAL), fill = len - n - last, line;

	if (!text)
		return NULL;
	memcpy(text, MINIMAL, n);
	for (; fill; fill -= line, n += line) {
		line = fill % 100 ? fill % 100 : 100;
		comment_line(text + n, line);
	}
	comment_line(text + n, last);
	text[len] = '\0';
	return text;
}

/* A line may be CONFIG_LINE_MAX bytes with its comment, not one more. */
static int test_line_cap(void)
{
	char *text = padded(strlen(MINIMAL) + LINE_MAX_BYTES + 1,
			    LINE_MAX_BYTES + 1);
	char want[CONFIG_ERR_LEN];
	const char *const w[] = { want };
	struct config cfg;
	int ret;

	if (!text)
		return fail("out of memory");
	ret = write_bytes(text, strlen(text));
	if (!ret && config_parse(&cfg, ini_path, want))
		ret = fail("a line of %d bytes: %s", LINE_MAX_BYTES, want);
	free(text);
	if (ret)
		return ret;
	text = padded(strlen(MINIMAL) + LINE_MAX_BYTES + 2,
		      LINE_MAX_BYTES + 2);
	if (!text)
		return fail("out of memory");
	snprintf(want, sizeof(want),
		 "4: line too long (%d bytes, at most %d with its comment)",
		 LINE_MAX_BYTES + 1, LINE_MAX_BYTES);
	ret = write_bytes(text, strlen(text)) || errors_are(w, 1);
	free(text);
	return ret;
}

/* The file may be CONFIG_FILE_MAX bytes, not one more; what comes after
 * is not read, and what it would have set is not said to be missing. */
static int test_file_cap(void)
{
	char *text = padded(FILE_MAX_BYTES, 50);
	char err[CONFIG_ERR_LEN], want[160], *last;
	const char *const w[] = { want };
	struct config cfg;
	int ret, lines = 0;

	if (!text)
		return fail("out of memory");
	ret = write_bytes(text, strlen(text));
	if (!ret && config_parse(&cfg, ini_path, err))
		ret = fail("a file of %d bytes: %s", FILE_MAX_BYTES, err);
	free(text);
	if (ret)
		return ret;
	/* One byte more, and the ports after it: they are not read. */
	text = padded(FILE_MAX_BYTES + 1, 50);
	if (!text)
		return fail("out of memory");
	last = text + strlen(text) - 50;
	snprintf(last, 51, "[router]\nwan = wan1%30s\n", "");
	for (char *c = text; *c; c++)
		lines += *c == '\n';
	snprintf(want, sizeof(want),
		 "%d: file too large: more than %d bytes (1 MiB), not read further",
		 lines, FILE_MAX_BYTES);
	ret = write_bytes(text, strlen(text)) || errors_are(w, 1);
	free(text);
	return ret;
}

/* An endless file of NULs is read no further than the cap. */
static int test_endless_file(void)
{
	char err[CONFIG_ERR_LEN], want[160];
	struct config cfg;

	if (!config_parse(&cfg, "/dev/zero", err))
		return fail("/dev/zero parsed");
	snprintf(want, sizeof(want),
		 "/dev/zero:1: file too large: more than %d bytes (1 MiB), not read further",
		 FILE_MAX_BYTES);
	EXPECT_STR(err, want);
	return 0;
}

/* This process's address space in bytes, from /proc/self/statm. */
static long long vm_bytes(void)
{
	long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lld", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * sysconf(_SC_PAGESIZE);
}

/*
 * A 50 MB line, read where memory is short (an address space 32 MB over
 * what is mapped): the parse says the file is too large, at its line. It
 * used to read the line whole, take the allocation's failure for the end
 * of the file and report "[router] wan is missing", wan being after it.
 */
static int test_huge_line_short_memory(void)
{
	char chunk[1 << 16], err[CONFIG_ERR_LEN] = "", want[200];
	struct rlimit rl;
	struct config cfg;
	int fds[2], status;
	ssize_t n;
	pid_t pid;
	FILE *f;

	/* Written in pieces: a 50 MB buffer freed here would leave the
	 * heap room the child's parse could take. */
	f = fopen(ini_path, "w");
	if (!f)
		return fail("cannot write %s", ini_path);
	memset(chunk, 'x', sizeof(chunk));
	fputs("[router]\n;", f);
	for (int i = 0; i < (50 << 20) / (int)sizeof(chunk); i++)
		fwrite(chunk, 1, sizeof(chunk), f);
	fputs("\nwan = wan0\nlan = lan0\n", f);
	fclose(f);
	if (pipe(fds))
		return fail("pipe");
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		rl.rlim_cur = rl.rlim_max = vm_bytes() + (32 << 20);
		setrlimit(RLIMIT_AS, &rl);
		if (!config_parse(&cfg, ini_path, err))
			strcpy(err, "parsed");
		n = write(fds[1], err, strlen(err));
		_exit(n < 0);
	}
	close(fds[1]);
	n = read(fds[0], err, sizeof(err) - 1);
	close(fds[0]);
	waitpid(pid, &status, 0);
	err[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof(want),
		 "%s:2: file too large: more than %d bytes (1 MiB), not read further",
		 ini_path, FILE_MAX_BYTES);
	EXPECT_STR(err, want);
	return 0;
}

/* VAL into DIR/NAME (DIR made first); 0 or 1. */
static int put(const char *dir, const char *name, const char *val)
{
	char path[256];
	FILE *f;

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return fail("cannot write %s", path);
	fputs(val, f);
	fclose(f);
	return 0;
}

/*
 * The room under a cgroup's limits, on a made-up hierarchy TOP/a/b: the
 * least over the levels of limit - usage + inactive file pages, levels
 * without a limit skipped; none at all: -ENOENT. v2 files, then v1.
 */
static int test_memcg_room(void)
{
	char top[128], a[160], b[192], who[256], want[256];
	long long room;

	snprintf(top, sizeof(top), "%s/cg", tmpdir);
	snprintf(a, sizeof(a), "%s/a", top);
	snprintf(b, sizeof(b), "%s/b", a);
	mkdir(top, 0700);
	/* v2: b has no limit, a has 1000 with 900 charged (100 of it
	 * inactive files): 200; the top's limit leaves more. */
	if (put(a, "memory.max", "1000\n") || put(a, "memory.current", "900\n") ||
	    put(a, "memory.stat", "anon 800\ninactive_file 100\nactive_file 7\n") ||
	    put(b, "memory.max", "max\n") || put(b, "memory.current", "50\n") ||
	    put(top, "memory.max", "100000\n") ||
	    put(top, "memory.current", "900\n"))
		return 1;
	room = memcg_room_at(b, top, 2, who, sizeof(who));
	EXPECT_EQ(room, 200);
	snprintf(want, sizeof(want), "%s/memory.max", a);
	EXPECT_STR(who, want);
	/* Over its limit: no room, not a negative one. */
	if (put(b, "memory.max", "40\n"))
		return 1;
	EXPECT_EQ(memcg_room_at(b, top, 2, who, sizeof(who)), 0);
	/* v1: "no limit" is the largest page count. */
	if (put(b, "memory.limit_in_bytes", "9223372036854771712\n") ||
	    put(b, "memory.usage_in_bytes", "50\n") ||
	    put(a, "memory.limit_in_bytes", "9223372036854771712\n") ||
	    put(a, "memory.usage_in_bytes", "50\n"))
		return 1;
	EXPECT_EQ(memcg_room_at(b, top, 1, who, sizeof(who)), -ENOENT);
	if (put(a, "memory.limit_in_bytes", "5000\n") ||
	    put(a, "memory.stat", "total_inactive_file 300\ninactive_file 1\n"))
		return 1;
	EXPECT_EQ(memcg_room_at(b, top, 1, who, sizeof(who)), 5000 - 50 + 300);
	/* Outside the hierarchy: nothing to say. */
	EXPECT_EQ(memcg_room_at("/nowhere", top, 2, who, sizeof(who)), -ENOENT);
	snprintf(want, sizeof(want), "rm -rf -- '%s'", top);
	return system(want) ? fail("cannot remove %s", top) : 0;
}

static const struct config_test tests[] = {
	CHECK(hz_of_tick),
	CHECK(hz_is_kernel_hz),
	CHECK(timeout_max),
	TEST(timeout_keys),
	/* First: what the others read must not have grown the heap. */
	TEST(huge_line_short_memory),
	TEST(nul_byte),
	TEST(line_cap),
	TEST(file_cap),
	TEST(endless_file),
	TEST(memcg_room),
};

int main(void)
{
	return config_tests_main(tests, sizeof(tests) / sizeof(tests[0]));
}
