// SPDX-License-Identifier: GPL-2.0-only
/* placeholder replaced below */
#include "cmd.h"
int cmd_metrics(const struct opts *o)
{
	return fail(o, EXIT_USAGE, "metrics: not built yet");
}
