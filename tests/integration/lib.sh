# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Namespace testbed and test harness for xnat's integration tests, sourced by
# tests/integration/test_*.sh and by scripts/demo.sh. In the spirit of
# xdp-tools' lib/testing/test_runner.sh:
#
#   - the testbed: three network namespaces, a LAN host, the router and a WAN
#     host, joined by veth pairs created directly inside the namespaces (the
#     host's own interfaces, routes and nft ruleset are never touched);
#   - the runner: run_tests discovers the test_* functions of the file that
#     sourced us, runs each in a fresh testbed once per mode it declares in
#     TEST_MODES (default: xdp, kernel and offload), prints "#N name[mode]:OK|FAIL|SKIP"
#     and ends with "N passed, N failed, N skipped";
#   - teardown from an EXIT/INT/TERM trap that removes everything the run
#     created, whatever happened: processes it started (by PID), xnat's state,
#     the namespaces, the temporary directory.
#
# Environment: V=1 shows every command and its output as the tests run;
# DEBUG_TESTENV=1 opens a shell inside the testbed before each teardown;
# MODES="xdp" restricts modes; XNAT=path picks another xnat binary.
#
# A test is a function run in a subshell: it fails with "fail MSG" or a failed
# "check CMD", is skipped with "skip MSG" (exit 249), and passes by returning.
# Every traffic command is bounded with timeout(1).
#
# Addresses: only 198.18.0.0/15 and 2001:2::/48 (the benchmarking
# ranges of RFC 2544 and RFC 5180, as README.md says of the tests).

XNAT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
XNAT=${XNAT:-$XNAT_ROOT/xnat}
V=${V:-0}
DEBUG_TESTENV=${DEBUG_TESTENV:-0}

SKIPPED_TEST=249

# The testbed, as the tests see it. Router interfaces are named like the ones
# in the config template; hosts call their end eth0.
RTR_LAN_IF=lan0
RTR_WAN_IF=wan0
HOST_IF=eth0
RTR_LAN4=198.18.1.1
RTR_WAN4=198.19.0.1
RTR_LAN6=2001:2:0:1::1
RTR_WAN6=2001:2:0:2::1
LAN_HOST4=198.18.1.10
LAN_HOST6=2001:2:0:1::10
WAN_HOST4=198.19.0.2
WAN_HOST6=2001:2:0:2::2
NAT_PORT_MIN=20000
NAT_PORT_MAX=65535

# Bounds for single commands; traffic loops get their own, explicit ones.
T_CMD=10      # ip, ethtool, nft, a ping burst
T_XNAT=30     # one xnat invocation (loading BPF can take a while)
T_XFER=60     # one bulk transfer on veth

# Per-testbed state, reset by testbed_names.
NS_LAN='' NS_RTR='' NS_WAN=''
TB_NS_CREATED=()     # namespaces this run created, in creation order
TB_RTR_INO=          # router netns inode: names xnat's state and pin dirs
TB_WORK=             # per-testbed scratch dir (config, logs, data, pids)
TB_MODE=             # xdp | kernel | offload, once router_up ran
TB_CONFIG=
TB_BG_N=0
TB_TMP=              # per-run dir holding every TB_WORK

# ---- output ---------------------------------------------------------------

# Diagnostics of the harness itself; tests just echo (their output is kept
# in a log that is shown on failure or with V=1).
tb_warn() { echo "WARN: $*" >&2; }
tb_vlog() { [ "$V" = 1 ] && echo "$*" >&2; return 0; }

# Run a command that must succeed; on failure print it and its output and
# end the test. The output is left in CHECK_OUT for the caller to inspect.
# Do not use it for commands that leave background children holding stdout.
check() {
	local rc
	echo "+ $*"
	CHECK_OUT=$("$@" 2>&1)
	rc=$?
	[ -n "$CHECK_OUT" ] && printf '%s\n' "$CHECK_OUT" | sed 's/^/  | /'
	if [ $rc -ne 0 ]; then
		echo "FAILED (exit $rc): $*"
		exit 1
	fi
	return 0
}

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit $SKIPPED_TEST; }

# ---- namespaces and commands in them ----------------------------------------

# Commands inside a namespace, bounded. `ip netns exec` (not nsenter) so each
# command also sees the namespace's own /sys.
on() { local ns=$1; shift; timeout "$T_CMD" ip netns exec "$ns" "$@"; }
on_lan() { on "$NS_LAN" "$@"; }
on_rtr() { on "$NS_RTR" "$@"; }
on_wan() { on "$NS_WAN" "$@"; }

# xnat acting on the router namespace through its global -n option.
xnat() { timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" "$@"; }

# Start CMD in namespace NS in the background, ended after SECS at the latest.
# Output goes to a log in TB_WORK, never to our stdout (a child holding the
# test's stdout would keep the log pipe open). Sets BG_PID and records it so
# that teardown can end it if the test does not.
bg_ns() {
	local secs=$1 ns=$2 log
	shift 2
	TB_BG_N=$((TB_BG_N + 1))
	log=$TB_WORK/bg.$TB_BG_N.log
	timeout "$secs" ip netns exec "$ns" "$@" </dev/null >"$log" 2>&1 &
	BG_PID=$!
	echo "$BG_PID" >>"$TB_WORK/pids"
	echo "+ & [pid $BG_PID, ${secs}s, $ns] $*"
}

# Wait for a background command; returns its status (124: timed out).
bg_wait() {
	local rc
	wait "$1"
	rc=$?
	[ $rc -ne 0 ] && echo "  background pid $1 exited with $rc"
	return $rc
}

bg_stop() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# End processes this run started: the recorded timeout(1) wrappers (which
# pass the signal to their child), checked by name so a recycled PID is left
# alone.
tb_kill_started() {
	local f=$1 p ended=()
	[ -f "$f" ] || return 0
	while read -r p; do
		[ -n "$p" ] || continue
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = timeout ] || continue
		kill "$p" 2>/dev/null && ended+=("$p")
	done <"$f"
	: >"$f"
	wait_until 10 tb_pids_gone "${ended[@]}"
}

# Poll (up to SECS seconds, however long each try takes) until the shell
# condition CMD... succeeds.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		((SECONDS < end)) || return 1
		sleep 0.2
	done
}

# Have the processes PIDS... exited? Teardown waits for those it ended: an
# ended `xnat run` takes the router down on its way out (under xnat's
# lock, in the state directory), and what follows must not race it. By
# /proc, as they need not be this shell's children.
tb_pids_gone() {
	local p
	for p in "$@"; do
		[ -e "/proc/$p" ] && return 1
	done
	return 0
}

# Wait until something listens on PORT in NS (proto tcp|udp), so a client
# never races its server.
wait_listen() {
	local ns=$1 proto=$2 port=$3 flag=-Hltn
	[ "$proto" = udp ] && flag=-Hlun
	for _ in $(seq 50); do
		[ -n "$(ip netns exec "$ns" ss $flag "sport = :$port" 2>/dev/null)" ] &&
			return 0
		sleep 0.1
	done
	echo "nothing listens on $proto/$port in $ns after 5 s"
	return 1
}

# ---- testbed ----------------------------------------------------------------

# Pick namespace names for a testbed; TAG keeps them unique per run.
testbed_names() {
	local tag=$1
	NS_LAN=xnat-lan-$tag
	NS_RTR=xnat-rtr-$tag
	NS_WAN=xnat-wan-$tag
	TB_NS_CREATED=()
	TB_RTR_INO=
	TB_MODE=
	TB_CONFIG=
	TB_BG_N=0
	TB_WORK=$TB_TMP/$tag
	mkdir -p "$TB_WORK"
	: >"$TB_WORK/pids"
}

tb_ns_add() {
	local ns=$1
	if [ -e "/run/netns/$ns" ]; then
		echo "namespace $ns already exists; not ours, not touching it" >&2
		return 1
	fi
	ip netns add "$ns" || return 1
	TB_NS_CREATED+=("$ns")
	# No DAD: IPv6 addresses (link-local ones too) are usable at once.
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.accept_dad=0 >/dev/null &&
	ip -n "$ns" link set lo up
}

# Host side of a veth: no transmit checksum offload, or an XDP router would
# see CHECKSUM_PARTIAL frames whose L4 checksum is only the pseudo-header;
# GRO on, or a veth drops frames redirected into it by XDP (no NAPI on its
# queue: drivers/net/veth.c, veth_xdp_xmit()).
tb_host_if() {
	local ns=$1
	ip netns exec "$ns" ethtool -K "$HOST_IF" tx off >/dev/null 2>&1 &&
	ip netns exec "$ns" ethtool -K "$HOST_IF" gro on >/dev/null 2>&1 ||
		{ echo "ethtool -K $HOST_IF tx off gro on failed in $ns" >&2; return 1; }
}

# Build the three namespaces. Returns non-zero (after printing why) on any
# error; what was created is still removed by testbed_teardown.
testbed_setup() {
	tb_ns_add "$NS_LAN" && tb_ns_add "$NS_RTR" && tb_ns_add "$NS_WAN" ||
		return 1
	TB_RTR_INO=$(stat -L -c %i "/run/netns/$NS_RTR") || return 1

	tb_make_lan &&
	tb_make_port "$RTR_WAN_IF" "$NS_WAN" $RTR_WAN4 $RTR_WAN6 $WAN_HOST4 \
		$WAN_HOST6 || return 1

	# The WAN host only knows its own subnet for IPv4 (it sees the
	# router's WAN address and nothing behind it), but IPv6 is routed
	# without NAT, so it has a route to the LAN prefix.
	ip -n "$NS_WAN" -6 route add 2001:2:0:1::/64 via $RTR_WAN6 || return 1

	testbed_warm_neigh
}

# The router's port RIF and the host namespace NS behind it, with the
# router's and the host's IPv4 (/24) and IPv6 (/64) addresses. Both ends
# are created from inside the namespaces: no interface ever appears in
# the host's namespace, not even for a moment.
tb_make_port() {
	local rif=$1 ns=$2 r4=$3 r6=$4 h4=$5 h6=$6
	ip -n "$NS_RTR" link add "$rif" type veth peer name "$HOST_IF" \
		netns "$ns" &&
	tb_host_if "$ns" &&
	ip -n "$NS_RTR" addr add "$r4/24" dev "$rif" &&
	ip -n "$NS_RTR" addr add "$r6/64" dev "$rif" nodad &&
	ip -n "$ns" addr add "$h4/24" dev "$HOST_IF" &&
	ip -n "$ns" addr add "$h6/64" dev "$HOST_IF" nodad &&
	ip -n "$ns" link set "$HOST_IF" up &&
	ip -n "$NS_RTR" link set "$rif" up
}

# The router's LAN port and the LAN host behind it, which routes
# everything through the router. Also what testbed_remake_lan makes again.
tb_make_lan() {
	tb_make_port "$RTR_LAN_IF" "$NS_LAN" $RTR_LAN4 $RTR_LAN6 $LAN_HOST4 \
		$LAN_HOST6 &&
	ip -n "$NS_LAN" route add default via $RTR_LAN4 &&
	ip -n "$NS_LAN" -6 route add default via $RTR_LAN6
}

# The router's LAN port deleted and made again under its name, with a new
# ifindex, as an adapter plugged back in comes back; XDP went with the old
# one.
testbed_remake_lan() {
	ip -n "$NS_RTR" link del "$RTR_LAN_IF" && tb_make_lan || return 1
	# shellcheck disable=SC2086 # the addresses are words
	tb_resolve "$NS_RTR" $LAN_HOST4 $LAN_HOST6
}

# Resolve the router's neighbours (and the hosts' entry for the router)
# before xnat runs, so the first packet of a flow does not go to the kernel
# with "pass_no_neigh" while ARP/ND is in progress.
testbed_warm_neigh() {
	# shellcheck disable=SC2086 # the addresses are words
	tb_resolve "$NS_RTR" $LAN_HOST4 $WAN_HOST4 $LAN_HOST6 $WAN_HOST6
}

# ---- topology variants --------------------------------------------------------
#
# Tests that need more than the three namespaces add them from their body,
# after xnat is up. The test body runs in a subshell, so the namespaces are
# recorded in TB_WORK/netns (like background PIDs in TB_WORK/pids) for
# testbed_teardown. Each helper sets the NS_* variable it documents and
# resolves the new neighbours (testbed_warm_neigh's reason) before returning.

LAN2_HOST4=198.18.1.11     # a second host on the router's lan0 segment
RTR_LAN1_IF=lan1           # a second LAN port of the router
RTR_LAN1_4=198.18.2.1
LAN1_HOST4=198.18.2.10     # the host on it
WAN_FAR_GW4=198.19.1.1     # the WAN host, as a router to a further subnet
FAR_HOST4=198.19.1.2       # a host behind it
NS_LAN2='' NS_LAN1='' NS_FAR=''

# Create one more namespace for this testbed, named xnat-ROLE-TAG like the
# others; prints its name.
tb_ns_extra() {
	local ns=xnat-$1-${TB_WORK##*/}
	tb_ns_add "$ns" >&2 || return 1
	echo "$ns" >>"$TB_WORK/netns"
	echo "$ns"
}

# Ping ADDR... from NS until each answers (3 tries each).
tb_resolve() {
	local ns=$1 a ok
	shift
	for a in "$@"; do
		ok=0
		for _ in 1 2 3; do
			if on "$ns" ping -q -c 1 -W 1 "$a" >/dev/null 2>&1; then
				ok=1
				break
			fi
		done
		[ $ok = 1 ] || { echo "$ns cannot ping $a" >&2; return 1; }
	done
}

# A second host on the LAN segment of lan0 (NS_LAN2, LAN2_HOST4/24): a
# macvlan (bridge mode) on the LAN host's eth0, so the LAN host and the
# router's lan0 stay exactly as testbed_setup made them. The LAN host and
# this host reach each other only through the router (a macvlan does not
# talk to its lower device), which is all a NAT test needs.
testbed_add_lan_host() {
	NS_LAN2=$(tb_ns_extra lan2) || return 1
	ip -n "$NS_LAN" link add xnatmv0 link "$HOST_IF" type macvlan mode bridge &&
	ip -n "$NS_LAN" link set xnatmv0 netns "$NS_LAN2" &&
	ip -n "$NS_LAN2" link set xnatmv0 name "$HOST_IF" &&
	tb_host_if "$NS_LAN2" &&
	ip -n "$NS_LAN2" addr add "$LAN2_HOST4/24" dev "$HOST_IF" &&
	ip -n "$NS_LAN2" link set "$HOST_IF" up &&
	ip -n "$NS_LAN2" route add default via "$RTR_LAN4" || return 1
	tb_resolve "$NS_RTR" "$LAN2_HOST4" && tb_resolve "$NS_LAN2" "$RTR_LAN4"
}

# A second LAN port on the router, RTR_LAN1_IF (RTR_LAN1_4/24), with a host
# behind it (NS_LAN1, LAN1_HOST4). xnat runs on it once the config names it.
testbed_add_lan_port() {
	NS_LAN1=$(tb_ns_extra lan1) || return 1
	ip -n "$NS_RTR" link add "$RTR_LAN1_IF" type veth peer name "$HOST_IF" \
		netns "$NS_LAN1" &&
	tb_host_if "$NS_LAN1" &&
	ip -n "$NS_RTR" addr add "$RTR_LAN1_4/24" dev "$RTR_LAN1_IF" &&
	ip -n "$NS_LAN1" addr add "$LAN1_HOST4/24" dev "$HOST_IF" &&
	ip -n "$NS_LAN1" link set "$HOST_IF" up &&
	ip -n "$NS_RTR" link set "$RTR_LAN1_IF" up &&
	ip -n "$NS_LAN1" route add default via "$RTR_LAN1_4" || return 1
	tb_resolve "$NS_RTR" "$LAN1_HOST4" && tb_resolve "$NS_LAN1" "$RTR_LAN1_4"
}

# The WAN host becomes a router (WAN_FAR_GW4/24 on its far0) to a further
# host (NS_FAR, FAR_HOST4), and the router routes 198.19.1.0/24 through the
# WAN host: a second hop for traceroute and PMTUD. MTU (default 1500) is the
# MTU of the WAN host's far0 only, the bottleneck in the LAN-to-far
# direction; the far host keeps 1500, so the MSS it announces does not hide
# the bottleneck from TCP.
testbed_add_far_host() {
	local mtu=${1:-1500}
	NS_FAR=$(tb_ns_extra far) || return 1
	ip -n "$NS_WAN" link add far0 type veth peer name "$HOST_IF" \
		netns "$NS_FAR" &&
	tb_host_if "$NS_FAR" &&
	ip -n "$NS_WAN" link set far0 mtu "$mtu" &&
	ip -n "$NS_WAN" addr add "$WAN_FAR_GW4/24" dev far0 &&
	ip -n "$NS_FAR" addr add "$FAR_HOST4/24" dev "$HOST_IF" &&
	ip -n "$NS_WAN" link set far0 up &&
	ip -n "$NS_FAR" link set "$HOST_IF" up &&
	ip netns exec "$NS_WAN" sysctl -qw net.ipv4.ip_forward=1 >/dev/null &&
	ip -n "$NS_FAR" route add default via "$WAN_FAR_GW4" &&
	ip -n "$NS_RTR" route add 198.19.1.0/24 via "$WAN_HOST4" dev "$RTR_WAN_IF" ||
		return 1
	tb_resolve "$NS_WAN" "$FAR_HOST4" && tb_resolve "$NS_RTR" "$FAR_HOST4"
}

# Another address (/24) of the WAN host, e.g. a second remote peer.
testbed_add_wan_addr() {
	ip -n "$NS_WAN" addr add "$1/24" dev "$HOST_IF" || return 1
	tb_resolve "$NS_RTR" "$1"
}

# The router config for MODE: the shipped example configs/MODE.ini, which is
# written for this testbed, so that every example is exercised by a test;
# the built-in template (same semantics) only if it is missing.
router_write_config() {
	local mode=$1 file=$2
	if [ -f "$XNAT_ROOT/configs/$mode.ini" ]; then
		cp "$XNAT_ROOT/configs/$mode.ini" "$file"
		return
	fi
	cat >"$file" <<-EOF
	; xnat integration testbed, mode $mode (written by tests/integration/lib.sh)
	[router]
	mode = $mode
	wan  = $RTR_WAN_IF
	lan  = $RTR_LAN_IF

	[nat]
	address = auto
	ports   = $NAT_PORT_MIN-$NAT_PORT_MAX

	[flows]
	max = 65536

	[forward]
	tcp/8080 = $LAN_HOST4:80
	udp/5353 = $LAN_HOST4:53
	EOF
}

# Add KEY = VALUE to [SECTION] of the router's config (TB_CONFIG), for a
# test that needs a setting the example configs leave at its default: a
# section may appear twice, a key only once.
config_add() {
	printf '\n[%s]\n%s = %s\n' "$1" "$2" "$3" >>"$TB_CONFIG"
}

# Bring xnat up on the router in MODE. The sysctls xnat changes are noted
# first so that down_clean can check that `xnat down` put them back.
router_up() {
	local mode=$1 out rc
	TB_MODE=$mode
	TB_CONFIG=$TB_WORK/router-$mode.ini
	router_write_config "$mode" "$TB_CONFIG" || return 1
	on "$NS_RTR" sysctl -n net.ipv4.ip_forward >"$TB_WORK/ip_forward.before"
	tb_vlog "+ $XNAT -n $NS_RTR up -c $TB_CONFIG"
	out=$(timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" up -c "$TB_CONFIG" 2>&1)
	rc=$?
	[ -n "$out" ] && tb_vlog "$out"
	if [ $rc -ne 0 ]; then
		echo "xnat -n $NS_RTR up -c $TB_CONFIG: exit $rc"
		[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/  | /'
		return 1
	fi
	return 0
}

# Delete namespace NS (one of this testbed's) after ending by PID, hard,
# what still runs in it: what the polite pass of testbed_teardown left.
tb_ns_del() {
	local ns=$1 p
	for p in $(ip netns pids "$ns" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null
	done
	ip netns del "$ns" 2>/dev/null ||
		tb_warn "teardown: could not delete namespace $ns"
}

# Remove everything this testbed created, whatever state it is in; safe to
# call twice. Order: our processes, xnat (while its namespace still exists),
# what xnat failed to remove for this namespace, the namespaces.
testbed_teardown() {
	local ns p dir out extra=()

	[ -n "$TB_WORK" ] && tb_kill_started "$TB_WORK/pids"
	# Namespaces a test body added (tb_ns_extra) in its subshell.
	[ -n "$TB_WORK" ] && [ -s "$TB_WORK/netns" ] &&
		mapfile -t extra <"$TB_WORK/netns"

	if [ -n "$NS_RTR" ] && [ -e "/run/netns/$NS_RTR" ] &&
	   [ -n "$TB_MODE" ] && [ -x "$XNAT" ]; then
		# After a test that already ran `xnat down` this is a second
		# down; its complaint (if any) is only shown with V=1.
		out=$(timeout "$T_XNAT" "$XNAT" -n "$NS_RTR" down 2>&1) ||
			tb_vlog "teardown: xnat down: $out"
	fi

	# Anything still running inside our namespaces was started by this
	# run (a test's server, `xnat run`): end it by PID before the
	# namespace goes, or it would keep running in a namespace no one can
	# name any more.
	local ended=()
	for ns in "${extra[@]}" "${TB_NS_CREATED[@]}"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			tb_vlog "teardown: ending pid $p ($(cat "/proc/$p/comm" 2>/dev/null)) left in $ns"
			kill "$p" 2>/dev/null && ended+=("$p")
		done
	done
	wait_until 10 tb_pids_gone "${ended[@]}"

	# xnat's state for this namespace (named by its inode) must be gone;
	# if not, remove it so a later namespace that gets the same inode
	# does not find stale state, and say so.
	if [ -n "$TB_RTR_INO" ]; then
		for dir in "/sys/fs/bpf/xnat/$TB_RTR_INO" "/run/xnat/$TB_RTR_INO"; do
			[ -e "$dir" ] || continue
			tb_warn "teardown: $dir left behind; removing it"
			rm -rf -- "$dir"
		done
	fi

	for ns in "${extra[@]}"; do
		[ -e "/run/netns/$ns" ] || continue
		tb_ns_del "$ns"
	done
	[ ${#extra[@]} -gt 0 ] && : >"$TB_WORK/netns"
	for ns in "${TB_NS_CREATED[@]}"; do
		tb_ns_del "$ns"
	done
	TB_NS_CREATED=()
	TB_RTR_INO=
	TB_MODE=
}

# Open a shell in the testbed (DEBUG_TESTENV=1) before it is torn down.
tb_debug_shell() {
	[ "$DEBUG_TESTENV" = 1 ] || return 0
	if ! [ -r /dev/tty ]; then
		tb_warn "DEBUG_TESTENV=1 but no terminal; not opening a shell"
		return 0
	fi
	cat >/dev/tty <<-EOF
	---- DEBUG_TESTENV: testbed kept until this shell exits ----
	  LAN host:  ip netns exec $NS_LAN bash     ($HOST_IF $LAN_HOST4 $LAN_HOST6)
	  router:    ip netns exec $NS_RTR bash     ($RTR_LAN_IF, $RTR_WAN_IF; mode ${TB_MODE:-none})
	  WAN host:  ip netns exec $NS_WAN bash     ($HOST_IF $WAN_HOST4 $WAN_HOST6)
	  xnat:      $XNAT -n $NS_RTR status
	  files:     $TB_WORK
	EOF
	NS_LAN=$NS_LAN NS_RTR=$NS_RTR NS_WAN=$NS_WAN TB_WORK=$TB_WORK \
		XNAT=$XNAT PS1="[xnat-testenv] \\w# " \
		bash --norc -i </dev/tty >/dev/tty 2>&1
}

# Run-wide scratch dir and the trap that always cleans up. INT and TERM
# become an exit so that the EXIT trap runs exactly once.
tb_init() {
	TB_TMP=$(mktemp -d /tmp/xnat-test.XXXXXX) || exit 1
	trap tb_exit EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
}

tb_exit() {
	local rc=$?
	trap - EXIT INT TERM HUP
	testbed_teardown
	[ -n "$TB_TMP" ] && rm -rf -- "$TB_TMP"
	exit $rc
}

# Tools the testbed and traffic need; missing ones make every test SKIP.
tb_missing_tools() {
	local t missing=()
	for t in ip ethtool socat ss timeout sha256sum ping python3 nft stat; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	echo "${missing[*]}"
}

# ---- traffic helpers shared by the tests and the demo -------------------------

# A file of SIZE (e.g. 12M) random bytes.
random_file() {
	head -c "$2" /dev/urandom >"$1"
}

# Compare two files by sha256; prints both sums.
same_file() {
	local a b
	a=$(sha256sum <"$1" | cut -d' ' -f1)
	b=$(sha256sum <"$2" 2>/dev/null | cut -d' ' -f1)
	echo "  sha256 $(basename "$1")=$a $(basename "$2")=${b:-missing} ($(stat -c %s "$2" 2>/dev/null || echo 0) bytes)"
	[ -n "$b" ] && [ "$a" = "$b" ]
}

# TCP servers in the background (listening on all addresses, v4 and v6),
# returning once they listen. recv writes what it gets to OUT; send sends
# FILE to whoever connects. One connection each.
tcp_server_recv() {
	local ns=$1 port=$2 out=$3
	bg_ns "$T_XFER" "$ns" socat -u "TCP6-LISTEN:$port,reuseaddr,ipv6only=0" \
		"OPEN:$out,creat,trunc"
	wait_listen "$ns" tcp "$port"
}

tcp_server_send() {
	local ns=$1 port=$2 file=$3
	bg_ns "$T_XFER" "$ns" socat -u "OPEN:$file" \
		"TCP6-LISTEN:$port,reuseaddr,ipv6only=0"
	wait_listen "$ns" tcp "$port"
}

# Echo server (TCP or UDP): what a client sends comes back.
echo_server() {
	local ns=$1 proto=$2 port=$3
	if [ "$proto" = tcp ]; then
		bg_ns "$T_XFER" "$ns" socat -t 5 \
			"TCP6-LISTEN:$port,reuseaddr,ipv6only=0" PIPE
	else
		bg_ns "$T_XFER" "$ns" socat -t 5 \
			"UDP6-LISTEN:$port,reuseaddr,ipv6only=0" PIPE
	fi
	wait_listen "$ns" "$proto" "$port"
}

# A random file of SIZE sent from NS_FROM to a server in NS_TO on
# ADDR:PORT, checked to arrive whole (TB_WORK/NAME.bin, NAME.recv); the
# test fails where it does not.
tcp_upload_checked() {
	local name=$1 size=$2 from=$3 to=$4 addr=$5 port=$6
	random_file "$TB_WORK/$name.bin" "$size"
	tcp_server_recv "$to" "$port" "$TB_WORK/$name.recv" || fail "no server"
	check tcp_send "$from" "TCP:$addr:$port" "$TB_WORK/$name.bin"
	bg_wait "$BG_PID" || fail "server did not finish"
	same_file "$TB_WORK/$name.bin" "$TB_WORK/$name.recv" || fail "transfer corrupted"
}

# The LAN host has learnt path MTU MTU towards ADDR (from "fragmentation
# needed"), or the test fails.
expect_lan_pmtu() {
	local addr=$1 mtu=$2
	check on_lan ip route get "$addr"
	grep -q "mtu $mtu" <<<"$CHECK_OUT" || fail "the LAN host did not learn PMTU $mtu"
}

# A paced TCP stream in the background, for tests that change the router
# under a running connection: from NS to DEST (ADDR:PORT), the file
# TB_WORK/chunk.bin every 50 ms for as long as STREAM_FLAG exists, and at
# least MIN times, so that it outlasts the change however long that takes.
# The whole pipeline is bounded by SECS. What it sent is kept in
# TB_WORK/NAME.sent (to compare with what arrived), socat's messages in
# TB_WORK/NAME.log. Sets STREAM_PID; `rm -f "$STREAM_FLAG"` ends it.
paced_stream() {
	local ns=$1 dest=$2 name=$3 min=$4 secs=$5
	STREAM_FLAG=$TB_WORK/streaming
	touch "$STREAM_FLAG"
	# shellcheck disable=SC2016 # the inner script's own arguments
	timeout "$secs" bash -c '
		i=0
		while [ -e "$1" ] || [ $i -lt "$6" ]; do
			cat "$2"; sleep 0.05; i=$((i + 1))
		done | tee "$3" |
		ip netns exec "$4" socat -u - "TCP:$5"
	' _ "$STREAM_FLAG" "$TB_WORK/chunk.bin" "$TB_WORK/$name.sent" "$ns" \
		"$dest" "$min" </dev/null >"$TB_WORK/$name.log" 2>&1 &
	STREAM_PID=$!
	echo "$STREAM_PID" >>"$TB_WORK/pids"
}

# The packets counter of one reason of `xnat stats --json` (a suite may
# define its own, e.g. to leave stderr out of the JSON).
counter() {
	local out
	out=$(xnat stats --json 2>&1) || { echo "xnat stats --json: $out" >&2; return 1; }
	json_q "j['counters']['$1']['packets']" <<<"$out"
}

# Wait (at most 5 s, or SECS) until the log of a background command has a
# line matching REGEX.
wait_log() {
	local log=$1 re=$2 n=$((${3:-5} * 10))
	for _ in $(seq "$n"); do
		grep -qE "$re" "$log" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "no '$re' in $log after ${3:-5} s: $(cat "$log" 2>/dev/null)"
	return 1
}

# A variant of the test's config: TB_WORK/NAME.ini from TB_CONFIG with each
# SECTION.KEY=VALUE set, replacing the key's line or adding it after the
# section header; prints the file's path. Every key is checked to be set.
config_variant() {
	local name=$1 kv sk sec key val file=$TB_WORK/$1.ini
	shift
	cp "$TB_CONFIG" "$file" || return 1
	for kv in "$@"; do
		sk=${kv%%=*} val=${kv#*=}
		sec=${sk%%.*} key=${sk#*.}
		if grep -qE "^[[:space:]]*${key}[[:space:]]*=" "$file"; then
			sed -i -E "s|^[[:space:]]*${key}[[:space:]]*=.*|${key} = ${val}|" "$file"
		else
			grep -qE "^\\[${sec}\\]" "$file" || printf '\n[%s]\n' "$sec" >>"$file"
			sed -i -E "/^\\[${sec}\\]/a ${key} = ${val}" "$file"
		fi
		grep -qxF "$key = $val" "$file" ||
			{ echo "config_variant: could not set $key = $val" >&2; return 1; }
	done
	echo "$file"
}

# Fill the associative array named ARRAY with the conntrack timeouts
# (file names under /proc/sys/net/netfilter) that [timeouts] udp, icmp,
# tcp_established and tcp_transitory (the other arguments, in seconds)
# give the router's namespace: user/kernel_mode.c, add_ct_timeouts().
ct_timeouts_of() {
	local -n _ct=$1
	local st
	_ct=([nf_conntrack_udp_timeout]=$2 [nf_conntrack_udp_timeout_stream]=$2
	     [nf_conntrack_icmp_timeout]=$3
	     [nf_conntrack_tcp_timeout_established]=$4)
	# RFC 5382's transitory: every TCP state but established.
	for st in syn_sent syn_recv fin_wait close_wait last_ack time_wait; do
		_ct["nf_conntrack_tcp_timeout_$st"]=$5
	done
}

# Write a variant and apply it with `xnat up -c` (a reload in place).
reload_with() {
	local file
	file=$(config_variant "$@") || fail "cannot write config variant $1"
	shift
	echo "config $file: $*"
	check xnat up -c "$file"
}

# Same, but down and up: for changes a reload refuses (table sizes).
restart_with() {
	local file
	file=$(config_variant "$@") || fail "cannot write config variant $1"
	shift
	echo "config $file: $*"
	check xnat down
	check xnat up -c "$file"
}

# In xdp mode, the packets counter of REASON now, in XDP_COUNT0 (0 in the
# other modes, where XDP does not answer for itself).
xdp_count_start() {
	XDP_COUNT0=0
	[ "$TB_MODE" = xdp ] || return 0
	XDP_COUNT0=$(counter "$1") || fail "no $1 counter"
}

# In xdp mode, REASON's counter went up since xdp_count_start, or the test
# fails with WHAT.
xdp_count_rose() {
	local c1
	[ "$TB_MODE" = xdp ] || return 0
	c1=$(counter "$1") || fail "no $1 counter"
	echo "$1: $XDP_COUNT0 before, $c1 after"
	[ "$c1" -gt "$XDP_COUNT0" ] || fail "$2"
}

# Milliseconds on the wall clock, for measuring expiry.
now_ms() {
	local t=${EPOCHREALTIME/[.,]/}
	echo $((t / 1000))
}

# Number of entries of `xnat flows --json` for which the Python condition
# COND (over one entry, f) holds.
flow_count() {
	local out
	out=$(xnat flows --json 2>&1) || { echo "xnat flows --json: $out" >&2; return 1; }
	json_q "len([f for f in j['flows'] if $1])" <<<"$out"
}

# Poll (at most 10 s) until CMD [ARGS...] prints a number that is OP N
# (-eq, -ge, ...); otherwise says WHAT it printed last.
wait_number() {
	local op=$1 n=$2 what=$3 got
	shift 3
	for _ in $(seq 50); do
		got=$("$@") || return 1
		test "$got" "$op" "$n" && return 0
		sleep 0.2
	done
	echo "$what: $got, expected $op $n"
	return 1
}

# A TCP connection from the LAN host to the WAN host's PORT: six small
# writes, then SECS of silence, then FIN (the server's copy in
# TB_WORK/idle.PORT). In offload mode both directions get offloaded after
# the first writes and stay on the fast path while it is silent.
tcp_idle_connection() {
	local port=$1 secs=$2
	tcp_server_recv "$NS_WAN" "$port" "$TB_WORK/idle.$port" ||
		fail "no server on $port"
	# shellcheck disable=SC2016 # the inner script's own argument
	timeout $((secs + 10)) bash -c '
		for i in 1 2 3 4 5 6; do echo "x$i"; sleep 0.2; done; sleep "$1"
	' _ "$secs" | timeout $((secs + 10)) ip netns exec "$NS_LAN" socat -u - \
		"TCP:$WAN_HOST4:$port" >/dev/null 2>&1 &
	echo $! >>"$TB_WORK/pids"
}

# `xnat run` with config CFG in the background, bounded by SECS (generous:
# timeout(1) counts on the wall clock, which may jump on a virtual machine,
# and an early SIGTERM would take the router down in the middle of a test);
# its standard output (the event log) into OUT, its log (stderr) into ERR,
# the same file if not given. Returns once run has brought the router up
# (or reloaded the one up already) and, in offload mode, its watch has
# started, which gives every offloaded entry back (a flow made before
# would go back too). Sets RUN_PID and RUN_LOG (ERR).
# xnat_run_start SECS CFG OUT [ERR]
xnat_run_start() {
	local secs=$1 cfg=$2 out=$3 err=${4:-$3}
	if [ "$err" = "$out" ]; then
		timeout "$secs" "$XNAT" -n "$NS_RTR" run -c "$cfg" >"$out" 2>&1 </dev/null &
	else
		timeout "$secs" "$XNAT" -n "$NS_RTR" run -c "$cfg" >"$out" 2>"$err" </dev/null &
	fi
	RUN_PID=$!
	# shellcheck disable=SC2034 # for the callers
	RUN_LOG=$err
	echo "$RUN_PID" >>"$TB_WORK/pids"
	echo "+ & [pid $RUN_PID, ${secs}s] xnat run -c $cfg"
	wait_log "$err" "xnat (up|reloaded) in " 20 || fail "xnat run did not come up"
	[ "$TB_MODE" != offload ] || wait_log "$err" "as the watch started" 20 ||
		fail "xnat run's watch did not start"
}

# xnat_run_start with the test's config, for its whole time.
xnat_run_bg() { xnat_run_start 120 "$TB_CONFIG" "$TB_WORK/xnat-run.log"; }

# 300 datagrams of 200 bytes one way from namespace NS to DST:PORT, 2 ms
# apart, from source port SPORT (default: any); bounded at 20 s.
udp_one_way() {
	timeout 20 ip netns exec "$1" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", int(sys.argv[3])))
for i in range(300):
    s.sendto(b"x" * 200, (sys.argv[1], int(sys.argv[2])))
    time.sleep(0.002)
' "$2" "$3" "${4:-0}"
}

# Client side: socat ADDRESS is e.g. TCP:198.19.0.2:5000 or
# TCP6:[2001:2:0:2::2]:5000.
tcp_send() { timeout "$T_XFER" ip netns exec "$1" socat -u "OPEN:$3" "$2"; }
tcp_recv() {
	timeout "$T_XFER" ip netns exec "$1" socat -u "$2" "OPEN:$3,creat,trunc"
}

# One UDP request: prints the reply. -t 1: UDP has no EOF, so wait one
# second for the answer after sending.
udp_ask() {
	local ns=$1 addr=$2 msg=$3
	printf '%s\n' "$msg" |
		timeout 5 ip netns exec "$ns" socat -t 1 - "$addr"
}

# Evaluate a Python expression over the JSON document on stdin, bound as j;
# prints the result (JSON for containers and booleans). Fails if stdin is
# not JSON or the expression raises.
json_q() {
	python3 -c '
import json, sys
j = json.load(sys.stdin)
r = eval(sys.argv[1], {"j": j})
print(json.dumps(r) if isinstance(r, (dict, list, bool)) or r is None else r)
' "$1"
}

# EXPR (as json_q) over the JSON of `xnat SUBCOMMAND --json`; returns 1 if
# xnat fails. xnat's stderr goes to the test's log, not into the JSON, so
# that a warning there cannot break the parse.
xnat_json_q() {
	local out
	out=$(xnat "$1" --json) || return 1
	json_q "$2" <<<"$out"
}

# ---- the runner ---------------------------------------------------------------

# Modes each test runs in, set by the test file: TEST_MODES[name]="xdp".
declare -A TEST_MODES=()

# TEST_MODES for several tests at once: test_modes MODES NAME...
test_modes() {
	local modes=$1 t
	shift
	for t; do
		TEST_MODES[$t]=$modes
	done
}
DEFAULT_MODES="xdp kernel offload"

# test_* functions of the sourcing file, in the order they are written
# (declare -F alone sorts by name).
tb_discover() {
	local f line file
	shopt -s extdebug
	while read -r _ _ f; do
		case $f in test_*) ;; *) continue ;; esac
		read -r _ line file < <(declare -F "$f")
		[ "$(realpath "$file")" = "$TB_TEST_FILE" ] &&
			echo "$line ${f#test_}"
	done < <(declare -F) | sort -n | cut -d' ' -f2
	shopt -u extdebug
}

# name[mode] pairs selected by the arguments (substrings; none = all) and
# by MODES.
tb_selected() {
	local t m id a hit
	for t in $(tb_discover); do
		for m in ${TEST_MODES[$t]:-$DEFAULT_MODES}; do
			case " ${MODES:-xdp kernel offload} " in *" $m "*) ;; *) continue ;; esac
			id="${t}[${m}]"
			hit=$(($# == 0))
			for a in "$@"; do
				case $id in *"$a"*) hit=1 ;; esac
			done
			[ $hit = 1 ] && echo "$id"
		done
	done
}

# Run one test in a fresh testbed. Prints the result line; returns 0, 1 or
# SKIPPED_TEST.
tb_run_one() {
	local n=$1 name=$2 mode=$3 log rc missing
	testbed_names "$$-$n"
	log=$TB_WORK/test.log
	: >"$log"

	missing=$(tb_missing_tools)
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: must run as root" >"$log"; rc=$SKIPPED_TEST
	elif [ -n "$missing" ]; then
		echo "SKIP: missing tools: $missing" >"$log"; rc=$SKIPPED_TEST
	elif ! [ -x "$XNAT" ]; then
		echo "SKIP: $XNAT not built (run make)" >"$log"; rc=$SKIPPED_TEST
	elif ! testbed_setup >>"$log" 2>&1; then
		echo "FAIL: testbed setup failed" >>"$log"; rc=1
	elif ! router_up "$mode" >>"$log" 2>&1; then
		echo "FAIL: xnat up ($mode) failed" >>"$log"; rc=1
	else
		# The test body, in a subshell so that fail/skip/check end only
		# the test; V=1 shows its log as it is written.
		export NS_LAN NS_RTR NS_WAN TB_WORK TB_MODE TB_CONFIG
		if [ "$V" = 1 ]; then
			( set -u; "test_$name" ) 2>&1 | tee -a "$log"
			rc=${PIPESTATUS[0]}
		else
			( set -u; "test_$name" ) >>"$log" 2>&1
			rc=$?
		fi
	fi

	tb_debug_shell
	testbed_teardown

	case $rc in
	0) echo "#$n ${name}[${mode}]:OK" ;;
	"$SKIPPED_TEST")
		echo "#$n ${name}[${mode}]:SKIP"
		sed -n 's/^SKIP: /    skip: /p' "$log" | tail -1
		;;
	*)
		echo "#$n ${name}[${mode}]:FAIL"
		[ "$V" = 1 ] || sed 's/^/    /' "$log"
		rc=1
		;;
	esac
	return "$rc"
}

# Entry point for test files: `run_tests "$@"` as their last line.
# Arguments select tests by substring of "name[mode]"; --list only lists.
run_tests() {
	local id n=0 pass=0 failed=0 skipped=0 rc name mode
	TB_TEST_FILE=$(realpath "${BASH_SOURCE[1]}")

	if [ "${1:-}" = --list ]; then
		shift
		tb_selected "$@"
		return 0
	fi

	tb_init
	for id in $(tb_selected "$@"); do
		n=$((n + 1))
		name=${id%%\[*}
		mode=${id#*\[}
		mode=${mode%\]}
		tb_run_one "$n" "$name" "$mode"
		rc=$?
		case $rc in
		0) pass=$((pass + 1)) ;;
		"$SKIPPED_TEST") skipped=$((skipped + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
	done
	echo "$pass passed, $failed failed, $skipped skipped"
	[ $failed -eq 0 ]
}
