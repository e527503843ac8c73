#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The shipped unit's sandbox, run for real, in the namespace testbed
# (lib.sh): packaging/xnat.service.in, as installed, started by systemd's own
# service manager (unit_manager.sh: `systemd --user` as root, which sets
# up a unit's namespaces, capabilities and seccomp filter with the same
# code as PID 1, so this machine need not boot with systemd), in the
# router's network namespace. In each mode the unit comes up and
# forwards; it has the sandbox (the capability bounding set, no new
# privileges, a seccomp filter, a read-only system with /run/xnat,
# /sys/fs/bpf and /proc/sys/net writable); it reloads (a forward added, a
# bad config refused, a switch to another mode) and stops, leaving the
# router down and clean.
#
#   tests/integration/test_unit_sandbox.sh [SUBSTRING...]
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp                   see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

export SYSTEMD=${SYSTEMD:-/lib/systemd/systemd}
# CAP_NET_ADMIN (12), CAP_SYS_ADMIN (21), CAP_PERFMON (38), CAP_BPF (39):
# the unit's CapabilityBoundingSet.
CAPS=000000c000201000
# The mode a reload switches to, from each.
declare -A NEXT=([xdp]=offload [kernel]=xdp [offload]=kernel)

# systemctl --user of the test's manager (its socket is in its mount
# namespace).
sb_ctl() {
	echo "+ systemctl --user $*" >&2
	timeout 90 nsenter -t "$SB_PID" -m -- \
		env XDG_RUNTIME_DIR=/run systemctl --user --no-pager "$@"
}

# The unit as installed and a drop-in for this testbed (TB_WORK/units);
# the config where the sandbox can read it: /tmp is private to the unit.
sb_units() {
	local u=$TB_WORK/units
	mkdir -p "$u/xnat.service.d"
	sed "s|@SBINDIR@|$(dirname "$XNAT")|g" "$XNAT_ROOT/packaging/xnat.service.in" \
		>"$u/xnat.service"
	# As `systemctl edit xnat` would have it, plus the router's
	# namespace and a log (no journal here). DefaultDependencies=no:
	# a system's basic.target has no counterpart here.
	cat >"$u/xnat.service.d/test.conf" <<-EOF
	[Unit]
	DefaultDependencies=no
	[Service]
	NetworkNamespacePath=/run/netns/$NS_RTR
	ExecStart=
	ExecStart=$XNAT run -c $SB_CFG
	ExecReload=
	ExecReload=$XNAT check -c $SB_CFG
	ExecReload=/bin/kill -HUP \$MAINPID
	StandardOutput=append:$TB_WORK/unit.log
	StandardError=append:$TB_WORK/unit.log
	EOF
	cat >"$u/xnat-test.target" <<-EOF
	[Unit]
	Description=The test's manager: nothing starts by itself
	DefaultDependencies=no
	EOF
}

# Start the manager (SB_PID) and wait until it answers.
sb_start() {
	local tpid
	timeout 300 unshare -m --propagation slave \
		"$XNAT_ROOT/tests/integration/unit_manager.sh" "$TB_WORK/units" \
		"${TB_WORK##*/}" "$TB_WORK/cgroups" "$TB_WORK" \
		</dev/null >"$TB_WORK/manager.log" 2>&1 &
	tpid=$!
	echo "$tpid" >>"$TB_WORK/pids"
	for _ in $(seq 100); do
		SB_PID=$(pgrep -P "$tpid" -x systemd) &&
			nsenter -t "$SB_PID" -m -- test -S /run/systemd/private &&
			return 0
		sleep 0.1
	done
	cat "$TB_WORK/manager.log"
	fail "systemd --user did not start"
}

# Stop the manager and remove its cgroups and the config's directory.
sb_cleanup() {
	local d
	if [ -n "${SB_PID:-}" ] && kill -0 "$SB_PID" 2>/dev/null; then
		timeout 90 nsenter -t "$SB_PID" -m -- env XDG_RUNTIME_DIR=/run \
			systemctl --user exit >/dev/null 2>&1 || kill "$SB_PID"
		wait_until 30 tb_pids_gone "$SB_PID"
	fi
	while read -r d; do
		find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
		[ -e "$d" ] && echo "cgroup $d left behind"
	done <"$TB_WORK/cgroups" 2>/dev/null
	[ -n "${SB_DIR:-}" ] && rm -rf -- "$SB_DIR"
	return 0
}

# /proc/PID/status's FIELD.
status_of() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# PATH is writable (or not, WANT 1|0) in the mount namespace of PID.
writable() {
	local pid=$1 want=$2 path=$3 got=0
	nsenter -t "$pid" -m -- test -w "$path" && got=1
	echo "  $path: $([ $got = 1 ] && echo writable || echo read-only)"
	[ $got = "$want" ] || fail "$path is $([ $got = 1 ] && echo writable || echo read-only) in the unit"
}

# The unit's main process has the sandbox.
sandbox_applied() {
	local pid
	pid=$(sb_ctl show -p MainPID --value xnat.service) || fail "no MainPID"
	[ "${pid:-0}" -gt 0 ] || fail "xnat.service has no main process"
	echo "xnat run is pid $pid: CapBnd $(status_of "$pid" CapBnd)," \
		"NoNewPrivs $(status_of "$pid" NoNewPrivs), Seccomp $(status_of "$pid" Seccomp)"
	[ "$(status_of "$pid" CapBnd)" = $CAPS ] || fail "capability bounding set is not $CAPS"
	[ "$(status_of "$pid" NoNewPrivs)" = 1 ] || fail "NoNewPrivileges not applied"
	[ "$(status_of "$pid" Seccomp)" = 2 ] || fail "no seccomp filter"
	writable "$pid" 0 /etc
	writable "$pid" 0 /usr
	writable "$pid" 0 /proc/sys/kernel/hostname
	writable "$pid" 0 /sys/class/net
	writable "$pid" 1 /run/xnat
	writable "$pid" 1 /sys/fs/bpf
	writable "$pid" 1 /proc/sys/net/ipv4/ip_forward
	# What PrivateTmp and ProtectHome hide: the test's files under /tmp.
	nsenter -t "$pid" -m -- test -e "$TB_WORK" && fail "/tmp is not private to the unit"
	return 0
}

# xnat is up in MODE.
mode_is() {
	[ "$(xnat_json_q status "j['mode']")" = "$1" ]
}

test_unit() {
	local mode=$TB_MODE next=${NEXT[$TB_MODE]} before
	[ -x "$SYSTEMD" ] || skip "no $SYSTEMD (scripts/deps.sh installs systemd)"
	command -v nsenter >/dev/null || skip "no nsenter"
	trap sb_cleanup EXIT
	before=$(cat "$TB_WORK/ip_forward.before")
	# The unit brings the router up itself.
	check xnat down
	SB_DIR=/run/xnat-test-sandbox-${TB_WORK##*/}
	SB_CFG=$SB_DIR/xnat.ini
	mkdir -p "$SB_DIR"
	cp "$TB_CONFIG" "$SB_CFG"
	sb_units
	sb_start

	sb_ctl start xnat.service || { cat "$TB_WORK/unit.log"; fail "the unit did not start"; }
	cat "$TB_WORK/unit.log"
	check xnat status --json
	[ "$(json_q "j['mode']" <<<"$CHECK_OUT")" = "$mode" ] || fail "not up in $mode mode"
	check on_lan ping -c 3 -i 0.2 -W 2 "$WAN_HOST4"
	sandbox_applied

	# A reload: the new forward is in the kernel's table.
	printf '\n[forward]\ntcp/8081 = %s:81\n' "$LAN_HOST4" >>"$SB_CFG"
	sb_ctl reload xnat.service || { cat "$TB_WORK/unit.log"; fail "the reload failed"; }
	wait_until 20 eval 'on_rtr nft list table inet xnat | grep -q "dport 8081"' ||
		fail "the reload did not apply the new forward"
	# A bad config: ExecReload's check refuses it, the router stays.
	cp "$SB_CFG" "$TB_WORK/good.ini"
	echo "[bogus]" >>"$SB_CFG"
	sb_ctl reload xnat.service && fail "a reload with [bogus] succeeded"
	cp "$TB_WORK/good.ini" "$SB_CFG"
	check xnat status
	# Another mode, by a reload: detach and attach in the sandbox.
	sed -i "s/^mode *=.*/mode = $next/" "$SB_CFG"
	grep -q "^mode = $next" "$SB_CFG" || fail "no mode line in the config"
	sb_ctl reload xnat.service || { cat "$TB_WORK/unit.log"; fail "the switch to $next failed"; }
	wait_until 30 mode_is "$next" ||
		{ cat "$TB_WORK/unit.log"; fail "the reload did not switch to $next mode"; }
	check on_lan ping -c 3 -i 0.2 -W 2 "$WAN_HOST4"
	sandbox_applied

	sb_ctl stop xnat.service || fail "the unit did not stop"
	cat "$TB_WORK/unit.log"
	# What the sandbox refuses (a capability, a system call) shows as
	# EPERM, even where xnat only warns.
	grep -q "Operation not permitted" "$TB_WORK/unit.log" &&
		fail "xnat was refused something in the sandbox"
	timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" status >/dev/null 2>&1
	[ $? -eq 3 ] || fail "the router is still up after the unit stopped"
	ip -n "$NS_RTR" -d link show | grep -q 'prog/xdp' && fail "an XDP program is left on a port"
	[ -e "/sys/fs/bpf/xnat/$TB_RTR_INO" ] && fail "pinned maps left behind"
	[ "$(on_rtr sysctl -n net.ipv4.ip_forward)" = "$before" ] || fail "ip_forward not restored"
	[ -d /run/xnat ] || fail "/run/xnat went with the unit"
	return 0
}

run_tests "$@"
