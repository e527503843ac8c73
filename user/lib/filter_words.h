/* SPDX-License-Identifier: GPL-2.0-only */
/* The filter words that several commands share (flows, trace): "host ADDR"
 * and "port N" read the same way, with the same messages, wherever a
 * filter takes them. */
#ifndef XNAT_LIB_FILTER_WORDS_H
#define XNAT_LIB_FILTER_WORDS_H

#include <stddef.h>
#include "xnat_common.h"

/* An IPv4 or IPv6 address into *HOST and *FAMILY (XNAT_AF_*): 0, or
 * -EINVAL with the reason in ERR. */
int filter_host_parse(const char *arg, union xnat_addr *host, __u8 *family,
		      char *err, size_t errlen);
/* A port in [1, 65535] into *PORT (network order): 0, or -EINVAL with the
 * reason in ERR. */
int filter_port_parse(const char *arg, __be16 *port, char *err, size_t errlen);

/* Where a filter keeps the host and port words: the values, and the bits
 * of its MATCH mask that say they were given. */
struct filter_host_port {
	union xnat_addr *host;
	__u8 *family;
	__be16 *port;
	__u32 *match;
	__u32 host_bit, port_bit;
};

/* "host ADDR" and "port N" into HP: 1 when WORD was one of them, 0 when
 * neither (nothing read), or -EINVAL with the reason in ERR. */
int filter_host_port(const char *word, const char *arg,
		     const struct filter_host_port *hp, char *err,
		     size_t errlen);

/* The next "WORD VALUE" of a filter in ARGV from *I on ("and" between
 * them is skipped), *I moved past it, that is not host or port: those are
 * read into HP on the way (filter_host_port). 1 with *WORD and *ARG set,
 * 0 at the end, or -EINVAL with the reason in ERR (OWN names the
 * command's own words in the message of a word without a value, e.g.
 * "state S"). */
int filter_next(int argc, char **argv, int *i,
		const struct filter_host_port *hp, const char **word,
		const char **arg, const char *own, char *err, size_t errlen);

#endif /* XNAT_LIB_FILTER_WORDS_H */
