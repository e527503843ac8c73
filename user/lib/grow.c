// SPDX-License-Identifier: GPL-2.0-only
/* Growing arrays; see grow.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"

int grow_for(void *arr, size_t size, size_t n, size_t *cap, size_t first)
{
	size_t want = *cap ? 2 * *cap : first;
	void *old, *bigger;

	if (n < *cap)
		return 0;
	memcpy(&old, arr, sizeof(old));
	bigger = realloc(old, want * size);
	if (!bigger)
		return -ENOMEM;
	memcpy(arr, &bigger, sizeof(bigger));
	*cap = want;
	return 0;
}
