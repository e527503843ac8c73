#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Packets of XDP flows that XDP cannot simply forward, end to end in the
# namespace testbed (lib.sh), in xdp mode and in kernel mode (the
# baseline: what the kernel does is what xdp mode must match):
#   - a download through a LAN port of MTU 1400 (hosts at 1500): the WAN
#     server must hear "fragmentation needed" and the download complete;
#   - a DF UDP reply too big for the LAN: "fragmentation needed" reaches
#     the WAN host, which learns PMTU 1400 (not "port unreachable");
#   - a 3000-byte UDP reply over IPv6, fragmented by the server, reaches
#     the LAN host (IPv6 fragments follow their first one's flow).
# docs/NAT.md lists each exception of a known flow with its test.
#
#   tests/integration/test_harden.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# A UDP peer in NS: "serve ADDR PORT LEN" answers each datagram with LEN
# bytes (DF set for IPv4) for 20 s; "ask DEST PORT SPORT" sends one
# datagram from SPORT and prints "reply N" (bytes) or "noreply".
udp_peer() {
	local ns=$1
	shift
	timeout 25 ip netns exec "$ns" python3 -c '
import socket, sys
cmd = sys.argv[1]
fam = socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
if cmd == "serve":
    s.bind((sys.argv[2], int(sys.argv[3])))
    if fam == socket.AF_INET:
        s.setsockopt(socket.IPPROTO_IP, 10, 2)  # IP_MTU_DISCOVER = DO
    print("ready", flush=True)
    s.settimeout(20)
    try:
        while True:
            d, a = s.recvfrom(4096)
            try:
                s.sendto(b"x" * int(sys.argv[4]), a)
            except OSError as e:
                print("send:", e, flush=True)
    except socket.timeout:
        pass
else:
    s.bind(("::" if fam == socket.AF_INET6 else "0.0.0.0", int(sys.argv[4])))
    s.settimeout(3)
    for _ in range(3):
        s.sendto(b"ask", (sys.argv[2], int(sys.argv[3])))
        try:
            d, a = s.recvfrom(8192)
            print("reply", len(d))
            break
        except socket.timeout:
            pass
    else:
        print("noreply")
' "$@"
}

# A LAN port of MTU 1400, hosts at 1500: a 2 MB download from the WAN host
# completes because the server hears "fragmentation needed" (from XDP in
# xdp mode: tx_icmp_too_big) and sends smaller segments. Before, xdp mode
# passed the big segments to the kernel, which answered with a RST.
test_lan_mtu_download() {
	check ip -n "$NS_RTR" link set "$RTR_LAN_IF" mtu 1400
	# MSS clamping would keep the server's segments small enough: this
	# test is about what happens without it (test_mss.sh has it on).
	config_add router mss_clamp off
	check xnat up -c "$TB_CONFIG"
	xdp_count_start tx_icmp_too_big
	random_file "$TB_WORK/dl.bin" 2M
	tcp_server_send "$NS_WAN" 5000 "$TB_WORK/dl.bin" || fail "no server"
	check tcp_recv "$NS_LAN" "TCP:$WAN_HOST4:5000" "$TB_WORK/dl.recv"
	same_file "$TB_WORK/dl.bin" "$TB_WORK/dl.recv" || fail "download incomplete or corrupted"
	check on_wan ip route get "$RTR_WAN4"
	grep -q 'mtu 1400' <<<"$CHECK_OUT" || fail "the WAN host did not learn PMTU 1400"
	xdp_count_rose tx_icmp_too_big "XDP sent no fragmentation needed"
}

# RFC 4787 REQ-13 the other way: a 1450-byte DF UDP reply towards a LAN
# port of MTU 1400 gets "fragmentation needed" (the WAN host caches PMTU
# 1400 for the NAT address), not "port unreachable".
test_df_udp_reply() {
	local out

	check ip -n "$NS_RTR" link set "$RTR_LAN_IF" mtu 1400
	check xnat up -c "$TB_CONFIG"
	udp_peer "$NS_WAN" serve "$WAN_HOST4" 7000 1450 >"$TB_WORK/srv.log" 2>&1 &
	echo $! >>"$TB_WORK/pids"
	wait_listen "$NS_WAN" udp 7000 || fail "no server"
	out=$(udp_peer "$NS_LAN" ask "$WAN_HOST4" 7000 47000)
	echo "reply to a small datagram: $out (server: $(cat "$TB_WORK/srv.log"))"
	check on_wan ip route get "$RTR_WAN4"
	grep -q 'mtu 1400' <<<"$CHECK_OUT" ||
		fail "the WAN host got no fragmentation needed for its DF reply"
}

# A LAN host asks over IPv6; the WAN server's 3000-byte reply leaves it as
# fragments (IPv6 routers never fragment: the sender does). They must
# reach the LAN host: the first carries the ports, the rest follow it.
test_ipv6_fragmented_reply() {
	local out

	udp_peer "$NS_WAN" serve "$WAN_HOST6" 7001 3000 >"$TB_WORK/srv6.log" 2>&1 &
	echo $! >>"$TB_WORK/pids"
	wait_listen "$NS_WAN" udp 7001 || fail "no server"
	out=$(udp_peer "$NS_LAN" ask "$WAN_HOST6" 7001 47001)
	echo "3000-byte reply over IPv6: $out"
	[ "$out" = "reply 3000" ] || fail "the fragmented reply did not arrive"
}

run_tests "$@"
