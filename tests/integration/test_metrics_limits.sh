#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `xnat metrics --listen` under abuse, in the namespace testbed (lib.sh):
# 1,100 half-sent requests from one LAN host do not keep a second LAN host
# (the scraper) from scraping, during and after; that host keeps no more
# than the per-address limit of connections, which the server closes once
# idle; the server's log is not flooded. The bind: an address is
# required (":PORT" was every address, the WAN's too), 0.0.0.0 is said to
# include the WAN, and a LAN address is not reachable from the WAN.
#
#   tests/integration/test_metrics_limits.sh [SUBSTRING...]
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp                   see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# No XDP counters in kernel mode: `xnat metrics` refuses it
# (test_metrics.sh metrics_kernel_mode).
DEFAULT_MODES="xdp offload"
PORT=9417
FLOOD=1100
# user/cmd_metrics.c: METRICS_CONN_PER_IP, METRICS_IDLE_S.
PER_IP=4
IDLE_S=5

# One scrape of http://ADDR:PORT/metrics from namespace NS: 0 when it
# answers 200 with xnat's counters, else says why.
scrape() {
	timeout 10 ip netns exec "$1" python3 -c '
import sys, urllib.request
try:
    r = urllib.request.urlopen("http://%s:%s/metrics" % (sys.argv[1], sys.argv[2]), timeout=4)
    body = r.read().decode()
except Exception as e:
    sys.exit("scrape failed: %r" % e)
if r.status != 200 or "xnat_packets_total" not in body:
    sys.exit("scrape: %d, %d bytes" % (r.status, len(body)))
' "$2" "$PORT"
}

# `xnat metrics --listen LISTEN` in the background, its log in
# TB_WORK/metrics.log; MET_PID. Returns once NS scrapes ADDR.
metrics_start() {
	local listen=$1 ns=$2 addr=$3
	timeout 120 "$XNAT" -n "$NS_RTR" metrics --listen "$listen" \
		</dev/null >"$TB_WORK/metrics.log" 2>&1 &
	MET_PID=$!
	echo "$MET_PID" >>"$TB_WORK/pids"
	for _ in $(seq 50); do
		scrape "$ns" "$addr" 2>/dev/null && return 0
		sleep 0.1
	done
	cat "$TB_WORK/metrics.log"
	fail "xnat metrics --listen $listen does not answer $addr from $ns"
}

# The flood, from the LAN host: FLOOD connections, each sending a request
# line and one header but never the blank line that ends them. Prints
# "open N" (connections the server has not closed, 1 s after the last
# was made) once all are made, waits for TB_WORK/scraped, then prints
# "later N" (the same, IDLE_S + 10 s after), and closes them.
flood() {
	# shellcheck disable=SC2016 # the script's own arguments
	bg_ns 90 "$NS_LAN" python3 -c '
import os, resource, socket, sys, time
addr, n, flag, idle = (sys.argv[1], int(sys.argv[2])), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))
socks, refused = [], 0
for i in range(n):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(addr)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: r\r\n")
        socks.append(s)
    except OSError:
        refused += 1
        s.close()
def still_open():
    k = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(4096):
                k += 1  # an answer: the request was never complete
        except BlockingIOError:
            k += 1
        except OSError:
            pass
    return k
made = time.time()
time.sleep(1)
print("made %d refused %d" % (len(socks), refused))
print("open %d" % still_open(), flush=True)
end = time.time() + 60
while not os.path.exists(flag) and time.time() < end:
    time.sleep(0.1)
time.sleep(max(0, made + idle + 10 - time.time()))
print("later %d" % still_open(), flush=True)
' "$RTR_LAN4" "$PORT" "$FLOOD" "$TB_WORK/scraped" "$IDLE_S"
	FLOOD_PID=$BG_PID
	FLOOD_LOG=$TB_WORK/bg.$TB_BG_N.log
}

# The issue's flood: the scraper on another LAN host is served during it
# and after, the flooding host holds at most PER_IP connections and those
# go once idle, the server lives and says little.
test_metrics_flood() {
	local i open later lines
	testbed_add_lan_host
	metrics_start "$RTR_LAN4:$PORT" "$NS_LAN2" "$RTR_LAN4"
	flood
	wait_log "$FLOOD_LOG" '^open ' 60 || fail "the flood did not start"
	cat "$FLOOD_LOG"
	for i in 1 2 3 4 5; do
		scrape "$NS_LAN2" "$RTR_LAN4" || fail "scrape $i during the flood failed"
	done
	touch "$TB_WORK/scraped"
	bg_wait "$FLOOD_PID" || fail "the flood did not finish: $(cat "$FLOOD_LOG")"
	cat "$FLOOD_LOG"
	open=$(sed -n 's/^open //p' "$FLOOD_LOG")
	later=$(sed -n 's/^later //p' "$FLOOD_LOG")
	[ "${open:-x}" -le $PER_IP ] ||
		fail "the flooding host holds $open connections, more than $PER_IP"
	[ "${later:-x}" -eq 0 ] ||
		fail "$later unfinished requests still open $((IDLE_S + 10)) s on"
	scrape "$NS_LAN2" "$RTR_LAN4" || fail "scrape after the flood failed"
	scrape "$NS_LAN" "$RTR_LAN4" || fail "the flooding host itself cannot scrape after"
	kill -0 "$MET_PID" 2>/dev/null || fail "xnat metrics died"
	lines=$(wc -l <"$TB_WORK/metrics.log")
	echo "xnat metrics wrote $lines lines:"
	head -20 "$TB_WORK/metrics.log"
	[ "$lines" -le 8 ] || fail "$lines lines in the server's log for one flood"
	kill -TERM "$MET_PID"
	wait "$MET_PID" || fail "xnat metrics did not exit 0 on SIGTERM"
}

# Where it listens: an address is required; 0.0.0.0 is served with a
# warning that it includes the WAN (where the WAN host does reach it);
# a LAN address is not reachable at the WAN's.
TEST_MODES[metrics_bind]=xdp
test_metrics_bind() {
	local out rc
	out=$(timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" metrics --listen ":$PORT" 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 1 ] || fail "--listen :$PORT: exit $rc, expected 1"
	grep -q "give the address to serve on" <<<"$out" || fail "no word on the address"

	metrics_start "0.0.0.0:$PORT" "$NS_LAN" "$RTR_LAN4"
	grep -q "every address, the WAN's too" "$TB_WORK/metrics.log" ||
		fail "no warning that 0.0.0.0 includes the WAN"
	scrape "$NS_WAN" "$RTR_WAN4" || fail "0.0.0.0 is not served on the WAN address"
	kill -TERM "$MET_PID"
	wait "$MET_PID"

	metrics_start "$RTR_LAN4:$PORT" "$NS_LAN" "$RTR_LAN4"
	grep -q "WAN" "$TB_WORK/metrics.log" && fail "a warning for a LAN address"
	scrape "$NS_WAN" "$RTR_WAN4" 2>/dev/null && fail "the LAN address is served on the WAN's"
	kill -TERM "$MET_PID"
	wait "$MET_PID" || fail "xnat metrics did not exit 0 on SIGTERM"
}

run_tests "$@"
