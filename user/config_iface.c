// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config's interfaces: [router] wan and lan (names that are also safe
 * in nft strings, each once), their checks after the parse, and their
 * lookup in the running system (config.h: config_resolve), with the WAN's
 * address when [nat] address is auto. See config_parse.h.
 */
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_parse.h"

/* Characters that are also safe inside an nft string: no quotes, no '*'. */
static int valid_ifname(const char *s)
{
	size_t n = strlen(s);
	const char *c;

	if (n == 0 || n >= IF_NAMESIZE || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (c = s; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("-_.", *c))
			return 0;
	return 1;
}

static int set_ifname(struct parser *p, struct config_iface *ifc,
		      const char *name)
{
	if (!valid_ifname(name))
		return perr(p, p->lineno,
			    "bad interface name '%s': up to %d of letters, digits, '-', '_', '.'",
			    name, IF_NAMESIZE - 1);
	strcpy(ifc->name, name);
	ifc->line = p->lineno;
	return 0;
}

int parse_wan(struct parser *p, const struct key_def *k, const char *v)
{
	return set_ifname(p, &p->cfg->wan, v);
}

static int add_lan(struct parser *p, char *name)
{
	struct config *cfg = p->cfg;
	int i;

	if (!*name)
		return perr(p, p->lineno, "empty interface name in lan list");
	for (i = 0; i < cfg->n_lan; i++)
		if (!strcmp(cfg->lan[i].name, name))
			return perr(p, p->lineno, "lan %s is listed twice",
				    name);
	if (cfg->n_lan == CONFIG_MAX_LAN)
		return perr(p, p->lineno, "too many lan interfaces (at most %d)",
			    CONFIG_MAX_LAN);
	if (set_ifname(p, &cfg->lan[cfg->n_lan], name))
		return -1;
	cfg->n_lan++;
	return 0;
}

static int lan_item(struct parser *p, char *s, const char *v)
{
	return add_lan(p, trim(s));
}

int parse_lan(struct parser *p, const struct key_def *k, const char *v)
{
	return parse_list(p, v, 256, "lan", lan_item);
}

static int find_lan(const struct config *cfg, const char *name)
{
	int i;

	for (i = 0; i < cfg->n_lan; i++)
		if (!strcmp(cfg->lan[i].name, name))
			return i;
	return -1;
}

/* Missing means not given: a wan or lan line in error was reported. */
void check_interfaces(struct parser *p, int wan_given, int lan_given)
{
	const struct config *cfg = p->cfg;
	int i;

	if (!cfg->wan.name[0] && !wan_given)
		perr(p, 0, "[router] wan is missing");
	if (!cfg->n_lan && !lan_given)
		perr(p, 0, "[router] lan is missing");
	i = cfg->wan.name[0] ? find_lan(cfg, cfg->wan.name) : -1;
	if (i >= 0)
		perr(p, cfg->lan[i].line,
		     "wan %s is also listed as lan (wan at line %d)",
		     cfg->wan.name, cfg->wan.line);
}

static int resolve_iface(const struct config *cfg, struct config_iface *ifc,
			 struct config_errors *errs)
{
	/* Unnamed: the parser has said why. */
	if (!ifc->name[0])
		return -1;
	ifc->ifindex = if_nametoindex(ifc->name);
	if (ifc->ifindex)
		return 0;
	if (errno == ENODEV)
		errs_add(errs, cfg->path, ifc->line, "interface %s not found",
			 ifc->name);
	else
		errs_add(errs, cfg->path, ifc->line, "interface %s: %s",
			 ifc->name, strerror(errno));
	return -1;
}

/* Take the LAN ports that are gone out of CFG, their names into GONE;
 * how many. */
static int drop_gone_lan(struct config *cfg, struct config_gone *gone)
{
	int i = 0;

	while (i < cfg->n_lan) {
		if (if_nametoindex(cfg->lan[i].name) || errno != ENODEV) {
			i++;
			continue;
		}
		snprintf(gone->name[gone->n++], IF_NAMESIZE, "%s",
			 cfg->lan[i].name);
		memmove(&cfg->lan[i], &cfg->lan[i + 1],
			(cfg->n_lan - i - 1) * sizeof(cfg->lan[0]));
		cfg->n_lan--;
	}
	return gone->n;
}

int config_resolve_running(struct config *cfg, struct config_gone *gone,
			   char err[CONFIG_ERR_LEN])
{
	struct config rest = *cfg;

	/* Zeroed whole, so that two lists compare with memcmp(). */
	memset(gone, 0, sizeof(*gone));
	if (!config_resolve(cfg, err))
		return 0;
	if (!drop_gone_lan(&rest, gone) || !rest.n_lan ||
	    config_resolve(&rest, err)) {
		memset(gone, 0, sizeof(*gone));
		return -1;
	}
	*cfg = rest;
	return 0;
}

const char *config_gone_list(const struct config_gone *gone, char *buf)
{
	size_t len = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < gone->n && len < CONFIG_GONE_LEN; i++)
		len += snprintf(buf + len, CONFIG_GONE_LEN - len, "%s%s",
				i ? ", " : "", gone->name[i]);
	return buf;
}

const char *config_gone_say(const struct config_gone *gone, bool until_back,
			    char *buf)
{
	char list[CONFIG_GONE_LEN];
	bool many = gone->n > 1;

	snprintf(buf, CONFIG_ERR_LEN,
		 "%s, in the running config, %s gone: the router runs "
		 "without %s%s%s", config_gone_list(gone, list),
		 many ? "are" : "is", many ? "them" : "it",
		 until_back ? " until " : "",
		 !until_back ? "" : many ? "they are back" : "it is back");
	return buf;
}

/* The first IPv4 address the kernel lists for the WAN is its primary. */
static int resolve_wan_addr(struct config *cfg, struct config_errors *errs)
{
	struct ifaddrs *ifas, *ifa;
	int ret = -1;

	if (getifaddrs(&ifas)) {
		errs_add(errs, cfg->path, 0, "getifaddrs: %s", strerror(errno));
		return -1;
	}
	for (ifa = ifas; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
		    strcmp(ifa->ifa_name, cfg->wan.name))
			continue;
		cfg->nat_addr =
			((struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr;
		ret = 0;
		break;
	}
	freeifaddrs(ifas);
	if (ret && cfg->nat_addr_wait) {
		cfg->nat_addr = 0;
		return 0;
	}
	if (ret)
		errs_add(errs, cfg->path, cfg->wan.line,
			 "wan %s has no IPv4 address; set [nat] address",
			 cfg->wan.name);
	return ret;
}

int config_resolve_all(struct config *cfg, struct config_errors *errs)
{
	int i, wan_err, ret;

	errs->n = 0;
	wan_err = resolve_iface(cfg, &cfg->wan, errs);
	ret = wan_err;
	for (i = 0; i < cfg->n_lan; i++)
		ret |= resolve_iface(cfg, &cfg->lan[i], errs);
	if (!wan_err && cfg->nat_addr_auto && !resolve_wan_addr(cfg, errs)) {
		cfg->pool[0] = cfg->nat_addr;
		cfg->n_pool = 1;
	} else if (!wan_err && cfg->nat_addr_auto) {
		ret = -1;
	}
	return ret ? -1 : 0;
}

int config_resolve(struct config *cfg, char err[CONFIG_ERR_LEN])
{
	struct config_errors *errs = malloc(sizeof(*errs));
	int ret;

	if (!errs) {
		set_err(err, cfg->path, 0, "%s", strerror(ENOMEM));
		return -1;
	}
	ret = config_resolve_all(cfg, errs);
	if (ret)
		memcpy(err, errs->msg[0], CONFIG_ERR_LEN);
	free(errs);
	return ret;
}
