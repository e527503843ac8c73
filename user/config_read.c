// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config file's bytes, one physical line at a time, within bounds: a
 * line of at most CONFIG_LINE_MAX bytes, a file of at most CONFIG_FILE_MAX,
 * no NUL byte. What is over a bound is never stored, so a huge or endless
 * file (a 50 MB line, /dev/zero) costs neither memory nor a misreading:
 * getline() would allocate the whole line and report running out of memory
 * as the end of the file, and a NUL would cut a value short without a word
 * ("lan = lan0\0junk" read as lan0). See config_parse.h.
 */
#include <stdio.h>
#include <string.h>

#include "config_parse.h"

int config_read_line(struct parser *p)
{
	size_t len = 0, nul = 0;
	int c, any = 0, too_long = 0;

	if (p->truncated)
		return 0;
	while ((c = getc(p->f)) != EOF) {
		any = 1;
		if (++p->file_bytes > CONFIG_FILE_MAX) {
			perr(p, p->lineno + 1,
			     "file too large: more than %d bytes (1 MiB), not read further",
			     CONFIG_FILE_MAX);
			p->truncated = 1;
			return 0;
		}
		if (c == '\n')
			break;
		if (c == '\0' && !nul)
			nul = len + 1;
		if (len < CONFIG_LINE_MAX)
			p->line[len] = c;
		else
			too_long = 1;
		len++;
	}
	if (!any)
		return 0;
	p->lineno++;
	p->line[len < CONFIG_LINE_MAX ? len : CONFIG_LINE_MAX] = '\0';
	/* A NUL ends the line for the rest of the parse, as C strings
	 * would: its key is still known to be given (no "missing"). */
	if (nul)
		perr(p, p->lineno,
		     "NUL byte at column %zu: a config is text", nul);
	if (too_long) {
		perr(p, p->lineno,
		     "line too long (%zu bytes, at most %d with its comment)",
		     len, CONFIG_LINE_MAX);
		p->line[0] = '\0';
	}
	return 1;
}
