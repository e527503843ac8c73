// SPDX-License-Identifier: GPL-2.0-only
/*
 * `xnat trace`'s filter parser and event helpers; see trace_filter.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "filter_words.h"
#include "names.h"
#include "reasons.h"
#include "trace_filter.h"

static int proto_parse(const char *s, __u8 *proto)
{
	static const struct { const char *name; __u8 num; } names[] = {
		{ "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP },
		{ "icmp", IPPROTO_ICMP }, { "icmpv6", IPPROTO_ICMPV6 },
	};
	unsigned long n;
	char *end;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i].name)) {
			*proto = names[i].num;
			return 0;
		}
	}
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || n > 255)
		return -EINVAL;
	*proto = n;
	return 0;
}

int trace_filter_parse(int argc, char **argv, struct trace_config *tc,
		       char *err, size_t errlen)
{
	const struct filter_host_port hp = {
		&tc->host, &tc->host_family, &tc->port, &tc->match,
		XNAT_TRACE_HOST, XNAT_TRACE_PORT
	};
	const char *word, *arg;
	__u64 reasons_set = 0;
	int i = 0, rc;

	memset(tc, 0, sizeof(*tc));
	tc->rate = TRACE_DEFAULT_RATE;
	while ((rc = filter_next(argc, argv, &i, &hp, &word, &arg, "reason GLOB",
				 err, errlen)) > 0) {
		if (!strcmp(word, "proto")) {
			if (proto_parse(arg, &tc->proto)) {
				snprintf(err, errlen, "filter: proto '%s' is not "
					 "tcp, udp, icmp, icmpv6 or a number", arg);
				return -EINVAL;
			}
			tc->match |= XNAT_TRACE_PROTO;
		} else if (!strcmp(word, "reason")) {
			__u64 set = 0;

			for (int r = 0; r < XNAT_REASON_MAX; r++)
				if (!fnmatch(arg, reasons[r].name, 0))
					set |= 1ULL << r;
			if (!set) {
				snprintf(err, errlen, "filter: reason '%s' matches "
					 "no counter of `xnat stats`", arg);
				return -EINVAL;
			}
			reasons_set |= set;
		} else {
			snprintf(err, errlen, "filter: unknown word '%s' (host, "
				 "port, proto, reason)", word);
			return -EINVAL;
		}
	}
	if (rc < 0)
		return rc;
	tc->reasons = reasons_set ? reasons_set : ~0ULL;
	return 0;
}

const char *trace_path(const struct trace_event *e)
{
	switch (e->action) {
	case XDP_REDIRECT:
	case XDP_TX:
		/* An ICMP error rides its flow's entry: a table hit. */
		return e->reason == XNAT_FWD_FAST ||
		       e->reason == XNAT_FWD_ICMP_ERROR ? "fast" : "slow";
	case XDP_PASS:
		return "kernel";
	}
	return "dropped";
}

void trace_endpoints(const struct trace_event *e, char src[64], char dst[64],
		     char nsrc[64], char ndst[64])
{
	__u8 f = e->key.family;

	endpoint_name(src, 64, f, &e->key.saddr, e->key.sport);
	endpoint_name(dst, 64, f, &e->key.daddr, e->key.dport);
	endpoint_name(nsrc, 64, f, &e->new_saddr, e->new_sport);
	endpoint_name(ndst, 64, f, &e->new_daddr, e->new_dport);
}

const char *trace_nat_name(__u8 nat)
{
	return nat == FLOW_NAT_SNAT ? "snat" :
	       nat == FLOW_NAT_DNAT ? "dnat" :
	       nat == FLOW_NAT_HAIRPIN ? "hairpin" :
	       nat == FLOW_NAT_INBOUND ? "inbound" :
	       nat == FLOW_NAT_CT ? "ct" : "none";
}
