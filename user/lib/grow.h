/* SPDX-License-Identifier: GPL-2.0-only */
/* Arrays that grow as they are filled (the lists the commands collect from
 * maps and nft listings): doubling, so appending stays cheap. */
#ifndef XNAT_LIB_GROW_H
#define XNAT_LIB_GROW_H

#include <stddef.h>

/* Room for element N of *ARR (of SIZE-byte elements, *CAP allocated):
 * when N == *CAP, *ARR is reallocated to twice as many (FIRST at first).
 * 0, or -ENOMEM with *ARR left as it was. */
int grow_for(void *arr, size_t size, size_t n, size_t *cap, size_t first);

#endif /* XNAT_LIB_GROW_H */
