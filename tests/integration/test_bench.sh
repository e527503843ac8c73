#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Smoke test of `xnat bench`: one `xnat bench --quick --json` run (bounded
# by timeout 300), then checks of its STRUCTURE and SANITY only, never of a
# timing or a rate: every mode ran every profile; every sample's counters
# add up (offered = forwarded + lost, offered > 0); the forwarding modes
# forwarded and the drop mode did not; each mode was verified to be what it
# claims; the JSON has the documented keys (docs/BENCHMARKS.md); the PNG
# and the text report exist; and nothing is left behind, also after a run
# interrupted with SIGINT.
#
# The bench builds its own testbed, so this suite does not use lib.sh's
# per-test one; it borrows only json_q. Output: "#N name:OK|FAIL|SKIP"
# lines and a final "N passed, N failed, N skipped" line (tests/run.sh).
#
#   tests/integration/test_bench.sh           V=1 shows the bench's stderr
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

BENCH_TIMEOUT=${BENCH_TIMEOUT:-300}
BENCH_TESTS="bench_ran json_keys all_modes_ran counters_consistent
	forwarding_modes_forward modes_verified newflow_ran tcp_ran
	outputs_written nothing_left sigint_cleanup nothing_left_after_sigint"

# tests/run.sh asks each suite which of its tests a filter selects
# (`--list FILTER`) before running it: answer without running the bench.
# The checks all read one bench run, so a selected suite runs them all.
if [ "${1:-}" = --list ]; then
	for t in $BENCH_TESTS; do
		case $t in *"${2:-}"*) echo "$t" ;; esac
	done
	exit 0
fi
MODES_ALL="kernel-fwd kernel-masq kernel-nat xdp-nat xdp-nat-slow xdp-offload xdp-fwd drop"
OUT=
JSON=
N=0 PASS=0 FAILED=0 SKIPPED=0

bench_leftovers() {
	ip netns list 2>/dev/null | grep -o '^xnat-bench-[a-z]*-[0-9]*' || true
}

# Run one check: prints its line, shows its output on failure (or V=1).
check_one() {
	local name=$1 log rc
	shift
	N=$((N + 1))
	log=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		PASS=$((PASS + 1))
		echo "#$N $name:OK"
		[ "$V" = 1 ] && [ -n "$log" ] && printf '%s\n' "$log" | sed 's/^/    /'
	elif [ $rc -eq "$SKIPPED_TEST" ]; then
		SKIPPED=$((SKIPPED + 1))
		echo "#$N $name:SKIP"
		[ -n "$log" ] && printf '%s\n' "$log" | tail -1 | sed 's/^/    /'
	else
		FAILED=$((FAILED + 1))
		echo "#$N $name:FAIL"
		[ -n "$log" ] && printf '%s\n' "$log" | sed 's/^/    /'
	fi
}

# Python over the bench's JSON: the script on stdin builds a list BAD of
# what is wrong (J is the document); the check fails if it is not empty.
# each_mode_sampled(SAMPLES, WHAT): the NAT modes that new flows and TCP
# are measured in each have a sample.
jcheck() {
	{
		cat <<-'EOF'
		import json, sys
		j = json.load(open(sys.argv[1]))
		bad = []
		def each_mode_sampled(samples, what):
		    for m in ("kernel-masq", "kernel-nat", "xdp-nat", "xdp-offload"):
		        if not any(s["mode"] == m for s in samples):
		            bad.append(f"{what}: no sample for {m}")
		EOF
		cat
		printf '%s\n' 'for b in bad[:20]: print(b)' 'sys.exit(1 if bad else 0)'
	} >"$OUT/check.py"
	python3 "$OUT/check.py" "$JSON"
}

# ---- the checks ---------------------------------------------------------------

t_bench_ran() {
	[ "$(cat "$OUT/rc")" = 0 ] || {
		echo "xnat bench exited $(cat "$OUT/rc")"
		tail -20 "$OUT/stderr"
		return 1
	}
	[ -s "$JSON" ] || { echo "no JSON on stdout"; return 1; }
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$JSON"
}

t_json_keys() {
	jcheck <<-'EOF'
	def need(obj, keys, what):
	    bad.extend(f"{what} lacks {k}" for k in keys if k not in obj)
	need(j, ("tool", "format", "command", "date", "kernel", "cpus", "complete",
	         "elapsed_s", "plan", "cpu", "framing", "samples", "results", "ratios",
	         "newflow", "tcp", "microbench"), "the document")
	need(j.get("plan", {}), ("quick", "reps", "modes", "profiles", "loss_max", "max_s",
	                         "step_s", "search_steps", "newflow_flows", "tcp_s"), "plan")
	need(j.get("framing", {}), ("fcs_bytes", "overhead_bytes"), "framing")
	need(j.get("cpu", {}), ("lan_generator", "wan_generator", "router"), "cpu")
	for i, s in enumerate(j.get("samples", [])):
	    need(s, ("rep", "mode", "profile", "kind", "target_pps", "seconds", "offered",
	             "forwarded", "lost", "directions", "router", "verified", "note",
	             "gen_waited_s", "disturbed_retries"),
	         f"sample {i}")
	    w = s.get("gen_waited_s")
	    if w is not None and not 0 <= w <= s.get("seconds", 0) + 0.5:
	        bad.append(f"sample {i}: gen_waited_s {w} outside 0..seconds")
	    if not 0 <= s.get("disturbed_retries", -1) < 5:
	        bad.append(f"sample {i}: disturbed_retries outside 0..4")
	for i, r in enumerate(j.get("results", [])):
	    need(r, ("mode", "profile", "max_pps", "max_mbps", "noloss_pps", "chain_ns",
	             "router_ns", "max_pct_1g", "max_pct_10g", "noloss_pct_1g",
	             "noloss_pct_10g"), f"result {i}")
	need(j.get("newflow", {}), ("flows", "samples", "results"), "newflow")
	need(j.get("tcp", {}), ("seconds", "samples", "results"), "tcp")
	need(j.get("microbench", {}), ("fast_path_ns", "fast_path_off_ns",
	                               "bare_forwarder_ns", "fast_path_traced_ns",
	                               "offload_hit_ns", "table_insert_small_ns",
	                               "table_insert_large_ns"),
	     "microbench")
	for k in ("table_insert_small_ns", "table_insert_large_ns"):
	    if not (j.get("microbench", {}).get(k) or 0) > 0:
	        bad.append(f"microbench {k} is not a positive time")
	need(j, ("xnat_version", "cpu_model", "cost_ns"), "the document")
	cost = j.get("cost_ns") or {}
	need(cost, ("profile", "method", "modes"), "cost_ns")
	for m in ("xdp-nat", "kernel-nat", "kernel-masq"):
	    c = cost.get("modes", {}).get(m)
	    if not (c and c.get("n", 0) >= 1 and c.get("median", 0) > 0):
	        bad.append(f"cost_ns has no positive cost for {m}")
	# Both kernel baselines in every ratio the other modes have to one.
	ratios = {(x["mode"], x["over"]) for x in j.get("ratios", [])}
	for a, b in sorted(ratios):
	    if b in ("kernel-masq", "kernel-nat"):
	        other = "kernel-nat" if b == "kernel-masq" else "kernel-masq"
	        if a != other and (a, other) not in ratios:
	            bad.append(f"ratio {a}/{b} without {a}/{other}")
	if ("kernel-nat", "kernel-masq") not in ratios:
	    bad.append("no ratio kernel-nat/kernel-masq")
	if j.get("complete") is not True:
	    bad.append("complete is not true")
	if j.get("plan", {}).get("quick") is not True:
	    bad.append("plan.quick is not true")
	EOF
}

t_all_modes_ran() {
	MODES_ALL=$MODES_ALL jcheck <<-'EOF'
	import os
	for m in os.environ["MODES_ALL"].split():
	    if m not in j["plan"]["modes"]:
	        bad.append(f"mode {m} is not in the plan")
	for m in j["plan"]["modes"]:
	    for p in j["plan"]["profiles"]:
	        if not any(s["mode"] == m and s["profile"] == p["name"] and
	                   s["kind"] == "max" for s in j["samples"]):
	            bad.append(f"{m} {p['name']}: no saturation sample")
	        if not any(r["mode"] == m and r["profile"] == p["name"]
	                   for r in j["results"]):
	            bad.append(f"{m} {p['name']}: no result")
	EOF
}

t_counters_consistent() {
	jcheck <<-'EOF'
	for i, s in enumerate(j["samples"]):
	    what = f"sample {i} ({s['mode']} {s['profile']} {s['kind']})"
	    if not s["offered"] > 0:
	        bad.append(f"{what}: offered {s['offered']}")
	    if s["forwarded"] + s["lost"] != s["offered"]:
	        bad.append(f"{what}: forwarded {s['forwarded']} + lost {s['lost']} "
	                   f"!= offered {s['offered']}")
	    if (sum(d["offered"] for d in s["directions"]) != s["offered"] or
	            sum(d["forwarded"] for d in s["directions"]) != s["forwarded"]):
	        bad.append(f"{what}: the directions do not add up")
	EOF
}

t_forwarding_modes_forward() {
	jcheck <<-'EOF'
	for s in j["samples"]:
	    what = f"{s['mode']} {s['profile']} {s['kind']}"
	    if s["mode"] != "drop" and not s["forwarded"] > 0:
	        bad.append(f"{what}: forwarded nothing")
	    if s["mode"] == "drop" and s["forwarded"] != 0:
	        bad.append(f"{what}: forwarded {s['forwarded']}")
	    if s["mode"] == "drop" and not s["router"]["drop_seen"] > 0:
	        bad.append(f"{what}: xdp_drop saw nothing")
	EOF
}

t_modes_verified() {
	jcheck <<-'EOF'
	for s in j["samples"]:
	    what = f"{s['mode']} {s['profile']} {s['kind']}"
	    r = s["router"]
	    if not s["verified"]:
	        bad.append(f"{what}: not verified: {s['note']}")
	    if s["mode"] == "xdp-nat" and not r["fwd_fast"] > 0:
	        bad.append(f"{what}: no fwd_fast")
	    if s["mode"] == "xdp-nat-slow" and not r["fwd_routed"] > 0:
	        bad.append(f"{what}: no fwd_routed")
	    if s["mode"] in ("kernel-masq", "kernel-nat", "xdp-offload") and not (r["conntrack"] or 0) > 0:
	        bad.append(f"{what}: no conntrack entries")
	    if s["mode"] == "xdp-offload" and not r["fwd_fast"] > 0:
	        bad.append(f"{what}: no fwd_fast")
	    if s["mode"].startswith("kernel") and not r["kernel_forwarded"] > 0:
	        bad.append(f"{what}: the kernel forwarded nothing")
	EOF
}

t_newflow_ran() {
	jcheck <<-'EOF'
	each_mode_sampled(j["newflow"]["samples"], "new flows")
	for s in j["newflow"]["samples"]:
	    if not (s["flows_offered"] > 0 and
	            0 < s["flows_set_up"] <= s["flows_offered"] and
	            s["flows_per_s"] > 0):
	        bad.append(f"new flows {s['mode']}: offered {s['flows_offered']}, "
	                   f"set up {s['flows_set_up']}, {s['flows_per_s']}/s")
	EOF
}

t_tcp_ran() {
	jcheck <<-'EOF'
	each_mode_sampled(j["tcp"]["samples"], "tcp")
	for s in j["tcp"]["samples"]:
	    what = f"tcp {s['mode']} {s['test']}"
	    if not (s["ok"] and s["mbps"] > 0):
	        bad.append(f"{what}: {s['note']} ({s['mbps']} Mbit/s)")
	    if not s["ping_received"] > 0:
	        bad.append(f"{what}: no ping replies")
	    # Loss is counted in every mode: iperf3's retransmissions and the
	    # ports' drop counters (null would mean they were not read).
	    for k in ("retransmits", "host_drops", "router_drops"):
	        if not (isinstance(s.get(k), int) and s[k] >= 0):
	            bad.append(f"{what}: {k} = {s.get(k)!r}")
	EOF
}

t_outputs_written() {
	local f
	for f in bench.json bench.txt bench.png; do
		[ -s "$OUT/res/$f" ] || { echo "$OUT/res/$f missing or empty"; return 1; }
	done
	# PNG signature: \x89PNG
	[ "$(head -c 4 "$OUT/res/bench.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
		{ echo "bench.png is not a PNG"; return 1; }
	cmp -s "$OUT/res/bench.json" "$JSON" ||
		{ echo "bench.json differs from what --json printed"; return 1; }
}

t_nothing_left() {
	local left
	left=$(bench_leftovers)
	[ -z "$left" ] || { echo "namespaces left: $left"; return 1; }
	pgrep -f 'iperf3 -s -1 -p 520[12]' >/dev/null &&
		{ echo "an iperf3 server is still running"; return 1; }
	return 0
}

# Ctrl-C in the middle of a run: exit 2, everything removed, partial
# results marked incomplete.
t_sigint_cleanup() {
	local pid rc left out=$OUT/int
	mkdir -p "$out"
	"$XNAT" bench --quick --modes xdp-nat,kernel-nat --profiles udp,64 \
		--out "$out" >"$out/stdout" 2>"$out/stderr" &
	pid=$!
	# Let it get into a measurement, then interrupt it.
	for _ in $(seq 100); do
		grep -q 'rep 1/1' "$out/stderr" 2>/dev/null && break
		sleep 0.1
	done
	sleep 2
	kill -INT "$pid"
	for _ in $(seq 60); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		echo "bench did not end within 30 s of SIGINT"
		return 1
	fi
	wait "$pid"
	rc=$?
	[ $rc -eq 2 ] || { echo "exit status $rc after SIGINT, expected 2"; tail -5 "$out/stderr"; return 1; }
	left=$(bench_leftovers)
	[ -z "$left" ] || { echo "namespaces left after SIGINT: $left"; return 1; }
	grep -q 'interrupted' "$out/stderr" || { echo "no 'interrupted' message"; return 1; }
	if [ -s "$out/bench.json" ]; then
		json_q "j['complete']" <"$out/bench.json" | grep -qx false ||
			{ echo "partial results not marked incomplete"; return 1; }
	fi
	return 0
}

# ---- main --------------------------------------------------------------------

skip_all() {
	local t
	for t in bench_ran json_keys all_modes_ran counters_consistent \
		forwarding_modes_forward modes_verified newflow_ran tcp_ran \
		outputs_written nothing_left sigint_cleanup \
		nothing_left_after_sigint; do
		N=$((N + 1))
		SKIPPED=$((SKIPPED + 1))
		echo "#$N $t:SKIP"
	done
	echo "    skip: $1"
	echo "$PASS passed, $FAILED failed, $SKIPPED skipped"
	exit 0
}

[ "$(id -u)" = 0 ] || skip_all "must run as root"
[ -x "$XNAT" ] || skip_all "$XNAT not built (run make)"
for t in ip ethtool iperf3 ping gnuplot python3; do
	command -v "$t" >/dev/null 2>&1 || skip_all "missing $t (scripts/deps.sh)"
done
[ -z "$(bench_leftovers)" ] ||
	skip_all "xnat-bench namespaces exist already: $(bench_leftovers | tr '\n' ' ')"

OUT=$(mktemp -d /tmp/xnat-test-bench.XXXXXX) || exit 1
trap 'rm -rf -- "$OUT"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
JSON=$OUT/stdout.json

echo "+ timeout $BENCH_TIMEOUT $XNAT bench --quick --json --out $OUT/res"
timeout -k 30 "$BENCH_TIMEOUT" "$XNAT" bench --quick --json --out "$OUT/res" \
	>"$JSON" 2>"$OUT/stderr"
echo $? >"$OUT/rc"
[ "$V" = 1 ] && sed 's/^/  | /' "$OUT/stderr"

check_one bench_ran t_bench_ran
if [ "$(cat "$OUT/rc")" = 0 ] && [ -s "$JSON" ]; then
	check_one json_keys t_json_keys
	check_one all_modes_ran t_all_modes_ran
	check_one counters_consistent t_counters_consistent
	check_one forwarding_modes_forward t_forwarding_modes_forward
	check_one modes_verified t_modes_verified
	check_one newflow_ran t_newflow_ran
	check_one tcp_ran t_tcp_ran
	check_one outputs_written t_outputs_written
else
	for t in json_keys all_modes_ran counters_consistent \
		forwarding_modes_forward modes_verified newflow_ran tcp_ran \
		outputs_written; do
		N=$((N + 1))
		FAILED=$((FAILED + 1))
		echo "#$N $t:FAIL"
		echo "    the bench run failed; see bench_ran"
	done
fi
check_one nothing_left t_nothing_left
check_one sigint_cleanup t_sigint_cleanup
check_one nothing_left_after_sigint t_nothing_left

echo "$PASS passed, $FAILED failed, $SKIPPED skipped"
[ $FAILED -eq 0 ]
