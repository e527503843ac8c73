// SPDX-License-Identifier: GPL-2.0-only
/*
 * Building and printing the plan (see plan.h): the ports XDP attaches to,
 * the contents of the config-derived maps, the nftables ruleset and the
 * sysctls, all from a resolved config and what the kernel says about the
 * ports. Only reads the system.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "iface.h"
#include "kernel_mode.h"
#include "plan.h"

static const char *const attach_names[] = {
	[XDP_ATTACH_AUTO] = "auto",
	[XDP_ATTACH_NATIVE] = "native",
	[XDP_ATTACH_GENERIC] = "generic",
};

static int port_err(const struct config *cfg, const struct config_iface *ci,
		    int ret, const char *msg, char *err)
{
	snprintf(err, CONFIG_ERR_LEN, "%s:%d: %s", cfg->path, ci->line, msg);
	return ret;
}

static void add_tx(struct plan *plan, __u32 ifindex)
{
	for (int i = 0; i < plan->n_tx; i++)
		if (plan->tx_ports[i] == ifindex)
			return;
	plan->tx_ports[plan->n_tx++] = ifindex;
}

/*
 * One router port: its ifaces entry (what the kernel routes with), the
 * physical port under it as a tx port and XDP port, and for a VLAN device
 * the (port, VLAN id) -> device entry.
 */
static int plan_iface(struct plan *plan, const struct config_iface *ci,
		      enum xnat_role role, char *err)
{
	struct plan_iface *pi = &plan->ifaces[plan->n_ifaces];
	char msg[CONFIG_ERR_LEN - 300];
	struct iface_hw hw;
	__u32 lower;
	int ret, i;

	ret = iface_check_xdp(ci->name, ci->ifindex, msg, sizeof(msg));
	if (!ret && (ret = iface_query(ci->name, &hw)))
		snprintf(msg, sizeof(msg), "interface %s: %s", ci->name,
			 strerror(-ret));
	if (!ret && !(lower = if_nametoindex(hw.lower))) {
		ret = -errno;
		snprintf(msg, sizeof(msg), "lower device %s of %s: %s",
			 hw.lower, ci->name, strerror(-ret));
	}
	if (!ret && lower != ci->ifindex)
		ret = iface_check_xdp(hw.lower, lower, msg, sizeof(msg));
	if (ret)
		return port_err(&plan->cfg, ci, ret, msg, err);

	pi->ifindex = ci->ifindex;
	pi->info = (struct iface_info){ .role = role, .vid = hw.vid,
					.parent = lower };
	memcpy(pi->info.mac, hw.mac, sizeof(pi->info.mac));
	plan->n_ifaces++;
	add_tx(plan, lower);
	if (hw.vid)
		plan->vlans[plan->n_vlans++] = (struct plan_vlan){
			.key = { .ifindex = lower, .vid = hw.vid },
			.ifindex = ci->ifindex };
	for (i = 0; i < plan->n_ports && plan->ports[i].ifindex != lower; i++)
		;
	if (i == plan->n_ports) {
		plan->ports[i].ifindex = lower;
		plan->ports[i].attach = plan->cfg.xdp_attach;
		snprintf(plan->ports[i].name, IF_NAMESIZE, "%s", hw.lower);
		plan->n_ports++;
	}
	return 0;
}

static void plan_config_value(struct plan *plan)
{
	const struct config *cfg = &plan->cfg;
	struct xnat_config *c = &plan->config;

	memset(c, 0, sizeof(*c));
	/* Every flag comes from the config, so a reload applies it. */
	if (!cfg->fastpath)
		c->flags |= XNAT_F_FASTPATH_OFF;
	if (cfg->mode == MODE_OFFLOAD)
		c->flags |= XNAT_F_OFFLOAD;
	if (cfg->filter_eif)
		c->flags |= XNAT_F_FILTER_EIF;
	if (cfg->inbound_refresh)
		c->flags |= XNAT_F_INBOUND_REFRESH;
	if (cfg->mss_clamp == MSS_CLAMP_PMTU)
		c->flags |= XNAT_F_MSS_PMTU;
	else if (cfg->mss_clamp == MSS_CLAMP_FIXED)
		c->mss_mtu = cfg->mss_fixed + XNAT_MSS_HDRS_V4;
	if (cfg->ipv6_inbound == IPV6_INBOUND_OPEN)
		c->flags |= XNAT_F_IPV6_OPEN;
	if (cfg->source_feasible)
		c->flags |= XNAT_F_SRC_FEASIBLE;
	c->nat_addr = cfg->nat_addr;
	c->port_min = cfg->port_min;
	c->port_max = cfg->port_max;
	c->wan_ifindex = cfg->wan.ifindex;
	c->timeout_tcp_est = cfg->timeout_tcp_est;
	c->timeout_tcp_trans = cfg->timeout_tcp_trans;
	c->timeout_udp = cfg->timeout_udp;
	c->timeout_icmp = cfg->timeout_icmp;
	c->timeout_udp_dns = cfg->timeout_udp_dns;
	c->ports_per_host = cfg->ports_per_host;
	c->pool_size = cfg->n_pool > 1 ? cfg->n_pool : 0;
}

static int plan_maps(struct plan *plan, char *err)
{
	const struct config *cfg = &plan->cfg;
	int i, ret;

	ret = plan_iface(plan, &cfg->wan, XNAT_ROLE_WAN, err);
	for (i = 0; i < cfg->n_lan && !ret; i++)
		ret = plan_iface(plan, &cfg->lan[i], XNAT_ROLE_LAN, err);
	if (ret)
		return ret;
	for (i = 0; i < cfg->n_fwd; i++)
		plan->fwd[i] = (struct plan_fwd){
			.key = { .port = htons(cfg->fwd[i].port),
				 .proto = cfg->fwd[i].proto },
			.value = { .addr = cfg->fwd[i].addr,
				   .port = htons(cfg->fwd[i].to_port) } };
	plan->n_fwd = cfg->n_fwd;
	plan_config_value(plan);
	for (i = 0; i < plan->n_ports; i++)
		iface_check_veth(plan->ports[i].name, plan->ports[i].ifindex,
				 plan->tx_ports, plan->n_tx);
	return 0;
}

int plan_build(const struct config *cfg, struct plan *plan,
	       char err[CONFIG_ERR_LEN])
{
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->cfg = *cfg;
	plan->xdp = mode_runs_xdp(cfg->mode);
	if (plan->xdp && (ret = plan_maps(plan, err)))
		return ret;
	ret = kernel_plan(cfg, &plan->kernel, err);
	if (ret)
		plan_free(plan);
	return ret;
}

void plan_free(struct plan *plan)
{
	free(plan->kernel.nft);
	plan->kernel.nft = NULL;
}

int plan_has_port(const struct plan *plan, __u32 ifindex)
{
	for (int i = 0; i < plan->n_ports; i++)
		if (plan->ports[i].ifindex == ifindex)
			return 1;
	return 0;
}

int plan_ports_within(const struct plan *a, const struct plan *b)
{
	for (int i = 0; i < a->n_ports; i++)
		if (!plan_has_port(b, a->ports[i].ifindex))
			return 0;
	return 1;
}

int plan_same_ports(const struct plan *a, const struct plan *b)
{
	return a->n_ports == b->n_ports && plan_ports_within(a, b);
}

int plan_same(const struct plan *a, const struct plan *b)
{
	return a->xdp == b->xdp && a->n_ports == b->n_ports &&
	       a->cfg.n_pool == b->cfg.n_pool &&
	       !memcmp(a->cfg.pool, b->cfg.pool, sizeof(a->cfg.pool)) &&
	       !memcmp(a->ports, b->ports, a->n_ports * sizeof(*a->ports)) &&
	       !memcmp(&a->config, &b->config, sizeof(a->config)) &&
	       a->n_ifaces == b->n_ifaces &&
	       !memcmp(a->ifaces, b->ifaces, a->n_ifaces * sizeof(*a->ifaces)) &&
	       a->n_tx == b->n_tx &&
	       !memcmp(a->tx_ports, b->tx_ports, a->n_tx * sizeof(*a->tx_ports)) &&
	       a->n_vlans == b->n_vlans &&
	       !memcmp(a->vlans, b->vlans, a->n_vlans * sizeof(*a->vlans)) &&
	       a->n_fwd == b->n_fwd &&
	       !memcmp(a->fwd, b->fwd, a->n_fwd * sizeof(*a->fwd)) &&
	       !strcmp(a->kernel.nft ? a->kernel.nft : "", b->kernel.nft ? b->kernel.nft : "");
}

static void print_maps(const struct plan *plan, FILE *f)
{
	char a[INET_ADDRSTRLEN];
	int i;

	fprintf(f, "# map xnat_config: nat_addr %s, ports %u-%u, wan ifindex %u, flags %#x,\n"
		   "#   timeouts tcp %u/%u udp %u icmp %u, mss_mtu %u\n",
		inet_ntop(AF_INET, &plan->config.nat_addr, a, sizeof(a)),
		plan->config.port_min, plan->config.port_max,
		plan->config.wan_ifindex, plan->config.flags,
		plan->config.timeout_tcp_est, plan->config.timeout_tcp_trans,
		plan->config.timeout_udp, plan->config.timeout_icmp,
		plan->config.mss_mtu);
	for (i = 0; i < plan->n_ifaces; i++) {
		const struct iface_info *in = &plan->ifaces[i].info;

		fprintf(f, "# map xnat_ifaces: %u -> %s, mac %02x:%02x:%02x:%02x:%02x:%02x, vid %u, parent %u\n",
			plan->ifaces[i].ifindex,
			in->role == XNAT_ROLE_WAN ? "wan" : "lan", in->mac[0],
			in->mac[1], in->mac[2], in->mac[3], in->mac[4],
			in->mac[5], in->vid, in->parent);
	}
	for (i = 0; i < plan->n_tx; i++)
		fprintf(f, "# map xnat_tx_ports: %u\n", plan->tx_ports[i]);
	for (i = 0; i < plan->n_vlans; i++)
		fprintf(f, "# map xnat_vlans: (%u, vid %u) -> %u\n",
			plan->vlans[i].key.ifindex, plan->vlans[i].key.vid,
			plan->vlans[i].ifindex);
	for (i = 0; i < plan->n_fwd; i++)
		fprintf(f, "# map xnat_forwards: %s/%u -> %s:%u\n",
			plan->fwd[i].key.proto == IPPROTO_TCP ? "tcp" : "udp",
			ntohs(plan->fwd[i].key.port),
			inet_ntop(AF_INET, &plan->fwd[i].value.addr, a, sizeof(a)),
			ntohs(plan->fwd[i].value.port));
}

void plan_print(const struct plan *plan, FILE *f)
{
	int i;

	fprintf(f, "# xnat plan for %s\n", plan->cfg.path);
	for (i = 0; i < plan->n_ports; i++)
		fprintf(f, "# xdp port %s (ifindex %u), attach %s\n",
			plan->ports[i].name, plan->ports[i].ifindex,
			attach_names[plan->ports[i].attach]);
	if (plan->xdp)
		print_maps(plan, f);
	for (i = 0; i < plan->kernel.n_sysctls; i++)
		fprintf(f, "# sysctl %s = %s\n", plan->kernel.sysctls[i].path,
			plan->kernel.sysctls[i].value);
	fputs(plan->kernel.nft ? plan->kernel.nft : "", f);
}
