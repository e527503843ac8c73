/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flow table as connections, for `xnat flows`: both directions of a
 * connection paired (the ORIG entry and the REPLY entry its rewrite
 * points to), filtered by words like `xnat trace`'s (host, port, proto,
 * state) and sorted (bytes, packets, age, idle). Kept apart from the
 * command so unit tests can run it on a table the data path filled.
 */
#ifndef XNAT_FLOW_VIEW_H
#define XNAT_FLOW_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "../bpf/xnat_common.h"

/* One connection; either entry may be missing while the data path creates
 * or deletes it (then has_orig or has_reply is 0). */
struct conn {
	struct flow_key okey, rkey;
	struct flow_value ov, rv;
	bool has_orig, has_reply;
};

#define FLOW_MATCH_HOST  (1U << 0)
#define FLOW_MATCH_PORT  (1U << 1)
#define FLOW_MATCH_PROTO (1U << 2)
#define FLOW_MATCH_STATE (1U << 3)

struct flow_filter {
	__u32 match;             /* FLOW_MATCH_* terms, ANDed */
	union xnat_addr host;    /* either address, either direction, before
				    or after NAT */
	__u8 family;
	__u8 proto;
	__be16 port;             /* TCP/UDP, either port, before or after */
	const char *state;       /* a name of conn_state() */
};

enum flow_sort {
	FLOW_SORT_NONE = 0,      /* by ORIG key, then lone REPLY entries */
	FLOW_SORT_BYTES,         /* both directions, largest first */
	FLOW_SORT_PACKETS,
	FLOW_SORT_AGE,           /* oldest first */
	FLOW_SORT_IDLE,          /* longest idle first */
};

/* Words host ADDR, port N, proto P, state S (optional "and" between).
 * 0, or -EINVAL with one line in ERR. */
int flow_filter_parse(int argc, char **argv, struct flow_filter *f, char *err,
		      size_t errlen);
int flow_sort_parse(const char *s, enum flow_sort *out);

/* Every connection of the flow table FD, in *OUT (caller frees). 0 or
 * -errno. */
int conns_read(int fd, struct conn **out, size_t *n);
bool conn_match(const struct conn *c, const struct flow_filter *f);
void conns_sort(struct conn *c, size_t n, enum flow_sort by, __u64 now_ns);

/* The entry that describes the connection as it was opened: ORIG when
 * present. */
const struct flow_key *conn_key(const struct conn *c);
const struct flow_value *conn_value(const struct conn *c);
/* "syn_sent", "established", "closing", "closed" for TCP, "-" otherwise,
 * "expired" once `xnat flows delete` marked it. */
const char *conn_state(const struct conn *c);
__u64 conn_packets(const struct conn *c);
__u64 conn_bytes(const struct conn *c);
__u64 conn_age_ns(const struct conn *c, __u64 now_ns);
__u64 conn_idle_ns(const struct conn *c, __u64 now_ns);

#endif /* XNAT_FLOW_VIEW_H */
