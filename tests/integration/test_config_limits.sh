#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `xnat check` refuses exactly what `xnat up` cannot apply, in the
# namespace testbed (lib.sh): config files that are not text or are too
# large. For each, check and up agree, and a refused config changes
# nothing.
#
#   tests/integration/test_config_limits.sh [SUBSTRING...]
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp                   see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# The router as an operator sees it from outside: the nft ruleset, the XDP
# programs on its ports, xnat's state and the conntrack sysctls.
snapshot() {
	{
		on_rtr nft -s list ruleset
		ip -n "$NS_RTR" -d link show | grep -o 'prog/xdp id [0-9]*'
		cat "/run/xnat/$TB_RTR_INO/state" 2>/dev/null
		on_rtr sysctl -a 2>/dev/null | grep 'nf_conntrack_.*timeout'
	} >"$1"
}

# Run `xnat CMD -c FILE`, with at most VM KB of address space if given;
# its exit status in RC, stderr in ERR.
run_xnat() {
	local cmd=$1 file=$2 vm=${3:-unlimited}
	ERR=$(ulimit -v "$vm" && timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" "$cmd" -c "$file" 2>&1 >/dev/null)
	RC=$?
	echo "+ xnat $cmd -c ${file##*/}: exit $RC${ERR:+: $(grep -v '^Warning' <<<"$ERR" | head -2)}"
}

# Config files that are not text, or too large: check and up refuse them
# alike at their line, and up changes nothing.
TEST_MODES[reader_bounds]=kernel
test_reader_bounds() {
	local f=$TB_WORK/bad.ini cmd want
	snapshot "$TB_WORK/before"

	# A NUL in a value: it used to cut "lan0\0junk" to lan0, silently.
	printf '[router]\nmode = kernel\nwan = %s\nlan = %s\0junk\n' \
		"$RTR_WAN_IF" "$RTR_LAN_IF" >"$f"
	want="xnat: $f:4: NUL byte at column 11: a config is text"
	for cmd in check up; do
		run_xnat "$cmd" "$f"
		[ $RC -eq 1 ] || fail "$cmd took a NUL byte (exit $RC)"
		grep -qxF "$want" <<<"$ERR" || fail "$cmd: not '$want'"
	done

	# A 50 MB comment line, then the keys, read with 60 MB of address
	# space (xnat needs about 20): read no further than 1 MiB, said at
	# its line. The whole line used to be read, and the allocation's
	# failure taken for the end of the file: "wan is missing".
	{
		printf '[router]\nmode = kernel\n; '
		head -c $((50 << 20)) /dev/zero | tr '\0' x
		printf '\nwan = %s\nlan = %s\n' "$RTR_WAN_IF" "$RTR_LAN_IF"
	} >"$f"
	want="xnat: $f:3: file too large: more than 1048576 bytes (1 MiB), not read further"
	for cmd in check up; do
		run_xnat "$cmd" "$f" 60000
		[ $RC -eq 1 ] || fail "$cmd took a 50 MB line (exit $RC)"
		grep -qxF "$want" <<<"$ERR" || fail "$cmd: not '$want'"
		grep -q missing <<<"$ERR" && fail "$cmd says a key is missing"
	done

	# A line over 4096 bytes (6 + 4 + 3 + 5000).
	{
		printf '[router]\nmode = kernel\nwan = %s\nlan = %s ; ' "$RTR_WAN_IF" "$RTR_LAN_IF"
		head -c 5000 /dev/zero | tr '\0' x
		echo
	} >"$f"
	for cmd in check up; do
		run_xnat "$cmd" "$f"
		[ $RC -eq 1 ] || fail "$cmd took a 5000-byte line (exit $RC)"
		grep -q "^xnat: $f:4: line too long (5013 bytes, at most 4096 with its comment)$" <<<"$ERR" ||
			fail "$cmd does not say the line is too long"
	done

	snapshot "$TB_WORK/after"
	diff "$TB_WORK/before" "$TB_WORK/after" || fail "a refused config changed the router"
	check xnat up -c "$TB_CONFIG"
}

run_tests "$@"
