#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make fuzz`: a campaign of the data-path fuzzer (fuzz_xdp.c), bounded by
# FUZZ_PACKETS (default 10 million; one input is one packet). The seed
# corpus (tests/fuzz/corpus/) is read, never written: what libFuzzer finds
# goes to a scratch directory, crashes and invariant violations to
# FUZZ_OUT (default fuzz-out/). Exit status 0 when the campaign ran to its
# end with every invariant holding, 1 otherwise. The last line says how
# many of the data path's branches were reached.
#
#   FUZZ_PACKETS=200000 tests/fuzz/run.sh     (what `make test` runs)
#   FUZZ_SEED=N picks libFuzzer's seed (default 1: runs repeat exactly)
#   FUZZ_JOBS is not offered: the program's branch counters are one array.
set -u
cd "$(dirname "$0")/../.." || exit 1

bin=.output/fuzz/fuzz_xdp
packets=${FUZZ_PACKETS:-10000000}
seed=${FUZZ_SEED:-1}
out=${FUZZ_OUT:-fuzz-out}

if [ "$(id -u)" -ne 0 ]; then
	echo "fuzz: must run as root (BPF_PROG_RUN, a network namespace)" >&2
	exit 1
fi
[ -x "$bin" ] || { echo "fuzz: $bin missing: run make" >&2; exit 1; }
case $packets in '' | *[!0-9]*) echo "fuzz: FUZZ_PACKETS must be a number" >&2; exit 1 ;; esac

mkdir -p "$out" || exit 1
work=$(mktemp -d /tmp/xnat-fuzz.XXXXXX) || exit 1
trap 'rm -rf -- "$work"' EXIT

# The history of a violation (fuzz-history.bin) is written to the
# current directory: run there.
start=$(date +%s)
(cd "$out" && exec "$OLDPWD/$bin" -runs="$packets" -seed="$seed" \
	-max_len=1600 -len_control=0 -print_final_stats=1 \
	-artifact_prefix="$PWD/" "$work" "$OLDPWD/tests/fuzz/corpus")
rc=$?
echo "fuzz: $packets packets, exit $rc, $(($(date +%s) - start)) s"
exit $rc
