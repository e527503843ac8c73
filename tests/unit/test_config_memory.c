// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of what a config's table sizes cost (user/memory.c,
 * user/map_size.c): the per-map estimate against the kernel's own count
 * of maps created here, the share of MemAvailable `xnat up` and `xnat
 * check` allow and the count said to fit when refusing, and the NAT
 * tables' sizes by the number of addresses. Needs CAP_BPF (the maps)
 * and CAP_SYS_ADMIN (a network namespace of its own). Prints
 * "#N name:OK|FAIL", reasons on stderr, and ends with "N passed, N failed".
 */
#include <sched.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "config_harness.h"
#include "map_size.h"
#include "memory.h"
#include "pins.h"

/* The kernel's "memlock:" figure (htab_map_mem_usage() and the like)
 * for a new map of this shape; -1 if it cannot be created or read. */
static long long kernel_bytes(enum bpf_map_type type, __u32 key, __u32 value,
			      __u32 n)
{
	long long bytes = -1;
	char path[64], line[128];
	FILE *f;
	int fd;

	fd = bpf_map_create(type, "xnat_memtest", key, value, n, NULL);
	if (fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &bytes) == 1)
			break;
	if (f)
		fclose(f);
	close(fd);
	return bytes;
}

/* The estimate of each shape the data path uses is within 2% of what the
 * kernel counts once the map exists (its fixed header and per-CPU locks
 * are left out of the estimate), at a size where a bucket array of a
 * power of two is not a round number of entries. */
static int test_map_bytes_as_kernel(void)
{
	static const struct {
		enum bpf_map_type type;
		__u32 key, value, n;
	} shapes[] = {
		{ BPF_MAP_TYPE_HASH, 16, 44, 100000 },
		{ BPF_MAP_TYPE_HASH, 8, 8, 65536 },
		{ BPF_MAP_TYPE_LRU_HASH, 12, 20, 100000 },
		{ BPF_MAP_TYPE_ARRAY, 4, 36, 100000 },
		{ BPF_MAP_TYPE_PERCPU_ARRAY, 4, 64, 20000 },
	};

	for (size_t i = 0; i < sizeof(shapes) / sizeof(*shapes); i++) {
		long long k = kernel_bytes(shapes[i].type, shapes[i].key,
					   shapes[i].value, shapes[i].n);
		long long e = mem_map_bytes(shapes[i].type, shapes[i].key,
					    shapes[i].value, shapes[i].n);

		if (k <= 0)
			return fail("shape %zu: no map, or no memlock (%lld)",
				    i, k);
		if (e < k * 98 / 100 || e > k * 102 / 100)
			return fail("shape %zu (type %d, %u entries): estimate %lld, kernel %lld",
				    i, shapes[i].type, shapes[i].n, e, k);
	}
	return 0;
}

/* A full table's timers: two per connection, one kmalloc-128 each. */
static int test_timers_bytes(void)
{
	EXPECT_EQ(mem_timers_bytes(0), 0);
	EXPECT_EQ(mem_timers_bytes(65536), 65536LL * 2 * 128);
	EXPECT_EQ(mem_timers_bytes(1U << 24), (1LL << 24) * 2 * 128);
	return 0;
}

/* 3/4 of MemAvailable, to the byte: what is at the limit fits, a byte
 * more is refused, with the count that fits at the cost per connection
 * rounded up; no figure (no /proc/meminfo) refuses nothing. */
static int test_fits_share(void)
{
	unsigned long long fits = 0;

	EXPECT_EQ(mem_fits(3000, 4000, 100, &fits), 1);
	EXPECT_EQ(mem_fits(3001, 4000, 100, &fits), 0);
	/* 3001 / 100 + 1 = 31 bytes a connection; 3000 / 31 = 96. */
	EXPECT_EQ(fits, 96);
	fits = 0;
	EXPECT_EQ(mem_fits(1ULL << 40, 1LL << 30, 1U << 24, &fits), 0);
	/* 65536 + 1 bytes a connection in 768 MB: 12287. */
	EXPECT_EQ(fits, (3ULL << 28) / 65537);
	EXPECT_EQ(mem_fits(1ULL << 40, -2, 1U << 24, &fits), 1);
	EXPECT_EQ(mem_fits(1ULL << 40, 0, 1U << 24, &fits), 1);
	return 0;
}

/* The refusal's figures for a million connections in 512 MB (the
 * integration test's case, tests/integration/test_scale.sh): the flow
 * and peer tables and the timers alone are refused, and fewer
 * connections than asked are said to fit. */
static int test_fits_million_in_512mb(void)
{
	unsigned long long need, fits = 0;
	__u32 flows = 1U << 20;

	need = mem_map_bytes(BPF_MAP_TYPE_HASH, 16, 48, 2 * flows) +
	       mem_map_bytes(BPF_MAP_TYPE_LRU_HASH, 16, 16, 2 * flows) +
	       mem_timers_bytes(flows);
	EXPECT_EQ(mem_fits(need, 512LL << 20, flows, &fits), 0);
	if (fits == 0 || fits >= flows)
		return fail("%llu connections said to fit", fits);
	if (fits * (need / flows + 1) > (384ULL << 20))
		return fail("%llu connections need more than 384 MB", fits);
	return 0;
}

/* Mappings and ports: one entry per external port of the pool's
 * addresses, at most [flows] max; in a network namespace of our own, so
 * that no running router's bigger table is found pinned. */
static int test_nat_table_by_addresses(void)
{
	static const struct {
		int n_pool;
		uint32_t flows_max, want;
	} c[] = {
		{ 0, 1U << 20, 65536 },	     /* auto: one address */
		{ 1, 1U << 20, 65536 },
		{ 4, 1U << 20, 4 * 65536 },
		{ 4, 100000, 100000 },
		{ 256, 1U << 24, 1U << 24 }, /* the largest config */
		{ 256, 1U << 20, 1U << 20 },
	};
	struct config cfg;

	if (unshare(CLONE_NEWNET))
		return fail("unshare(CLONE_NEWNET): %s", strerror(errno));
	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++) {
		config_init(&cfg);
		cfg.n_pool = c[i].n_pool;
		cfg.flows_max = c[i].flows_max;
		EXPECT_EQ(map_size_nat_table(&cfg, MAP_MAPPINGS), c[i].want);
		EXPECT_EQ(map_size_nat_table(&cfg, MAP_PORTS), c[i].want);
	}
	return 0;
}

static const struct config_test tests[] = {
	TEST(map_bytes_as_kernel),
	TEST(timers_bytes),
	TEST(fits_share),
	TEST(fits_million_in_512mb),
	TEST(nat_table_by_addresses),
};

int main(void)
{
	return config_tests_main(tests, sizeof(tests) / sizeof(tests[0]));
}
