/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A minimal streaming JSON writer for --json output: objects, arrays,
 * strings, numbers, booleans, with commas and escaping handled here so the
 * commands only say what they print. -p/--pretty indents.
 */
#ifndef XNAT_JSON_H
#define XNAT_JSON_H

#include <stdbool.h>
#include <stdint.h>

void json_set_pretty(bool pretty);
void json_obj_begin(const char *key);   /* key NULL inside arrays/top */
void json_obj_end(void);
void json_arr_begin(const char *key);
void json_arr_end(void);
void json_str(const char *key, const char *val);
void json_u64(const char *key, uint64_t val);
void json_i64(const char *key, int64_t val);
void json_bool(const char *key, bool val);
/* Ends the document with a newline. */
void json_done(void);

#endif /* XNAT_JSON_H */
