#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# NAT at scale, end to end with real UDP through the namespace testbed
# (lib.sh): the endpoint-dependent fallback when the XDP range has fewer
# ports than inside endpoints, per-host port limits (RFC 6888 REQ-4),
# paired address pools (RFC 4787 REQ-2) in both modes and agreeing between
# them, the refusal of a flow table the machine's memory cannot hold, and
# what `xnat status` says about memory and addresses.
#
#   tests/integration/test_scale.sh [SUBSTRING...]
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp                  see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

LAN2_HOST4=${LAN2_HOST4:-198.18.1.11}
# Pool addresses beyond the WAN subnet: the WAN host routes them to the
# router, as an upstream routes a CGN's pool.
POOL_NET=198.19.8
POOL="$RTR_WAN4, $POOL_NET.1-$POOL_NET.3"

# A UDP server on the WAN host answering every datagram with the address
# and port it came from, on each of the ports given, for 60 s.
peer_server() {
	cat >"$TB_WORK/peer_server.py" <<-'EOF'
	import select, socket, sys
	socks = []
	for p in sys.argv[2:]:
	    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	    s.bind((sys.argv[1], int(p)))
	    socks.append(s)
	print("ready", flush=True)
	while True:
	    for s in select.select(socks, [], [])[0]:
	        data, peer = s.recvfrom(2048)
	        s.sendto(("%s:%d" % peer).encode(), peer)
	EOF
	bg_ns 60 "$NS_WAN" python3 "$TB_WORK/peer_server.py" "$WAN_HOST4" "$@"
	for _ in $(seq 50); do
		grep -q '^ready' "$TB_WORK/bg.$TB_BG_N.log" && return 0
		sleep 0.1
	done
	return 1
}

# From NS, one datagram per SPORT:DPORT pair given (a fresh socket each),
# prints "SPORT DPORT SEEN" with the address:port the server saw, or
# "SPORT DPORT -" when no answer came within a second.
probe() {
	local ns=$1
	shift
	cat >"$TB_WORK/probe.py" <<-'EOF'
	import socket, sys
	dst = sys.argv[1]
	for pair in sys.argv[2:]:
	    sp, dp = pair.split(":")
	    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	    s.bind(("0.0.0.0", int(sp)))
	    s.settimeout(1.0)
	    s.sendto(b"x", (dst, int(dp)))
	    try:
	        print(sp, dp, s.recvfrom(2048)[0].decode(), flush=True)
	    except socket.timeout:
	        print(sp, dp, "-", flush=True)
	    s.close()
	EOF
	timeout 60 ip netns exec "$ns" python3 "$TB_WORK/probe.py" "$WAN_HOST4" "$@"
}

# Two external ports, six inside endpoints towards three server ports:
# every one gets its answer (as Linux's masquerade manages), each server
# port sees distinct external ports, in xdp mode from the XDP range, most
# of them endpoint-dependent (fwd_slow_edm).
test_edm_fallback() {
	local out edm use pairs="" d n ports
	restart_with edm nat.ports=30000-30001
	peer_server 7000 7001 7002 || fail "no server"
	for n in 0 1 2 3 4 5; do
		pairs+=" $((41000 + n)):$((7000 + n % 3))"
	done
	# shellcheck disable=SC2086
	out=$(probe "$NS_LAN" $pairs)
	echo "$out"
	grep -q ' -$' <<<"$out" && fail "an endpoint got no answer"
	for d in 7000 7001 7002; do
		ports=$(awk -v d=$d '$2 == d { split($3, a, ":"); print a[2] }' <<<"$out" | sort)
		[ "$(uniq <<<"$ports" | wc -l)" = 2 ] ||
			fail "server port $d saw ports '$ports', expected 2 distinct"
		if [ "$TB_MODE" = xdp ]; then
			for n in $ports; do
				[ "$n" -ge 30000 ] && [ "$n" -le 30001 ] ||
					fail "port $n is not from the XDP range"
			done
		fi
	done
	[ "$TB_MODE" = xdp ] || return 0
	edm=$(counter fwd_slow_edm)
	echo "fwd_slow_edm: $edm"
	[ "$edm" -ge 4 ] || fail "expected at least 4 endpoint-dependent flows"
	# status counts them on the address, from the flow table (each holds
	# its port with its reply entry), and the mappings apart.
	check xnat status --json
	use=$(json_q "[j['addresses'][0]['endpoint_dependent'], j['addresses'][0]['mappings']]" \
		<<<"$CHECK_OUT")
	[ "$use" = "[$edm, 2]" ] ||
		fail "status: [endpoint_dependent, mappings] = $use, expected [$edm, 2]"
}

# [nat] ports_per_host = 2: the LAN host's third endpoint is refused and
# counted, the second LAN host still gets its ports.
TEST_MODES[host_limit]=xdp
test_host_limit() {
	local out drop
	restart_with limit nat.ports_per_host=2
	testbed_add_lan_host || fail "cannot add the second LAN host"
	peer_server 7000 || fail "no server"
	out=$(probe "$NS_LAN" 41000:7000 41001:7000 41002:7000)
	echo "$out"
	[ "$(grep -c ' -$' <<<"$out")" = 1 ] || fail "expected exactly one refusal"
	grep -q '^41002 7000 -$' <<<"$out" || fail "the third endpoint was not the refused one"
	drop=$(counter drop_host_limit)
	[ "$drop" -ge 1 ] || fail "drop_host_limit did not count it"
	out=$(probe "$NS_LAN2" 41000:7000 41001:7000)
	echo "$out"
	grep -q ' -$' <<<"$out" && fail "the other host was refused too"
	[ "$(grep -cE '^4100[01] 7000 [0-9.]+:[0-9]+$' <<<"$out")" = 2 ] ||
		fail "the other host did not get an answer on both ports"
	return 0
}

# The pool address paired pooling gives ADDR: nftables' jhash of the four
# address bytes with xnat's seed (bpf/common_nat.h), written out again
# here from the kernel's include/linux/jhash.h.
pool_index() {
	python3 - "$1" "$2" <<-'EOF'
	import socket, sys
	M = 0xffffffff
	rol = lambda w, s: ((w << s) | (w >> (32 - s))) & M
	k = socket.inet_aton(sys.argv[1])
	a = b = c = (0xdeadbeef + 4 + 0x786e6174) & M
	a = (a + (k[0] | k[1] << 8 | k[2] << 16 | k[3] << 24)) & M
	c ^= b; c = (c - rol(b, 14)) & M
	a ^= c; a = (a - rol(c, 11)) & M
	b ^= a; b = (b - rol(a, 25)) & M
	c ^= b; c = (c - rol(b, 16)) & M
	a ^= c; a = (a - rol(c, 4)) & M
	b ^= a; b = (b - rol(a, 14)) & M
	c ^= b; c = (c - rol(b, 24)) & M
	print((c * int(sys.argv[2])) >> 32)
	EOF
}

# Paired pooling with four addresses: every flow of a host leaves from the
# same address, the one the hash picks, in both modes alike (so XDP and
# the kernel's NAT agree), and its answers come back through it.
test_pool_paired() {
	local addrs=("$RTR_WAN4" "$POOL_NET.1" "$POOL_NET.2" "$POOL_NET.3")
	local h ns want out
	on_wan ip route add "$POOL_NET.0/24" via "$RTR_WAN4" || fail "no route to the pool"
	restart_with pool "nat.address=$POOL"
	testbed_add_lan_host || fail "cannot add the second LAN host"
	peer_server 7000 7001 || fail "no server"
	for h in "$LAN_HOST4" "$LAN2_HOST4"; do
		ns=$NS_LAN
		[ "$h" = "$LAN2_HOST4" ] && ns=$NS_LAN2
		want=${addrs[$(pool_index "$h" 4)]}
		out=$(probe "$ns" 42000:7000 42001:7001 42002:7000)
		echo "$h (expects $want):"
		echo "$out"
		grep -q ' -$' <<<"$out" && fail "no answer for $h"
		[ "$(awk '{ split($3, a, ":"); print a[1] }' <<<"$out" | sort -u)" = "$want" ] ||
			fail "$h did not always leave from $want"
	done
	if [ "$TB_MODE" = xdp ]; then
		check xnat status --json
		json_q "len(j['addresses'])" <<<"$CHECK_OUT" | grep -qx 4 ||
			fail "status does not list the 4 pool addresses"
	fi
}

# Paired pooling with two addresses puts the LAN host (on lan0) on the
# first and the host on a second LAN port (lan1) on the second; both send
# from port 42000, and each keeps it on its own address. A reload that
# drops lan1 ends that host's flows (user/flow_end.c: the sweeper ends
# them as their timeout would) and nothing of the other host's: its
# flows, its port on the first address (status counts it there) and the
# address and port its server sees. Until commit 039bbd0 the reload
# deleted the dropped host's port key without its address, that is the
# same port number on the first address: the other host's.
TEST_MODES[pool_port_dropped]=xdp
test_pool_port_dropped() {
	local two one out use
	[ "$(pool_index "$LAN_HOST4" 2)" = 0 ] && [ "$(pool_index "$LAN1_HOST4" 2)" = 1 ] ||
		fail "paired pooling no longer splits the two hosts as this test needs"
	on_wan ip route add "$POOL_NET.0/24" via "$RTR_WAN4" || fail "no route to the pool"
	testbed_add_lan_port || fail "no second LAN port"
	two=$(config_variant two "nat.address=$RTR_WAN4, $POOL_NET.1" \
		"router.lan=$RTR_LAN_IF, $RTR_LAN1_IF") || fail "config"
	one=$(config_variant one "nat.address=$RTR_WAN4, $POOL_NET.1") || fail "config"
	check xnat down
	check xnat up -c "$two"
	peer_server 7000 || fail "no server"
	out=$(probe "$NS_LAN" 42000:7000; probe "$NS_LAN1" 42000:7000)
	echo "$out"
	[ "$out" = "42000 7000 $RTR_WAN4:42000
42000 7000 $POOL_NET.1:42000" ] || fail "the hosts did not keep port 42000 on their addresses"
	check xnat status --json
	use=$(json_q "[a['mappings'] for a in j['addresses']]" <<<"$CHECK_OUT")
	[ "$use" = "[1, 1]" ] || fail "status: mappings per address $use, expected [1, 1]"
	check xnat up -c "$one"
	wait_number -eq 0 "flow entries of the lan1 host" \
		flow_count "'$LAN1_HOST4' in f['src'] + f['new_dst']" ||
		fail "flows through the dropped port remain"
	[ "$(flow_count "'$LAN_HOST4' in f['src'] + f['new_dst']")" = 2 ] ||
		fail "the lan0 host's flow was lost"
	check xnat status --json
	use=$(json_q "j['addresses'][0]['mappings']" <<<"$CHECK_OUT")
	[ "$use" = 1 ] || fail "the lan0 host's port on $RTR_WAN4 is no longer held ($use)"
	out=$(probe "$NS_LAN" 42000:7000)
	echo "$out"
	[ "$out" = "42000 7000 $RTR_WAN4:42000" ] || fail "the lan0 host's mapping changed"
}

# xnat ARGS... with /proc/meminfo showing MB megabytes available: a copy
# bind-mounted over it in a private mount namespace, as lxcfs shows a
# container its memory limit. xnat reads no other figure but a memory
# cgroup's limit (user/memory.c; test_config_limits.sh tests that one),
# so the refusal is tested against a known budget on any machine, where
# the largest config (2^24 connections, 256 addresses: about 20 GB) would
# fit in a bigger one.
xnat_avail() {
	local mb=$1 info=$TB_WORK/meminfo.$1
	shift
	sed -E "s/^MemAvailable:.*/MemAvailable: $((mb * 1024)) kB/" \
		/proc/meminfo >"$info" || return 1
	# shellcheck disable=SC2016
	timeout "$T_XNAT" unshare -m sh -c \
		'mount --bind "$0" /proc/meminfo && exec "$@"' \
		"$info" "$XNAT" -n "$NS_RTR" "$@"
}

# A flow table the machine cannot hold is refused, by check and by up,
# before anything changes, with the size that would fit.
TEST_MODES[memory_refusal]=xdp
test_memory_refusal() {
	local big out rc cmd fits
	check xnat down
	# 3/4 of 512 MB (xnat's share, user/memory.h) hold the test's 65536
	# connections (about 62 MB) but not a million (about 1.2 GB).
	check xnat_avail 512 check -c "$TB_CONFIG"
	big=$(config_variant big flows.max=1048576) || fail "no config variant"
	for cmd in check up; do
		out=$(xnat_avail 512 "$cmd" -c "$big" 2>&1)
		rc=$?
		echo "$cmd: exit $rc"
		echo "$out"
		[ "$rc" = 1 ] || fail "$cmd: expected exit 1 (config error), got $rc"
		grep -q '\[flows\] max = 1048576 needs about [0-9]* MB' <<<"$out" ||
			fail "$cmd: the refusal does not say what it needs"
		grep -q 'more than 3/4 of the 512 MB available' <<<"$out" ||
			fail "$cmd: the refusal does not say what is available"
		fits=$(sed -nE 's/.*at most about ([0-9]+) connections fit.*/\1/p' <<<"$out")
		[ -n "$fits" ] || fail "$cmd: the refusal does not say what fits"
		[ "$fits" -ge 65536 ] && [ "$fits" -lt 1048576 ] ||
			fail "$cmd: $fits connections fit, expected 65536 to 1048575"
		[ "$cmd" = up ] || grep -q 'nothing was changed' <<<"$out" ||
			fail "check does not say that nothing was changed"
	done
	[ -e "/sys/fs/bpf/xnat/$TB_RTR_INO" ] &&
		fail "the refused up left pins: $(find "/sys/fs/bpf/xnat/$TB_RTR_INO")"
	ip -n "$NS_RTR" -d link show | grep -q 'prog/xdp' &&
		fail "the refused up attached XDP"
	on_rtr nft list tables | grep -qw xnat &&
		fail "the refused up left nft table xnat"
	return 0
}

# status reports the maps' kernel memory and the ports used per address.
TEST_MODES[status_memory]=xdp
test_status_memory() {
	local bytes
	peer_server 7000 || fail "no server"
	probe "$NS_LAN" 41000:7000 >/dev/null
	check xnat status --json
	bytes=$(json_q "j['memory']['maps_bytes']" <<<"$CHECK_OUT")
	echo "maps: $bytes bytes"
	# configs/xdp.ini: 65536 connections, about 62 MB of maps.
	[ "$bytes" -gt $((50 * 1024 * 1024)) ] || fail "maps_bytes too small"
	json_q "j['addresses'][0]['mappings']" <<<"$CHECK_OUT" | grep -qx 1 ||
		fail "the one mapping is not counted on the NAT address"
	check xnat status
	grep -q '^memory: ' <<<"$CHECK_OUT" || fail "no memory line"
}

run_tests "$@"
