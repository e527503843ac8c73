#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The operator's surface of xnat, in the namespace testbed (lib.sh) with
# xnat up: per-command options and help, refusals, --version, `xnat check`
# (every error with file:line, nothing changed, --print is the ruleset
# `up` loads) and `xnat status` (its fields, exit 3 when not up).
#
#   tests/integration/test_cli.sh [SUBSTRING...]   e.g. check '[kernel]'
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp               see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# Run xnat in the router namespace expecting exit status RC; its stdout in
# OUT, stderr in ERR.
expect_rc() {
	local rc=$1 got
	shift
	echo "+ xnat $* (expect exit $rc)"
	OUT=$(timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" "$@" 2>"$TB_WORK/stderr")
	got=$?
	ERR=$(cat "$TB_WORK/stderr")
	[ -n "$OUT" ] && printf '%s\n' "$OUT" | sed 's/^/  | /'
	[ -n "$ERR" ] && printf '%s\n' "$ERR" | sed 's/^/  ! /'
	[ "$got" = "$rc" ] || fail "xnat $*: exit $got, expected $rc"
}

# What the router looks like from outside, to show a command changed
# nothing: the nft ruleset, XDP programs on the ports, xnat's state file.
router_snapshot() {
	{
		on_rtr nft list ruleset
		ip -n "$NS_RTR" -d link show | grep -o 'prog/xdp id [0-9]*'
		cat "/run/xnat/$TB_RTR_INO/state" 2>/dev/null
	} >"$1"
}

# Every command's --help names exactly its own options, and other
# commands' options are refused with one line and exit 1.
TEST_MODES[options]=kernel
test_options() {
	local c lines

	expect_rc 0 --version
	[ "$OUT" = "xnat $("$XNAT_ROOT/scripts/version.sh")" ] ||
		fail "--version is not the build's version"
	expect_rc 0 help --commands
	for c in up down run check status flows stats bench help; do
		grep -qx "$c" <<<"$OUT" || fail "help --commands lacks $c"
	done

	expect_rc 0 stats --help
	grep -q -- '--watch S' <<<"$OUT" || fail "stats --help lacks --watch"
	grep -q -- '--quick' <<<"$OUT" && fail "stats --help shows bench's --quick"
	expect_rc 0 help bench
	for c in --quick '--out DIR' '--reps N' '--modes LIST' '--profiles LIST'; do
		grep -q -- "$c" <<<"$OUT" || fail "bench help lacks $c"
	done
	grep -q -- '--watch' <<<"$OUT" && fail "bench help shows stats' --watch"
	expect_rc 0 check -h
	grep -q -- '--print' <<<"$OUT" && grep -q -- '--config FILE' <<<"$OUT" ||
		fail "check --help lacks --print or --config"
	grep -q -- '--netns NAME' <<<"$OUT" || fail "global options missing"

	# Refusals: one line on stderr, exit 1, nothing on stdout.
	for c in "status -w 1" "stats --quick" "up --print" "down -c x.ini" \
		 "flows --reps 3" "status --bogus" "nosuchcommand" "status extra" \
		 "stats -w 0" "bench --reps 99"; do
		# shellcheck disable=SC2086 # word splitting wanted
		expect_rc 1 $c
		lines=$(wc -l <<<"$ERR")
		[ "$lines" = 1 ] && [ -z "$OUT" ] ||
			fail "xnat $c: expected one line on stderr, got $lines"
	done
	expect_rc 1 -j status -w 1
	[ -n "$(json_q "j['error']" <<<"$OUT")" ] || fail "-j: no JSON error"
}

# `xnat check` lists every error with file:line, exits 1, and changes
# nothing on a running router; a good config passes.
TEST_MODES[check_errors]=xdp
test_check_errors() {
	local bad=$TB_WORK/bad.ini n

	router_snapshot "$TB_WORK/before"
	cat >"$bad" <<-EOF
	[router]
	mode = turbo
	wan  = $RTR_WAN_IF
	lan  = $RTR_LAN_IF, xnat-nosuch0
	[nat]
	ports = 70000-80000
	[flows]
	max = 0
	[forward]
	tcp/8080 = 198.18.1.10:80
	tcp/8080 = 198.18.1.11:80
	EOF
	expect_rc 1 check -c "$bad"
	for n in "2: bad mode" "4: interface xnat-nosuch0 not found" \
		 "6: bad ports" "8: bad max" "11: forward tcp/8080 is duplicated"; do
		grep -qF "$bad:$n" <<<"$ERR" || fail "no error '$bad:$n'"
	done
	grep -qF "5 errors; nothing was changed" <<<"$ERR" || fail "no summary"
	expect_rc 1 -j check -c "$bad"
	[ "$(json_q "j['n_errors']" <<<"$OUT")" = 5 ] || fail "JSON n_errors is not 5"
	[ "$(json_q "j['ok']" <<<"$OUT")" = false ] || fail "JSON ok is not false"

	expect_rc 0 check -c "$TB_CONFIG"
	grep -qF "$TB_CONFIG: ok" <<<"$OUT" || fail "no ok line"
	expect_rc 0 -j check -c "$TB_CONFIG"
	[ "$(json_q "j['nft_checked']" <<<"$OUT")" = true ] ||
		fail "the kernel did not check the ruleset"
	# No -c: the default path (when this machine has none).
	if ! [ -e /etc/xnat/xnat.ini ]; then
		expect_rc 1 check
		grep -qF "/etc/xnat/xnat.ini: No such file" <<<"$ERR" ||
			fail "default config not used"
	fi

	router_snapshot "$TB_WORK/after"
	diff -u "$TB_WORK/before" "$TB_WORK/after" || fail "check changed the router"
}

# `check --print` is exactly the ruleset `up` loaded: applied by hand
# after `xnat down`, nft lists the same table.
test_check_print() {
	expect_rc 0 check --print -c "$TB_CONFIG"
	printf '%s\n' "$OUT" >"$TB_WORK/printed.nft"
	check on_rtr nft list table inet xnat
	printf '%s\n' "$CHECK_OUT" >"$TB_WORK/loaded.nft"
	check xnat down
	check on_rtr nft -f "$TB_WORK/printed.nft"
	check on_rtr nft list table inet xnat
	printf '%s\n' "$CHECK_OUT" >"$TB_WORK/reloaded.nft"
	check on_rtr nft delete table inet xnat
	diff -u "$TB_WORK/loaded.nft" "$TB_WORK/reloaded.nft" ||
		fail "--print is not the ruleset up loaded"
}

# status: exit 3 and {"up": false} once down; 0 while up.
test_status_not_up() {
	expect_rc 0 status
	expect_rc 0 -j status
	[ "$(json_q "j['up']" <<<"$OUT")" = true ] || fail "not up"
	check xnat down
	expect_rc 3 status
	grep -q "not up" <<<"$OUT" || fail "no 'not up' line"
	expect_rc 3 -j status
	[ "$(json_q "j['up']" <<<"$OUT")" = false ] || fail "JSON up is not false"
}

run_tests "$@"
