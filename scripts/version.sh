#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The version `xnat --version` prints, stamped in at build time: the
# nearest tag (vX.Y, without the v) with git describe's suffix for commits
# since and a dirty tree; BASE-gCOMMIT before the first tag; BASE alone
# outside a git checkout (a release tarball).
BASE=0.1
cd "$(dirname "$0")/.." || exit 1
if v=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null); then
	echo "${v#v}"
elif h=$(git describe --always --dirty 2>/dev/null); then
	echo "$BASE-g$h"
else
	echo "$BASE"
fi
