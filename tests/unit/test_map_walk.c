// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of map_walk() (user/lib/map_walk.c), the batched walk `xnat
 * status` and `xnat metrics` count the tables with: every entry seen once
 * with its own value, across several batches of a hash map; a map without
 * batch operations walked key by key; a layout other than the caller's
 * refused; a callback's error ending the walk. Maps of its own, made here
 * (needs CAP_BPF). Prints "#N name:OK|FAIL" and ends with "N passed, N
 * failed".
 */
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "config_harness.h"
#include "map_walk.h"

/* More than two of map_walk's batches (4096 entries). */
#define WALK_ENTRIES 10000

struct seen {
	unsigned char *count; /* per key */
	long bad_values;
	long calls;
};

/* Key K holds the value K * 7 + 1. */
static int record(const void *key, const void *value, void *ctx)
{
	__u32 k = *(const __u32 *)key;
	__u64 v = *(const __u64 *)value;
	struct seen *s = ctx;

	s->calls++;
	if (k >= WALK_ENTRIES)
		return -ERANGE;
	s->count[k]++;
	if (v != (__u64)k * 7 + 1)
		s->bad_values++;
	return 0;
}

static int filled_map(enum bpf_map_type type)
{
	int fd = bpf_map_create(type, "xnat_walktest", sizeof(__u32),
				sizeof(__u64), WALK_ENTRIES, NULL);

	for (__u32 k = 0; fd >= 0 && k < WALK_ENTRIES; k++) {
		__u64 v = (__u64)k * 7 + 1;

		if (bpf_map_update_elem(fd, &k, &v, BPF_ANY)) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* Every key once, each with its value, whatever the batches' bounds. */
static int check_walk(int fd)
{
	struct seen s = { .count = calloc(WALK_ENTRIES, 1) };
	long n;

	if (!s.count)
		return fail("calloc");
	n = map_walk(fd, sizeof(__u32), sizeof(__u64), record, &s);
	EXPECT_EQ(n, WALK_ENTRIES);
	EXPECT_EQ(s.calls, WALK_ENTRIES);
	EXPECT_EQ(s.bad_values, 0);
	for (int k = 0; k < WALK_ENTRIES; k++)
		if (s.count[k] != 1) {
			free(s.count);
			return fail("key %d seen %d times", k, s.count[k]);
		}
	free(s.count);
	return 0;
}

/* A map of TYPE filled with WALK_ENTRIES entries, walked, then counted
 * (no callback). */
static int walk_filled(enum bpf_map_type type)
{
	int fd = filled_map(type), err;
	long counted;

	if (fd < 0)
		return fail("map of type %d: %s", type, strerror(errno));
	err = check_walk(fd);
	counted = map_walk(fd, sizeof(__u32), sizeof(__u64), NULL, NULL);
	close(fd);
	if (err)
		return err;
	EXPECT_EQ(counted, WALK_ENTRIES);
	return 0;
}

static int test_hash_batches(void)
{
	return walk_filled(BPF_MAP_TYPE_HASH);
}

/* An array's batch is the kernel's generic one (its token is a key). */
static int test_array_batches(void)
{
	return walk_filled(BPF_MAP_TYPE_ARRAY);
}

/* Key K of a port map holds the loopback's ifindex. */
static int record_port(const void *key, const void *value, void *ctx)
{
	__u32 k = *(const __u32 *)key;
	unsigned char *count = ctx;

	if (k >= 40 || *(const __u32 *)value != 1)
		return -ERANGE;
	count[k]++;
	return 0;
}

/* A device hash map has no batch operations (checked here, so that this
 * test says so if it gets them): walked key by key. */
static int test_key_by_key(void)
{
	unsigned char count[40] = { 0 };
	__u32 k, ifindex = 1, keys[4], values[4], n_batch = 4;
	char token[8];
	long n;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_DEVMAP_HASH, "xnat_walktest",
			    sizeof(k), sizeof(ifindex), 64, NULL);
	if (fd < 0)
		return fail("device hash map: %s", strerror(errno));
	for (k = 0; k < 40; k++)
		if (bpf_map_update_elem(fd, &k, &ifindex, BPF_ANY)) {
			close(fd);
			return fail("device hash map update: %s", strerror(errno));
		}
	if (!bpf_map_lookup_batch(fd, NULL, token, keys, values, &n_batch,
				  NULL)) {
		close(fd);
		return fail("the device hash map has batch operations now: pick another map");
	}
	n = map_walk(fd, sizeof(k), sizeof(ifindex), record_port, count);
	close(fd);
	EXPECT_EQ(n, 40);
	for (k = 0; k < 40; k++)
		EXPECT_EQ(count[k], 1);
	return 0;
}

/* A map of another layout (a pinned map of another version) is not read
 * into the caller's structs. */
static int test_layout_refused(void)
{
	int fd = filled_map(BPF_MAP_TYPE_HASH);
	long n1, n2;

	if (fd < 0)
		return fail("hash map: %s", strerror(errno));
	n1 = map_walk(fd, sizeof(__u32), sizeof(__u32), record, NULL);
	n2 = map_walk(fd, sizeof(__u64), sizeof(__u64), record, NULL);
	close(fd);
	EXPECT_EQ(n1, -EPROTO);
	EXPECT_EQ(n2, -EPROTO);
	return 0;
}

/* A callback's error ends the walk and is its result. */
static int stop_at_third(const void *key, const void *value, void *ctx)
{
	return ++*(int *)ctx == 3 ? -ECANCELED : 0;
}

static int test_callback_stops(void)
{
	int fd = filled_map(BPF_MAP_TYPE_HASH), calls = 0;
	long n;

	if (fd < 0)
		return fail("hash map: %s", strerror(errno));
	n = map_walk(fd, sizeof(__u32), sizeof(__u64), stop_at_third, &calls);
	close(fd);
	EXPECT_EQ(n, -ECANCELED);
	EXPECT_EQ(calls, 3);
	return 0;
}

static const struct config_test tests[] = {
	TEST(hash_batches),
	TEST(array_batches),
	TEST(key_by_key),
	TEST(layout_refused),
	TEST(callback_stops),
};

int main(void)
{
	return config_tests_main(tests, sizeof(tests) / sizeof(tests[0]));
}
