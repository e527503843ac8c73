// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config's [nat] and [forward] sections: the external address or pool,
 * the port range, the port forwards and their
 * check against the NAT range, and the split of the ports left to the
 * kernel in xdp mode (config.h: config_kernel_ranges). See config_parse.h.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "config_parse.h"
#include "names.h"

/* Smallest range we give to local sockets or to the kernel's NAT. */
#define KERNEL_RANGE_MIN 1024

/* One item of an address list: "A" or "A-B", appended to the pool. */
static int add_pool_item(struct parser *p, char *item, const char *whole)
{
	struct config *cfg = p->cfg;
	char *dash = strchr(item, '-');
	uint32_t lo, hi, h, a;
	int i;

	if (dash)
		*dash = '\0';
	if (parse_ipv4(trim(item), &lo) ||
	    (dash && parse_ipv4(trim(dash + 1), &hi)))
		return perr(p, p->lineno,
			    "bad address '%s': expected auto, or unicast IPv4 addresses and ranges A-B, comma separated",
			    whole);
	if (!dash)
		hi = lo;
	if (ntohl(lo) > ntohl(hi))
		return perr(p, p->lineno,
			    "bad address range in '%s': the first address is above the last",
			    whole);
	for (h = ntohl(lo); h <= ntohl(hi); h++) {
		a = htonl(h);
		for (i = 0; i < cfg->n_pool; i++)
			if (cfg->pool[i] == a)
				return perr(p, p->lineno,
					    "address %s is listed twice in '%s'",
					    inet_ntoa((struct in_addr){ a }), whole);
		if (cfg->n_pool == XNAT_MAX_POOL)
			return perr(p, p->lineno,
				    "too many addresses in '%s' (at most %d)",
				    whole, XNAT_MAX_POOL);
		cfg->pool[cfg->n_pool++] = a;
		if (h == 0xffffffff)
			break;
	}
	return 0;
}

/*
 * "auto", one address, or a pool: addresses and ranges, comma separated
 * ("198.19.0.1, 198.19.0.10-198.19.0.20"). The first address is the one
 * port forwards and hairpinning use.
 */
int parse_address(struct parser *p, const struct key_def *k, const char *v)
{
	struct config *cfg = p->cfg;

	cfg->nat_addr_line = p->lineno;
	cfg->n_pool = 0;
	if (!strcmp(v, "auto")) {
		cfg->nat_addr_auto = 1;
		cfg->nat_addr = 0;
		return 0;
	}
	if (parse_list(p, v, 1024, "address", add_pool_item))
		return -1;
	cfg->nat_addr = cfg->pool[0];
	cfg->nat_addr_auto = 0;
	return 0;
}

int parse_ports(struct parser *p, const struct key_def *k, const char *v)
{
	char buf[64], *dash;
	uint16_t lo, hi;

	if (strlen(v) >= sizeof(buf))
		goto bad;
	strcpy(buf, v);
	dash = strchr(buf, '-');
	if (!dash)
		goto bad;
	*dash = '\0';
	if (parse_port(trim(buf), PORT_FIRST_UNPRIVILEGED, &lo) ||
	    parse_port(trim(dash + 1), PORT_FIRST_UNPRIVILEGED, &hi) || lo > hi)
		goto bad;
	p->cfg->port_min = lo;
	p->cfg->port_max = hi;
	p->cfg->ports_line = p->lineno;
	return 0;
bad:
	p->ports_bad = 1;
	return perr(p, p->lineno,
		    "bad ports '%s': expected A-B with %d <= A <= B <= 65535", v,
		    PORT_FIRST_UNPRIVILEGED);
}

/* Key "tcp/8080" or "udp/53". */
static int parse_fwd_key(struct parser *p, const char *name,
			 struct config_forward *fw)
{
	const char *slash = strchr(name, '/');

	if (slash && slash - name == 3 && !strncmp(name, "tcp", 3))
		fw->proto = IPPROTO_TCP;
	else if (slash && slash - name == 3 && !strncmp(name, "udp", 3))
		fw->proto = IPPROTO_UDP;
	else
		return perr(p, p->lineno,
			    "bad forward '%s': expected tcp/PORT or udp/PORT",
			    name);
	if (parse_port(slash + 1, 1, &fw->port))
		return perr(p, p->lineno,
			    "bad forward '%s': port must be 1-65535", name);
	return 0;
}

/* Value "ADDR" or "ADDR:PORT"; without a port the external one is kept. */
static int parse_fwd_value(struct parser *p, const char *v,
			   struct config_forward *fw)
{
	char buf[64], *colon;

	if (strlen(v) >= sizeof(buf))
		return perr(p, p->lineno, "bad address '%s'", v);
	strcpy(buf, v);
	colon = strchr(buf, ':');
	fw->to_port = fw->port;
	if (colon) {
		*colon = '\0';
		if (parse_port(colon + 1, 1, &fw->to_port))
			return perr(p, p->lineno,
				    "bad forward target '%s': port must be 1-65535",
				    v);
	}
	if (parse_ipv4(buf, &fw->addr))
		return perr(p, p->lineno,
			    "bad address '%s': expected a unicast IPv4 address",
			    buf);
	return 0;
}

int parse_forward(struct parser *p, const char *name, const char *v)
{
	struct config *cfg = p->cfg;
	struct config_forward fw = { .line = p->lineno };
	int i;

	if (parse_fwd_key(p, name, &fw) || parse_fwd_value(p, v, &fw))
		return -1;
	for (i = 0; i < cfg->n_fwd; i++)
		if (cfg->fwd[i].proto == fw.proto && cfg->fwd[i].port == fw.port)
			return perr(p, p->lineno,
				    "forward %s/%u is duplicated (first at line %d)",
				    proto_name(fw.proto), fw.port,
				    cfg->fwd[i].line);
	if (cfg->n_fwd == XNAT_MAX_FORWARDS)
		return perr(p, p->lineno, "too many forwards (at most %d)",
			    XNAT_MAX_FORWARDS);
	cfg->fwd[cfg->n_fwd++] = fw;
	return 0;
}

/* A forward inside the XDP NAT range would be taken for a NAT reply. */
void check_forwards(struct parser *p)
{
	const struct config *cfg = p->cfg;
	const struct config_forward *fw;
	int i;

	for (i = 0; i < cfg->n_fwd; i++) {
		fw = &cfg->fwd[i];
		if (fw->port < cfg->port_min || fw->port > cfg->port_max)
			continue;
		if (cfg->ports_line)
			perr(p, fw->line,
				    "forward %s/%u lies inside [nat] ports %u-%u (line %d)",
				    proto_name(fw->proto), fw->port,
				    cfg->port_min, cfg->port_max,
				    cfg->ports_line);
		else
			perr(p, fw->line,
			     "forward %s/%u lies inside the default [nat] ports %u-%u",
			     proto_name(fw->proto), fw->port, cfg->port_min,
			     cfg->port_max);
	}
}

/*
 * ip_local_port_range wants start and end of different parity (the kernel
 * warns otherwise: connect() takes one parity and bind() the other), so the
 * local range is given an even length, at the cost of one port at most.
 * Halves are rounded down to even for the same reason.
 */
static void set_local(uint16_t local[2], int lo, int hi)
{
	local[0] = lo;
	local[1] = (hi - lo + 1) % 2 ? hi - 1 : hi;
}

int config_kernel_ranges(const struct config *cfg, uint16_t local[2],
			 uint16_t knat[2], char err[CONFIG_ERR_LEN])
{
	int lo_n = cfg->port_min - PORT_FIRST_UNPRIVILEGED;
	int hi_n = 65535 - cfg->port_max;
	int half;

	/* Both sides of the XDP range big enough: one each, local below. */
	if (lo_n >= KERNEL_RANGE_MIN && hi_n >= KERNEL_RANGE_MIN) {
		set_local(local, PORT_FIRST_UNPRIVILEGED, cfg->port_min - 1);
		knat[0] = cfg->port_max + 1;
		knat[1] = 65535;
		return 0;
	}
	/* Otherwise halve the bigger side, local below; the other is unused. */
	if (lo_n >= hi_n && lo_n >= 2 * KERNEL_RANGE_MIN) {
		half = (lo_n / 2) & ~1;
		set_local(local, PORT_FIRST_UNPRIVILEGED,
			  PORT_FIRST_UNPRIVILEGED + half - 1);
		knat[0] = PORT_FIRST_UNPRIVILEGED + half;
		knat[1] = cfg->port_min - 1;
		return 0;
	}
	if (hi_n > lo_n && hi_n >= 2 * KERNEL_RANGE_MIN) {
		half = (hi_n / 2) & ~1;
		set_local(local, cfg->port_max + 1, cfg->port_max + half);
		knat[0] = cfg->port_max + half + 1;
		knat[1] = 65535;
		return 0;
	}
	set_err(err, cfg->path, cfg->ports_line,
		"[nat] ports %u-%u leave too few ports to the kernel: need %d for local sockets and %d for kernel NAT, both within %d-65535",
		cfg->port_min, cfg->port_max, KERNEL_RANGE_MIN,
		KERNEL_RANGE_MIN, PORT_FIRST_UNPRIVILEGED);
	return -1;
}
