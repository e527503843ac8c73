/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The NAT event log: a mapping created (slow path) or expired (its timer)
 * becomes a struct natlog_event in the xnat_natlog_rb ring buffer, which
 * `xnat run` writes out as JSON lines. Only while a reader is attached
 * (xnat_natlog_cfg); an event that does not fit is counted per CPU in
 * xnat_natlog_cpu, so a gap in the log is always known. Mappings are made
 * on the slow path only: the fast path never comes here.
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

#endif /* XNAT_NATLOG_H */
