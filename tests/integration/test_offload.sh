#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Offload mode end to end: the kernel's conntrack and nftables decide, XDP
# carries what they accepted. An operator's own forward rule holds while
# other connections are offloaded; conntrack -D / -F take a flow off the
# fast path; a LAN MTU below the WAN's still lets a download complete;
# 100 MB transfers close cleanly both ways (conntrack sees the FINs after
# XDP carried the data); a helper's connection (FTP) stays in the kernel,
# which rewrites its PORT command; UDP one way and IPv6 are offloaded; a
# shaped port keeps its flows in the kernel. The general router and NAT
# suites run in offload mode too (lib.sh DEFAULT_MODES).
#
#   tests/integration/test_offload.sh [SUBSTRING...]
#   V=1 / DEBUG_TESTENV=1 / MODES=offload                see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

SRV_PORT=5000

# Packets XDP forwarded: offloaded first packets plus fast-path hits.
# (Helpers whose output is captured call xnat directly: check echoes.)
xdp_forwarded() {
	xnat_json_q stats \
		"j['counters']['fwd_fast']['packets'] + j['counters']['fwd_offload']['packets']"
}

counter() {
	xnat_json_q stats "j['counters']['$1']['packets']"
}

# TCP resets a host sent (namespace-wide).
tcp_out_rsts() {
	on "$1" cat /proc/net/snmp | awk '/^Tcp: [0-9]/ { print $15 }'
}

# Offloaded entries (xnat flows --json) whose conntrack tuple contains all
# of the given "key=value" words; prints how many.
offloaded_matching() {
	local want="$*"
	xnat_json_q flows "len([f for f in j['flows'] if f['nat'] == 'ct' and
		 all(w in f.get('conntrack', '').split() for w in '$want'.split())])"
}

# Wait (at most 10 s) until offloaded_matching WORDS prints OP N (-eq, -ge).
wait_offloaded() {
	local op=$1 n=$2
	shift 2
	wait_number "$op" "$n" "offloaded entries matching '$*'" \
		offloaded_matching "$@"
}

# Wait (at most 10 s) until the server of tcp_idle_connection PORT has
# all six writes: from then on the connection is silent until its FIN.
# A segment after its conntrack entry is deleted would be picked up by
# conntrack as a new connection (nf_conntrack_tcp_loose), which XDP then
# offloads again, and the test would see its flow come back.
wait_idle() {
	local f=$TB_WORK/idle.$1
	for _ in $(seq 50); do
		grep -q x6 "$f" 2>/dev/null && return 0
		sleep 0.2
	done
	echo "the connection on port $1 did not finish its writes: $(cat "$f" 2>/dev/null)"
	return 1
}

# An operator's own table drops one LAN host's TCP to one port. In xdp mode
# such a chain never sees LAN->WAN connections; in offload mode it sees the
# first packets of each, so its drop holds while the other host's traffic
# on the same port, and the blocked host's on another port, is offloaded.
# shellcheck disable=SC2034 # TEST_MODES is read by lib.sh
TEST_MODES[operator_forward_rule]="offload kernel"
test_operator_forward_rule() {
	local fast0 fast1 drops
	testbed_add_lan_host || fail "no second LAN host"
	check on_rtr nft -f - <<-EOF
	table inet fw {
		chain forward {
			type filter hook forward priority 0; policy accept;
			ip saddr $LAN2_HOST4 tcp dport $SRV_PORT counter drop
		}
	}
	EOF

	fast0=$(xdp_forwarded)
	tcp_upload_checked a 4M "$NS_LAN" "$NS_WAN" "$WAN_HOST4" $SRV_PORT

	# The blocked host, to the same port: refused by the operator's rule.
	tcp_server_recv "$NS_WAN" $SRV_PORT "$TB_WORK/b.recv" || fail "no server"
	if timeout 5 ip netns exec "$NS_LAN2" socat -u "OPEN:$TB_WORK/a.bin" \
		"TCP:$WAN_HOST4:$SRV_PORT,connect-timeout=3" 2>/dev/null; then
		fail "$LAN2_HOST4 reached port $SRV_PORT despite the operator's drop"
	fi
	[ -s "$TB_WORK/b.recv" ] && fail "the server got data from $LAN2_HOST4"
	bg_stop "$BG_PID"

	# The same host, another port: allowed (and offloaded).
	tcp_server_recv "$NS_WAN" $((SRV_PORT + 1)) "$TB_WORK/c.recv" ||
		fail "no server"
	check tcp_send "$NS_LAN2" "TCP:$WAN_HOST4:$((SRV_PORT + 1))" "$TB_WORK/a.bin"
	bg_wait "$BG_PID" || fail "server did not finish"
	same_file "$TB_WORK/a.bin" "$TB_WORK/c.recv" || fail "transfer corrupted"

	check on_rtr nft list chain inet fw forward
	drops=$(grep -o 'counter packets [0-9]*' <<<"$CHECK_OUT" | awk '{ print $3 }')
	echo "operator rule dropped $drops packets"
	[ "${drops:-0}" -gt 0 ] || fail "the operator's rule saw nothing"
	if [ "$TB_MODE" = offload ]; then
		fast1=$(xdp_forwarded)
		echo "packets XDP forwarded: $((fast1 - fast0))"
		# 2 x 4 MB in 1448-byte segments is about 5,800 data frames.
		[ $((fast1 - fast0)) -ge 5000 ] ||
			fail "the allowed transfers were not offloaded"
	fi
}

# An operator's ALG: their ruleset gives TCP port 21 conntrack's FTP
# helper, which must see every segment of the control connection. Its
# PORT command, sent after six other lines (by then an offloaded
# connection's segments would be on the fast path; each line a segment of
# its own, as the helper reads a command only at a segment's start; the
# pauses keep Nagle from joining them), must arrive rewritten
# to the router's WAN address (nf_nat_ftp) with the data connection
# expected; carried by XDP it would arrive as the LAN host sent it. In
# offload mode the connection stays in the kernel (pass_ct_helper).
TEST_MODES[operator_ftp_helper]="offload kernel"
test_operator_ftp_helper() {
	local port_cmd="PORT ${LAN_HOST4//./,},156,64" helper0
	check on_rtr nft -f - <<-EOF
	table inet alg {
		ct helper ftp-std {
			type "ftp" protocol tcp
		}
		chain pre {
			type filter hook prerouting priority filter; policy accept;
			tcp dport 21 ct helper set "ftp-std"
		}
	}
	EOF
	[ "$TB_MODE" = offload ] && helper0=$(counter pass_ct_helper)
	tcp_server_recv "$NS_WAN" 21 "$TB_WORK/ftp.recv" || fail "no server on 21"
	# shellcheck disable=SC2016 # the inner script's own argument
	timeout 15 bash -c '
		printf "USER anonymous\r\n"
		for i in 1 2 3 4 5 6; do sleep 0.2; printf "NOOP\r\n"; done
		sleep 0.2; printf "%s\r\n" "$1"; sleep 1
	' _ "$port_cmd" | timeout 15 ip netns exec "$NS_LAN" socat -u - \
		"TCP:$WAN_HOST4:21" || fail "the control connection failed"
	bg_wait "$BG_PID" || fail "the server did not finish"
	echo "the server got: $(tr -d '\r' <"$TB_WORK/ftp.recv" | tr '\n' ' ')"
	[ "$(grep -c '^NOOP' "$TB_WORK/ftp.recv")" = 6 ] || fail "lines lost"
	grep -q "^PORT ${RTR_WAN4//./,},[0-9]*,[0-9]*" "$TB_WORK/ftp.recv" ||
		fail "PORT arrived as sent, not translated: the helper missed it"
	check on_rtr conntrack -L expect
	grep -q "helper=ftp" <<<"$CHECK_OUT" || fail "no expectation of the data connection"
	if [ "$TB_MODE" = offload ]; then
		[ "$(offloaded_matching dport=21)" = 0 ] || fail "the control connection was offloaded"
		[ $(($(counter pass_ct_helper) - helper0)) -ge 6 ] ||
			fail "its segments were not handed up as pass_ct_helper"
	fi
}

# An idle TCP connection to the WAN host's PORT (tcp_idle_connection),
# offloaded both ways: the LAN host's tuple and the reply to the WAN
# address. NTH ("", "second ", ...) names it in the failure messages.
idle_offloaded_connection() {
	local port=$1 nth=$2
	tcp_idle_connection "$port" 15
	wait_offloaded -eq 2 "dst=$WAN_HOST4" "dport=$port" ||
		fail "the ${nth}connection was not offloaded both ways"
	wait_idle "$port" || fail "the ${nth}connection is not idle"
}

# The flow to the WAN host's PORT leaves the fast path, or the test fails:
# WHAT (the step just taken) left it there.
taken_off() {
	wait_offloaded -eq 0 "dst=$WAN_HOST4" "dport=$1" ||
		fail "$2 left the flow on the fast path"
}

# conntrack -D of an offloaded connection, and conntrack -F, take its flow
# off the fast path (xnat run acts on conntrack's destroy events).
TEST_MODES[conntrack_delete]=offload
test_conntrack_delete() {
	command -v conntrack >/dev/null || fail "conntrack (conntrack-tools) missing: scripts/deps.sh installs it"
	xnat_run_bg

	idle_offloaded_connection $SRV_PORT ""
	check on_rtr conntrack -D -p tcp --orig-dst "$WAN_HOST4" \
		--dport "$SRV_PORT"
	taken_off $SRV_PORT "conntrack -D"

	idle_offloaded_connection $((SRV_PORT + 1)) "second "
	check on_rtr conntrack -F
	taken_off $((SRV_PORT + 1)) "conntrack -F"
	# An nftables ruleset change takes every flow off, as well.
	idle_offloaded_connection $((SRV_PORT + 2)) "third "
	check on_rtr nft add table inet xnat_test_change
	check on_rtr nft delete table inet xnat_test_change
	taken_off $((SRV_PORT + 2)) "a ruleset change"
}

# conntrack does not see what XDP carries: XDP keeps the kernel's entry
# alive. With tcp_established = 6 s, a paced stream of 14 s keeps one and
# the same conntrack entry (same id) to the end, no flow is handed back as
# gone, and the stream stays offloaded. Without the refresh the entry
# would expire after 6 s.
TEST_MODES[conntrack_kept_alive]=offload
test_conntrack_kept_alive() {
	local cfg=$TB_WORK/short.ini id0 id1 gone0 gone1 fast0 fast1 flag=$TB_WORK/streaming pid
	sed 's/^tcp_established = [0-9]*/tcp_established = 6/' "$TB_CONFIG" >"$cfg"
	grep -q '^tcp_established = 6' "$cfg" || fail "could not write $cfg"
	check xnat up -c "$cfg"
	check on_rtr sysctl -n net.netfilter.nf_conntrack_tcp_timeout_established
	[ "$CHECK_OUT" = 6 ] || fail "conntrack's established timeout is $CHECK_OUT, not 6"

	random_file "$TB_WORK/chunk.bin" 16K
	tcp_server_recv "$NS_WAN" $SRV_PORT "$TB_WORK/stream.recv" || fail "no server"
	gone0=$(counter pass_ct_gone)
	fast0=$(xdp_forwarded)
	touch "$flag"
	# shellcheck disable=SC2016 # the inner script expands its own arguments
	timeout 40 bash -c '
		while [ -e "$1" ]; do cat "$2"; sleep 0.1; done |
		ip netns exec "$3" socat -u - "TCP:$4"
	' _ "$flag" "$TB_WORK/chunk.bin" "$NS_LAN" "$WAN_HOST4:$SRV_PORT" \
		</dev/null >/dev/null 2>&1 &
	pid=$!
	echo "$pid" >>"$TB_WORK/pids"
	wait_offloaded -eq 2 "dst=$WAN_HOST4" "dport=$SRV_PORT" ||
		fail "the stream was not offloaded both ways"
	check on_rtr conntrack -L -p tcp --orig-dst "$WAN_HOST4" --dport "$SRV_PORT" -o id
	id0=$(grep -o 'id=[0-9]*' <<<"$CHECK_OUT")
	[ -n "$id0" ] || fail "no conntrack entry for the stream"
	sleep 14
	check on_rtr conntrack -L -p tcp --orig-dst "$WAN_HOST4" --dport "$SRV_PORT" -o id
	id1=$(grep -o 'id=[0-9]*' <<<"$CHECK_OUT")
	rm -f "$flag"
	bg_wait "$pid" || fail "the stream failed"
	bg_wait "$BG_PID" || fail "server did not finish"
	gone1=$(counter pass_ct_gone)
	fast1=$(xdp_forwarded)
	echo "conntrack entry: $id0 at the start, $id1 after 14 s; pass_ct_gone $gone0 -> $gone1; XDP forwarded $((fast1 - fast0))"
	[ "$id0" = "$id1" ] || fail "the conntrack entry did not survive (6 s timeout)"
	[ "$gone1" = "$gone0" ] || fail "flows were handed back as gone"
	# 14 s at 10 writes of 16 KB a second: over 1,500 data segments.
	[ $((fast1 - fast0)) -ge 1500 ] || fail "the stream left the fast path"
}

# The LAN link's MTU (1280) is below the WAN's (1500) and the LAN host
# announces MSS 1460 ([router] mss_clamp off): the WAN host's full-size
# segments must be refused by the router's kernel with "fragmentation
# needed", after which the download completes at the smaller size, mostly on the fast path.
TEST_MODES[lan_mtu_download]="offload kernel"
test_lan_mtu_download() {
	local mtu_passed
	check on_rtr ip link set "$RTR_LAN_IF" mtu 1280
	# MSS clamping would keep the WAN host's segments under 1280.
	config_add router mss_clamp off
	check xnat up -c "$TB_CONFIG"
	random_file "$TB_WORK/d.bin" 4M
	tcp_server_send "$NS_WAN" $SRV_PORT "$TB_WORK/d.bin" || fail "no server"
	check tcp_recv "$NS_LAN" "TCP:$WAN_HOST4:$SRV_PORT" "$TB_WORK/d.recv"
	bg_wait "$BG_PID" || fail "server did not finish"
	same_file "$TB_WORK/d.bin" "$TB_WORK/d.recv" || fail "download corrupted"
	check on_wan ip route get "$RTR_WAN4"
	grep -q 'mtu 1280' <<<"$CHECK_OUT" ||
		fail "the WAN host never learned PMTU 1280: $CHECK_OUT"
	if [ "$TB_MODE" = offload ]; then
		mtu_passed=$(counter pass_mtu)
		echo "pass_mtu: $mtu_passed, XDP forwarded: $(xdp_forwarded)"
		[ "$(xdp_forwarded)" -ge 2000 ] ||
			fail "the download did not take the fast path"
	fi
}

# 100 MB each way, offloaded, then closed: the FINs (first from the WAN
# host, then from the LAN host) reach conntrack long after its TCP window
# last moved; the connection must still close without a reset and
# conntrack must follow it to TIME_WAIT.
TEST_MODES[close_100mb]=offload
test_close_100mb() {
	local rst_lan0 rst_wan0 fast0 fast1
	command -v conntrack >/dev/null || fail "conntrack (conntrack-tools) missing: scripts/deps.sh installs it"
	random_file "$TB_WORK/big.bin" 100M
	rst_lan0=$(tcp_out_rsts "$NS_LAN")
	rst_wan0=$(tcp_out_rsts "$NS_WAN")
	fast0=$(xdp_forwarded)

	# Download: the WAN host sends and closes first.
	tcp_server_send "$NS_WAN" $SRV_PORT "$TB_WORK/big.bin" || fail "no server"
	check tcp_recv "$NS_LAN" "TCP:$WAN_HOST4:$SRV_PORT" "$TB_WORK/big.down"
	bg_wait "$BG_PID" || fail "download server did not finish"
	same_file "$TB_WORK/big.bin" "$TB_WORK/big.down" || fail "download corrupted"
	rm -f "$TB_WORK/big.down"
	# Upload: the LAN host sends and closes first.
	tcp_server_recv "$NS_WAN" $((SRV_PORT + 1)) "$TB_WORK/big.up" ||
		fail "no server"
	check tcp_send "$NS_LAN" "TCP:$WAN_HOST4:$((SRV_PORT + 1))" "$TB_WORK/big.bin"
	bg_wait "$BG_PID" || fail "upload server did not finish"
	same_file "$TB_WORK/big.bin" "$TB_WORK/big.up" || fail "upload corrupted"
	rm -f "$TB_WORK/big.up" "$TB_WORK/big.bin"

	fast1=$(xdp_forwarded)
	echo "packets XDP forwarded: $((fast1 - fast0))"
	# 200 MB in 1448-byte segments: about 145,000 data frames.
	[ $((fast1 - fast0)) -ge 130000 ] || fail "the transfers were not offloaded"
	[ "$(tcp_out_rsts "$NS_LAN")" = "$rst_lan0" ] || fail "the LAN host sent a reset"
	[ "$(tcp_out_rsts "$NS_WAN")" = "$rst_wan0" ] || fail "the WAN host sent a reset"
	for port in $SRV_PORT $((SRV_PORT + 1)); do
		check on_rtr conntrack -L -p tcp --orig-dst "$WAN_HOST4" --dport "$port"
		grep -q TIME_WAIT <<<"$CHECK_OUT" ||
			fail "conntrack did not see port $port close: $CHECK_OUT"
	done
}

# A UDP stream one way (no reply ever) is offloaded after the kernel
# accepted its first datagram: one entry, original direction only.
TEST_MODES[udp_one_way]=offload
test_udp_one_way() {
	local fast0 fast1
	bg_ns 30 "$NS_WAN" socat -u UDP-RECV:$SRV_PORT OPEN:/dev/null
	wait_listen "$NS_WAN" udp $SRV_PORT || fail "no UDP sink"
	fast0=$(xdp_forwarded)
	check udp_one_way "$NS_LAN" "$WAN_HOST4" $SRV_PORT 4000
	fast1=$(xdp_forwarded)
	echo "datagrams XDP forwarded: $((fast1 - fast0)) of 300"
	[ $((fast1 - fast0)) -ge 290 ] || fail "the one-way stream stayed in the kernel"
	[ "$(offloaded_matching "src=$LAN_HOST4" "dst=$WAN_HOST4" sport=4000)" = 1 ] ||
		fail "expected exactly one offloaded entry for the stream"
	check xnat flows --json
	json_q "[f for f in j['flows'] if f['nat'] == 'ct' and f['dir'] == 'orig'
		 and f['proto'] == 'udp' and f['src'] == '$LAN_HOST4:4000'
		 and f['new_src'].startswith('$RTR_WAN4:')][0]" <<<"$CHECK_OUT" ||
		fail "the entry does not carry the kernel's masquerade"
	# The table filter (bpf/offload_filter.h) holds the entry's bit.
	check xnat status --json
	[ "$(json_q "j['table_filter']['bits_set'] >= 1 and j['table_filter']['off_for_installs'] == 0" \
		<<<"$CHECK_OUT")" = true ] || fail "status: no bit in the table filter: $CHECK_OUT"
	check xnat status
	grep -q '^filter: ' <<<"$CHECK_OUT" || fail "status has no filter line"
}

# IPv6 is routed, not NATed, and offloaded the same way.
TEST_MODES[ipv6_offloaded]=offload
test_ipv6_offloaded() {
	local fast0 fast1
	fast0=$(xdp_forwarded)
	random_file "$TB_WORK/six.bin" 4M
	tcp_server_recv "$NS_WAN" $SRV_PORT "$TB_WORK/six.recv" || fail "no server"
	check tcp_send "$NS_LAN" "TCP6:[$WAN_HOST6]:$SRV_PORT" "$TB_WORK/six.bin"
	bg_wait "$BG_PID" || fail "server did not finish"
	same_file "$TB_WORK/six.bin" "$TB_WORK/six.recv" || fail "transfer corrupted"
	fast1=$(xdp_forwarded)
	echo "packets XDP forwarded: $((fast1 - fast0))"
	[ $((fast1 - fast0)) -ge 2500 ] || fail "IPv6 was not offloaded"
}

# A port with a shaping root qdisc: XDP would bypass it, so flows leaving
# there stay in the kernel (the qdisc sees them) and status says so.
TEST_MODES[shaped_port]=offload
test_shaped_port() {
	local shaped0 shaped1 sent
	check on_rtr tc qdisc add dev "$RTR_WAN_IF" root tbf rate 10gbit \
		burst 256kb latency 50ms
	# The shaping is read when xnat comes up (and by xnat run every 5 s).
	check xnat up -c "$TB_CONFIG"
	check xnat status --json
	[ "$(json_q "[i['shaped'] for i in j['interfaces'] if i['name'] == '$RTR_WAN_IF'][0]" \
		<<<"$CHECK_OUT")" = true ] || fail "status does not show $RTR_WAN_IF shaped"
	check on_rtr tc -s qdisc show dev "$RTR_WAN_IF"
	shaped0=$(counter pass_shaped)
	tcp_upload_checked s 2M "$NS_LAN" "$NS_WAN" "$WAN_HOST4" $SRV_PORT
	shaped1=$(counter pass_shaped)
	echo "pass_shaped: $((shaped1 - shaped0))"
	[ $((shaped1 - shaped0)) -gt 0 ] || fail "nothing was kept off the shaped port"
	# The whole upload went through the qdisc (the packets between two
	# pass_shaped ones mostly count as pass_ct_unmarked: the kernel had
	# not marked the connection again yet; both go up).
	check on_rtr tc -s qdisc show dev "$RTR_WAN_IF"
	sent=$(grep -oE 'Sent [0-9]+ bytes' <<<"$CHECK_OUT" | awk '{ print $2 }')
	echo "the qdisc sent $sent bytes"
	[ "${sent:-0}" -ge 2097152 ] || fail "the upload bypassed the qdisc"
}

# A root that only spreads packets over per-queue children (mq) shapes
# nothing itself; a shaping child makes the port shaped, plain children
# (pfifo_fast, the default) do not. veth has a transmit queue per CPU,
# so it takes mq.
TEST_MODES[shaped_mq_child]=offload
test_shaped_mq_child() {
	local shaped
	check on_rtr tc qdisc add dev "$RTR_WAN_IF" root handle 1: mq
	check xnat up -c "$TB_CONFIG"
	check xnat status --json
	shaped=$(json_q "[[i['shaped'], i['qdisc']] for i in j['interfaces'] if i['name'] == '$RTR_WAN_IF'][0]" <<<"$CHECK_OUT")
	echo "mq with its default children: $shaped"
	[ "$shaped" = '[false, "mq"]' ] || fail "plain mq seen as shaping: $shaped"
	check on_rtr tc qdisc replace dev "$RTR_WAN_IF" parent 1:1 handle 10: \
		tbf rate 10gbit burst 256kb latency 50ms
	check xnat status --json
	shaped=$(json_q "[[i['shaped'], i['qdisc']] for i in j['interfaces'] if i['name'] == '$RTR_WAN_IF'][0]" <<<"$CHECK_OUT")
	echo "mq with a tbf child: $shaped"
	[ "$shaped" = '[true, "mq/tbf"]' ] || fail "mq's shaping child not seen: $shaped"
	# What status reports is what the data path is told at up.
	check xnat up -c "$TB_CONFIG"
	random_file "$TB_WORK/m.bin" 1M
	tcp_server_recv "$NS_WAN" $SRV_PORT "$TB_WORK/m.recv" || fail "no server"
	check tcp_send "$NS_LAN" "TCP:$WAN_HOST4:$SRV_PORT" "$TB_WORK/m.bin"
	bg_wait "$BG_PID" || fail "server did not finish"
	same_file "$TB_WORK/m.bin" "$TB_WORK/m.recv" || fail "transfer corrupted"
	[ "$(counter pass_shaped)" -gt 0 ] || fail "nothing was kept off the shaped port"
}

# A RST from the side the kernel carries while the other direction is
# offloaded: a download through a shaped WAN port keeps the LAN host's
# direction (its ACKs) in the kernel and offloads the server's. The LAN
# host aborts (SO_LINGER 0: a RST). XDP takes the server's direction off
# the fast path and closes the conntrack entry on tcp_transitory
# (bpf/offload.h offload_miss_rst). Before, that direction stayed in XDP
# and conntrack, whose record of the server's side was stale, kept the
# connection established for its full timeout.
TEST_MODES[rst_kernel_side]=offload
test_rst_kernel_side() {
	local client end0 end1 t flag=$TB_WORK/abort
	check on_rtr tc qdisc add dev "$RTR_WAN_IF" root tbf rate 10gbit \
		burst 256kb latency 50ms
	check xnat up -c "$TB_CONFIG"
	bg_ns 20 "$NS_WAN" python3 -c '
import socket, sys, time
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("", int(sys.argv[1])))
l.listen(1)
c, _ = l.accept()
end = time.time() + 15
try:
    while time.time() < end:
        c.sendall(b"x" * 16384)
        time.sleep(0.01)
except OSError as e:
    print("server:", e)
' $SRV_PORT
	wait_listen "$NS_WAN" tcp $SRV_PORT || fail "no server"
	bg_ns 20 "$NS_LAN" python3 -c '
import os, socket, struct, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
end = time.time() + 15
while not os.path.exists(sys.argv[3]) and time.time() < end:
    s.recv(65536)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
' "$WAN_HOST4" $SRV_PORT "$flag"
	client=$BG_PID
	wait_offloaded -eq 1 "dst=$WAN_HOST4" "dport=$SRV_PORT" ||
		fail "the download was not offloaded one way"
	end0=$(counter pass_ct_tcp_end)
	touch "$flag"
	bg_wait "$client" || fail "the client failed"
	wait_offloaded -eq 0 "dst=$WAN_HOST4" "dport=$SRV_PORT" ||
		fail "the server's direction stayed on the fast path after the LAN host's RST"
	end1=$(counter pass_ct_tcp_end)
	check on_rtr conntrack -L -p tcp --orig-dst "$WAN_HOST4" --dport "$SRV_PORT"
	t=$(awk '$1 == "tcp" { print $3; exit }' <<<"$CHECK_OUT")
	echo "pass_ct_tcp_end $end0 -> $end1; conntrack timeout after the RST: ${t:-none}"
	[ "$end1" -gt "$end0" ] || fail "no pass_ct_tcp_end for the RST"
	[ "${t:-0}" -le 240 ] || fail "conntrack kept the connection for $t s"
}

# Offload mode's own kernel settings: conntrack "be liberal" and the mark
# chain while up; `xnat down` puts the sysctl back (a new namespace has 0)
# and removes the chain with the table.
TEST_MODES[down_restores]=offload
test_down_restores() {
	check on_rtr sysctl -n net.netfilter.nf_conntrack_tcp_be_liberal
	[ "$CHECK_OUT" = 1 ] || fail "be_liberal is $CHECK_OUT while up"
	check on_rtr nft list chain inet xnat mark_accepted
	grep -q 'ct direction original .*ct mark set ct mark | 0x40000000' <<<"$CHECK_OUT" ||
		fail "no original-direction mark rule"
	grep -q 'ct direction reply .*ct mark set ct mark | 0x80000000' <<<"$CHECK_OUT" ||
		fail "no reply-direction mark rule"
	check xnat down
	check on_rtr sysctl -n net.netfilter.nf_conntrack_tcp_be_liberal
	[ "$CHECK_OUT" = 0 ] || fail "be_liberal is $CHECK_OUT after down"
	check on_rtr nft list tables
	grep -qw xnat <<<"$CHECK_OUT" && fail "table inet xnat left after down"
	return 0
}

run_tests "$@"
