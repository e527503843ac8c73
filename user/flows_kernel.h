/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `xnat flows` in kernel mode: the kernel's conntrack table is the flow
 * table there, and the connections it NATs are listed from it.
 */
#ifndef XNAT_FLOWS_KERNEL_H
#define XNAT_FLOWS_KERNEL_H

#include "cmd.h"

/* List the NATed connections of this network namespace's conntrack. */
int flows_kernel(const struct opts *o);

#endif /* XNAT_FLOWS_KERNEL_H */
