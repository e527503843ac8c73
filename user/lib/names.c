// SPDX-License-Identifier: GPL-2.0-only
/* Protocol and interface names; see names.h. */
#include <stdio.h>
#include <arpa/inet.h>
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

const char *endpoint_name(char *buf, size_t len, __u8 family,
			  const union xnat_addr *a, __be16 port)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(family == XNAT_AF_INET ? AF_INET : AF_INET6, a, ip, sizeof(ip));
	snprintf(buf, len, family == XNAT_AF_INET ? "%s:%u" : "[%s]:%u", ip,
		 ntohs(port));
	return buf;
}

void flow_endpoints(const struct flow_key *k, const struct flow_value *v,
		    char src[64], char dst[64], char nsrc[64], char ndst[64])
{
	endpoint_name(src, 64, k->family, &k->saddr, k->sport);
	endpoint_name(dst, 64, k->family, &k->daddr, k->dport);
	endpoint_name(nsrc, 64, k->family, &v->new_saddr, v->new_sport);
	endpoint_name(ndst, 64, k->family, &v->new_daddr, v->new_dport);
}
