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
	provenance tcp_percentiles compare_own_run
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

# Where and how the run was measured, as this machine and the plan say:
# the tester (host name, CPUs, memory, kernel), its two ports (veth, in
# the bench's namespaces), the command as typed, the procedure; and the
# same three lines in bench.txt's header.
t_provenance() {
	jcheck <<-'EOF' || return 1
	import os, socket, time, datetime
	t = j.get("tester") or {}
	u = os.uname()
	want = {"hostname": socket.gethostname(), "cpus": os.sysconf("SC_NPROCESSORS_ONLN"),
	        "kernel": u.release, "kernel_build": u.version}
	for k, v in want.items():
	    if t.get(k) != v:
	        bad.append(f"tester.{k} is {t.get(k)!r}, this machine's {v!r}")
	mem = [int(l.split()[1]) * 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal:")][0]
	if t.get("memory_bytes") != mem:
	    bad.append(f"tester.memory_bytes {t.get('memory_bytes')} != MemTotal {mem}")
	models = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
	if models and t.get("cpu_model") != models[0]:
	    bad.append(f"tester.cpu_model {t.get('cpu_model')!r} != {models[0]!r}")
	ports = t.get("ports", [])
	if sorted(p.get("role") for p in ports) != ["lan", "wan"]:
	    bad.append(f"tester.ports roles: {ports}")
	for p in ports:
	    if p.get("driver") != "veth" or p.get("ifname") != "eth0" or \
	       not p.get("netns", "").startswith(f"xnat-bench-{p.get('role')}-"):
	        bad.append(f"tester port {p}")
	c = j.get("command", "")
	if not (c.split(" ")[0].endswith("xnat") and " bench --quick --json --out " in c):
	    bad.append(f"command {c!r} is not the one typed")
	d = datetime.datetime.strptime(j["date"], "%Y-%m-%d %H:%M UTC")
	age = time.time() - d.replace(tzinfo=datetime.timezone.utc).timestamp()
	if not -120 < age < 3600:
	    bad.append(f"date {j['date']} is not this run's")
	pl, pr = j["plan"], j.get("procedure") or {}
	for k, v in (("reps", pl["reps"]), ("trial_s", pl["max_s"]), ("search_trial_s", pl["step_s"]),
	             ("search_steps", pl["search_steps"]), ("loss_max", pl["loss_max"]),
	             ("tcp_s", pl["tcp_s"]), ("newflow_flows", pl["newflow_flows"]),
	             ("search_resolution", 2.0 ** -(pl["search_steps"] - 1))):
	    if pr.get(k) != v:
	        bad.append(f"procedure.{k} is {pr.get(k)!r}, the plan's {v!r}")
	sizes = list(dict.fromkeys(p["size"] for p in pl["profiles"]))
	flows = list(dict.fromkeys(p["flows"] for p in pl["profiles"]))
	if pr.get("frame_sizes") != sizes or pr.get("flows") != flows:
	    bad.append(f"procedure sizes/flows {pr.get('frame_sizes')}/{pr.get('flows')}, plan {sizes}/{flows}")
	if not (pr.get("probe_interval_s") or 0) > 0 or pr.get("tcp_tests") != ["tcp-8-up"] or \
	   pr.get("tcp_router_gro") is not True:
	    bad.append(f"procedure TCP: {pr.get('probe_interval_s')}, {pr.get('tcp_tests')}")
	EOF
	grep -q "^tester: $(hostname), " "$OUT/res/bench.txt" &&
	grep -q '^ports: lan eth0 (veth 1.0), wan eth0 (veth 1.0)$' "$OUT/res/bench.txt" &&
	grep -q '^procedure: 1 repetition, modes interleaved; UDP: saturation trial' \
		"$OUT/res/bench.txt" ||
		{ echo "bench.txt's header lacks the tester, ports or procedure line"; return 1; }
}

# The TCP probes' percentiles: per sample over its answered probes, per
# result over every repetition's; ordered, and n counted.
t_tcp_percentiles() {
	jcheck <<-'EOF' || return 1
	def ordered(p, what):
	    if not (0 <= p["p50_ms"] <= p["p90_ms"] <= p["p99_ms"] <= p["max_ms"]):
	        bad.append(f"{what}: not p50 <= p90 <= p99 <= max: {p}")
	for s in j["tcp"]["samples"]:
	    what = f"tcp {s['mode']} {s['test']} rep {s['rep']}"
	    p = s.get("ping")
	    if not p:
	        bad.append(f"{what}: no ping percentiles")
	        continue
	    if p["n"] != s["ping_received"] or p["sent"] != s["ping_sent"]:
	        bad.append(f"{what}: ping n {p['n']}/{p['sent']}, received/sent "
	                   f"{s['ping_received']}/{s['ping_sent']}")
	    ordered(p, what)
	    if not p["p50_ms"] <= s["ping_median_ms"] <= p["p90_ms"]:
	        bad.append(f"{what}: median {s['ping_median_ms']} outside p50..p90")
	    u = s.get("udp_probe")
	    if u is None or u["n"] != s["udp_received"]:
	        bad.append(f"{what}: UDP probe {u}, received {s['udp_received']}")
	    else:
	        ordered(u, what + " udp")
	for r in j["tcp"]["results"]:
	    n = sum(s["ping_received"] for s in j["tcp"]["samples"]
	            if s["mode"] == r["mode"] and s["test"] == r["test"] and s["ok"])
	    if not r.get("ping") or r["ping"]["n"] != n:
	        bad.append(f"result {r['mode']} {r['test']}: ping {r.get('ping')}, {n} probes answered")
	    else:
	        ordered(r["ping"], f"result {r['mode']} {r['test']}")
	EOF
	grep -q '^TCP latency under load, ping round trip ms: p50/p90/p99' "$OUT/res/bench.txt" ||
		{ echo "bench.txt has no TCP latency table"; return 1; }
}

# This run compared with itself: exit 0, no warning, and each row's
# ratios the same in both copies.
t_compare_own_run() {
	local out
	out=$("$XNAT" bench compare --json "$OUT/res" "$OUT/res" 2>"$OUT/compare.err") ||
		{ echo "bench compare exited $?"; cat "$OUT/compare.err"; return 1; }
	[ -s "$OUT/compare.err" ] && { echo "warnings:"; cat "$OUT/compare.err"; return 1; }
	printf '%s' "$out" >"$OUT/compare.json"
	JSON=$OUT/compare.json jcheck <<-'EOF'
	modes = set()
	for f in j["figures"]:
	    rows = {(r["run"], r["mode"]): r for r in f["rows"]}
	    for (run, mode), r in rows.items():
	        modes.add(mode)
	        if run == 1 and rows.get((2, mode), {}).get("ratio") != r["ratio"]:
	            bad.append(f"{f['metric']} {f['profile']} {mode}: the copies' ratios differ")
	if j["warnings"] or not {"kernel-nat", "xdp-nat"} <= modes:
	    bad.append(f"warnings {j['warnings']}, modes {modes}")
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
	for t in $BENCH_TESTS; do
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
	check_one provenance t_provenance
	check_one tcp_percentiles t_tcp_percentiles
	check_one compare_own_run t_compare_own_run
	check_one outputs_written t_outputs_written
else
	for t in json_keys all_modes_ran counters_consistent \
		forwarding_modes_forward modes_verified newflow_ran tcp_ran \
		provenance tcp_percentiles compare_own_run outputs_written; do
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
