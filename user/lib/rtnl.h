/* SPDX-License-Identifier: GPL-2.0-only */
/* One rtnetlink dump, the way every caller asks it (libmnl). */
#ifndef XNAT_RTNL_H
#define XNAT_RTNL_H

#include <libmnl/libmnl.h>

/*
 * Send REQ (its type and extra header filled in; flags and sequence are
 * set here) as a dump request on a socket of its own, and run CB with DATA
 * on every answer. 0 once the dump is done, -errno if it could not be
 * asked or CB stopped with an error.
 */
int rtnl_dump(struct nlmsghdr *req, mnl_cb_t cb, void *data);

#endif /* XNAT_RTNL_H */
