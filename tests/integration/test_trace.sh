#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `xnat trace` end to end: the events a ping through the router produces
# (the first request on the slow path with its NAT decision, the rest on
# the fast path), filters evaluated in the data path (host, port, proto,
# reason), the count of what matched but was not shown (nothing lost
# silently), the trace switched off again on exit, and the kernel-mode
# pointer to `nft monitor trace`. Harness and testbed: lib.sh.
#
#   tests/integration/test_trace.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

test_modes xdp trace_ping trace_filter trace_lost_counted trace_one_at_a_time
test_modes kernel trace_kernel_mode
test_modes offload trace_offload

trace_cfg_pin() { echo "/sys/fs/bpf/xnat/$TB_RTR_INO/xnat_trace_cfg"; }

# The data path's view of the tracer: 1 while one is attached.
trace_active() {
	bpftool -j map lookup pinned "$(trace_cfg_pin)" key 0 0 0 0 |
		json_q "j['formatted']['value']['active']"
}

# Start `xnat trace ARGS --json` in the background, output in FILE, and
# wait until the data path sees it. Sets TRACE_PID.
trace_start() {
	local file=$1
	shift
	timeout 30 "$XNAT" -n "$NS_RTR" trace --json "$@" >"$file" 2>"$file.err" &
	TRACE_PID=$!
	echo "$TRACE_PID" >>"$TB_WORK/pids"
	echo "+ & [pid $TRACE_PID] xnat trace --json $*"
	for _ in $(seq 50); do
		[ "$(trace_active 2>/dev/null)" = 1 ] && return 0
		sleep 0.1
	done
	cat "$file.err"
	fail "xnat trace did not switch the trace on"
}

# Stop it as Ctrl-C would and check it switched the trace off.
trace_stop() {
	kill -INT "$TRACE_PID" 2>/dev/null
	wait "$TRACE_PID" || fail "xnat trace exited with $?: $(cat "$1.err")"
	[ "$(trace_active)" = 0 ] || fail "the trace is still on after exit"
}

# Python over the JSON lines of a trace: E = events, S = the summary, N =
# the running not-shown reports.
trace_q() {
	python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
E = [l for l in lines if "path" in l]
S = [l["summary"] for l in lines if "summary" in l]
S = S[-1] if S else None
N = [l["not_shown"] for l in lines if "not_shown" in l and len(l) == 1]
r = eval(sys.argv[2])
print(json.dumps(r) if isinstance(r, (dict, list, bool)) or r is None else r)
' "$@"
}

expect() {
	local file=$1 expr=$2 got
	got=$(trace_q "$file" "$expr") || fail "cannot evaluate $expr"
	echo "  $expr -> $got"
	[ "$got" = True ] || [ "$got" = true ] || fail "expected: $expr"
}

# Three pings: request 1 creates the flow (slow path, SNAT to the WAN
# address), the other requests and all replies hit it (fast path). With
# -c 6 the tracer stops by itself after the six events.
test_trace_ping() {
	local f=$TB_WORK/trace.json
	trace_start "$f" proto icmp -c 6
	check on_lan ping -c 3 -i 0.3 -W 2 "$WAN_HOST4"
	wait "$TRACE_PID" || fail "xnat trace -c 6 exited with $?: $(cat "$f.err")"
	cat "$f"
	[ "$(trace_active)" = 0 ] || fail "the trace is still on after -c 6"
	expect "$f" "len(E) == 6"
	expect "$f" "E[0]['path'] == 'slow' and E[0]['reason'] == 'fwd_slow'"
	expect "$f" "E[0]['ingress'] == '$RTR_LAN_IF' and E[0]['egress'] == '$RTR_WAN_IF'"
	expect "$f" "E[0]['src'].startswith('$LAN_HOST4:') and E[0]['new_src'].startswith('$RTR_WAN4:')"
	expect "$f" "E[0]['new_flow']['nat'] == 'snat'"
	expect "$f" "all(e['path'] == 'fast' and e['reason'] == 'fwd_fast' for e in E[1:])"
	expect "$f" "all('new_flow' not in e for e in E[1:])"
	# Replies come in on the WAN port to the NAT address and leave
	# towards the LAN host.
	expect "$f" "sum(e['ingress'] == '$RTR_WAN_IF' and e['dst'].startswith('$RTR_WAN4:') and e['new_dst'].startswith('$LAN_HOST4:') and e['egress'] == '$RTR_LAN_IF' for e in E) == 3"
	expect "$f" "S['matched'] == 6 and S['shown'] == 6 and S['not_shown'] == 0"
}

# Filters run in the data path: an address nobody uses matches nothing
# (and counts nothing), a port selects one of two UDP flows, a reason
# glob selects drops only.
test_trace_filter() {
	local f=$TB_WORK/none.json tok=xnat-trace-$RANDOM
	trace_start "$f" host 198.19.0.99
	check on_lan ping -c 3 -i 0.2 -W 2 "$WAN_HOST4"
	trace_stop "$f"
	expect "$f" "len(E) == 0 and S['matched'] == 0"

	echo_server "$NS_WAN" udp 5000 || fail "no server"
	echo_server "$NS_WAN" udp 5001 || fail "no server"
	f=$TB_WORK/port.json
	trace_start "$f" proto udp and port 5000
	check udp_ask "$NS_LAN" "UDP:$WAN_HOST4:5000" "$tok"
	check udp_ask "$NS_LAN" "UDP:$WAN_HOST4:5001" "$tok"
	trace_stop "$f"
	cat "$f"
	expect "$f" "len(E) == 2 and all(e['proto'] == 'udp' and (e['dst'].endswith(':5000') or e['src'].endswith(':5000')) for e in E)"
	expect "$f" "S['matched'] == 2"

	# Unsolicited UDP from the WAN host to the NAT range: dropped.
	f=$TB_WORK/drop.json
	trace_start "$f" reason 'drop_*'
	check on_lan ping -c 2 -i 0.2 -W 2 "$WAN_HOST4"
	for p in 40001 40002 40003; do
		on_wan socat -u - "UDP:$RTR_WAN4:$p" <<<"$tok" || true
	done
	sleep 0.3
	trace_stop "$f"
	cat "$f"
	expect "$f" "len(E) == 3 and all(e['path'] == 'dropped' and e['reason'] == 'drop_unsolicited' for e in E)"
	expect "$f" "sorted(e['dst'] for e in E) == ['$RTR_WAN4:40001', '$RTR_WAN4:40002', '$RTR_WAN4:40003']"
}

# At 1 event/s per CPU a burst of pings cannot all be shown: what was not
# shown is counted and reported, and shown + not shown = matched.
test_trace_lost_counted() {
	local f=$TB_WORK/lost.json
	trace_start "$f" proto icmp --rate 1
	check on_lan ping -c 20 -i 0.02 -W 2 "$WAN_HOST4"
	sleep 0.6 # the tracer reports losses as it polls (every 250 ms)
	trace_stop "$f"
	cat "$f"
	expect "$f" "S['matched'] == 40"
	expect "$f" "S['shown'] == len(E) and S['shown'] >= 1 and S['shown'] < 40"
	expect "$f" "S['not_shown'] == 40 - S['shown'] and S['over_rate_or_ring_full'] == S['not_shown']"
	expect "$f" "len(N) >= 1 and max(N) <= S['not_shown']"
}

# A ring buffer has one reader: a second tracer is refused, and says why;
# the lock goes with the first one.
test_trace_one_at_a_time() {
	local f=$TB_WORK/first.json out rc
	trace_start "$f" proto udp
	out=$(xnat trace -c 1 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 2 ] && grep -q 'another xnat trace runs' <<<"$out" ||
		fail "second tracer: exit $rc"
	trace_stop "$f"
	[ ! -e "/run/xnat/$TB_RTR_INO/trace.lock" ] || fail "lock file left behind"
}

# Offload mode: a UDP exchange starts in the kernel (path kernel, with the
# reason it is not offloaded yet), each direction moves to XDP once
# conntrack has accepted it (fwd_offload, the kernel's NAT as the
# decision) and then stays on the fast path.
test_trace_offload() {
	local f=$TB_WORK/offload.json
	echo_server "$NS_WAN" udp 5001 || fail "no server"
	trace_start "$f" proto udp
	for _ in 1 2 3 4 5 6; do echo x; sleep 0.2; done |
		timeout 10 ip netns exec "$NS_LAN" socat -t 1 - \
			"UDP:$WAN_HOST4:5001,sourceport=40001" >/dev/null
	sleep 0.3
	trace_stop "$f"
	cat "$f"
	expect "$f" "len(E) == 12 and S['matched'] == 12 and S['not_shown'] == 0"
	expect "$f" "E[0]['path'] == 'kernel'"
	expect "$f" "E[0]['reason'].startswith('pass_ct_')"
	expect "$f" "sorted(e['ingress'] for e in E if e['reason'] == 'fwd_offload') == ['$RTR_LAN_IF', '$RTR_WAN_IF']"
	expect "$f" "[e['new_flow']['nat'] for e in E if 'new_flow' in e] == ['ct', 'ct']"
	expect "$f" "[e for e in E if e['reason'] == 'fwd_offload' and e['ingress'] == '$RTR_LAN_IF'][0]['new_src'] == '$RTR_WAN4:40001'"
	# After the move, nothing goes back to the kernel.
	expect "$f" "all(e['path'] == 'fast' for e in E[max(i for i, e in enumerate(E) if e['reason'] == 'fwd_offload') + 1:])"
	expect "$f" "sum(e['path'] == 'fast' and e['ingress'] == '$RTR_WAN_IF' for e in E) >= 2"
}

# Kernel mode: XDP sees nothing; the command says what does.
test_trace_kernel_mode() {
	local out rc
	out=$(xnat trace 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 1 ] || fail "xnat trace in kernel mode exited $rc, expected 1"
	grep -q 'nft monitor trace' <<<"$out" || fail "no pointer to nft monitor trace"
}

run_tests "$@"
