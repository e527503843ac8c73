// SPDX-License-Identifier: GPL-2.0-only
/* Port facts from the kernel through the classic ioctls; see iface.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_vlan.h>
#include <linux/sockios.h>
#include "config.h"
#include "iface.h"

/* The VLAN ioctls answer only for VLAN devices: an error means "not one". */
static void vlan_lower(int fd, const char *name, struct iface_hw *hw)
{
	struct vlan_ioctl_args va = {};

	snprintf(hw->lower, sizeof(hw->lower), "%s", name);
	hw->vid = 0;
	va.cmd = GET_VLAN_REALDEV_NAME_CMD;
	snprintf(va.device1, sizeof(va.device1), "%s", name);
	if (ioctl(fd, SIOCGIFVLAN, &va))
		return;
	snprintf(hw->lower, sizeof(hw->lower), "%.*s", IF_NAMESIZE - 1,
		 va.u.device2);
	memset(&va, 0, sizeof(va));
	va.cmd = GET_VLAN_VID_CMD;
	snprintf(va.device1, sizeof(va.device1), "%s", name);
	if (!ioctl(fd, SIOCGIFVLAN, &va))
		hw->vid = va.u.VID;
}

int iface_query(const char *name, struct iface_hw *hw)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFMTU, &ifr))
		err = -errno;
	hw->mtu = ifr.ifr_mtu;
	if (!err && ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	memcpy(hw->mac, ifr.ifr_hwaddr.sa_data, sizeof(hw->mac));
	if (!err)
		vlan_lower(fd, name, hw);
	close(fd);
	return err;
}

int iface_physical_ports(const struct config *cfg, char out[][IF_NAMESIZE])
{
	struct iface_hw hw;
	int i, j, n = 0;

	for (i = -1; i < cfg->n_lan; i++) {
		const char *name = i < 0 ? cfg->wan.name : cfg->lan[i].name;

		if (iface_query(name, &hw))
			snprintf(hw.lower, sizeof(hw.lower), "%s", name);
		for (j = 0; j < n && strcmp(out[j], hw.lower); j++)
			;
		if (j == n)
			snprintf(out[n++], IF_NAMESIZE, "%s", hw.lower);
	}
	return n;
}
