#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `[router] fastpath = on | off`, applied on reload: with it off, packets
# of an existing flow are routed again (fwd_routed) instead of taking the
# cached rewrite (fwd_fast); switched on again, they take it again.
# Harness and testbed: lib.sh.
#
#   tests/integration/test_fastpath.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

TEST_MODES[fastpath_reload]="xdp"

counter() {
	xnat stats --json | json_q "j['counters']['$1']['packets']"
}

# Set fastpath in the running config and reload.
reload_fastpath() {
	sed -i '/^fastpath *=/d' "$TB_CONFIG"
	sed -i "s/^\[router\]\$/[router]\nfastpath = $1/" "$TB_CONFIG"
	grep -q "^fastpath = $1\$" "$TB_CONFIG" || fail "could not edit $TB_CONFIG"
	check xnat up -c "$TB_CONFIG"
}

# Five pings (a new echo id: a new flow, whose first request takes the
# slow path); prints how much fwd_slow, fwd_fast and fwd_routed grew.
pings_and_deltas() {
	local s0 f0 r0 s1 f1 r1
	s0=$(counter fwd_slow) && f0=$(counter fwd_fast) &&
		r0=$(counter fwd_routed) || fail "stats"
	on_lan ping -c 5 -i 0.1 -W 2 "$WAN_HOST4" >/dev/null || fail "ping failed"
	s1=$(counter fwd_slow) && f1=$(counter fwd_fast) &&
		r1=$(counter fwd_routed) || fail "stats"
	echo "$((s1 - s0)) $((f1 - f0)) $((r1 - r0))"
}

test_fastpath_reload() {
	local d
	check on_lan ping -c 2 -i 0.1 -W 2 "$WAN_HOST4"
	d=$(pings_and_deltas)
	echo "fastpath on (default): slow, fast, routed = $d"
	[ "$d" = "1 9 0" ] || fail "expected 1 slow, 9 fast, 0 routed"

	reload_fastpath off
	d=$(pings_and_deltas)
	echo "fastpath = off: slow, fast, routed = $d"
	[ "$d" = "1 0 9" ] || fail "expected 1 slow, 0 fast, 9 routed"

	reload_fastpath on
	d=$(pings_and_deltas)
	echo "fastpath = on: slow, fast, routed = $d"
	[ "$d" = "1 9 0" ] || fail "expected 1 slow, 9 fast, 0 routed"
}

run_tests "$@"
