#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The source checks are a connection's, in every mode: taken on its first
# packet, never again on its later ones, and every packet of a refused
# connection is refused (and counted) again. In xdp mode XDP checks its new
# flows (fib_src_check in bpf/fib.h); in kernel and offload mode the
# forward chain of xnat's nftables table checks a connection whose
# conntrack entry is not confirmed yet, and the antispoof chain every
# packet from the WAN (user/kernel_mode.c). "ct state new" would be every
# packet of a one-way stream until a reply: those are not checked again
# either, and a spoofed packet from the WAN that matches such a
# connection is still dropped before conntrack.
#
# To tell "checked again" from "not checked", the router's route to the
# LAN host moves out of the WAN port after a connection's first packet:
# from then on a new connection from the LAN host fails the check (its
# source is no longer routed out of the port it came in by).
#
#   tests/integration/test_source_once.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

RAWPKT=$XNAT_ROOT/tests/integration/rawpkt.py
SPOOF_WAN4=198.19.0.77 # on the WAN's subnet, no host there
DPORT=5300

# Packets counted by the forward chain's LAN source check.
lan_source_drops() {
	local out
	out=$(on_rtr nft list chain inet xnat forward) || return 1
	sed -n -E 's/.*fib saddr (\. iif oif missing|oifname != \{[^}]*\}) counter packets ([0-9]+) bytes .*drop$/\2/p' <<<"$out" |
		awk '{ n += $1 } END { if (NR) print n }'
}

# Packets counted by the antispoof chain's drop rule.
antispoof_drops() {
	local out
	out=$(on_rtr nft list chain inet xnat antispoof) || return 1
	sed -n 's/.* counter packets \([0-9]*\) bytes .*drop$/\1/p' <<<"$out"
}

# Spoofed sources refused from a LAN port: XDP's count, or the forward
# chain's.
lan_refused() {
	if [ "$TB_MODE" = xdp ]; then
		counter drop_spoofed
	else
		lan_source_drops
	fi
}

# A receiver of every datagram to the WAN host's DPORT, one a line.
wan_receiver() {
	WAN_GOT=$TB_WORK/wan.recv
	bg_ns 40 "$NS_WAN" socat -u "UDP4-RECV:$DPORT" "OPEN:$WAN_GOT,creat,append"
	wait_listen "$NS_WAN" udp "$DPORT" || fail "no receiver on the WAN host"
}

# Datagram TEXT from the LAN host's SRC:SPORT to the WAN host, one way.
send_lan() {
	printf '%s\n' "$3" | on_lan socat -u - \
		"UDP4-SENDTO:$WAN_HOST4:$DPORT,bind=$1:$2"
}

# A UDP echo server on the WAN host's DPORT that also logs each datagram
# it gets (UDP_ECHO_LOG), for at most 40 s.
wan_echo() {
	bg_ns 40 "$NS_WAN" python3 -u -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[1])))
while True:
    d, a = s.recvfrom(65535)
    print(d.decode(errors="replace").strip(), flush=True)
    s.sendto(d, a)
' "$DPORT"
	UDP_ECHO_LOG=$TB_WORK/bg.$TB_BG_N.log
	wait_listen "$NS_WAN" udp "$DPORT" || fail "no echo server on the WAN host"
}

# A UDP request from the LAN host's SPORT to the WAN host; prints the reply.
ask_lan() {
	printf '%s\n' "$2" |
		timeout 5 ip netns exec "$NS_LAN" socat -t 0.5 - \
			"UDP:$WAN_HOST4:$DPORT,sourceport=$1,reuseaddr"
}

# The router routes the LAN host out of the WAN port from now on: a new
# connection from it fails the source check.
move_lan_host_route() {
	check on_rtr ip route add "$LAN_HOST4/32" via "$WAN_HOST4" dev "$RTR_WAN_IF"
}

# Every packet of a refused connection is refused again: five datagrams of
# one connection from a source the router routes out of the WAN, none out,
# each one counted.
test_refused_every_packet() {
	local tok=ref-$RANDOM before after i

	wan_receiver
	check on_lan ip addr add "$SPOOF_WAN4/32" dev "$HOST_IF"
	before=$(lan_refused)
	[ -n "$before" ] || fail "no LAN source check with a counter"
	for i in 1 2 3 4 5; do
		check send_lan "$SPOOF_WAN4" 40001 "spoofed$i-$tok"
	done
	check send_lan "$LAN_HOST4" 40002 "genuine-$tok"
	wait_log "$WAN_GOT" "genuine-$tok" || fail "the genuine datagram did not arrive"
	grep -q "spoofed.-$tok" "$WAN_GOT" &&
		fail "a datagram of the refused connection got out: $(cat "$WAN_GOT")"
	after=$(lan_refused)
	echo "refused: $before -> $after"
	[ "$after" -ge $((before + 5)) ] ||
		fail "not every datagram of the refused connection was counted ($before -> $after)"
}

# An established connection (it had a reply) is not checked again: after
# the route to its source moves, its next datagram still goes out, while
# a new connection from the same host is refused.
test_established_not_rechecked() {
	local tok=est-$RANDOM before

	wan_echo
	ask_lan 40011 "first-$tok" | grep -q "first-$tok" ||
		fail "no reply to the first datagram"
	move_lan_host_route
	before=$(lan_refused)
	check send_lan "$LAN_HOST4" 40012 "new-$tok"
	# Its reply would now go out of the WAN port: look at what the echo
	# server got instead.
	check send_lan "$LAN_HOST4" 40011 "again-$tok"
	wait_log "$UDP_ECHO_LOG" "again-$tok" ||
		fail "the established connection was checked again"
	grep -q "new-$tok" "$UDP_ECHO_LOG" &&
		fail "a new connection passed the moved source's check"
	[ "$(lan_refused)" -gt "$before" ] || fail "the new connection was not counted"
}

# A one-way connection (no reply: conntrack calls each of its packets new)
# is not checked again either: its first packet confirmed it.
test_one_way_not_rechecked() {
	local tok=ow-$RANDOM before

	wan_receiver
	check send_lan "$LAN_HOST4" 40021 "first-$tok"
	wait_log "$WAN_GOT" "first-$tok" || fail "the first datagram did not arrive"
	move_lan_host_route
	before=$(lan_refused)
	check send_lan "$LAN_HOST4" 40022 "new-$tok"
	check send_lan "$LAN_HOST4" 40021 "again-$tok"
	wait_log "$WAN_GOT" "again-$tok" ||
		fail "the one-way connection's second datagram was checked again"
	grep -q "new-$tok" "$WAN_GOT" &&
		fail "a new connection passed the moved source's check"
	[ "$(lan_refused)" -gt "$before" ] || fail "the new connection was not counted"
}

# A frame from the WAN carrying the tuple of a LAN host's one-way
# connection (its source a LAN address) is dropped before conntrack, on
# every packet: it never goes back out, NATed as that connection. In
# offload mode XDP finds the connection in conntrack (which matches the
# tuple, not the port) from the second such frame on, and hands it up
# (pass_ct_spoofed) for the antispoof chain to drop, as the first: it
# installs nothing for the WAN port (offload_src_check in bpf/offload.h).
test_wan_spoof_of_connection() {
	local tok=ws-$RANDOM mac before

	wan_receiver
	check send_lan "$LAN_HOST4" 40031 "first-$tok"
	wait_log "$WAN_GOT" "first-$tok" || fail "the first datagram did not arrive"
	mac=$(on_rtr cat "/sys/class/net/$RTR_WAN_IF/address") || fail "no MAC on $RTR_WAN_IF"
	before=$(antispoof_drops)
	check on_wan python3 "$RAWPKT" send "$HOST_IF" "$mac" "$LAN_HOST4" \
		"$WAN_HOST4" "$DPORT" udp --sport 40031 --count 3 --marker "spoofed-$tok"
	check send_lan "$LAN_HOST4" 40031 "second-$tok"
	wait_log "$WAN_GOT" "second-$tok" || fail "the second datagram did not arrive"
	grep -q "spoofed-$tok" "$WAN_GOT" &&
		fail "a WAN frame with the connection's LAN source went out: $(cat "$WAN_GOT")"
	if [ "$TB_MODE" != xdp ]; then
		[ "$(antispoof_drops)" -ge $((before + 3)) ] ||
			fail "the antispoof chain did not count each frame: $(on_rtr nft list chain inet xnat antispoof)"
	fi
	# Every other miss of a flow is looked up (bpf/ct_seen.h): of the
	# three, the second at least.
	if [ "$TB_MODE" = offload ]; then
		[ "$(counter pass_ct_spoofed)" -ge 1 ] ||
			fail "XDP did not hand the frames it found a connection for up as spoofed"
	fi
}

run_tests "$@"
