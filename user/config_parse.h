/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The config parser's own pieces, shared by the files it is split into
 * (config.c: the lines, the key table and dispatch, [router] modes and
 * [offload]; config_read.c: the file's bytes, within bounds; config_nat.c: [nat], [forward] and the kernel's port ranges;
 * config_iface.c: [router] wan and lan, and their lookup in the system).
 * Nothing outside those files includes this: the rest of xnat uses
 * config.h.
 */
#ifndef XNAT_CONFIG_PARSE_H
#define XNAT_CONFIG_PARSE_H

#include <stdio.h>
#include "config.h"

/* Ports below this are privileged: never NAT ports, never ephemeral. */
#define PORT_FIRST_UNPRIVILEGED 1024

/* The bounds of a config file (config_read.c): bytes in one physical
 * line (comment included, newline not), and in the whole file. */
#define CONFIG_LINE_MAX 4096
#define CONFIG_FILE_MAX (1 << 20)

struct parser;
struct key_def;

typedef int (*key_parse_fn)(struct parser *p, const struct key_def *k,
			    const char *value);

/* One word a key may take, and the value it sets. */
struct key_word {
	const char *word;
	int value;
};

struct key_def {
	const char *section;
	const char *name;
	key_parse_fn parse;
	/* parse_u32 and parse_word: the field; parse_u32: its range */
	size_t offset;
	unsigned long min, max;
	/* parse_word: the words (ending with a NULL word), and what the
	 * error message says is expected */
	const struct key_word *words;
	const char *expected;
};

struct parser {
	struct config *cfg;
	struct config_errors *errs;
	FILE *f;
	char line[CONFIG_LINE_MAX + 1]; /* the physical line being read */
	size_t file_bytes;     /* read so far */
	int truncated;         /* stopped at CONFIG_FILE_MAX */
	int lineno;
	int failed;
	int in_bad_section;    /* skip keys until the next good header */
	int ports_bad;         /* [nat] ports did not parse */
	int *key_line;         /* per keys[] entry: where it was set, or 0 */
};

/* "PATH:LINE: msg" into ERR, or "PATH: msg" when no line applies (0). */
void set_err(char *err, const char *path, int line, const char *fmt, ...);
/* The same, appended to ERRS. */
void errs_add(struct config_errors *errs, const char *path, int line,
	      const char *fmt, ...);
/* Record an error and go on; returns -1 for `return perr(...)`. */
int perr(struct parser *p, int line, const char *fmt, ...);

/* The next physical line of P's file into p->line, without its newline,
 * and p->lineno counted: 1, or 0 at the end of the file or of what may be
 * read of it (p->truncated). A line with a NUL byte or over
 * CONFIG_LINE_MAX is reported and handed on empty (config_read.c). */
int config_read_line(struct parser *p);

/* Value readers: 0, or -1 for a value that is not one. */
int parse_port(const char *s, unsigned long min, uint16_t *port);
int parse_ipv4(const char *s, uint32_t *addr);
/* S without its leading and trailing white space (cut in place). */
char *trim(char *s);
/* Each item of the comma-separated list V (at most MAX - 1 characters,
 * else "WHAT list too long") through ITEM, which gets it cut in place and
 * V whole: 0, or -1 once an error was reported. */
int parse_list(struct parser *p, const char *v, size_t max, const char *what,
	       int (*item)(struct parser *p, char *s, const char *v));

/* [nat] and [forward] (config_nat.c). */
int parse_address(struct parser *p, const struct key_def *k, const char *v);
int parse_ports(struct parser *p, const struct key_def *k, const char *v);
int parse_forward(struct parser *p, const char *name, const char *v);
void check_forwards(struct parser *p);

/* [router] wan and lan (config_iface.c). WAN_GIVEN, LAN_GIVEN: the key
 * was there, if wrong (its error was reported). */
int parse_wan(struct parser *p, const struct key_def *k, const char *v);
int parse_lan(struct parser *p, const struct key_def *k, const char *v);
void check_interfaces(struct parser *p, int wan_given, int lan_given);

#endif /* XNAT_CONFIG_PARSE_H */
