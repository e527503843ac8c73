// SPDX-License-Identifier: GPL-2.0-only
/* The flow table as connections; see flow_view.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "filter_words.h"
#include "grow.h"
#include "map_walk.h"
#include "flow_view.h"

static const char *const tcp_states[] = { "syn_sent", "established",
					  "closing", "closed" };

int flow_filter_parse(int argc, char **argv, struct flow_filter *f, char *err,
		      size_t errlen)
{
	const struct filter_host_port hp = {
		&f->host, &f->family, &f->port, &f->match, FLOW_MATCH_HOST,
		FLOW_MATCH_PORT
	};
	const char *word, *arg;
	int i = 0, rc;

	memset(f, 0, sizeof(*f));
	while ((rc = filter_next(argc, argv, &i, &hp, &word, &arg, "state S",
				 err, errlen)) > 0) {
		if (!strcmp(word, "proto")) {
			if (!strcmp(arg, "tcp"))
				f->proto = IPPROTO_TCP;
			else if (!strcmp(arg, "udp"))
				f->proto = IPPROTO_UDP;
			else if (!strcmp(arg, "icmp"))
				f->proto = IPPROTO_ICMP;
			else if (!strcmp(arg, "icmpv6"))
				f->proto = IPPROTO_ICMPV6;
			else {
				snprintf(err, errlen, "filter: proto '%s' is not "
					 "tcp, udp, icmp or icmpv6", arg);
				return -EINVAL;
			}
			f->match |= FLOW_MATCH_PROTO;
		} else if (!strcmp(word, "state")) {
			bool known = !strcmp(arg, "expired");

			for (int s = 0; s < 4; s++)
				known |= !strcmp(arg, tcp_states[s]);
			if (!known) {
				snprintf(err, errlen, "filter: state '%s' is not "
					 "syn_sent, established, closing, closed "
					 "or expired", arg);
				return -EINVAL;
			}
			f->state = arg;
			f->match |= FLOW_MATCH_STATE;
		} else {
			snprintf(err, errlen, "filter: unknown word '%s' (host, "
				 "port, proto, state)", word);
			return -EINVAL;
		}
	}
	return rc;
}

int flow_sort_parse(const char *s, enum flow_sort *out)
{
	static const char *const names[] = { "", "bytes", "packets", "age",
					     "idle" };

	for (int i = 1; i < 5; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

const struct flow_key *conn_key(const struct conn *c)
{
	return c->has_orig ? &c->okey : &c->rkey;
}

const struct flow_value *conn_value(const struct conn *c)
{
	return c->has_orig ? &c->ov : &c->rv;
}

const char *conn_state(const struct conn *c)
{
	const struct flow_value *o = c->has_orig ? &c->ov : NULL;
	const struct flow_value *r = c->has_reply ? &c->rv : NULL;
	__u8 st;

	if ((o && o->expired) || (r && r->expired))
		return "expired";
	if (conn_key(c)->proto != IPPROTO_TCP)
		return "-";
	/* Offloaded: conntrack holds the state. Only established TCP is
	 * offloaded, and it leaves the table on its first FIN or RST. */
	if ((o ? o : r)->nat == FLOW_NAT_CT)
		return tcp_states[FLOW_TCP_ESTABLISHED];
	st = flow_tcp_state(o, r);
	return st < 4 ? tcp_states[st] : "?";
}

__u64 conn_packets(const struct conn *c)
{
	return (c->has_orig ? c->ov.packets : 0) +
	       (c->has_reply ? c->rv.packets : 0);
}

__u64 conn_bytes(const struct conn *c)
{
	return (c->has_orig ? c->ov.bytes : 0) + (c->has_reply ? c->rv.bytes : 0);
}

__u64 conn_age_ns(const struct conn *c, __u64 now)
{
	__u64 t = conn_value(c)->created_ns;

	return now > t ? now - t : 0;
}

__u64 conn_idle_ns(const struct conn *c, __u64 now)
{
	__u64 last = c->has_orig ? c->ov.last_seen_ns : 0;

	if (c->has_reply && c->rv.last_seen_ns > last)
		last = c->rv.last_seen_ns;
	return now > last ? now - last : 0;
}

static bool addr_is(const union xnat_addr *a, const struct flow_filter *f)
{
	return f->family == XNAT_AF_INET ? a->v4 == f->host.v4 :
					   !memcmp(a->v6, f->host.v6, 16);
}

/* One entry against the host and port terms (its key and its rewrite). */
static bool entry_has_host(const struct flow_key *k, const struct flow_value *v,
			   const struct flow_filter *f)
{
	return k->family == f->family &&
	       (addr_is(&k->saddr, f) || addr_is(&k->daddr, f) ||
		addr_is(&v->new_saddr, f) || addr_is(&v->new_daddr, f));
}

static bool entry_has_port(const struct flow_key *k, const struct flow_value *v,
			   const struct flow_filter *f)
{
	return (k->proto == IPPROTO_TCP || k->proto == IPPROTO_UDP) &&
	       (k->sport == f->port || k->dport == f->port ||
		v->new_sport == f->port || v->new_dport == f->port);
}

bool conn_match(const struct conn *c, const struct flow_filter *f)
{
	if ((f->match & FLOW_MATCH_PROTO) && conn_key(c)->proto != f->proto)
		return false;
	if ((f->match & FLOW_MATCH_HOST) &&
	    !(c->has_orig && entry_has_host(&c->okey, &c->ov, f)) &&
	    !(c->has_reply && entry_has_host(&c->rkey, &c->rv, f)))
		return false;
	if ((f->match & FLOW_MATCH_PORT) &&
	    !(c->has_orig && entry_has_port(&c->okey, &c->ov, f)) &&
	    !(c->has_reply && entry_has_port(&c->rkey, &c->rv, f)))
		return false;
	if ((f->match & FLOW_MATCH_STATE) && strcmp(conn_state(c), f->state))
		return false;
	return true;
}

/* One REPLY (or otherwise not ORIG) entry, held until it is paired. */
struct loose_entry {
	struct flow_key key;
	struct flow_value v;
};

struct conns_walk {
	struct conn *conns;
	size_t nconns, cap_conns;
	struct loose_entry *loose;
	size_t nloose, cap_loose;
};

/* A walk's entry: an ORIG entry opens a connection, the others wait. */
static int conns_take(const void *key, const void *value, void *ctx)
{
	const struct flow_value *v = value;
	struct conns_walk *w = ctx;
	struct conn *c;

	if (v->dir != FLOW_DIR_ORIG) {
		if (grow_for(&w->loose, sizeof(*w->loose), w->nloose,
			     &w->cap_loose, 256))
			return -ENOMEM;
		memcpy(&w->loose[w->nloose].key, key, sizeof(struct flow_key));
		w->loose[w->nloose++].v = *v;
		return 0;
	}
	if (grow_for(&w->conns, sizeof(*w->conns), w->nconns, &w->cap_conns,
		     256))
		return -ENOMEM;
	c = &w->conns[w->nconns++];
	memset(c, 0, sizeof(*c));
	memcpy(&c->okey, key, sizeof(c->okey));
	c->ov = *v;
	c->has_orig = true;
	/* Each direction's rewrite leads to the other's key. */
	flow_reply_key(&c->okey, &c->ov, &c->rkey);
	return 0;
}

/* struct flow_key has no padding (its _Static_assert): bytes compare. */
static int cmp_loose(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct flow_key));
}

static int cmp_conn_okey(const void *a, const void *b)
{
	return memcmp(&((const struct conn *)a)->okey,
		      &((const struct conn *)b)->okey, sizeof(struct flow_key));
}

/* The ORIG entry of key K among the first N connections, sorted. */
static const struct conn *orig_find(const struct conn *conns, size_t n,
				    const struct flow_key *k)
{
	struct conn probe = { .okey = *k };

	return bsearch(&probe, conns, n, sizeof(*conns), cmp_conn_okey);
}

/*
 * One walk of the table in batches (map_walk.h), then the pairing in
 * memory: two system calls an entry before, four million for a million
 * connections. A REPLY entry belongs to the ORIG entry its own rewrite
 * points to; one whose ORIG entry is gone (the data path deleting the
 * connection) is listed alone.
 */
int conns_read(int fd, struct conn **out, size_t *n)
{
	struct conns_walk w = {};
	size_t orig, i;
	long got;

	got = map_walk(fd, sizeof(struct flow_key), sizeof(struct flow_value),
		       conns_take, &w);
	if (got < 0)
		goto fail;
	qsort(w.loose, w.nloose, sizeof(*w.loose), cmp_loose);
	qsort(w.conns, w.nconns, sizeof(*w.conns), cmp_conn_okey);
	orig = w.nconns;
	for (i = 0; i < orig; i++) {
		struct conn *c = &w.conns[i];
		const struct loose_entry *r = bsearch(&c->rkey, w.loose, w.nloose,
						      sizeof(*w.loose), cmp_loose);
		const struct conn *o = r ? NULL : orig_find(w.conns, orig,
							    &c->rkey);

		c->has_reply = r || o;
		if (r)
			c->rv = r->v;
		else if (o)
			c->rv = o->ov;
	}
	for (i = 0; i < w.nloose; i++) {
		struct flow_key other;
		struct conn *c;

		flow_reply_key(&w.loose[i].key, &w.loose[i].v, &other);
		/* Listed with its ORIG entry (the first ORIG connections:
		 * those appended here have none). */
		if (orig_find(w.conns, orig, &other))
			continue;
		got = grow_for(&w.conns, sizeof(*w.conns), w.nconns,
			       &w.cap_conns, 256);
		if (got)
			goto fail;
		c = &w.conns[w.nconns++];
		memset(c, 0, sizeof(*c));
		c->rkey = w.loose[i].key;
		c->rv = w.loose[i].v;
		c->has_reply = true;
	}
	free(w.loose);
	*out = w.conns;
	*n = w.nconns;
	return 0;
fail:
	free(w.loose);
	free(w.conns);
	return (int)got;
}

static enum flow_sort sort_by;
static __u64 sort_now;

static int cmp_u64_desc(__u64 a, __u64 b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_conn(const void *pa, const void *pb)
{
	const struct conn *a = pa, *b = pb;

	switch (sort_by) {
	case FLOW_SORT_BYTES:
		return cmp_u64_desc(conn_bytes(a), conn_bytes(b));
	case FLOW_SORT_PACKETS:
		return cmp_u64_desc(conn_packets(a), conn_packets(b));
	case FLOW_SORT_AGE:
		return cmp_u64_desc(conn_age_ns(a, sort_now),
				    conn_age_ns(b, sort_now));
	case FLOW_SORT_IDLE:
		return cmp_u64_desc(conn_idle_ns(a, sort_now),
				    conn_idle_ns(b, sort_now));
	default:
		return 0;
	}
}

void conns_sort(struct conn *c, size_t n, enum flow_sort by, __u64 now_ns)
{
	if (by == FLOW_SORT_NONE || n < 2)
		return;
	sort_by = by;
	sort_now = now_ns;
	qsort(c, n, sizeof(*c), cmp_conn);
}
