#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make demo`: xnat in one minute. Builds the integration tests' namespace
# testbed (tests/integration/lib.sh: a LAN host, the router, a WAN host),
# brings xnat up in xdp mode, sends a TCP transfer, a UDP exchange and a
# ping from the LAN to the WAN, shows what xnat saw (`xnat flows`, `xnat
# stats`), and removes everything again, also on Ctrl-C or error.
# Nothing outside the three namespaces it creates is touched.
set -u

# The whole demo is bounded: a hung step cannot keep the testbed around.
# timeout --foreground keeps Ctrl-C working; on expiry the script gets
# SIGTERM and its trap tears the testbed down.
if [ -z "${XNAT_DEMO_BOUNDED:-}" ]; then
	XNAT_DEMO_BOUNDED=1 exec timeout --foreground -k 10 55 bash "$0" "$@"
fi

# shellcheck source-path=SCRIPTDIR source=../tests/integration/lib.sh
. "$(dirname "$0")/../tests/integration/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: must run as root (network namespaces, XDP); try: sudo make demo" >&2
	exit 1
fi
if ! [ -x "$XNAT" ]; then
	echo "demo: $XNAT not found; run make first" >&2
	exit 1
fi
missing=$(tb_missing_tools)
if [ -n "$missing" ]; then
	echo "demo: missing tools: $missing (make deps installs them)" >&2
	exit 1
fi

heading() { printf '\n== %s\n' "$1"; }
# Explanations for a newcomer, indented under the heading.
say() { printf '   %s\n' "$@"; }
die() { echo "demo: $*" >&2; exit 1; }

tb_init
testbed_names "demo-$$"

heading "Testbed"
say "Three network namespaces joined by veth pairs, removed again at the end:" \
    "  LAN host $NS_LAN  $LAN_HOST4 $LAN_HOST6" \
    "  router   $NS_RTR  lan0 $RTR_LAN4, wan0 $RTR_WAN4" \
    "  WAN host $NS_WAN  $WAN_HOST4 $WAN_HOST6" \
    "The WAN host has no route to the LAN's IPv4 subnet: LAN hosts reach it" \
    "only through the router's NAT, as from behind a home router."
testbed_setup || die "testbed setup failed"

heading "xnat up (mode = xdp)"
router_up xdp || die "xnat up failed"
say "Config written to $TB_CONFIG:"
sed -n '/^\[/,$p' "$TB_CONFIG" | sed 's/^/     /'
xnat status || die "xnat status failed"

heading "Traffic: LAN host -> WAN host"
random_file "$TB_WORK/demo.bin" 8M
tcp_server_recv "$NS_WAN" 5000 "$TB_WORK/demo.recv" >/dev/null ||
	die "TCP server did not start"
tcp_send "$NS_LAN" "TCP:$WAN_HOST4:5000" "$TB_WORK/demo.bin" ||
	die "TCP transfer failed"
bg_wait "$BG_PID" >/dev/null
if same_file "$TB_WORK/demo.bin" "$TB_WORK/demo.recv" >/dev/null; then
	say "TCP: 8 MB uploaded to $WAN_HOST4:5000, sha256 matches"
else
	die "TCP: the file arrived damaged"
fi

echo_server "$NS_WAN" udp 5001 >/dev/null || die "UDP server did not start"
reply=$(udp_ask "$NS_LAN" "UDP:$WAN_HOST4:5001" "hello from the LAN")
bg_stop "$BG_PID"
[ "$reply" = "hello from the LAN" ] || die "UDP: no reply"
say "UDP: request to $WAN_HOST4:5001, reply came back: \"$reply\""

# A long-lived connection so that a TCP flow is still in the table below.
tcp_server_recv "$NS_WAN" 5002 /dev/null >/dev/null || die "TCP server did not start"
timeout 30 ip netns exec "$NS_LAN" socat -u EXEC:"sleep 20" \
	"TCP:$WAN_HOST4:5002" </dev/null >/dev/null 2>&1 &
echo $! >>"$TB_WORK/pids"

loss=$(on_lan ping -c 3 -i 0.2 -W 2 "$WAN_HOST4" | grep -o '[0-9.]*% packet loss')
say "ICMP: 3 pings to $WAN_HOST4, ${loss:-no answer}"

heading "xnat flows: the flow table"
say "One line per direction of each connection. 'snat' lines go out from" \
    "the LAN: the source $LAN_HOST4:port is rewritten to the router's WAN" \
    "address $RTR_WAN4 and a port from the NAT range; the reply direction" \
    "undoes it. Later packets of a flow are rewritten from this table alone."
echo
xnat flows || die "xnat flows failed"

heading "xnat stats: what happened to each packet"
say "fwd_slow: first packet of a flow, routed and NAT decided, flow created." \
    "fwd_fast: every later packet, rewritten from the flow table in XDP," \
    "          without the kernel's routing or firewall." \
    "pass_*:   handed to the kernel (ARP, packets for the router itself, ...)." \
    "drop_*:   dropped, by reason (e.g. unsolicited WAN traffic)."
echo
xnat stats || die "xnat stats failed"

heading "Teardown"
xnat down || die "xnat down failed"
say "xnat down: programs detached, nft table and pinned maps removed." \
    "The namespaces go next (EXIT trap), with whatever is left in them."
