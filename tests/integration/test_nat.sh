#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# NAT behaviour the RFCs ask for (RFC 4787 UDP, RFC 5382 TCP, RFC 5508 ICMP)
# and the details users hit, end to end in the namespace testbed (lib.sh):
# mapping and filtering, port preservation and reuse, refresh direction,
# ICMP errors (unreachable, traceroute, PMTUD), MTU and fragments,
# hairpinning, several LANs, ICMP echo ids, the router's own traffic,
# exhaustion, TCP (stale segments, simultaneous open, unsolicited SYNs) and
# the default timeouts. docs/NAT.md maps each RFC requirement to its test.
#
# Every test runs in xdp, kernel (nftables masquerade, the baseline) and
# offload mode (the same netfilter NAT, its connections carried by XDP).
# Where Linux's netfilter NAT behaves differently the kernel- and
# offload-mode runs assert what netfilter does, so docs/NAT.md's kernel
# column is measured, not guessed; those places say "kernel:" in the
# test's output.
#
# Remote peers report the address and port they see, like a STUN server:
# that is how a test sees the external mapping. Config variants (timeouts,
# port range, filtering) are written to TB_WORK and applied with
# `xnat up -c` (a reload), or down/up where a map changes size.
#
#   tests/integration/test_nat.sh [SUBSTRING...]   e.g. eim '[kernel]'
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp               see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

RAWPKT=$XNAT_ROOT/tests/integration/rawpkt.py
WAN_HOST4B=198.19.0.3          # a second remote address on the WAN host

# ---- helpers ----------------------------------------------------------------

# The UDP/ICMP peer tool the tests run in the namespaces, written into the
# test's TB_WORK on first use. Subcommands:
#   stun ADDR:PORT...        answer each datagram with "ADDR:PORT" of its
#                            sender, on every listed address
#   probe SPORT DEST...      from one socket bound to SPORT, one datagram to
#     [--listen S]           each DEST in turn; "reply DEST SEEN" or
#                            "noreply DEST"; then print "recv FROM DATA
#                            len=N" (DATA cut at 40 bytes) for what arrives
#                            in the next S seconds
#   send FROM TO MSG         one datagram from address:port FROM to TO
#   ticker ADDR:PORT N       wait for one datagram, answer it, then send
#                            "tick I T" to its sender every second N times
#                            (T: seconds since the first datagram)
#   echo_id DST ID N         N ICMP echo requests with identifier ID, 0.1 s
#                            apart (raw socket); "replies K" matching ID
#   burst DST N              N UDP sockets, one datagram each, as fast as
#                            possible; "replies K/N" within 3 s
#   sized ADDR:PORT          answer a datagram "N ..." with N bytes that
#                            start with "ADDR:PORT " of its sender; "N nodf
#                            ..." asks for an answer without DF
#   fragrev FROM TO LEN      a LEN-byte UDP datagram from FROM to TO, sent
#                            as raw IPv4 fragments of at most 1000 bytes,
#                            last fragment first
#   tcpopen FROM DEST MSG [SECS]
#                            TCP connect from FROM (PORT or ADDR:PORT) to
#                            DEST (8 s or SECS), send MSG, print
#                            "connected, got LINE" or "failed: WHY"
#   tcpmap SPORT DEST SECS   listen on SPORT and connect from SPORT to DEST
#                            (both SO_REUSEPORT: the hole punching setup);
#                            print "mapped", then "accepted FROM MSG" for
#                            each connection in the next SECS seconds
#   ask SPORT DEST N LEN [nodf]
#                            from SPORT, a LEN-byte datagram asking DEST
#                            for N bytes (nodf: both without DF); prints
#                            "reply LEN_RECEIVED SEEN" or "noreply"
natpeer_write() {
	[ -f "$TB_WORK/natpeer.py" ] && return 0
	# Python finds the modules next to the script it runs: rawpkt's there.
	ln -sf "$RAWPKT" "$TB_WORK/rawpkt.py" || return 1
	cat >"$TB_WORK/natpeer.py" <<'EOF'
import select, socket, struct, sys, time

from rawpkt import csum

def ep(s):
    a, p = s.rsplit(":", 1)
    return a, int(p)

def out(*a):
    print(*a, flush=True)

def until(secs, sock, wait):
    """What WAIT (a call on SOCK) returns, again and again, until SECS have
    passed or it times out."""
    end = time.monotonic() + secs
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        sock.settimeout(left)
        try:
            got = wait()
        except socket.timeout:
            return
        yield got

def udp_sock(bind=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if bind:
        s.bind(bind)
    return s

def stun(eps):
    socks = [udp_sock(ep(e)) for e in eps]
    out("ready")
    while True:
        for s in select.select(socks, [], [])[0]:
            d, peer = s.recvfrom(2048)
            s.sendto(("%s:%d" % peer).encode(), peer)
            out("%s:%d -> %s:%d" % (peer + s.getsockname()))

def probe(sport, dests, listen):
    s = udp_sock(("0.0.0.0", sport))
    for d in dests:
        s.sendto(b"probe", ep(d))
        s.settimeout(2)
        try:
            while True:
                data, peer = s.recvfrom(2048)
                if peer == ep(d):
                    break
            out("reply", d, data.decode())
        except socket.timeout:
            out("noreply", d)
    if listen:
        out("listening")
        for data, peer in until(listen, s, lambda: s.recvfrom(65535)):
            out("recv %s:%d %s len=%d" % (peer + (data[:40].decode(errors="replace"), len(data))))
    out("done")

def send(frm, to, msg):
    s = udp_sock(ep(frm))
    s.sendto(msg.encode(), ep(to))

def ticker(e, n):
    s = udp_sock(ep(e))
    out("ready")
    s.settimeout(20)
    d, peer = s.recvfrom(2048)
    t0 = time.monotonic()
    s.sendto(b"hello", peer)
    out("first from %s:%d" % peer)
    for i in range(1, n + 1):
        time.sleep(max(0, t0 + i - time.monotonic()))
        s.sendto(("tick %d %.2f" % (i, time.monotonic() - t0)).encode(), peer)
        out("sent tick %d" % i)

def echo_id(dst, ident, n):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    got = set()
    t_end = time.monotonic() + n * 0.1 + 3
    nxt, seq = time.monotonic(), 0
    while time.monotonic() < t_end and len(got) < n:
        if seq < n and time.monotonic() >= nxt:
            seq += 1
            h = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + b"xnat-echo-id"
            h = h[:2] + struct.pack("!H", csum(h)) + h[4:]
            s.sendto(h, (dst, 0))
            nxt += 0.1
        wait = max(0.01, min(nxt, t_end) - time.monotonic())
        if not select.select([s], [], [], wait)[0]:
            continue
        pkt, addr = s.recvfrom(2048)
        ihl = (pkt[0] & 15) * 4
        t, _, _, i, q = struct.unpack("!BBHHH", pkt[ihl:ihl + 8])
        if t == 0 and i == ident and addr[0] == dst:
            got.add(q)
    out("replies %d" % len(got))
    if len(got) < n:
        out("missing seq %s" % sorted(set(range(1, n + 1)) - got))

def burst(dst, n):
    socks = [udp_sock(("0.0.0.0", 0)) for _ in range(n)]
    for s in socks:
        s.setblocking(False)
        s.sendto(b"burst", ep(dst))
    got, end = set(), time.monotonic() + 3
    while len(got) < n and time.monotonic() < end:
        for s in select.select(socks, [], [], 0.2)[0]:
            try:
                s.recvfrom(2048)
                got.add(s.fileno())
            except BlockingIOError:
                pass
    out("replies %d/%d" % (len(got), n))

def sized(e):
    s = udp_sock(ep(e))
    out("ready")
    while True:
        d, peer = s.recvfrom(65535)
        n = int(d.split()[0])
        # IP_MTU_DISCOVER: IP_PMTUDISC_DONT (no DF) or _WANT (default)
        s.setsockopt(socket.IPPROTO_IP, 10, 0 if d.split()[1:2] == [b"nodf"] else 1)
        r = ("%s:%d " % peer).encode()
        s.sendto(r + b"x" * max(0, n - len(r)), peer)
        out("%d bytes from %s:%d, answered %d" % ((len(d),) + peer + (n,)))

def ask(sport, dest, n, length, nodf):
    s = udp_sock(("0.0.0.0", sport))
    if nodf:
        s.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_MTU_DISCOVER, _DONT
    m = ("%d %s" % (n, "nodf " if nodf else "")).encode()
    s.sendto(m + b"y" * max(0, length - len(m)), ep(dest))
    s.settimeout(2)
    try:
        d, peer = s.recvfrom(65535)
        out("reply %d %s" % (len(d), d.split()[0].decode()))
    except socket.timeout:
        out("noreply")

def tcpopen(frm, dest, msg, secs=8):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(ep(frm) if ":" in frm else ("0.0.0.0", int(frm)))
    s.settimeout(secs)
    try:
        s.connect(ep(dest))
    except OSError as e:
        out("failed:", e)
        sys.exit(1)
    s.sendall(msg.encode() + b"\n")
    out("connected, got", s.recv(100).decode().strip())
    time.sleep(0.5)

def fragrev(frm, to, length):
    (sa, sp), (da, dp) = ep(frm), ep(to)
    payload = (b"fragrev " + b"z" * length)[:length]
    pseudo = socket.inet_aton(sa) + socket.inet_aton(da) + \
        struct.pack("!BBH", 0, 17, 8 + length)
    udp = struct.pack("!HHHH", sp, dp, 8 + length, 0) + payload
    c = csum(pseudo + udp) or 0xffff
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    ident, step, frags = 0x4242, 1000, []
    for off in range(0, len(udp), step):
        chunk = udp[off:off + step]
        more = 0x2000 if off + step < len(udp) else 0
        hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(chunk), ident,
                          more | (off // 8), 64, 17, 0,
                          socket.inet_aton(sa), socket.inet_aton(da))
        hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
        frags.append(hdr + chunk)
    for f in reversed(frags):
        s.sendto(f, (da, 0))
    out("sent %d fragments, last first" % len(frags))

def tcpmap(sport, dest, secs):
    def sock():
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.bind(("0.0.0.0", sport))
        return s
    lst = sock()
    lst.listen(8)
    c = sock()
    c.settimeout(5)
    c.connect(ep(dest))
    out("mapped", c.recv(100).decode().strip())
    for a, peer in until(secs, lst, lst.accept):
        a.settimeout(2)
        out("accepted %s:%d %s" % (peer + (a.recv(100).decode().strip(),)))
        a.sendall(b"hi\n")
        a.close()
    out("done")

cmd, a = sys.argv[1], sys.argv[2:]
if cmd == "stun":
    stun(a)
elif cmd == "probe":
    listen = 0
    if "--listen" in a:
        i = a.index("--listen")
        listen = float(a[i + 1])
        a = a[:i] + a[i + 2:]
    probe(int(a[0]), a[1:], listen)
elif cmd == "send":
    send(a[0], a[1], a[2])
elif cmd == "ticker":
    ticker(a[0], int(a[1]))
elif cmd == "echo_id":
    echo_id(a[0], int(a[1]), int(a[2]))
elif cmd == "burst":
    burst(a[0], int(a[1]))
elif cmd == "tcpopen":
    tcpopen(a[0], a[1], a[2], float(a[3]) if a[3:] else 8)
elif cmd == "fragrev":
    fragrev(a[0], a[1], int(a[2]))
elif cmd == "tcpmap":
    tcpmap(int(a[0]), a[1], float(a[2]))
elif cmd == "sized":
    sized(a[0])
elif cmd == "ask":
    ask(int(a[0]), a[1], int(a[2]), int(a[3]), a[4:] == ["nodf"])
else:
    sys.exit("unknown command " + cmd)
EOF
}

# natpeer NS ARGS...: run the peer tool in NS, in the foreground (bounded).
natpeer() {
	local ns=$1
	shift
	natpeer_write
	timeout 30 ip netns exec "$ns" python3 "$TB_WORK/natpeer.py" "$@"
}

# natpeer_bg SECS NS ARGS...: in the background; NATPEER_LOG is its log.
natpeer_bg() {
	local secs=$1 ns=$2
	shift 2
	natpeer_write
	bg_ns "$secs" "$ns" python3 "$TB_WORK/natpeer.py" "$@"
	NATPEER_LOG=$TB_WORK/bg.$TB_BG_N.log
}

# A STUN-like UDP server in NS, for 120 s, on each ADDR:PORT given.
stun_server() {
	local ns=$1
	shift
	natpeer_bg 120 "$ns" stun "$@"
	wait_log "$NATPEER_LOG" '^ready' || return 1
}

# The LAN host's socket SPORT sends to DEST, then listens SECS s for
# whatever comes to its mapping (natpeer probe --listen, in the
# background). Sets PROBE_LOG (its output) and PROBE_PORT (the external
# port DEST saw).
udp_probe_listen() {
	local sport=$1 dest=$2 secs=$3
	natpeer_bg 20 "$NS_LAN" probe "$sport" "$dest" --listen "$secs"
	PROBE_LOG=$NATPEER_LOG
	wait_log "$PROBE_LOG" '^listening' || fail "the inside socket got no reply"
	PROBE_PORT=$(seen_port "$(cat "$PROBE_LOG")" "$dest")
	echo "inside $sport -> external $PROBE_PORT"
}

# The external port a probe's output reports for DEST ("reply DEST A:P").
seen_port() {
	awk -v d="$2" '$1 == "reply" && $2 == d { n = split($3, a, ":"); print a[n]; exit }' <<<"$1"
}

# One probe from NS, source port SPORT, to DEST...; the output is checked
# to hold a reply from each, and left in CHECK_OUT.
probe_ok() {
	local ns=$1 sport=$2 d
	shift 2
	check natpeer "$ns" probe "$sport" "$@"
	for d in "$@"; do
		grep -q "^reply $d $RTR_WAN4:" <<<"$CHECK_OUT" ||
			fail "no reply from $d to source port $sport"
	done
}

# Poll until no flow entry matches COND, for at most LIMIT ms. GONE_MS is
# when that was first seen (the flow ended before it); SEEN_MS when the
# last poll that still found the flow began (the flow ended after it).
wait_flows_gone() {
	local cond=$1 limit=$2 t0 t n
	t0=$(now_ms)
	SEEN_MS=$t0
	while :; do
		t=$(now_ms)
		n=$(flow_count "$cond") || return 1
		if [ "$n" -eq 0 ]; then
			GONE_MS=$(now_ms)
			return 0
		fi
		SEEN_MS=$t
		[ $(($(now_ms) - t0)) -gt "$limit" ] && return 1
		sleep 0.2
	done
}

# Poll until the router's conntrack has no entry matching the extended regex
# (kernel mode's flows), for at most LIMIT ms.
wait_conntrack_gone() {
	local re=$1 limit=$2 t0
	t0=$(now_ms)
	while on_rtr grep -qE "$re" /proc/net/nf_conntrack; do
		[ $(($(now_ms) - t0)) -gt "$limit" ] && return 1
		sleep 0.2
	done
	return 0
}

# MAC address of interface IF in namespace NS.
ns_mac() {
	ip -n "$1" link show "$2" | awk '$1 == "link/ether" { print $2; exit }'
}

# A TCP server that answers each connection with "ADDR PORT" of its peer
# (fork: any number of connections), for SECS. (A ':' would end socat's
# SYSTEM command.) The command reads what the client sends until it closes:
# a command that exits at once races the client's first bytes, and when
# socat's write of them to the exited command fails (EPIPE), it ends the
# connection without sending the line it had read, so the client saw an
# empty answer now and then, more often on a loaded machine.
tcp_peer_server() {
	local ns=$1 port=$2 secs=${3:-60}
	# shellcheck disable=SC2016 # socat's environment, not ours
	bg_ns "$secs" "$ns" socat "TCP-LISTEN:$port,reuseaddr,fork" \
		SYSTEM:'echo $SOCAT_PEERADDR $SOCAT_PEERPORT; cat >/dev/null'
	wait_listen "$ns" tcp "$port"
}

# Connect from NS to ADDR:PORT and print the server's line as ADDR:PORT.
tcp_ask() {
	local out
	out=$(timeout 10 ip netns exec "$1" socat -T 5 - \
		"TCP:$2,connect-timeout=3" </dev/null) || return 1
	[ -n "$out" ] || return 1
	echo "${out% *}:${out#* }"
}

# ---- mapping ----------------------------------------------------------------

# RFC 4787 REQ-1 / RFC 5382 REQ-1: endpoint-independent mapping. One inside
# socket (port 40000) sends to three destinations (two ports of the WAN
# host, and a second address): all three see the same external port, and it
# is 40000 (port preservation). Two TCP connections from inside port 40001
# to two servers share one external port too. Inside ports outside the XDP
# range (15000, and 1000 for RFC 4787 REQ-3a) are mapped into it in xdp
# mode, kept by netfilter. Then a second LAN host takes 41000 first; the
# LAN host's socket 41000 talks to a new destination and then to the second
# host's one. With EIM both see one port, not 41000 (taken). Netfilter
# reuses a socket's mapping only while the resulting 5-tuple is free: it
# keeps 41000 towards the new destination and picks another port towards
# the clashing one, so the same socket shows two different ports.
test_eim() {
	local d1="$WAN_HOST4:7000" d2="$WAN_HOST4:7001" d3="$WAN_HOST4B:7000"
	local p1 p2 p3 pa1 pa2 pb low sp t1 t2

	testbed_add_wan_addr "$WAN_HOST4B" || fail "cannot add $WAN_HOST4B"
	testbed_add_lan_host || fail "cannot add the second LAN host"
	stun_server "$NS_WAN" "$d1" "$d2" "$d3" || fail "no server"

	probe_ok "$NS_LAN" 40000 "$d1" "$d2" "$d3"
	p1=$(seen_port "$CHECK_OUT" "$d1")
	p2=$(seen_port "$CHECK_OUT" "$d2")
	p3=$(seen_port "$CHECK_OUT" "$d3")
	echo "inside 40000 -> external $p1 ($d1), $p2 ($d2), $p3 ($d3)"
	[ "$p1" = "$p2" ] && [ "$p1" = "$p3" ] ||
		fail "one inside endpoint got different external ports: $p1 $p2 $p3"
	[ "$p1" = 40000 ] || fail "port 40000 (in range, free) was not preserved: $p1"
	if [ "$TB_MODE" = xdp ]; then
		[ "$(flow_count "f['nat'] == 'snat' and f['src'] == '$LAN_HOST4:40000' and f['new_src'] == '$RTR_WAN4:40000'")" = 3 ] ||
			fail "the three flows of 40000 are not XDP flows with external port 40000"
	fi

	# TCP: two sockets bound to inside port 40001 connect to two
	# destinations; one external port for both.
	tcp_peer_server "$NS_WAN" 5000 || fail "no server"
	check natpeer "$NS_LAN" tcpopen 40001 "$WAN_HOST4:5000" x
	t1=$(awk '$1 == "connected," { print $3 ":" $4 }' <<<"$CHECK_OUT")
	check natpeer "$NS_LAN" tcpopen 40001 "$WAN_HOST4B:5000" x
	t2=$(awk '$1 == "connected," { print $3 ":" $4 }' <<<"$CHECK_OUT")
	echo "TCP inside 40001 -> $t1 ($WAN_HOST4:5000), $t2 ($WAN_HOST4B:5000)"
	[ "$t1" = "$RTR_WAN4:40001" ] && [ "$t2" = "$t1" ] ||
		fail "TCP: one inside endpoint got $t1 and $t2"

	# Inside ports outside the XDP range, a privileged one among them:
	# xdp maps them into the range (RFC 4787 REQ-3a not met); netfilter
	# keeps them (and would keep a privileged one privileged).
	for sp in 15000 1000; do
		probe_ok "$NS_LAN" $sp "$d1"
		low=$(seen_port "$CHECK_OUT" "$d1")
		echo "inside $sp -> external $low"
		if [ "$TB_MODE" = xdp ]; then
			[ "$low" -ge "$NAT_PORT_MIN" ] && [ "$low" -le "$NAT_PORT_MAX" ] ||
				fail "inside port $sp mapped to $low, outside the XDP range"
		else
			[ "$low" = $sp ] || fail "kernel: netfilter did not preserve port $sp ($low)"
		fi
	done

	# Collision: the second host holds 41000 towards d1.
	probe_ok "$NS_LAN2" 41000 "$d1"
	pb=$(seen_port "$CHECK_OUT" "$d1")
	[ "$pb" = 41000 ] || fail "second host: 41000 not preserved ($pb)"
	probe_ok "$NS_LAN" 41000 "$d2" "$d1"
	pa2=$(seen_port "$CHECK_OUT" "$d2")
	pa1=$(seen_port "$CHECK_OUT" "$d1")
	echo "second host 41000 -> $pb; LAN host 41000 -> $pa2 ($d2), $pa1 ($d1)"
	if [ "$TB_MODE" = xdp ]; then
		[ "$pa1" = "$pa2" ] ||
			fail "EIM broken: the LAN host's 41000 got $pa2 towards $d2 and $pa1 towards $d1"
		[ "$pa1" != 41000 ] || fail "41000 given to two inside endpoints"
	else
		echo "kernel: netfilter keeps 41000 where the 5-tuple is free ($pa2) and remaps only towards the clash ($pa1)"
		[ "$pa2" = 41000 ] && [ "$pa1" != 41000 ] ||
			fail "kernel: expected 41000 towards $d2 and another port towards $d1, got $pa2 and $pa1"
	fi
}

# The datagram TAG from SENDER (WHO in words) reached the inside socket
# whose LOG udp_probe_listen keeps: XDP's filtering lets it in. Netfilter
# filters by address and port (conntrack), so in the other modes it must
# not.
udp_in_xdp_only() {
	local log=$1 sender=$2 tag=$3 who=$4

	if [ "$TB_MODE" = xdp ]; then
		grep -q "^recv $sender $tag" "$log" ||
			fail "XDP's filtering dropped a datagram from $who"
	else
		echo "kernel: from $who: $(grep -c "$tag" "$log") received"
		grep -q "$tag" "$log" &&
			fail "kernel: netfilter let in a datagram from $who"
	fi
	return 0
}

# RFC 4787 REQ-8 / RFC 5382 REQ-3, default address-dependent filtering:
# after the inside socket sent to WAN_HOST4:7000, a datagram from
# WAN_HOST4:7001 (same address, another port) to its external port reaches
# it; one from WAN_HOST4B, never contacted, does not, and XDP counts it as
# drop_filtered. Netfilter filters by address and port (conntrack): neither
# gets in.
test_filtering_adf() {
	local d1="$WAN_HOST4:7000" port log drop0=0 drop1

	testbed_add_wan_addr "$WAN_HOST4B" || fail "cannot add $WAN_HOST4B"
	stun_server "$NS_WAN" "$d1" || fail "no server"
	[ "$TB_MODE" = xdp ] && { drop0=$(counter drop_filtered) || fail "no drop_filtered counter"; }

	udp_probe_listen 42000 "$d1" 6
	log=$PROBE_LOG port=$PROBE_PORT

	check natpeer "$NS_WAN" send "$WAN_HOST4:7001" "$RTR_WAN4:$port" same-address
	check natpeer "$NS_WAN" send "$WAN_HOST4B:7000" "$RTR_WAN4:$port" other-address
	sleep 1
	sed 's/^/  inside | /' "$log"
	udp_in_xdp_only "$log" "$WAN_HOST4:7001" same-address \
		"another port of the contacted address"
	grep -q other-address "$log" &&
		fail "a datagram from $WAN_HOST4B (never contacted) reached the inside socket"
	if [ "$TB_MODE" = xdp ]; then
		drop1=$(counter drop_filtered) || fail "no drop_filtered counter"
		echo "drop_filtered: $drop0 before, $drop1 after"
		[ "$drop1" -gt "$drop0" ] || fail "drop_filtered did not count the filtered datagram"
	fi

	# TCP (RFC 5382 REQ-3), the same filter: the inside socket listens on
	# the port it connected from.
	tcp_filter_probe 42100
	if [ "$TB_MODE" = xdp ]; then
		grep -q 'connected, got hi' <<<"$TCP_SAME" ||
			fail "TCP: address-dependent filtering refused another port of the contacted address"
		grep -q 'failed: timed out' <<<"$TCP_OTHER" ||
			fail "TCP: a connection from $WAN_HOST4B (never contacted) was not silently dropped"
	else
		echo "kernel: TCP from the contacted address's other port: $TCP_SAME"
		kernel_refused "$TCP_SAME" "another port"
		kernel_refused "$TCP_OTHER" "$WAN_HOST4B"
	fi
	return 0
}

# TCP through a mapping: the LAN host's socket SPORT connects to
# WAN_HOST4:7000 and listens on SPORT; then the WAN host connects to the
# mapping from WAN_HOST4:7001 (TCP_SAME) and from WAN_HOST4B:7002
# (TCP_OTHER), 3 s each; their outputs are set. Filtered attempts time out
# in xdp mode; in kernel mode the router's stack refuses them.
tcp_filter_probe() {
	local sport=$1 log port
	tcp_peer_server "$NS_WAN" 7000 || fail "no server"
	natpeer_bg 30 "$NS_LAN" tcpmap "$sport" "$WAN_HOST4:7000" 9
	log=$NATPEER_LOG
	wait_log "$log" '^mapped' || fail "no TCP mapping"
	port=$(awk '$1 == "mapped" { print $3 }' "$log")
	echo "TCP inside $sport -> external $port"
	TCP_SAME=$(natpeer "$NS_WAN" tcpopen "$WAN_HOST4:7001" "$RTR_WAN4:$port" same-address 3)
	TCP_OTHER=$(natpeer "$NS_WAN" tcpopen "$WAN_HOST4B:7002" "$RTR_WAN4:$port" other-address 3)
	echo "from $WAN_HOST4:7001: $TCP_SAME"
	echo "from $WAN_HOST4B:7002: $TCP_OTHER"
	wait_log "$log" '^done' 15
	sed 's/^/  inside | /' "$log"
}

# Kernel mode: the router's stack refused the TCP connection of
# tcp_filter_probe whose output is OUT (the one from WHO), or the test fails.
kernel_refused() {
	grep -q 'failed:.*refused' <<<"$1" ||
		fail "kernel: expected the router to refuse a TCP connection from $2"
}

# filtering = endpoint-independent: anyone may reach a live mapping, here
# WAN_HOST4B that the socket never contacted. Netfilter has no such mode:
# in kernel mode the key is ignored and conntrack still filters.
test_filtering_eif() {
	local d1="$WAN_HOST4:7000" port log

	testbed_add_wan_addr "$WAN_HOST4B" || fail "cannot add $WAN_HOST4B"
	reload_with eif nat.filtering=endpoint-independent
	stun_server "$NS_WAN" "$d1" || fail "no server"

	udp_probe_listen 42001 "$d1" 5
	log=$PROBE_LOG port=$PROBE_PORT

	check natpeer "$NS_WAN" send "$WAN_HOST4B:7000" "$RTR_WAN4:$port" other-address
	sleep 1
	sed 's/^/  inside | /' "$log"
	udp_in_xdp_only "$log" "$WAN_HOST4B:7000" other-address \
		"$WAN_HOST4B, never contacted"

	tcp_filter_probe 42101
	if [ "$TB_MODE" = xdp ]; then
		grep -q 'connected, got hi' <<<"$TCP_OTHER" ||
			fail "TCP: endpoint-independent filtering refused $WAN_HOST4B"
	else
		echo "kernel: TCP from a never contacted address: $TCP_OTHER"
		kernel_refused "$TCP_OTHER" "$WAN_HOST4B"
	fi
	return 0
}

# RFC 4787 REQ-1/REQ-3 and the issue's "no port reuse until the timeout":
# one XDP port (30000), udp = 3 s. The LAN host's socket 30000 takes it.
# The second LAN host's socket 30000 cannot have a port of its own: towards
# another destination it shares 30000 endpoint-dependently (fwd_slow_edm,
# docs/NAT.md), towards the LAN host's destination it goes to the kernel's
# NAT (pass_no_port) with another port; both work. After the LAN host's
# flow has expired the port stays reserved for one more timeout, for
# endpoint-dependent flows too; then the second host gets 30000 from XDP. Netfilter shares the port: the second host's 30000
# keeps 30000 towards another destination while the first host holds it
# (the 5-tuple is unique), and gets another port only towards the clashing
# destination.
test_no_port_reuse() {
	local d1="$WAN_HOST4:7000" d2="$WAN_HOST4:7001" p p2 nop0=0 nop1 seen gone t sp got=""

	testbed_add_lan_host || fail "cannot add the second LAN host"
	reload_with oneport nat.ports=30000-30000 timeouts.udp=3
	stun_server "$NS_WAN" "$d1" "$d2" || fail "no server"
	[ "$TB_MODE" = xdp ] && { nop0=$(counter pass_no_port) || fail "no pass_no_port counter"; }

	probe_ok "$NS_LAN" 30000 "$d1"
	p=$(seen_port "$CHECK_OUT" "$d1")
	echo "LAN host 30000 -> $p"
	[ "$p" = 30000 ] || fail "LAN host did not get port 30000 ($p)"

	probe_ok "$NS_LAN2" 30000 "$d2"
	p2=$(seen_port "$CHECK_OUT" "$d2")
	echo "second host 30000 -> $p2 (another destination, while the LAN host holds 30000)"
	probe_ok "$NS_LAN2" 30000 "$d1"
	p=$(seen_port "$CHECK_OUT" "$d1")
	echo "second host 30000 -> $p (the LAN host's destination)"
	[ "$p" != 30000 ] || fail "30000 handed to a second inside endpoint towards the same destination"
	if [ "$TB_MODE" != xdp ]; then # the kernel NATs (kernel, offload)
		echo "kernel: netfilter shares 30000 with another inside host towards another destination ($p2), remaps towards the clash ($p)"
		[ "$p2" = 30000 ] || fail "kernel: expected netfilter to share 30000 (5-tuple unique), got $p2"
		return 0
	fi
	# xdp: the second host cannot have a port of its own, so towards the
	# other destination it shares 30000 endpoint-dependently, as netfilter
	# does (counted as fwd_slow_edm); towards the clash the kernel's NAT
	# takes it with its own range (pass_no_port).
	[ "$p2" = 30000 ] || fail "xdp: expected 30000 shared endpoint-dependently towards $d2, got $p2"
	[ "$(counter fwd_slow_edm)" -ge 1 ] || fail "the shared port was not counted as fwd_slow_edm"
	nop1=$(counter pass_no_port) || fail "no pass_no_port counter"
	echo "pass_no_port: $nop0 before, $nop1 after"
	[ "$nop1" -gt "$nop0" ] || fail "the second host's flows were not counted as pass_no_port"

	# The LAN host's flow expires (udp = 3 s), between SEEN and GONE...
	wait_flows_gone "f['src'] == '$LAN_HOST4:30000'" 10000 ||
		fail "the LAN host's flow did not expire"
	seen=$SEEN_MS gone=$GONE_MS
	echo "LAN host's flow ended $((gone - seen)) ms or less before $gone"
	# ...and right after, 30000 is still reserved for its mapping.
	t=$(now_ms)
	probe_ok "$NS_LAN2" 31000 "$d1"
	p=$(seen_port "$CHECK_OUT" "$d1")
	echo "second host 31000 -> $p, sent $((t - gone)) ms after the flow was seen gone"
	if [ "$p" = 30000 ]; then
		# Only a failure if the probe surely came before the timeout.
		[ $((t - gone)) -ge 2900 ] ||
			fail "30000 reused right after its flow ended, before the mapping timeout"
		echo "(the probe came too late to judge)"
	fi

	# Fresh source ports (conntrack owns the ones already used) until
	# XDP hands out 30000 again.
	for sp in $(seq 31001 31030); do
		probe_ok "$NS_LAN2" "$sp" "$d1"
		p=$(seen_port "$CHECK_OUT" "$d1")
		if [ "$p" = 30000 ]; then
			got=$sp
			break
		fi
		sleep 0.5
	done
	# The flow ended after SEEN, the reply came before now: if that is
	# less than the timeout (less 100 ms of coarse clock), it was early.
	t=$(($(now_ms) - seen))
	[ -n "$got" ] || fail "30000 never became free again ($t ms after the flow ended)"
	echo "second host $got -> 30000, at most $t ms after the LAN host's flow ended"
	[ "$t" -ge 2900 ] || fail "30000 reused $t ms after its flow ended, before the 3 s mapping timeout"
	[ "$(flow_count "f['src'] == '$LAN2_HOST4:$got' and f['new_src'] == '$RTR_WAN4:30000'")" = 1 ] ||
		fail "the second host's 30000 is not an XDP flow"
}

# ---- refresh ----------------------------------------------------------------

# RFC 4787 REQ-6: outbound refresh only, unless [nat] inbound_refresh = yes.
# udp = 3 s. After one exchange, the WAN host keeps sending to the mapping
# every second for 12 s. By default the mapping must not outlive its
# timeout: the flow is gone after about 3 s, the mapping at the latest one
# timeout later, so nothing sent after 8 s may arrive. With inbound_refresh
# = yes every tick arrives and the flow is still there at the end.
# Conntrack refreshes on every packet: in kernel mode every tick arrives
# either way.
run_refresh() {
	local sport=$1 srv=$2 log

	natpeer_bg 30 "$NS_WAN" ticker "$WAN_HOST4:$srv" 12
	wait_log "$NATPEER_LOG" '^ready' || fail "no ticker"
	natpeer_bg 30 "$NS_LAN" probe "$sport" "$WAN_HOST4:$srv" --listen 14
	log=$NATPEER_LOG
	wait_log "$log" '^listening' || fail "no reply from the ticker"
	wait_log "$log" '^done' 20 || fail "the inside socket did not finish"
	REFRESH_N=$(grep -c '^recv .* tick ' "$log")
	REFRESH_LATE=$(awk '$1 == "recv" && $3 == "tick" && $5 >= 8 { n++ } END { print n + 0 }' "$log")
	echo "inside $sport: $REFRESH_N of 12 ticks arrived, $REFRESH_LATE of them sent 8 s or more after the exchange"
	grep '^recv' "$log" | sed 's/^/  inside | /'
}

test_udp_inbound_refresh() {
	local cond drop0=0 drop1

	reload_with short timeouts.udp=3
	[ "$TB_MODE" = xdp ] && drop0=$(($(counter drop_unsolicited) + $(counter drop_filtered)))
	run_refresh 43000 7000
	if [ "$TB_MODE" != xdp ]; then # the kernel NATs (kernel, offload)
		echo "kernel: conntrack refreshes UDP on inbound packets: $REFRESH_N of 12 ticks arrived"
		[ "$REFRESH_N" = 12 ] || fail "kernel: expected every tick to arrive (conntrack refreshes on inbound)"
	else
		cond="f['proto'] == 'udp' and (f['src'] == '$LAN_HOST4:43000' or f['new_dst'] == '$LAN_HOST4:43000')"
		echo "flows of the inside socket at the end: $(flow_count "$cond")"
		drop1=$(($(counter drop_unsolicited) + $(counter drop_filtered)))
		echo "drop_unsolicited + drop_filtered: $drop0 before, $drop1 after"
		[ "$REFRESH_LATE" = 0 ] ||
			fail "inbound-only traffic kept the mapping alive: $REFRESH_LATE ticks sent >= 8 s after the last outbound packet arrived (udp = 3 s, inbound_refresh = no)"
		[ "$drop1" -gt "$drop0" ] || fail "the late ticks were not counted as dropped"
	fi

	reload_with refresh timeouts.udp=3 nat.inbound_refresh=yes
	run_refresh 43001 7001
	[ "$REFRESH_N" = 12 ] || fail "with inbound_refresh = yes only $REFRESH_N of 12 ticks arrived"
	if [ "$TB_MODE" = xdp ]; then
		[ "$(flow_count "f['nat'] == 'snat' and f['src'] == '$LAN_HOST4:43001'")" = 1 ] ||
			fail "with inbound_refresh = yes the flow expired while the WAN kept sending"
	fi
}

# ---- ICMP errors (RFC 5508) ------------------------------------------------

# RFC 5508 REQ-4 (and RFC 4787 REQ-12b, RFC 5382 REQ-9): port unreachable
# from the WAN host about a NATed UDP flow reaches the inside socket, whose
# connected socket reports ECONNREFUSED; the error leaves the mapping in
# place (RFC 4787 REQ-12, RFC 5382 REQ-10). RFC 5508 REQ-5, the other way:
# the WAN host sends to a port forward (udp/5353 to the LAN host's port 53,
# where nothing listens), and the LAN host's port unreachable reaches the
# WAN host's socket, from the WAN address (no inside address leaks).
test_icmp_unreachable() {
	local out rc err0=0 err1 cap

	[ "$TB_MODE" = xdp ] && { err0=$(counter fwd_icmp_error) || fail "no fwd_icmp_error counter"; }
	echo "+ LAN host: UDP to $WAN_HOST4:7999 (nothing listens)"
	out=$(echo probe | timeout 10 ip netns exec "$NS_LAN" socat -t 3 - \
		"UDP:$WAN_HOST4:7999,sourceport=44000" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/  | /'
	echo "socat exit $rc"
	grep -q 'Connection refused' <<<"$out" ||
		fail "the inside socket did not get ECONNREFUSED"
	if [ "$TB_MODE" = xdp ]; then
		err1=$(counter fwd_icmp_error) || fail "no fwd_icmp_error counter"
		echo "fwd_icmp_error: $err0 before, $err1 after"
		[ "$err1" -gt "$err0" ] || fail "the error did not go through XDP (fwd_icmp_error)"
		[ "$(flow_count "f['src'] == '$LAN_HOST4:44000' or f['new_dst'] == '$LAN_HOST4:44000'")" = 2 ] ||
			fail "the ICMP error ended the flow"
		err0=$err1
	else
		on_rtr grep -q 'sport=44000 ' /proc/net/nf_conntrack ||
			fail "kernel: the ICMP error ended the conntrack entry"
	fi

	# From inside: the WAN host captures the error's outer source.
	bg_ns 10 "$NS_WAN" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(6)
print("ready", flush=True)
while True:
    d, a = s.recvfrom(2048)
    if d[20] == 3:
        print("icmp type 3 code %d from %s" % (d[21], a[0]), flush=True)
        break
'
	cap=$TB_WORK/bg.$TB_BG_N.log
	wait_log "$cap" '^ready' || fail "no ICMP capture on the WAN host"
	echo "+ WAN host: UDP to $RTR_WAN4:5353 (forward to $LAN_HOST4:53, nothing listens)"
	out=$(echo probe | timeout 10 ip netns exec "$NS_WAN" socat -t 3 - \
		"UDP:$RTR_WAN4:5353,sourceport=44001" 2>&1)
	printf '%s\n' "$out" | sed 's/^/  | /'
	grep -q 'Connection refused' <<<"$out" ||
		fail "the WAN host's socket did not get ECONNREFUSED from the LAN host"
	wait_log "$cap" '^icmp' || fail "the WAN host saw no ICMP error"
	cat "$cap"
	grep -q "code 3 from $RTR_WAN4\$" "$cap" ||
		fail "the error from inside did not come from the WAN address"
	if [ "$TB_MODE" = xdp ]; then
		err1=$(counter fwd_icmp_error) || fail "no fwd_icmp_error counter"
		echo "fwd_icmp_error: $err0 before, $err1 after"
		[ "$err1" -gt "$err0" ] || fail "the error from inside did not go through XDP"
	fi
}

# REQ-1/REQ-3 with time exceeded: traceroute (UDP probes) from the LAN host
# to a host two hops behind the router: hop 1 the router itself (TTL 1 goes
# to its kernel), hop 2 the WAN host (time exceeded about a NATed flow,
# translated), hop 3 the far host (port unreachable, translated). ping with
# TTL 1 and 2 (ICMP echo flows) names the same routers.
test_traceroute() {
	local out hop err0=0 err1

	command -v traceroute >/dev/null || skip "traceroute not installed (scripts/deps.sh)"
	testbed_add_far_host || fail "cannot add the far host"
	[ "$TB_MODE" = xdp ] && { err0=$(counter fwd_icmp_error) || fail "no fwd_icmp_error counter"; }

	check on_lan traceroute -n -q 1 -w 2 -m 5 "$FAR_HOST4"
	out=$CHECK_OUT
	for hop in "1 $RTR_LAN4" "2 $WAN_HOST4" "3 $FAR_HOST4"; do
		grep -qE "^ *${hop% *} +${hop#* } " <<<"$out" ||
			fail "traceroute: hop ${hop% *} is not ${hop#* }"
	done
	grep -qE '^ *4 ' <<<"$out" && fail "traceroute did not stop at $FAR_HOST4"

	out=$(on_lan ping -c 1 -W 2 -t 1 "$FAR_HOST4" 2>&1)
	printf '%s\n' "$out" | sed 's/^/  ping -t 1 | /'
	grep -q "From $RTR_LAN4 .*Time to live exceeded" <<<"$out" ||
		fail "ping -t 1: no time exceeded from $RTR_LAN4"
	out=$(on_lan ping -c 1 -W 2 -t 2 "$FAR_HOST4" 2>&1)
	printf '%s\n' "$out" | sed 's/^/  ping -t 2 | /'
	grep -q "From $WAN_HOST4 .*Time to live exceeded" <<<"$out" ||
		fail "ping -t 2: no time exceeded from $WAN_HOST4 (ICMP echo flow)"

	if [ "$TB_MODE" = xdp ]; then
		err1=$(counter fwd_icmp_error) || fail "no fwd_icmp_error counter"
		echo "fwd_icmp_error: $err0 before, $err1 after"
		# hop 2 and 3 of traceroute, hop 2 of ping
		[ $((err1 - err0)) -ge 3 ] || fail "fewer than 3 ICMP errors went through XDP"
	fi
}

# REQ-1/REQ-3 with fragmentation needed: a 1400-byte MTU beyond the WAN
# host. A 2 MB TCP upload to the far host (Linux sets DF) completes only if
# the frag-needed errors reach the LAN host, which then caches PMTU 1400.
test_pmtud() {
	local out

	testbed_add_far_host 1400 || fail "cannot add the far host"
	out=$(on_lan ip route get "$FAR_HOST4")
	echo "before: $out"
	grep -q 'mtu 1400' <<<"$out" && fail "PMTU 1400 known before any traffic"
	xdp_count_start fwd_icmp_error

	tcp_upload_checked pmtu 2M "$NS_LAN" "$NS_FAR" "$FAR_HOST4" 5000
	expect_lan_pmtu "$FAR_HOST4" 1400
	xdp_count_rose fwd_icmp_error "frag needed did not go through XDP (fwd_icmp_error)"
}

# RFC 4787 REQ-13: a DF packet bigger than the router's egress MTU gets
# "fragmentation needed" back. The router's wan0 gets MTU 1400 (the WAN host
# keeps 1500, so its MSS does not hide it); a 2 MB TCP upload to the WAN host
# completes and the LAN host caches PMTU 1400. In xdp mode XDP answers the
# big segments of its flow itself (tx_icmp_too_big, bpf/icmp_gen.h).
test_router_mtu() {
	check ip -n "$NS_RTR" link set "$RTR_WAN_IF" mtu 1400
	# PMTU discovery itself: MSS clamping would hide the bottleneck.
	config_add router mss_clamp off
	check xnat up -c "$TB_CONFIG"
	xdp_count_start tx_icmp_too_big
	tcp_upload_checked mtu 2M "$NS_LAN" "$NS_WAN" "$WAN_HOST4" 5000
	expect_lan_pmtu "$WAN_HOST4" 1400
	xdp_count_rose tx_icmp_too_big "XDP sent no fragmentation needed"
}

# RFC 4787 REQ-14 (fragments) and REQ-13a (DF=0 bigger than the MTU is
# fragmented), on one UDP mapping of the LAN host's socket 47000, which
# must stay one mapping. The WAN link runs at MTU 1400 (both ends, set
# before xnat sees any flow), the LAN at 1500. A 4000-byte reply (the WAN
# host fragments it) reaches the socket; a 4000-byte datagram (the LAN host
# fragments it) reaches the server from the same external port as the
# small ones; a 1450-byte datagram without DF leaves fragmented by the
# router, again from the same port; a 3000-byte datagram whose fragments
# arrive last first reaches a second socket; with the WAN back at 1500 and
# the LAN at 1400, a 1450-byte reply without DF reaches a third socket,
# fragmented by the router.
# Every case is tried; all that failed are named.
test_fragments() {
	local d="$WAN_HOST4:7000" base out log port bad=()

	check ip -n "$NS_RTR" link set "$RTR_WAN_IF" mtu 1400
	check ip -n "$NS_WAN" link set "$HOST_IF" mtu 1400
	check xnat up -c "$TB_CONFIG"
	natpeer_bg 60 "$NS_WAN" sized "$d"
	wait_log "$NATPEER_LOG" '^ready' || fail "no server"

	check natpeer "$NS_LAN" ask 47000 "$d" 100 20
	base=$(awk '$1 == "reply" { print $3 }' <<<"$CHECK_OUT")
	[ -n "$base" ] || fail "no reply to a small datagram"
	echo "small datagrams: the server sees $base"

	out=$(natpeer "$NS_LAN" ask 47000 "$d" 4000 20)
	echo "4000-byte reply (fragmented by the WAN host): $out"
	grep -qx "reply 4000 $base" <<<"$out" ||
		bad+=("a fragmented reply did not reach the inside socket")

	out=$(natpeer "$NS_LAN" ask 47000 "$d" 100 4000)
	echo "4000-byte datagram (fragmented by the LAN host): $out"
	grep -qx "reply 100 $base" <<<"$out" ||
		bad+=("a fragmented datagram left by another mapping than $base, or got no reply")

	out=$(natpeer "$NS_LAN" ask 47000 "$d" 100 1450 nodf)
	echo "1450 bytes without DF (fragmented by the router): $out"
	grep -qx "reply 100 $base" <<<"$out" ||
		bad+=("a datagram the router fragmented left by another mapping than $base, or got no reply")
	sed 's/^/  server | /' "$NATPEER_LOG"

	# Out of order: a second socket's peer sends it a 3000-byte datagram
	# as three raw fragments, last first.
	stun_server "$NS_WAN" "$WAN_HOST4:7003" || fail "no server"
	natpeer_bg 20 "$NS_LAN" probe 47001 "$WAN_HOST4:7003" --listen 4
	log=$NATPEER_LOG
	wait_log "$log" '^listening' || fail "no reply to the second socket"
	port=$(seen_port "$(cat "$log")" "$WAN_HOST4:7003")
	check natpeer "$NS_WAN" fragrev "$WAN_HOST4:7003" "$RTR_WAN4:$port" 3000
	wait_log "$log" '^done' 8
	sed 's/^/  inside | /' "$log"
	grep -q "^recv $WAN_HOST4:7003 fragrev .*len=3000" "$log" ||
		bad+=("a datagram whose fragments arrived last first did not reach the inside socket")

	# The other way: the WAN back at 1500, the LAN at 1400, a 1450-byte
	# reply without DF to a third socket (one that never sent anything
	# big: the router has not had to fragment for its flow before).
	check ip -n "$NS_RTR" link set "$RTR_WAN_IF" mtu 1500
	check ip -n "$NS_WAN" link set "$HOST_IF" mtu 1500
	check ip -n "$NS_RTR" link set "$RTR_LAN_IF" mtu 1400
	check ip -n "$NS_LAN" link set "$HOST_IF" mtu 1400
	check xnat up -c "$TB_CONFIG"
	check natpeer "$NS_LAN" ask 47002 "$d" 100 20
	base=$(awk '$1 == "reply" { print $3 }' <<<"$CHECK_OUT")
	out=$(natpeer "$NS_LAN" ask 47002 "$d" 1450 20 nodf)
	echo "1450-byte reply without DF towards the LAN at MTU 1400 (fragmented by the router): $out"
	grep -qx "reply 1450 $base" <<<"$out" ||
		bad+=("a reply the router had to fragment towards the LAN did not reach the inside socket")

	[ ${#bad[@]} -eq 0 ] || fail "$(printf '%s; ' "${bad[@]}")"
}

# An MTU that drops under running flows (a reconfigured or renegotiated
# uplink): a paced TCP upload is running when the WAN link goes from 1500 to
# 1400 (both ends) and xnat is reloaded. The upload must complete: its full
# size segments need "fragmentation needed" (PMTUD) as in test_router_mtu,
# the flow was simply created before the change.
test_mtu_change() {
	local pid

	tcp_server_recv "$NS_WAN" 5000 "$TB_WORK/mtuchg.recv" || fail "no server"
	random_file "$TB_WORK/chunk.bin" 32K
	paced_stream "$NS_LAN" "$WAN_HOST4:5000" mtuchg 40 25
	pid=$STREAM_PID
	sleep 1
	check ip -n "$NS_RTR" link set "$RTR_WAN_IF" mtu 1400
	check ip -n "$NS_WAN" link set "$HOST_IF" mtu 1400
	check xnat up -c "$TB_CONFIG"
	sleep 1
	rm -f "$STREAM_FLAG"
	bg_wait "$pid" || fail "the upload did not complete after the MTU change: $(cat "$TB_WORK/mtuchg.log")"
	bg_wait "$BG_PID" || fail "server did not finish"
	same_file "$TB_WORK/mtuchg.sent" "$TB_WORK/mtuchg.recv" || fail "upload corrupted"
	check on_lan ip route get "$WAN_HOST4"
	grep -q 'mtu 1400' <<<"$CHECK_OUT" || fail "the LAN host did not learn PMTU 1400"
}

# ---- hairpinning, several LANs, echo ids -----------------------------------

# RFC 4787 REQ-9 / RFC 5382 REQ-8 for port forwards: the second LAN host
# connects to the router's WAN address:8080 (forward to the LAN host:80)
# and reaches the server, which sees the client as the WAN address, so its
# replies go back through the router.
test_hairpin() {
	local out

	testbed_add_lan_host || fail "cannot add the second LAN host"
	tcp_peer_server "$NS_LAN" 80 || fail "no server"
	check tcp_ask "$NS_LAN2" "$RTR_WAN4:8080"
	out=$CHECK_OUT
	echo "the server saw the client as $out"
	[ "${out%:*}" = "$RTR_WAN4" ] ||
		fail "the server saw '$out', not the WAN address $RTR_WAN4"
	if [ "$TB_MODE" = xdp ]; then
		[ "$(flow_count "f['nat'] == 'hairpin' and f['src'].startswith('$LAN2_HOST4:')")" -ge 1 ] ||
			fail "no XDP hairpin flow from $LAN2_HOST4"
	fi
	# From the LAN host itself to its own forward, too.
	check tcp_ask "$NS_LAN" "$RTR_WAN4:8080"
	[ "${CHECK_OUT%:*}" = "$RTR_WAN4" ] ||
		fail "the server saw its own connection as '$CHECK_OUT', not $RTR_WAN4"
}

# Several LAN ports: a host on lan1 reaches the WAN (NATed), and the two
# LANs reach each other both ways without NAT (the peer's own address).
test_multi_lan() {
	testbed_add_lan_port || fail "cannot add lan1"
	reload_with twolans "router.lan=$RTR_LAN_IF, $RTR_LAN1_IF"
	stun_server "$NS_WAN" "$WAN_HOST4:7000" || fail "no server"

	probe_ok "$NS_LAN1" 45000 "$WAN_HOST4:7000"
	probe_ok "$NS_LAN" 45000 "$WAN_HOST4:7000"

	tcp_peer_server "$NS_LAN1" 6000 || fail "no server"
	tcp_peer_server "$NS_LAN" 6000 || fail "no server"
	check tcp_ask "$NS_LAN" "$LAN1_HOST4:6000"
	echo "lan1 host saw the lan0 host as $CHECK_OUT"
	[ "${CHECK_OUT%:*}" = "$LAN_HOST4" ] || fail "LAN to LAN was NATed: $CHECK_OUT"
	check tcp_ask "$NS_LAN1" "$LAN_HOST4:6000"
	echo "lan0 host saw the lan1 host as $CHECK_OUT"
	[ "${CHECK_OUT%:*}" = "$LAN1_HOST4" ] || fail "LAN to LAN was NATed: $CHECK_OUT"
	if [ "$TB_MODE" = xdp ]; then
		[ "$(flow_count "f['nat'] == 'snat' and f['ingress'] == '$RTR_LAN1_IF'")" -ge 1 ] ||
			fail "no XDP SNAT flow from $RTR_LAN1_IF"
		[ "$(flow_count "f['nat'] == 'none' and f['proto'] == 'tcp' and f['ingress'] == '$RTR_LAN1_IF' and f['egress'] == '$RTR_LAN_IF'")" -ge 1 ] ||
			fail "no XDP routed flow from $RTR_LAN1_IF to $RTR_LAN_IF"
	fi
}

# Two LAN hosts ping the WAN host at the same time with the same ICMP echo
# identifier (31337, inside the XDP range): both get all their replies.
test_same_icmp_id() {
	local a b la lb

	testbed_add_lan_host || fail "cannot add the second LAN host"
	natpeer_bg 20 "$NS_LAN" echo_id "$WAN_HOST4" 31337 20
	a=$BG_PID la=$NATPEER_LOG
	# The second pinger starts once the first one's connection exists (the
	# two then overlap for 1.5 s). Started in the same instant, both first
	# requests can pick id 31337 on two CPUs before either is confirmed,
	# and netfilter drops the one that loses the insert race (a known
	# limit of its NAT: conntrack -S counts it as insert_failed), which
	# is not what this test is about.
	sleep 0.5
	natpeer_bg 20 "$NS_LAN2" echo_id "$WAN_HOST4" 31337 20
	b=$BG_PID lb=$NATPEER_LOG
	bg_wait "$a" || fail "LAN host's pinger failed: $(cat "$la")"
	bg_wait "$b" || fail "second host's pinger failed: $(cat "$lb")"
	echo "LAN host: $(cat "$la"); second host: $(cat "$lb")"
	grep -qx 'replies 20' "$la" || fail "the LAN host lost echo replies: $(cat "$la")"
	grep -qx 'replies 20' "$lb" || fail "the second host lost echo replies: $(cat "$lb")"
	if [ "$TB_MODE" = xdp ]; then
		check xnat flows --json
		json_q "sorted(f['src'] + ' -> ' + f['new_src'] for f in j['flows'] if f['proto'] == 'icmp' and f['nat'] == 'snat')" <<<"$CHECK_OUT"
		[ "$(json_q "len(set(f['new_src'] for f in j['flows'] if f['proto'] == 'icmp' and f['nat'] == 'snat' and f['src'].endswith(':31337')))" <<<"$CHECK_OUT")" = 2 ] ||
			fail "expected two XDP echo flows with distinct external ids"
	fi
}

# ---- the router's own traffic ----------------------------------------------

# The router pings the WAN host, connects to it over TCP and asks a UDP
# server (DNS-like): all work while xdp mode is up, and in xdp mode its
# source ports lie outside the XDP range (ip_local_port_range), so replies
# are never taken for NAT traffic.
test_router_originated() {
	local tport uport

	check on_rtr ping -c 3 -i 0.2 -W 2 "$WAN_HOST4"
	grep -q ' 3 received' <<<"$CHECK_OUT" || fail "the router's ping lost replies"

	tcp_peer_server "$NS_WAN" 5000 || fail "no server"
	check tcp_ask "$NS_RTR" "$WAN_HOST4:5000"
	tport=${CHECK_OUT##*:}
	[ "${CHECK_OUT%:*}" = "$RTR_WAN4" ] || fail "TCP from the router: the server saw $CHECK_OUT"

	stun_server "$NS_WAN" "$WAN_HOST4:53" || fail "no server"
	check natpeer "$NS_RTR" probe 0 "$WAN_HOST4:53"
	uport=$(seen_port "$CHECK_OUT" "$WAN_HOST4:53")
	[ -n "$uport" ] || fail "UDP from the router got no reply"
	echo "router's own source ports as the WAN host saw them: tcp $tport, udp $uport (ip_local_port_range $(on_rtr sysctl -n net.ipv4.ip_local_port_range))"
	# What the router's conntrack did to them (the reply tuple's dport is
	# the port on the wire).
	on_rtr grep -E 'dport=(5000|53) ' /proc/net/nf_conntrack | sed 's/^/  conntrack | /'

	if [ "$TB_MODE" = xdp ]; then
		for p in $tport $uport; do
			[ "$p" -lt "$NAT_PORT_MIN" ] ||
				fail "the router used port $p, inside the XDP range $NAT_PORT_MIN-$NAT_PORT_MAX"
		done
	fi
}

# ---- exhaustion ------------------------------------------------------------

# A flow table of 4 connections. The second LAN host's TCP stream is open
# first; then the LAN host opens 20 UDP flows at once. All 20 get replies
# (the table takes 3, the kernel's NAT the rest: pass_table_full), and the
# stream keeps its XDP flow and keeps moving: nothing is evicted. In kernel
# mode (no XDP table) the same traffic just works.
test_exhaustion_kernel_fallback() {
	local pid cond full0=0 full1 pk0 pk1

	testbed_add_lan_host || fail "cannot add the second LAN host"
	[ "$TB_MODE" = xdp ] && restart_with small flows.max=4
	stun_server "$NS_WAN" "$WAN_HOST4:7000" || fail "no server"
	tcp_server_recv "$NS_WAN" 5000 "$TB_WORK/stream.recv" || fail "no server"

	random_file "$TB_WORK/chunk.bin" 16K
	paced_stream "$NS_LAN2" "$WAN_HOST4:5000" stream 20 60
	pid=$STREAM_PID
	sleep 1

	cond="f['proto'] == 'tcp' and (f['src'].startswith('$LAN2_HOST4:') or f['new_dst'].startswith('$LAN2_HOST4:'))"
	if [ "$TB_MODE" = xdp ]; then
		[ "$(flow_count "$cond")" = 2 ] || fail "the stream is not an XDP flow"
		full0=$(counter pass_table_full)
		pk0=$(json_q "sum(f['packets'] for f in j['flows'] if $cond)" <<<"$(xnat flows --json)")
	fi

	check natpeer "$NS_LAN" burst "$WAN_HOST4:7000" 20
	grep -qx 'replies 20/20' <<<"$CHECK_OUT" || fail "not every flow of the burst got its reply"
	sleep 1
	kill -0 "$pid" 2>/dev/null || fail "the stream ended during the burst: $(cat "$TB_WORK/stream.log")"

	if [ "$TB_MODE" = xdp ]; then
		full1=$(counter pass_table_full)
		echo "pass_table_full: $full0 before, $full1 after the burst"
		[ "$full1" -gt "$full0" ] || fail "the burst did not fill the table (pass_table_full)"
		[ "$(flow_count "$cond")" = 2 ] || fail "the stream's flow was evicted"
		pk1=$(json_q "sum(f['packets'] for f in j['flows'] if $cond)" <<<"$(xnat flows --json)")
		echo "stream flow packets: $pk0 before, $pk1 after the burst"
		[ "$pk1" -gt $((pk0 + 10)) ] || fail "the stream stopped moving in XDP after the burst"
	fi
	rm -f "$STREAM_FLAG"
	bg_wait "$pid" || fail "stream failed: $(cat "$TB_WORK/stream.log")"
	bg_wait "$BG_PID" || fail "server did not finish"
	same_file "$TB_WORK/stream.sent" "$TB_WORK/stream.recv" || fail "stream corrupted"
}

# ---- TCP -------------------------------------------------------------------

# RFC 5382 REQ-5 and the issue's "no resurrection": tcp_transitory = 3 s.
# A connection from the LAN host's port 46000 is closed with a RST. A stray
# ACK from that socket (raw) still reaches the WAN host while the closed
# flow is in the table; after it expired, the same ACK goes nowhere: XDP
# passes it up (pass_tcp_midstream) and conntrack, not loose in xdp mode,
# does not pick it up mid-stream to NAT it with a new port. Linux's default
# (nf_conntrack_tcp_loose = 1, kernel mode) does resurrect it.
run_stray_ack() {
	local marker=$1 mac log pid
	mac=$(ns_mac "$NS_RTR" "$RTR_LAN_IF")
	bg_ns 10 "$NS_WAN" python3 "$RAWPKT" recv "$HOST_IF" 2 --marker "$marker"
	pid=$BG_PID log=$TB_WORK/bg.$TB_BG_N.log
	wait_log "$log" '^ready' || fail "no receiver on the WAN host"
	STRAY_MS=$(now_ms)
	check on_lan python3 "$RAWPKT" send "$HOST_IF" "$mac" "$LAN_HOST4" \
		"$WAN_HOST4" 5000 tcp_ack --sport 46000 --count 2 --marker "$marker"
	bg_wait "$pid" || fail "receiver failed: $(cat "$log")"
	STRAY_SEEN=$(json_q "j['marker']" <<<"$(tail -1 "$log")")
	echo "stray ACK ($marker): the WAN host received $STRAY_SEEN of 2"
}

test_tcp_close_no_resurrect() {
	local cond mid0=0 mid1 t0

	reload_with transitory timeouts.tcp_transitory=3
	echo_server "$NS_WAN" tcp 5000 || fail "no server"
	check timeout 10 ip netns exec "$NS_LAN" python3 -c '
import socket, struct, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 46000))
s.connect((sys.argv[1], 5000))
s.sendall(b"hello\n")
print("echo:", s.recv(100))
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()   # linger 0: RST
' "$WAN_HOST4"
	cond="f['proto'] == 'tcp' and (f['src'] == '$LAN_HOST4:46000' or f['new_dst'] == '$LAN_HOST4:46000')"
	if [ "$TB_MODE" = xdp ]; then
		check xnat flows --json
		[ "$(json_q "sorted(set(f['state'] for f in j['flows'] if $cond))" <<<"$CHECK_OUT")" = '["closed"]' ] ||
			fail "the RST did not close the flow: $(json_q "[f['state'] for f in j['flows'] if $cond]" <<<"$CHECK_OUT")"
	fi

	run_stray_ack "xnat-stray-open-$RANDOM"
	if [ "$TB_MODE" = xdp ]; then
		[ "$STRAY_SEEN" -ge 1 ] ||
			fail "a segment of a closed flow still in the table did not go through: the capture proves nothing"
		t0=$STRAY_MS
		wait_flows_gone "$cond" 10000 || fail "the closed flow did not expire"
		echo "closed flow gone $((GONE_MS - t0)) ms after its last segments were sent (tcp_transitory 3 s)"
		[ $((GONE_MS - t0)) -ge 2900 ] || fail "the closed flow expired before tcp_transitory"
		mid0=$(counter pass_tcp_midstream)
	else
		echo "kernel: right after the RST the stray ACK reached the WAN host $STRAY_SEEN times"
		# Offload mode: the RST came on the fast path (pass_ct_tcp_end)
		# when the connection's data went through XDP; conntrack then
		# has a stale view and would keep it (bpf/ct.h ct_close).
		[ "$TB_MODE" = offload ] &&
			echo "offload: RSTs handed back from the fast path: $(counter pass_ct_tcp_end)"
		wait_conntrack_gone "sport=46000 " 20000 ||
			fail "kernel: conntrack kept the closed connection: $(on_rtr grep 'sport=46000 ' /proc/net/nf_conntrack)"
	fi

	run_stray_ack "xnat-stray-expired-$RANDOM"
	if [ "$TB_MODE" != xdp ]; then # the kernel NATs (kernel, offload)
		echo "kernel: nf_conntrack_tcp_loose=$(on_rtr sysctl -n net.netfilter.nf_conntrack_tcp_loose); after expiry the stray ACK reached the WAN host $STRAY_SEEN times"
		[ "$STRAY_SEEN" -ge 1 ] ||
			fail "kernel: expected netfilter (tcp_loose=1) to pick up the stray ACK"
		return 0
	fi
	[ "$STRAY_SEEN" = 0 ] || fail "a segment of an expired flow went out again (resurrected mapping)"
	mid1=$(counter pass_tcp_midstream)
	echo "pass_tcp_midstream: $mid0 before, $mid1 after"
	[ $((mid1 - mid0)) -ge 2 ] || fail "the stray ACKs were not counted as pass_tcp_midstream"
	[ "$(flow_count "$cond")" = 0 ] || fail "the stray ACK created a flow"
	# Also once the mapping is gone (one more timeout).
	sleep 3.5
	run_stray_ack "xnat-stray-unmapped-$RANDOM"
	[ "$STRAY_SEEN" = 0 ] || fail "a segment went out after the mapping expired too"
}

# RFC 5382 REQ-2a: TCP simultaneous open, as TCP hole punching does it,
# between the LAN host and the WAN host, each connecting to the other's
# (external) address and port; both ends open and exchange a line.
#  1. Inside first: the LAN host's SYN creates the mapping (48000 is
#     preserved) but is lost before the WAN host (an nft drop there, like a
#     SYN crossing the other one in flight); the WAN host's SYN then comes
#     in through the mapping, and the LAN host's SYN-ACK opens both.
#  2. Outside first: the WAN host's SYN meets no mapping; 0.5 s later the
#     LAN host's SYN creates it. In xdp mode the early SYN was dropped
#     silently (RFC 5382 REQ-4), the rest goes through the mapping. Linux
#     answers the early SYN with a RST from the router's own stack, which
#     kills the attempt: asserted as what netfilter does.
# simopen FIRST_NS FIRST_ARGS... -- SECOND_NS SECOND_ARGS...: start the
# first side, 0.5 s later the second; SIM_FIRST and SIM_SECOND: their logs.
simopen() {
	local ns1=$1 a=$2 b=$3 c=$4 d=$5 ns2=$6 e=$7 f=$8 g=$9 h=${10} p1 p2
	natpeer_bg 15 "$ns1" tcpopen "$a" "$b:$c" "$d"
	p1=$BG_PID SIM_FIRST=$NATPEER_LOG
	sleep 0.5
	natpeer_bg 15 "$ns2" tcpopen "$e" "$f:$g" "$h"
	p2=$BG_PID SIM_SECOND=$NATPEER_LOG
	bg_wait "$p1"
	bg_wait "$p2"
	echo "first:  $(cat "$SIM_FIRST")"
	echo "second: $(cat "$SIM_SECOND")"
}

test_tcp_simultaneous_open() {
	check on_wan nft add table ip xnat_simopen
	check on_wan nft add chain ip xnat_simopen in '{ type filter hook input priority 0; }'
	check on_wan nft add rule ip xnat_simopen in tcp dport 48001 \
		'tcp flags & (syn | ack) == syn' counter drop
	echo "1. the LAN host's SYN first (lost before the WAN host)"
	simopen "$NS_LAN" 48000 "$WAN_HOST4" 48001 from-lan \
		"$NS_WAN" 48001 "$RTR_WAN4" 48000 from-wan
	check on_wan nft list chain ip xnat_simopen in
	grep -q 'packets 0 ' <<<"$CHECK_OUT" && fail "the LAN host's SYN was not lost: the case proves nothing"
	grep -q 'connected, got from-wan' "$SIM_FIRST" && grep -q 'connected, got from-lan' "$SIM_SECOND" ||
		fail "simultaneous open (inside SYN first) failed"

	echo "2. the WAN host's SYN first (no mapping yet)"
	simopen "$NS_WAN" 48003 "$RTR_WAN4" 48002 from-wan \
		"$NS_LAN" 48002 "$WAN_HOST4" 48003 from-lan
	if [ "$TB_MODE" != xdp ]; then # the kernel NATs (kernel, offload)
		echo "kernel: the router's RST to the early SYN: $(head -1 "$SIM_FIRST")"
		grep -q 'refused' "$SIM_FIRST" ||
			fail "kernel: expected the router to refuse the early SYN"
		return 0
	fi
	grep -q 'connected, got from-lan' "$SIM_FIRST" && grep -q 'connected, got from-wan' "$SIM_SECOND" ||
		fail "simultaneous open (outside SYN first) failed"
}

# RFC 5382 REQ-4: an unsolicited SYN gets no answer for at least 6 s (a
# hole-punching peer's SYN may come before the inside host's); silently
# dropping it is allowed (REQ-4a). A WAN host connecting to a port of the
# XDP range without a mapping times out after 7 s in xdp mode. Linux
# answers at once with a RST from the router's own stack ("Connection
# refused"); so does xdp mode for the kernel's ports (outside the range).
test_unsolicited_syn() {
	local t0 out el port=40000

	t0=$(now_ms)
	out=$(timeout 15 ip netns exec "$NS_WAN" socat -u OPEN:/dev/null \
		"TCP:$RTR_WAN4:$port,connect-timeout=7" 2>&1)
	el=$(($(now_ms) - t0))
	echo "connect to $RTR_WAN4:$port: after $el ms: $out"
	if [ "$TB_MODE" = xdp ]; then
		grep -q 'timed out' <<<"$out" && [ "$el" -ge 6000 ] ||
			fail "an unsolicited SYN to the XDP range was answered within 6 s"
	else
		echo "kernel: the router's stack answers the SYN itself"
		grep -q 'Connection refused' <<<"$out" ||
			fail "kernel: expected a RST (Connection refused) from the router"
	fi
	out=$(timeout 15 ip netns exec "$NS_WAN" socat -u OPEN:/dev/null \
		"TCP:$RTR_WAN4:15000,connect-timeout=7" 2>&1)
	echo "connect to $RTR_WAN4:15000 (a kernel port in xdp mode): $out"
	grep -q 'Connection refused' <<<"$out" ||
		fail "expected a RST (Connection refused) from the router for port 15000"
}

# The [timeouts] defaults (a config without the section) meet RFC 4787
# REQ-5 (UDP >= 2 min, 5 min recommended), RFC 5382 REQ-5 (established
# >= 2 h 4 min, transitory >= 4 min) and RFC 5508 REQ-2 (ICMP >= 60 s):
# conntrack gets them too (kernel mode, and flows xdp mode passes up),
# replacing Linux's own defaults, which a fresh namespace shows.
test_default_timeouts() {
	local file d=/proc/sys/net/netfilter name v fresh
	local -A want

	ct_timeouts_of want 300 60 7440 240

	file=$TB_WORK/notimeouts.ini
	awk '/^\[/ { skip = ($0 ~ /^\[timeouts\]/) } !skip' "$TB_CONFIG" >"$file"
	grep -q '^\[timeouts\]' "$file" && fail "could not drop [timeouts]"
	check xnat up -c "$file"
	for name in "${!want[@]}"; do
		v=$(on_rtr cat "$d/$name")
		fresh=$(timeout "$T_CMD" unshare -n cat "$d/$name")
		echo "$name: $v (Linux's default: $fresh)"
		[ "$v" = "${want[$name]}" ] || fail "$name is $v, expected the default ${want[$name]}"
	done
}

run_tests "$@"
