/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TCP options (RFC 9293 3.1): a bounded walk over the options of a
 * segment, to find one option by kind and length. The walk stops where
 * Linux's tcp_parse_options() stops (End of Option List, a length below 2,
 * an option that runs past the header), so XDP reads an option only where
 * the endpoint would. Used for SYNs only: the window scale for TCP
 * tracking (tcp_track.h), the MSS for clamping (mss.h).
 */
#ifndef XNAT_TCP_OPT_H
#define XNAT_TCP_OPT_H

#include "maps.h"

#define TCP_OPT_EOL 0
#define TCP_OPT_NOP 1
#define TCP_OPT_MSS 2
#define TCP_OPT_WSCALE 3
#define TCP_OPTS_MAX 40

/*
 * The offset, within the options (OPT_LEN bytes at OPT_OFF in the frame),
 * of the first option of KIND whose length byte is LEN and which lies
 * whole inside them; -1 without one. A global function: the verifier
 * checks its loop once, not at every call site.
 */
__noinline int tcp_opt_find(struct xdp_md *ctx, __u32 opt_off, __u32 opt_len,
			    __u32 kind, __u32 len)
{
	__u32 zero = 0, i = 0;
	__u8 *o;
	int n;

	/* The options are copied to a per-CPU buffer, not to this stack,
	 * which adds to the main program's at the call. */
	o = bpf_map_lookup_elem(&xnat_tcp_opts, &zero);
	if (!o)
		return -1;
	if (opt_len > TCP_OPTS_MAX)
		opt_len = TCP_OPTS_MAX;
	asm volatile("" : "+r"(opt_len));
	opt_len &= 0x3f;
	if (!opt_len || opt_len > TCP_OPTS_MAX)
		return -1;
	__builtin_memset(o, 0, TCP_OPTS_BUF);
	if (bpf_xdp_load_bytes(ctx, opt_off, o, opt_len))
		return -1;
	for (n = 0; n < TCP_OPTS_MAX; n++) {
		__u8 k, l;

		/* Masked on the register that indexes: the buffer has room
		 * for i + 2 whatever i is. */
		i &= 0x3f;
		if (i >= opt_len)
			break;
		k = o[i];
		if (k == TCP_OPT_EOL)
			break;
		if (k == TCP_OPT_NOP) {
			i++;
			continue;
		}
		l = o[i + 1];
		/* A truncated option (or a length byte beyond the options)
		 * ends the walk, as in the endpoint. */
		if (l < 2 || i + l > opt_len)
			break;
		if (k == kind && l == len)
			return i;
		i += l;
	}
	return -1;
}

#endif /* XNAT_TCP_OPT_H */
