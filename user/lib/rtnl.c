// SPDX-License-Identifier: GPL-2.0-only
/* rtnetlink requests and dumps; see rtnl.h. */
#include <errno.h>
#include <linux/netlink.h>
#include "rtnl.h"

/* Send REQ, flags set, on a socket of its own; run CB on the answers
 * until the dump's end or the acknowledgement. */
static int rtnl_talk(struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	unsigned int portid;
	int ret = -1;

	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto out;
	portid = mnl_socket_get_portid(nl);
	req->nlmsg_seq = 1;
	if (mnl_socket_sendto(nl, req, req->nlmsg_len) < 0)
		goto out;
	do {
		ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret <= 0)
			break;
		ret = mnl_cb_run(buf, ret, req->nlmsg_seq, portid, cb, data);
	} while (ret > 0);
out:
	ret = ret < 0 ? -errno : 0;
	mnl_socket_close(nl);
	return ret;
}

int rtnl_dump(struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	req->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	return rtnl_talk(req, cb, data);
}

int rtnl_request(struct nlmsghdr *req)
{
	req->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	return rtnl_talk(req, NULL, NULL);
}
