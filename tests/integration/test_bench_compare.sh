#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `xnat bench compare DIR...` over three small bench.json fixtures
# (tests/integration/bench_compare/): xnat's kernel-nat and xdp-nat on one
# tester (veth), a hardware router measured in tester mode on another
# (ixgbe, another kernel, a 2 s trial, no 10,000-flow profile), and a run
# written before bench.json had "tester" and "procedure". Checked: every
# ratio against one worked out here from the fixtures themselves, --base,
# a missing profile shown as missing (text and JSON), the procedure
# differences warned about on stderr and in the JSON and none for two
# equal runs, the provenance in the text, and the exit codes (0; 1 for a
# usage error, a file that is not a bench run, bad JSON with file:line;
# 2 for a file that cannot be read). Needs no testbed and no root.
#
# Output: "#N name:OK|FAIL" lines and "N passed, N failed, N skipped".
#   tests/integration/test_bench_compare.sh [--list FILTER]   V=1: details
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

FIXTURES=$XNAT_ROOT/tests/integration/bench_compare
TESTS="ratios base_option missing_profile procedure_warned same_runs_quiet
	before_provenance text_provenance exit_codes"

if [ "${1:-}" = --list ]; then
	for t in $TESTS; do
		case $t in *"${2:-}"*) echo "$t" ;; esac
	done
	exit 0
fi

N=0 PASS=0 FAILED=0 SKIPPED=0
W=$(mktemp -d /tmp/xnat-test-compare.XXXXXX) || exit 1
trap 'rm -rf -- "$W"' EXIT
# Runs as bench leaves them: a directory with its bench.json.
for r in xnat-modes external before-provenance; do
	mkdir -p "$W/$r"
	cp "$FIXTURES/$r.json" "$W/$r/bench.json"
done
A=$W/xnat-modes B=$W/external OLD=$W/before-provenance

# xnat bench compare ARGS...: its exit status in RC, stdout in OUT, stderr
# in ERR.
compare() {
	echo "+ xnat bench compare $*"
	OUT=$(timeout "$T_CMD" "$XNAT" bench compare "$@" 2>"$W/stderr")
	RC=$?
	ERR=$(cat "$W/stderr")
	[ -n "$ERR" ] && printf '%s\n' "$ERR" | sed 's/^/  ! /'
	return 0
}

# Python over the JSON in OUT, with the fixtures loaded: the script on
# stdin appends what is wrong to BAD; the check fails if it is not empty.
# row(fig, run, mode) is a figure's row; fixture(name) a fixture document.
jcheck() {
	printf '%s' "$OUT" >"$W/out.json"
	{
		cat <<-'EOF'
		import json, sys
		j = json.load(open(sys.argv[1]))
		fx = sys.argv[2]
		bad = []
		def fixture(name):
		    return json.load(open(f"{fx}/{name}.json"))
		def row(fig, run, mode):
		    for r in fig["rows"]:
		        if r["run"] == run and r["mode"] == mode:
		            return r
		    return None
		def figure(metric, profile):
		    for f in j["figures"]:
		        if f["metric"] == metric and f["profile"] == profile:
		            return f
		    bad.append(f"no figure {metric} {profile}")
		    return {"rows": []}
		EOF
		cat
		printf '%s\n' 'for b in bad[:20]: print(b)' 'sys.exit(1 if bad else 0)'
	} >"$W/check.py"
	python3 "$W/check.py" "$W/out.json" "$FIXTURES"
}

check_one() {
	local name=$1 log rc
	N=$((N + 1))
	log=$("t_$name" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		PASS=$((PASS + 1))
		echo "#$N $name:OK"
		[ "$V" = 1 ] && printf '%s\n' "$log" | sed 's/^/    /'
	else
		FAILED=$((FAILED + 1))
		echo "#$N $name:FAIL"
		printf '%s\n' "$log" | sed 's/^/    /'
	fi
}

# ---- the checks ---------------------------------------------------------------

# Every ratio is the row's median over the base row's (1:kernel-nat, the
# first run's first mode), on the same metric and profile, as the
# fixtures give them.
t_ratios() {
	compare --json "$A" "$B"
	[ "$RC" = 0 ] || { echo "exit $RC"; return 1; }
	jcheck <<-'EOF'
	docs = {1: fixture("xnat-modes"), 2: fixture("external")}
	def med(run, section, mode, profile, key):
	    d = docs[run]
	    rs = d["results"] if section == "udp" else d["tcp"]["results"]
	    for r in rs:
	        if r["mode"] == mode and r.get("profile", r.get("test")) == profile:
	            v = r[key]
	            return v["median"] if "median" in v else v["p50_ms"]
	    return None
	if j["base"] != {"run": 1, "mode": "kernel-nat"}:
	    bad.append(f"base {j['base']}")
	cases = [("udp_max_pps", "udp", "max_pps"), ("udp_noloss_pps", "udp", "noloss_pps"),
	         ("tcp_mbps", "tcp", "mbps"), ("tcp_ping_p50_ms", "tcp", "ping")]
	n = 0
	for metric, section, key in cases:
	    for prof in ("64B/1/up", "64B/10k/up") if section == "udp" else ("tcp-8-up",):
	        base = med(1, section, "kernel-nat", prof, key)
	        for run, mode in ((1, "kernel-nat"), (1, "xdp-nat"), (2, "openwrt")):
	            v = med(run, section, mode, prof, key)
	            r = row(figure(metric, prof), run, mode)
	            if v is None:
	                continue
	            n += 1
	            if r is None or r["value"] is None:
	                bad.append(f"{metric} {prof} {run}:{mode}: no value")
	            elif abs(r["value"]["median"] - v) > 1e-9 * v:
	                bad.append(f"{metric} {prof} {run}:{mode}: {r['value']['median']} != {v}")
	            elif r["ratio"] is None or abs(r["ratio"] - v / base) > 1e-5 * v / base:  # six significant digits in JSON
	                bad.append(f"{metric} {prof} {run}:{mode}: ratio {r['ratio']} != {v / base}")
	if n != 16:
	    bad.append(f"{n} figures checked, expected 16")
	# One by hand: the router's 1.2 Mpps over kernel-nat's 0.8.
	r = row(figure("udp_max_pps", "64B/1/up"), 2, "openwrt")
	if not (r and abs(r["ratio"] - 1.5) < 1e-5):
	    bad.append(f"openwrt 64B/1/up ratio {r and r['ratio']}, expected 1.5")
	EOF
}

# --base RUN:MODE, RUN by number or by directory: every ratio is then to
# that row, which is 1 against itself.
t_base_option() {
	local spec
	for spec in "2:openwrt" "$B:openwrt"; do
		compare --json --base "$spec" "$A" "$B"
		[ "$RC" = 0 ] || { echo "exit $RC"; return 1; }
		jcheck <<-'EOF' || return 1
		if j["base"] != {"run": 2, "mode": "openwrt"}:
		    bad.append(f"base {j['base']}")
		f = figure("udp_max_pps", "64B/1/up")
		want = {(1, "kernel-nat"): 800000 / 1200000, (1, "xdp-nat"): 3200000 / 1200000,
		        (2, "openwrt"): 1.0}
		for (run, mode), x in want.items():
		    r = row(f, run, mode)
		    if not (r and r["ratio"] is not None and abs(r["ratio"] - x) < 1e-5 * x):
		        bad.append(f"{run}:{mode} ratio {r and r['ratio']}, expected {x}")
		# The base has no 10k profile: no ratio there, values still shown.
		for r in figure("udp_max_pps", "64B/10k/up")["rows"]:
		    if r["ratio"] is not None:
		        bad.append(f"10k {r['run']}:{r['mode']}: a ratio to a missing base")
		EOF
	done
}

# The router was not measured at 10,000 flows: its row says "missing"
# there, in the text and in the JSON (no value, no ratio).
t_missing_profile() {
	compare --json "$A" "$B"
	jcheck <<-'EOF' || return 1
	for metric in ("udp_max_pps", "udp_noloss_pps"):
	    r = row(figure(metric, "64B/10k/up"), 2, "openwrt")
	    if not r:
	        bad.append(f"{metric}: no row for 2:openwrt on 64B/10k/up")
	    elif not (r["missing"] is True and r["value"] is None and r["ratio"] is None):
	        bad.append(f"{metric}: 2:openwrt on 64B/10k/up is {r}")
	    r = row(figure(metric, "64B/1/up"), 2, "openwrt")
	    if not r or r["missing"] is not False:
	        bad.append(f"{metric}: 2:openwrt on 64B/1/up should not be missing")
	EOF
	compare "$A" "$B"
	[ "$RC" = 0 ] || { echo "exit $RC"; return 1; }
	# The 10k block of the saturation table: its openwrt line.
	awk '/^UDP forwarded at saturation/ { t = 1 } /^$/ { t = 0 }
	     t && /^64B\/10k\/up/ { p = 1 } t && /^64B\/1\/up/ { p = 0 }
	     t && p && / 2:openwrt / { print }' <<<"$OUT" | grep -q 'missing' ||
		{ echo "the text does not show 2:openwrt's 64B/10k/up as missing"; return 1; }
}

# The runs' trial lengths, tester kernels, CPUs and port drivers differ:
# each is warned about on stderr (also with --json) and in the JSON; the
# fields both agree on (loss criterion, search, TCP 10 and 10.0 s) are
# not, nor what was measured (frame sizes, flows).
t_procedure_warned() {
	local f
	compare --json "$A" "$B"
	[ "$RC" = 0 ] || { echo "exit $RC"; return 1; }
	for f in procedure.trial_s tester.kernel tester.cpu_model tester.ports; do
		grep -q "warning: the runs differ in $f:" <<<"$ERR" ||
			{ echo "no warning about $f on stderr"; return 1; }
	done
	jcheck <<-'EOF'
	w = {x["field"]: {v["run"]: v["value"] for v in x["values"]} for x in j["warnings"]}
	if w.get("procedure.trial_s") != {1: "1", 2: "2"}:
	    bad.append(f"procedure.trial_s: {w.get('procedure.trial_s')}")
	if "ixgbe" not in w.get("tester.ports", {}).get(2, ""):
	    bad.append(f"tester.ports: {w.get('tester.ports')}")
	for f in ("procedure.loss_max", "procedure.tcp_s", "procedure.search_steps",
	          "procedure.frame_sizes", "procedure.flows", "procedure.reps"):
	    if f in w:
	        bad.append(f"warned about {f}, on which the runs agree or which is not how")
	EOF
}

# A run compared with itself: no warning anywhere, every ratio of the
# second copy is its first copy's over the base.
t_same_runs_quiet() {
	compare --json "$A" "$A"
	[ "$RC" = 0 ] || { echo "exit $RC"; return 1; }
	[ -z "$ERR" ] || { echo "stderr: $ERR"; return 1; }
	jcheck <<-'EOF'
	if j["warnings"]:
	    bad.append(f"warnings: {j['warnings']}")
	for f in j["figures"]:
	    for r in f["rows"]:
	        twin = row(f, 3 - r["run"], r["mode"])
	        if not twin or twin["value"] != r["value"]:
	            bad.append(f"{f['metric']} {f['profile']}: the copies differ")
	EOF
}

# A run from before "tester" and "procedure": read through its plan and
# top level, its new-flow figure in the table, and a warning for what it
# did differently (one repetition, 3 search steps).
t_before_provenance() {
	compare --json "$A" "$OLD"
	[ "$RC" = 0 ] || { echo "exit $RC"; return 1; }
	jcheck <<-'EOF'
	run = j["runs"][1]
	if run["tester"].get("kernel") != "6.18.44" or run["tester"].get("cpus") != 2:
	    bad.append(f"tester of the old run: {run['tester']}")
	if run["procedure"].get("trial_s") != 1 or run["procedure"].get("reps") != 1:
	    bad.append(f"procedure of the old run: {run['procedure']}")
	fields = [w["field"] for w in j["warnings"]]
	for f in ("procedure.reps", "procedure.search_steps"):
	    if f not in fields:
	        bad.append(f"no warning about {f}: {fields}")
	if "procedure.trial_s" in fields:
	    bad.append("warned about trial_s, 1 s in both")
	r = row(figure("newflow_flows_per_s", "100000 flows"), 2, "kernel-nat")
	if not (r and r["value"]["median"] == 224000):
	    bad.append(f"new flows of the old run: {r}")
	EOF
}

# The text names each run's file, date, version, command, tester, ports
# and procedure before the tables.
t_text_provenance() {
	compare "$A" "$B"
	[ "$RC" = 0 ] || { echo "exit $RC"; return 1; }
	local want
	for want in "run 1: $A/bench.json" "run 2: $B/bench.json" \
		"2026-11-27 09:30 UTC, xnat 0.1-g0000002, xnat -n tester bench" \
		"tester: lab-b, Intel(R) Core(TM) i5-8500T x 6, 15.6 GiB, Linux 6.1.0-28-amd64" \
		"ports: lan enp1s0f0 (ixgbe 6.1.0-28-amd64), wan enp1s0f1" \
		"procedure: reps 3, trial_s 2" "ratios are of medians, to 1:kernel-nat"; do
		grep -qF -- "$want" <<<"$OUT" || { echo "the text lacks: $want"; return 1; }
	done
	grep -q 'warning: the runs differ in procedure.trial_s' <<<"$OUT" ||
		{ echo "the text lacks the warning"; return 1; }
}

# 0 for a comparison; 1 for what the user got wrong, with one line saying
# what (JSON with --json); 2 for a file that cannot be read.
t_exit_codes() {
	local c
	printf '{"tool": "xnat bench", "format": 1,\n  "results": [1, }\n' >"$W/bad.json"
	printf '{"start": {}, "end": {}}\n' >"$W/iperf.json"
	compare "$A"
	[ "$RC" = 0 ] || { echo "one run: exit $RC"; return 1; }
	for c in "" "--base 3:kernel-nat $A" "--base 1:nomode $A" "--base nocolon $A" \
		"--quick $A" "--reps 2 $A" "$W/iperf.json" "$W/bad.json"; do
		# shellcheck disable=SC2086 # word splitting is the point
		compare $c
		[ "$RC" = 1 ] || { echo "compare $c: exit $RC, expected 1"; return 1; }
		[ "$(wc -l <<<"$ERR")" = 1 ] && [ -n "$ERR" ] ||
			{ echo "compare $c: not one line of error"; return 1; }
	done
	compare "$W/bad.json"
	grep -q "$W/bad.json:2:" <<<"$ERR" || { echo "bad JSON without file:line"; return 1; }
	compare "$A" "$W/nonexistent"
	[ "$RC" = 2 ] || { echo "a missing run: exit $RC, expected 2"; return 1; }
	grep -q 'No such file' <<<"$ERR" || { echo "no errno text"; return 1; }
	OUT=$("$XNAT" bench --json compare "$W/iperf.json" 2>/dev/null)
	json_q "j['error']" <<<"$OUT" | grep -q 'not a bench.json' ||
		{ echo "--json error is not {\"error\": ...}: $OUT"; return 1; }
	"$XNAT" bench nonsense >/dev/null 2>&1
	[ $? = 1 ] || { echo "bench nonsense: not exit 1"; return 1; }
	"$XNAT" bench --base 1:kernel-nat >/dev/null 2>&1
	[ $? = 1 ] || { echo "--base without compare: not exit 1"; return 1; }
}

# ---- main ----------------------------------------------------------------------

if ! [ -x "$XNAT" ]; then
	for t in $TESTS; do
		N=$((N + 1)) SKIPPED=$((SKIPPED + 1))
		echo "#$N $t:SKIP"
	done
	echo "    skip: $XNAT not built (run make)"
else
	for t in $TESTS; do
		check_one "$t"
	done
fi
echo "$PASS passed, $FAILED failed, $SKIPPED skipped"
[ $FAILED -eq 0 ]
