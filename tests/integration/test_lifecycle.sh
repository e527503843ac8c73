#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The life of flows and of the router's state, end to end in the namespace
# testbed (lib.sh): flows expire after their configured idle timeouts (and an
# established TCP connection does not), the kernel's conntrack gets the same
# timeouts (DNS's own too) and gets its own back on `xnat down`, a full flow table hands new
# connections to the kernel without hurting the ones it holds, malformed
# frames never get through, and a TCP segment without a flow goes up.
#
# Short timeouts come from a variant of the test's config written to TB_WORK
# and applied with another `xnat up -c FILE` (a reload in place).
#
#   tests/integration/test_lifecycle.sh [SUBSTRING...]   e.g. expiry '[xdp]'
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp                     see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

RAWPKT=$XNAT_ROOT/tests/integration/rawpkt.py
SRV_PORT=5000

# ---- helpers ----------------------------------------------------------------

# MAC address of interface IF in namespace NS.
ns_mac() {
	ip -n "$1" link show "$2" | awk '$1 == "link/ether" { print $2; exit }'
}

# Python condition: an entry of the connection between the LAN host (any
# port, or SPORT) and HOST:PORT, either direction.
conn_cond() {
	local peer=$1 sport=${2:-}
	echo "(f['dst'] == '$peer' and f['src'].startswith('$LAN_HOST4:$sport')) or" \
	     "(f['src'] == '$peer' and f['new_dst'].startswith('$LAN_HOST4:$sport'))"
}

# One UDP request from NS to HOST:PORT that returns as soon as the reply is
# in (socat would wait out its -t): the time of the exchange is known to a
# few milliseconds. Prints the reply.
udp_ask_now() {
	timeout 5 ip netns exec "$1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect((sys.argv[1], int(sys.argv[2])))
s.send(sys.argv[3].encode())
print(s.recv(2048).decode())
' "$2" "$3" "$4"
}

# A UDP request from NS to ADDR (socat UDP:host:port) sent from source port
# SPORT; prints the reply.
udp_ask_from() {
	local ns=$1 addr=$2 sport=$3 msg=$4
	printf '%s\n' "$msg" |
		timeout 5 ip netns exec "$ns" socat -t 0.5 - \
			"UDP:$addr,sourceport=$sport,reuseaddr"
}

# UDP echo server for any number of peers (socat's UDP-LISTEN serves one),
# IPv4, in the background for at most SECS.
udp_echo_multi() {
	local ns=$1 port=$2 secs=$3
	bg_ns "$secs" "$ns" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
while True:
    d, a = s.recvfrom(65535)
    s.sendto(d, a)
' "$port"
	wait_listen "$ns" udp "$port"
}

# One look at `xnat flows` for wait_flows_gone. Each condition of
# FLOWS_CONDS that still matches gets the time the look began in SEEN_MS
# (the entries were there after it); each that matches nothing any more,
# the time the look ended in GONE_MS (they had gone by then: however slow
# the look, never too early a time), kept from the first such look, as
# with no traffic a flow does not come back. All conditions in one Python
# (its start is most of a look's time): the looks come as often as they
# can. Succeeds once all are gone.
flows_gone_look() {
	local i t_begin t_end out counts=() lens="" cond left=0
	t_begin=$(now_ms)
	out=$(xnat flows --json) || return 1
	t_end=$(now_ms)
	for cond in "${FLOWS_CONDS[@]}"; do
		lens+="len([f for f in j['flows'] if $cond]), "
	done
	read -ra counts <<<"$(json_q "' '.join(map(str, [$lens]))" <<<"$out")"
	[ "${#counts[@]}" -eq "${#FLOWS_CONDS[@]}" ] || return 1
	for i in "${!FLOWS_CONDS[@]}"; do
		[ "${GONE_MS[i]}" -eq 0 ] || continue
		if [ "${counts[i]}" -eq 0 ]; then
			GONE_MS[i]=$t_end
		else
			SEEN_MS[i]=$t_begin
			left=1
		fi
	done
	return "$left"
}

# Poll `xnat flows` until no entry matches any of the Python conditions
# COND..., for about LIMIT_MS after the time T0 (ms). All are watched from
# the first look on: waited for one after another, a flow that went early
# would hide behind the wait for the one before it. GONE_MS[i] is when
# COND i was first seen to match nothing, SEEN_MS[i] the last time it
# still matched (0: never); see flows_gone_look.
wait_flows_gone() {
	local t0=$1 limit=$2
	shift 2
	FLOWS_CONDS=("$@") GONE_MS=() SEEN_MS=()
	for _ in "$@"; do
		GONE_MS+=(0)
		SEEN_MS+=(0)
	done
	wait_until $(((limit - ($(now_ms) - t0)) / 1000 + 1)) flows_gone_look
}

# ", last seen N ms after T0" for wait_flows_gone's SEEN_MS entry SEEN;
# nothing if no look saw the entries (the first found them gone).
seen_since() {
	[ "$1" -eq 0 ] || echo ", last seen $(($1 - $2)) ms after it"
}

# ---- tests --------------------------------------------------------------------

# UDP and ICMP echo flows expire after their own idle timeouts (5 s and
# 2 s here): they are in the table right after the traffic, still there
# until their timeout has passed, and gone within 15 s. The timeouts
# differ, so that a UDP flow that went by the ICMP timeout fails too, and
# the UDP one is long against the second or so a look at the table takes
# on a loaded machine (the look's Python), so that several looks fall
# within it.
# shellcheck disable=SC2034,SC2154 # TEST_MODES is read by lib.sh
TEST_MODES[expiry_udp_icmp]=xdp
test_expiry_udp_icmp() {
	local tok="xnat-exp-$RANDOM" t_icmp t_udp n_udp n_icmp cond_udp cond_icmp
	local gone_udp gone_icmp udp_s=5 icmp_s=2

	reload_with short timeouts.udp=$udp_s timeouts.icmp=$icmp_s
	echo_server "$NS_WAN" udp $SRV_PORT || fail "no server"

	# The ping last, right before the first look: its timeout is the
	# shorter one.
	check udp_ask_now "$NS_LAN" "$WAN_HOST4" $SRV_PORT "$tok"
	t_udp=$(now_ms)
	[ "$CHECK_OUT" = "$tok" ] || fail "expected UDP reply '$tok'"
	check on_lan ping -c 1 -W 2 "$WAN_HOST4"
	t_icmp=$(now_ms)

	cond_udp="f['proto'] == 'udp' and ($(conn_cond "$WAN_HOST4:$SRV_PORT"))"
	cond_icmp="f['proto'] == 'icmp' and (f['dst'].startswith('$WAN_HOST4:') or f['src'].startswith('$WAN_HOST4:'))"
	check xnat flows --json
	echo "right after the traffic: the table as it was $(($(now_ms) - t_icmp)) ms after the ping at the latest"
	n_udp=$(json_q "len([f for f in j['flows'] if $cond_udp])" <<<"$CHECK_OUT")
	n_icmp=$(json_q "len([f for f in j['flows'] if $cond_icmp])" <<<"$CHECK_OUT")
	echo "$n_udp udp, $n_icmp icmp entries"
	[ "$n_udp" -eq 2 ] || fail "expected 2 udp entries (orig, reply), got $n_udp"
	[ "$n_icmp" -eq 2 ] || fail "expected 2 icmp entries (orig, reply), got $n_icmp"

	if ! wait_flows_gone "$t_udp" 15000 "$cond_icmp" "$cond_udp"; then
		((GONE_MS[0])) ||
			fail "icmp flow still there $(($(now_ms) - t_icmp)) ms after the ping (timeout $icmp_s s)"
		fail "udp flow still there $(($(now_ms) - t_udp)) ms after the exchange (timeout $udp_s s)"
	fi
	gone_icmp=$((GONE_MS[0] - t_icmp))
	gone_udp=$((GONE_MS[1] - t_udp))
	echo "icmp entries: gone at $gone_icmp ms after the ping$(seen_since "${SEEN_MS[0]}" "$t_icmp")"
	echo "udp entries: gone at $gone_udp ms after the exchange$(seen_since "${SEEN_MS[1]}" "$t_udp")"

	# Expiry needs the timeout's idleness: never earlier (100 ms for the
	# coarse clock the program stamps packets with and our own timing).
	# Both were watched from the first look on, so a flow that went early
	# shows here; a slow look only makes GONE_MS later, never earlier.
	[ "$gone_icmp" -ge $((icmp_s * 1000 - 100)) ] ||
		fail "icmp flow expired after $gone_icmp ms, before its $icmp_s s timeout"
	[ "$gone_udp" -ge $((udp_s * 1000 - 100)) ] ||
		fail "udp flow expired after $gone_udp ms, before its $udp_s s timeout"
}

# TCP: a connection that completed (data and FIN both ways) ages with
# tcp_transitory (3 s) and is gone within 10 s; one held open and idle after
# data both ways is "established" and stays well beyond 3 s.
TEST_MODES[expiry_tcp_states]=xdp
test_expiry_tcp_states() {
	local held=$((SRV_PORT + 2)) done_port=$((SRV_PORT + 1)) srv_pid cli_pid cli_log
	local t_held t_done cond_held cond_done n gone idle

	reload_with transitory timeouts.tcp_transitory=3
	grep -qE '^tcp_established[[:space:]]*=[[:space:]]*7440' "$TB_WORK/transitory.ini" ||
		fail "variant should keep tcp_established = 7440"

	# The held connection: the server answers one line and then sits on
	# the open connection; so does the client. No FIN, no keepalives.
	# shellcheck disable=SC2016 # $l is the server shell's
	bg_ns 40 "$NS_WAN" socat "TCP-LISTEN:$held,reuseaddr" \
		SYSTEM:'read l; echo "pong $l"; sleep 30'
	srv_pid=$BG_PID
	wait_listen "$NS_WAN" tcp $held || fail "no server"
	bg_ns 40 "$NS_LAN" bash -c \
		"(echo ping; sleep 30) | socat - TCP:$WAN_HOST4:$held"
	cli_pid=$BG_PID
	cli_log=$TB_WORK/bg.$TB_BG_N.log
	wait_log "$cli_log" '^pong ping$' || fail "held connection: no reply"
	t_held=$(now_ms)

	# The completed connection: 64 KiB echoed, both sides close.
	random_file "$TB_WORK/done.bin" 64K
	echo_server "$NS_WAN" tcp $done_port || fail "no server"
	check timeout 20 ip netns exec "$NS_LAN" sh -c \
		"socat -t 5 - TCP:$WAN_HOST4:$done_port <'$TB_WORK/done.bin' >'$TB_WORK/done.back'"
	t_done=$(now_ms)
	same_file "$TB_WORK/done.bin" "$TB_WORK/done.back" ||
		fail "completed connection: data did not round-trip"
	bg_wait "$BG_PID" || fail "echo server did not finish"

	cond_held="f['proto'] == 'tcp' and ($(conn_cond "$WAN_HOST4:$held"))"
	cond_done="f['proto'] == 'tcp' and ($(conn_cond "$WAN_HOST4:$done_port"))"
	check xnat flows
	n=$(flow_count "$cond_done") || fail "xnat flows failed"
	[ "$n" -eq 2 ] || fail "completed connection: expected 2 entries right after it closed, got $n"

	wait_flows_gone "$t_done" 10000 "$cond_done" ||
		fail "completed connection still in the table $(($(now_ms) - t_done)) ms after it closed (tcp_transitory 3 s)"
	gone=$((GONE_MS[0] - t_done))
	echo "completed connection: gone $gone ms after it closed"
	[ "$gone" -ge 2900 ] || fail "completed connection expired after $gone ms, before tcp_transitory (3 s)"

	# Idle for more than twice tcp_transitory: only tcp_established keeps
	# the held connection.
	while [ $(($(now_ms) - t_held)) -lt 7000 ]; do sleep 0.2; done
	kill -0 "$cli_pid" 2>/dev/null || fail "held connection's client ended early: $(cat "$cli_log")"
	check xnat flows --json
	n=$(json_q "len([f for f in j['flows'] if $cond_held])" <<<"$CHECK_OUT")
	echo "held connection, idle $(($(now_ms) - t_held)) ms: $n entries"
	[ "$n" -eq 2 ] || fail "held established connection: expected 2 entries after 7 s idle, got $n"
	json_q "sorted(set(f['state'] for f in j['flows'] if $cond_held))" \
		<<<"$CHECK_OUT" | grep -qx '\["established"\]' ||
		fail "held connection is not (only) established: $(json_q "[f['state'] for f in j['flows'] if $cond_held]" <<<"$CHECK_OUT")"
	idle=$(json_q "min(f['idle_s'] for f in j['flows'] if $cond_held)" <<<"$CHECK_OUT")
	echo "held connection idle_s: $idle"
	[ "$idle" -ge 6 ] || fail "held connection was not idle (idle_s $idle): the test proves nothing"

	bg_stop "$cli_pid"
	bg_stop "$srv_pid"
}

# Kernel mode: conntrack's timeouts in the router's namespace follow
# [timeouts] and `xnat down` gives the namespace its own values back, the
# ones the state file recorded, which are a fresh namespace's defaults.
TEST_MODES[timeouts_kernel]=kernel
test_timeouts_kernel() {
	local d=/proc/sys/net/netfilter name want v fresh saved state
	local -A conf

	ct_timeouts_of conf 2 5 600 30

	reload_with ct timeouts.udp=2 timeouts.icmp=5 \
		timeouts.tcp_established=600 timeouts.tcp_transitory=30

	state=/run/xnat/$TB_RTR_INO/state
	[ -f "$state" ] || fail "no state file $state"
	echo "state file $state:"
	sed 's/^/  | /' "$state"
	for name in "${!conf[@]}"; do
		want=${conf[$name]}
		v=$(on_rtr cat "$d/$name") || fail "cannot read $d/$name in the router"
		# The values of a namespace xnat never touched.
		fresh=$(timeout "$T_CMD" unshare -n cat "$d/$name") ||
			fail "cannot read $d/$name in a fresh namespace"
		saved=$(awk -v p="net/netfilter/$name" '$1 == "sysctl" && $2 == p { print $3 }' "$state")
		echo "$name: now $v (config $want), saved '$saved', fresh namespace $fresh"
		[ "$v" = "$want" ] || fail "$name is $v, config says $want"
		[ "$saved" = "$fresh" ] ||
			fail "state file saved $name as '$saved', but it was $fresh before up"
	done

	check xnat down
	for name in "${!conf[@]}"; do
		v=$(on_rtr cat "$d/$name") || fail "cannot read $d/$name in the router"
		fresh=$(timeout "$T_CMD" unshare -n cat "$d/$name")
		echo "$name after down: $v (before up: $fresh)"
		[ "$v" = "$fresh" ] || fail "$name not restored by down: $v, was $fresh"
	done
}

# The remaining timeout (s) of the router's conntrack entry of UDP from the
# LAN host's source port SPORT.
ct_udp_timeout() {
	local out
	out=$(on_rtr conntrack -L -p udp --orig-port-src "$1" 2>/dev/null) ||
		return 1
	awk '$1 == "udp" { print $3; exit }' <<<"$out"
}

# [timeouts] udp_dns (RFC 4787 REQ-5a; 30 s, the default) reaches the
# kernel's conntrack through the ruleset's udp_dns timeout policy: after
# five UDP exchanges of the LAN host with the WAN host's port 53 its entry
# has at most 30 s left, while one with port 5000 has more (udp: 300 s).
# In offload mode both go to the fast path after the first exchange, and
# XDP, which then keeps the entries alive, gives them the same timeouts.
TEST_MODES[dns_timeout_conntrack]="kernel offload"
test_dns_timeout_conntrack() {
	local i t53 tother

	udp_echo_multi "$NS_WAN" 53 30 || fail "no DNS echo server"
	udp_echo_multi "$NS_WAN" "$SRV_PORT" 30 || fail "no echo server"
	for i in 1 2 3 4 5; do
		udp_ask_from "$NS_LAN" "$WAN_HOST4:53" 45353 "dns$i" |
			grep -q "dns$i" || fail "no reply from port 53 ($i)"
		udp_ask_from "$NS_LAN" "$WAN_HOST4:$SRV_PORT" 45000 "udp$i" |
			grep -q "udp$i" || fail "no reply from port $SRV_PORT ($i)"
	done
	if [ "$TB_MODE" = offload ]; then
		[ "$(counter fwd_offload)" -ge 2 ] ||
			fail "the exchanges were not offloaded: $(xnat stats)"
	fi
	t53=$(ct_udp_timeout 45353) && tother=$(ct_udp_timeout 45000) ||
		fail "cannot read conntrack"
	echo "conntrack timeouts: port 53 $t53 s, port $SRV_PORT $tother s"
	[ -n "$t53" ] && [ "$t53" -le 30 ] ||
		fail "DNS entry has '$t53' s left, expected at most udp_dns (30)"
	[ -n "$tother" ] && [ "$tother" -gt 30 ] ||
		fail "other UDP entry has '$tother' s left, expected udp's (300)"
}

# A flow table for 4 connections. A live resize is refused (the running
# router untouched); after down/up the first 4 of 8 UDP conversations fill
# the table, the other 4 go to the kernel's NAT, all 8 get their replies,
# and the flows in the table keep their fast path.
TEST_MODES[table_full]=xdp
test_table_full() {
	local small out rc tok sp n full fast0 fast1 port=$SRV_PORT

	small=$(config_variant small flows.max=4) || fail "cannot write config variant"
	echo "+ xnat up -c $small (flow table 4 connections, running with 65536)"
	out=$(xnat up -c "$small" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/  | /'
	[ $rc -ne 0 ] || fail "xnat up resized the flow table live (exit 0)"
	grep -qF '[flows] max' <<<"$out" ||
		fail "the refusal does not name [flows] max"

	# The router still runs as before, with the old table.
	check xnat status --json
	[ "$(json_q "j['up']" <<<"$CHECK_OUT")" = true ] || fail "not up after the refused resize"
	[ "$(json_q "j['flows']['max']" <<<"$CHECK_OUT")" = $((2 * 65536)) ] ||
		fail "flow table changed size: $(json_q "j['flows']" <<<"$CHECK_OUT")"
	[ "$(json_q "len([i for i in j['interfaces'] if i.get('prog_id', 0) > 0])" \
		<<<"$CHECK_OUT")" = 2 ] || fail "XDP programs gone after the refused resize"
	udp_echo_multi "$NS_WAN" $port 60 || fail "no server"
	tok=xnat-still-$RANDOM
	check udp_ask_from "$NS_LAN" "$WAN_HOST4:$port" 39999 "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "router stopped forwarding after the refused resize"
	[ "$(flow_count "f['src'] == '$LAN_HOST4:39999'")" = 1 ] ||
		fail "the exchange after the refused resize is not in the XDP flow table"

	check xnat down
	check xnat up -c "$small"
	check xnat status --json
	[ "$(json_q "j['flows']['max']" <<<"$CHECK_OUT")" = 8 ] ||
		fail "flow table is not 8 entries: $(json_q "j['flows']" <<<"$CHECK_OUT")"

	for sp in $(seq 40001 40008); do
		tok=xnat-full-$sp
		check udp_ask_from "$NS_LAN" "$WAN_HOST4:$port" "$sp" "$tok"
		[ "$CHECK_OUT" = "$tok" ] || fail "no reply for source port $sp"
	done

	check xnat flows
	n=$(flow_count True) || fail "xnat flows failed"
	echo "flow table entries: $n"
	[ "$n" -eq 8 ] || fail "expected exactly 8 entries (4 connections), got $n"
	for sp in 40001 40002 40003 40004; do
		[ "$(flow_count "f['src'] == '$LAN_HOST4:$sp'")" = 1 ] ||
			fail "the connection from port $sp (among the first 4) is not in the table"
	done
	full=$(counter pass_table_full) || fail "no pass_table_full counter"
	echo "pass_table_full packets: $full"
	[ "$full" -gt 0 ] || fail "no packet counted as pass_table_full"

	# The first flow again, from the same source port: fast path both ways.
	fast0=$(counter fwd_fast) || fail "no fwd_fast counter"
	tok=xnat-again-$RANDOM
	check udp_ask_from "$NS_LAN" "$WAN_HOST4:$port" 40001 "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "no reply when repeating the first flow"
	fast1=$(counter fwd_fast) || fail "no fwd_fast counter"
	echo "fwd_fast: $fast0 before, $fast1 after repeating the first flow"
	[ "$fast1" -ge $((fast0 + 2)) ] ||
		fail "the first flow did not take the fast path (fwd_fast +$((fast1 - fast0)), expected +2)"
	[ "$(flow_count True)" -eq 8 ] || fail "table no longer holds 8 entries"
}

# Frames with broken IPv4/TCP/UDP headers from the WAN host, to the router's
# WAN MAC, addressed to the NAT address (a port of the XDP range) and to the
# LAN host, while the LAN host pings the WAN host: none reaches the LAN host,
# the ping loses nothing, and in xdp and offload mode each is counted as
# drop_malformed (and never reaches the router's kernel).
MALFORMED_KINDS="ip_trunc eth_only tiny ihl_lt5 totlen_big tcp_doff_lt5 udp_len_big"
test_malformed_no_leak() {
	local mac marker="xnat-malformed-$RANDOM$RANDOM" dst sent=0 n
	local lan_pid lan_log rtr_pid rtr_log ping_pid ping_log drop0=0 drop1 lan rtr

	mac=$(ns_mac "$NS_RTR" "$RTR_WAN_IF")
	[ -n "$mac" ] || fail "no MAC on the router's $RTR_WAN_IF"
	echo "router $RTR_WAN_IF MAC: $mac"
	if [ "$TB_MODE" != kernel ]; then # XDP parses first (xdp, offload)
		drop0=$(counter drop_malformed) || fail "no drop_malformed counter"
	fi

	# Receivers on the LAN host and on the router's WAN port (what its
	# kernel sees), bounded in time.
	bg_ns 30 "$NS_LAN" python3 "$RAWPKT" recv "$HOST_IF" 8 --marker "$marker"
	lan_pid=$BG_PID lan_log=$TB_WORK/bg.$TB_BG_N.log
	bg_ns 30 "$NS_RTR" python3 "$RAWPKT" recv "$RTR_WAN_IF" 8 --marker "$marker"
	rtr_pid=$BG_PID rtr_log=$TB_WORK/bg.$TB_BG_N.log
	wait_log "$lan_log" '^ready' || fail "LAN receiver did not start"
	wait_log "$rtr_log" '^ready' || fail "router receiver did not start"

	bg_ns 20 "$NS_LAN" ping -c 30 -i 0.1 -W 2 "$WAN_HOST4"
	ping_pid=$BG_PID ping_log=$TB_WORK/bg.$TB_BG_N.log
	sleep 0.5

	for dst in "$RTR_WAN4" "$LAN_HOST4"; do
		# shellcheck disable=SC2086 # a list of kinds
		check on_wan python3 "$RAWPKT" send "$HOST_IF" "$mac" "$WAN_HOST4" \
			"$dst" 40000 $MALFORMED_KINDS --count 3 --marker "$marker"
		n=$(sed -n 's/^total //p' <<<"$CHECK_OUT")
		sent=$((sent + n))
	done
	echo "malformed frames sent: $sent"
	[ "$sent" -gt 0 ] || fail "no frame could be sent"

	bg_wait "$ping_pid" || fail "ping failed: $(cat "$ping_log")"
	sed 's/^/  ping | /' "$ping_log" | tail -3
	grep -q ' 30 received, 0% packet loss' "$ping_log" ||
		fail "the ping lost packets while malformed frames arrived"
	bg_wait "$lan_pid" || fail "LAN receiver failed: $(cat "$lan_log")"
	bg_wait "$rtr_pid" || fail "router receiver failed: $(cat "$rtr_log")"
	lan=$(tail -1 "$lan_log") rtr=$(tail -1 "$rtr_log")
	echo "LAN host $HOST_IF received: $lan"
	echo "router $RTR_WAN_IF (kernel) received: $rtr"

	[ "$(json_q "j['marker']" <<<"$lan")" = 0 ] ||
		fail "malformed frames reached the LAN host"
	[ "$(json_q "j['ipv4_other']" <<<"$lan")" = 0 ] ||
		fail "IPv4 frames other than the ping's reached the LAN host"
	[ "$(json_q "j['ipv4_icmp']" <<<"$lan")" -ge 30 ] ||
		fail "the LAN receiver did not see the ping replies: it proves nothing"

	if [ "$TB_MODE" != kernel ]; then # XDP parses first (xdp, offload)
		drop1=$(counter drop_malformed) || fail "no drop_malformed counter"
		echo "drop_malformed: $drop0 before, $drop1 after ($sent sent)"
		[ $((drop1 - drop0)) -eq "$sent" ] ||
			fail "drop_malformed counted $((drop1 - drop0)) of $sent malformed frames"
		[ "$(json_q "j['ipv4_other']" <<<"$rtr")" = 0 ] ||
			fail "malformed frames got past XDP into the router's kernel"
	else
		# They did arrive (else the test proves nothing): every IPv4
		# frame sent shows up on the router's WAN port.
		[ "$(json_q "j['ipv4_other']" <<<"$rtr")" -ge "$sent" ] ||
			fail "the router saw fewer frames than were sent: the test proves nothing"
	fi
}

# A TCP segment without SYN for a connection XDP does not know (here a raw
# ACK from the LAN host) goes to the kernel as pass_tcp_midstream and does
# not create a flow; a SYN sent the same way does, so the check is not
# vacuous.
TEST_MODES[midstream_to_kernel]=xdp
test_midstream_to_kernel() {
	local mac mid0 mid1 n

	mac=$(ns_mac "$NS_RTR" "$RTR_LAN_IF")
	[ -n "$mac" ] || fail "no MAC on the router's $RTR_LAN_IF"
	mid0=$(counter pass_tcp_midstream) || fail "no pass_tcp_midstream counter"
	check on_lan python3 "$RAWPKT" send "$HOST_IF" "$mac" "$LAN_HOST4" \
		"$WAN_HOST4" 5999 tcp_ack --sport 40123 --count 3
	grep -qx 'total 3' <<<"$CHECK_OUT" || fail "could not send the ACKs"
	sleep 0.3
	mid1=$(counter pass_tcp_midstream) || fail "no pass_tcp_midstream counter"
	echo "pass_tcp_midstream: $mid0 before, $mid1 after 3 ACKs"
	[ $((mid1 - mid0)) -eq 3 ] ||
		fail "pass_tcp_midstream counted $((mid1 - mid0)) of 3 midstream ACKs"
	n=$(flow_count "':40123' in f['src'] + f['dst'] + f['new_src'] + f['new_dst']") ||
		fail "xnat flows failed"
	[ "$n" -eq 0 ] || fail "the midstream ACK created $n flow entries"

	check on_lan python3 "$RAWPKT" send "$HOST_IF" "$mac" "$LAN_HOST4" \
		"$WAN_HOST4" 5999 tcp_syn --sport 40124 --count 1
	sleep 0.3
	check xnat flows
	n=$(flow_count "f['src'] == '$LAN_HOST4:40124' and f['dst'] == '$WAN_HOST4:5999'") ||
		fail "xnat flows failed"
	[ "$n" -eq 1 ] || fail "a raw SYN sent the same way created no flow: the test proves nothing"
}

# ---- reloads leak nothing ----------------------------------------------------

# The xnat process of the `xnat run` started last (RUN_PID is its
# timeout(1) wrapper, which passes on one SIGHUP, not every one).
run_xnat_pid() { pgrep -P "$RUN_PID" -x xnat; }

# The ids of the BPF programs process PID holds an fd of, one a line: what
# it keeps loaded. By the process's own fds, not a global listing, which
# would count the routers of tests running beside this one.
held_prog_ids() {
	local f
	for f in /proc/"$1"/fd/*; do
		[ "$(readlink "$f" 2>/dev/null)" = anon_inode:bpf-prog ] || continue
		awk '$1 == "prog_id:" { print $2 }' "/proc/$1/fdinfo/${f##*/}"
	done
}

# The id of the XDP program on the router's LAN port.
lan_prog_id() {
	ip -n "$NS_RTR" -d link show dev "$RTR_LAN_IF" |
		grep -oE 'prog/xdp id [0-9]+' | awk '{ print $3; exit }'
}

# SIGHUP `xnat run` (PID) and wait for the Nth "reloaded" in its log.
run_reload() {
	kill -HUP "$2" || fail "xnat run is gone"
	wait_until 20 run_reloads_are "$1" ||
		fail "reload $1 not done: $(tail -5 "$TB_WORK/run.log")"
}
run_reloads_are() { [ "$(grep -c 'xnat reloaded in' "$TB_WORK/run.log")" -ge "$1" ]; }

# No program that process PID holds is one the router's ports do not run:
# a replaced xdp_xnat kept open would stay in kernel memory, maps and all.
held_all_attached() {
	local id attached name
	attached=$(ip -n "$NS_RTR" -d link show | grep -oE 'prog/xdp id [0-9]+' |
		awk '{ print $3 }')
	for id in $(held_prog_ids "$1" | sort -u); do
		name=$(bpftool prog show id "$id" 2>/dev/null |
			awk 'NR == 1 { print $4 }')
		echo "held: program $id ($name)"
		[ "$name" = xdp_xnat ] || continue
		grep -qx "$id" <<<"$attached" ||
			fail "xnat run holds xdp_xnat $id, which no port runs (attached: $attached)"
	done
}

# Reloads of `xnat run` (SIGHUP) leave no program fd behind: ten with the
# same config (nothing to attach: the ports are checked), then four that
# move the ports between generic and native mode (a new program each
# time). The fds of BPF programs run holds do not grow, and it holds no
# xdp_xnat that is not attached. libxdp 1.3.1 leaked one per port and
# query, keeping every replaced program loaded.
TEST_MODES[reload_leaks_nothing]="xdp offload"
test_reload_leaks_nothing() {
	local cfg=$TB_WORK/run.ini pid n0 n i mode id0 id
	cp "$TB_CONFIG" "$cfg"
	check xnat down
	xnat_run_start 300 "$cfg" "$TB_WORK/run.log"
	pid=$(run_xnat_pid)
	[ -n "$pid" ] || fail "no xnat process under $RUN_PID"
	run_reload 1 "$pid"
	n0=$(held_prog_ids "$pid" | wc -l)
	echo "after 1 reload: $n0 program fds"
	for i in $(seq 2 11); do
		run_reload "$i" "$pid"
	done
	n=$(held_prog_ids "$pid" | wc -l)
	echo "after 11 reloads: $n program fds"
	[ "$n" -le "$n0" ] || fail "program fds grew from $n0 to $n in 10 reloads"
	held_all_attached "$pid"
	for mode in generic native generic native; do
		i=$((i + 1))
		sed -i -E "s/^xdp( *)= [a-z]+/xdp\\1= $mode/" "$cfg"
		grep -qE "^xdp *= $mode" "$cfg" || fail "config not edited"
		id0=$(lan_prog_id)
		run_reload "$i" "$pid"
		id=$(lan_prog_id)
		echo "xdp = $mode: $RTR_LAN_IF runs program $id (was $id0)"
		[ -n "$id" ] && [ "$id" != "$id0" ] ||
			fail "the reload to $mode attached no new program"
	done
	n=$(held_prog_ids "$pid" | wc -l)
	echo "after 4 reloads that attach anew: $n program fds"
	[ "$n" -le "$n0" ] || fail "program fds grew from $n0 to $n"
	held_all_attached "$pid"
	kill -TERM "$RUN_PID"
	wait "$RUN_PID" || fail "xnat run exited $?"
}

# ---- run's signals -------------------------------------------------------------

# The router is down in its namespace: no inet xnat table, no XDP program on
# its ports.
router_down() {
	! ip netns exec "$NS_RTR" nft list table inet xnat >/dev/null 2>&1 ||
		fail "the inet xnat table is still there"
	! ip -n "$NS_RTR" -d link show dev "$RTR_LAN_IF" | grep -q 'prog/xdp' ||
		fail "$RTR_LAN_IF still runs an XDP program"
}

# A TERM that reaches `xnat run` while its first up applies (0.3 s in:
# the up takes longer, it holds the signal until done) takes the router
# down once the up is done: run does not die with the router left up and
# nothing watching it. Whenever the TERM lands (before, during or after the
# up), run ends and leaves the router down.
test_run_term_during_up() {
	local i pid rc
	check xnat down
	for i in 1 2 3; do
		timeout 60 "$XNAT" -n "$NS_RTR" run -c "$TB_CONFIG" \
			>"$TB_WORK/run-$i.log" 2>&1 </dev/null &
		pid=$!
		echo "$pid" >>"$TB_WORK/pids"
		sleep 0.3
		kill -TERM "$pid"
		rc=0
		wait "$pid" || rc=$?
		echo "try $i: xnat run exited $rc: $(tail -2 "$TB_WORK/run-$i.log" | tr '\n' ' ')"
		[ "$rc" -ne 124 ] || fail "xnat run did not end on SIGTERM"
		router_down
		check xnat down
	done
}

# `xnat run` whose stdout (the NAT event log) is a pipe nobody reads any
# more: the log's writes fail (EPIPE), run goes on routing, and a TERM
# still takes the router down. SIGPIPE used to kill it (exit 141), router
# left up.
TEST_MODES[run_closed_stdout]=xdp
test_run_closed_stdout() {
	local fifo=$TB_WORK/run.out pid rc p
	check xnat down
	mkfifo "$fifo"
	timeout 60 "$XNAT" -n "$NS_RTR" run -c "$TB_CONFIG" \
		>"$fifo" 2>"$TB_WORK/run.err" </dev/null &
	pid=$!
	echo "$pid" >>"$TB_WORK/pids"
	# The reader opens the pipe and goes away at once.
	head -c 0 <"$fifo"
	wait_log "$TB_WORK/run.err" "xnat up in " 20 || fail "xnat run did not come up"
	# New mappings: each is a line of the event log, written to a pipe
	# whose reader is gone.
	for p in 7101 7102 7103; do
		udp_one_way "$NS_LAN" "$WAN_HOST4" "$p" >/dev/null 2>&1 || true
	done
	kill -0 "$pid" 2>/dev/null || {
		wait "$pid"
		fail "xnat run died with its stdout closed (exit $?)"
	}
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	echo "xnat run exited $rc: $(tail -2 "$TB_WORK/run.err" | tr '\n' ' ')"
	router_down
}

run_tests "$@"
