#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# [ipv6] inbound end to end, in every mode (kernel and offload: the forward
# chain of user/kernel_mode.c; xdp: bpf/slowpath.h slow_in6, then the same
# chain for what XDP passes up), on the namespace testbed (lib.sh). IPv6 is
# routed: the WAN host can address the LAN host (docs/NAT.md).
#   - tcp_refused: stateful (the default), a WAN host's TCP connection to
#     a listening LAN host is refused (silently dropped);
#   - tcp_open: with "open" it is accepted, and so is UDP;
#   - echo: stateful lets the WAN host's echo requests in (RFC 4890 4.3.1);
#   - ptb: stateful lets in a "packet too big" about a flow the LAN host
#     opened (the LAN host learns the MTU), not one about no flow.
#
#   tests/integration/test_inbound6.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ICMP6=$XNAT_ROOT/tests/integration/icmp6.py
# An address beyond the WAN host that the LAN host never sent to.
NO_FLOW6=2001:2:0:2::99

inbound_open() {
	config_add ipv6 inbound open
	check xnat up -c "$TB_CONFIG"
}

# A TCP exchange from the WAN host to the LAN host's echo server; prints
# what came back (empty when the connection failed).
tcp_in() {
	printf 'inbound6\n' | timeout 8 ip netns exec "$NS_WAN" \
		socat -t 2 - "TCP6:[$LAN_HOST6]:$1,connect-timeout=3" 2>&1
}

test_tcp_refused() {
	local out
	echo_server "$NS_LAN" tcp 7000 || fail "no server"
	out=$(tcp_in 7000)
	echo "WAN host's connection: $out"
	[ "$out" = inbound6 ] && fail "a WAN host reached a LAN host's TCP port"
	grep -qi "timed out\|refused\|unreachable" <<<"$out" ||
		fail "no connection error: $out"
	# The LAN host's own connection out still works.
	echo_server "$NS_WAN" tcp 7001 || fail "no WAN server"
	out=$(printf 'out\n' | timeout 8 ip netns exec "$NS_LAN" socat -t 2 - \
		"TCP6:[$WAN_HOST6]:7001")
	[ "$out" = out ] || fail "the LAN host's own connection failed: $out"
}

test_tcp_open() {
	local out
	inbound_open
	echo_server "$NS_LAN" tcp 7000 || fail "no server"
	out=$(tcp_in 7000)
	echo "WAN host's connection: $out"
	[ "$out" = inbound6 ] || fail "open: the WAN host's connection failed"
	echo_server "$NS_LAN" udp 7002 || fail "no UDP server"
	out=$(udp_ask "$NS_WAN" "UDP6:[$LAN_HOST6]:7002" inbound6udp)
	[ "$out" = inbound6udp ] || fail "open: no UDP answer ($out)"
}

test_echo() {
	local out
	out=$(on_wan python3 "$ICMP6" echo "$LAN_HOST6" 0x5151)
	echo "echo request from the WAN: $out"
	[ "$out" = reply ] || fail "stateful: the LAN host did not answer a WAN ping"
}

test_ptb() {
	local out n0=0 n1

	out=$(on_lan python3 "$ICMP6" echo "$WAN_HOST6" 0x4242)
	[ "$out" = reply ] || fail "the LAN host's ping got no reply"
	[ "$TB_MODE" = xdp ] && { n0=$(counter fwd_icmp_error) || fail "no counter"; }
	check on_wan python3 "$ICMP6" ptb "$LAN_HOST6" "$LAN_HOST6" "$WAN_HOST6" 0x4242 1300
	check on_wan python3 "$ICMP6" ptb "$LAN_HOST6" "$LAN_HOST6" "$NO_FLOW6" 0x4343 1300
	sleep 0.5
	check on_lan ip -6 route get "$WAN_HOST6"
	grep -q "mtu 1300" <<<"$CHECK_OUT" ||
		fail "packet too big about the LAN host's flow did not arrive"
	check on_lan ip -6 route get "$NO_FLOW6"
	grep -q "mtu 1300" <<<"$CHECK_OUT" &&
		fail "packet too big about no flow reached the LAN host"
	if [ "$TB_MODE" = xdp ]; then
		n1=$(counter fwd_icmp_error) || fail "no counter"
		echo "fwd_icmp_error: $n0 before, $n1 after"
		[ "$n1" -gt "$n0" ] || fail "XDP did not forward the error"
	fi
}

run_tests "$@"
