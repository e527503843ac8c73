// SPDX-License-Identifier: GPL-2.0-only
/* rtnetlink address and link events; see watch.h. */
#include <errno.h>
#include <poll.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include "watch.h"

struct mnl_socket *watch_open(void)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC |
						 SOCK_NONBLOCK);

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, RTMGRP_IPV4_IFADDR | RTMGRP_LINK,
			    MNL_SOCKET_AUTOPID)) {
		int err = errno;

		mnl_socket_close(nl);
		errno = err;
		return NULL;
	}
	return nl;
}

int watch_wait(struct mnl_socket *nl, int timeout_ms)
{
	struct pollfd pfd = { .fd = mnl_socket_get_fd(nl), .events = POLLIN };
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int ret = poll(&pfd, 1, timeout_ms), got = 0;

	if (ret < 0)
		return -errno;
	if (ret == 0)
		return 0;
	/* What changed does not matter: the caller re-resolves everything.
	 * An overrun (ENOBUFS) also means "something changed". */
	while (mnl_socket_recvfrom(nl, buf, sizeof(buf)) > 0 || errno == ENOBUFS)
		got = 1;
	return got;
}

void watch_close(struct mnl_socket *nl)
{
	if (nl)
		mnl_socket_close(nl);
}
