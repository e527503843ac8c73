// SPDX-License-Identifier: GPL-2.0-only
/*
 * Port facts from the kernel (see iface.h): MTU, MAC and VLAN through the
 * classic ioctls, the link's type and kind through rtnetlink (libmnl), and
 * from those whether XDP can serve the port.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/if_vlan.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include "config.h"
#include "iface.h"
#include "log.h"

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

	for (i = 0; i < config_n_ports(cfg); i++) {
		const char *name = config_port_name(cfg, i);

		if (iface_query(name, &hw))
			snprintf(hw.lower, sizeof(hw.lower), "%s", name);
		for (j = 0; j < n && strcmp(out[j], hw.lower); j++)
			;
		if (j == n)
			snprintf(out[n++], IF_NAMESIZE, "%s", hw.lower);
	}
	return n;
}

static int linkinfo_cb(const struct nlattr *attr, void *data)
{
	struct iface_link *link = data;

	if (mnl_attr_get_type(attr) == IFLA_INFO_KIND)
		snprintf(link->kind, sizeof(link->kind), "%s",
			 mnl_attr_get_str(attr));
	return MNL_CB_OK;
}

static int xdp_cb(const struct nlattr *attr, void *data)
{
	struct iface_link *link = data;

	if (mnl_attr_get_type(attr) == IFLA_XDP_ATTACHED)
		link->xdp_attached = mnl_attr_get_u8(attr) != XDP_ATTACHED_NONE;
	return MNL_CB_OK;
}

static int link_attr_cb(const struct nlattr *attr, void *data)
{
	struct iface_link *link = data;

	switch (mnl_attr_get_type(attr)) {
	case IFLA_LINK:
		link->peer_ifindex = mnl_attr_get_u32(attr);
		break;
	case IFLA_LINK_NETNSID:
		link->peer_netnsid = (int)mnl_attr_get_u32(attr);
		break;
	case IFLA_MASTER:
		link->master = mnl_attr_get_u32(attr);
		break;
	case IFLA_LINKINFO:
		mnl_attr_parse_nested(attr, linkinfo_cb, link);
		break;
	case IFLA_XDP:
		mnl_attr_parse_nested(attr, xdp_cb, link);
		break;
	}
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct iface_link *link = data;

	link->type = ifm->ifi_type;
	return mnl_attr_parse(nlh, sizeof(*ifm), link_attr_cb, link);
}

int iface_link_get(int ifindex, int netnsid, struct iface_link *link)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifm;
	unsigned int seq = time(NULL);
	int ret;

	memset(link, 0, sizeof(*link));
	link->peer_netnsid = -1;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = ifindex;
	if (netnsid >= 0)
		mnl_attr_put_u32(nlh, IFLA_TARGET_NETNSID, netnsid);
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		return -errno;
	ret = mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID);
	if (!ret)
		ret = mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0 ? -1 : 0;
	if (!ret) {
		ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret > 0)
			ret = mnl_cb_run(buf, ret, seq,
					 mnl_socket_get_portid(nl), link_cb,
					 link) < 0 ? -1 : 0;
		else
			ret = -1;
	}
	ret = ret ? -errno : 0;
	mnl_socket_close(nl);
	return ret;
}

/* GRO on a veth in this netns (ETHTOOL_GGRO): then it takes redirected
 * frames even without an XDP program. -errno if it cannot be asked. */
static int gro_on(const char *name)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GGRO };
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (void *)&ev;
	ret = ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : (int)ev.data;
	close(fd);
	return ret;
}

/*
 * A veth drops what XDP redirects into it unless its peer runs an XDP
 * program or has GRO on. The peer's XDP we can see in any netns; its GRO
 * only in ours. drop_redirect counts what is lost either way.
 * XXX: a peer in another netns is not warned about (debug level only).
 */
void iface_check_veth(const char *name, int ifindex, const __u32 *ours,
		      int n_ours)
{
	struct iface_link peer, link, *l = &link;
	char pname[IF_NAMESIZE];
	int i;

	if (iface_link_get(ifindex, -1, l) || strcmp(l->kind, "veth"))
		return;
	/* A peer xnat attaches to as well gets XDP. */
	for (i = 0; i < n_ours && l->peer_netnsid < 0; i++)
		if (ours[i] == (__u32)l->peer_ifindex)
			return;
	if (!l->peer_ifindex ||
	    iface_link_get(l->peer_ifindex, l->peer_netnsid, &peer) ||
	    peer.xdp_attached)
		return;
	if (l->peer_netnsid < 0 && if_indextoname(l->peer_ifindex, pname) &&
	    gro_on(pname) == 0)
		pr_warn("Warning: veth %s: its peer %s has no XDP program and "
			"GRO off, so it drops every frame XDP forwards to it "
			"(counted as drop_redirect); turn GRO on "
			"(ethtool -K %s gro on)\n", name, pname, pname);
	else if (l->peer_netnsid >= 0)
		pr_debug("veth %s: peer in another netns without XDP; it "
			 "needs GRO on to take forwarded frames\n", name);
}

int iface_check_xdp(const char *name, int ifindex, char *err, size_t len)
{
	struct iface_link l;
	int ret = iface_link_get(ifindex, -1, &l);

	if (ret) {
		snprintf(err, len, "%s: cannot read link: %s", name,
			 strerror(-ret));
		return ret;
	}
	if (!strcmp(l.kind, "bridge")) {
		snprintf(err, len, "%s is a bridge: XDP cannot forward "
			 "through one (frames redirected to it are lost); use "
			 "mode = kernel for a bridged port", name);
		return -EINVAL;
	}
	if (l.master) {
		/* The kernel routes with the master, which XDP never sees
		 * as an egress: replies would miss every flow. */
		snprintf(err, len, "%s is enslaved to another device (ifindex "
			 "%d, a bridge or bond): xnat must run on the device the "
			 "kernel routes with; use mode = kernel", name, l.master);
		return -EINVAL;
	}
	if (l.type != ARPHRD_ETHER) {
		snprintf(err, len, "%s is not an Ethernet device (%s, link "
			 "type %u): XDP cannot serve it; use mode = kernel",
			 name, l.kind[0] ? l.kind : "no kind", l.type);
		return -EINVAL;
	}
	return 0;
}
