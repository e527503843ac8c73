/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A minimal streaming JSON writer: objects, arrays, strings, integers,
 * doubles, booleans and null, with commas, escaping and (pretty) indenting
 * handled here so that callers only say what they print. A struct
 * json_writer writes to any FILE (the bench's results file); the json_*
 * functions without a writer are the commands' --json document on stdout
 * (-p/--pretty indents it).
 */
#ifndef XNAT_LIB_JSON_H
#define XNAT_LIB_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json_writer {
	FILE *f;
	bool pretty;
	int depth;
	bool first[JSON_MAX_DEPTH];
};

void jsonw_init(struct json_writer *w, FILE *f, bool pretty);
/* KEY is NULL for a member of an array, and for the top level. */
void jsonw_obj_begin(struct json_writer *w, const char *key);
void jsonw_obj_end(struct json_writer *w);
void jsonw_arr_begin(struct json_writer *w, const char *key);
void jsonw_arr_end(struct json_writer *w);
void jsonw_str(struct json_writer *w, const char *key, const char *val);
void jsonw_u64(struct json_writer *w, const char *key, uint64_t val);
void jsonw_i64(struct json_writer *w, const char *key, int64_t val);
/* "%.6g"; NaN and infinities (no JSON number) as null. */
void jsonw_double(struct json_writer *w, const char *key, double val);
void jsonw_bool(struct json_writer *w, const char *key, bool val);
void jsonw_null(struct json_writer *w, const char *key);
/* Ends the document with a newline and flushes; W can start another. */
void jsonw_done(struct json_writer *w);

/* The commands' document on stdout. */
void json_set_pretty(bool pretty);
void json_obj_begin(const char *key);
void json_obj_end(void);
void json_arr_begin(const char *key);
void json_arr_end(void);
void json_str(const char *key, const char *val);
void json_u64(const char *key, uint64_t val);
void json_i64(const char *key, int64_t val);
void json_bool(const char *key, bool val);
void json_done(void);

#endif /* XNAT_LIB_JSON_H */
