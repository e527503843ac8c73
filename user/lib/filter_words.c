// SPDX-License-Identifier: GPL-2.0-only
/* Filter words shared by the commands; see filter_words.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter_words.h"

int filter_host_parse(const char *arg, union xnat_addr *host, __u8 *family,
		      char *err, size_t errlen)
{
	if (inet_pton(AF_INET, arg, &host->v4) == 1) {
		*family = XNAT_AF_INET;
	} else if (inet_pton(AF_INET6, arg, host->v6) == 1) {
		*family = XNAT_AF_INET6;
	} else {
		snprintf(err, errlen, "filter: host '%s' is not an IPv4 or "
			 "IPv6 address", arg);
		return -EINVAL;
	}
	return 0;
}

int filter_port_parse(const char *arg, __be16 *port, char *err, size_t errlen)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || n < 1 || n > 65535) {
		snprintf(err, errlen, "filter: port '%s' is not a number in "
			 "[1, 65535]", arg);
		return -EINVAL;
	}
	*port = htons(n);
	return 0;
}

int filter_host_port(const char *word, const char *arg,
		     const struct filter_host_port *hp, char *err,
		     size_t errlen)
{
	if (!strcmp(word, "host")) {
		if (filter_host_parse(arg, hp->host, hp->family, err, errlen))
			return -EINVAL;
		*hp->match |= hp->host_bit;
		return 1;
	}
	if (!strcmp(word, "port")) {
		if (filter_port_parse(arg, hp->port, err, errlen))
			return -EINVAL;
		*hp->match |= hp->port_bit;
		return 1;
	}
	return 0;
}

int filter_next(int argc, char **argv, int *i,
		const struct filter_host_port *hp, const char **word,
		const char **arg, const char *own, char *err, size_t errlen)
{
	int rc;

	do {
		while (*i < argc && !strcmp(argv[*i], "and"))
			(*i)++;
		if (*i >= argc)
			return 0;
		*word = argv[(*i)++];
		if (*i >= argc) {
			snprintf(err, errlen, "filter: '%s' needs a value "
				 "(host ADDR, port N, proto P, %s)", *word, own);
			return -EINVAL;
		}
		*arg = argv[(*i)++];
		rc = filter_host_port(*word, *arg, hp, err, errlen);
	} while (rc > 0);
	return rc < 0 ? rc : 1;
}
