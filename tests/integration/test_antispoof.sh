#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Spoofed sources from the WAN (RFC 3704 strict reverse path on the WAN
# port), end to end in the namespace testbed (lib.sh), in every mode: a
# datagram from the WAN host carrying a LAN address as its source, sent to
# the udp/5353 port forward, never reaches the LAN host; the same datagram
# from the WAN host's own address does. xdp mode drops it in XDP
# (drop_spoofed, bpf/fib.h); kernel and offload mode in the kernel, by the
# antispoof chain of xnat's nftables table (user/kernel_mode.c), whose
# counter shows it. And from a LAN port, in every mode: a source the
# router does not route back out of it never leaves (XDP's check; in
# kernel and offload mode the forward chain's).
#
#   tests/integration/test_antispoof.sh [SUBSTRING...]
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

SPOOF4=198.18.1.20 # on the router's LAN subnet, no host there

# Packets counted by the antispoof chain's drop rule.
antispoof_drops() {
	local out
	out=$(on_rtr nft list chain inet xnat antispoof) || return 1
	sed -n 's/.* counter packets \([0-9]*\) bytes .*drop$/\1/p' <<<"$out"
}

# One datagram from the WAN host to the forward, from source SRC.
send_from() {
	printf '%s\n' "$2" | on_wan socat -u - \
		"UDP4-SENDTO:$RTR_WAN4:5353,bind=$1"
}

test_spoofed_lan_source() {
	local got=$TB_WORK/lan.recv tok=spoof-$RANDOM before

	# Everything the LAN host's port 53 receives, datagram by datagram.
	bg_ns 30 "$NS_LAN" socat -u UDP4-RECV:53 "OPEN:$got,creat,append"
	wait_listen "$NS_LAN" udp 53 || fail "no receiver on the LAN host"
	check on_wan ip addr add "$SPOOF4/32" dev "$HOST_IF"
	before=$(antispoof_drops)
	[ -n "$before" ] || fail "no antispoof rule with a counter"

	check send_from "$SPOOF4" "spoofed-$tok"
	check send_from "$WAN_HOST4" "genuine-$tok"
	# Same path, same order: once the genuine one is there, a spoofed
	# one let through would be there too.
	wait_log "$got" "genuine-$tok" || fail "the genuine datagram did not arrive"
	if grep -q "spoofed-$tok" "$got"; then
		fail "a datagram with a LAN source from the WAN reached the LAN host"
	fi
	if [ "$TB_MODE" = xdp ]; then
		[ "$(counter drop_spoofed)" -ge 1 ] ||
			fail "drop_spoofed not counted: $(xnat stats)"
	else
		[ "$(antispoof_drops)" -gt "$before" ] ||
			fail "the antispoof rule did not count it: $(on_rtr nft list chain inet xnat antispoof)"
	fi
}

# From a LAN port (RFC 3704 strict on every port), in every mode: the LAN
# host sends from an address the router routes out of the WAN, to the WAN
# host. Routed, its connection's reply direction would catch traffic it
# must not; it never reaches the WAN host, while the LAN host's own
# datagram is NATed and arrives. xdp mode drops it in XDP (fib_src_check
# in bpf/fib.h, counted as drop_spoofed); kernel and offload mode in the
# forward chain of xnat's table (a new connection only), whose counter
# shows it.
SPOOF_WAN4=198.19.0.77 # on the WAN's subnet, no host there

# Packets counted by the forward chain's LAN source checks: the strict
# rule's and, with source_check = feasible, the LAN ports' own.
lan_source_drops() {
	local out
	out=$(on_rtr nft list chain inet xnat forward) || return 1
	sed -n -E 's/.*fib saddr (\. iif oif missing|oifname != \{[^}]*\}) counter packets ([0-9]+) bytes .*drop$/\2/p' <<<"$out" |
		awk '{ n += $1 } END { if (NR) print n }'
}

# The count of LAN-side spoofed drops: XDP's, or the forward chain's.
lan_spoofed_drops() {
	if [ "$TB_MODE" = xdp ]; then
		counter drop_spoofed
	else
		lan_source_drops
	fi
}

# One datagram from the LAN host to the WAN host, from source SRC.
send_lan_from() {
	printf '%s\n' "$2" | on_lan socat -u - \
		"UDP4-SENDTO:$WAN_HOST4:5300,bind=$1"
}

test_lan_spoofed_wan_source() {
	local got=$TB_WORK/wan.recv tok=lspoof-$RANDOM before

	bg_ns 30 "$NS_WAN" socat -u UDP4-RECV:5300 "OPEN:$got,creat,append"
	wait_listen "$NS_WAN" udp 5300 || fail "no receiver on the WAN host"
	check on_lan ip addr add "$SPOOF_WAN4/32" dev "$HOST_IF"
	before=$(lan_spoofed_drops)
	[ -n "$before" ] || fail "no LAN source check with a counter"

	check send_lan_from "$SPOOF_WAN4" "spoofed-$tok"
	check send_lan_from "$LAN_HOST4" "genuine-$tok"
	wait_log "$got" "genuine-$tok" || fail "the genuine datagram did not arrive"
	if grep -q "spoofed-$tok" "$got"; then
		fail "a datagram with a WAN-routed source from the LAN reached the WAN host"
	fi
	[ "$(lan_spoofed_drops)" -gt "$before" ] ||
		fail "the spoofed datagram was not counted: $(xnat stats)"
}

# [router] source_check = feasible, in every mode. The LAN's routing is
# asymmetric: the router routes 198.18.60.0/24 out of lan1 (behind its
# host), while a host of it sends through lan0. Strict (the default) drops
# its datagram as spoofed; feasible lets it out, NATed, and still drops a
# source the router routes out of the WAN.
SRC_BEHIND_LAN1=198.18.60.7
test_lan_feasible_source() {
	local got=$TB_WORK/wan.recv tok=feas-$RANDOM before

	testbed_add_lan_port || fail "no second LAN port"
	check on_rtr ip route add 198.18.60.0/24 via "$LAN1_HOST4" dev "$RTR_LAN1_IF"
	check on_lan ip addr add "$SRC_BEHIND_LAN1/32" dev "$HOST_IF"
	check on_lan ip addr add "$SPOOF_WAN4/32" dev "$HOST_IF"
	bg_ns 30 "$NS_WAN" socat -u UDP4-RECV:5300 "OPEN:$got,creat,append"
	wait_listen "$NS_WAN" udp 5300 || fail "no receiver on the WAN host"

	reload_with two-lans "router.lan=lan0, lan1"
	before=$(lan_spoofed_drops)
	check send_lan_from "$SRC_BEHIND_LAN1" "strict-$tok"
	check send_lan_from "$LAN_HOST4" "genuine-$tok"
	wait_log "$got" "genuine-$tok" || fail "the genuine datagram did not arrive"
	grep -q "strict-$tok" "$got" &&
		fail "strict: a source routed out of lan1 got out through lan0"
	[ "$(lan_spoofed_drops)" -gt "$before" ] ||
		fail "strict: the datagram was not counted: $(xnat stats)"

	reload_with feasible "router.lan=lan0, lan1" "router.source_check=feasible"
	[ "$(xnat_json_q status "j['nft']['state']")" = ok ] ||
		fail "status does not find the feasible table as loaded: $(xnat status)"
	before=$(lan_spoofed_drops)
	check send_lan_from "$SRC_BEHIND_LAN1" "feasible-$tok"
	check send_lan_from "$SPOOF_WAN4" "spoofed-$tok"
	wait_log "$got" "feasible-$tok" ||
		fail "feasible: a source routed out of lan1 did not get out through lan0"
	if [ "$TB_MODE" = xdp ]; then
		[ "$(flow_count "f['src'].startswith('$SRC_BEHIND_LAN1:') and f['new_src'].startswith('$RTR_WAN4:')")" -ge 1 ] ||
			fail "feasible: not NATed by XDP: $(xnat flows)"
	fi
	check send_lan_from "$LAN_HOST4" "genuine2-$tok"
	wait_log "$got" "genuine2-$tok" || fail "the second genuine datagram did not arrive"
	grep -q "spoofed-$tok" "$got" &&
		fail "feasible: a WAN-routed source from the LAN reached the WAN host"
	[ "$(lan_spoofed_drops)" -gt "$before" ] ||
		fail "feasible: the WAN-routed source was not counted: $(xnat stats)"
}

run_tests "$@"
