#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Reloads under traffic: 100 `xnat up` reloads, alternating config changes
# (port forwards, timeouts, a LAN port added and removed again), while a
# TCP stream and a UDP exchange cross the router. No established flow may
# be lost: the TCP stream arrives whole (same sha256), the UDP socket keeps
# one NAT mapping throughout (the server sees one source address and port)
# and every reply carries what was sent. No time limit is a pass/fail
# criterion (how long reloads take is for benchmarks): the traffic runs
# until the last reload, bounded by SOAK_GUARD (240 s) so a hung reload
# ends the test, which then fails saying at which reload the stream died.
#
#   tests/integration/test_soak.sh            V=1 / MODES=xdp as in lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

SRV_PORT=5000
UDP_PORT=5001
RELOADS=${RELOADS:-100}
SOAK_GUARD=${SOAK_GUARD:-240}

# The configs the reloads cycle through, as TB_WORK/soakN.ini: the base,
# a forward more, other timeouts, lan1 added (with a forward to its host),
# lan1 removed again (other timeouts still).
soak_configs() {
	local b=$TB_WORK/soak
	cp "$TB_CONFIG" "${b}0.ini" &&
	sed -E 's|^(tcp/8080 = .*)|\1\ntcp/9090 = 198.18.1.10:90|' \
		"$TB_CONFIG" >"${b}1.ini" &&
	sed -E -e 's/^udp( *)= [0-9]+/udp\1= 301/' \
		-e 's/^tcp_transitory( *)= [0-9]+/tcp_transitory\1= 241/' \
		"$TB_CONFIG" >"${b}2.ini" &&
	sed -E -e 's/^lan( *)= lan0/lan\1= lan0, lan1/' \
		-e "s|^(tcp/8080 = .*)|\\1\\nudp/6000 = $LAN1_HOST4:6000|" \
		"$TB_CONFIG" >"${b}3.ini" &&
	cp "${b}2.ini" "${b}4.ini" || return 1
	grep -q 9090 "${b}1.ini" && grep -q 'udp *= 301' "${b}2.ini" &&
		grep -q 'lan1' "${b}3.ini"
}

# UDP echo server on the WAN host that answers "SOURCE|payload", so the
# client sees the address and port the router gave it.
udp_peer_echo() {
	bg_ns "$SOAK_GUARD" "$NS_WAN" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[1])))
while True:
    d, a = s.recvfrom(65535)
    s.sendto(("%s:%d|" % a).encode() + d, a)
' $UDP_PORT
	wait_listen "$NS_WAN" udp $UDP_PORT
}

# UDP client on the LAN host: one socket, a numbered datagram every 10 ms
# while FLAG exists; checks each reply's payload; prints "sent received
# bad sources...".
udp_soak_client() {
	local flag=$1 out=$2
	timeout "$SOAK_GUARD" ip netns exec "$NS_LAN" python3 -c '
import os, socket, sys, time
flag, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 41000))
s.settimeout(0.01)
sent = got = bad = 0
peers = set()
def drain():
    global got, bad
    try:
        while True:
            d = s.recv(2048)
            src, _, payload = d.partition(b"|")
            peers.add(src.decode())
            n = int(payload.split(b" ")[0])
            if payload != b"%d %s" % (n, b"x" * (n % 512)):
                bad += 1
            got += 1
    except socket.timeout:
        pass
while os.path.exists(flag):
    s.sendto(b"%d %s" % (sent, b"x" * (sent % 512)), (host, port))
    sent += 1
    drain()
end = time.time() + 1
while time.time() < end:
    drain()
print(sent, got, bad, " ".join(sorted(peers)))
' "$flag" "$WAN_HOST4" $UDP_PORT >"$out" 2>&1 &
	UDP_PID=$!
	echo "$UDP_PID" >>"$TB_WORK/pids"
}

# TCP stream from the LAN host: a 64 KiB chunk every 50 ms while FLAG
# exists; what was sent is kept to compare.
tcp_soak_stream() {
	local flag=$1
	# shellcheck disable=SC2016 # the inner script expands its own arguments
	timeout "$SOAK_GUARD" bash -c '
		while [ -e "$1" ]; do cat "$2"; sleep 0.05; done | tee "$3" |
		ip netns exec "$4" socat -u - "TCP:$5"
	' _ "$flag" "$TB_WORK/chunk.bin" "$TB_WORK/stream.sent" "$NS_LAN" \
		"$WAN_HOST4:$SRV_PORT" </dev/null >"$TB_WORK/stream.log" 2>&1 &
	TCP_PID=$!
	echo "$TCP_PID" >>"$TB_WORK/pids"
}

# shellcheck disable=SC2034,SC2154 # TEST_MODES is read by lib.sh
TEST_MODES[reload_soak]=xdp
test_reload_soak() {
	local flag=$TB_WORK/soaking i t0 t1 out sent got bad peers n_peers
	local srv_pid udp_srv_pid
	testbed_add_lan_port || fail "no second LAN port"
	soak_configs || fail "cannot write the configs"
	random_file "$TB_WORK/chunk.bin" 64K
	# tcp_server_recv's bound (T_XFER) is for one transfer, not a soak.
	T_XFER=$SOAK_GUARD tcp_server_recv "$NS_WAN" $SRV_PORT "$TB_WORK/stream.recv" ||
		fail "no TCP server"
	srv_pid=$BG_PID
	udp_peer_echo || fail "no UDP server"
	udp_srv_pid=$BG_PID
	touch "$flag"
	tcp_soak_stream "$flag"
	udp_soak_client "$flag" "$TB_WORK/udp.out"
	sleep 1

	t0=$(date +%s)
	for ((i = 0; i < RELOADS; i++)); do
		out=$(xnat up -c "$TB_WORK/soak$((i % 5)).ini" 2>&1) ||
			{ rm -f "$flag"; fail "reload $i (soak$((i % 5)).ini) failed: $out"; }
		kill -0 "$TCP_PID" 2>/dev/null ||
			{ rm -f "$flag"; fail "TCP stream ended at reload $i: $(cat "$TB_WORK/stream.log")"; }
	done
	t1=$(date +%s)
	echo "$RELOADS reloads in $((t1 - t0)) s"
	rm -f "$flag"

	wait "$TCP_PID" || fail "TCP stream failed: $(cat "$TB_WORK/stream.log")"
	bg_wait "$srv_pid" || fail "TCP server failed"
	wait_until_file_size "$TB_WORK/stream.recv" "$(stat -c %s "$TB_WORK/stream.sent")"
	same_file "$TB_WORK/stream.sent" "$TB_WORK/stream.recv" ||
		fail "TCP stream corrupted or cut across the reloads"

	wait "$UDP_PID"
	bg_stop "$udp_srv_pid"
	read -r sent got bad peers <"$TB_WORK/udp.out" || fail "no UDP result: $(cat "$TB_WORK/udp.out")"
	n_peers=$(wc -w <<<"$peers")
	echo "UDP: $sent sent, $got answered, $bad with a wrong payload, seen by the server as: $peers"
	[ "$bad" = 0 ] || fail "UDP payloads changed"
	[ "$n_peers" = 1 ] || fail "the UDP flow was NATed anew during the reloads ($peers)"
	[ $((got * 100)) -ge $((sent * 99)) ] || fail "more than 1 % of the UDP exchange lost"
}

# Wait (at most 10 s) until FILE has SIZE bytes: the receiver writes the
# last bytes after the sender closed.
wait_until_file_size() {
	for _ in $(seq 100); do
		[ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 0
}

run_tests "$@"
