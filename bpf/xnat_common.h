/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Everything the XDP program and userspace share: map keys and values, the
 * config record, counter and reason enums. This is the only header user/
 * includes from bpf/; the records are in one header per concern, included
 * here: common_flow.h (the flow table, fragments), common_config.h (ports,
 * config, forwards), common_nat.h (mappings, ports, the pool hash),
 * common_reasons.h (reasons, counters), common_events.h (trace and event
 * log records). Fixed-width types only; byte order is in the type (__be*)
 * or stated in a comment; every struct has its size asserted so a change
 * on one side cannot silently mis-read the other.
 */
#ifndef XNAT_COMMON_H
#define XNAT_COMMON_H

#include <linux/types.h>
#include "common_flow.h"
#include "common_config.h"
#include "common_nat.h"
#include "common_reasons.h"
#include "common_events.h"

/* Userspace pins the maps in XNAT_PIN_ROOT_DIR/<netns inode>/<map name>. */
#define XNAT_PIN_ROOT_DIR "/sys/fs/bpf/xnat"

/* Upper bound on router interfaces (LAN + WAN) xnat attaches to. */
#define XNAT_MAX_IFACES 64
/* Upper bound on [forward] rules. */
#define XNAT_MAX_FORWARDS 1024

#endif /* XNAT_COMMON_H */
