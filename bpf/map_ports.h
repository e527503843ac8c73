/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The router's ports, one definition for the programs that read them: the
 * data path (maps.h) and the flow control program (flow_ctl.bpf.c), which
 * routes a flow again when a route changes and userspace loads reusing the
 * data path's pinned maps, so the two definitions must match.
 */
#ifndef XNAT_MAP_PORTS_H
#define XNAT_MAP_PORTS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xnat_common.h"

/* Interfaces xnat runs on, by ifindex, with their role. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct iface_info);
	__uint(max_entries, XNAT_MAX_IFACES);
} xnat_ifaces SEC(".maps");

/* VLAN devices among the router's ports, by (physical port, VLAN id):
 * tagged frames are routed as arriving on that device. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct vlan_key);
	__type(value, __u32);
	__uint(max_entries, XNAT_MAX_IFACES);
} xnat_vlans SEC(".maps");

/* Redirect targets: the physical ports, for bpf_redirect_map(), which
 * batches transmits per flush unlike bpf_redirect(). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, XNAT_MAX_IFACES);
} xnat_tx_ports SEC(".maps");

/* The kernel's device for a frame on physical port IFINDEX with VLAN id
 * VID (0: untagged, the port itself): the VLAN device of ours, or 0 when
 * xnat has none there. */
static __always_inline __u32 port_device(__u32 ifindex, __u16 vid)
{
	struct vlan_key vk = { .ifindex = ifindex, .vid = vid };
	__u32 *dev;

	if (!vid)
		return ifindex;
	dev = bpf_map_lookup_elem(&xnat_vlans, &vk);
	return dev ? *dev : 0;
}

#endif /* XNAT_MAP_PORTS_H */
