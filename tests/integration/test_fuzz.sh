#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A short campaign of the data-path fuzzer in `make test`: tests/fuzz/run.sh
# with FUZZ_TEST_PACKETS (default 200,000) packets from the seed corpus,
# with a fixed seed. Fails on a crash or any violated invariant (the
# fuzzer aborts and saves the input, see tests/fuzz/fuzz_xdp.c), and when
# the campaign did not report the branches it reached. The fuzzer builds its
# own namespace, so this suite does not use lib.sh's testbed. Output:
# "#1 fuzz_short:OK|FAIL" and "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.." || exit 1

if [ "${1:-}" = --list ]; then
	[[ fuzz_short == *"${2:-}"* ]] && echo fuzz_short
	exit 0
fi

packets=${FUZZ_TEST_PACKETS:-200000}
out=$(mktemp -d /tmp/xnat-fuzz-test.XXXXXX) || exit 1
trap 'rm -rf -- "$out"' EXIT

log=$out/log
# The fuzz build is not part of `make all` (a second build of the
# program): build it here, so that a stale fuzzer never tests old code.
if ! timeout 900 make -s --no-print-directory fuzz-build >"$log" 2>&1; then
	sed 's/^/    /' "$log" | tail -20
	echo "#1 fuzz_short:FAIL"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
FUZZ_PACKETS=$packets FUZZ_OUT=$out/artifacts timeout -k 10 600 \
	tests/fuzz/run.sh >>"$log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -qE "^fuzz: $packets packets, [0-9]+ of [0-9]+ branches" "$log"; then
	grep -E '^fuzz: ' "$log"
	echo "#1 fuzz_short:OK"
	echo "1 passed, 0 failed, 0 skipped"
	exit 0
fi
grep -vE '^#[0-9]+' "$log" | tail -40 | sed 's/^/    /'
echo "#1 fuzz_short:FAIL"
echo "0 passed, 1 failed, 0 skipped"
exit 1
