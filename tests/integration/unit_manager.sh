#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# systemd's service manager for tests/integration/test_unit_sandbox.sh:
# `systemd --user` as root, which runs a unit's sandbox (namespaces,
# capabilities, seccomp) with the same code as PID 1, so that a machine
# not booted with systemd can still start the shipped unit. Run it under
# `unshare -m --propagation slave` (it changes mounts):
#
#   unit_manager.sh UNITS_DIR TAG CGROUPS_FILE HOME
#
# /run is made a mount point, as it is wherever systemd runs (else the
# sandbox's API file systems would mount an empty tmpfs over it), and gets
# a /run/systemd of its own (`systemd --user` wants /run/systemd/system to
# run at all; its sockets and UNITS_DIR's units go there). The targets
# that would start sockets and timers of the installed user units are
# masked: the manager starts xnat-test.target, which pulls in nothing.
# It moves into a cgroup of its own, xnat-sandbox-TAG, in each hierarchy
# it manages (cgroup2; v1 name=systemd where mounted), whose paths it
# writes to CGROUPS_FILE for the test to remove.
set -eu
units=$1 tag=$2 cgroups=$3 home=$4
systemd=${SYSTEMD:-/lib/systemd/systemd}

mount --rbind /run /run
mount -t tmpfs tmpfs /run/systemd
mkdir -p /run/systemd/system /run/systemd/user
cp -r "$units"/. /run/systemd/user/
for u in sockets.target basic.target timers.target paths.target default.target; do
	ln -sf /dev/null "/run/systemd/user/$u"
done

# The hierarchy's mount point and this process's cgroup in it: cgroup2
# ("0::PATH"), v1 name=systemd ("N:name=systemd:PATH").
: >"$cgroups"
while read -r type mnt; do
	if [ "$type" = cgroup2 ]; then
		path=$(awk -F: '$1 == 0 { print $3 }' /proc/self/cgroup)
	else
		path=$(awk -F: '$2 == "name=systemd" { print $3 }' /proc/self/cgroup)
	fi
	dir=$mnt${path%/}/xnat-sandbox-$tag
	mkdir "$dir"
	echo "$dir" >>"$cgroups"
	echo $$ >"$dir/cgroup.procs"
done < <(awk '/ - cgroup2 / { print "cgroup2", $5 }
	      / - cgroup / && $NF ~ /(^|,)name=systemd(,|$)/ { print "v1", $5 }' \
	     /proc/self/mountinfo)

exec env HOME="$home" XDG_RUNTIME_DIR=/run "$systemd" --user \
	--unit=xnat-test.target --log-target=console --log-level=notice
