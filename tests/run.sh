#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The test runner behind `make test`, `make unit` and `make integration`.
# Runs every unit test binary (.output/tests/test_*, BPF_PROG_RUN based) and
# every integration suite (tests/integration/test_*.sh, network namespaces)
# and the static checks (scripts/check-structure.sh and check-shell.sh, with
# the unit tests),
# shows each suite's output as it runs, and ends with exactly one summary
# line "N passed, N failed, N skipped" summed over all suites, the form CI
# reads. Exit status 1 if anything failed (a suite that crashes or times out
# without its own summary counts as one failure).
#
#   tests/run.sh                 everything
#   tests/run.sh unit            unit tests only
#   tests/run.sh integration     integration tests only
#   tests/run.sh SUBSTRING       suites whose name contains SUBSTRING, and
#                                integration tests whose "name[mode]" does
#
# V=1 and DEBUG_TESTENV=1 are passed on to the integration harness.
set -u

# Suites run from the top of the tree: unit tests find their BPF objects
# relative to it, integration tests find ./xnat.
cd "$(dirname "$0")/.." || exit 1
UNIT_TIMEOUT=${UNIT_TIMEOUT:-300}
INTEGRATION_TIMEOUT=${INTEGRATION_TIMEOUT:-1800}

if [ "$(id -u)" -ne 0 ]; then
	echo "tests/run.sh: must run as root (BPF_PROG_RUN, XDP, network namespaces); try: sudo make test" >&2
	exit 1
fi

filter=${1:-}
kind=all
case $filter in
unit | integration) kind=$filter; filter= ;;
esac

total_pass=0 total_fail=0 total_skip=0 suites=0
results=()
tmp=$(mktemp -d /tmp/xnat-run.XXXXXX) || exit 1
trap 'rm -rf -- "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Add one suite's counts from its log. The last "N passed, N failed[, N
# skipped]" line is its summary; unit binaries may not print skipped, so
# then their "#N name:SKIP" lines are counted.
tally() {
	local name=$1 log=$2 rc=$3 line p f s
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	if [ -z "$line" ]; then
		# Crashed or killed: keep what it did report, plus one failure.
		p=$(grep -cE '^#[0-9]+ .*:OK$' "$log")
		f=$(($(grep -cE '^#[0-9]+ .*:FAIL$' "$log") + 1))
		s=$(grep -cE '^#[0-9]+ .*:SKIP$' "$log")
		echo "run.sh: $name ended (exit $rc) without a summary line; counted as one more failure"
	else
		p=$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")
		f=$(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
		if grep -qE ', [0-9]+ skipped' <<<"$line"; then
			s=$(sed -E 's/.*, ([0-9]+) skipped.*/\1/' <<<"$line")
		else
			s=$(grep -cE '^#[0-9]+ .*:SKIP$' "$log")
		fi
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "run.sh: $name exited $rc but reported no failure; counted as one"
			f=1
		fi
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
	results+=("$(printf '%-40s %3d passed, %3d failed, %3d skipped' \
		"$name" "$p" "$f" "$s")")
}

# Run one suite with its output shown live and kept for tally().
run_suite() {
	local name=$1 secs=$2 log rc
	shift 2
	log=$tmp/$suites.log
	suites=$((suites + 1))
	echo "==== $name"
	# SIGTERM on timeout lets an integration suite's trap tear down its
	# testbed; SIGKILL 30 s later if it does not.
	timeout -k 30 "$secs" "$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && echo "run.sh: $name timed out after ${secs}s"
	tally "$name" "$log" "$rc"
}

if [ "$kind" != integration ]; then
	# The tree's structural limits (file and function sizes, module
	# cycles, SPDX lines, docs naming only what ships): static, seconds.
	for check in structure shell; do
		[[ check/$check == *"$filter"* ]] &&
			run_suite "check/$check" "$UNIT_TIMEOUT" "scripts/check-$check.sh"
	done
	# From the sources, not the build directory: a binary left there by
	# an older tree (a test file since split or removed) is not a suite.
	for src in tests/unit/test_*.c; do
		bin=.output/tests/$(basename "$src" .c)
		name=unit/$(basename "$bin")
		if [ ! -x "$bin" ]; then
			case $name in *"$filter"*) ;; *) continue ;; esac
			echo "run.sh: $bin is not built (make all)"
			total_fail=$((total_fail + 1))
			results+=("$(printf '%-40s not built' "$name")")
			continue
		fi
		case $name in *"$filter"*) ;; *) continue ;; esac
		run_suite "$name" "$UNIT_TIMEOUT" "./$bin"
	done
fi

if [ "$kind" != unit ]; then
	for suite in tests/integration/test_*.sh; do
		[ -f "$suite" ] || continue
		name=integration/$(basename "$suite" .sh)
		args=()
		case $name in
		*"$filter"*) ;;
		*)
			# Not the suite's name: select tests inside it, if any.
			[ -n "$(bash "$suite" --list "$filter")" ] || continue
			args=("$filter")
			;;
		esac
		run_suite "$name" "$INTEGRATION_TIMEOUT" bash "$suite" "${args[@]}"
	done
fi

echo "===="
# shellcheck disable=SC2016 # the quotes are printed around the filter
[ $suites -eq 0 ] && echo "run.sh: no tests matched${filter:+ '$filter'} (did make build them?)"
for r in "${results[@]}"; do
	echo "$r"
done
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ $total_fail -eq 0 ]
