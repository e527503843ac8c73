#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `xnat flows` as a person follows connections: one line per connection
# (both directions), the JSON with its per-direction entries unchanged plus
# the connections, filters (host, port, proto, state), --sort, -w, and
# `xnat flows delete`, which ends connections through the flow sweeper so
# that the NAT mapping's reference count goes back to zero and the same
# endpoint can open again. Harness and testbed: lib.sh.
#
#   tests/integration/test_flows.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

test_modes xdp flows_connections flows_filter_sort flows_delete flows_watch

# An established TCP connection LAN -> WAN that stays open for SECS.
tcp_open() {
	local port=$1 secs=$2
	tcp_server_recv "$NS_WAN" "$port" "$TB_WORK/tcp.$port" || fail "no server"
	bg_ns $((secs + 2)) "$NS_LAN" socat -u SYSTEM:"echo hello; sleep $secs" \
		"TCP:$WAN_HOST4:$port"
	sleep 0.5
}

# Send N datagrams from LAN source port SPORT to the WAN echo server PORT.
udp_n() {
	local sport=$1 port=$2 n=$3
	for _ in $(seq "$n"); do echo x; sleep 0.05; done |
		timeout 10 ip netns exec "$NS_LAN" socat -t 1 - \
			"UDP:$WAN_HOST4:$port,sourceport=$sport" >/dev/null
}

flows_json() { xnat flows --json "$@"; }

# Three connections (TCP, UDP, ICMP): three lines, six entries, and the
# connection's packets are its two entries' sum.
test_flows_connections() {
	tcp_open 5000 8
	echo_server "$NS_WAN" udp 5001 || fail "no server"
	udp_n 40001 5001 3
	check on_lan ping -c 3 -i 0.1 -W 2 "$WAN_HOST4"
	check xnat flows
	[ "$(grep -c '^tcp \|^udp \|^icmp ' <<<"$CHECK_OUT")" = 3 ] || fail "not 3 lines"
	grep -q '^tcp  *established ' <<<"$CHECK_OUT" || fail "tcp not established"
	grep -q '^3 connections$' <<<"$CHECK_OUT" || fail "no count line"
	check flows_json
	j=$CHECK_OUT
	[ "$(json_q "len(j['flows'])" <<<"$j")" = 6 ] || fail "not 6 entries"
	[ "$(json_q "len(j['connections'])" <<<"$j")" = 3 ] || fail "not 3 connections"
	[ "$(json_q "all(set(f) >= {'family','proto','dir','nat','ingress','egress','src','dst','new_src','new_dst','state','idle_s','age_s','packets','bytes'} for f in j['flows'])" <<<"$j")" = true ] ||
		fail "entries lost keys"
	[ "$(json_q "[c['packets'] == c['orig_packets'] + c['reply_packets'] and c['orig'] and c['reply'] for c in j['connections']] == [True] * 3" <<<"$j")" = true ] ||
		fail "packets are not the sum of the directions"
	[ "$(json_q "[c['packets'] for c in j['connections'] if c['proto'] == 'icmp'][0]" <<<"$j")" = 6 ] ||
		fail "icmp connection does not count 6 packets"
}

# Two UDP connections of 2 and 10 packets, a ping: filters select, --sort
# orders largest first.
test_flows_filter_sort() {
	echo_server "$NS_WAN" udp 5001 || fail "no server"
	udp_n 40001 5001 1
	echo_server "$NS_WAN" udp 5002 || fail "no server"
	udp_n 40002 5002 5
	check on_lan ping -c 2 -i 0.1 -W 2 "$WAN_HOST4"
	check flows_json --sort packets
	[ "$(json_q "[c['proto'] + ' ' + str(c['packets']) for c in j['connections']]" <<<"$CHECK_OUT")" = '["udp 10", "icmp 4", "udp 2"]' ] ||
		fail "--sort packets"
	check flows_json --sort bytes proto udp
	[ "$(json_q "[c['dst'] for c in j['connections']]" <<<"$CHECK_OUT")" = "[\"$WAN_HOST4:5002\", \"$WAN_HOST4:5001\"]" ] ||
		fail "--sort bytes proto udp"
	check flows_json port 5001
	[ "$(json_q "[c['src'] for c in j['connections']]" <<<"$CHECK_OUT")" = "[\"$LAN_HOST4:40001\"]" ] ||
		fail "port 5001"
	check flows_json port 40002
	[ "$(json_q "len(j['connections']) == 1 and len(j['flows']) == 2" <<<"$CHECK_OUT")" = true ] ||
		fail "port 40002 (the reply's destination too)"
	# The NAT address is in every connection's rewrite.
	check flows_json host "$RTR_WAN4"
	[ "$(json_q "len(j['connections'])" <<<"$CHECK_OUT")" = 3 ] || fail "host (after NAT)"
	check flows_json host 198.19.0.99
	[ "$(json_q "len(j['connections'])" <<<"$CHECK_OUT")" = 0 ] || fail "host nobody"
	check flows_json state established
	[ "$(json_q "len(j['connections'])" <<<"$CHECK_OUT")" = 0 ] || fail "no tcp: none established"
	out=$(xnat flows --sort size 2>&1) && fail "--sort size accepted"
	echo "$out"
	out=$(xnat flows colour red 2>&1) && fail "unknown filter word accepted"
	echo "$out"
}

mapping_refs() {
	bpftool -j map dump pinned "/sys/fs/bpf/xnat/$TB_RTR_INO/xnat_mappings" |
		json_q "sorted((e['formatted']['value']['flows'], e['formatted']['value']['out_flows']) for e in j)"
}

# Delete the UDP connection: both entries go, the mapping's references drop
# to zero (it then waits out its timeout), the ICMP one stays, and the same
# inside endpoint opens a new connection that works.
test_flows_delete() {
	local tok=xnat-flows-$RANDOM
	echo_server "$NS_WAN" udp 5001 || fail "no server"
	udp_n 40001 5001 2
	check on_lan ping -c 2 -i 0.1 -W 2 "$WAN_HOST4"
	echo "mapping references before: $(mapping_refs)"
	[ "$(mapping_refs)" = '[[1, 1], [1, 1]]' ] || fail "references before"
	check xnat flows delete proto udp and port 5001
	grep -q '^1 connections matched, 1 deleted$' <<<"$CHECK_OUT" || fail "delete output"
	check flows_json
	[ "$(json_q "[c['proto'] for c in j['connections']]" <<<"$CHECK_OUT")" = '["icmp"]' ] ||
		fail "the udp connection is still there, or icmp went too"
	echo "mapping references after: $(mapping_refs)"
	[ "$(mapping_refs)" = '[[0, 0], [1, 1]]' ] || fail "references after"
	check xnat flows delete --json port 5001
	[ "$(json_q "[j['matched'], j['deleted']]" <<<"$CHECK_OUT")" = '[0, 0]' ] ||
		fail "deleting nothing"
	# The same endpoint again: a new connection, through the same port.
	[ "$(printf '%s\n' "$tok" | timeout 5 ip netns exec "$NS_LAN" socat -t 1 - \
		"UDP:$WAN_HOST4:5001,sourceport=40001")" = "$tok" ] || fail "no echo after delete"
	check flows_json proto udp
	[ "$(json_q "[c['new_src'] for c in j['connections']]" <<<"$CHECK_OUT")" = "[\"$RTR_WAN4:40001\"]" ] ||
		fail "the new connection"
	[ "$(mapping_refs)" = '[[1, 1], [1, 1]]' ] || fail "references after reopening"
	out=$(xnat flows delete 2>&1) && fail "delete without a filter accepted"
	echo "$out"
}

# -w 1 refreshes: two tables in a bit over a second.
test_flows_watch() {
	local out
	check on_lan ping -c 1 -W 2 "$WAN_HOST4"
	out=$(timeout 1.6 "$XNAT" -n "$NS_RTR" flows -w 1)
	echo "$out"
	[ "$(grep -c '^proto ' <<<"$out")" = 2 ] || fail "not two tables"
}

run_tests "$@"
