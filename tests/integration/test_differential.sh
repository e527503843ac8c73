#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The differential test: the same traffic through `mode = xdp` and
# `mode = kernel` on one testbed, and what reaches the far side compared.
# difftraffic.py sends a fixed script of raw frames from the LAN host and
# the WAN host (normal TCP/UDP/ICMP both ways over IPv4 and IPv6, port
# forwards, fragments in and out of order, TTL 1, IP options, replies too
# big for a lowered LAN MTU with and without DF, UDP without
# checksum, an out-of-window RST, bad IP/UDP/TCP checksums, truncated and
# inconsistent headers, unsolicited and spoofed inbound traffic, IPv6 from
# the WAN to a LAN host, SYNs whose MSS the router clamps, an ICMP error
# about a flow), the WAN host answering as a server would, and
# captures everything both hosts receive, normalized so that only what a
# NAT may choose (ports, sequence numbers) is abstracted. The run in kernel
# mode is the reference. Every step on which the modes differ must be
# listed, with its reason, in docs/NAT.md ("Where kernel and xdp mode
# differ"); any other difference fails. The kernel run must also show
# what the testbed promises (normal traffic arrives, unsolicited traffic
# never reaches the LAN), so two equally broken runs cannot agree.
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

TEST_MODES[differential]="xdp"

# ICMP errors are rate limited per destination (1/s by default): with
# several steps a second, which of them the kernel answers would depend on
# timing, not on the mode.
diff_no_icmp_ratelimit() {
	for ns in "$NS_LAN" "$NS_RTR" "$NS_WAN"; do
		on "$ns" sysctl -qw net.ipv4.icmp_ratelimit=0 \
			net.ipv6.icmp.ratelimit=0 || return 1
		on "$ns" sysctl -qw net.ipv4.icmp_msgs_per_sec=100000 \
			net.ipv4.icmp_msgs_burst=100000 >/dev/null 2>&1
	done
	return 0
}

diff_run() {
	local out=$1 lanmac wanmac
	lanmac=$(on_rtr cat "/sys/class/net/$RTR_LAN_IF/address") &&
	wanmac=$(on_rtr cat "/sys/class/net/$RTR_WAN_IF/address") || return 1
	timeout 120 python3 "$XNAT_ROOT/tests/integration/difftraffic.py" run \
		"$NS_LAN" "$NS_RTR" "$NS_WAN" "$lanmac" "$wanmac" "$out"
}

test_differential() {
	local k=$TB_WORK/kernel.json x=$TB_WORK/xdp.json ns
	check diff_no_icmp_ratelimit
	check diff_run "$x"
	check xnat stats
	check xnat down
	# Connections the XDP run taught the kernel must not help the
	# kernel run.
	check on_rtr conntrack -F
	# Nor the path MTUs it taught the hosts (the WAN host learns 1400
	# towards the NAT address): they would lower the MSS the hosts
	# announce in the kernel run, which the steps now compare.
	for ns in "$NS_LAN" "$NS_WAN"; do
		check on "$ns" ip route flush cache
		check on "$ns" ip -6 route flush cache
	done
	check router_up kernel
	check diff_run "$k"
	# DIFF_KEEP=DIR keeps both runs' arrivals for a closer look.
	[ -n "${DIFF_KEEP:-}" ] && cp "$k" "$x" "$DIFF_KEEP/"
	python3 "$XNAT_ROOT/tests/integration/difftraffic.py" compare "$k" "$x" \
		"$XNAT_ROOT/docs/NAT.md" ||
		fail "kernel and xdp mode differ beyond docs/NAT.md's list"
}

run_tests "$@"
