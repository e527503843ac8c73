#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run a command of the README (default: make test) the way a newcomer would
# on a fresh Debian 12 machine: inside a minimal Debian 12 root made with
# mmdebstrap (variant minbase) from this machine's apt sources, holding a
# copy of the source tree and nothing else, so that only the project's own
# install step (scripts/deps.sh) installs packages. A build that works here
# only because this machine happens to have a package installed fails here.
#
#   scripts/fresh-root.sh [COMMAND...]       e.g. scripts/fresh-root.sh make test
#
# The tree copied in is what git tracks plus untracked files it does not
# ignore: on a clean clone (CI) that is the commit; in a work tree it is the
# work in progress. The minbase root is built once and kept in
# $FRESH_BASE (default /var/tmp/xnat-fresh-base-bookworm; it holds no package
# of ours, so keeping it hides nothing); every run works on a new copy of it
# and removes that copy.
#
# The command runs in a private mount namespace whose root is the copy
# (pivot_root, so a program that joins another process's mount namespace
# stays inside), with its own /run, /tmp and bpffs; it shares the network
# stack, so the namespaces tests create are real ones. Its output is shown
# as it runs; the exit status is the command's.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cmd=${*:-make test}
base=${FRESH_BASE:-/var/tmp/xnat-fresh-base-bookworm}

if [ "$(id -u)" -ne 0 ]; then
	echo "fresh-root: must run as root (mmdebstrap, mounts, namespaces)" >&2
	exit 2
fi

need() {
	command -v "$1" >/dev/null && return 0
	echo "fresh-root: installing $2"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}
need mmdebstrap mmdebstrap
need git git

# The machine's apt sources, so the root installs from where this machine
# does (a mirror, a proxy, a snapshot), not from a hard-coded one.
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	/etc/apt/sources.list.d/*.sources; do
	[ -s "$f" ] && sources+=("$f")
done

if [ ! -x "$base/usr/bin/apt-get" ]; then
	echo "fresh-root: building a minimal Debian 12 root in $base"
	rm -rf --one-file-system "$base"
	mmdebstrap --variant=minbase --mode=root --quiet bookworm "$base" \
		"${sources[@]}" || {
		echo "fresh-root: mmdebstrap failed"
		exit 2
	}
fi

work=$(mktemp -d /var/tmp/xnat-fresh-root.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
cp -a "$base/." "$work/"
cp /etc/resolv.conf "$work/etc/resolv.conf"
mkdir -p "$work/src"
git -C "$top" ls-files -z --cached --others --exclude-standard |
	tar -C "$top" -c -f - --null --no-recursion --ignore-failed-read -T - 2>/dev/null |
	tar -x -C "$work/src"

echo "fresh-root: running '$cmd' in a fresh Debian 12 root"
# The only thing installed before the command is make, as the README says.
# shellcheck disable=SC2016 # the inner script expands its own arguments
unshare --mount --propagation private bash -c '
	set -e
	w=$1; shift
	mount --bind "$w" "$w"
	mount --bind /dev "$w/dev"
	mount --bind /dev/pts "$w/dev/pts"
	mount -t proc proc "$w/proc"
	mount -t sysfs sysfs "$w/sys" 2>/dev/null || mount --rbind /sys "$w/sys"
	mount -t bpf bpf "$w/sys/fs/bpf"
	# A fresh sysfs has no cgroup hierarchy under it; the machine has one
	# (cgroup2 on a booted Debian 12, or v1 controllers), and tests use
	# it (the unit sandbox under systemd --user, the memory limit check):
	# the hierarchy of the machine, as a program installed there sees it.
	if mountpoint -q /sys/fs/cgroup; then
		mount --rbind /sys/fs/cgroup "$w/sys/fs/cgroup"
	else
		mount -t cgroup2 cgroup2 "$w/sys/fs/cgroup"
	fi
	mount -t tmpfs tmpfs "$w/run"
	mount -t tmpfs tmpfs "$w/tmp"
	mkdir -p "$w/.old"
	cd "$w"
	pivot_root . .old
	umount -l /.old
	rmdir /.old
	exec /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		TERM=dumb LANG=C.UTF-8 bash -c "
		cd /src &&
		if ! command -v make >/dev/null; then
			apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make >/dev/null
		fi && $*"
' fresh-root "$work" "$cmd"
