#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every shell script of the tree through ShellCheck, on every `make test`
# (tests/run.sh runs this as the suite "check/shell"; `make check` runs it
# after scripts/check-structure.sh). The scripts are the tests, the CI
# entry, the installer and the bash completion: a quoting slip in them
# fails quietly (a test that checks less than it says, an option word
# split), so a finding at ShellCheck's "info" severity or above fails
# the check, printed as "FILE:LINE:COL: severity: what [SCnnnn]". One is
# left out: SC2015 (`a && b || c` is no if-then-else), which flags the
# tests' idiom `[ check ] && [ check ] || fail "..."`, where c is meant
# to run when a or b fails. "style" findings are not gated. A finding
# that is wrong for one line gets a `# shellcheck disable=SCnnnn # why`
# on that line, never here.
#
#   scripts/check-shell.sh [-v]     -v also lists the files checked
#
# It ends "#1 shellcheck:OK" (or FAIL) and "N passed, N failed", as
# tests/run.sh reads them.
set -u
cd "$(dirname "$0")/.." || exit 1

if ! command -v shellcheck >/dev/null; then
	echo "check-shell: shellcheck not found: run 'make deps' as root (Debian package shellcheck)"
	echo "#1 shellcheck:FAIL"
	echo "0 passed, 1 failed"
	exit 1
fi

# The scripts by name and by first line, so that a new one is checked
# without being listed; the completion has no first line (it is sourced)
# and says its shell in a directive.
files=()
while IFS= read -r -d '' f; do
	case $f in
	*.sh) files+=("$f") ;;
	*) head -n1 "$f" | grep -qE '^#!.*\b(ba)?sh\b' && files+=("$f") ;;
	esac
done < <(find . -path ./.output -prune -o -path ./.git -prune -o \
	-path ./bench-results -prune -o -type f -print0 | sort -z)
files+=(./packaging/xnat.bash-completion)

[ "${1:-}" = -v ] && printf 'check-shell: %s\n' "${files[@]}"
if shellcheck -x -S info -e SC2015 -f gcc "${files[@]}"; then
	echo "check-shell: ${#files[@]} scripts, no finding at info severity"
	echo "#1 shellcheck:OK"
	echo "1 passed, 0 failed"
	exit 0
fi
echo "check-shell: fix what is listed above (or disable it on its line, saying why)"
echo "#1 shellcheck:FAIL"
echo "0 passed, 1 failed"
exit 1
