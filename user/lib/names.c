// SPDX-License-Identifier: GPL-2.0-only
/* Protocol and interface names; see names.h. */
#include <stdio.h>
#include <netinet/in.h>
#include "names.h"

const char *proto_name(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "icmpv6";
	}
	return "?";
}

const char *ifname_of(unsigned int ifindex, char buf[IF_NAMESIZE])
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "#%u", ifindex);
	return buf;
}
