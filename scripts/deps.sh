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
	libjansson-dev                      # xnat bench compare reads bench.json
	libmnl-dev                          # rtnetlink: links, address events, qdiscs
	conntrack                           # offload tests: conntrack -L/-D/-F
	systemd man-db                      # tests: systemd-analyze verify
	bash-completion                     # tests: packaging/xnat.bash-completion
	iproute2 ethtool                    # testbed
	socat iperf3 procps kmod            # traffic in tests and the demo
	iputils-ping python3                # ping tests; JSON checks in tests
	python3-prometheus-client           # tests parse xnat's metrics
	traceroute                          # test_nat.sh traceroute
	gnuplot-nox                         # xnat bench's plot
	shellcheck                          # make check: scripts/check-shell.sh
	coreutils util-linux
)

top=$(cd "$(dirname "$0")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive

install_missing() {
	local missing=() p

	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: missing packages: ${missing[*]}; run as root to install" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}"
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# promtool, Prometheus's own metrics linter, for the tests only: taken out
# of Debian's prometheus package into .output/tools/ without installing
# the package, because installing it also enables a Prometheus server
# (port 9090) on the machine, which a router must not get from `make test`.
extract_promtool() {
	local dir=$top/.output/tools tmp

	[ -x "$dir/promtool" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: promtool missing; run as root to fetch it" >&2
		exit 1
	fi
	echo "deps: extracting promtool from Debian's prometheus package"
	tmp=$(mktemp -d)
	(cd "$tmp" && { apt-get download prometheus >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get download prometheus >/dev/null; }; })
	mkdir -p "$dir"
	dpkg-deb --fsys-tarfile "$tmp"/prometheus_*.deb |
		tar -x -C "$tmp" ./usr/bin/promtool
	install -m 0755 "$tmp/usr/bin/promtool" "$dir/promtool"
	rm -rf "$tmp"
}

install_missing
extract_promtool
