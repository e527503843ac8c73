#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# [router] mss_clamp end to end, in every mode (kernel and offload: the nft
# chain mss_clamp, user/kernel_mode.c; xdp: bpf/mss.h on the SYNs XDP
# forwards), on the namespace testbed (lib.sh). The hosts run at MTU 1500
# and announce MSS 1460 (IPv6 1440); what the far side's SYN or SYN-ACK
# carries is read off the wire there (synwatch.py), with its TCP checksum
# verified from scratch:
#   - lan_port: the router's LAN port at MTU 1400 (the "LAN MTU smaller"
#     case of test_harden.sh): the WAN server sees 1360, over IPv6 1340;
#   - port_forward: the same port, a WAN client through tcp/8080: the LAN
#     server's SYN and the client's SYN-ACK both carry 1360;
#   - fixed: mss_clamp = 1200 at MTU 1500: 1200, over IPv6 1180;
#   - off: the LAN port at 1400, nothing clamped: 1460.
# Each connection also carries data both ways, so a checksum the hosts
# would refuse fails the test twice.
#
#   tests/integration/test_mss.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

SYNWATCH=$XNAT_ROOT/tests/integration/synwatch.py

# Watch what NS receives on its port to or from PORT until each KIND
# ("v4 syn", "v6 synack"...) was seen; the log's name goes to WATCH_LOG.
syn_watch() {
	local ns=$1 port=$2
	shift 2
	bg_ns 15 "$ns" python3 "$SYNWATCH" "$HOST_IF" "$port" 12 "$@"
	WATCH_LOG=$TB_WORK/bg.$TB_BG_N.log
	WATCH_PID=$BG_PID
	wait_log "$WATCH_LOG" '^ready$' || fail "synwatch did not start"
}

# The watcher saw KIND with MSS WANT and a valid checksum.
expect_mss() {
	local kind=$1 want=$2
	bg_wait "$WATCH_PID" >/dev/null
	echo "seen: $(grep -v '^ready' "$WATCH_LOG" | tr '\n' ';')"
	grep -qx "$kind mss $want csum ok" "$WATCH_LOG" ||
		fail "expected '$kind mss $want csum ok'"
}

# One TCP exchange from NS to ADDRESS (socat form) with an echo server.
exchange() {
	local ns=$1 addr=$2 out
	out=$(printf 'mss-test\n' | timeout 8 ip netns exec "$ns" socat -t 2 - "$addr")
	[ "$out" = mss-test ] || fail "no echo through $addr (got '$out')"
}

# In xdp mode the SYN must have been XDP's to clamp, not the kernel's.
xdp_slow_count() {
	[ "$TB_MODE" = xdp ] || { echo 0; return; }
	counter fwd_slow
}

expect_xdp_took() {
	local before=$1 after
	[ "$TB_MODE" = xdp ] || return 0
	after=$(counter fwd_slow) || fail "no fwd_slow counter"
	echo "fwd_slow: $before before, $after after"
	[ "$after" -gt "$before" ] || fail "XDP did not forward the SYN"
}

# A connection from the LAN host to the WAN server's PORT through ADDRESS
# (socat form): the server sees the SYN as KIND with MSS WANT, and in xdp
# mode XDP forwarded it.
lan_syn_mss() {
	local port=$1 kind=$2 addr=$3 want=$4 n0

	echo_server "$NS_WAN" tcp "$port" || fail "no server"
	n0=$(xdp_slow_count) || fail "no fwd_slow counter"
	syn_watch "$NS_WAN" "$port" "$kind"
	exchange "$NS_LAN" "$addr"
	expect_mss "$kind" "$want"
	expect_xdp_took "$n0"
}

test_lan_port() {
	check ip -n "$NS_RTR" link set "$RTR_LAN_IF" mtu 1400
	lan_syn_mss 5000 "v4 syn" "TCP:$WAN_HOST4:5000" 1360
	lan_syn_mss 5001 "v6 syn" "TCP6:[$WAN_HOST6]:5001" 1340
}

test_port_forward() {
	local lan_log n0

	check ip -n "$NS_RTR" link set "$RTR_LAN_IF" mtu 1400
	echo_server "$NS_LAN" tcp 80 || fail "no server"
	n0=$(xdp_slow_count) || fail "no fwd_slow counter"
	syn_watch "$NS_LAN" 80 "v4 syn"
	lan_log=$WATCH_LOG
	syn_watch "$NS_WAN" 8080 "v4 synack"
	exchange "$NS_WAN" "TCP:$RTR_WAN4:8080"
	expect_mss "v4 synack" 1360
	WATCH_LOG=$lan_log
	expect_mss "v4 syn" 1360
	# The kernel's fallback NAT clamps too: only the counter tells whose
	# clamp the hosts saw.
	expect_xdp_took "$n0"
}

test_fixed() {
	config_add router mss_clamp 1200
	check xnat up -c "$TB_CONFIG"
	lan_syn_mss 5000 "v4 syn" "TCP:$WAN_HOST4:5000" 1200
	lan_syn_mss 5001 "v6 syn" "TCP6:[$WAN_HOST6]:5001" 1180
}

test_off() {
	config_add router mss_clamp off
	check xnat up -c "$TB_CONFIG"
	check ip -n "$NS_RTR" link set "$RTR_LAN_IF" mtu 1400
	lan_syn_mss 5000 "v4 syn" "TCP:$WAN_HOST4:5000" 1460
}

run_tests "$@"
