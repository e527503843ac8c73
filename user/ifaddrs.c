// SPDX-License-Identifier: GPL-2.0-only
/*
 * The router's own addresses on its ports, written into the data path's
 * xnat_ifaddrs map: the source of the ICMP errors XDP sends itself
 * (bpf/icmp_gen.h: fragmentation needed, packet too big, time exceeded),
 * as the kernel's own errors would have. Per port, its first IPv4 address
 * and its first global IPv6 address, by getifaddrs(3); refreshed on every
 * maps sync (start, reload, and `xnat run`'s refresh).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include "log.h"
#include "maps.h"
#include "pins.h"
#include "xnat_common.h"

/* Link-local (fe80::/10) addresses never leave the link. */
static int ipv6_usable(const struct in6_addr *a)
{
	return !(a->s6_addr[0] == 0xfe && (a->s6_addr[1] & 0xc0) == 0x80) &&
	       !IN6_IS_ADDR_LOOPBACK(a) && !IN6_IS_ADDR_MULTICAST(a);
}

static void addrs_of(const struct ifaddrs *all, const char *name,
		     struct iface_addrs *out)
{
	const struct ifaddrs *ifa;

	memset(out, 0, sizeof(*out));
	for (ifa = all; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || strcmp(ifa->ifa_name, name))
			continue;
		if (ifa->ifa_addr->sa_family == AF_INET && !out->v4) {
			out->v4 = ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr;
		} else if (ifa->ifa_addr->sa_family == AF_INET6 &&
			   !(out->v6[0] | out->v6[1] | out->v6[2] | out->v6[3])) {
			const struct in6_addr *a =
				&((struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr;

			if (ipv6_usable(a))
				memcpy(out->v6, a, sizeof(out->v6));
		}
	}
}

int maps_sync_ifaddrs(const struct config *cfg)
{
	struct ifaddrs *all;
	struct iface_addrs a;
	int fd, i, err = 0;

	fd = pins_map_open(MAP_IFADDRS);
	if (fd < 0)
		return fd;
	if (getifaddrs(&all)) {
		err = -errno;
		close(fd);
		return err;
	}
	for (i = -1; i < cfg->n_lan && !err; i++) {
		const struct config_iface *ci = i < 0 ? &cfg->wan : &cfg->lan[i];
		__u32 k = ci->ifindex;

		addrs_of(all, ci->name, &a);
		if (bpf_map_update_elem(fd, &k, &a, BPF_ANY))
			err = -errno;
	}
	freeifaddrs(all);
	close(fd);
	return err;
}
