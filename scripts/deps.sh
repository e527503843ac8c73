#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Install the Debian 12 packages xnat needs to build, test and demo, only
# those missing, so `make test` and `make demo` work on a fresh machine.
set -euo pipefail

pkgs=(
	make gcc clang llvm pkg-config      # build
	libclang-rt-14-dev                  # libFuzzer for make fuzz (clang-14)
	libbpf-dev libxdp-dev bpftool       # BPF loading, skeletons
	libelf-dev zlib1g-dev
	libinih-dev                         # config file
	libnftables-dev nftables            # kernel mode, passed-up NAT
	libmicrohttpd-dev                   # xnat metrics --listen
	libsystemd-dev                      # sd_notify for Type=notify
	libnetfilter-conntrack-dev          # flows in kernel mode, offload events
	libmnl-dev                          # rtnetlink: links, address events, qdiscs
	conntrack                           # offload tests: conntrack -L/-D/-F
	systemd man-db                      # tests: systemd-analyze verify
	bash-completion                     # tests: packaging/xnat.bash-completion
	iproute2 ethtool                    # testbed
	socat iperf3 procps kmod            # traffic in tests and the demo
	iputils-ping python3                # ping tests; JSON checks in tests
	python3-prometheus-client           # tests parse xnat's metrics
	prometheus                          # tests: promtool check metrics
	traceroute                          # test_nat.sh traceroute
	gnuplot-nox                         # xnat bench's plot
	coreutils util-linux
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run as root to install" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
