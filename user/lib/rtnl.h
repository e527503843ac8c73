/* SPDX-License-Identifier: GPL-2.0-only */
/* rtnetlink requests and dumps, the way every caller asks them (libmnl). */
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

/* Send REQ (type, flags beyond request and ack, extra header and
 * attributes filled in) and wait for the kernel's answer: 0, or -errno. */
int rtnl_request(struct nlmsghdr *req);

#endif /* XNAT_RTNL_H */
