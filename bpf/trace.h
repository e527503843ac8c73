/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `xnat trace` in the data path: at the program's single exit (count() in
 * stats.h) a packet the tracer's filter selects becomes an event in a ring
 * buffer, with the tuple it arrived with, the one it left with, its verdict
 * and reason. With no tracer attached the cost is one array lookup (which
 * the verifier inlines) and one test per packet. With one, the filter runs
 * inline at the exit: a few compares, no call, so a filter that matches
 * nothing costs almost nothing (a BPF-to-BPF call and its return cost
 * about 10 ns per packet on CPUs whose kernel mitigates SRSO with "safe
 * RET", a tenth of the fast path). Only a matching packet calls
 * trace_emit(), kept out of line so the many inlined exits do not each
 * carry a copy of it. Events beyond the tracer's rate, or that do not fit
 * in the ring, are counted per CPU, never dropped silently. Offload mode's
 * timer adds an event when it takes an entry off the fast path, which no
 * packet shows.
 */
#ifndef XNAT_TRACE_H
#define XNAT_TRACE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parsing.h"

#define TRACE_NSEC_PER_SEC 1000000000ULL

static __always_inline int trace_addr_is(const union xnat_addr *a,
					 const struct trace_config *tc)
{
	if (tc->host_family == XNAT_AF_INET)
		return a->v4 == tc->host.v4;
	return a->v6[0] == tc->host.v6[0] && a->v6[1] == tc->host.v6[1] &&
	       a->v6[2] == tc->host.v6[2] && a->v6[3] == tc->host.v6[3];
}

/* The filter, cheapest terms first: a filter that matches nothing should
 * cost a few compares per packet. */
static __always_inline int trace_match(const struct flow_key *k,
				       const struct flow_value *out,
				       const struct trace_config *tc,
				       __u32 reason)
{
	if (!(tc->reasons & (1ULL << (reason & 63))))
		return 0;
	if ((tc->match & XNAT_TRACE_PROTO) && k->proto != tc->proto)
		return 0;
	if (tc->match & XNAT_TRACE_PORT) {
		/* ICMP echo ids sit in the key's ports: not ports. */
		if (k->proto != IPPROTO_TCP && k->proto != IPPROTO_UDP)
			return 0;
		if (k->sport != tc->port && k->dport != tc->port &&
		    !(out && (out->new_sport == tc->port ||
			      out->new_dport == tc->port)))
			return 0;
	}
	if (tc->match & XNAT_TRACE_HOST) {
		if (k->family != tc->host_family)
			return 0;
		if (!trace_addr_is(&k->saddr, tc) &&
		    !trace_addr_is(&k->daddr, tc) &&
		    !(out && (trace_addr_is(&out->new_saddr, tc) ||
			      trace_addr_is(&out->new_daddr, tc))))
			return 0;
	}
	return 1;
}

/* The rewrite of the entry V applied (packet) or held (returned flow). */
static __always_inline void trace_event_rewrite(struct trace_event *e,
						const struct flow_value *v)
{
	e->new_saddr = v->new_saddr;
	e->new_daddr = v->new_daddr;
	e->new_sport = v->new_sport;
	e->new_dport = v->new_dport;
	e->nat = v->nat;
}

/* A packet the filter matched. Returns 0 always: the verdict is the
 * caller's. */
static __noinline int trace_emit(const struct pkt *p,
				 const struct trace_config *tc, __u32 reason,
				 int action)
{
	const struct flow_value *out = p->out;
	struct trace_event *e;
	struct trace_cpu *tcpu;
	__u32 zero = 0;
	__u64 now, window;

	now = bpf_ktime_get_ns();
	/* The tracer is gone without switching off: stay quiet. */
	if (now > tc->lease_end_ns)
		return 0;
	tcpu = bpf_map_lookup_elem(&xnat_trace_cpu, &zero);
	if (!tcpu)
		return 0;
	/* Per CPU: plain adds are exact. */
	tcpu->matched++;
	window = now / TRACE_NSEC_PER_SEC;
	if (window != tcpu->window) {
		tcpu->window = window;
		tcpu->sent = 0;
	}
	if (tcpu->sent >= tc->rate) {
		tcpu->lost++;
		return 0;
	}
	e = bpf_ringbuf_reserve(&xnat_trace_rb, sizeof(*e), 0);
	if (!e) {
		tcpu->lost++;
		return 0;
	}
	tcpu->sent++;
	e->ts_ns = now;
	e->key = p->key;
	if (out) {
		trace_event_rewrite(e, out);
		e->egress_ifindex = out->egress_ifindex;
		e->egress_vid = out->egress_vid;
	} else {
		e->new_saddr = p->key.saddr;
		e->new_daddr = p->key.daddr;
		e->new_sport = p->key.sport;
		e->new_dport = p->key.dport;
		e->egress_ifindex = 0;
		e->egress_vid = 0;
		e->nat = FLOW_NAT_NONE;
	}
	e->action = action;
	e->tcp_flags = p->tcp_flags;
	/* The packet that put its connection in the flow table: the slow
	 * path's NAT decision, or (offload mode) the kernel's. */
	e->new_flow = reason == XNAT_FWD_SLOW || reason == XNAT_FWD_OFFLOAD;
	e->flow_returned = 0;
	e->pad = 0;
	e->reason = reason;
	e->len = p->len;
	e->cpu = bpf_get_smp_processor_id();
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* Called at every exit: the whole cost of an idle trace. */
static __always_inline void trace_packet(const struct pkt *p, __u32 reason,
					 int action)
{
	struct trace_config *tc;
	__u32 zero = 0;

	tc = bpf_map_lookup_elem(&xnat_trace_cfg, &zero);
	if (tc && tc->active && trace_match(&p->key, p->out, tc, reason))
		trace_emit(p, tc, reason, action);
}

/*
 * Offload mode's timer took the entry K, V off the fast path (idle, or
 * `xnat flows delete`): no packet shows it, so an event says so. Shown to
 * a tracer whose filter has no reason term and matches K or V's tuple;
 * rare, and never on a packet's path.
 */
static __always_inline void trace_flow_returned(const struct flow_key *k,
						const struct flow_value *v,
						__u8 why)
{
	struct trace_config *tc;
	struct trace_event *e;
	struct trace_cpu *tcpu;
	__u32 zero = 0;
	__u64 now;

	tc = bpf_map_lookup_elem(&xnat_trace_cfg, &zero);
	if (!tc || !tc->active || tc->reasons != ~0ULL ||
	    !trace_match(k, v, tc, 0))
		return;
	now = bpf_ktime_get_ns();
	if (now > tc->lease_end_ns)
		return;
	tcpu = bpf_map_lookup_elem(&xnat_trace_cpu, &zero);
	if (!tcpu)
		return;
	tcpu->matched++;
	e = bpf_ringbuf_reserve(&xnat_trace_rb, sizeof(*e), 0);
	if (!e) {
		tcpu->lost++;
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = now;
	e->key = *k;
	trace_event_rewrite(e, v);
	e->flow_returned = why;
	e->cpu = bpf_get_smp_processor_id();
	bpf_ringbuf_submit(e, 0);
}

#endif /* XNAT_TRACE_H */
