/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TCP state an XDP flow keeps so that a blind attacker cannot end or
 * confuse it. Each direction's entry tracks its own sender: the highest
 * sequence number it sent (plus one), the window it last advertised and
 * the window scale of its SYN (RFC 7323). With both directions known:
 *
 *  - an RST or FIN is applied (forwarded, and moving the flow towards the
 *    transitory timeout) only inside the receiver's window around the
 *    next sequence number the receiver expects (RFC 5961 section 3 for
 *    RST; conntrack's tcp_in_window() checks FINs the same way); one
 *    outside is dropped as drop_tcp_window. The endpoint still does the
 *    exact check and its challenge ACK; this only keeps forged segments
 *    from reaching it and from closing the flow here;
 *  - the connection counts as established only once the handshake
 *    completed: a plain ACK after the other side's SYN;
 *  - a new SYN on a closed connection (RST seen, or FIN both ways) starts
 *    the connection afresh in both entries, through the same mapping;
 *  - a SYN or SYN-ACK after the handshake (established or half closed)
 *    is forwarded but changes no tracking (RFC 5961 section 4: the
 *    endpoint answers it with a challenge ACK): otherwise one blind SYN
 *    would set the end a RST is judged by;
 *  - a segment moves its sender's end by at most TCP_END_STEP_MAX
 *    (64 KiB) per packet; one further ahead only inside the receiver's
 *    window (tcp_track_far). Otherwise blind segments far ahead would
 *    walk the end to a value the attacker knows.
 *
 * Only packets with SYN, FIN or RST, the one ACK that completes the
 * handshake, and a segment more than TCP_END_STEP_MAX ahead look at the
 * other direction's entry; every other packet updates its own entry's
 * sequence and window, nothing more. Flows made before this tracking
 * existed have no TCP_TRACK_SEEN and are not checked.
 */
#ifndef XNAT_TCP_TRACK_H
#define XNAT_TCP_TRACK_H

#include "maps.h"
#include "parsing.h"
#include "flow.h"
#include "tcp_opt.h"

/* Below the next expected sequence, segments of the last 64 KiB are in
 * window whatever the receiver advertises: a zero window must not make a
 * retransmitted FIN look forged. */
#define TCP_WIN_BELOW_MIN 65535U

/* The window scale option of a SYN whose options are OPT_LEN bytes at
 * OPT_OFF in the frame: 0x80 | shift, or 0 without one. */
static __always_inline int tcp_syn_wscale(struct xdp_md *ctx, __u32 opt_off,
					  __u32 opt_len)
{
	int at = tcp_opt_find(ctx, opt_off, opt_len, TCP_OPT_WSCALE, 3);
	__u8 shift;

	if (at < 0 || bpf_xdp_load_bytes(ctx, opt_off + at + 2, &shift, 1))
		return 0;
	/* RFC 7323 2.3: a shift above 14 is taken as 14. */
	return 0x80 | (shift > 14 ? 14 : shift);
}

/* Sequence space the segment TH of P occupies: data, SYN and FIN. */
static __always_inline __u32 tcp_seg_len(const struct pkt *p,
					 const struct tcphdr *th)
{
	__u32 hdrs, len;

	/* Pointer differences: both are packet pointers (never NULL here,
	 * which the verifier must see on each branch). */
	if (p->ip4)
		hdrs = (void *)th - (void *)p->ip4;
	else if (p->ip6)
		hdrs = (void *)th - (void *)p->ip6;
	else
		return 0;
	hdrs += th->doff * 4;
	len = p->l3_len > hdrs ? p->l3_len - hdrs : 0;

	return len + th->syn + th->fin;
}

/* The receiver's window in bytes, from its tcp_win. */
static __always_inline __u32 tcp_win_bytes(__u16 w)
{
	return (__u32)(w & TCP_WIN_UNITS_MAX) << (4 + (w >> TCP_WIN_SHIFT_BITS));
}

/* A segment's advertised window in tcp_win's units (16 bytes, unscaled). */
static __always_inline __u16 tcp_win_units(const struct tcphdr *th)
{
	__u32 units = (bpf_ntohs(th->window) + 15) >> 4;

	return units > TCP_WIN_UNITS_MAX ? TCP_WIN_UNITS_MAX : units;
}

/*
 * How far one segment may move its sender's tracked end without asking
 * the receiver. A sender's segments pass the router in order, each ahead
 * of the end tracked so far by its own length plus whatever was lost
 * upstream: 64 KiB, the largest segment, covers that; a retransmission
 * of what was lost upstream fills the gap in steps of a segment anyway.
 * Without a limit any segment up to 2^31 ahead became the new end: a
 * blind attacker walked it to a value it knew with 8 forged segments and
 * its RST there passed tcp_in_window(). With it, a walk takes 2^32 / 64
 * KiB = 65536 segments, no fewer than the RSTs a brute force over the
 * window itself takes (2^32 / (2 * 64 KiB) at the smallest window).
 */
#define TCP_END_STEP_MAX 65536U

/*
 * This tracked sender's sequence and window from a segment without SYN:
 * the per-packet part, also offloaded flows' (offload.h). A segment ahead
 * of the tracked end by more than TCP_END_STEP_MAX does not move it here:
 * 1 is returned with its end in *FAR for the caller to judge against the
 * receiver's window (tcp_track_far), a lookup the common case never does.
 */
static __always_inline int tcp_track_segment(struct flow_value *v,
					     const struct pkt *p,
					     const struct tcphdr *th,
					     __u32 *far)
{
	__u32 end = bpf_ntohl(th->seq) + tcp_seg_len(p, th);
	__s32 ahead;
	int ret = 0;
	__u16 win;

	if (!(v->tcp_flags_seen & TCP_TRACK_SEEN))
		return 0;
	ahead = end - v->tcp_end;
	if (ahead > (__s32)TCP_END_STEP_MAX) {
		*far = end;
		ret = 1;
	} else if (ahead > 0) {
		v->tcp_end = end;
	}
	win = (v->tcp_win & ~TCP_WIN_UNITS_MAX) | tcp_win_units(th);
	if (v->tcp_win != win)
		v->tcp_win = win;
	return ret;
}

/*
 * A segment whose end FAR is more than TCP_END_STEP_MAX ahead of V's
 * tracked end (tcp_track_segment): it becomes the end only inside the
 * window of R, the receiver's entry, as the receiver itself accepts no
 * data beyond it. Outside it the segment is still forwarded (a sender may
 * exceed a window the receiver shrank; the endpoint judges) but teaches
 * nothing. Without R's tracking there is nothing to judge by, as for a
 * RST (tcp_in_window): it moves.
 */
static __always_inline void tcp_track_far(struct flow_value *v,
					  const struct flow_value *r, __u32 far)
{
	if (!r || !(r->tcp_flags_seen & TCP_TRACK_SEEN) ||
	    far - v->tcp_end <= tcp_win_bytes(r->tcp_win))
		v->tcp_end = far;
}

/* This sender's window scale, sequence and window from its SYN. */
static __always_inline void tcp_track_syn(struct xdp_md *ctx,
					  struct flow_value *v,
					  const struct pkt *p,
					  const struct tcphdr *th)
{
	int ws = tcp_syn_wscale(ctx, (void *)(th + 1) - (void *)p->eth,
				th->doff * 4 - sizeof(*th));
	__u16 shift = ws ? (ws & 0x0f) : 0;

	/* Windows in a SYN are never scaled (RFC 7323 2.2); the shift
	 * applies to later segments once both SYNs carried the option
	 * (tcp_track_wscale). */
	v->tcp_flags_seen = (v->tcp_flags_seen & ~TCP_TRACK_WSCALE) |
			    TCP_TRACK_SEEN | (ws ? TCP_TRACK_WSCALE : 0);
	v->tcp_end = bpf_ntohl(th->seq) + tcp_seg_len(p, th);
	v->tcp_win = (shift << TCP_WIN_SHIFT_BITS) | tcp_win_units(th);
}

/* This sender's sequence and window (and, on a SYN, window scale). 1
 * with *FAR set: a segment far ahead, for tcp_track_far(). */
static __always_inline int tcp_track_sender(struct xdp_md *ctx,
					    struct flow_value *v,
					    const struct pkt *p,
					    const struct tcphdr *th, __u32 *far)
{
	if (th->syn) {
		tcp_track_syn(ctx, v, p, th);
		return 0;
	}
	return tcp_track_segment(v, p, th, far);
}

/* Both SYNs seen: a shift stays in effect only if both carried the
 * option (RFC 7323 2.2); otherwise neither side scales. */
static __always_inline void tcp_track_wscale(struct flow_value *a,
					     struct flow_value *b)
{
	if ((a->tcp_flags_seen & b->tcp_flags_seen) & TCP_TRACK_WSCALE)
		return;
	a->tcp_win &= TCP_WIN_UNITS_MAX;
	b->tcp_win &= TCP_WIN_UNITS_MAX;
}

/* Start tracking a new flow's SYN in its first entry (slow path). */
static __always_inline void tcp_track_init(struct xdp_md *ctx,
					   struct flow_value *v,
					   const struct pkt *p)
{
	struct tcphdr *th = p->l4;

	/* Only a SYN starts it: any other first segment finds V untracked
	 * and leaves it so. */
	if (p->key.proto != IPPROTO_TCP || !th ||
	    (void *)(th + 1) > p->data_end || !th->syn)
		return;
	tcp_track_syn(ctx, v, p, th);
}

/* Is SEQ inside a receiver's window of WIN bytes around END, the next
 * sequence number it expects? */
static __always_inline int tcp_seq_in_window(__u32 end, __u32 win, __u32 seq)
{
	__u32 below = win > TCP_WIN_BELOW_MIN ? win : TCP_WIN_BELOW_MIN;

	return seq - (end - below) <= below + win;
}

/*
 * Is SEQ inside the window of R, the receiver, around S's next sequence
 * number? Without both sides' state (flows older than tracking, or before
 * the receiver's first segment) there is nothing to judge by: yes.
 */
static __always_inline int tcp_in_window(const struct flow_value *s,
					 const struct flow_value *r, __u32 seq)
{
	if (!(s->tcp_flags_seen & r->tcp_flags_seen & TCP_TRACK_SEEN))
		return 1;
	return tcp_seq_in_window(s->tcp_end, tcp_win_bytes(r->tcp_win), seq);
}

/* Both entries begin again from the SYN P (a new connection, same tuple). */
static __always_inline void tcp_track_restart(struct xdp_md *ctx,
					      struct flow_value *v,
					      struct flow_value *other,
					      const struct pkt *p,
					      const struct tcphdr *th)
{
	v->tcp_flags_seen = 0;
	other->tcp_flags_seen = 0;
	other->tcp_win = 0;
	tcp_track_syn(ctx, v, p, th);
}

/*
 * Track a TCP segment of flow V (key P->key) before it is forwarded.
 * Returns 0 to forward it, -1 to drop it (out of window).
 */
static __always_inline int tcp_track(struct xdp_md *ctx, struct pkt *p,
				     struct flow_value *v)
{
	struct tcphdr *th = p->l4;
	struct flow_value *other;
	__u8 flags = p->tcp_flags;
	__u32 far = 0;
	__u8 state;

	/* Offloaded flows: offload.h tracks them, and judges their FIN
	 * and RST against conntrack's record too. */
	if (!th || (void *)(th + 1) > p->data_end || v->nat == FLOW_NAT_CT)
		return 0;
	/* The common case: a data segment or plain ACK of a flow whose
	 * handshake this entry has seen complete; or an untracked flow
	 * (older than tracking) that no SYN restarts. Only a segment far
	 * ahead (tcp_track_segment) looks up the receiver. */
	if ((!(flags & (XNAT_TCP_SYN | XNAT_TCP_FIN | XNAT_TCP_RST)) &&
	     (v->tcp_flags_seen & TCP_TRACK_ACKED)) ||
	    !((v->tcp_flags_seen & TCP_TRACK_SEEN) || (flags & XNAT_TCP_SYN))) {
		if (tcp_track_sender(ctx, v, p, th, &far))
			tcp_track_far(v, flow_reply_lookup(p, v), far);
		return 0;
	}

	other = flow_reply_lookup(p, v);
	if (!other) {
		if (tcp_track_sender(ctx, v, p, th, &far))
			tcp_track_far(v, NULL, far);
		return 0;
	}
	if (flags & XNAT_TCP_SYN) {
		state = flow_tcp_state(v, other);
		/*
		 * A SYN or SYN-ACK on a connection past its handshake
		 * (established, or half closed) teaches nothing: a blind
		 * attacker would otherwise set the sender's end, the one
		 * its RST is judged by, to its own SYN's. It is forwarded:
		 * the endpoint answers it with a challenge ACK (RFC 5961
		 * section 4), or a host that lost the connection (and reuses
		 * the port) gets that ACK, answers it with a RST at the
		 * sequence the endpoint expects, which is in window here
		 * since tracking kept the old end, and its next SYN finds
		 * the flow closed. With a RST or FIN too it is judged as
		 * one, below, but still teaches nothing.
		 */
		if (state == FLOW_TCP_ESTABLISHED ||
		    state == FLOW_TCP_CLOSING) {
			if ((flags & (XNAT_TCP_RST | XNAT_TCP_FIN)) &&
			    !tcp_in_window(v, other, bpf_ntohl(th->seq)))
				return -1;
			return 0;
		}
		if (!(flags & XNAT_TCP_ACK)) {
			if (state == FLOW_TCP_CLOSED)
				tcp_track_restart(ctx, v, other, p, th);
			else
				tcp_track_syn(ctx, v, p, th);
			return 0;
		}
		/* The SYN-ACK: both window scale options are known. */
		tcp_track_syn(ctx, v, p, th);
		tcp_track_wscale(v, other);
		return 0;
	}
	if ((flags & (XNAT_TCP_RST | XNAT_TCP_FIN)) &&
	    !tcp_in_window(v, other, bpf_ntohl(th->seq)))
		return -1;
	/* A plain ACK after the other side's SYN: the handshake is done. */
	if ((flags & XNAT_TCP_ACK) &&
	    (other->tcp_flags_seen & XNAT_TCP_SYN) &&
	    (v->tcp_flags_seen & TCP_TRACK_SEEN))
		v->tcp_flags_seen |= TCP_TRACK_ACKED;
	if (tcp_track_segment(v, p, th, &far))
		tcp_track_far(v, other, far);
	return 0;
}

#endif /* XNAT_TCP_TRACK_H */
