#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The NAT event log of `xnat run`: a JSON line when a mapping is created
# (inside endpoint, external address and port, the destination) and when
# it expires, and the count of events lost, closing the log. Short
# timeouts so that the mappings expire within the test. Harness: lib.sh.
#
#   tests/integration/test_natlog.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

TEST_MODES[natlog_created_expired]="xdp"
TEST_MODES[natlog_lost_counted]="xdp"

# `xnat run -c CFG` in the background for at most SECS, its event log in
# LOG (stderr in LOG.err), up once it says so; its PID in RUN_PID.
natlog_run() { xnat_run_start "$1" "$2" "$3" "$3.err"; }

natlog_q() {
	python3 -c '
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
C = [l for l in L if l["event"] == "mapping_created"]
X = [l for l in L if l["event"] == "mapping_expired"]
END = [l for l in L if l["event"] == "log_closed"]
r = eval(sys.argv[2])
print(r)
assert r is True, sys.argv[2]
' "$@"
}

test_natlog_created_expired() {
	local cfg=$TB_WORK/run.ini log=$TB_WORK/run.log pid
	check xnat down
	sed -e 's/^udp *=.*/udp = 2/' -e 's/^icmp *=.*/icmp = 2/' "$TB_CONFIG" >"$cfg"
	natlog_run 60 "$cfg" "$log"
	pid=$RUN_PID
	echo_server "$NS_WAN" udp 5001 || fail "no server"
	check udp_ask "$NS_LAN" "UDP:$WAN_HOST4:5001,sourceport=40001" hello
	check on_lan ping -c 1 -W 2 "$WAN_HOST4"
	# Flows idle 2 s, then their mappings 2 s more.
	for _ in $(seq 150); do
		[ "$(grep -c mapping_expired "$log")" -ge 2 ] && break
		sleep 0.1
	done
	kill -TERM "$pid"
	wait "$pid" || fail "xnat run exited $?: $(cat "$log.err")"
	cat "$log"
	natlog_q "$log" "len(C) == 2 and len(X) == 2" || fail "two created, two expired"
	natlog_q "$log" "[(c['proto'], c['inside'], c['external'], c['remote']) for c in C if c['proto'] == 'udp'] == [('udp', '$LAN_HOST4:40001', '$RTR_WAN4:40001', '$WAN_HOST4:5001')]" ||
		fail "the udp mapping's record"
	natlog_q "$log" "[c['inside'].startswith('$LAN_HOST4:') and c['external'].startswith('$RTR_WAN4:') and c['remote'] == '$WAN_HOST4:0' for c in C if c['proto'] == 'icmp'] == [True]" ||
		fail "the icmp mapping's record"
	natlog_q "$log" "sorted((x['proto'], x['inside'], x['external']) for x in X) == sorted((c['proto'], c['inside'], c['external']) for c in C)" ||
		fail "expired records do not match the created ones"
	natlog_q "$log" "all(c['time'] < x['time'] for c in C for x in X if x['inside'] == c['inside']) and all(l['time'].endswith('Z') for l in C + X)" ||
		fail "times"
	natlog_q "$log" "len(END) == 1 and END[0]['lost'] == 0" || fail "log_closed with the lost count"
}

# The ring holds about 6,500 events (256 KiB of 40-byte records): with
# the reader stopped, 8,000 new mappings overflow it. What did not fit
# must be counted, reported while running (events_lost) and at the end
# (log_closed), and add up with what was written to every mapping made.
test_natlog_lost_counted() {
	local cfg=$TB_WORK/run.ini log=$TB_WORK/run.log pid runner n=8000
	check xnat down
	cp "$TB_CONFIG" "$cfg"
	natlog_run 120 "$cfg" "$log"
	pid=$RUN_PID
	runner=$(pgrep -P "$pid" -x xnat) || fail "no xnat run under $pid"
	kill -STOP "$runner"
	# One datagram from each of N source ports: N mappings, each
	# created on the slow path while nobody reads the ring.
	on_lan timeout 60 python3 -c '
import socket, sys
dst, n = sys.argv[1], int(sys.argv[2])
for port in range(30000, 30000 + n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("", port))
    s.sendto(b"x", (dst, 5001))
    s.close()
' "$WAN_HOST4" "$n" || { kill -CONT "$runner"; fail "sending"; }
	sleep 0.5
	kill -CONT "$runner"
	for _ in $(seq 50); do
		grep -q '"events_lost"' "$log" && break
		sleep 0.1
	done
	kill -TERM "$pid"
	wait "$pid" || fail "xnat run exited $?: $(cat "$log.err")"
	grep -v mapping_created "$log"
	natlog_q "$log" "len(C) > 0 and END[0]['lost'] > 0" || fail "the ring did not overflow"
	natlog_q "$log" "[l['lost'] for l in L if l['event'] == 'events_lost'][-1] == END[0]['lost']" ||
		fail "events_lost while running"
	natlog_q "$log" "len([c for c in C if c['proto'] == 'udp' and 30000 <= int(c['inside'].split(':')[1]) < 30000 + $n]) + END[0]['lost'] == $n" ||
		fail "written plus lost is not every mapping made"
}

run_tests "$@"
