#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xnat as a service, in the namespace testbed (lib.sh): `xnat run` tells
# systemd READY=1, RELOADING=1 ... READY=1 around a SIGHUP reload and
# STOPPING=1 (read from a NOTIFY_SOCKET the test listens on), a reload with
# a broken config keeps the running one and says so; `make install` and
# `make uninstall` into a DESTDIR (never overwriting a config); the unit
# passes `systemd-analyze verify`; the example config passes `xnat check`
# and every key in it is in the man page; bash completion completes
# commands, a command's own options and values.
#
#   tests/integration/test_packaging.sh [SUBSTRING...]
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp                   see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# Wait until the notify log has N lines matching REGEX (10 s).
wait_notify() {
	local n=$1 re=$2 got
	for _ in $(seq 100); do
		got=$(grep -cE "$re" "$TB_WORK/notify.log" 2>/dev/null)
		[ "${got:-0}" -ge "$n" ] && return 0
		sleep 0.1
	done
	echo "notify messages so far:"
	sed 's/^/  | /' "$TB_WORK/notify.log" 2>/dev/null
	echo "  log of xnat run:"
	sed 's/^/  | /' "$TB_WORK/run.log"
	fail "no $n x '$re' from xnat run"
}

# `xnat run` under a stand-in for systemd's notify socket: its messages,
# a good and a bad SIGHUP reload, SIGTERM.
test_run_notify() {
	local sock=$TB_WORK/notify.sock cfg=$TB_WORK/run.ini lpid tpid pid rc

	# The listener: one datagram a line, newlines as '|'.
	timeout 120 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", "|") + "\n")
' "$sock" "$TB_WORK/notify.log" &
	lpid=$!
	echo "$lpid" >>"$TB_WORK/pids"
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	[ -S "$sock" ] || fail "notify listener did not start"

	cp "$TB_CONFIG" "$cfg"
	NOTIFY_SOCKET=$sock timeout 120 "$XNAT" -n "$NS_RTR" run -c "$cfg" \
		</dev/null >"$TB_WORK/run.log" 2>&1 &
	tpid=$!
	echo "$tpid" >>"$TB_WORK/pids"
	wait_notify 1 '^READY=1'
	pid=$(pgrep -P "$tpid" -x xnat) || fail "no xnat under timeout $tpid"
	echo "xnat run is pid $pid"

	# A good reload: the new forward is in the kernel's table.
	echo "tcp/8081 = $LAN_HOST4:81" >>"$cfg"
	kill -HUP "$pid"
	wait_notify 1 '^RELOADING=1\|MONOTONIC_USEC=[0-9]+'
	wait_notify 2 '^READY=1'
	check on_rtr nft list table inet xnat
	grep -q 'dport 8081' <<<"$CHECK_OUT" || fail "reload did not apply the new forward"

	# A bad one: said in the log and to systemd, the old config stays.
	echo "[bogus]" >>"$cfg"
	kill -HUP "$pid"
	wait_notify 2 '^RELOADING=1'
	wait_notify 3 '^READY=1'
	grep -q "reload of $cfg failed; the config loaded before is still running" \
		"$TB_WORK/run.log" || fail "no 'old config still running' in the log"
	grep -q "$cfg:[0-9]*: unknown section \[bogus\]" "$TB_WORK/run.log" ||
		fail "the log does not say what is wrong"
	grep -qE '^READY=1\|STATUS=reload of .* failed' "$TB_WORK/notify.log" ||
		fail "systemd's STATUS does not say the reload failed"
	check xnat status --json
	[ "$(json_q "j['up']" <<<"$CHECK_OUT")" = true ] || fail "not up after a failed reload"
	check on_rtr nft list table inet xnat
	grep -q 'dport 8081' <<<"$CHECK_OUT" || fail "the running config was lost"

	kill -TERM "$pid"
	wait "$tpid"
	rc=$?
	cat "$TB_WORK/run.log"
	[ $rc -eq 0 ] || fail "xnat run exited $rc on SIGTERM"
	grep -qx 'STOPPING=1' "$TB_WORK/notify.log" || fail "no STOPPING=1"
	timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" status >/dev/null
	rc=$?
	[ $rc -eq 3 ] || fail "status exit $rc after xnat run stopped, expected 3"
	kill "$lpid" 2>/dev/null
	return 0
}

# make install / uninstall into a DESTDIR, with PREFIX=/usr.
TEST_MODES[install]=kernel
test_install() {
	local d=$TB_WORK/root f
	local files="usr/sbin/xnat usr/share/man/man8/xnat.8
		     usr/lib/systemd/system/xnat.service
		     usr/share/bash-completion/completions/xnat etc/xnat/xnat.ini"

	check make -C "$XNAT_ROOT" --no-print-directory install DESTDIR="$d" PREFIX=/usr
	for f in $files; do
		[ -f "$d/$f" ] || fail "make install did not install /$f"
	done
	grep -qx 'ExecStart=/usr/sbin/xnat run' "$d/usr/lib/systemd/system/xnat.service" ||
		fail "the unit does not start /usr/sbin/xnat run"
	cmp "$XNAT_ROOT/configs/xnat.ini" "$d/etc/xnat/xnat.ini" ||
		fail "the example config is not configs/xnat.ini"

	# An operator's config survives install and uninstall.
	echo "; edited" >>"$d/etc/xnat/xnat.ini"
	check make -C "$XNAT_ROOT" --no-print-directory install DESTDIR="$d" PREFIX=/usr
	tail -1 "$d/etc/xnat/xnat.ini" | grep -qx '; edited' ||
		fail "make install overwrote the config"
	check make -C "$XNAT_ROOT" --no-print-directory uninstall DESTDIR="$d" PREFIX=/usr
	for f in $files; do
		[ "$f" = etc/xnat/xnat.ini ] && continue
		[ -e "$d/$f" ] && fail "make uninstall left /$f"
	done
	[ -f "$d/etc/xnat/xnat.ini" ] || fail "make uninstall removed an edited config"

	# The unchanged example goes with uninstall.
	cp "$XNAT_ROOT/configs/xnat.ini" "$d/etc/xnat/xnat.ini"
	check make -C "$XNAT_ROOT" --no-print-directory uninstall DESTDIR="$d" PREFIX=/usr
	[ -e "$d/etc/xnat" ] && fail "uninstall left $(find "$d/etc/xnat")"
	return 0
}

# The shipped unit passes systemd-analyze verify, as installed (ExecStart
# pointing at this build's xnat, the man page where man finds it), and
# systemd-analyze security rates it sandboxed.
TEST_MODES[systemd_verify]=kernel
test_systemd_verify() {
	command -v systemd-analyze >/dev/null || skip "no systemd-analyze (scripts/deps.sh installs systemd)"
	mkdir -p "$TB_WORK/unit" "$TB_WORK/man/man8"
	sed "s|@SBINDIR@|$XNAT_ROOT|g" "$XNAT_ROOT/packaging/xnat.service.in" \
		>"$TB_WORK/unit/xnat.service"
	cp "$XNAT_ROOT/user/xnat.8" "$TB_WORK/man/man8/"
	check env MANPATH="$TB_WORK/man" systemd-analyze verify "$TB_WORK/unit/xnat.service"
	[ -z "$CHECK_OUT" ] || fail "systemd-analyze verify complained"
	# Sandboxed: systemd's own rating of the unit's exposure is 3.0 at
	# most (9.6 without a sandbox). test_unit_sandbox.sh runs it.
	check systemd-analyze security --offline=yes --threshold=30 \
		"$TB_WORK/unit/xnat.service"
	tail -1 <<<"$CHECK_OUT"
}

# The installed example config is valid (with this testbed's port names)
# and has every key, as have the man page's reference and the README.
TEST_MODES[example_config]=kernel
test_example_config() {
	local key
	sed -e "s/^wan  = eth1/wan  = $RTR_WAN_IF/" -e "s/^lan  = eth0/lan  = $RTR_LAN_IF/" \
		"$XNAT_ROOT/configs/xnat.ini" >"$TB_WORK/example.ini"
	grep -q "^wan  = $RTR_WAN_IF" "$TB_WORK/example.ini" ||
		fail "no 'wan  = eth1' line in configs/xnat.ini"
	check xnat check -c "$TB_WORK/example.ini"
	# Every key the parser knows (config.c's keys[]) is in the example,
	# in the man page's reference and in the README.
	# shellcheck disable=SC2013 # config keys are words, one a match
	for key in $(sed -n 's/.*KEY("[a-z]*", "\([a-z_]*\)".*/\1/p' "$XNAT_ROOT/user/config.c"); do
		grep -q "^$key *=" "$XNAT_ROOT/configs/xnat.ini" ||
			fail "key '$key' is not in configs/xnat.ini"
		grep -q "^\.B $key\$" "$XNAT_ROOT/user/xnat.8" ||
			fail "key '$key' is not in xnat.8's config reference"
		grep -q "^ *$key *=" "$XNAT_ROOT/README.md" ||
			fail "key '$key' is not in the README's config"
	done
}

# Completion: commands, the command's own options (not others'), values.
TEST_MODES[completion]=kernel
test_completion() {
	local comp=/usr/share/bash-completion/bash_completion out
	[ -r "$comp" ] || skip "no bash-completion (scripts/deps.sh installs it)"
	out=$(PATH=$(dirname "$XNAT"):$PATH bash -c '
		. "$1"; . "$2"
		comp() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
			 COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			 COMPREPLY=(); _xnat; echo "${COMPREPLY[*]}"; }
		comp xnat st; comp xnat stats --; comp xnat -n x check --p
		comp xnat stats --format p; comp xnat help b; comp xnat -n "$3" st
		comp xnat -n ""; comp xnat trace h' _ "$comp" "$XNAT_ROOT/packaging/xnat.bash-completion" "$NS_RTR")
	printf '%s\n' "$out" | sed 's/^/  | /'
	mapfile -t got <<<"$out"
	[ "${got[0]}" = "status stats" ] || fail "commands: '${got[0]}'"
	grep -qw -- --watch <<<"${got[1]}" && grep -qw -- --format <<<"${got[1]}" &&
		grep -qw -- --netns <<<"${got[1]}" || fail "stats options: '${got[1]}'"
	grep -qw -- --quick <<<"${got[1]}" && fail "stats completes bench's --quick"
	[ "${got[2]}" = "--print --pretty" ] || fail "check --p: '${got[2]}'"
	[ "${got[3]}" = prometheus ] || fail "--format p: '${got[3]}'"
	[ "${got[4]}" = bench ] || fail "help b: '${got[4]}'"
	[ "${got[5]}" = "status stats" ] || fail "after -n NAME: '${got[5]}'"
	grep -qw -- "$NS_RTR" <<<"${got[6]}" || fail "-n does not complete namespaces"
	[ "${got[7]}" = host ] || fail "trace filter words: '${got[7]}'"
}

run_tests "$@"
