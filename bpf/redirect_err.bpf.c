// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frames XDP redirected that the kernel then dropped, counted as
 * drop_redirect. bpf_redirect_map() only records the target: the kernel
 * checks it after the program returned XDP_REDIRECT (xdp_do_redirect: a
 * device that cannot take XDP frames, such as a veth whose peer has
 * neither an XDP program nor GRO, fails with EOPNOTSUPP) and hands the
 * frames over when the NAPI poll ends (ndo_xdp_xmit, which may drop some).
 * The program never learns of either; the tracepoints xdp_redirect_err
 * and xdp_devmap_xmit do. Counted for the router's network namespace only
 * (the device's netns inode, set at load); the links are pinned next to
 * the maps, so they live as long as they do.
 *
 * No vmlinux.h: the three kernel structs below carry only the fields read,
 * and CO-RE (preserve_access_index) finds them in the running kernel.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "xnat_common.h"

char LICENSE[] SEC("license") = "GPL";

struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct net {
	struct ns_common ns;
} __attribute__((preserve_access_index));

typedef struct {
	struct net *net;
} possible_net_t;

struct net_device {
	possible_net_t nd_net;
} __attribute__((preserve_access_index));

/* The network namespace (inode) of the router, set by the loader. */
const volatile __u32 router_netns = 0;

/* The data path's counters (bpf/maps.h), reused from their pin before
 * load: the definition must match that one. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnat_counter);
	__uint(max_entries, XNAT_REASON_MAX);
} xnat_stats SEC(".maps");

static __always_inline void count_drops(int drops)
{
	__u32 key = XNAT_DROP_REDIRECT;
	struct xnat_counter *c = bpf_map_lookup_elem(&xnat_stats, &key);

	/* Per CPU: no atomics needed. */
	if (c)
		c->packets += drops;
}

/* The redirect failed in xdp_do_redirect: the frame is dropped. */
SEC("tp_btf/xdp_redirect_err")
int BPF_PROG(xnat_redirect_err, const struct net_device *dev,
	     const void *xdp, const void *tgt, int err, int map_type,
	     __u32 map_id, __u32 index)
{
	if (BPF_CORE_READ(dev, nd_net.net, ns.inum) == router_netns)
		count_drops(1);
	return 0;
}

/* The egress device took only SENT of the frames queued for it. */
SEC("tp_btf/xdp_devmap_xmit")
int BPF_PROG(xnat_devmap_xmit, const struct net_device *from_dev,
	     const struct net_device *to_dev, int sent, int drops, int err)
{
	if (drops > 0 &&
	    BPF_CORE_READ(to_dev, nd_net.net, ns.inum) == router_netns)
		count_drops(drops);
	return 0;
}
