#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# End-to-end tests of the router: real traffic between a LAN host and a WAN
# host through xnat in a namespace testbed (lib.sh), in xdp, kernel and
# offload mode, which must behave the same from the hosts' point of view.
# Each test_* function runs in a fresh testbed with xnat already up in the
# mode named in brackets; TEST_MODES narrows a test to one mode.
#
#   tests/integration/test_router.sh [SUBSTRING...]   e.g. tcp ipv6 '[xdp]'
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp                  see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# Ports the tests use on the WAN host and the LAN host. The forwards come
# from the config template (tcp/8080 and udp/5353 to the LAN host).
SRV_PORT=5000
UNSOLICITED_PORTS="$NAT_PORT_MIN 40000 $NAT_PORT_MAX"

# In xdp and offload mode, bulk traffic must have crossed the router in XDP,
# not through the kernel it passes packets to: at least MIN packets on the
# fast path (in offload mode the first packet of each direction XDP carries
# counts as fwd_offload). (Hosts send MTU-sized frames: no TSO with tx
# checksumming off.)
expect_fast_path() {
	local min=$1 fast
	[ "$TB_MODE" = xdp ] || [ "$TB_MODE" = offload ] || return 0
	check xnat stats --json
	fast=$(json_q "j['counters']['fwd_fast']['packets'] + j['counters']['fwd_offload']['packets']" \
		<<<"$CHECK_OUT") || fail "stats --json has no fwd_fast"
	echo "fwd_fast packets: $fast (expected >= $min)"
	[ "$fast" -ge "$min" ] || fail "the transfer did not take the XDP fast path"
}

# Bulk TCP both ways, LAN-initiated: an upload (LAN client sends) and a
# download (LAN client pulls from a server on the WAN host), each 12 MB of
# random bytes checked end to end by sha256.
test_tcp_10mb() {
	random_file "$TB_WORK/up.bin" 12M
	tcp_server_recv "$NS_WAN" $SRV_PORT "$TB_WORK/up.recv" || fail "no server"
	check tcp_send "$NS_LAN" "TCP:$WAN_HOST4:$SRV_PORT" "$TB_WORK/up.bin"
	bg_wait "$BG_PID" || fail "upload server did not finish"
	same_file "$TB_WORK/up.bin" "$TB_WORK/up.recv" || fail "upload corrupted"

	random_file "$TB_WORK/down.bin" 12M
	tcp_server_send "$NS_WAN" $((SRV_PORT + 1)) "$TB_WORK/down.bin" ||
		fail "no server"
	check tcp_recv "$NS_LAN" "TCP:$WAN_HOST4:$((SRV_PORT + 1))" \
		"$TB_WORK/down.recv"
	bg_wait "$BG_PID" || fail "download server did not finish"
	same_file "$TB_WORK/down.bin" "$TB_WORK/down.recv" ||
		fail "download corrupted"
	# 2 x 12 MB in 1448-byte segments is about 17,400 data frames.
	expect_fast_path 16000
}

# One UDP request from the LAN host to an echo server on the WAN host's
# PORT, with TOKEN; its reply is in CHECK_OUT. The server is stopped after,
# the connection stays in the router's tables.
udp_exchange() {
	local port=$1 tok=$2
	echo_server "$NS_WAN" udp "$port" || fail "no server"
	check udp_ask "$NS_LAN" "UDP:$WAN_HOST4:$port" "$tok"
	bg_stop "$BG_PID"
}

# A UDP request from the LAN gets its reply back through the NAT.
test_udp_reply() {
	local tok="xnat-udp-$RANDOM$RANDOM"
	udp_exchange $SRV_PORT "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "expected reply '$tok'"
}

# ICMP echo through the NAT: 5 requests, 5 replies.
test_ping() {
	check on_lan ping -c 5 -i 0.2 -W 2 "$WAN_HOST4"
	grep -q ' 5 received, 0% packet loss' <<<"$CHECK_OUT" ||
		fail "packet loss"
}

# Nothing the WAN host sends unasked reaches the LAN host: neither to the
# router's WAN address on ports of the XDP NAT range, nor straight to the
# LAN host's address (given a route to it, as a neighbour on the WAN could).
test_unsolicited_blocked() {
	local p dst in_before in_after drops connected=""

	# Listeners on the LAN host that must never hear anything, and the
	# host's own count of IPv4 packets delivered to it: ARP and ND are not
	# IPv4, so the count must not move at all.
	for p in $UNSOLICITED_PORTS; do
		bg_ns 30 "$NS_LAN" socat -u "TCP-LISTEN:$p,reuseaddr,fork" \
			"OPEN:$TB_WORK/lan-tcp-$p,creat,append"
		bg_ns 30 "$NS_LAN" socat -u "UDP-RECV:$p,reuseaddr" \
			"OPEN:$TB_WORK/lan-udp-$p,creat,append"
		wait_listen "$NS_LAN" tcp "$p" && wait_listen "$NS_LAN" udp "$p" ||
			fail "no listener"
	done
	in_before=$(ip_in_receives "$NS_LAN")

	check ip -n "$NS_WAN" route add 198.18.1.0/24 via "$RTR_WAN4"
	for p in $UNSOLICITED_PORTS; do
		for dst in $RTR_WAN4 $LAN_HOST4; do
			echo "+ WAN host: TCP connect to $dst:$p must fail"
			timeout 5 ip netns exec "$NS_WAN" socat -u OPEN:/dev/null \
				"TCP:$dst:$p,connect-timeout=1" 2>/dev/null &&
				connected+=" $dst:$p"
			echo "+ WAN host: 3 UDP datagrams to $dst:$p"
			for _ in 1 2 3; do
				echo "unsolicited $dst:$p" | timeout 5 \
					ip netns exec "$NS_WAN" socat -u - \
					"UDP-SENDTO:$dst:$p"
			done
		done
	done
	check ip -n "$NS_WAN" route del 198.18.1.0/24 via "$RTR_WAN4"
	sleep 0.5

	in_after=$(ip_in_receives "$NS_LAN")
	echo "LAN host IPv4 InReceives: before $in_before after $in_after"
	for p in $UNSOLICITED_PORTS; do
		if [ -s "$TB_WORK/lan-tcp-$p" ] || [ -s "$TB_WORK/lan-udp-$p" ]; then
			fail "LAN listener on $p received: $(cat "$TB_WORK"/lan-*-"$p")"
		fi
	done
	[ "$in_before" = "$in_after" ] ||
		fail "$((in_after - in_before)) unsolicited IPv4 packets reached the LAN host"
	[ -z "$connected" ] || fail "TCP connections from the WAN opened to:$connected"

	if [ "$TB_MODE" = xdp ]; then
		check xnat stats --json
		drops=$(json_q "j['counters']['drop_unsolicited']['packets']" \
			<<<"$CHECK_OUT") || fail "stats --json has no drop_unsolicited"
		echo "drop_unsolicited packets: $drops"
		[ "$drops" -gt 0 ] || fail "XDP did not count the unsolicited drops"
	fi
}

# One counter of a namespace's /proc/net/snmp, looked up by name: a header
# line ("Ip: Forwarding DefaultTTL InReceives ...") is followed by a line of
# values in the same order.
snmp_counter() {
	local ns=$1 group=$2 name=$3 file=${4:-/proc/net/snmp}
	# shellcheck disable=SC2016 # awk program, not shell
	ip netns exec "$ns" awk -v g="$group:" -v n="$name" '
		$1 == g && !hdr { for (i = 2; i <= NF; i++) if ($i == n) col = i; hdr = 1; next }
		$1 == g && hdr { print $col; exit }' "$file"
}

# IPv4 packets a host delivered to itself, whatever the protocol.
ip_in_receives() { snmp_counter "$1" Ip InReceives; }

# Port forwards from the config: the WAN host reaches services on the LAN
# host through the router's WAN address, and data round-trips.
test_port_forward() {
	local tok="xnat-fwd-$RANDOM$RANDOM"

	random_file "$TB_WORK/fwd.bin" 1M
	echo_server "$NS_LAN" tcp 80 || fail "no server"
	echo "+ WAN host -> $RTR_WAN4:8080 (echo on $LAN_HOST4:80), 1 MB"
	timeout "$T_XFER" ip netns exec "$NS_WAN" socat -t 5 - \
		"TCP:$RTR_WAN4:8080" <"$TB_WORK/fwd.bin" >"$TB_WORK/fwd.back" ||
		fail "tcp/8080 connection failed"
	same_file "$TB_WORK/fwd.bin" "$TB_WORK/fwd.back" ||
		fail "tcp/8080 data did not round-trip"
	bg_stop "$BG_PID"
	# 1 MB each way is about 1,450 data frames.
	expect_fast_path 1000

	echo_server "$NS_LAN" udp 53 || fail "no server"
	check udp_ask "$NS_WAN" "UDP:$RTR_WAN4:5353" "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "udp/5353: expected reply '$tok'"
	bg_stop "$BG_PID"
}

# IPv6 is routed without NAT through the same path: ping and a bulk TCP
# transfer to the WAN host's v6 address.
test_ipv6() {
	check on_lan ping -6 -c 5 -i 0.2 -W 2 "$WAN_HOST6"
	grep -q ' 5 received, 0% packet loss' <<<"$CHECK_OUT" ||
		fail "packet loss"

	random_file "$TB_WORK/v6.bin" 12M
	tcp_server_recv "$NS_WAN" $SRV_PORT "$TB_WORK/v6.recv" || fail "no server"
	check tcp_send "$NS_LAN" "TCP6:[$WAN_HOST6]:$SRV_PORT" "$TB_WORK/v6.bin"
	bg_wait "$BG_PID" || fail "server did not finish"
	same_file "$TB_WORK/v6.bin" "$TB_WORK/v6.recv" || fail "transfer corrupted"
	# 12 MB in 1428-byte segments is about 8,800 data frames.
	expect_fast_path 8000
}

# TCP segments the host has retransmitted (namespace-wide).
tcp_retrans() { snmp_counter "$1" Tcp RetransSegs; }
# Of those, the ones the receiver reported it already had (D-SACK, RFC
# 2883): spurious, not lost. A tail loss probe (RFC 8985) resends the
# last segment when its ACK is late, as on a loaded machine, lost or not.
tcp_dsack_segs() { snmp_counter "$1" TcpExt TCPDSACKRecvSegs /proc/net/netstat; }
tcp_loss_probes() { snmp_counter "$1" TcpExt TCPLossProbes /proc/net/netstat; }

# `xnat up` on a running router is a hitless reload (xnat(8), up): a paced
# TCP stream crosses five reloads, arrives intact, and loses no segment:
# every retransmission, if any, was of a segment the receiver had (a
# dropped segment's retransmission is never reported as a duplicate).
test_reload_during_transfer() {
	local i pid retr0 retr1 dup0 dup1 tlp0 tlp1 lost

	random_file "$TB_WORK/chunk.bin" 64K
	tcp_server_recv "$NS_WAN" $SRV_PORT "$TB_WORK/stream.recv" ||
		fail "no server"
	retr0=$(tcp_retrans "$NS_LAN")
	dup0=$(tcp_dsack_segs "$NS_LAN")
	tlp0=$(tcp_loss_probes "$NS_LAN")

	# A 64 KiB chunk every 50 ms for at least 2 s and until the reloads
	# are done; what it sent is kept to compare.
	paced_stream "$NS_LAN" "$WAN_HOST4:$SRV_PORT" stream 40 60
	pid=$STREAM_PID
	sleep 1

	for i in 1 2 3 4 5; do
		check xnat up -c "$TB_CONFIG"
		kill -0 "$pid" 2>/dev/null || fail "stream ended during reload $i: $(cat "$TB_WORK/stream.log")"
		sleep 0.5
	done
	rm -f "$STREAM_FLAG"
	bg_wait "$pid" || fail "stream failed: $(cat "$TB_WORK/stream.log")"
	bg_wait "$BG_PID" || fail "server did not finish"
	same_file "$TB_WORK/stream.sent" "$TB_WORK/stream.recv" ||
		fail "stream corrupted across reloads"

	retr1=$(tcp_retrans "$NS_LAN")
	dup1=$(tcp_dsack_segs "$NS_LAN")
	tlp1=$(tcp_loss_probes "$NS_LAN")
	lost=$(((retr1 - retr0) - (dup1 - dup0)))
	echo "LAN host during the stream: $((retr1 - retr0)) retransmissions" \
		"($((tlp1 - tlp0)) loss probes), $((dup1 - dup0)) reported" \
		"duplicate by the receiver: $lost lost"
	[ "$lost" -le 0 ] ||
		fail "segments were lost across reloads (retransmitted, not duplicates)"
	# The stream stayed in XDP across the reloads, and the counters (in
	# maps that outlive each xnat process) kept counting: one packet per
	# 1448 bytes sent (less 10 % for what the kernel may take).
	expect_fast_path $(($(stat -c %s "$TB_WORK/stream.sent") * 9 / 10 / 1448))
}

# `xnat down` removes everything xnat created (xnat(8), down): no XDP program
# on any router interface, no nft table, no pins, no state, sysctls back.
test_down_clean() {
	local tok=xnat-down-$RANDOM before after

	# Some state first, so there is something to remove.
	udp_exchange $SRV_PORT "$tok"

	# What down must remove is there now, or the checks below prove
	# nothing.
	check ip -n "$NS_RTR" -d link show
	if [ "$TB_MODE" != kernel ]; then
		grep -q xdp <<<"$CHECK_OUT" || fail "no XDP program attached while up"
		[ -d "/sys/fs/bpf/xnat/$TB_RTR_INO" ] ||
			fail "no pin directory /sys/fs/bpf/xnat/$TB_RTR_INO while up"
	fi
	check on_rtr nft list tables
	grep -qw xnat <<<"$CHECK_OUT" || fail "no nft table xnat while up"

	check xnat down

	check ip -n "$NS_RTR" -d link show
	grep -q xdp <<<"$CHECK_OUT" && fail "an XDP program is still attached"
	check on_rtr nft list tables
	grep -qw xnat <<<"$CHECK_OUT" && fail "nft table xnat is still there"
	# /sys/fs/bpf is not mounted under `ip netns exec`: look from here.
	[ -e "/sys/fs/bpf/xnat/$TB_RTR_INO" ] &&
		fail "pins left: $(find "/sys/fs/bpf/xnat/$TB_RTR_INO")"
	[ -e "/run/xnat/$TB_RTR_INO" ] &&
		fail "state left: $(find "/run/xnat/$TB_RTR_INO")"

	before=$(cat "$TB_WORK/ip_forward.before")
	after=$(on_rtr sysctl -n net.ipv4.ip_forward)
	echo "net.ipv4.ip_forward: before up $before, after down $after"
	[ "$before" = "$after" ] || fail "ip_forward not restored"
	return 0
}

# `status --json` parses and says what is running.
test_status_json() {
	local ifs

	check xnat status --json
	json_q 'j' <<<"$CHECK_OUT" >/dev/null || fail "status --json is not JSON"
	[ "$(json_q "j['up']" <<<"$CHECK_OUT")" = true ] || fail "not up"
	[ "$(json_q "j['mode']" <<<"$CHECK_OUT")" = "$TB_MODE" ] ||
		fail "mode is not $TB_MODE"
	if [ "$TB_MODE" != kernel ]; then
		ifs=$(json_q "sorted(i['name'] for i in j['interfaces'] if i.get('prog_id', 0) > 0)" \
			<<<"$CHECK_OUT") || fail "no interfaces"
		[ "$ifs" = '["lan0", "wan0"]' ] ||
			fail "expected programs on lan0 and wan0, got $ifs"
	fi
}

# The global -n/--netns option goes before or after the command, and the
# state is found again from inside the namespace (`ip netns exec`).
test_netns_option() {
	local form
	for form in "-n $NS_RTR status --json" "status --json -n $NS_RTR" \
		    "--netns $NS_RTR status --json" "status --json --netns $NS_RTR"; do
		# shellcheck disable=SC2086 # word splitting wanted
		check timeout "$T_XNAT" "$XNAT" $form
		[ "$(json_q "j['mode']" <<<"$CHECK_OUT")" = "$TB_MODE" ] ||
			fail "xnat $form: mode is not $TB_MODE"
	done
	check timeout "$T_XNAT" ip netns exec "$NS_RTR" "$XNAT" status --json
	[ "$(json_q "j['up']" <<<"$CHECK_OUT")" = true ] &&
	[ "$(json_q "j['mode']" <<<"$CHECK_OUT")" = "$TB_MODE" ] ||
		fail "under ip netns exec: not up in mode $TB_MODE"
}

# XDP only: `xnat status` shows the sweeper's expiry queue (bpf/sweep.h):
# a UDP connection XDP made is queued, the capacity is [flows] max and a
# quarter more, plus 64 (user/loader.c), and the text says the same.
# shellcheck disable=SC2034 # TEST_MODES is read by lib.sh
TEST_MODES[sweep_status]=xdp
test_sweep_status() {
	local tok="xnat-sweep-$RANDOM" q max conns

	udp_exchange $((SRV_PORT + 3)) "$tok"
	check xnat status --json
	q=$(json_q "j['sweep']['queued']" <<<"$CHECK_OUT") ||
		fail "no sweep.queued in status --json"
	max=$(json_q "j['sweep']['max']" <<<"$CHECK_OUT") || fail "no sweep.max"
	json_q "j['sweep']['ended']" <<<"$CHECK_OUT" >/dev/null ||
		fail "no sweep.ended"
	conns=$(json_q "j['flows']['max_connections']" <<<"$CHECK_OUT")
	echo "sweep: $q queued of $max; $conns connections at most"
	[ "$q" -ge 1 ] && [ "$q" -le "$max" ] ||
		fail "the UDP connection is not queued ($q of $max)"
	[ "$max" -eq $((conns + conns / 4 + 64)) ] ||
		fail "queue capacity $max, expected $((conns + conns / 4 + 64))"
	check xnat status
	grep -Eq "^sweep: +[0-9]+ of $max queued for expiry .*pass_table_full" \
		<<<"$CHECK_OUT" || fail "no sweep line in status"
}

# XDP only: after TCP and UDP traffic the counters show both paths (the first
# packet of a flow takes the slow path, the rest the fast path), and the flow
# table lists the LAN host's connection as SNAT while it is open.
# shellcheck disable=SC2034,SC2154 # TEST_MODES is read by lib.sh
TEST_MODES[xdp_counters]=xdp
test_xdp_counters() {
	local tok="xnat-cnt-$RANDOM" fast slow

	random_file "$TB_WORK/c.bin" 2M
	tcp_server_recv "$NS_WAN" $SRV_PORT "$TB_WORK/c.recv" || fail "no server"
	check tcp_send "$NS_LAN" "TCP:$WAN_HOST4:$SRV_PORT" "$TB_WORK/c.bin"
	bg_wait "$BG_PID"
	same_file "$TB_WORK/c.bin" "$TB_WORK/c.recv" || fail "transfer corrupted"

	udp_exchange $((SRV_PORT + 1)) "$tok"

	check xnat stats --json
	fast=$(json_q "j['counters']['fwd_fast']['packets']" <<<"$CHECK_OUT") ||
		fail "no fwd_fast counter"
	slow=$(json_q "j['counters']['fwd_slow']['packets']" <<<"$CHECK_OUT") ||
		fail "no fwd_slow counter"
	echo "fwd_fast $fast, fwd_slow $slow"
	[ "$fast" -gt 0 ] || fail "nothing took the fast path"
	[ "$slow" -gt 0 ] || fail "nothing took the slow path"

	# An open TCP connection (socat waits on stdin) to look for in the
	# flow table.
	tcp_server_recv "$NS_WAN" $((SRV_PORT + 2)) "$TB_WORK/idle.recv" ||
		fail "no server"
	timeout 20 ip netns exec "$NS_LAN" socat -u EXEC:"sleep 8" \
		"TCP:$WAN_HOST4:$((SRV_PORT + 2))" </dev/null >/dev/null 2>&1 &
	echo $! >>"$TB_WORK/pids"
	sleep 1
	check xnat flows --json
	json_q "[f for f in j['flows'] if f['nat'] == 'snat' and f['proto'] == 'tcp'
		 and f['src'].startswith('$LAN_HOST4:')
		 and f['dst'] == '$WAN_HOST4:$((SRV_PORT + 2))'
		 and f['new_src'].startswith('$RTR_WAN4:')][0]" <<<"$CHECK_OUT" ||
		fail "no snat flow $LAN_HOST4 -> $WAN_HOST4:$((SRV_PORT + 2))"
	json_q "[f for f in j['flows'] if f['nat'] == 'snat' and f['proto'] == 'udp'][0]" \
		<<<"$CHECK_OUT" || fail "no udp snat flow"
}

run_tests "$@"
