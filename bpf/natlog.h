/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The NAT event log: a mapping created (slow path) or expired (its timer)
 * becomes a struct natlog_event in the xnat_natlog_rb ring buffer, which
 * `xnat run` writes out as JSON lines. Only while a reader is attached
 * (xnat_natlog_cfg); an event that does not fit is counted per CPU in
 * xnat_natlog_cpu, so a gap in the log is always known. Mappings are made
 * on the slow path only: the fast path never comes here. Offload mode's
 * flows write a struct flowlog_event when an entry moves onto the fast
 * path or off it (bpf/offload.h): rare moves, never a packet in between.
 */
#ifndef XNAT_NATLOG_H
#define XNAT_NATLOG_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"

static __always_inline void natlog_emit(__u8 type,
					const struct nat_endpoint *ep,
					__be32 ext_addr, __be16 ext_port,
					__be32 remote_addr, __be16 remote_port)
{
	struct natlog_config *c;
	struct natlog_event *e;
	__u32 zero = 0;
	__u64 *lost;

	c = bpf_map_lookup_elem(&xnat_natlog_cfg, &zero);
	if (!c || !c->active)
		return;
	e = bpf_ringbuf_reserve(&xnat_natlog_rb, sizeof(*e), 0);
	if (!e) {
		lost = bpf_map_lookup_elem(&xnat_natlog_cpu, &zero);
		if (lost)
			*lost += 1; /* per CPU: exact without atomics */
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->inside_addr = ep->addr;
	e->inside_port = ep->port;
	e->ext_addr = ext_addr;
	e->ext_port = ext_port;
	e->remote_addr = remote_addr;
	e->remote_port = remote_port;
	e->proto = ep->proto;
	e->type = type;
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
}

/* The ring was full: count it, per CPU (exact without atomics). */
static __always_inline void natlog_lost(void)
{
	__u32 zero = 0;
	__u64 *lost = bpf_map_lookup_elem(&xnat_natlog_cpu, &zero);

	if (lost)
		*lost += 1;
}

/* Offload mode: the entry K, V moved onto the fast path or off it. */
static __always_inline void flowlog_emit(__u8 type, __u8 why,
					 const struct flow_key *k,
					 const struct flow_value *v)
{
	struct flowlog_event *e;
	struct natlog_config *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&xnat_natlog_cfg, &zero);
	if (!c || !c->active || !c->flows)
		return;
	e = bpf_ringbuf_reserve(&xnat_natlog_rb, sizeof(*e), 0);
	if (!e) {
		natlog_lost();
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->key = *k;
	e->new_saddr = v->new_saddr;
	e->new_daddr = v->new_daddr;
	e->new_sport = v->new_sport;
	e->new_dport = v->new_dport;
	e->type = type;
	e->why = why;
	e->dir = v->dir;
	e->pad = 0;
	e->pad2 = 0;
	e->packets = v->packets;
	e->bytes = v->bytes;
	e->since_ns = v->created_ns;
	bpf_ringbuf_submit(e, 0);
}

#endif /* XNAT_NATLOG_H */
