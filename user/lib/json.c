// SPDX-License-Identifier: GPL-2.0-only
/* Streaming JSON writer; see json.h. */
#include <inttypes.h>
#include <math.h>
#include "json.h"

void jsonw_init(struct json_writer *w, FILE *f, bool pretty)
{
	w->f = f;
	w->pretty = pretty;
	w->depth = 0;
	w->first[0] = true;
}

static void put_string(struct json_writer *w, const char *s)
{
	fputc('"', w->f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(w->f, "\\%c", c);
		else if (c < 0x20)
			fprintf(w->f, "\\u%04x", c);
		else
			fputc(c, w->f);
	}
	fputc('"', w->f);
}

/* Comma, newline and indent before a member, then its key. */
static void member(struct json_writer *w, const char *key)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
	if (w->pretty && w->depth)
		fprintf(w->f, "\n%*s", w->depth * 2, "");
	if (key) {
		put_string(w, key);
		fputs(w->pretty ? ": " : ":", w->f);
	}
}

static void container_begin(struct json_writer *w, const char *key, char c)
{
	member(w, key);
	fputc(c, w->f);
	if (w->depth < JSON_MAX_DEPTH - 1)
		w->first[++w->depth] = true;
}

static void container_end(struct json_writer *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth)
		w->depth--;
	if (w->pretty && !empty)
		fprintf(w->f, "\n%*s", w->depth * 2, "");
	fputc(c, w->f);
}

void jsonw_obj_begin(struct json_writer *w, const char *key)
{
	container_begin(w, key, '{');
}

void jsonw_obj_end(struct json_writer *w)
{
	container_end(w, '}');
}

void jsonw_arr_begin(struct json_writer *w, const char *key)
{
	container_begin(w, key, '[');
}

void jsonw_arr_end(struct json_writer *w)
{
	container_end(w, ']');
}

void jsonw_str(struct json_writer *w, const char *key, const char *val)
{
	member(w, key);
	put_string(w, val);
}

void jsonw_u64(struct json_writer *w, const char *key, uint64_t val)
{
	member(w, key);
	fprintf(w->f, "%" PRIu64, val);
}

void jsonw_i64(struct json_writer *w, const char *key, int64_t val)
{
	member(w, key);
	fprintf(w->f, "%" PRId64, val);
}

void jsonw_double(struct json_writer *w, const char *key, double val)
{
	member(w, key);
	if (isfinite(val))
		fprintf(w->f, "%.6g", val);
	else
		fputs("null", w->f);
}

void jsonw_bool(struct json_writer *w, const char *key, bool val)
{
	member(w, key);
	fputs(val ? "true" : "false", w->f);
}

void jsonw_null(struct json_writer *w, const char *key)
{
	member(w, key);
	fputs("null", w->f);
}

void jsonw_done(struct json_writer *w)
{
	fputc('\n', w->f);
	w->depth = 0;
	w->first[0] = true;
	fflush(w->f);
}

/* ---- the commands' document on stdout ---------------------------------- */

static struct json_writer out = { .first = { true } };

static struct json_writer *stdout_writer(void)
{
	out.f = stdout;
	return &out;
}

void json_set_pretty(bool pretty) { out.pretty = pretty; }
void json_obj_begin(const char *key) { jsonw_obj_begin(stdout_writer(), key); }
void json_obj_end(void) { jsonw_obj_end(stdout_writer()); }
void json_arr_begin(const char *key) { jsonw_arr_begin(stdout_writer(), key); }
void json_arr_end(void) { jsonw_arr_end(stdout_writer()); }
void json_str(const char *key, const char *val) { jsonw_str(stdout_writer(), key, val); }
void json_u64(const char *key, uint64_t val) { jsonw_u64(stdout_writer(), key, val); }
void json_i64(const char *key, int64_t val) { jsonw_i64(stdout_writer(), key, val); }
void json_bool(const char *key, bool val) { jsonw_bool(stdout_writer(), key, val); }
void json_done(void) { jsonw_done(stdout_writer()); }
