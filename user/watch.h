/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Address and link events from rtnetlink (libmnl), so that `xnat run`
 * follows a WAN address that DHCP or PPPoE changes as it happens, rather
 * than by polling.
 */
#ifndef XNAT_WATCH_H
#define XNAT_WATCH_H

struct mnl_socket;

/* A socket subscribed to IPv4 address and link changes; NULL, errno set. */
struct mnl_socket *watch_open(void);
/* Wait up to TIMEOUT_MS for events and read all pending ones. 1 if any
 * arrived, 0 on timeout, -errno (-EINTR: a signal came). */
int watch_wait(struct mnl_socket *nl, int timeout_ms);
void watch_close(struct mnl_socket *nl);

#endif /* XNAT_WATCH_H */
