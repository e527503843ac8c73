#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The operator's surface of xnat, in the namespace testbed (lib.sh) with
# xnat up: per-command options and help, refusals, --version, `xnat check`
# (every error with file:line, nothing changed, --print is the ruleset
# `up` loads), `xnat status` (its fields, the nft table's health, exit 3
# when not up), and kernel mode's flows (conntrack) and stats (nft
# counters).
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
		on_rtr nft -s list ruleset
		ip -n "$NS_RTR" -d link show | grep -o 'prog/xdp id [0-9]*'
		cat "/run/xnat/$TB_RTR_INO/state" 2>/dev/null
	} >"$1"
}

# Every command's --help names exactly its own options, and other
# commands' options are refused with one line and exit 1.
TEST_MODES[options]=kernel
test_options() {
	local c lines

	# The version stamped in at build time (scripts/version.sh then; the
	# tree may have moved on since).
	expect_rc 0 --version
	[ "$OUT" = "xnat $(sed -n 's/^#define XNAT_VERSION "\(.*\)"$/\1/p' \
		"$XNAT_ROOT/.output/version.h")" ] || fail "--version is not the build's version"
	grep -qE '^xnat [0-9]+\.[0-9]+' <<<"$OUT" || fail "--version: no version number"
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

# The profile names `xnat bench --help` lists are exactly those the parser
# takes: each is accepted alone (as nobody: bench checks its options before
# it asks for root, so nothing runs), the many-endpoint and test names are
# among them, names it does not list are refused, and the man page's
# --profiles sentence names each one.
TEST_MODES[bench_profiles]=kernel
test_bench_profiles() {
	local list tok out rc man n=0
	expect_rc 0 bench --help
	list=$(sed -nE 's/^ *--profiles LIST +(.*) \(each group.*/\1/p' <<<"$OUT")
	echo "listed: $list"
	for tok in 64 imix 1 10k 100k 1M up both udp newflow tcp micro; do
		sed 's/[, ]/\n/g' <<<"$list" | grep -qx -- "$tok" ||
			fail "bench --help does not list profile $tok"
	done
	man=$(sed -n '/^\\-\\-profiles filters/,/^\.TP/p' "$XNAT_ROOT/user/xnat.8")
	[ -n "$man" ] || fail "xnat.8 does not describe --profiles"
	# shellcheck disable=SC2013 # the list is comma-separated words, not lines
	for tok in $(sed 's/,/ /g' <<<"$list"); do
		out=$(timeout "$T_XNAT" setpriv --reuid=nobody --regid=nogroup \
			--clear-groups "$XNAT" bench --profiles "$tok" 2>&1)
		rc=$?
		[ "$rc" = 2 ] && grep -q 'bench must run as root' <<<"$out" ||
			fail "profile $tok from --help: exit $rc: $out"
		grep -qw -- "$tok" <<<"$man" || fail "xnat.8 does not name profile $tok"
		n=$((n + 1))
	done
	echo "$n listed profiles accepted"
	for tok in 10K 1m 1k imix64 64,,up; do
		out=$(timeout "$T_XNAT" setpriv --reuid=nobody --regid=nogroup \
			--clear-groups "$XNAT" bench --profiles "$tok" 2>&1)
		rc=$?
		[ "$rc" = 1 ] && grep -q -- "--profiles: unknown" <<<"$out" ||
			fail "unlisted profile $tok: exit $rc: $out"
	done
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

# `check --print` is the plan `up` applies (ports, maps, sysctls as nft
# comments) and exactly the ruleset it loaded: applied by hand after
# `xnat down`, nft lists the same table.
test_check_print() {
	expect_rc 0 check --print -c "$TB_CONFIG"
	printf '%s\n' "$OUT" >"$TB_WORK/printed.nft"
	# The plan, as nft comments before the transaction.
	grep -qx "# xnat plan for $TB_CONFIG" <<<"$OUT" || fail "no plan header"
	grep -qx "# sysctl net/ipv4/ip_forward = 1" <<<"$OUT" || fail "no sysctls in the plan"
	if [ "$TB_MODE" != kernel ]; then
		grep -q "^# xdp port $RTR_WAN_IF " <<<"$OUT" || fail "no XDP ports in the plan"
	fi
	check on_rtr nft -s list table inet xnat
	printf '%s\n' "$CHECK_OUT" >"$TB_WORK/loaded.nft"
	check xnat down
	check on_rtr nft -f "$TB_WORK/printed.nft"
	check on_rtr nft -s list table inet xnat
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

# status: the NAT address and ports, pins, since when, and the nft table's
# health as it is removed, changed and put back behind xnat's back.
test_status_fields() {
	local up_since

	expect_rc 0 -j status
	q() { json_q "$1" <<<"$OUT"; }
	[ "$(q "j['nat']['address']")" = "$RTR_WAN4" ] || fail "nat address is not $RTR_WAN4"
	[ "$(q "'$RTR_WAN4' in j['nat']['wan_addresses']")" = true ] || fail "wan_addresses"
	[ "$(q "j['nft']['state']")" = ok ] || fail "nft table not ok after up"
	up_since=$(q "j['up_since']")
	[ "$(q "0 <= j['uptime_s'] < 120 and abs(j['up_since'] - $(date +%s)) < 120")" = true ] ||
		fail "up_since/uptime_s are not now"
	if [ "$TB_MODE" = xdp ]; then
		[ "$(q "j['pin_dir']")" = "/sys/fs/bpf/xnat/$TB_RTR_INO" ] || fail "pin_dir"
		[ "$(q "j['ports']['xdp'] == {'min': $NAT_PORT_MIN, 'max': $NAT_PORT_MAX}")" = true ] ||
			fail "xdp port range"
		# The kernel's two ranges: disjoint, and outside the XDP one.
		[ "$(q "(lambda k, l: k['max'] < $NAT_PORT_MIN and l['max'] < $NAT_PORT_MIN
			 and (k['max'] < l['min'] or l['max'] < k['min']))(j['ports']['kernel_nat'], j['ports']['local'])")" = true ] ||
			fail "kernel port ranges overlap"
	fi

	# A reload keeps up_since and moves loaded_at.
	sleep 1.1
	check xnat up -c "$TB_CONFIG"
	expect_rc 0 -j status
	[ "$(q "j['up_since']")" = "$up_since" ] || fail "a reload changed up_since"
	[ "$(q "j['loaded_at'] > j['up_since']")" = true ] || fail "loaded_at did not move"

	check on_rtr nft add rule inet xnat forward counter accept
	expect_rc 0 -j status
	[ "$(q "j['nft']['state']")" = modified ] || fail "a rule added by hand went unnoticed"
	check on_rtr nft flush ruleset
	# Up but not whole: exit 4, so a monitor's `xnat status` fails.
	expect_rc 4 -j status
	[ "$(q "j['nft']['state']")" = missing ] || fail "nft flush ruleset went unnoticed"
	expect_rc 4 status
	grep -q "table inet xnat missing" <<<"$OUT" || fail "text status hides the missing table"
	check xnat up -c "$TB_CONFIG"
	expect_rc 0 -j status
	[ "$(q "j['nft']['state']")" = ok ] || fail "xnat up did not put the table back"

	# An edited config is not the running one: not compared, and said.
	echo "; edited" >>"$TB_CONFIG"
	expect_rc 0 -j status
	[ "$(q "j['config_changed']")" = true ] || fail "config_changed"
	[ "$(q "j['nft']['state']")" = unknown ] || fail "compared with an edited config"
}

# Kernel mode: `xnat flows` lists conntrack's NAT connections: the LAN
# host's TCP connection (SNAT to the WAN address) while it is open, and a
# UDP port forward from the WAN (DNAT to the LAN host).
TEST_MODES[kernel_flows]=kernel
test_kernel_flows() {
	tcp_server_recv "$NS_WAN" 5002 "$TB_WORK/idle.recv" || fail "no server"
	timeout 20 ip netns exec "$NS_LAN" socat -u EXEC:"sleep 8" \
		"TCP:$WAN_HOST4:5002" </dev/null >/dev/null 2>&1 &
	echo $! >>"$TB_WORK/pids"
	echo_server "$NS_LAN" udp 53 || fail "no server"
	check udp_ask "$NS_WAN" "UDP:$RTR_WAN4:5353" xnat-fwd
	[ "$CHECK_OUT" = xnat-fwd ] || fail "the port forward did not answer"
	sleep 1
	check xnat flows --json
	[ "$(json_q "j['source']" <<<"$CHECK_OUT")" = conntrack ] || fail "not from conntrack"
	json_q "[f for f in j['flows'] if f['nat'] == 'snat' and f['proto'] == 'tcp'
		 and f['src'].startswith('$LAN_HOST4:') and f['dst'] == '$WAN_HOST4:5002'
		 and f['new_src'].startswith('$RTR_WAN4:') and f['new_dst'] == '$WAN_HOST4:5002'
		 and f['state'] == 'established'][0]" <<<"$CHECK_OUT" ||
		fail "no established snat flow $LAN_HOST4 -> $WAN_HOST4:5002"
	json_q "[f for f in j['flows'] if f['nat'] == 'dnat' and f['proto'] == 'udp'
		 and f['src'].startswith('$WAN_HOST4:') and f['dst'] == '$RTR_WAN4:5353'
		 and f['new_dst'] == '$LAN_HOST4:53'][0]" <<<"$CHECK_OUT" ||
		fail "no dnat flow to $LAN_HOST4:53"
	check xnat flows
	grep -q "NAT connections in conntrack" <<<"$CHECK_OUT" || fail "text flows"
}

# Kernel mode: `xnat stats` shows the nft rules' counters: masquerade and
# the established rule count a transfer, the WAN drop rule an unsolicited
# connection attempt (IPv6, which the WAN host can route to the LAN).
TEST_MODES[kernel_stats]=kernel
test_kernel_stats() {
	rule_count() {
		json_q "sum(r['packets'] for r in j['nft'] if r['chain'] == '$1' and r['rule'].endswith('$2'))" \
			<<<"$CHECK_OUT"
	}
	check xnat stats --json
	[ "$(json_q "j['mode']" <<<"$CHECK_OUT")" = kernel ] || fail "not kernel mode stats"
	[ "$(rule_count forward 'iifname "wan0" drop')" = 0 ] || fail "drops before any traffic"

	random_file "$TB_WORK/s.bin" 1M
	tcp_server_recv "$NS_WAN" 5003 "$TB_WORK/s.recv" || fail "no server"
	check tcp_send "$NS_LAN" "TCP:$WAN_HOST4:5003" "$TB_WORK/s.bin"
	bg_wait "$BG_PID"
	timeout 5 ip netns exec "$NS_WAN" socat -u OPEN:/dev/null \
		"TCP6:[$LAN_HOST6]:5004,connect-timeout=1" 2>/dev/null &&
		fail "an unsolicited IPv6 connection got through"

	check xnat stats --json
	[ "$(rule_count postrouting masquerade)" -ge 1 ] || fail "masquerade did not count"
	[ "$(rule_count forward 'established,related accept')" -ge 500 ] ||
		fail "the established rule counted under 500 packets of a 1 MB transfer"
	[ "$(rule_count forward 'iifname "wan0" drop')" -ge 1 ] || fail "the WAN drop did not count"
	[ "$(json_q "j['conntrack']['entries'] >= 1" <<<"$CHECK_OUT")" = true ] ||
		fail "no conntrack entries"
	check xnat stats
	grep -q 'masquerade' <<<"$CHECK_OUT" || fail "text stats"
}

run_tests "$@"
