/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MSS clamping ([router] mss_clamp): a SYN or SYN-ACK that XDP forwards
 * leaves with its MSS option lowered to what fits, as the kernel's nft
 * rule "tcp option maxseg size set rt mtu" does for what it forwards
 * (user/kernel_mode.c). Behind a PPPoE or tunnel link, or a LAN port of
 * smaller MTU, a peer that believed the hosts' 1460 would send segments
 * that only get through with working PMTU discovery, which firewalls that
 * drop ICMP break. "pmtu" clamps to the smaller MTU of the port the
 * segment leaves by and the port it came in on (where the other side's
 * segments will leave), less 40 bytes of headers for IPv4 and 60 for
 * IPv6; a number clamps to that IPv4 MSS (IPv6 20 less). The option is
 * only ever lowered, and a SYN without one is left alone.
 */
#ifndef XNAT_MSS_H
#define XNAT_MSS_H

#include <linux/bpf.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "csum.h"
#include "tcp_opt.h"
#include "fuzz.h"

#define TCPOLEN_MSS 4

/* The MSS a SYN of family V6 may carry with CFG, the egress port's MTU
 * EGRESS_MTU; 0: no clamping. */
static __always_inline __u32 mss_limit(struct xdp_md *ctx,
				       const struct xnat_config *cfg,
				       __u32 v6, __u32 egress_mtu)
{
	__u32 hdrs = v6 ? XNAT_MSS_HDRS_V6 : XNAT_MSS_HDRS_V4;
	__u32 mtu, in_mtu = 0;

	if (cfg->flags & XNAT_F_MSS_PMTU) {
		/* Ifindex 0: the port the frame arrived on. Its MTU is
		 * written whatever the frame's length. */
		bpf_check_mtu(ctx, 0, &in_mtu, 0, 0);
		mtu = in_mtu && in_mtu < egress_mtu ? in_mtu : egress_mtu;
	} else {
		mtu = cfg->mss_mtu;
	}
	return mtu > hdrs ? mtu - hdrs : 0;
}

/*
 * Lower the MSS option of the SYN whose TCP header is at TCP_OFF in the
 * frame (IPv6 when V6), about to leave by a port of MTU EGRESS_MTU, and
 * update the TCP checksum (RFC 1624). Returns 1 when it lowered it, else
 * 0: the packet is never dropped for its options. A global function: one
 * verification for the several forward paths that call it; the frame is
 * read and written with bpf_xdp_load_bytes/store_bytes, so no packet
 * pointer crosses the call.
 */
__noinline int mss_clamp(struct xdp_md *ctx, __u32 tcp_off, __u32 v6,
			 __u32 egress_mtu)
{
	struct xnat_config *cfg;
	__u32 mss, opt_off, delta;
	__be16 old, new;
	__u16 check;
	__u8 doff;
	int at;

	cfg = config_get();
	if (!cfg)
		return 0;
	mss = mss_limit(ctx, cfg, v6, egress_mtu);
	if (!mss || bpf_xdp_load_bytes(ctx, tcp_off + 12, &doff, 1))
		return 0;
	opt_off = tcp_off + sizeof(struct tcphdr);
	at = tcp_opt_find(ctx, opt_off, (doff >> 4) * 4 - sizeof(struct tcphdr),
			  TCP_OPT_MSS, TCPOLEN_MSS);
	if (at < 0 || bpf_xdp_load_bytes(ctx, opt_off + at + 2, &old, 2) ||
	    bpf_ntohs(old) <= mss ||
	    bpf_xdp_load_bytes(ctx, tcp_off + 16, &check, 2))
		return 0;
	new = bpf_htons(mss);
	/* The checksum sums 16-bit words from the TCP header's start: an
	 * MSS at an odd offset (after a single NOP, say) straddles two, its
	 * bytes in the other halves, which is the same sum byte-swapped. */
	if (at & 1) {
		XNAT_COV();
		delta = csum_delta16(0, __builtin_bswap16(old),
				     __builtin_bswap16(new));
	} else {
		XNAT_COV();
		delta = csum_delta16(0, old, new);
	}
	check = csum_apply(check, delta);
	if (bpf_xdp_store_bytes(ctx, opt_off + at + 2, &new, 2) ||
	    bpf_xdp_store_bytes(ctx, tcp_off + 16, &check, 2))
		return 0;
	return 1;
}

#endif /* XNAT_MSS_H */
