// SPDX-License-Identifier: GPL-2.0-only
/*
 * What each counter means. Sync note: one entry per enum xnat_reason in
 * bpf/xnat_common.h, indexed by it; a reason without a name or a meaning
 * fails the unit test reasons_named (tests/unit/test_reasons.c).
 */
#include "reasons.h"

const struct reason_desc reasons[XNAT_REASON_MAX] = {
	[XNAT_FWD_FAST] = { "fwd_fast", "forwarded on the fast path (flow table hit)" },
	[XNAT_FWD_SLOW] = { "fwd_slow", "new flow: routed, NATed, installed, forwarded" },
	[XNAT_FWD_ROUTED] = { "fwd_routed", "forwarded, routed again (fast path off)" },
	[XNAT_FWD_ICMP_ERROR] = { "fwd_icmp_error", "ICMP error about a flow, translated and forwarded" },
	[XNAT_PASS_NOT_IP] = { "pass_not_ip", "to kernel: not IP (ARP, LLDP...)" },
	[XNAT_PASS_OTHERHOST] = { "pass_otherhost", "to kernel: unicast IP in a frame not for our MAC (kernel drops)" },
	[XNAT_PASS_MARTIAN] = { "pass_martian", "to kernel: martian address, RFC 1812 (kernel drops)" },
	[XNAT_PASS_VLAN] = { "pass_vlan", "to kernel: 802.1Q tagged, for its VLAN device" },
	[XNAT_PASS_LOCAL] = { "pass_local", "to kernel: for the router itself, link-local or multicast" },
	[XNAT_PASS_IP_OPTIONS] = { "pass_ip_options", "to kernel: IPv4 options" },
	[XNAT_PASS_FRAGMENT] = { "pass_fragment", "to kernel: IP fragment" },
	[XNAT_PASS_TTL] = { "pass_ttl", "to kernel: TTL/hop limit expires here (ICMP time exceeded)" },
	[XNAT_PASS_PROTO] = { "pass_proto", "to kernel: not TCP, UDP or ICMP echo" },
	[XNAT_PASS_NO_ROUTE] = { "pass_no_route", "to kernel: no route (ICMP unreachable)" },
	[XNAT_PASS_NO_NEIGH] = { "pass_no_neigh", "to kernel: next hop MAC unknown, kernel resolves it" },
	[XNAT_PASS_MTU] = { "pass_mtu", "to kernel: bigger than the egress MTU" },
	[XNAT_PASS_EGRESS] = { "pass_egress", "to kernel: ingress or egress port is not xnat's" },
	[XNAT_PASS_KERNEL_FLOW] = { "pass_kernel_flow", "to kernel: its conntrack owns this flow" },
	[XNAT_PASS_TCP_MIDSTREAM] = { "pass_tcp_midstream", "to kernel: TCP without SYN and without a flow" },
	[XNAT_PASS_TABLE_FULL] = { "pass_table_full", "to kernel: flow table full, kernel NAT takes it" },
	[XNAT_PASS_NO_PORT] = { "pass_no_port", "to kernel: no free XDP NAT port" },
	[XNAT_PASS_NO_NAT_ADDR] = { "pass_no_nat_addr", "to kernel: WAN address not known yet" },
	[XNAT_PASS_WAN_IN] = { "pass_wan_in", "to kernel: from WAN to a kernel port of the router" },
	[XNAT_DROP_MALFORMED] = { "drop_malformed", "dropped: truncated or inconsistent headers" },
	[XNAT_DROP_UNSOLICITED] = { "drop_unsolicited", "dropped: from WAN, no flow, no port forward" },
	[XNAT_DROP_FILTERED] = { "drop_filtered", "dropped: from WAN to a mapping, sender never contacted (address-dependent filtering)" },
	[XNAT_DROP_REDIRECT] = { "drop_redirect", "dropped: egress port refused the frame" },
	[XNAT_PASS_INSERT_RACE] = { "pass_insert_race", "to kernel: another CPU created the same flow or mapping at that moment; the next packet hits" },
	[XNAT_PASS_INTERNAL] = { "pass_internal", "to kernel: the config or per-CPU scratch map lookup failed (a loader bug)" },
	[XNAT_PASS_ECHO_REPLY] = { "pass_echo_reply", "to kernel: ICMP echo reply from a LAN without a flow (a ping XDP never forwarded)" },
	[XNAT_FWD_OFFLOAD] = { "fwd_offload", "offload: connection the kernel accepted put on the fast path, forwarded" },
	[XNAT_PASS_CT_PROTO] = { "pass_ct_proto", "offload, to kernel: not TCP or UDP (ICMP...), or an ICMP error" },
	[XNAT_PASS_CT_NONE] = { "pass_ct_none", "offload, to kernel: no conntrack entry (a new connection)" },
	[XNAT_PASS_CT_UNCONFIRMED] = { "pass_ct_unconfirmed", "offload, to kernel: conntrack entry not confirmed yet" },
	[XNAT_PASS_CT_UNMARKED] = { "pass_ct_unmarked", "offload, to kernel: ruleset has not accepted this direction (yet, or again)" },
	[XNAT_PASS_CT_TCP_STATE] = { "pass_ct_tcp_state", "offload, to kernel: TCP handshake, teardown or not established" },
	[XNAT_PASS_CT_HELPER] = { "pass_ct_helper", "offload, to kernel: helper, sequence adjustment or flowtable" },
	[XNAT_PASS_SHAPED] = { "pass_shaped", "offload, to kernel: egress port shaped by its qdisc" },
	[XNAT_PASS_CT_TCP_END] = { "pass_ct_tcp_end", "offload hand-back: FIN/RST/SYN, the flow leaves the fast path" },
	[XNAT_PASS_CT_GONE] = { "pass_ct_gone", "offload hand-back: conntrack entry gone or changed, flow leaves the fast path" },
	[XNAT_FWD_SLOW_EDM] = { "fwd_slow_edm", "new flow NATed with an endpoint-dependent port: its endpoint could get no port of its own (docs/NAT.md)" },
	[XNAT_DROP_HOST_LIMIT] = { "drop_host_limit", "dropped: new flow of an inside host that holds [nat] ports_per_host ports" },
	[XNAT_DROP_NO_PORT] = { "drop_no_port", "dropped: new flow without any free NAT port, beyond what may go to the kernel's NAT" },
};
