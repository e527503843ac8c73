#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Offload mode's flow life cycle as an operator follows it: `xnat flows`
# says since when a connection is on the fast path, and the event log of
# `xnat run` has a line when each direction moves from the kernel to XDP
# (flow_offloaded) and when and why it goes back (flow_returned: tcp_end
# on a FIN, deleted by `xnat flows delete`, conntrack_destroyed by
# conntrack -D, ruleset_changed by an nftables change); `xnat trace` shows
# the packet that offloaded it, the FIN that handed it back, and the timer
# that removed a deleted one or one whose conntrack entry was destroyed. Harness: lib.sh.
#
#   tests/integration/test_offload_lifecycle.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

LC_PORT=5100

# Offloaded entries of `xnat flows --json` with PORT on either side.
offloaded_on() {
	xnat_json_q flows "len([f for f in j['flows'] if f['nat'] == 'ct' and
		 ('$WAN_HOST4:$1' in (f['src'], f['dst'])) and
		 f['offloaded_at'].endswith('Z') and f['offloaded_s'] >= 0])"
}

# Wait (at most 10 s) until offloaded_on PORT prints N.
wait_offloaded_on() {
	wait_number -eq "$2" "offloaded entries on port $1" offloaded_on "$1"
}

# The event log's lines about PORT, checked with EXPR over F (flow lines).
log_q() {
	python3 -c '
import json, sys
port = sys.argv[2]
L = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
F = [l for l in L if l["event"].startswith("flow_") and
     any(e.endswith(":" + port) for e in (l["src"], l["dst"]))]
ON = [l for l in F if l["event"] == "flow_offloaded"]
OFF = [l for l in F if l["event"] == "flow_returned"]
r = eval(sys.argv[3])
print(r, [(l["event"], l.get("why"), l["dir"]) for l in F])
assert r is True, sys.argv[3]
' "$@"
}

# Poll (at most 5 s) until log_q's EXPR holds: `xnat run` writes the
# event log from a ring buffer it polls, so a line may trail the event
# that `xnat flows` already shows.
wait_log_q() {
	local log=$1 port=$2 expr=$3
	for _ in $(seq 25); do
		log_q "$log" "$port" "$expr" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	log_q "$log" "$port" "$expr"
}

# Poll until the log has COUNT flow_returned lines for PORT with reason WHY.
wait_returned() {
	wait_log_q "$1" "$2" "len([l for l in OFF if l['why'] == '$3']) == $4"
}

# The data path's view of the tracer: 1 while one is attached.
trace_active() {
	bpftool -j map lookup pinned "/sys/fs/bpf/xnat/$TB_RTR_INO/xnat_trace_cfg" \
		key 0 0 0 0 | json_q "j['formatted']['value']['active']"
}

# Python EXPR over a trace's JSON lines: P the packets, R the timer's
# flow_returned events, both about PORT.
trace_lc_q() {
	python3 -c '
import json, sys
port = sys.argv[2]
L = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
L = [l for l in L if "src" in l and any(e.endswith(":" + port) for e in (l["src"], l["dst"]))]
P = [l for l in L if "path" in l]
R = [l for l in L if l.get("event") == "flow_returned"]
r = eval(sys.argv[3])
print(r, [(l.get("reason"), l.get("flow_returned"), l.get("why")) for l in L if "new_flow" in l or "flow_returned" in l or "why" in l])
assert r is True, sys.argv[3]
' "$@"
}

# An idle connection to PORT offloaded both ways and done writing (the
# writes take 1.2 s): a connection taken off now stays off, no packet
# brings it back.
offloaded_quiet() {
	tcp_idle_connection "$1" 20
	wait_offloaded_on "$1" 2 || fail "port $1: not offloaded both ways"
	sleep 1.5
}

# PORT's connection is off the fast path, and the log says WHY (after WHAT).
returned() {
	wait_offloaded_on "$1" 0 || fail "port $1: still offloaded after $3"
	wait_returned "$log" "$1" "$2" 2 || fail "port $1: no $2"
}

TEST_MODES[offload_lifecycle]=offload
test_offload_lifecycle() {
	local log pid tpid p
	command -v conntrack >/dev/null || fail "conntrack (conntrack-tools) missing: scripts/deps.sh installs it"
	xnat_run_bg
	pid=$RUN_PID
	log=$RUN_LOG
	timeout 120 "$XNAT" -n "$NS_RTR" trace --json proto tcp >"$TB_WORK/tr.json" \
		2>"$TB_WORK/tr.err" &
	tpid=$!
	echo "$tpid" >>"$TB_WORK/pids"
	for _ in $(seq 50); do
		[ "$(trace_active 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	[ "$(trace_active)" = 1 ] || fail "xnat trace did not start: $(cat "$TB_WORK/tr.err")"

	# Offloaded both ways, then a FIN hands it back.
	p=$LC_PORT
	tcp_idle_connection $p 2
	wait_offloaded_on $p 2 || fail "port $p: not offloaded both ways"
	check xnat flows port $p
	grep -q "on the fast path for [0-9]* s" <<<"$CHECK_OUT" || fail "flows: no fast-path time"
	wait_log_q "$log" $p "sorted(l['dir'] for l in ON) == ['orig', 'reply'] and all(l['proto'] == 'tcp' and l['time'].endswith('Z') for l in ON)" ||
		fail "port $p: flow_offloaded lines"
	log_q "$log" $p "[l['new_src'].startswith('$RTR_WAN4:') and l['src'].startswith('$LAN_HOST4:') for l in ON if l['dir'] == 'orig'] == [True]" ||
		fail "port $p: the kernel's translation in the log"
	wait_returned "$log" $p tcp_end 2 || fail "port $p: no tcp_end"
	log_q "$log" $p "all(l['offloaded'] <= l['time'] and l['packets'] >= 1 for l in OFF)" ||
		fail "port $p: returned lines' offloaded time and packets"

	# xnat flows delete.
	p=$((LC_PORT + 1))
	offloaded_quiet $p
	check xnat flows delete port $p
	grep -q '^1 connections matched, 1 deleted$' <<<"$CHECK_OUT" || fail "delete output"
	returned $p deleted delete

	# conntrack -D: the watch of xnat run takes it off, through the
	# entries' timers, so the trace shows it too.
	p=$((LC_PORT + 2))
	offloaded_quiet $p
	check on_rtr conntrack -D -p tcp --orig-dst "$WAN_HOST4" --dport $p
	returned $p conntrack_destroyed "conntrack -D"
	kill -INT "$tpid"
	wait "$tpid" || fail "xnat trace exited $?: $(cat "$TB_WORK/tr.err")"
	trace_lc_q "$TB_WORK/tr.json" $LC_PORT "sorted(l['new_flow']['nat'] for l in P if 'new_flow' in l) == ['ct', 'ct']" ||
		fail "trace: port $LC_PORT not offloaded both ways"
	trace_lc_q "$TB_WORK/tr.json" $LC_PORT "[l['reason'] for l in P if l.get('flow_returned') == 'tcp_end'] == ['pass_ct_tcp_end']" ||
		fail "trace: port $LC_PORT's FIN did not hand it back"
	trace_lc_q "$TB_WORK/tr.json" $((LC_PORT + 1)) "sorted(l['why'] for l in R) == ['deleted', 'deleted']" ||
		fail "trace: port $((LC_PORT + 1))'s entries not shown leaving"
	trace_lc_q "$TB_WORK/tr.json" $p "sorted(l['why'] for l in R) == ['conntrack_destroyed', 'conntrack_destroyed']" ||
		fail "trace: port $p's entries not shown leaving on the destroy event"

	# An nftables ruleset change.
	p=$((LC_PORT + 3))
	offloaded_quiet $p
	check on_rtr nft add table inet xnat_test_lc
	check on_rtr nft delete table inet xnat_test_lc
	returned $p ruleset_changed "a ruleset change"

	kill -TERM "$pid"
	wait "$pid" || fail "xnat run exited $?: $(cat "$log")"
	grep '"event":"log_closed"' "$log" || fail "no log_closed line"
}

run_tests "$@"
