#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Prometheus metrics: `xnat stats --format prometheus` and `xnat metrics
# --listen` parsed by a real parser (python3-prometheus-client's
# text_string_to_metric_families) and Prometheus's own linter (promtool
# check metrics), every family with HELP and TYPE, values
# that agree with `xnat stats --json` and the traffic sent; the server
# tested over loopback inside the router's namespace. Harness: lib.sh.
#
#   tests/integration/test_metrics.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

TEST_MODES[metrics_textfile]="xdp"
TEST_MODES[metrics_http]="xdp"
TEST_MODES[metrics_kernel_mode]="kernel"
METRICS_PORT=9417
# Debian's python3-prometheus-client is installed for the system's python,
# which another python3 first in PATH (a virtualenv, pyenv) would not see.
PROM_PY=${PROM_PY:-/usr/bin/python3}

# Parse the exposition on stdin; check every family has HELP and TYPE, the
# ones xnat promises are there, and evaluate EXPR with V(name, **labels)
# giving a sample's value.
prom_check() {
	"$PROM_PY" -c '
import re, sys
from prometheus_client.parser import text_string_to_metric_families
text = sys.stdin.read()
fams = {f.name: f for f in text_string_to_metric_families(text)}
helps = set(re.findall(r"^# HELP (\S+) \S", text, re.M))
types = dict(re.findall(r"^# TYPE (\S+) (\S+)", text, re.M))
for line in text.splitlines():
    if line and not line.startswith("#"):
        name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
        fam = name if name in types else re.sub(r"_total$", "", name) + "_total"
        assert fam in helps and fam in types, "no HELP/TYPE for " + line
for need, kind in [("xnat_packets", "counter"), ("xnat_bytes", "counter"),
                   ("xnat_port_rx_packets", "counter"),
                   ("xnat_flow_entries", "gauge"), ("xnat_flow_entries_max", "gauge"),
                   ("xnat_nat_mappings", "gauge"), ("xnat_nat_ports_in_use", "gauge"),
                   ("xnat_nat_ports", "gauge"), ("xnat_info", "gauge")]:
    assert need in fams, "missing family " + need
    assert fams[need].type == kind, need + " is " + fams[need].type
    assert fams[need].documentation, need + " has no HELP"
def V(name, **labels):
    for f in fams.values():
        for s in f.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise KeyError(name + str(labels))
r = eval(sys.argv[1])
print(r)
assert r is True, sys.argv[1]
' "$1"
}

# Prometheus's own checker: parses the exposition and lints it (names,
# units, counters ending in _total, HELP and TYPE). Silent when clean.
# scripts/deps.sh extracts it to .output/tools (see there why it does
# not install Debian's prometheus package).
PROMTOOL=${PROMTOOL:-$XNAT_ROOT/.output/tools/promtool}
promtool_check() {
	local out
	[ -x "$PROMTOOL" ] || { echo "no promtool at $PROMTOOL: run make deps"; return 1; }
	out=$("$PROMTOOL" check metrics <"$1" 2>&1) || { echo "$out"; return 1; }
	[ -z "$out" ] || { echo "$out"; return 1; }
}

# After pings: the counters agree with stats --json, the tables with the
# traffic (one ICMP mapping, its port in use, two flow entries).
test_metrics_textfile() {
	local fast slow
	check on_lan ping -c 4 -i 0.1 -W 2 "$WAN_HOST4"
	check xnat stats --format prometheus
	printf '%s\n' "$CHECK_OUT" >"$TB_WORK/m.prom"
	fast=$(xnat stats --json | json_q "j['counters']['fwd_fast']['packets']")
	slow=$(xnat stats --json | json_q "j['counters']['fwd_slow']['packets']")
	promtool_check "$TB_WORK/m.prom" || fail "promtool check metrics"
	prom_check "V('xnat_packets_total', reason='fwd_fast', path='fast') == $fast and V('xnat_packets_total', reason='fwd_slow', path='slow') == $slow and $slow >= 1 and $fast >= 7" <"$TB_WORK/m.prom" ||
		fail "counters"
	prom_check "V('xnat_nat_ports_in_use', address='$RTR_WAN4', proto='icmp') == 1 and V('xnat_nat_mappings', address='$RTR_WAN4') == 1" <"$TB_WORK/m.prom" ||
		fail "mappings and ports"
	prom_check "V('xnat_flow_entries') == 2 and V('xnat_flow_entries_max') == 131072 and V('xnat_nat_ports', address='$RTR_WAN4') == $((NAT_PORT_MAX - NAT_PORT_MIN + 1))" <"$TB_WORK/m.prom" ||
		fail "table fill"
	prom_check "V('xnat_port_rx_packets_total', port='$RTR_LAN_IF') >= 4 and V('xnat_port_rx_packets_total', port='$RTR_WAN_IF') >= 4" <"$TB_WORK/m.prom" ||
		fail "port counters"
	out=$(xnat stats --format prometheus -w 1 2>&1) && fail "-w with prometheus accepted"
	echo "$out"
	out=$(xnat stats --format yaml 2>&1) && fail "--format yaml accepted"
	echo "$out"
}

fetch() {
	ip netns exec "$NS_RTR" timeout 5 python3 -c '
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=3)
    print(r.status, r.headers["Content-Type"], file=sys.stderr)
    sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, file=sys.stderr); sys.exit(3)
' "$1"
}

# The same over HTTP, on loopback inside the router's namespace; another
# path is 404; SIGTERM ends the server cleanly.
test_metrics_http() {
	local pid rc
	ip -n "$NS_RTR" link set lo up
	timeout 30 "$XNAT" -n "$NS_RTR" metrics --listen "127.0.0.1:$METRICS_PORT" \
		>"$TB_WORK/srv.log" 2>&1 &
	pid=$!
	echo "$pid" >>"$TB_WORK/pids"
	for _ in $(seq 50); do
		fetch "http://127.0.0.1:$METRICS_PORT/metrics" >/dev/null 2>&1 && break
		sleep 0.1
	done
	check on_lan ping -c 3 -i 0.1 -W 2 "$WAN_HOST4"
	fetch "http://127.0.0.1:$METRICS_PORT/metrics" >"$TB_WORK/h.prom" 2>"$TB_WORK/h.err" ||
		fail "GET /metrics failed: $(cat "$TB_WORK/h.err" "$TB_WORK/srv.log")"
	cat "$TB_WORK/h.err"
	grep -q '^200 text/plain; version=0.0.4' "$TB_WORK/h.err" || fail "status or content type"
	promtool_check "$TB_WORK/h.prom" || fail "promtool check metrics over HTTP"
	prom_check "V('xnat_packets_total', reason='fwd_slow', path='slow') >= 1 and V('xnat_packets_total', reason='fwd_fast', path='fast') >= 5 and V('xnat_flow_entries') == 2" <"$TB_WORK/h.prom" ||
		fail "metrics over HTTP"
	fetch "http://127.0.0.1:$METRICS_PORT/other" >/dev/null 2>"$TB_WORK/404.err"
	rc=$?
	[ $rc -eq 3 ] && grep -q '^404' "$TB_WORK/404.err" || fail "GET /other: $(cat "$TB_WORK/404.err")"
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	[ $rc -eq 0 ] || fail "xnat metrics exited $rc after SIGTERM"
}

# Kernel mode has no XDP counters: both say so and exit 2.
test_metrics_kernel_mode() {
	local out rc
	out=$(xnat stats --format prometheus 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 2 ] && grep -q 'kernel mode' <<<"$out" || fail "stats --format prometheus: $rc"
	out=$(xnat metrics --listen "127.0.0.1:$METRICS_PORT" 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 2 ] && grep -q 'kernel mode' <<<"$out" || fail "metrics: $rc"
}

run_tests "$@"
