#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `xnat check` refuses exactly what `xnat up` cannot apply, in the
# namespace testbed (lib.sh): every [timeouts] key at the longest timeout
# this kernel takes (probed by writing conntrack's sysctl in a namespace of
# the test's own) and one more, offload mode's conntrack entries at that
# longest timeout, a [flows] max that MemAvailable holds but the memory
# cgroup's limit does not, and config files that are not text or are too
# large. For each, check and up agree, up applies what it accepts and a
# refused config changes nothing.
#
#   tests/integration/test_config_limits.sh [SUBSTRING...]
#   V=1 / DEBUG_TESTENV=1 / MODES=xdp                   see lib.sh
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

SRV_PORT=5000
# offload mode hands conntrack a timeout in milliseconds, which the
# kernel reads as "for ever" from 2^31 on (kernel/time/time.c).
MS_BOUND=2147483

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

# The longest timeout the kernel's conntrack sysctls take (INT_MAX / HZ),
# found by writing one in a namespace of this test's own.
kernel_timeout_max() {
	local ns lo=1 hi=2147483647 mid f=/proc/sys/net/netfilter/nf_conntrack_udp_timeout
	ns=$(tb_ns_extra probe) || return 1
	on "$ns" test -w "$f" || { echo "no $f in a new namespace" >&2; return 1; }
	while [ $lo -lt $hi ]; do
		mid=$(((lo + hi + 1) / 2))
		if on "$ns" sh -c "echo $mid >$f" 2>/dev/null; then
			lo=$mid
		else
			hi=$((mid - 1))
		fi
	done
	echo "$lo"
}

# Run `xnat CMD -c FILE`, with at most VM KB of address space if given;
# its exit status in RC, stderr in ERR.
run_xnat() {
	local cmd=$1 file=$2 vm=${3:-unlimited}
	ERR=$(ulimit -v "$vm" && timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" "$cmd" -c "$file" 2>&1 >/dev/null)
	RC=$?
	echo "+ xnat $cmd -c ${file##*/}: exit $RC${ERR:+: $(grep -v '^Warning' <<<"$ERR" | head -2)}"
}

# A conntrack sysctl each [timeouts] key sets (user/kernel_mode.c).
declare -A SYSCTL=([tcp_established]=nf_conntrack_tcp_timeout_established
	[tcp_transitory]=nf_conntrack_tcp_timeout_syn_sent
	[udp]=nf_conntrack_udp_timeout [icmp]=nf_conntrack_icmp_timeout)

# KEY = VALUE in [timeouts], checked then applied: both accept it (and
# conntrack has it, the sysctls or the udp_dns policy) or both refuse it
# with the same FILE:LINE error and the router unchanged. WANT ok|refused.
timeout_agrees() {
	local key=$1 val=$2 want=$3 file cerr got
	file=$(config_variant "t-$key-$val" "timeouts.$key=$val") || fail "no variant"
	run_xnat check "$file"
	[ $RC -eq 0 ] && got=ok || got=refused
	cerr=$ERR
	snapshot "$TB_WORK/before"
	run_xnat up "$file"
	if [ "$got" = ok ]; then
		[ $RC -eq 0 ] || fail "check accepted $key = $val, up failed: $ERR"
		if [ "$key" = udp_dns ]; then
			on_rtr nft list table inet xnat | grep -q "replied : $val }" ||
				fail "the udp_dns policy is not $val s"
		else
			[ "$(on_rtr cat "/proc/sys/net/netfilter/${SYSCTL[$key]}")" = "$val" ] ||
				fail "conntrack's ${SYSCTL[$key]} is not $key = $val"
		fi
	else
		[ $RC -eq 1 ] || fail "check refused $key = $val, up exit $RC: $ERR"
		grep -q "^xnat: $file:[0-9]*: bad $key '$val'" <<<"$cerr" ||
			fail "check's error does not say FILE:LINE: bad $key: $cerr"
		grep -qF "$(grep "bad $key" <<<"$cerr")" <<<"$ERR" ||
			fail "up's error is not check's: $ERR"
		snapshot "$TB_WORK/after"
		diff "$TB_WORK/before" "$TB_WORK/after" || fail "the refused up changed the router"
	fi
	[ "$got" = "$want" ] || fail "$key = $val: check and up agree on $got, expected $want"
}

# Every key at the longest timeout the kernel takes, just past the
# sysctls' own limit where that is further, and at one more.
test_timeout_bounds() {
	local kmax max key
	kmax=$(kernel_timeout_max) || fail "could not probe conntrack's limit"
	max=$((kmax < MS_BOUND ? kmax : MS_BOUND))
	echo "conntrack takes up to $kmax s; offload's milliseconds up to $MS_BOUND s"
	for key in tcp_established tcp_transitory udp icmp udp_dns; do
		timeout_agrees "$key" "$max" ok
		[ "$kmax" -gt "$max" ] && timeout_agrees "$key" $((kmax + 1)) refused
		timeout_agrees "$key" $((max + 1)) refused
	done
	check xnat status
}

# Offload mode at the longest timeout: an offloaded connection's
# conntrack entry gets it (XDP's refresh, bpf/offload.h), not a
# millisecond count gone round to a few seconds, nor one the kernel took
# for "for ever" (INT_MAX jiffies).
TEST_MODES[timeout_offloaded]=offload
test_timeout_offloaded() {
	local kmax max file t
	kmax=$(kernel_timeout_max) || fail "could not probe conntrack's limit"
	max=$((kmax < MS_BOUND ? kmax : MS_BOUND))
	file=$(config_variant long "timeouts.tcp_established=$max") || fail "no variant"
	check xnat up -c "$file"
	tcp_idle_connection $SRV_PORT 8
	wait_number -eq 2 "offloaded entries" xnat_json_q flows \
		"len([f for f in j['flows'] if f['nat'] == 'ct' and 'dport=$SRV_PORT' in f.get('conntrack', '')])" ||
		fail "the connection was not offloaded both ways"
	check on_rtr conntrack -L -p tcp --orig-dst "$WAN_HOST4" --dport $SRV_PORT
	t=$(awk '$1 == "tcp" { print $3; exit }' <<<"$CHECK_OUT")
	echo "tcp_established = $max; the offloaded entry's timeout: ${t:-none}"
	[ "${t:-0}" -ge $((max - 120)) ] && [ "$t" -le "$max" ] ||
		fail "conntrack got ${t:-no} timeout, not about $max s"
}

# The memory cgroup hierarchy of this process: "VERSION MOUNT_POINT
# CGROUP_PATH" (v1 when a v1 hierarchy has the memory controller).
memcg_where() {
	local v1 v2 path
	v1=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
	if [ -n "$v1" ]; then
		path=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
		echo "1 $v1 $path"
		return
	fi
	v2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
	path=$(awk -F: '$1 == 0 { print $3; exit }' /proc/self/cgroup)
	[ -n "$v2" ] && echo "2 $v2 $path"
}

# `xnat CMD -c FILE` run from inside cgroup directory CG (as a unit with
# MemoryMax= runs); exit status in RC, stderr in ERR.
run_in_cgroup() {
	local cg=$1 cmd=$2 file=$3
	# shellcheck disable=SC2016 # the inner script's own arguments
	ERR=$(timeout "$T_XNAT" bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2" -n "$3" "$4" -c "$5"' \
		_ "$cg" "$XNAT" "$NS_RTR" "$cmd" "$file" 2>&1 >/dev/null)
	RC=$?
	echo "+ [in ${cg##*/}] xnat $cmd -c ${file##*/}: exit $RC${ERR:+: $(grep -v '^Warning' <<<"$ERR" | head -2)}"
}

# A flow table MemAvailable holds but the limit of the cgroup xnat runs
# in does not (400 MB; the default [flows] max takes about 1 GB): check
# refuses it, naming the limit, and so does up, before it changes
# anything; a table that fits goes up in the same cgroup.
test_flows_memory_cgroup() {
	local ver mnt path cg big small limit
	read -r ver mnt path <<<"$(memcg_where)"
	[ -n "${ver:-}" ] || skip "no memory cgroup hierarchy"
	cg=$mnt${path%/}/xnat-test-$$-${TB_WORK##*/}
	mkdir "$cg" || skip "cannot make a cgroup under $mnt$path"
	# shellcheck disable=SC2064 # the path is fixed now
	trap "rmdir '$cg' 2>/dev/null" EXIT
	[ "$ver" = 1 ] && limit=memory.limit_in_bytes || limit=memory.max
	[ -e "$cg/$limit" ] || skip "no memory controller in $cg (cgroup v$ver)"
	echo $((400 << 20)) >"$cg/$limit" || fail "cannot set $cg/$limit"
	big=$(config_variant big flows.max=1048576) || fail "no variant"
	small=$(config_variant small flows.max=65536) || fail "no variant"
	# The table's size changes: from down.
	check xnat down

	run_in_cgroup "$cg" check "$big"
	if [ "$TB_MODE" = kernel ]; then
		# No maps in kernel mode: nothing to refuse.
		[ $RC -eq 0 ] || fail "check refused kernel mode: $ERR"
		run_in_cgroup "$cg" up "$big"
		[ $RC -eq 0 ] || fail "up failed in kernel mode: $ERR"
		return 0
	fi
	[ $RC -eq 1 ] || fail "check accepted 1 GB of maps under a 400 MB limit"
	grep -q "\[flows\] max = 1048576 needs about .* ($cg/$limit)" <<<"$ERR" ||
		fail "check does not name the cgroup's limit: $ERR"
	run_in_cgroup "$cg" up "$big"
	[ $RC -eq 1 ] || fail "up: exit $RC, expected 1 (a config error, found before anything changed)"
	grep -q "($cg/$limit)" <<<"$ERR" || fail "up does not say the cgroup's limit: $ERR"
	timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" status >/dev/null 2>&1
	[ $? -eq 3 ] || fail "the refused up left something up"
	[ -e "/sys/fs/bpf/xnat/$TB_RTR_INO" ] && fail "the refused up left maps pinned"

	run_in_cgroup "$cg" check "$small"
	[ $RC -eq 0 ] || fail "check refused 65536 flows under 400 MB: $ERR"
	run_in_cgroup "$cg" up "$small"
	[ $RC -eq 0 ] || fail "up failed with 65536 flows under 400 MB: $ERR"
	check xnat status
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
