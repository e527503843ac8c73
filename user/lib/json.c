// SPDX-License-Identifier: GPL-2.0-only
/* Streaming JSON writer; see json.h. */
#include <inttypes.h>
#include <stdio.h>
#include "json.h"

#define JSON_MAX_DEPTH 16

static bool first[JSON_MAX_DEPTH] = { true };
static int depth;
static bool pretty;

void json_set_pretty(bool p)
{
	pretty = p;
}

static void put_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Comma, newline and indent before a member, then its key. */
static void member(const char *key)
{
	if (!first[depth])
		putchar(',');
	first[depth] = false;
	if (pretty && depth)
		printf("\n%*s", depth * 2, "");
	if (key) {
		put_string(key);
		printf(pretty ? ": " : ":");
	}
}

static void open(const char *key, char c)
{
	member(key);
	putchar(c);
	if (depth < JSON_MAX_DEPTH - 1)
		first[++depth] = true;
}

static void close_(char c)
{
	bool empty = first[depth];

	if (depth)
		depth--;
	if (pretty && !empty)
		printf("\n%*s", depth * 2, "");
	putchar(c);
}

void json_obj_begin(const char *key) { open(key, '{'); }
void json_obj_end(void) { close_('}'); }
void json_arr_begin(const char *key) { open(key, '['); }
void json_arr_end(void) { close_(']'); }

void json_str(const char *key, const char *val)
{
	member(key);
	put_string(val);
}

void json_u64(const char *key, uint64_t val)
{
	member(key);
	printf("%" PRIu64, val);
}

void json_i64(const char *key, int64_t val)
{
	member(key);
	printf("%" PRId64, val);
}

void json_bool(const char *key, bool val)
{
	member(key);
	printf(val ? "true" : "false");
}

void json_done(void)
{
	putchar('\n');
	depth = 0;
	first[0] = true;
	fflush(stdout);
}
