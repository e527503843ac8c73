/* SPDX-License-Identifier: GPL-2.0-only */
/* Names and one-line explanations of enum xnat_reason, for stats output. */
#ifndef XNAT_REASONS_H
#define XNAT_REASONS_H

#include "../bpf/xnat_common.h"

struct reason_desc {
	const char *name;     /* JSON key, stable for scripts */
	const char *meaning;  /* for people */
};

extern const struct reason_desc reasons[XNAT_REASON_MAX];

#endif /* XNAT_REASONS_H */
