#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Failures leave nothing half-done: every xnat command either completes or
# leaves the router exactly as it was, and says which. In the namespace
# testbed (lib.sh):
#
#   - a first `up` that fails after attaching to some ports leaves nothing;
#     `down` removes an orphan program and pins nobody recorded, and one
#     that cannot remove a part (a table another process owns) exits 2
#     naming it, takes down the rest and keeps the record for a second
#     `down`;
#   - a reload that fails puts back the running router (from the config it
#     recorded, not the edited file) and exits 2 saying so, also when only
#     its record fails (applied.ini stays the running config);
#   - a reload while a port of the running config is gone (deleted since)
#     reloads in place what runs without it, and one that fails goes back
#     to that, saying so; a running config that cannot be rebuilt at all
#     makes a reload a restart, which, failing, leaves the router down
#     and says so;
#   - a reload that changes the attach mode (xdp = generic, native) moves
#     every port to it, or, when a port refuses it, puts every port back
#     (program and mode) and exits 2;
#   - a port removed on reload takes its flows out of the flow table, so
#     the kernel carries them instead of XDP sending them nowhere;
#   - commands that change the router take a lock, and `xnat run` follows
#     a config another command applied instead of putting its own back,
#     also after a `down` and a fresh `up` it did not see (whose
#     generation restarts at 1: the record's instance tells them apart);
#     a mode switch holds the lock to its end (under `xnat run`, against
#     a concurrent `up`) and leaves the router wholly in the new mode;
#     one whose new mode fails after the old one was taken down applies
#     the old config again in its mode (its connections reset), under a
#     larger generation, and exits 2 saying so;
#   - a port made again under `xnat run` gets the running config, not an
#     unsignalled edit of the file;
#   - a WAN address change moves NAT (flows, mappings, nft rules) to the new
#     address, and `xnat run` starts while the WAN has no address yet;
#   - `nft flush ruleset` is reported by status and repaired by run;
#   - ports XDP cannot serve (bridge, tun, a bridge's member) are refused
#     naming kernel mode, and a bridged LAN works in kernel mode;
#   - frames an egress port refuses are counted and warned about;
#   - a pinned map of another layout: config-derived ones are re-created,
#     state ones refused naming `xnat down`; mapping and port tables are
#     sized by the NAT addresses, older bigger ones kept;
#   - under `ip netns exec`, joining another mount namespace is said;
#   - a signal (SIGTERM, SIGHUP) during `up` leaves the router wholly up
#     or wholly as before, never half applied.
#
#   tests/integration/test_failures.sh [SUBSTRING...]
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp                   see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

SRV_PORT=5000

# ---- helpers ----------------------------------------------------------------

pin_dir() { echo "/sys/fs/bpf/xnat/$TB_RTR_INO"; }

# A copy of the test's config as TB_WORK/NAME.ini with sed expressions
# applied; prints its path. Each expression must change something.
config_edit() {
	local name=$1 file=$TB_WORK/$1.ini e
	shift
	cp "$TB_CONFIG" "$file" || return 1
	for e in "$@"; do
		cp "$file" "$file.prev"
		sed -i -E "$e" "$file"
		cmp -s "$file" "$file.prev" &&
			{ echo "config_edit: '$e' changed nothing" >&2; return 1; }
	done
	rm -f "$file.prev"
	echo "$file"
}

# Run xnat, keeping its exit status in RC and its output in OUT.
xnat_rc() {
	echo "+ xnat $*"
	OUT=$(xnat "$@" 2>&1)
	RC=$?
	[ -n "$OUT" ] && printf '%s\n' "$OUT" | sed 's/^/  | /'
	echo "  exit $RC"
}

# ifb0 in the router namespace, up: a port without native XDP.
ifb0_add() {
	check ip -n "$NS_RTR" link add ifb0 type ifb
	check ip -n "$NS_RTR" link set ifb0 up
}

# `xnat up` with the test's config, ifb0 as one more LAN port and
# xdp = MODE (auto: as the config has it); RC and OUT as xnat_rc.
up_ifb0() {
	local cfg e=()
	[ "$1" = auto ] || e=("s/^xdp( *)= auto/xdp\\1= $1/")
	cfg=$(config_edit "ifb0-$1" 's/^lan( *)= lan0/lan\1= lan0, ifb0/' \
		"${e[@]}") || fail "config"
	xnat_rc up -c "$cfg"
}

# After a failed reload: the router is as the snapshot BEFORE, and NATs
# a UDP exchange from the LAN host's source port SPORT.
as_before_and_nat() {
	local before=$1 after tok=xnat-rb-$2-$RANDOM
	after=$(router_snapshot)
	if [ "$after" != "$before" ]; then
		diff <(echo "$before") <(echo "$after")
		fail "the router differs from before the failed reload"
	fi
	echo "router after the failed reload = before it"
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN" "$2" "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "no NAT after the rollback"
}

# A reload to native mode that ifb0 refuses: exit 2, naming ifb0 and
# saying it rolled back.
native_refused() {
	up_ifb0 native
	[ "$RC" = 2 ] || fail "expected exit 2, got $RC"
	grep -q ifb0 <<<"$OUT" || fail "the error does not name ifb0"
	grep -q "rolled back" <<<"$OUT" || fail "does not say it rolled back"
}

# Everything a running router has that a test may compare: the nft table,
# the config-derived maps, the slow path in its slot (bpf/maps.h) and the
# programs on the ports.
router_snapshot() {
	local m
	on_rtr nft list table inet xnat 2>&1
	[ "$TB_MODE" = xdp ] || return 0
	for m in xnat_config xnat_ifaces xnat_tx_ports xnat_forwards xnat_vlans \
		 xnat_slow_path; do
		echo "map $m:"
		bpftool map dump pinned "$(pin_dir)/$m" 2>&1
	done
	ip -n "$NS_RTR" -d link show | grep -oE '^[0-9]+: [^:@]+|prog/xdp id [0-9]+'
}

# Nothing of xnat is left in the router namespace.
nothing_left() {
	local before after
	ip -n "$NS_RTR" -d link show | grep -q 'prog/xdp' &&
		fail "an XDP program is still attached: $(ip -n "$NS_RTR" -d link show | grep -B2 prog/xdp)"
	on_rtr nft list tables | grep -qw xnat && fail "nft table xnat is still there"
	[ -e "$(pin_dir)" ] && fail "pins left: $(find "$(pin_dir)")"
	[ -e "/run/xnat/$TB_RTR_INO/state" ] && fail "state record left"
	before=$(cat "$TB_WORK/ip_forward.before")
	after=$(on_rtr sysctl -n net.ipv4.ip_forward)
	[ "$before" = "$after" ] ||
		fail "net.ipv4.ip_forward is $after, was $before before xnat"
	echo "nothing left: no XDP, no table, no pins, no state, ip_forward $after"
}

# A UDP exchange from NS (source port SPORT) with the WAN echo server (or
# the one at DST); prints the reply. udp_from NS SPORT MSG [DST]
udp_from() {
	timeout 5 ip netns exec "$1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[3])))
s.settimeout(2)
s.sendto(sys.argv[4].encode(), (sys.argv[1], int(sys.argv[2])))
print(s.recvfrom(2048)[0].decode())
' "${4:-$WAN_HOST4}" $SRV_PORT "$2" "$3"
}

# UDP echo server for any number of peers on the WAN host (or in NS), on
# every address (or on ADDR alone, so its replies come from ADDR).
# udp_echo_wan [NS] [ADDR]
udp_echo_wan() {
	local ns=${1:-$NS_WAN}
	bg_ns 120 "$ns" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[2], int(sys.argv[1])))
while True:
    d, a = s.recvfrom(65535)
    try:
        s.sendto(d, a)
    except OSError:
        pass  # a sender it has no route back to
' $SRV_PORT "${2:-0.0.0.0}"
	wait_listen "$ns" udp $SRV_PORT
}

hairpin_names() { on_rtr nft list table inet xnat | grep -q "ip daddr $1 "; }

no_flows() { [ "$(flow_count "$1")" = 0 ]; }

# `xnat run` with config CFG in the background, its output in
# TB_WORK/run.log; returns once the router is up (xnat_run_start).
start_run() { xnat_run_start 900 "$1" "$TB_WORK/run.log"; }

stop_run() {
	kill -TERM "$RUN_PID" 2>/dev/null
	wait "$RUN_PID"
	echo "xnat run exited $?; its log:"
	sed 's/^/  | /' "$TB_WORK/run.log"
}

counter() {
	xnat stats --json 2>/dev/null | json_q "j['counters']['$1']['packets']"
}

# ---- a first start, down ------------------------------------------------------

# A first `up` that fails on its third port, after attaching to two (xdp =
# native on an ifb device, which has no native XDP), leaves nothing.
# shellcheck disable=SC2034,SC2154 # TEST_MODES is read by lib.sh
TEST_MODES[first_up_fails_clean]="xdp offload"
test_first_up_fails_clean() {
	check xnat down
	nothing_left
	ifb0_add
	up_ifb0 native
	[ "$RC" = 2 ] || fail "expected exit 2 (system error), got $RC"
	grep -q ifb0 <<<"$OUT" || fail "the error does not name ifb0"
	grep -q "nothing was left applied" <<<"$OUT" || fail "does not say it undid"
	nothing_left
}

# `down` finds and removes what a lost record left: the program on the
# ports, the pins, the table.
TEST_MODES[down_removes_orphan]="xdp offload"
test_down_removes_orphan() {
	ip -n "$NS_RTR" -d link show | grep -q 'prog/xdp' || fail "not attached"
	check rm -rf "/run/xnat/$TB_RTR_INO"
	xnat_rc down
	[ "$RC" = 0 ] || fail "down failed"
	grep -q "not up" <<<"$OUT" || fail "down does not say xnat was not up"
	ip -n "$NS_RTR" -d link show | grep -q 'prog/xdp' && fail "orphan program left"
	[ -e "$(pin_dir)" ] && fail "orphan pins left"
	on_rtr nft list tables | grep -qw xnat && fail "table left"
	return 0
}

# What `down` reports when it cannot remove something: the nft table,
# here, taken by another process as its own (flags owner: only that
# process's netlink socket may delete it, until it closes), as any
# failure to remove a part would. Exit 2 naming it; the rest is down (no
# XDP, no pins, ip_forward as before xnat); the record stays, and once
# the table is free a second `down` removes it and leaves nothing.
TEST_MODES[down_reports_left]="xdp offload kernel"
test_down_reports_left() {
	local holder
	check on_rtr nft delete table inet xnat
	bg_ns 60 "$NS_RTR" bash -c \
		'{ echo "add table inet xnat { flags owner; }"; sleep 55; } | nft -i'
	holder=$BG_PID
	wait_until 5 on_rtr nft list table inet xnat >/dev/null ||
		fail "no owned table"
	xnat_rc down
	[ "$RC" = 2 ] || fail "expected exit 2, got $RC"
	grep -q "could not remove the nft table inet xnat: .*; the rest is down" \
		<<<"$OUT" || fail "down does not say what it could not remove"
	ip -n "$NS_RTR" -d link show | grep -q prog/xdp && fail "XDP left"
	[ -e "$(pin_dir)" ] && fail "pins left: $(find "$(pin_dir)")"
	[ "$(on_rtr sysctl -n net.ipv4.ip_forward)" = "$(cat "$TB_WORK/ip_forward.before")" ] ||
		fail "ip_forward not restored"
	[ -e "/run/xnat/$TB_RTR_INO/state" ] ||
		fail "the record went, with a part of the router still there"
	bg_stop "$holder"
	wait_until 5 bash -c "! timeout 5 ip netns exec '$NS_RTR' nft list table inet xnat" ||
		fail "the owned table outlived its process"
	xnat_rc down
	[ "$RC" = 0 ] || fail "the second down failed"
	nothing_left
}

# ---- reloads ------------------------------------------------------------------

# A reload that fails (a new LAN port refuses native XDP, found after the
# table, sysctls and maps were changed) puts back exactly
# the old router, although the operator's file was edited in place.
TEST_MODES[reload_rolls_back]="xdp offload"
test_reload_rolls_back() {
	local before after tok=xnat-rb-$RANDOM
	check ip -n "$NS_RTR" link add ifb0 type ifb
	check ip -n "$NS_RTR" link set ifb0 up
	before=$(router_snapshot)
	# The running config's own file, edited: a restore that re-read it
	# would apply the new forward and timeout. ifb0 has no native XDP.
	sed -i -E -e 's/^lan( *)= lan0/lan\1= lan0, ifb0/' \
		-e 's/^xdp( *)= auto/xdp\1= native/' \
		-e 's/^udp( *)= [0-9]+/udp\1= 17/' \
		-e 's|^tcp/8080 = .*|tcp/8080 = 198.18.1.10:81\ntcp/9090 = 198.18.1.10:90|' \
		"$TB_CONFIG"
	grep -q 9090 "$TB_CONFIG" || fail "config not edited"
	xnat_rc up -c "$TB_CONFIG"
	[ "$RC" = 2 ] || fail "expected exit 2, got $RC"
	grep -q "rolled back" <<<"$OUT" || fail "does not say it rolled back"
	after=$(router_snapshot)
	if [ "$before" != "$after" ]; then
		diff <(echo "$before") <(echo "$after")
		fail "the router differs from before the failed reload"
	fi
	echo "router after the failed reload = before it (nft table, maps, programs)"
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN" 40001 "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "no NAT after the rollback"
}

# A reload whose apply succeeds but whose record cannot be written (a
# directory where state.tmp goes, as a full or read-only /run would fail
# it) undoes the apply: the router is as before (the new LAN port without
# XDP, no new forward in the table) and applied.ini, what a later rollback
# restores, is still the running config. Exit 2, saying it rolled back.
TEST_MODES[reload_record_fails]="xdp offload kernel"
test_reload_record_fails() {
	local run=/run/xnat/$TB_RTR_INO before cfg state_before
	testbed_add_lan_port || fail "no second LAN port"
	cfg=$(config_edit record-fails 's/^lan( *)= lan0/lan\1= lan0, lan1/' \
		's|^(tcp/8080 = .*)|\1\ntcp/9090 = 198.18.1.10:90|') || fail "config"
	before=$(router_snapshot)
	cp "$run/applied.ini" "$TB_WORK/applied.before" || fail "no applied.ini"
	state_before=$(cat "$run/state")
	check mkdir "$run/state.tmp"
	xnat_rc up -c "$cfg"
	rmdir "$run/state.tmp"
	[ "$RC" = 2 ] || fail "expected exit 2, got $RC"
	grep -q "rolled back" <<<"$OUT" || fail "does not say it rolled back"
	cmp "$run/applied.ini" "$TB_WORK/applied.before" ||
		fail "applied.ini is not the running config any more"
	[ "$(cat "$run/state")" = "$state_before" ] || fail "the record changed"
	ip -n "$NS_RTR" -d link show "$RTR_LAN1_IF" | grep -q prog/xdp &&
		fail "XDP left on $RTR_LAN1_IF"
	on_rtr nft list table inet xnat | grep -qE "9090|$RTR_LAN1_IF" &&
		fail "the new config's table left: $(on_rtr nft list table inet xnat)"
	as_before_and_nat "$before" 40041
}

# lan1 as a second LAN port of the running config (TB_WORK/two.ini), then
# deleted, as an unplugged adapter goes: the config the router recorded
# names a port that is gone, and cannot be rebuilt as it is.
lan1_gone() {
	local two
	testbed_add_lan_port || fail "no second LAN port"
	two=$(config_edit two 's/^lan( *)= lan0/lan\1= lan0, lan1/') || fail "config"
	check xnat up -c "$two"
	check ip -n "$NS_RTR" link del "$RTR_LAN1_IF"
}

# The router runs with every part in place: status says so (exit 0), and
# a UDP exchange from the LAN host's source port SPORT is NATed.
router_whole() {
	local tok=xnat-whole-$1-$RANDOM
	xnat_rc status
	[ "$RC" = 0 ] || fail "status exits $RC"
	udp_echo_wan || fail "no server"
	wait_until 10 lan_reply_is "$1" "$tok" || fail "no NAT"
}

# A reload that drops the port that is gone reloads in place what the
# router runs (the recorded config without that port): it succeeds,
# saying which port it found gone, and the router NATs; in xdp mode the
# LAN host's flow is kept (no restart). `down` then leaves nothing.
TEST_MODES[reload_port_gone]="xdp offload kernel"
test_reload_port_gone() {
	lan1_gone
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN" 40061 before
	xnat_rc up -c "$TB_CONFIG"
	[ "$RC" = 0 ] || fail "the reload failed"
	grep -q "lan1, in the running config, is gone" <<<"$OUT" ||
		fail "the reload does not say lan1 is gone"
	grep -q "xnat reloaded in $TB_MODE mode" <<<"$OUT" ||
		fail "not a reload in place"
	if [ "$TB_MODE" = xdp ]; then
		[ "$(flow_count "'$LAN_HOST4' in f['src'] + f['new_dst']")" = 2 ] ||
			fail "the reload ended the LAN host's flow: $(xnat flows)"
	fi
	router_whole 40061
	check xnat down
	nothing_left
}

# A reload that fails (its record cannot be written, in every mode) while
# the running config names a port that is gone: exit 2, saying it rolled
# back to the running config without that port; the router is that: the
# record, applied.ini and the programs on the ports as before, not the
# new config's table, whole and NATing. `down` then leaves nothing.
TEST_MODES[reload_port_gone_fails]="xdp offload kernel"
test_reload_port_gone_fails() {
	local run=/run/xnat/$TB_RTR_INO cfg progs state_before
	lan1_gone
	cfg=$(config_edit fwd9090 's|^(tcp/8080 = .*)|\1\ntcp/9090 = 198.18.1.10:90|') ||
		fail "config"
	cp "$run/applied.ini" "$TB_WORK/applied.before" || fail "no applied.ini"
	state_before=$(cat "$run/state")
	progs=$(ip -n "$NS_RTR" -d link show | grep -oE '^[0-9]+: [^:@]+|prog/xdp id [0-9]+')
	check mkdir "$run/state.tmp"
	xnat_rc up -c "$cfg"
	rmdir "$run/state.tmp"
	[ "$RC" = 2 ] || fail "expected exit 2, got $RC"
	grep -qF "; rolled back: the router runs $(realpath "$TB_WORK/two.ini") as before, without lan1 (gone)" \
		<<<"$OUT" || fail "does not say what the router runs"
	[ "$(cat "$run/state")" = "$state_before" ] || fail "the record changed"
	cmp "$run/applied.ini" "$TB_WORK/applied.before" ||
		fail "applied.ini is not the running config any more"
	[ "$(ip -n "$NS_RTR" -d link show | grep -oE '^[0-9]+: [^:@]+|prog/xdp id [0-9]+')" = "$progs" ] ||
		fail "the ports' programs changed: $(ip -n "$NS_RTR" -d link show)"
	check on_rtr nft list table inet xnat
	grep -q 9090 <<<"$CHECK_OUT" && fail "the failed reload's table is left"
	router_whole 40062
	check xnat down
	nothing_left
}

# The recorded config cannot be rebuilt at all (here: a key this binary
# does not know, as from another version): a reload restarts the router
# with the new config. When that fails too (its record cannot be
# written), the router is wholly down, and the command says so (exit 2).
TEST_MODES[reload_unrebuildable]="xdp offload kernel"
test_reload_unrebuildable() {
	local run=/run/xnat/$TB_RTR_INO
	check sed -i 's/^\[router\]/[router]\nfrom_the_future = 1/' "$run/applied.ini"
	xnat_rc up -c "$TB_CONFIG"
	[ "$RC" = 0 ] || fail "the restart failed"
	grep -q "cannot rebuild the running config" <<<"$OUT" || fail "not said"
	grep -q "Restarting in $TB_MODE mode" <<<"$OUT" || fail "no restart"
	router_whole 40063
	check sed -i 's/^\[router\]/[router]\nfrom_the_future = 1/' "$run/applied.ini"
	check mkdir "$run/state.tmp"
	xnat_rc up -c "$TB_CONFIG"
	rmdir "$run/state.tmp"
	# The record's directory stays only for what the test put in it.
	rmdir "$run" 2>/dev/null
	[ "$RC" = 2 ] || fail "expected exit 2, got $RC"
	grep -q "; the router is down: its running config could not be rebuilt" \
		<<<"$OUT" || fail "does not say the router is down"
	nothing_left
	xnat_rc status
	[ "$RC" = 3 ] || fail "status exits $RC, not 3 (not up)"
}

run_ended() { ! kill -0 "$RUN_PID" 2>/dev/null; }

# The same under `xnat run`, reloaded by SIGHUP: the restart fails and
# leaves the router down, which run says (not that the config loaded
# before still runs) before it exits 2.
TEST_MODES[run_reload_left_down]="xdp offload kernel"
test_run_reload_left_down() {
	local run=/run/xnat/$TB_RTR_INO pid rc
	check xnat down
	start_run "$TB_CONFIG"
	pid=$(run_xnat_pid) || fail "no xnat process under pid $RUN_PID"
	check sed -i 's/^\[router\]/[router]\nfrom_the_future = 1/' "$run/applied.ini"
	check mkdir "$run/state.tmp"
	kill -HUP "$pid"
	wait_until 20 run_ended || fail "xnat run still runs: $(cat "$TB_WORK/run.log")"
	wait "$RUN_PID"
	rc=$?
	rmdir "$run/state.tmp"
	rmdir "$run" 2>/dev/null
	sed 's/^/  | /' "$TB_WORK/run.log"
	[ "$rc" = 2 ] || fail "xnat run exited $rc, not 2"
	grep -q "the router is down: its running config could not be rebuilt" \
		"$TB_WORK/run.log" || fail "the reload does not say the router is down"
	grep -q "failed and left the router down" "$TB_WORK/run.log" ||
		fail "run does not say the router is down"
	grep -q "is still running" "$TB_WORK/run.log" &&
		fail "run says the old config still runs"
	nothing_left
}

# xnat up with ifb0 and xdp = INITIAL: the veths run VETH_MODE, ifb0
# generic. A reload to native fails on ifb0 (the last port) and leaves
# exactly that; NAT works (LAN source port SPORT).
native_rolls_back() {
	local before
	ifb0_add
	up_ifb0 "$1"
	[ "$RC" = 0 ] || fail "up in $1 mode failed"
	ports_in_mode "$2" "$RTR_WAN_IF" "$RTR_LAN_IF"
	ports_in_mode generic ifb0
	before=$(router_snapshot)
	native_refused
	ports_in_mode "$2" "$RTR_WAN_IF" "$RTR_LAN_IF"
	ports_in_mode generic ifb0
	as_before_and_nat "$before" "$3"
}

# The XDP attach mode of the router's port DEV, as ip(8) reports it:
# generic, native, hw, multi (more than one mode at once) or none.
attach_mode() {
	local line
	line=$(ip -n "$NS_RTR" -d link show dev "$1") || return 1
	case $line in
	*xdpmulti*) echo multi ;;
	*xdpgeneric*) echo generic ;;
	*xdpoffload*) echo hw ;;
	*" xdp "* | *xdpdrv*) echo native ;;
	*) echo none ;;
	esac
}

# Every port DEV... runs XDP in MODE, or the test fails.
ports_in_mode() {
	local mode=$1 dev got
	shift
	for dev in "$@"; do
		got=$(attach_mode "$dev")
		echo "$dev: attached $got"
		[ "$got" = "$mode" ] || {
			ip -n "$NS_RTR" -d link show dev "$dev"
			fail "$dev runs XDP $got, the config says $mode"
		}
	done
}

# A reload that changes `xdp` (the attach mode) re-attaches every port in
# the new mode: generic -> native -> generic, each checked on the ports
# themselves, NAT working after each.
TEST_MODES[attach_mode_reload]="xdp offload"
test_attach_mode_reload() {
	local mode n=0 tok
	udp_echo_wan || fail "no server"
	for mode in generic native generic; do
		n=$((n + 1))
		reload_with "attach-$n-$mode" "router.xdp=$mode"
		ports_in_mode "$mode" "$RTR_WAN_IF" "$RTR_LAN_IF"
		tok=xnat-am-$n-$RANDOM
		check udp_from "$NS_LAN" $((40010 + n)) "$tok"
		[ "$CHECK_OUT" = "$tok" ] || fail "no NAT after the reload to $mode"
		check on_lan ping -c 2 -W 2 "$WAN_HOST4"
	done
}

# A reload to native mode that a port refuses (ifb has no native XDP; it
# comes last, after the veths were moved) exits 2, and every port runs in
# generic mode again, as before it; NAT still works.
TEST_MODES[attach_mode_rolls_back]="xdp offload"
test_attach_mode_rolls_back() { native_rolls_back generic generic 40021; }

# A reload whose last port fails after the ports before it were swapped to
# the new program (`auto` put the veths in native mode and ifb0 in generic;
# `native` swaps the veths in place, then ifb0 refuses) puts the old
# program back on every port: the same program ids as before, in the same
# modes.
TEST_MODES[swap_rolls_back]="xdp offload"
test_swap_rolls_back() { native_rolls_back auto native 40031; }

# A LAN port dropped on reload takes its flows out of the table, ended as
# their timeout would end them (their mappings keep their hold time): the
# kernel carries them now. Flows of the ports that stay are kept.
TEST_MODES[remove_port_flows]=xdp
test_remove_port_flows() {
	local two n1 n0
	testbed_add_lan_port || fail "no second LAN port"
	two=$(config_edit two 's/^lan( *)= lan0/lan\1= lan0, lan1/') || fail "config"
	check xnat up -c "$two"
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN1" 40002 one
	check udp_from "$NS_LAN" 40003 zero
	n1=$(flow_count "'$LAN1_HOST4' in f['src'] + f['new_dst']")
	n0=$(flow_count "'$LAN_HOST4' in f['src'] + f['new_dst']")
	echo "flow entries: lan1 host $n1, lan0 host $n0"
	[ "$n1" = 2 ] && [ "$n0" = 2 ] || fail "expected 2 entries each"
	check xnat up -c "$TB_CONFIG"
	n1=$(flow_count "'$LAN1_HOST4' in f['src'] + f['new_dst']")
	n0=$(flow_count "'$LAN_HOST4' in f['src'] + f['new_dst']")
	echo "after dropping lan1: lan1 host $n1, lan0 host $n0"
	[ "$n1" = 0 ] || fail "flows through the dropped port remain"
	[ "$n0" = 2 ] || fail "flows of lan0 were lost"
	ip -n "$NS_RTR" -d link show lan1 | grep -q prog/xdp && fail "XDP still on lan1"
	# The same socket still gets answers, through the kernel's NAT.
	check udp_from "$NS_LAN1" 40002 again
	[ "$CHECK_OUT" = again ] || fail "lan1 host gets no reply after the reload"
}

# lan1 as a second LAN port, a UDP exchange of its host (source port
# SPORT) in the flow table: 2 entries.
lan1_with_flow() {
	local two
	testbed_add_lan_port || fail "no second LAN port"
	two=$(config_edit two 's/^lan( *)= lan0/lan\1= lan0, lan1/') || fail "config"
	check xnat up -c "$two"
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN1" "$1" one
	[ "$(flow_count "'$LAN1_HOST4' in f['src'] + f['new_dst']")" = 2 ] ||
		fail "expected 2 flow entries of the lan1 host"
}

# After a reload that failed: the lan1 host's flow is still in the table
# and XDP still carries its next exchange (same source port SPORT).
lan1_flow_kept() {
	local n f0 f1
	n=$(flow_count "'$LAN1_HOST4' in f['src'] + f['new_dst']")
	echo "flow entries of the lan1 host after the failed reload: $n"
	[ "$n" = 2 ] || fail "the failed reload ended the lan1 host's flows"
	f0=$(xdp_forwarded)
	check udp_from "$NS_LAN1" "$1" again
	[ "$CHECK_OUT" = again ] || fail "no reply to the lan1 host"
	f1=$(xdp_forwarded)
	echo "XDP forwarded $((f1 - f0)) packets of the exchange"
	[ $((f1 - f0)) -ge 2 ] || fail "XDP did not carry the kept flow"
}

# A reload onto a port that runs another XDP program attached directly
# (xnat cannot share it) is a config error found before anything changes:
# exit 1 naming the port; the flows of the port it would drop (lan1) stay,
# and XDP carries them.
TEST_MODES[foreign_xdp_refused]=xdp
test_foreign_xdp_refused() {
	local cfg
	lan1_with_flow 40005
	ifb0_add
	check ip -n "$NS_RTR" link set dev ifb0 xdpgeneric \
		obj "$XNAT_ROOT/.output/xnat_sink.bpf.o" sec xdp
	cfg=$(config_edit foreign 's/^lan( *)= lan0/lan\1= lan0, ifb0/') || fail "config"
	xnat_rc check -c "$cfg"
	[ "$RC" = 1 ] || fail "check: expected exit 1, got $RC"
	xnat_rc up -c "$cfg"
	[ "$RC" = 1 ] || fail "expected exit 1, got $RC"
	grep -q "iface ifb0 runs another XDP program (xdp_sink)" <<<"$OUT" ||
		fail "the error does not say ifb0 runs another program"
	grep -q "Ended" <<<"$OUT" && fail "it ended connections"
	lan1_flow_kept 40005
}

# A reload that drops lan1 and then fails to attach (ifb0 has no native
# XDP) rolls back with lan1's flows intact: they end only once a reload
# has succeeded.
TEST_MODES[failed_reload_keeps_flows]=xdp
test_failed_reload_keeps_flows() {
	local cfg
	lan1_with_flow 40006
	ifb0_add
	cfg=$(config_edit native-ifb0 's/^lan( *)= lan0/lan\1= lan0, ifb0/' \
		's/^xdp( *)= auto/xdp\1= native/') || fail "config"
	native_refused_cfg "$cfg"
	grep -q "Ended" <<<"$OUT" && fail "it ended connections"
	lan1_flow_kept 40006
}

# `xnat up -c CFG` refused by ifb0 in native mode: exit 2, rolled back.
native_refused_cfg() {
	xnat_rc up -c "$1"
	[ "$RC" = 2 ] || fail "expected exit 2, got $RC"
	grep -q ifb0 <<<"$OUT" || fail "the error does not name ifb0"
	grep -q "rolled back" <<<"$OUT" || fail "does not say it rolled back"
}

# ---- a port made again ------------------------------------------------------------

xdp_on_lan() { ip -n "$NS_RTR" -d link show "$RTR_LAN_IF" | grep -q prog/xdp; }

# Packets XDP forwarded, whatever the path.
xdp_forwarded() {
	xnat stats --json 2>/dev/null | json_q "sum(j['counters'][r]['packets']
		for r in ('fwd_fast', 'fwd_slow', 'fwd_offload'))"
}

# 300 datagrams one way from the LAN host to a sink on the WAN host; fails
# unless XDP forwarded at least 250 of them (offload mode hands it the
# flow after the kernel's first two).
lan_stream_by_xdp() {
	local f0 f1
	bg_ns 30 "$NS_WAN" socat -u UDP-RECV:$SRV_PORT OPEN:/dev/null
	wait_listen "$NS_WAN" udp $SRV_PORT || { echo "no UDP sink"; return 1; }
	f0=$(xdp_forwarded)
	udp_one_way "$NS_LAN" "$WAN_HOST4" $SRV_PORT
	f1=$(xdp_forwarded)
	bg_stop "$BG_PID"
	echo "XDP forwarded $((f1 - f0)) of 300 datagrams from the LAN host"
	[ $((f1 - f0)) -ge 250 ]
}

# Flow entries through an interface that is not one of the testbed's
# ports now: the ports by name, anything else by number.
stale_flows() {
	flow_count "f['ingress'] not in ('$RTR_LAN_IF', '$RTR_WAN_IF') or
		f['egress'] not in ('$RTR_LAN_IF', '$RTR_WAN_IF')"
}

# The LAN port deleted and made again under its name (a new ifindex), as
# an adapter plugged back in comes back: XDP went with the old interface.
# `xnat run` sees the link event and applies its config again (cmd_run.c
# reapply()): the new interface runs XDP and carries the LAN host's
# traffic, and the flows through the old one end (maps_write()): their
# redirects would go nowhere.
TEST_MODES[port_made_again_run]="xdp offload"
test_port_made_again_run() {
	check xnat down
	start_run "$TB_CONFIG"
	lan_stream_by_xdp || fail "XDP did not carry the LAN host's stream"
	[ "$(flow_count True)" -ge 1 ] || fail "no flow entry for the stream"
	testbed_remake_lan || fail "cannot make $RTR_LAN_IF again"
	wait_until 15 xdp_on_lan ||
		fail "no XDP on the new $RTR_LAN_IF: $(cat "$TB_WORK/run.log")"
	grep -q "A port is a new interface" "$TB_WORK/run.log" ||
		fail "xnat run did not say why it applied the config again"
	wait_number -eq 0 "flow entries through the old $RTR_LAN_IF" stale_flows ||
		fail "flows through the old interface remain"
	lan_stream_by_xdp || fail "XDP did not carry the LAN host's stream again"
	stop_run
}

# The same with `xnat up`, a reload onto the new interface.
TEST_MODES[port_made_again_up]="xdp offload"
test_port_made_again_up() {
	lan_stream_by_xdp || fail "XDP did not carry the LAN host's stream"
	[ "$(flow_count True)" -ge 1 ] || fail "no flow entry for the stream"
	testbed_remake_lan || fail "cannot make $RTR_LAN_IF again"
	xdp_on_lan && fail "XDP on the new $RTR_LAN_IF before xnat up"
	check xnat up -c "$TB_CONFIG"
	xdp_on_lan || fail "xnat up left the new $RTR_LAN_IF without XDP"
	[ "$(stale_flows)" = 0 ] || fail "flows through the old interface remain: $(xnat flows)"
	lan_stream_by_xdp || fail "XDP did not carry the LAN host's stream"
}

# The same under `xnat run` when the operator's file was edited since (the
# mode, even) and not signalled: the port made again gets the running
# config (the applied copy), not the edit; status still names the
# operator's file and says it differs from what runs.
TEST_MODES[port_made_again_edited]="xdp offload"
test_port_made_again_edited() {
	local cfg=$TB_WORK/edited.ini
	check xnat down
	check cp "$TB_CONFIG" "$cfg"
	start_run "$cfg"
	check sed -i -E "s/^mode( *)= $TB_MODE/mode\1= kernel/" "$cfg"
	grep -q "^mode *= kernel" "$cfg" || fail "config not edited"
	testbed_remake_lan || fail "cannot make $RTR_LAN_IF again"
	wait_until 15 xdp_on_lan ||
		fail "no XDP on the new $RTR_LAN_IF: $(cat "$TB_WORK/run.log")"
	grep -q "A port is a new interface" "$TB_WORK/run.log" ||
		fail "xnat run did not apply the config again"
	grep -q "Switching" "$TB_WORK/run.log" &&
		fail "xnat run applied the unsignalled edit: $(cat "$TB_WORK/run.log")"
	check xnat status --json
	[ "$(json_q "j['mode']" <<<"$CHECK_OUT")" = "$TB_MODE" ] ||
		fail "the mode is not $TB_MODE any more"
	[ "$(json_q "j['config']" <<<"$CHECK_OUT")" = "$(realpath "$cfg")" ] ||
		fail "status does not name the operator's file"
	[ "$(json_q "j['config_changed']" <<<"$CHECK_OUT")" = true ] ||
		fail "status does not say the file differs from what runs"
	lan_stream_by_xdp || fail "XDP did not carry the LAN host's stream"
	stop_run
}

# ---- a next hop's MAC changes -----------------------------------------------------

# The WAN host's MAC changes (a replaced gateway, a failover) and the router's
# neighbour entry follows (what a gratuitous ARP does). The flow XDP carries
# must go to the new MAC, not on to the old one for as long as it lives:
# `xnat run` mends xdp mode's entry in place, and gives offload mode's back
# to the kernel, which forwards with the new MAC, and it is offloaded again.
# `xnat run`, the WAN echo server, and an exchange from the LAN host's
# source port SPORT that XDP carries by the third datagram.
run_with_exchange() {
	local sport=$1
	check xnat down
	start_run "$TB_CONFIG"
	udp_echo_wan || fail "no server"
	carried_exchanges "$sport" "$WAN_HOST4"
}

wan_listens() { [ -n "$(on "$NS_WAN" ss -Hlun src "$1")" ]; }
lan_reply_is() { [ "$(udp_from "$NS_LAN" "$1" "$2" "${3:-}" 2>/dev/null)" = "$2" ]; }

TEST_MODES[neighbour_mac_change]="xdp offload"
test_neighbour_mac_change() {
	local mac=02:00:5e:00:53:77
	run_with_exchange 40007
	check ip -n "$NS_WAN" link set dev "$HOST_IF" address "$mac"
	check ip -n "$NS_RTR" neigh replace "$WAN_HOST4" lladdr "$mac" \
		dev "$RTR_WAN_IF" nud reachable
	wait_until 10 lan_reply_is 40007 after ||
		fail "no reply after the MAC change: $(xnat flows; cat "$TB_WORK/run.log")"
	stop_run # the event log (stdout) is complete once run has ended
	if [ "$TB_MODE" = xdp ]; then
		grep -q "A neighbour's MAC changed ([0-9]* at once): [1-9]" "$TB_WORK/run.log" ||
			fail "run did not say it mended the flow entries"
	else
		grep -q '"why":"next_hop_changed"' "$TB_WORK/run.log" ||
			fail "the event log does not say why the flow went back"
	fi
}

# An address of the WAN segment moves to another host (a VIP failing over),
# while the host that had it keeps its own address and MAC. Only the flow to
# the moved address may follow: in xdp mode the two neighbours share the old
# MAC, and an entry to the host that stayed must keep it.
TEST_MODES[neighbour_address_moved]="xdp offload"
test_neighbour_address_moved() {
	local vip=198.19.0.3 mac=02:00:5e:00:53:78 ns2
	check ip -n "$NS_WAN" addr add "$vip/24" dev "$HOST_IF"
	check xnat down
	start_run "$TB_CONFIG"
	udp_echo_wan || fail "no server"
	udp_echo_wan "$NS_WAN" "$vip" || fail "no server on $vip"
	# (wait_listen saw the other server on the port: wait for this one)
	wait_until 5 wan_listens "$vip:$SRV_PORT" || fail "no server on $vip"
	for i in 1 2 3; do
		check udp_from "$NS_LAN" 40008 "stays$i"
		check udp_from "$NS_LAN" 40009 "moves$i" "$vip"
		[ "$CHECK_OUT" = "moves$i" ] || fail "no reply from $vip before"
	done
	[ "$(flow_count True)" -ge 2 ] || fail "XDP does not carry the exchanges"
	ns2=$(tb_ns_extra wan2) || fail "namespace"
	check ip -n "$NS_WAN" link add mv0 link "$HOST_IF" address "$mac" \
		type macvlan mode bridge
	check ip -n "$NS_WAN" link set mv0 netns "$ns2"
	check ip -n "$NS_WAN" addr del "$vip/24" dev "$HOST_IF"
	check ip -n "$ns2" addr add "$vip/24" dev mv0
	check ip -n "$ns2" link set mv0 up
	udp_echo_wan "$ns2" || fail "no server on the new host"
	check ip -n "$NS_RTR" neigh replace "$vip" lladdr "$mac" \
		dev "$RTR_WAN_IF" nud reachable
	wait_until 10 lan_reply_is 40009 moved "$vip" ||
		fail "no reply from $vip on its new host: $(cat "$TB_WORK/run.log")"
	check udp_from "$NS_LAN" 40008 stayed
	[ "$CHECK_OUT" = stayed ] || fail "the flow to the host that stayed broke"
	stop_run
}

# The WAN host gets another MAC and says nothing. Linux sends no gratuitous
# ARP unless arp_notify is set; a host that must ask for the router's MAC
# would tell its new one in the request, but this one needs not (it keeps
# a static entry for the router, and speaks no IPv6, whose neighbour
# discovery would tell it too). A kernel router learns the new MAC on its
# own: the neighbour entry goes stale, the next packet has it probed, the
# probes to the old MAC go unanswered, and a broadcast finds the new one.
# XDP's packets drive none of that; `xnat run` tells the kernel, every
# NEIGH_KEEPALIVE_MS (user/neigh_keepalive.h), which neighbours XDP sends
# to, and the flow follows the MAC the kernel learns. The router's
# neighbour timers are short here (an entry stale after about a second),
# so that the test waits for two of xnat's rounds (one finds the old MAC
# gone, the next has the address asked for again), not for the kernel's.
TEST_MODES[neighbour_mac_silent]="xdp offload kernel"
test_neighbour_mac_silent() {
	local mac=02:00:5e:00:53:79 p=net/ipv4/neigh/$RTR_WAN_IF rtr_mac
	rtr_mac=$(on_rtr cat "/sys/class/net/$RTR_WAN_IF/address") ||
		fail "no MAC of the router's WAN port"
	check on_rtr sysctl -qw "$p/base_reachable_time_ms=1000" \
		"$p/delay_first_probe_time=1" "$p/retrans_time_ms=200"
	# An entry made before keeps the reachable time it was made with: made
	# again (XDP builds a flow only towards a resolved next hop).
	check ip -n "$NS_RTR" neigh flush dev "$RTR_WAN_IF"
	check on_rtr ping -c 1 -W 2 "$WAN_HOST4"
	check on "$NS_WAN" sysctl -qw "net/ipv4/conf/$HOST_IF/arp_notify=0" \
		"net/ipv6/conf/$HOST_IF/disable_ipv6=1"
	run_with_exchange 40013
	# A new MAC flushes the host's neighbour entries, static ones too.
	check ip -n "$NS_WAN" link set dev "$HOST_IF" address "$mac"
	check ip -n "$NS_WAN" neigh replace "$RTR_WAN4" lladdr "$rtr_mac" \
		dev "$HOST_IF" nud permanent
	wait_until 40 lan_reply_is 40013 after ||
		fail "no reply after the silent MAC change: $(ip -n "$NS_RTR" neigh; xnat flows; cat "$TB_WORK/run.log")"
	ip -n "$NS_RTR" neigh show "$WAN_HOST4" dev "$RTR_WAN_IF" | grep -q "lladdr $mac" ||
		fail "the router's neighbour entry has not the new MAC: $(ip -n "$NS_RTR" neigh)"
	stop_run
	if [ "$TB_MODE" = xdp ]; then
		grep -q "A neighbour's MAC changed ([0-9]* at once): [1-9]" "$TB_WORK/run.log" ||
			fail "run did not say it mended the flow entries"
	elif [ "$TB_MODE" = offload ]; then
		grep -q '"why":"next_hop_changed"' "$TB_WORK/run.log" ||
			fail "the event log does not say why the flow went back"
	fi
}

# The router's WAN port gets another MAC (set by hand, a bond's new active
# port) and the WAN host learns it. The replies, now sent to the new MAC,
# must still hit their flow: in xdp mode a reply that missed would go up to
# a kernel that has never seen the connection (it would answer "port
# unreachable"). xnat run's refresh writes the new MAC into the entries.
TEST_MODES[port_mac_change]="xdp offload"
test_port_mac_change() {
	local mac=02:00:5e:00:53:7a
	run_with_exchange 40011
	check ip -n "$NS_RTR" link set dev "$RTR_WAN_IF" address "$mac"
	check ip -n "$NS_WAN" neigh replace "$RTR_WAN4" lladdr "$mac" \
		dev "$HOST_IF" nud reachable
	# Once run has refreshed (not before: a reply in between misses),
	# every reply must hit.
	wait_until 10 grep -q "A port's MAC changed: [1-9]" "$TB_WORK/run.log" ||
		fail "the flow entries did not follow: $(cat "$TB_WORK/run.log")"
	check udp_from "$NS_LAN" 40011 after
	[ "$CHECK_OUT" = after ] || fail "no reply after the MAC change"
	[ "$(counter pass_otherhost)" = 0 ] ||
		fail "replies to the new MAC missed their flow: $(xnat stats)"
	stop_run
}

# How many times `xnat run` said routes changed, and its last word on it.
routes_said() { grep -c "Routes changed" "$TB_WORK/run.log"; }
routes_said_more() { [ "$(routes_said)" -gt "$1" ]; }
routes_last() { grep "Routes changed" "$TB_WORK/run.log" | tail -1; }
# UDP datagrams the namespace NS received.
# shellcheck disable=SC2016 # awk's $2, not the shell's
udp_received() { ip netns exec "$1" awk '/^Udp: [0-9]/ { print $2 }' /proc/net/snmp; }

# Flows XDP carries to or from DST.
flows_to() { flow_count "'$1' in f['dst'] + f['new_dst']"; }
no_flows_to() { [ "$(flows_to "$1")" = 0 ]; }
# An exchange from the LAN host's port SPORT with DST answered, and the
# UDP datagrams NS received past GOT: the exchange went through NS.
# reply_through SPORT DST NS GOT
reply_through() {
	lan_reply_is "$1" moved "$2" && [ "$(udp_received "$3")" -gt "$4" ]
}
# An exchange from SPORT with DST answered, and XDP carries it.
carried_to() { lan_reply_is "$1" more "$2" && [ "$(flows_to "$2")" -ge 1 ]; }

# Run STEP (a command) and wait until `xnat run` has said what the route
# change did.
route_step() {
	local n
	n=$(routes_said)
	check "$@"
	wait_until 10 routes_said_more "$n" ||
		fail "run did not follow: $*: $(cat "$TB_WORK/run.log")"
}

# A second router of the WAN segment, at GW (a macvlan in a namespace of
# its own, SECOND, which the router has never resolved), that has DST as
# the WAN host also does; each runs an echo server. The router routes DST
# to the WAN host. second_router DST GW
second_router() {
	local dst=$1 gw=$2 mac=02:00:5e:00:53:7b
	check ip -n "$NS_WAN" addr add "$dst/32" dev lo
	check ip -n "$NS_RTR" route add "$dst/32" via "$WAN_HOST4"
	SECOND=$(tb_ns_extra wan2) || fail "namespace"
	check ip -n "$NS_WAN" link add mv0 link "$HOST_IF" address "$mac" \
		type macvlan mode bridge
	check ip -n "$NS_WAN" link set mv0 netns "$SECOND"
	check ip -n "$SECOND" addr add "$gw/24" dev mv0
	check ip -n "$SECOND" addr add "$dst/32" dev lo
	check ip -n "$SECOND" link set mv0 up
	check ip -n "$SECOND" link set lo up
	udp_echo_wan "$NS_WAN" "$dst" || fail "no server"
	udp_echo_wan "$SECOND" "$dst" || fail "no server on the second router"
}

# Three exchanges from the LAN host's port SPORT with DST, answered, and
# XDP carries them (offload mode: once the kernel has accepted the first).
# carried_exchanges SPORT DST
carried_exchanges() {
	local i
	for i in 1 2 3; do
		check udp_from "$NS_LAN" "$1" "before$i" "$2"
		[ "$CHECK_OUT" = "before$i" ] || fail "no reply before the change"
	done
	[ "$(flows_to "$2")" -ge 1 ] || fail "XDP does not carry the exchange"
}

# A route changes while XDP carries a flow to 198.19.8.1, an address both
# the WAN host and a second router of the WAN segment have (each with an
# echo server). A route elsewhere leaves the flow as it is. A route through
# the second router, whose address the router has never resolved, moves it
# there: offload mode gives it back to the kernel, which forwards it along
# the new route and offloads it again; xdp mode routes it again, once the
# kernel has resolved the new next hop. A policy rule sends it back to the
# WAN host. A blackhole route then ends it.
TEST_MODES[route_change_follows]="xdp offload"
test_route_change_follows() {
	local dst=198.19.8.1 gw=198.19.0.4 ns2 got
	second_router "$dst" "$gw"
	ns2=$SECOND
	check xnat down
	start_run "$TB_CONFIG"
	carried_exchanges 40010 "$dst"

	route_step ip -n "$NS_RTR" route add 198.19.9.0/24 via "$WAN_HOST4"
	case "$TB_MODE" in
	xdp) routes_last | grep -q ": 0 flow entries to a new next hop, 0 waiting for theirs to be resolved, 0 connections ended" ;;
	*) routes_last | grep -q ": 0 offloaded flow entries back" ;;
	esac || fail "a route elsewhere moved the flow: $(routes_last)"

	got=$(udp_received "$ns2")
	route_step ip -n "$NS_RTR" route replace "$dst/32" via "$gw"
	# (xdp mode: through the old next hop until the new one is resolved)
	wait_until 10 reply_through 40010 "$dst" "$ns2" "$got" ||
		fail "the flow did not move to the new next hop: $(xnat flows; cat "$TB_WORK/run.log")"
	# (offload mode: once the kernel has forwarded it again)
	wait_until 10 carried_to 40010 "$dst" || fail "XDP no longer carries the flow"

	# A policy rule (which destinations it reaches is not in its event):
	# every connection is routed again, and this one goes back.
	route_step ip -n "$NS_RTR" route add "$dst/32" via "$WAN_HOST4" table 100
	got=$(udp_received "$NS_WAN")
	route_step ip -n "$NS_RTR" rule add to "$dst/32" lookup 100 priority 100
	routes_last | grep -q "(any destination)" ||
		fail "a rule change was not taken for any destination: $(routes_last)"
	wait_until 10 reply_through 40010 "$dst" "$NS_WAN" "$got" ||
		fail "the flow did not follow the policy rule: $(xnat flows; cat "$TB_WORK/run.log")"

	route_step ip -n "$NS_RTR" route replace blackhole "$dst/32" table 100
	wait_until 10 no_flows_to "$dst" ||
		fail "the flow outlived its route: $(xnat flows; cat "$TB_WORK/run.log")"
	lan_reply_is 40010 gone "$dst" && fail "a reply through a blackhole route"
	stop_run
	if [ "$TB_MODE" = offload ]; then
		grep -q '"why":"route_changed"' "$TB_WORK/run.log" ||
			fail "the event log does not say why the flow went back"
	fi
}

# Routes that changed while no `xnat run` watched them (the router brought
# up by `xnat up`, run started later; or the moment of a reload, which
# opens the watch anew): as its watch starts, run routes every connection
# again (xdp mode) or gives every offloaded entry back to the kernel
# (offload mode), and the flow takes the route it has now.
TEST_MODES[route_change_before_run]="xdp offload"
test_route_change_before_run() {
	local dst=198.19.8.1 gw=198.19.0.4 got said
	second_router "$dst" "$gw"
	carried_exchanges 40013 "$dst"
	got=$(udp_received "$SECOND")
	check ip -n "$NS_RTR" route replace "$dst/32" via "$gw"
	start_run "$TB_CONFIG"
	wait_until 10 grep -q "as the watch started" "$TB_WORK/run.log" ||
		fail "run did not say what its start did: $(cat "$TB_WORK/run.log")"
	said=$(grep "as the watch started" "$TB_WORK/run.log")
	case "$TB_MODE" in
	xdp) grep -q ", 1 waiting for theirs to be resolved" <<<"$said" ;;
	*) grep -q ": [1-9][0-9]* offloaded flow entries back" <<<"$said" ;;
	esac || fail "run's start did not take the flow: $said"
	wait_until 10 reply_through 40013 "$dst" "$SECOND" "$got" ||
		fail "the flow did not follow the route: $(xnat flows; cat "$TB_WORK/run.log")"
	wait_until 10 carried_to 40013 "$dst" || fail "XDP no longer carries the flow"
	stop_run
	if [ "$TB_MODE" = offload ]; then
		grep -q '"why":"watch_started"' "$TB_WORK/run.log" ||
			fail "the event log does not say why the flow went back"
	fi
}

# A port taken down while XDP carries a flow out of it, with a second
# route to the destination through another port (one xnat does not run
# on: the kernel forwards what goes there). IPv4 deletes the routes
# through a port taken down without a route event; run takes a link's
# change for a change of every route: the connection ends (xdp mode) or
# goes back to the kernel (offload mode), and its next exchange takes
# the second route instead of the dead port.
TEST_MODES[route_link_down]="xdp offload"
test_route_link_down() {
	local dst=198.19.8.1 got
	testbed_add_lan_port || fail "no second port"
	check ip -n "$NS_WAN" addr add "$dst/32" dev lo
	check ip -n "$NS_LAN1" addr add "$dst/32" dev lo
	check ip -n "$NS_RTR" route add "$dst/32" via "$WAN_HOST4" metric 10
	check ip -n "$NS_RTR" route add "$dst/32" via "$LAN1_HOST4" metric 20
	udp_echo_wan "$NS_WAN" "$dst" || fail "no server"
	udp_echo_wan "$NS_LAN1" "$dst" || fail "no server behind the second port"
	check xnat down
	start_run "$TB_CONFIG"
	carried_exchanges 40014 "$dst"
	got=$(udp_received "$NS_LAN1")
	route_step ip -n "$NS_RTR" link set "$RTR_WAN_IF" down
	routes_last | grep -q "(a port went up or down)" ||
		fail "run did not take the link for a route change: $(routes_last)"
	wait_until 10 no_flows_to "$dst" ||
		fail "the flow outlived its port: $(xnat flows; cat "$TB_WORK/run.log")"
	wait_until 10 reply_through 40014 "$dst" "$NS_LAN1" "$got" ||
		fail "the flow did not take the second route: $(cat "$TB_WORK/run.log")"
	stop_run
}

# A link that is not one of the router's ports goes up and down (a
# container's veth on a host that also routes): no flow of XDP's can leave
# by it, so nothing is routed again, and the connection stays as it was.
TEST_MODES[link_other_quiet]="xdp offload"
test_link_other_quiet() {
	run_with_exchange 40014
	check on_rtr ip link add kx0 type veth peer name kx1
	# No IPv6 on them: its link-local routes would be route changes.
	check on_rtr sysctl -qw net/ipv6/conf/kx0/disable_ipv6=1 \
		net/ipv6/conf/kx1/disable_ipv6=1
	check on_rtr ip link set kx0 up
	check on_rtr ip link set kx1 up
	check on_rtr ip link set kx0 down
	check on_rtr ip link del kx0
	check udp_from "$NS_LAN" 40014 after
	[ "$CHECK_OUT" = after ] || fail "no reply after the other link's changes"
	# Past a read of the events (250 ms) and the routes' pace (1 s).
	sleep 1.5
	[ "$(flows_to "$WAN_HOST4")" -ge 1 ] || fail "the flow left XDP"
	stop_run
	if grep -q "Routes changed\|\"why\":\"route_changed\"" "$TB_WORK/run.log"; then
		fail "another link's state was taken for a route change"
	fi
}

# A connection whose new next hop never answers ends after its wait
# (flow_route.h, FLOW_ROUTE_WAIT_MS), however many route changes come
# meanwhile: each walks the flow table again and finds it still waiting,
# which must not start its wait anew (a routing daemon's churn, or a LAN
# host's, would keep it on a next hop its route no longer names).
TEST_MODES[route_wait_bounded]=xdp
test_route_wait_bounded() {
	local dst=198.19.8.1 i
	check ip -n "$NS_WAN" addr add "$dst/32" dev lo
	check ip -n "$NS_RTR" route add "$dst/32" via "$WAN_HOST4"
	check xnat down
	start_run "$TB_CONFIG"
	udp_echo_wan "$NS_WAN" "$dst" || fail "no server"
	check udp_from "$NS_LAN" 40012 before "$dst"
	[ "$CHECK_OUT" = before ] || fail "no reply before the change"
	[ "$(flows_to "$dst")" -ge 1 ] || fail "XDP does not carry the exchange"

	# 198.19.0.99: on the WAN segment, and nobody's.
	route_step ip -n "$NS_RTR" route replace "$dst/32" via 198.19.0.99
	routes_last | grep -q ", 1 waiting for theirs to be resolved" ||
		fail "the connection is not waiting: $(routes_last)"
	# A route that covers it changing every second (each walk finds it
	# waiting again), for four times the wait.
	for i in $(seq 16); do
		no_flows_to "$dst" && break
		route_step ip -n "$NS_RTR" route replace 198.19.8.0/24 \
			via "$WAN_HOST4" metric "$i"
	done
	no_flows_to "$dst" ||
		fail "the connection still waits after $i route changes: $(cat "$TB_WORK/run.log")"
	grep -q ", 1 connections ended" "$TB_WORK/run.log" ||
		fail "run did not say it ended the connection: $(cat "$TB_WORK/run.log")"
	stop_run
}

# ---- locking --------------------------------------------------------------------

# While another command holds the router's lock, `up` waits, then applies.
TEST_MODES[lock_serializes]=xdp
test_lock_serializes() {
	local lock=/run/xnat/$TB_RTR_INO/lock cfg holder up_pid
	cfg=$(config_edit fwd9090 's|^(tcp/8080 = .*)|\1\ntcp/9090 = 198.18.1.10:90|') ||
		fail "config"
	timeout 20 flock "$lock" sleep 3 &
	holder=$!
	echo "$holder" >>"$TB_WORK/pids"
	wait_until 5 bash -c "! flock -n '$lock' true" || fail "lock not taken"
	timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" up -c "$cfg" >"$TB_WORK/up.log" 2>&1 &
	up_pid=$!
	sleep 1
	kill -0 "$up_pid" 2>/dev/null || fail "up did not wait for the lock: $(cat "$TB_WORK/up.log")"
	on_rtr nft list table inet xnat | grep -q 9090 && fail "applied while locked"
	wait "$holder"
	wait "$up_pid" || fail "up failed after the lock was released: $(cat "$TB_WORK/up.log")"
	on_rtr nft list table inet xnat | grep -q 9090 || fail "not applied after the lock"
}

# `xnat run` does not put its own config back over a concurrent `up`: it
# follows what the other command applied.
TEST_MODES[run_follows_up]=xdp
test_run_follows_up() {
	local cfg
	cfg=$(config_edit fwd9090 's|^(tcp/8080 = .*)|\1\ntcp/9090 = 198.18.1.10:90|') ||
		fail "config"
	check xnat down
	start_run "$TB_CONFIG"
	check xnat up -c "$cfg"
	# A link event makes run refresh now; and then the 5 s tick.
	check ip -n "$NS_RTR" addr add 198.19.0.77/24 dev "$RTR_WAN_IF"
	sleep 6
	on_rtr nft list table inet xnat | grep -q 9090 ||
		fail "xnat run put its old config back over the concurrent up"
	bpftool map dump pinned "$(pin_dir)/xnat_forwards" | grep -q 33315 ||
		fail "forward 9090 missing from the map"
	grep -q "following it" "$TB_WORK/run.log" || fail "run did not say it follows"
	stop_run
	nothing_left
}

# The xnat process of `xnat run` (RUN_PID is its timeout(1) wrapper).
run_xnat_pid() { pgrep -P "$RUN_PID" -x xnat; }

# `xnat down` and a fresh `xnat up` of another config while `xnat run`
# does not look (stopped here, as one between two refreshes would be): the
# new router's record counts from generation 1 again, the number run's own
# had. Run must still tell that another command applied it (the record's
# instance) and follow that config, not put its own back at its next
# refresh, which the nft table removed makes it re-apply.
TEST_MODES[run_down_up]="xdp offload kernel"
test_run_down_up() {
	local cfg pid stopped=0 lock=/run/xnat/$TB_RTR_INO/lock rc_down rc_up
	cfg=$(config_edit fwd9090 's|^(tcp/8080 = .*)|\1\ntcp/9090 = 198.18.1.10:90|') ||
		fail "config"
	check xnat down
	start_run "$TB_CONFIG"
	[ "$(generation)" = 1 ] || fail "run's own up is not generation 1"
	pid=$(run_xnat_pid) || fail "no xnat process under pid $RUN_PID"
	# Stopped while it does not hold the lock, or down would wait on it.
	for _ in $(seq 50); do
		kill -STOP "$pid" || fail "cannot stop pid $pid"
		flock -n "$lock" true && { stopped=1; break; }
		kill -CONT "$pid"
		sleep 0.1
	done
	[ $stopped = 1 ] || fail "xnat run always holds the lock"
	xnat_rc down
	rc_down=$RC
	xnat_rc up -c "$cfg"
	rc_up=$RC
	check on_rtr nft delete table inet xnat
	kill -CONT "$pid"
	[ "$rc_down" = 0 ] && [ "$rc_up" = 0 ] || fail "down or up failed"
	[ "$(generation)" = 1 ] ||
		fail "the new up is not generation 1 (the case under test)"
	wait_until 20 on_rtr nft list table inet xnat ||
		fail "xnat run did not put a table back: $(cat "$TB_WORK/run.log")"
	on_rtr nft list table inet xnat | grep -q 9090 ||
		fail "xnat run put its old config back over the new up: $(cat "$TB_WORK/run.log")"
	if [ "$TB_MODE" != kernel ]; then
		bpftool map dump pinned "$(pin_dir)/xnat_forwards" | grep -q 33315 ||
			fail "forward 9090 missing from the map"
	fi
	grep -q "brought the router up anew: following it" "$TB_WORK/run.log" ||
		fail "run did not say it follows: $(cat "$TB_WORK/run.log")"
	kill -0 "$RUN_PID" 2>/dev/null || fail "xnat run exited"
	stop_run
	nothing_left
}

# The mode the router is in, three ways, as "RECORDED PORTS TABLE": as
# recorded (status), on the LAN port (xdp: XDP attached, in xdp and
# offload modes; none) and as the nft table has it (offload's chain
# mark_accepted, xdp's port split for the kernel's own NAT, kernel).
router_modes() {
	local rec ports=none table=kernel t
	rec=$(xnat status --json 2>/dev/null | json_q "j['mode']")
	xdp_on_lan && ports=xdp
	t=$(on_rtr nft list table inet xnat 2>&1)
	if grep -q "chain mark_accepted" <<<"$t"; then
		table=offload
	elif grep -qE "oifname .* (masquerade|snat) .*:[0-9]+-[0-9]+" <<<"$t"; then
		table=xdp
	elif ! grep -q "table inet xnat" <<<"$t"; then
		table=none
	fi
	echo "$rec $ports $table"
}

# The router is wholly in MODE: record, ports and table agree.
router_in_mode() {
	local got want
	got=$(router_modes)
	case $1 in
	kernel) want="kernel none kernel" ;;
	*) want="$1 xdp $1" ;;
	esac
	echo "router: $got (recorded, ports, table)"
	[ "$got" = "$want" ] || fail "the router is not wholly in $1 mode: $got"
}

# A mode switch (`up` with another mode's config) while `xnat run` runs:
# the switch tears the router down in place, and run's refresh (the link
# events of the detach wake it) waits for the lock instead of finding no
# record and removing the pin directory under the switch. The switch
# completes, run follows it (its generation moved on), and two switches
# back and forth at once are serialised by the lock: the later one waits
# and the router ends wholly in its mode.
TEST_MODES[mode_switch_under_run]="xdp offload kernel"
test_mode_switch_under_run() {
	local other=xdp cfg_other d p1
	case $TB_MODE in xdp) other=offload ;; offload) other=xdp ;; esac
	cfg_other=$(config_variant "switch-$other" "router.mode=$other") ||
		fail "config"
	check xnat down
	start_run "$TB_CONFIG"
	xnat_rc up -c "$cfg_other"
	[ "$RC" = 0 ] || fail "the switch to $other mode under xnat run failed"
	wait_until 15 grep -q "following it" "$TB_WORK/run.log" ||
		fail "xnat run did not follow the switch: $(cat "$TB_WORK/run.log")"
	kill -0 "$RUN_PID" 2>/dev/null ||
		fail "xnat run exited: $(cat "$TB_WORK/run.log")"
	router_in_mode "$other"
	for d in 0.3 0.8; do
		echo "+ xnat up -c $TB_CONFIG &, then after ${d}s xnat up -c $cfg_other"
		xnat up -c "$TB_CONFIG" >"$TB_WORK/switch-$d.log" 2>&1 &
		p1=$!
		sleep "$d"
		xnat_rc up -c "$cfg_other"
		wait "$p1" || fail "the first switch failed: $(cat "$TB_WORK/switch-$d.log")"
		[ "$RC" = 0 ] || fail "the second switch failed"
		router_in_mode "$other"
	done
	kill -0 "$RUN_PID" 2>/dev/null ||
		fail "xnat run exited: $(cat "$TB_WORK/run.log")"
	stop_run
	nothing_left
}

# The record's generation number.
generation() { sed -n 's/^generation //p' "/run/xnat/$TB_RTR_INO/state"; }
# The sysctls the record will write back at `down`, sorted.
recorded_sysctls() { sed -n 's/^sysctl //p' "/run/xnat/$TB_RTR_INO/state" | sort; }

# The other mode a switch goes to from the test's: xdp <-> offload,
# kernel -> xdp.
other_mode() { case $TB_MODE in xdp) echo offload ;; *) echo xdp ;; esac; }

# A mode switch whose new mode fails after the old one was taken down
# (ifb0, a new LAN port, refuses native XDP; the veths before it were
# attached) puts the old mode back: the running config, applied again from
# a clean start (its connections are reset) and committed under a larger
# generation. Exit 2 saying so; the router is wholly in its old mode,
# running the operator's file as recorded, and NATs; down leaves nothing.
TEST_MODES[mode_switch_fails_back]="xdp offload kernel"
test_mode_switch_fails_back() {
	local other cfg gen0 gen1 tok=xnat-sw-$RANDOM cfg_path sysctls0
	other=$(other_mode)
	ifb0_add
	cfg=$(config_variant "switch-fails-$other" "router.mode=$other" \
		"router.xdp=native" "router.lan=$RTR_LAN_IF, ifb0") || fail "config"
	router_in_mode "$TB_MODE"
	gen0=$(generation)
	sysctls0=$(recorded_sysctls)
	xnat_rc up -c "$cfg"
	[ "$RC" = 2 ] || fail "expected exit 2, got $RC"
	grep -q ifb0 <<<"$OUT" || fail "the error does not name ifb0"
	cfg_path=$(realpath "$TB_CONFIG")
	grep -qF "; rolled back: the router runs $cfg_path in $TB_MODE mode again (its connections were reset)" \
		<<<"$OUT" || fail "does not say it rolled back to $TB_MODE mode"
	check xnat status
	router_in_mode "$TB_MODE"
	[ "$(xnat_json_q status "j['config']")" = "$cfg_path" ] ||
		fail "status does not name the running config's file"
	[ "$(xnat_json_q status "j['config_changed']")" = false ] ||
		fail "status says the running config was edited"
	ip -n "$NS_RTR" -d link show ifb0 | grep -q prog/xdp && fail "XDP left on ifb0"
	gen1=$(generation)
	echo "generation: $gen0 before the switch, $gen1 after the rollback"
	[ "$gen1" -gt "$gen0" ] || fail "the generation did not grow"
	# The new mode's own sysctls were put back with its undo: the record
	# must not keep them, or `down` would write them again later.
	[ "$(recorded_sysctls)" = "$sysctls0" ] ||
		fail "the record's sysctls are not the old mode's: $(recorded_sysctls) against $sysctls0"
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN" 40051 "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "no NAT after the rollback"
	check xnat down
	nothing_left
}

# A mode switch that fails and whose rollback fails too: the record
# cannot be written, so neither the new mode's commit nor the old one's
# goes through. Each apply is undone; the router is left wholly down
# (exit 2), and the command gives both errors and says nothing is left.
TEST_MODES[mode_switch_rollback_fails]="xdp offload kernel"
test_mode_switch_rollback_fails() {
	local run=/run/xnat/$TB_RTR_INO other cfg
	other=$(other_mode)
	cfg=$(config_variant "switch-$other" "router.mode=$other") || fail "config"
	router_in_mode "$TB_MODE"
	check mkdir "$run/state.tmp"
	xnat_rc up -c "$cfg"
	rmdir "$run/state.tmp"
	# The record's directory stays only for what the test put in it.
	rmdir "$run" 2>/dev/null
	[ "$RC" = 2 ] || fail "expected exit 2, got $RC"
	grep -qF "; rolling back to $(realpath "$TB_CONFIG") in $TB_MODE mode failed too: failed to save state" \
		<<<"$OUT" || fail "does not give both errors: $OUT"
	grep -q "nothing was left applied" <<<"$OUT" || fail "does not say the router is down: $OUT"
	nothing_left
	xnat_rc status
	[ "$RC" = 3 ] || fail "status exits $RC, not 3 (not up)"
}

# The same failed switch while a LAN port of the running config is gone
# (lan1_gone): the old mode goes back without it, and the command says so
# in its error, not only in a warning before it. The router NATs.
TEST_MODES[mode_switch_fails_port_gone]="xdp offload kernel"
test_mode_switch_fails_port_gone() {
	local other cfg tok=xnat-swg-$RANDOM
	other=$(other_mode)
	lan1_gone
	ifb0_add
	cfg=$(config_variant "switch-fails-$other" "router.mode=$other" \
		"router.xdp=native" "router.lan=$RTR_LAN_IF, ifb0") || fail "config"
	xnat_rc up -c "$cfg"
	[ "$RC" = 2 ] || fail "expected exit 2, got $RC"
	grep -qF "; rolled back: the router runs $(realpath "$TB_WORK/two.ini") in $TB_MODE mode again, without lan1 (gone) (its connections were reset)" \
		<<<"$OUT" || fail "does not say it rolled back without lan1: $OUT"
	router_in_mode "$TB_MODE"
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN" 40052 "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "no NAT after the rollback"
	check xnat down
	nothing_left
}

# ---- signals ----------------------------------------------------------------------

# After `up` from a down router ended by a signal, the router is either
# wholly up (record, ports and table in the test's mode, the pins in xdp
# and offload modes; NAT works from the LAN host's source port SPORT) and
# then taken down, or wholly as before: nothing_left. Prints which, last.
up_or_nothing() {
	if [ -e "/run/xnat/$TB_RTR_INO/state" ]; then
		router_in_mode "$TB_MODE"
		[ "$TB_MODE" = kernel ] || [ -e "$(pin_dir)/xnat_flows" ] ||
			fail "up, but its pins are missing: $(ls "$(pin_dir)")"
		# Tries for 10 s: a datagram may be lost on a loaded machine.
		wait_until 10 lan_reply_is "$1" "up-$1" ||
			fail "up, but no NAT"
		check xnat down
		nothing_left
		echo up
	else
		nothing_left
		echo before
	fi
}

# A signal (SIGTERM, SIGHUP) to `xnat up` while it applies takes effect
# once the apply has committed or rolled back: the router ends wholly up
# or wholly as before, never half applied (a table without a record, some
# ports attached, sysctls changed with their old values lost). Sent at
# delays spread over the time a whole `up` takes (process start included),
# so that most land during the apply (each was half applied before the
# signals were held); each outcome is checked and counted.
TEST_MODES[signal_during_up]="xdp offload kernel"
test_signal_during_up() {
	local n=24 i t0 span d pid rc sig got up=0 before=0
	udp_echo_wan || fail "no server"
	check xnat down
	t0=$(now_ms)
	check xnat up -c "$TB_CONFIG"
	span=$(($(now_ms) - t0))
	check xnat down
	echo "a whole up takes ${span} ms; signals at up to $((span * 5 / 4)) ms"
	for i in $(seq 1 $n); do
		d=$((span * 5 * i / (4 * n)))
		sig=TERM
		[ $((i % 2)) = 0 ] && sig=HUP
		timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" up -c "$TB_CONFIG" \
			>"$TB_WORK/sig.log" 2>&1 &
		pid=$!
		echo "$pid" >>"$TB_WORK/pids"
		sleep "$((d / 1000)).$(printf %03d $((d % 1000)))"
		kill -"$sig" "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null # not bash's "Hangup" line
		rc=$?
		if ! got=$(up_or_nothing $((40100 + i))); then
			echo "$got"
			sed 's/^/  | /' "$TB_WORK/sig.log"
			fail "SIG$sig at ${d} ms (exit $rc) left the router half applied"
		fi
		got=${got##*$'\n'}
		echo "SIG$sig at ${d} ms: exit $rc, router $got"
		case $got in up) up=$((up + 1)) ;; *) before=$((before + 1)) ;; esac
	done
	echo "$n signals: router wholly up after $up, wholly as before after $before"
}

# ---- WAN address ------------------------------------------------------------------

# The WAN address changes under `xnat run` (DHCP): flows NATed to the old
# address leave the table, new ones use the new address, and the nft
# hairpin rules follow.
TEST_MODES[wan_address_change]=xdp
test_wan_address_change() {
	local new=198.19.0.5
	check xnat down
	start_run "$TB_CONFIG"
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN" 40004 before
	[ "$(flow_count "f['new_src'].startswith('$RTR_WAN4:')")" -ge 1 ] ||
		fail "no flow NATed to $RTR_WAN4"
	check ip -n "$NS_RTR" addr del "$RTR_WAN4/24" dev "$RTR_WAN_IF"
	check ip -n "$NS_RTR" addr add "$new/24" dev "$RTR_WAN_IF"
	# The address went with the neighbours of its subnet: resolve the WAN
	# host again, or the next packet goes to the kernel (pass_no_neigh).
	tb_resolve "$NS_RTR" "$WAN_HOST4" || fail "WAN host unreachable"
	wait_until 10 no_flows "'$RTR_WAN4:' in f['new_src'] + f['dst']" ||
		fail "flows NATed to the old address remain"
	# Two changes, two refreshes: until the second one, NAT waits for an
	# address and the kernel takes new flows (pass_no_nat_addr).
	wait_until 10 grep -q "NAT now uses the new one" "$TB_WORK/run.log" ||
		fail "run did not take up the new address"
	check udp_from "$NS_LAN" 40004 after
	[ "$CHECK_OUT" = after ] || fail "no reply after the address change"
	[ "$(flow_count "f['new_src'].startswith('$new:')")" -ge 1 ] ||
		fail "new flow not NATed to $new: $(xnat flows; cat "$TB_WORK/run.log")"
	check on_rtr nft list table inet xnat
	grep -q "ip daddr $new" <<<"$CHECK_OUT" || fail "hairpin rule has not the new address"
	grep -q "ip daddr $RTR_WAN4 " <<<"$CHECK_OUT" && fail "old address still in the rules"
	stop_run
}

# A LAN port of the running config is deleted (an adapter unplugged)
# under `xnat run`: run says so once and keeps the rest in step. Here the
# WAN address changes after it: the nft table follows it and a new
# exchange from the LAN host is NATed to it (in xdp mode by XDP).
TEST_MODES[run_port_gone]="xdp offload kernel"
test_run_port_gone() {
	local new=198.19.0.5 two said
	check xnat down
	testbed_add_lan_port || fail "no second LAN port"
	two=$(config_edit two 's/^lan( *)= lan0/lan\1= lan0, lan1/') || fail "config"
	start_run "$two"
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN" 40071 before
	check ip -n "$NS_RTR" link del "$RTR_LAN1_IF"
	wait_until 10 grep -q "lan1, in the running config, is gone" \
		"$TB_WORK/run.log" || fail "run does not say lan1 is gone"
	check ip -n "$NS_RTR" addr del "$RTR_WAN4/24" dev "$RTR_WAN_IF"
	check ip -n "$NS_RTR" addr add "$new/24" dev "$RTR_WAN_IF"
	tb_resolve "$NS_RTR" "$WAN_HOST4" || fail "WAN host unreachable"
	wait_until 10 grep -q "NAT now uses the new one" "$TB_WORK/run.log" ||
		fail "run did not take up the new address while lan1 is gone: $(cat "$TB_WORK/run.log")"
	wait_until 10 hairpin_names "$new" || fail "the nft table has not the new address"
	check xnat status
	grep -q "^gone: *lan1 " <<<"$CHECK_OUT" || fail "status does not say lan1 is gone"
	grep -q "^nat: *$new " <<<"$CHECK_OUT" || fail "status does not show the NAT address"
	[ "$(xnat status --json 2>/dev/null | json_q "','.join(j['ports_gone'])")" = lan1 ] ||
		fail "status --json ports_gone is not [lan1]"
	check udp_from "$NS_LAN" 40072 after
	[ "$CHECK_OUT" = after ] || fail "no reply after the address change"
	if [ "$TB_MODE" = xdp ]; then
		[ "$(flow_count "f['new_src'].startswith('$new:')")" -ge 1 ] ||
			fail "new flow not NATed to $new by XDP: $(xnat flows)"
	fi
	# Said once, not at every refresh (an event or 5 s each).
	sleep 6
	said=$(grep -c "lan1, in the running config, is gone" "$TB_WORK/run.log")
	[ "$said" = 1 ] || fail "run said lan1 is gone $said times"
	grep -q "interface lan1 not found" "$TB_WORK/run.log" &&
		fail "run warned that lan1 is not found: $(cat "$TB_WORK/run.log")"
	stop_run
	nothing_left
}

# `xnat run` starts while the WAN has no address yet: NAT waits (counted as
# pass_no_nat_addr), and works once the address comes.
TEST_MODES[wan_address_late]=xdp
test_wan_address_late() {
	check xnat down
	check ip -n "$NS_RTR" addr del "$RTR_WAN4/24" dev "$RTR_WAN_IF"
	check ip -n "$NS_RTR" route add 198.19.0.0/24 dev "$RTR_WAN_IF"
	# Without an address the router cannot ARP: a static neighbour, so
	# that XDP routes the packet and stops at the missing NAT address.
	check ip -n "$NS_RTR" neigh replace "$WAN_HOST4" dev "$RTR_WAN_IF" \
		lladdr "$(ip -n "$NS_WAN" link show "$HOST_IF" | awk '$1 == "link/ether" { print $2 }')" nud permanent
	start_run "$TB_CONFIG"
	udp_echo_wan || fail "no server"
	udp_from "$NS_LAN" 40005 early && fail "NAT without an address?"
	[ "$(counter pass_no_nat_addr)" -ge 1 ] ||
		fail "pass_no_nat_addr not counted: $(xnat stats)"
	check ip -n "$NS_RTR" route del 198.19.0.0/24 dev "$RTR_WAN_IF"
	check ip -n "$NS_RTR" addr add "$RTR_WAN4/24" dev "$RTR_WAN_IF"
	# xnat run has it once its rules name it (the hairpin DNAT).
	wait_until 10 hairpin_names "$RTR_WAN4" ||
		fail "xnat run did not pick the address up: $(cat "$TB_WORK/run.log")"
	wait_until 10 udp_from "$NS_LAN" 40006 late ||
		fail "no NAT after the address came: $(xnat stats; xnat flows; cat "$TB_WORK/run.log")"
	[ "$(flow_count "f['new_src'].startswith('$RTR_WAN4:')")" -ge 1 ] ||
		fail "no XDP flow NATed to $RTR_WAN4"
	stop_run
}

# ---- the nft table --------------------------------------------------------------

# `nft flush ruleset` removes xnat's table: status says so (exit 4), and
# `xnat run` puts it back.
test_nft_flush() {
	xnat_rc status
	[ "$RC" = 0 ] || fail "status of a whole router exits $RC"
	check on_rtr nft flush ruleset
	xnat_rc status
	[ "$RC" = 4 ] || fail "status exits $RC with the table gone, not 4"
	grep -q "nft table inet xnat is missing" <<<"$OUT" || fail "no warning"
	[ "$(xnat status --json 2>/dev/null | json_q "j['nft']['state']")" = missing ] ||
		fail "status --json nft.state is not missing"
	check xnat down
	start_run "$TB_CONFIG"
	check on_rtr nft flush ruleset
	wait_until 10 on_rtr nft list table inet xnat || fail "xnat run did not restore the table"
	xnat_rc status
	[ "$RC" = 0 ] || fail "status exits $RC after the repair"
	stop_run
}

# ---- ports XDP cannot serve ------------------------------------------------------

# A bridge, a tun device and a bridge's member port are refused in xdp
# mode before anything changes, naming kernel mode and the config line.
TEST_MODES[refuse_ports]="xdp offload"
test_refuse_ports() {
	local before cfg dev
	check ip -n "$NS_RTR" link add br0 type bridge
	check ip -n "$NS_RTR" link add ifb1 type ifb
	check ip -n "$NS_RTR" link set ifb1 master br0
	check ip -n "$NS_RTR" tuntap add mode tun name tun0
	before=$(router_snapshot)
	for dev in br0 tun0 ifb1; do
		check ip -n "$NS_RTR" link set "$dev" up
		cfg=$(config_edit "lan-$dev" "s/^lan( *)= lan0/lan\\1= lan0, $dev/") || fail config
		xnat_rc up -c "$cfg"
		[ "$RC" = 1 ] || fail "$dev: expected exit 1, got $RC"
		grep -q "$cfg:[0-9]*: .*$dev.*mode = kernel" <<<"$OUT" ||
			fail "$dev: message lacks file:line, the port or 'mode = kernel'"
	done
	[ "$(router_snapshot)" = "$before" ] || fail "a refused up changed the router"
}

# A bridged LAN works in kernel mode.
TEST_MODES[bridge_kernel_mode]=kernel
test_bridge_kernel_mode() {
	local cfg tok=xnat-br-$RANDOM
	check ip -n "$NS_RTR" addr flush dev "$RTR_LAN_IF"
	check ip -n "$NS_RTR" link add br0 type bridge
	check ip -n "$NS_RTR" link set "$RTR_LAN_IF" master br0
	check ip -n "$NS_RTR" addr add "$RTR_LAN4/24" dev br0
	check ip -n "$NS_RTR" link set br0 up
	cfg=$(config_edit br 's/^lan( *)= lan0/lan\1= br0/') || fail config
	check xnat up -c "$cfg"
	udp_echo_wan || fail "no server"
	wait_until 10 udp_from "$NS_LAN" 40007 "$tok" || fail "no NAT through the bridge"
}

# A veth whose peer has neither XDP nor GRO refuses redirected frames:
# they are counted as drop_redirect and status warns.
TEST_MODES[redirect_drops_warned]=xdp
test_redirect_drops_warned() {
	check on_lan ethtool -K "$HOST_IF" gro off
	udp_echo_wan || fail "no server"
	udp_from "$NS_LAN" 40008 x || true
	udp_from "$NS_LAN" 40008 y || true
	[ "$(counter drop_redirect)" -ge 1 ] ||
		fail "drop_redirect not counted: $(xnat stats)"
	xnat_rc status
	grep -q "drop_redirect" <<<"$OUT" || fail "status does not warn"
	check on_lan ethtool -K "$HOST_IF" gro on
}

# ---- upgrades ---------------------------------------------------------------------

# Replace the pinned map NAME in PINS by an empty one of TYPE with KEY and
# VALUE bytes and ENTRIES (as another binary made it), then `xnat up`
# again with CONFIG (default: the test's; RC and OUT say how it went).
pin_replaced() {
	local pins=$1 name=$2 type=$3 key=$4 value=$5 entries=$6
	check rm "$pins/$name"
	check bpftool map create "$pins/$name" type "$type" key "$key" \
		value "$value" entries "$entries" name "$name"
	xnat_rc up -c "${7:-$TB_CONFIG}"
}

# A binary whose config-derived (or transient) map has another layout
# re-creates it (the forward still works); one whose state map differs is refused, naming
# `xnat down`, and the router keeps running.
TEST_MODES[map_layout_change]="xdp offload"
test_map_layout_change() {
	local pins tok=xnat-ml-$RANDOM
	pins=$(pin_dir)
	pin_replaced "$pins" xnat_forwards hash 8 8 16
	[ "$RC" = 0 ] || fail "up with a derived map of another layout failed"
	grep -q "xnat_forwards has a new layout" <<<"$OUT" || fail "not said"
	check bpftool map show pinned "$pins/xnat_forwards"
	grep -q "key 4B  value 8B" <<<"$CHECK_OUT" || fail "not re-created"
	echo_server "$NS_LAN" tcp 80 || fail "no server"
	check bash -c "echo $tok | timeout 5 ip netns exec $NS_WAN socat -t 2 - TCP:$RTR_WAN4:8080"
	grep -q "$tok" <<<"$CHECK_OUT" || fail "port forward broken after re-creation"

	# Fragment records as an older binary made them (64 bytes, one range
	# per datagram): in flight only, re-created.
	pin_replaced "$pins" xnat_fragments lru_hash 44 64 8192
	[ "$RC" = 0 ] || fail "up over older fragment records failed"
	grep -q "xnat_fragments has a new layout" <<<"$OUT" ||
		fail "fragment records: not said"

	# Offload mode's table filter as xnat before 2026-12-02 made it
	# (64-bit words, the high half an epoch): derived, re-created.
	pin_replaced "$pins" xnat_offloaded array 4 8 8192
	[ "$RC" = 0 ] || fail "up over the older table filter failed"
	grep -q "xnat_offloaded has a new layout" <<<"$OUT" ||
		fail "table filter: not said"

	# A binary from before the ports' active marks (bpf/port_active.h)
	# had no such map: made, and the router NATs.
	check rm "$pins/xnat_port_active"
	xnat_rc up -c "$TB_CONFIG"
	[ "$RC" = 0 ] || fail "up without the marks' map failed"
	check bpftool map show pinned "$pins/xnat_port_active"
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN" 40008 "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "no NAT after the marks' map was made"
	# Marks that a program of another binary may have left wrong: every
	# program load clears them (here one forced by a re-created map).
	check bpftool map update pinned "$pins/xnat_port_active" \
		key 0 0 0 0 value 1 1 1 1 1 1 1 1
	pin_replaced "$pins" xnat_forwards hash 8 8 16
	[ "$RC" = 0 ] || fail "up over stale marks failed"
	check bpftool -j map lookup pinned "$pins/xnat_port_active" key 0 0 0 0
	grep -q '"0x01"' <<<"$CHECK_OUT" && fail "stale marks kept: $CHECK_OUT"

	pin_replaced "$pins" xnat_peers hash 16 8 16
	[ "$RC" = 2 ] || fail "expected exit 2 for a state map of another layout, got $RC"
	grep -q "xnat_peers.*xnat down" <<<"$OUT" || fail "message does not name xnat down"
	check udp_from "$NS_LAN" 40009 "$tok"
}

# The flow table holds two entries per connection and one more (its
# buckets double); a running router's table of two per connection is kept.
# The mapping table and its ports hold one entry per external port: sized
# by the NAT addresses (65,536 ports each), not by [flows] max. A running
# router's bigger ones (xnat before 2026-11-30 sized them by [flows] max)
# are kept (`up` accepts them as they are, and NAT goes on); smaller ones
# than the addresses need are refused naming `xnat down`, and the router
# keeps running.
TEST_MODES[nat_table_sizes]=xdp
test_nat_table_sizes() {
	local pins cfg m tok=xnat-nt-$RANDOM
	pins=$(pin_dir)
	cfg=$(config_edit big 's/^max( *)= 65536/max\1= 262144/') || fail "config"
	check xnat down
	xnat_rc up -c "$cfg"
	[ "$RC" = 0 ] || fail "up with [flows] max = 262144 failed"
	for m in xnat_mappings xnat_ports; do
		check bpftool map show pinned "$pins/$m"
		grep -q "max_entries 65536 " <<<"$CHECK_OUT" ||
			fail "$m not sized by the one NAT address"
	done
	# Two entries per connection and one for the buckets (map_size.c).
	check bpftool map show pinned "$pins/xnat_flows"
	grep -q "max_entries 524289 " <<<"$CHECK_OUT" || fail "flow table size"

	# A flow table as xnat before 2026-12-03 made it (two entries per
	# connection, half the buckets): kept, and the router NATs.
	pin_replaced "$pins" xnat_flows hash 44 128 524288 "$cfg"
	[ "$RC" = 0 ] || fail "up over an older flow table failed: $OUT"
	check bpftool map show pinned "$pins/xnat_flows"
	grep -q "max_entries 524288 " <<<"$CHECK_OUT" || fail "older flow table not kept"

	# As an older xnat made them: [flows] max entries. Kept.
	pin_replaced "$pins" xnat_mappings hash 8 40 131072 "$cfg"
	[ "$RC" = 0 ] || fail "up over an older, bigger mapping table failed"
	check bpftool map show pinned "$pins/xnat_mappings"
	grep -q "max_entries 131072 " <<<"$CHECK_OUT" || fail "older table not kept"
	udp_echo_wan || fail "no server"
	check udp_from "$NS_LAN" 40011 "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "no NAT over the older table"

	# Too small for what the addresses need: refused, router running.
	pin_replaced "$pins" xnat_ports hash 4 8 1024 "$cfg"
	[ "$RC" = 1 ] || fail "expected exit 1 for a too small port table, got $RC"
	grep -q "xnat_ports holds 1024.*xnat down" <<<"$OUT" ||
		fail "the refusal does not say why and what to do"
	check udp_from "$NS_LAN" 40012 "$tok"
	[ "$CHECK_OUT" = "$tok" ] || fail "the router stopped NATing"
}

# ---- bpffs under ip netns exec ------------------------------------------------------

# Joining the mount namespace with the bpffs is said, not silent.
TEST_MODES[netns_exec_explicit]=xdp
test_netns_exec_explicit() {
	check timeout "$T_XNAT" ip netns exec "$NS_RTR" "$XNAT" status
	grep -q "using the one of the mount namespace of pid" <<<"$CHECK_OUT" ||
		fail "joining another mount namespace is not said"
}

run_tests "$@"
