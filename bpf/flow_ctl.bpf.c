// SPDX-License-Identifier: GPL-2.0-only
/*
 * `xnat flows delete`: end a connection the way its idle timeout would,
 * from userspace. Userspace runs this program once per connection with
 * BPF_PROG_RUN, the ORIG entry's struct flow_key as the "packet". It marks
 * both entries expired, queues the connection on xnat_expire_now and
 * starts the flow sweeper's timer at once; the sweeper (bpf/sweep.h, owned
 * by the data path's program) then deletes both entries and drops the
 * mapping's reference, exactly as on a timeout. Deleting the entries from
 * userspace instead would race with the sweeper and leave the mapping's
 * count wrong. (A connection made by a data path from before the sweeper
 * has a timer of its own, whose callback does the same: it is started
 * instead.)
 *
 * Offload mode's entries (FLOW_NAT_CT) each have their own timer
 * (offload_expire() in offload.h) and no mapping: the given entry is
 * marked and its timer kicked, whichever direction it is; userspace runs
 * the program for each direction's entry. The timer removes it and writes
 * why to the event log and to `xnat trace`, as on an idle timeout: why is
 * the byte after the key if there is one (`xnat run` on a conntrack
 * destroy event: FLOWLOG_WHY_CT_DESTROYED), else "deleted".
 *
 * The verdict says what happened: XDP_PASS marked and kicked, XDP_DROP no
 * such connection (already gone), XDP_TX marked but neither timer could be
 * started (it ends when the sweeper next comes to it), XDP_ABORTED a bad
 * argument.
 *
 * When a MAC changes under a running router, a neighbour's (`xnat run` in
 * xdp mode, user/next_hop.c) or a port's own (any refresh or reload,
 * user/maps.c), xdp_flow_set_mac gives one entry that held the old MAC the
 * new one, in place, so the data path's own writes to the entry (counters,
 * TCP tracking) are not undone as a whole-value update from userspace
 * would.
 *
 * When a route changes under xdp mode (`xnat run`, user/flow_route.c),
 * xdp_flow_reroute routes a connection's ORIG entry again, as the slow
 * path routed its first packet, and writes a new next hop in place. The
 * reply entry needs nothing: it goes back out of the port and to the MAC
 * its connection came from, which no route decides.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xnat_common.h"
#include "map_flows.h"
#include "map_sweep.h"
#include "map_ports.h"
#include "af.h"

char LICENSE[] SEC("license") = "GPL";

/* The data path's flow table and the sweeper's maps, which userspace
 * reuses from their pins before load (map_flows.h, map_sweep.h). */

/* Hand the marked connection OKEY to the sweeper, now. */
static int sweep_kick(struct flow_key *okey)
{
	struct flow_sweep *s;
	__u32 zero = 0;

	if (bpf_map_push_elem(&xnat_expire_now, okey, 0))
		return XDP_TX;
	s = bpf_map_lookup_elem(&xnat_sweep, &zero);
	/* 0 ns: as soon as the timer softirq runs. */
	if (!s || bpf_timer_start(&s->timer, 0, 0))
		return XDP_TX;
	return XDP_PASS;
}

SEC("xdp")
int xdp_flow_expire(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u8 why = FLOWLOG_WHY_DELETED, *w = data + sizeof(struct flow_key);
	struct flow_value *ov, *rv;
	struct flow_key okey, rkey;

	if (data + sizeof(okey) > end)
		return XDP_ABORTED;
	__builtin_memcpy(&okey, data, sizeof(okey));
	if ((void *)(w + 1) <= end && *w > 1 && *w < FLOWLOG_WHY_MAX)
		why = *w;
	ov = bpf_map_lookup_elem(&xnat_flows, &okey);
	if (!ov)
		return XDP_DROP;
	if (ov->nat == FLOW_NAT_CT) {
		ov->expired = why;
		return bpf_timer_start(&ov->timer, 0, 0) ? XDP_TX : XDP_PASS;
	}
	if (ov->dir != FLOW_DIR_ORIG)
		return XDP_ABORTED;
	flow_reply_key(&okey, ov, &rkey);
	rv = bpf_map_lookup_elem(&xnat_flows, &rkey);
	if (rv)
		rv->expired = 1;
	ov->expired = 1;
	/* A connection of the data path before the sweeper: its own timer. */
	if (!bpf_timer_start(&ov->timer, 0, 0))
		return XDP_PASS;
	return sweep_kick(&okey);
}

/* XDP_PASS: the entry holds the new MAC now; XDP_DROP: no such entry, or
 * it does not hold the old MAC (built again since); XDP_ABORTED: a bad
 * argument. A frame handled while the six bytes are half written goes
 * astray: one frame, as on a real MAC change. */
SEC("xdp")
int xdp_flow_set_mac(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct flow_mac_arg arg;
	struct flow_value *v;
	__u8 *mac;

	if (data + sizeof(arg) > end)
		return XDP_ABORTED;
	__builtin_memcpy(&arg, data, sizeof(arg));
	v = bpf_map_lookup_elem(&xnat_flows, &arg.key);
	if (!v)
		return XDP_DROP;
	switch (arg.which) {
	case FLOW_MAC_NEXT_HOP:
		mac = v->eth_dst;
		break;
	case FLOW_MAC_EGRESS:
		mac = v->eth_src;
		break;
	case FLOW_MAC_INGRESS:
		mac = v->ingress_mac;
		break;
	default:
		return XDP_ABORTED;
	}
	for (int i = 0; i < 6; i++)
		if (mac[i] != arg.old_mac[i])
			return XDP_DROP;
	__builtin_memcpy(mac, arg.new_mac, 6);
	return XDP_PASS;
}

/*
 * XDP_PASS: routed, arg.result says what came of it; XDP_DROP: no such
 * entry; XDP_ABORTED: a bad argument, or not an ORIG entry of xdp mode.
 *
 * Only a new next hop on the same port is followed in place. A route out
 * of another port is a connection that must end: its replies would come
 * back by that port, which the reply entry's key names, and its NAT
 * address may not be the new port's (the kernel's NAT, too, keeps a
 * connection's translation when its route moves).
 */
SEC("xdp")
int xdp_flow_reroute(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct flow_route_arg *arg = data;
	struct bpf_fib_lookup fib = {};
	struct iface_info *out;
	struct flow_value *v;
	__u32 in;
	int rc;

	if (data + sizeof(*arg) > end)
		return XDP_ABORTED;
	v = bpf_map_lookup_elem(&xnat_flows, &arg->key);
	if (!v)
		return XDP_DROP;
	if (v->dir != FLOW_DIR_ORIG || v->nat == FLOW_NAT_CT)
		return XDP_ABORTED;
	arg->result = FLOW_ROUTE_GONE;
	/* Routed as its first packet was: from its ingress device (a VLAN's
	 * own), its source before NAT, to its destination after. */
	in = port_device(arg->key.ifindex, arg->key.vid);
	if (!in)
		return XDP_PASS; /* its port is gone */
	fib.ifindex = in;
	fib.l4_protocol = arg->key.proto;
	fib.sport = arg->key.sport;
	fib.dport = arg->key.dport;
	if (arg->key.family == XNAT_AF_INET) {
		fib.family = AF_INET;
		fib.ipv4_src = arg->key.saddr.v4;
		fib.ipv4_dst = v->new_daddr.v4;
	} else {
		fib.family = AF_INET6;
		__builtin_memcpy(fib.ipv6_src, arg->key.saddr.v6, 16);
		__builtin_memcpy(fib.ipv6_dst, v->new_daddr.v6, 16);
	}
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH)
		return XDP_PASS;
	out = bpf_map_lookup_elem(&xnat_ifaces, &fib.ifindex);
	if (!out || out->parent != v->egress_ifindex || out->vid != v->egress_vid)
		return XDP_PASS;
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		/* The helper left the next hop's address in the destination. */
		arg->result = FLOW_ROUTE_NO_NEIGH;
		arg->ifindex = fib.ifindex;
		arg->next_hop_family = fib.family;
		if (fib.family == AF_INET)
			arg->next_hop.v4 = fib.ipv4_dst;
		else
			__builtin_memcpy(arg->next_hop.v6, fib.ipv6_dst, 16);
		return XDP_PASS;
	}
	arg->result = FLOW_ROUTE_SAME;
	for (int i = 0; i < 6; i++)
		if (v->eth_dst[i] != fib.dmac[i]) {
			/* A frame sent while the six bytes are half written
			 * goes astray: one frame, as on any route change. */
			__builtin_memcpy(v->eth_dst, fib.dmac, 6);
			arg->result = FLOW_ROUTE_MOVED;
			break;
		}
	return XDP_PASS;
}
