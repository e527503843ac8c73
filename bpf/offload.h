/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Offload mode: the kernel's conntrack and nftables decide, XDP carries
 * what they accepted, the way nf_flow_table does. A packet whose flow is in
 * the table is forwarded with the cached rewrite, as in xdp mode. On a miss
 * the kernel's conntrack is asked (ct.h): a confirmed TCP or UDP entry,
 * established for TCP, whose packets of this direction the ruleset let
 * through (xnat's nftables chain sets one ct mark bit per direction after
 * every other decision) becomes a flow entry with the kernel's own
 * translation and this packet goes out on the fast path. Everything else
 * goes up (XDP_PASS) and the kernel handles it as if XDP were not there.
 *
 * The mark bit of a direction is consumed when its entry is installed, so
 * once a flow leaves the fast path (FIN/RST, conntrack entry gone, a
 * ruleset change) the next packet goes through the kernel's ruleset again,
 * which marks it again only if it still accepts it.
 *
 * Each direction is its own entry with its own expiry timer: a UDP stream
 * one way is carried without a reply. No xnat NAT mapping or port is
 * involved; the kernel owns the connection.
 */
#ifndef XNAT_OFFLOAD_H
#define XNAT_OFFLOAD_H

#include "maps.h"
#include "parsing.h"
#include "fib.h"
#include "flow.h"
#include "slowpath.h"
#include "ct.h"
#include "ct_seen.h"
#include "offload_filter.h"
#include "tcp_track.h"
#include "natlog.h"
#include "trace.h"

/*
 * The conntrack timeout offload mode keeps the entry at: the kernel's for
 * the only states carried (TCP established, UDP, and for DNS the
 * ruleset's udp_dns policy), set from [timeouts]. V is KEY's entry, with
 * its direction and translation: DNS is judged on the connection's
 * original ports, as the ruleset does (before DNAT) and xdp mode on a
 * flow's original key (flow_is_dns). A reply's translated ports are the
 * original ones, reversed.
 */
static __always_inline __u32 offload_timeout(const struct xnat_config *cfg,
					     const struct flow_key *key,
					     const struct flow_value *v)
{
	__be16 dns = bpf_htons(XNAT_DNS_PORT);

	if (key->proto == IPPROTO_TCP)
		return cfg->timeout_tcp_est;
	if (cfg->timeout_udp_dns &&
	    (v->dir == CT_DIR_ORIGINAL ? key->sport == dns || key->dport == dns :
					 v->new_sport == dns || v->new_dport == dns))
		return cfg->timeout_udp_dns;
	return cfg->timeout_udp;
}

/* The clock of flow_value.ct_refresh: a shift, not a division, on
 * every packet of an offloaded flow. */
static __always_inline __u32 refresh_clock(__u64 ns)
{
	return ns >> XNAT_CT_REFRESH_SHIFT;
}

/*
 * Timer of an offloaded entry: remove it once idle for its timeout. The
 * conntrack entry, whose timeout this entry last reset, expires no later,
 * so the kernel never holds a connection XDP still believes in for long;
 * a packet in between finds the conntrack entry gone on its refresh.
 */
static int offload_expire(void *map, struct flow_key *key,
			  struct flow_value *v)
{
	struct xnat_config *cfg;
	__u64 now, timeout;
	__u8 why;

	cfg = config_get();
	if (!cfg)
		return 0;
	timeout = offload_timeout(cfg, key, v) * NSEC_PER_SEC;
	now = bpf_ktime_get_ns();
	/* expired: `xnat flows delete` or `xnat run` (bpf/flow_ctl.bpf.c)
	 * kicked us; it holds why (1: deleted, from an older xnat). */
	if (!v->expired && now < v->last_seen_ns + timeout) {
		__u64 next = v->last_seen_ns + timeout - now;

		bpf_timer_start(&v->timer, next < FLOW_RECHECK_NS ? next :
					    FLOW_RECHECK_NS, 0);
		return 0;
	}
	/* ct_refresh is 16 bits: an entry idle for hours must not look
	 * freshly refreshed once it wraps. Never further behind than
	 * XNAT_CT_REFRESH_MAX, which offload_refresh takes as due. */
	if ((__u16)(refresh_clock(now) - v->ct_refresh) > XNAT_CT_REFRESH_MAX)
		v->ct_refresh = refresh_clock(now) - XNAT_CT_REFRESH_MAX;
	why = !v->expired ? FLOWLOG_WHY_IDLE :
	      v->expired > 1 && v->expired < FLOWLOG_WHY_MAX ? v->expired :
							      FLOWLOG_WHY_DELETED;
	flowlog_emit(NATLOG_UNLOADED, why, key, v);
	trace_flow_returned(key, v, why);
	bpf_map_delete_elem(&xnat_flows, key);
	return 0;
}

/* Take the connection off the fast path: this entry and the other
 * direction's, if it is there. WHY goes to the event log. */
static __always_inline void offload_remove(const struct flow_key *key,
					   const struct flow_value *v,
					   __u8 why)
{
	struct flow_value *rv;
	struct flow_key rkey;

	flow_reply_key(key, v, &rkey);
	rv = bpf_map_lookup_elem(&xnat_flows, &rkey);
	if (rv) {
		flowlog_emit(NATLOG_UNLOADED, why, &rkey, rv);
		bpf_map_delete_elem(&xnat_flows, &rkey);
	}
	flowlog_emit(NATLOG_UNLOADED, why, key, v);
	bpf_map_delete_elem(&xnat_flows, key);
}

static __always_inline int addr_eq(const union xnat_addr *a,
				   const union xnat_addr *b)
{
	return a->v6[0] == b->v6[0] && a->v6[1] == b->v6[1] &&
	       a->v6[2] == b->v6[2] && a->v6[3] == b->v6[3];
}

/*
 * Is V's conntrack entry still there and still the one V was built from?
 * If so its timeout is reset to TIMEOUT seconds: 0. Else -1. A function of
 * its own, run about once per half timeout: its copy of the translation
 * would otherwise sit on the main program's stack, which is full.
 */
static __noinline int offload_refresh_ct(struct xdp_md *ctx, struct pkt *p,
					 struct flow_value *v, __u32 timeout)
{
	struct flow_value t;
	struct nf_conn *ct;
	__u8 dir;
	int ok;

	ct = ct_lookup(ctx, p, &dir);
	if (!ct)
		return -1;
	ct_translation(ct, dir, &t);
	ok = !ct_offloadable(ct, p->key.proto) && dir == v->dir &&
	     addr_eq(&t.new_saddr, &v->new_saddr) &&
	     addr_eq(&t.new_daddr, &v->new_daddr) &&
	     t.new_sport == v->new_sport && t.new_dport == v->new_dport;
	if (ok)
		bpf_ct_change_timeout(ct, timeout * 1000);
	bpf_ct_release(ct);
	return ok ? 0 : -1;
}

/*
 * Keep the kernel's entry alive while XDP carries its packets: reset its
 * timeout once less than half of it is left (or XNAT_CT_REFRESH_MAX, if
 * less), which also finds out whether the entry is still there and still
 * the one the flow was built from. 0 when the flow may stay, else -1:
 * the caller takes it off.
 */
static __always_inline int offload_refresh(struct xdp_md *ctx, struct pkt *p,
					   struct flow_value *v,
					   const struct xnat_config *cfg)
{
	__u32 timeout = offload_timeout(cfg, &p->key, v);
	/* flow_touch() has just read the clock into last_seen_ns (always,
	 * for FLOW_NAT_CT entries): no second helper call per packet. */
	__u16 now = refresh_clock(v->last_seen_ns);
	/* Half the timeout in the clock's units: multiply and shift. */
	__u32 due = refresh_clock(timeout * (NSEC_PER_SEC / 2));

	if ((__u16)(now - v->ct_refresh) <
	    (due < XNAT_CT_REFRESH_MAX ? due : XNAT_CT_REFRESH_MAX))
		return 0;
	if (offload_refresh_ct(ctx, p, v, timeout))
		return -1;
	v->ct_refresh = now;
	return 0;
}

/*
 * Start tracking the sender of an offloaded TCP direction (tcp_track.h)
 * from the packet P being offloaded and from conntrack's entry CT, which
 * saw every packet of DIR until now: the window scale its SYN set, and
 * its end if beyond this packet's (a retransmission). The entry can judge
 * a FIN or RST from its first packet on. A function of its own, as the
 * main program's stack is full; once per offloaded direction.
 */
static __noinline void offload_track_init(const struct pkt *p,
					  struct flow_value *ov,
					  struct nf_conn *ct, __u8 dir)
{
	struct tcphdr *th = p->l4;
	struct ip_ct_tcp_state___xnat *cs;
	__u32 end, far;
	__u8 scale;

	if (p->key.proto != IPPROTO_TCP || !th || (void *)(th + 1) > p->data_end)
		return;
	cs = ct_tcp_sender(ct, dir);
	scale = cs->td_scale;
	ov->tcp_flags_seen = TCP_TRACK_SEEN;
	ov->tcp_win = (__u16)(scale > 14 ? 14 : scale) << TCP_WIN_SHIFT_BITS;
	ov->tcp_end = bpf_ntohl(th->seq);
	/* From its own start: never far ahead (a segment's length). */
	tcp_track_segment(ov, p, th, &far);
	end = cs->td_end;
	if (cs->td_maxwin && (__s32)(end - ov->tcp_end) > 0)
		ov->tcp_end = end;
}

/*
 * The window of the receiver of a segment of direction DIR, into *WIN:
 * its own entry R's, if offloaded and tracked, else conntrack's record of
 * it (CT, if found), current while that direction is not offloaded. 1
 * when there is one to judge by; 0 with neither (an entry of an older
 * xnat, or made through ctnetlink).
 */
static __always_inline int offload_receiver_win(const struct flow_value *r,
						struct nf_conn *ct, __u8 dir,
						__u32 *win)
{
	if (r && (r->tcp_flags_seen & TCP_TRACK_SEEN)) {
		*win = tcp_win_bytes(r->tcp_win);
		return 1;
	}
	if (!ct)
		return 0;
	*win = ct_tcp_sender(ct, dir == CT_DIR_ORIGINAL ?
				     CT_DIR_REPLY : CT_DIR_ORIGINAL)->td_maxwin;
	return *win != 0;
}

/*
 * May the FIN or RST (sequence number SEQ) of flow V end the connection?
 * Only inside the receiver's window (offload_receiver_win(); CT, if
 * found, and DIR the packet's direction there) around the next sequence
 * number it expects, as xdp mode requires (tcp_track.h): a blind attacker
 * who knows the addresses and ports must not end a connection XDP
 * carries. With no window, or for an entry offloaded by an older xnat
 * (not tracked), there is nothing to judge by: yes.
 */
static __always_inline int offload_in_window(const struct pkt *p,
					     const struct flow_value *v,
					     struct nf_conn *ct, __u8 dir,
					     __u32 seq)
{
	__u32 win;

	if (!(v->tcp_flags_seen & TCP_TRACK_SEEN) ||
	    !offload_receiver_win(flow_reply_lookup(p, v), ct, dir, &win))
		return 1;
	return tcp_seq_in_window(v->tcp_end, win, seq);
}

/*
 * The verdict on an offloaded connection's FIN or RST, IN its receiver's
 * window or not (offload_tcp_end): conntrack's entry CT
 * (if any; released here) closed first for a RST in window, the
 * connection (KEY's entry V and the other direction's) taken off the fast
 * path and the packet up; outside the window, dropped.
 */
static __always_inline int offload_end_verdict(struct pkt *p,
					       struct nf_conn *ct, int in,
					       const struct flow_key *key,
					       const struct flow_value *v,
					       const struct xnat_config *cfg)
{
	if (ct) {
		if (in && (p->tcp_flags & XNAT_TCP_RST))
			ct_close(ct, cfg->timeout_tcp_trans);
		bpf_ct_release(ct);
	}
	if (!in)
		return pkt_stop(p, XDP_DROP, XNAT_DROP_TCP_WINDOW);
	offload_remove(key, v, FLOWLOG_WHY_TCP_END);
	return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_TCP_END);
}

/*
 * A FIN or RST of a connection XDP carries: conntrack must see every
 * state change, so the connection goes back to the kernel for good, as
 * nf_flow_table does. One outside the receiver's window is dropped
 * instead (offload_in_window), the flow staying as it was.
 *
 * A RST in window: conntrack, which the RST goes up to, may not close the
 * connection (ct_close says why), so XDP closes it first, on the
 * transitory timeout, as xdp mode closes its own flows. A FIN needs
 * nothing: conntrack leaves the established state on any FIN it accepts.
 *
 * A SYN (or SYN-ACK) without FIN or RST goes up and the flow stays. It
 * took the flow off the fast path once, as the start of a new connection
 * reusing the tuple; but anyone who knows the tuple can send one (no
 * sequence number to guess), so one blind SYN evicted any connection,
 * again and again. The kernel owns the connection and is the one to
 * judge it: conntrack ignores a SYN in the original direction of an
 * established connection and one in the reply direction is invalid
 * (nf_conntrack_proto_tcp.c, sIG and sIV), neither changes its state or
 * timeout, and the ruleset decides on the packet; the endpoint answers a
 * real one with a challenge ACK (RFC 5961 section 4), which the fast path
 * carries, and the RST a host that lost the connection sends back is in
 * window and ends it here. nf_flow_table does not end a flow on a SYN
 * either. Not dropped here: that would be deciding for the kernel.
 *
 * Inline: as a function of its own it made every hit of an offloaded
 * flow about 20 ns slower (BPF_PROG_RUN, `xnat bench --profiles micro`),
 * although hits never call it.
 */
static __always_inline int offload_tcp_end(struct xdp_md *ctx, struct pkt *p,
					   struct flow_value *v,
					   const struct xnat_config *cfg)
{
	struct tcphdr *th = p->l4;
	struct nf_conn *ct = NULL;
	__u8 dir = 0;
	int in = 1;

	if (!(p->tcp_flags & (XNAT_TCP_FIN | XNAT_TCP_RST)))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_TCP_STATE);
	if (th && (void *)(th + 1) <= p->data_end) {
		ct = ct_lookup(ctx, p, &dir);
		in = offload_in_window(p, v, ct, dir, bpf_ntohl(th->seq));
	}
	return offload_end_verdict(p, ct, in, &p->key, v, cfg);
}

/*
 * A segment of offloaded flow V far ahead of its tracked end, FAR its end
 * (tcp_track_segment): it moves the end only within the receiver's window,
 * the receiver's entry's if offloaded and tracked, else conntrack's
 * record of it (offload_receiver_win), as xdp mode's tcp_track_far().
 * Nothing to judge by: it moves. A function of its own: rare, and the
 * conntrack lookup's frame would not fit the main program's stack.
 */
static __noinline int offload_track_far(struct xdp_md *ctx, struct pkt *p,
					struct flow_value *v, __u32 far)
{
	struct flow_value *r = flow_reply_lookup(p, v);
	struct nf_conn *ct = NULL;
	__u8 dir = 0;
	__u32 win;
	int ok;

	if (!r || !(r->tcp_flags_seen & TCP_TRACK_SEEN))
		ct = ct_lookup(ctx, p, &dir);
	ok = !offload_receiver_win(r, ct, dir, &win) || far - v->tcp_end <= win;
	if (ct)
		bpf_ct_release(ct);
	if (ok)
		v->tcp_end = far;
	return 0;
}

/* A packet of an offloaded flow: forward it (XNAT_CONTINUE) or hand it
 * back to the kernel. */
static __always_inline int offload_hit(struct xdp_md *ctx, struct pkt *p,
				       struct flow_value *v,
				       const struct xnat_config *cfg)
{
	struct tcphdr *th = p->l4;
	__u32 far = 0;

	if (p->tcp_flags & (XNAT_TCP_FIN | XNAT_TCP_RST | XNAT_TCP_SYN))
		return offload_tcp_end(ctx, p, v, cfg);
	flow_touch(v, p, cfg);
	if (offload_refresh(ctx, p, v, cfg)) {
		offload_remove(&p->key, v, FLOWLOG_WHY_CT_GONE);
		return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_GONE);
	}
	/* This sender's sequence and window, for judging a FIN or RST:
	 * no lookup, a few stores at most, unless far ahead. */
	if (p->key.proto == IPPROTO_TCP && th &&
	    (void *)(th + 1) <= p->data_end && tcp_track_segment(v, p, th, &far))
		offload_track_far(ctx, p, v, far);
	return XNAT_CONTINUE;
}

/*
 * Conntrack's entry for a miss, in *CT (a reference to release) with the
 * packet's direction in *DIR: XNAT_CONTINUE. Else the packet goes up
 * (XDP_PASS, reason set): no entry, or the flow's first miss, which is
 * not worth a lookup (ct_seen.h) unless the config asks for one on every
 * miss.
 */
static __always_inline int offload_ct_get(struct xdp_md *ctx, struct pkt *p,
					  const struct xnat_offload_config *ocfg,
					  struct nf_conn **ct, __u8 *dir)
{
	if (!(ocfg->flags & XNAT_OFFLOAD_F_LOOKUP_FIRST) &&
	    !ct_seen_ask(&p->key))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_FIRST);
	*ct = ct_lookup(ctx, p, dir);
	if (!*ct)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_NONE);
	return XNAT_CONTINUE;
}

/*
 * Install NF->ov (the kernel's translation and direction already in it)
 * for P's key, leaving by OUT to the next hop FIB found, with its expiry
 * timer, and log it. XNAT_CONTINUE, also when another CPU installed it
 * meanwhile; else XDP_PASS with the reason set.
 */
static __always_inline int offload_install(struct pkt *p, struct new_flow *nf,
					   const struct iface_info *out,
					   const struct bpf_fib_lookup *fib)
{
	struct flow_value *ov = &nf->ov;
	__u64 now = bpf_ktime_get_coarse_ns();
	int rc;

	nf->okey = p->key;
	ov->nat = FLOW_NAT_CT;
	ov->egress_ifindex = out->parent;
	ov->egress_vid = out->vid;
	__builtin_memcpy(ov->eth_dst, fib->dmac, ETH_ALEN);
	__builtin_memcpy(ov->eth_src, fib->smac, ETH_ALEN);
	__builtin_memcpy(ov->ingress_mac, p->eth->h_dest, ETH_ALEN);
	ov->created_ns = now;
	ov->last_seen_ns = now;
	ov->ct_refresh = refresh_clock(now);
	ov->packets = 1;
	ov->bytes = p->len;
	flow_set_deltas(&nf->okey, ov);

	/* EEXIST: another CPU installed it meanwhile; this packet still
	 * goes out with the same rewrite. */
	rc = bpf_map_update_elem(&xnat_flows, &nf->okey, ov, BPF_NOEXIST);
	if (rc && rc != -EEXIST)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_TABLE_FULL);
	/* EEXIST too: an entry the filter had lost (a new epoch) is found
	 * again from the next packet on. */
	offload_filter_add(&nf->okey);
	if (!rc) {
		struct flow_value *v = bpf_map_lookup_elem(&xnat_flows,
							   &nf->okey);

		if (v && !bpf_timer_init(&v->timer, &xnat_flows,
					 XNAT_CLOCK_MONOTONIC)) {
			bpf_timer_set_callback(&v->timer, offload_expire);
			bpf_timer_start(&v->timer, FLOW_RECHECK_NS, 0);
		}
		flowlog_emit(NATLOG_OFFLOADED, FLOWLOG_WHY_NONE, &nf->okey, ov);
	}
	return XNAT_CONTINUE;
}

/*
 * A RST whose own direction is the kernel's (a miss), while the other
 * direction may be offloaded: it goes up, and if it is in the window of
 * that direction's receiver (offload_in_window's rule, the sender's next
 * sequence number being conntrack's, which saw every packet of this
 * direction), it also ends the other direction's entry and closes
 * conntrack's, as a RST on the fast path does (offload_tcp_end). Without
 * this the offloaded direction went on through XDP, and conntrack, whose
 * record of that side is stale, could keep the connection established
 * (ct_close) for as long as its packets came.
 *
 * The other direction's key is this packet's translated reply arriving
 * where this packet leaves: conntrack's tuples and a route lookup, as an
 * install builds it. Always XDP_PASS: pass_ct_tcp_end if the other
 * direction was taken off, else pass_ct_tcp_state. A function of its own:
 * RSTs are rare and the main program's stack is full.
 */
static __noinline int offload_miss_rst(struct xdp_md *ctx, struct pkt *p,
				       struct new_flow *nf,
				       const struct xnat_config *cfg)
{
	struct flow_value *ov = &nf->ov, *r;
	struct ip_ct_tcp_state___xnat *cs;
	struct tcphdr *th = p->l4;
	struct iface_info *out;
	struct nf_conn *ct;
	int ended = 0;
	__u32 win;
	__u8 dir;

	if (!th || (void *)(th + 1) > p->data_end)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_TCP_STATE);
	ct = ct_lookup(ctx, p, &dir);
	if (!ct)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_TCP_STATE);
	__builtin_memset(ov, 0, sizeof(*ov));
	ct_translation(ct, dir, ov);
	if (fib_route(ctx, p, &ov->new_saddr, &ov->new_daddr, &nf->fib) !=
		    XNAT_CONTINUE ||
	    !(out = egress_get(p, &nf->fib)))
		goto up;
	ov->egress_ifindex = out->parent;
	ov->egress_vid = out->vid;
	flow_reply_key(&p->key, ov, &nf->rkey);
	r = bpf_map_lookup_elem(&xnat_flows, &nf->rkey);
	if (!r || r->nat != FLOW_NAT_CT)
		goto up;
	/* The sender's next sequence number is conntrack's; nothing to
	 * judge by (an entry made through ctnetlink): yes. */
	cs = ct_tcp_sender(ct, dir);
	if (!cs->td_maxwin || !offload_receiver_win(r, ct, dir, &win) ||
	    tcp_seq_in_window(cs->td_end, win, bpf_ntohl(th->seq))) {
		ct_close(ct, cfg->timeout_tcp_trans);
		offload_remove(&nf->rkey, r, FLOWLOG_WHY_TCP_END);
		ended = 1;
	}
up:
	bpf_ct_release(ct);
	return pkt_stop(p, XDP_PASS, ended ? XNAT_PASS_CT_TCP_END :
					     XNAT_PASS_CT_TCP_STATE);
}

/*
 * fib_src_check() for an install: 0, or why the packet goes up instead
 * (XNAT_PASS_CT_SPOOFED where xdp mode drops, XNAT_PASS_MARTIAN). Never a
 * drop: in offload mode the kernel's ruleset owns the verdict.
 */
static __always_inline __u32 offload_src_check(struct xdp_md *ctx,
					       struct pkt *p,
					       const struct iface_info *in,
					       const struct xnat_config *cfg)
{
	int rc = fib_src_check(ctx, p, in, cfg);

	return rc == XNAT_DROP_SPOOFED ? XNAT_PASS_CT_SPOOFED : (__u32)rc;
}

/*
 * A miss: ask conntrack whether the kernel accepted this direction of the
 * connection, and if so build the entry in NF->ov from the conntrack
 * entry's tuples and the route of the translated packet, and install it.
 * XNAT_CONTINUE: forward the packet with NF->ov. Else XDP_PASS, reason set.
 */
static __always_inline int offload_miss(struct xdp_md *ctx, struct pkt *p,
					struct new_flow *nf,
					const struct xnat_config *cfg)
{
	__u32 timeout, zero = 0, bit, why;
	struct xnat_offload_config *ocfg;
	struct flow_value *ov = &nf->ov;
	struct bpf_fib_lookup fib;
	struct iface_info *in, *out;
	struct nf_conn *ct;
	__u8 dir;
	int rc;

	if (p->key.proto != IPPROTO_TCP && p->key.proto != IPPROTO_UDP)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_PROTO);
	/* The handshake and the teardown are conntrack's to see. */
	if (p->tcp_flags & XNAT_TCP_SYN)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_TCP_STATE);
	ocfg = bpf_map_lookup_elem(&xnat_offload, &zero);
	if (!ocfg)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_INTERNAL);
	in = ingress_get(p);
	if (!in)
		return pkt_stop(p, XDP_PASS, p->key.vid ? XNAT_PASS_VLAN :
							  XNAT_PASS_EGRESS);
	if (!mac_eq(p->eth->h_dest, in->mac))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_OTHERHOST);
	/* A FIN or RST whose own direction is the kernel's goes up, for
	 * conntrack. After a FIN the other direction may still send (a
	 * half-close): offloaded, it stays on the fast path until its own
	 * FIN or RST (a hit) ends it there. A RST ends both. */
	if (p->tcp_flags & XNAT_TCP_RST)
		return offload_miss_rst(ctx, p, nf, cfg);
	if (p->tcp_flags & XNAT_TCP_FIN)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_TCP_STATE);

	rc = offload_ct_get(ctx, p, ocfg, &ct, &dir);
	if (rc != XNAT_CONTINUE)
		return rc;
	why = ct_offloadable(ct, p->key.proto);
	bit = dir == CT_DIR_ORIGINAL ? ocfg->mark_orig : ocfg->mark_reply;
	if (!why && !(ct_mark(ct) & bit))
		why = XNAT_PASS_CT_UNMARKED;
	/* The source check of xdp mode's new flows (fib.h), before anything
	 * of the connection is touched: conntrack matched the tuple, not the
	 * port it came in by, so a WAN frame with a LAN host's tuple would
	 * find that host's connection and be installed for the WAN port. Up
	 * it goes, for the kernel's own antispoof (rp_filter, the antispoof
	 * chain) to drop and count. Installs only: a hit's key holds its
	 * port. */
	if (!why)
		why = offload_src_check(ctx, p, in, cfg);
	if (why) {
		bpf_ct_release(ct);
		return pkt_stop(p, XDP_PASS, why);
	}
	/* Only now: most misses (new connections) never get here. */
	__builtin_memset(ov, 0, sizeof(*ov));
	ct_translation(ct, dir, ov);
	offload_track_init(p, ov, ct, dir);
	ov->dir = dir;
	/* XDP's packets bypass conntrack: give the entry its full timeout
	 * now, and again whenever half of it has run out. */
	timeout = offload_timeout(cfg, &p->key, ov);
	bpf_ct_change_timeout(ct, timeout * 1000);
	/* Consumed: should the flow leave the fast path, its next packet
	 * must pass the ruleset again. If it does not get installed below,
	 * it goes up now and the kernel marks it again. */
	ct_mark_clear(ct, bit);
	bpf_ct_release(ct);

	rc = fib_route(ctx, p, &ov->new_saddr, &ov->new_daddr, &fib);
	if (rc != XNAT_CONTINUE)
		return rc;
	out = egress_get(p, &fib);
	if (!out)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_EGRESS);
	/* XDP_REDIRECT skips the egress qdisc: SQM would stop working. */
	if ((out->flags & XNAT_IFACE_SHAPED) &&
	    !(ocfg->flags & XNAT_OFFLOAD_F_SHAPED))
		return pkt_stop(p, XDP_PASS, XNAT_PASS_SHAPED);
	return offload_install(p, nf, out, &fib);
}

/*
 * Offload mode's whole decision for a parsed packet. XNAT_CONTINUE with
 * *FWD set: forward with that entry, counted as *REASON. Else the verdict,
 * reason in p->reason.
 */
static __always_inline int offload_packet(struct xdp_md *ctx, struct pkt *p,
					  const struct xnat_config *cfg,
					  struct flow_value **fwd,
					  __u32 *reason)
{
	struct flow_value *v;
	struct new_flow *nf;
	__u32 zero = 0;
	int rc;

	/* The kernel reassembles and forwards fragments: it owns them. */
	if (p->frag != FRAG_NONE)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_FRAGMENT);
	/* The parser's exceptions are the kernel's too, as in xdp mode
	 * (flow_exception): it sends "time exceeded" and processes IPv4
	 * options. Forwarded here, a TTL 1 packet would leave with TTL 0,
	 * and one with options would leave with its addresses translated
	 * but its L4 header not (the parser gives it no L4 pointer). */
	if (p->ttl_expired || p->ip_options)
		return pkt_stop(p, XDP_PASS, p->ttl_expired ? XNAT_PASS_TTL :
						     XNAT_PASS_IP_OPTIONS);
	/* ICMP errors are about connections the kernel tracks: its own
	 * translation of them is the right one. */
	if (p->icmp_error)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_CT_PROTO);
	/* Most packets of a new connection: no look-up (offload_filter.h). */
	v = offload_filter_may_have(p) ?
		    bpf_map_lookup_elem(&xnat_flows, &p->key) : NULL;
	if (v) {
		if (!mac_eq(p->eth->h_dest, v->ingress_mac))
			return pkt_stop(p, XDP_PASS, XNAT_PASS_OTHERHOST);
		rc = offload_hit(ctx, p, v, cfg);
		*fwd = v;
		*reason = XNAT_FWD_FAST;
		return rc;
	}
	nf = bpf_map_lookup_elem(&xnat_scratch, &zero);
	if (!nf)
		return pkt_stop(p, XDP_PASS, XNAT_PASS_INTERNAL);
	rc = offload_miss(ctx, p, nf, cfg);
	*fwd = &nf->ov;
	*reason = XNAT_FWD_OFFLOAD;
	return rc;
}

#endif /* XNAT_OFFLOAD_H */
