/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The INI config parser (the keys are in README.md and user/xnat.8), the checks that
 * need the running system (interfaces, the WAN address) and the split of the
 * ports left to the kernel in xdp mode. libinih does the tokenising; our own
 * line reader feeds it one cleaned physical line per call, so we always know
 * the current line number and behave the same whatever options libinih was
 * built with (multi-line values, inline comment characters, line length).
 * Every error is one line "PATH:LINE: message". The parse goes on after
 * one, so that `xnat check` can list them all; what would only repeat an
 * earlier error is not reported (the keys of an unknown section, a missing
 * key whose line was wrong, ranges checked against ports that did not
 * parse). config_parse() and config_resolve() report the first.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <ini.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "names.h"

/* Ports below this are privileged: never NAT ports, never ephemeral. */
#define PORT_FIRST_UNPRIVILEGED 1024
/* Smallest range we give to local sockets or to the kernel's NAT. */
#define KERNEL_RANGE_MIN 1024

#define TIMEOUT_MAX (1UL << 31)
#define FLOWS_MAX (1UL << 24)

struct parser;
struct key_def;

typedef int (*key_parse_fn)(struct parser *p, const struct key_def *k,
			    const char *value);

struct key_def {
	const char *section;
	const char *name;
	key_parse_fn parse;
	/* for parse_u32 only */
	size_t offset;
	unsigned long min, max;
};

struct parser {
	struct config *cfg;
	struct config_errors *errs;
	FILE *f;
	char *line;            /* getline() buffer */
	size_t cap;
	int lineno;
	int failed;
	int in_bad_section;    /* skip keys until the next good header */
	int ports_bad;         /* [nat] ports did not parse */
	int *key_line;         /* per keys[] entry: where it was set, or 0 */
};

static const char *const sections[] = {
	"router", "nat", "timeouts", "flows", "forward", "offload",
};

/* "PATH:LINE: msg", or "PATH: msg" when no line applies (line 0). */
static void vset_err(char *err, const char *path, int line, const char *fmt,
		     va_list ap)
{
	int n;

	if (line > 0)
		n = snprintf(err, CONFIG_ERR_LEN, "%s:%d: ", path, line);
	else
		n = snprintf(err, CONFIG_ERR_LEN, "%s: ", path);
	if (n < 0 || n >= CONFIG_ERR_LEN)
		return;
	vsnprintf(err + n, CONFIG_ERR_LEN - n, fmt, ap);
}

static void set_err(char *err, const char *path, int line, const char *fmt,
		    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset_err(err, path, line, fmt, ap);
	va_end(ap);
}

static void errs_vadd(struct config_errors *errs, const char *path, int line,
		      const char *fmt, va_list ap)
{
	if (errs->n < CONFIG_MAX_ERRORS)
		vset_err(errs->msg[errs->n], path, line, fmt, ap);
	errs->n++;
}

static void errs_add(struct config_errors *errs, const char *path, int line,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errs_vadd(errs, path, line, fmt, ap);
	va_end(ap);
}

/* Record an error and go on; returns -1 for `return perr(...)`. */
static int perr(struct parser *p, int line, const char *fmt, ...)
{
	va_list ap;

	p->failed = 1;
	va_start(ap, fmt);
	errs_vadd(p->errs, p->cfg->path, line, fmt, ap);
	va_end(ap);
	return -1;
}

void config_init(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = MODE_XDP;
	cfg->xdp_attach = XDP_ATTACH_AUTO;
	cfg->nat_addr_auto = 1;
	cfg->port_min = 20000;
	cfg->port_max = 65535;
	cfg->timeout_tcp_est = 7440;
	cfg->timeout_tcp_trans = 240;
	cfg->timeout_udp = 300;
	cfg->timeout_icmp = 60;
	cfg->timeout_udp_dns = 30;
	cfg->flows_max = 1048576;
	cfg->fastpath = 1;
	cfg->offload_mark = CONFIG_OFFLOAD_MARK;
	cfg->offload_shaped = 0;
}

const char *config_mode_name(int mode)
{
	return mode == MODE_KERNEL ? "kernel" :
	       mode == MODE_OFFLOAD ? "offload" : "xdp";
}

/*
 * Decimal only, no sign, no spaces: strtoul() alone would take "-1" as
 * ULONG_MAX, " 7" and "0x10".
 */
static int parse_ul(const char *s, unsigned long min, unsigned long max,
		    unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end || errno == ERANGE || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_port(const char *s, unsigned long min, uint16_t *port)
{
	unsigned long v;

	if (parse_ul(s, min, 65535, &v))
		return -1;
	*port = v;
	return 0;
}

/*
 * A unicast IPv4 address in dotted quad: 0/8, loopback, multicast and the
 * reserved/broadcast block can be neither a NAT address nor a host behind it.
 */
static int parse_ipv4(const char *s, uint32_t *addr)
{
	struct in_addr a;
	uint32_t h;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -1;
	h = ntohl(a.s_addr);
	if ((h >> 24) == 0 || (h >> 24) == 127 || h >= 0xe0000000)
		return -1;
	*addr = a.s_addr;
	return 0;
}

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

static int parse_mode(struct parser *p, const struct key_def *k, const char *v)
{
	if (!strcmp(v, "xdp"))
		p->cfg->mode = MODE_XDP;
	else if (!strcmp(v, "kernel"))
		p->cfg->mode = MODE_KERNEL;
	else if (!strcmp(v, "offload"))
		p->cfg->mode = MODE_OFFLOAD;
	else
		return perr(p, p->lineno,
			    "bad mode '%s': expected offload, xdp or kernel", v);
	return 0;
}

static int parse_filtering(struct parser *p, const struct key_def *k,
			   const char *v)
{
	if (!strcmp(v, "address-dependent"))
		p->cfg->filter_eif = 0;
	else if (!strcmp(v, "endpoint-independent"))
		p->cfg->filter_eif = 1;
	else
		return perr(p, p->lineno,
			    "bad filtering '%s': expected address-dependent or endpoint-independent",
			    v);
	return 0;
}

static int parse_inbound_refresh(struct parser *p, const struct key_def *k,
				 const char *v)
{
	if (!strcmp(v, "yes"))
		p->cfg->inbound_refresh = 1;
	else if (!strcmp(v, "no"))
		p->cfg->inbound_refresh = 0;
	else
		return perr(p, p->lineno,
			    "bad inbound_refresh '%s': expected yes or no", v);
	return 0;
}

/* [offload] ct_mark: exactly two bits of the conntrack mark, in hex or
 * decimal (operators write marks in hex: nft, conntrack -L). */
static int parse_offload_mark(struct parser *p, const struct key_def *k,
			      const char *v)
{
	unsigned long m;
	char *end;

	errno = 0;
	m = strtoul(v, &end, 0);
	if (!isdigit((unsigned char)*v) || *end || errno || m > UINT32_MAX ||
	    __builtin_popcountl(m) != 2)
		return perr(p, p->lineno,
			    "bad ct_mark '%s': expected a 32-bit mask with exactly two bits set, e.g. 0xc0000000",
			    v);
	p->cfg->offload_mark = m;
	return 0;
}

static int parse_offload_shaped(struct parser *p, const struct key_def *k,
				const char *v)
{
	if (!strcmp(v, "kernel"))
		p->cfg->offload_shaped = 0;
	else if (!strcmp(v, "offload"))
		p->cfg->offload_shaped = 1;
	else
		return perr(p, p->lineno,
			    "bad shaped '%s': expected kernel or offload", v);
	return 0;
}

static int parse_fastpath(struct parser *p, const struct key_def *k,
			  const char *v)
{
	if (!strcmp(v, "on"))
		p->cfg->fastpath = 1;
	else if (!strcmp(v, "off"))
		p->cfg->fastpath = 0;
	else
		return perr(p, p->lineno, "bad fastpath '%s': expected on or off",
			    v);
	return 0;
}

static int parse_xdp(struct parser *p, const struct key_def *k, const char *v)
{
	if (!strcmp(v, "auto"))
		p->cfg->xdp_attach = XDP_ATTACH_AUTO;
	else if (!strcmp(v, "native"))
		p->cfg->xdp_attach = XDP_ATTACH_NATIVE;
	else if (!strcmp(v, "generic"))
		p->cfg->xdp_attach = XDP_ATTACH_GENERIC;
	else
		return perr(p, p->lineno,
			    "bad xdp '%s': expected auto, native or generic", v);
	return 0;
}

static int parse_wan(struct parser *p, const struct key_def *k, const char *v)
{
	return set_ifname(p, &p->cfg->wan, v);
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
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

static int parse_lan(struct parser *p, const struct key_def *k, const char *v)
{
	char buf[256], *s, *comma;

	if (strlen(v) >= sizeof(buf))
		return perr(p, p->lineno, "lan list too long");
	strcpy(buf, v);
	for (s = buf; ; s = comma + 1) {
		comma = strchr(s, ',');
		if (comma)
			*comma = '\0';
		if (add_lan(p, trim(s)))
			return -1;
		if (!comma)
			return 0;
	}
}

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
static int parse_address(struct parser *p, const struct key_def *k,
			 const char *v)
{
	struct config *cfg = p->cfg;
	char buf[1024], *s, *comma;

	cfg->nat_addr_line = p->lineno;
	cfg->n_pool = 0;
	if (!strcmp(v, "auto")) {
		cfg->nat_addr_auto = 1;
		cfg->nat_addr = 0;
		return 0;
	}
	if (strlen(v) >= sizeof(buf))
		return perr(p, p->lineno, "address list too long");
	strcpy(buf, v);
	for (s = buf; ; s = comma + 1) {
		comma = strchr(s, ',');
		if (comma)
			*comma = '\0';
		if (add_pool_item(p, s, v))
			return -1;
		if (!comma)
			break;
	}
	cfg->nat_addr = cfg->pool[0];
	cfg->nat_addr_auto = 0;
	return 0;
}

static int parse_ports(struct parser *p, const struct key_def *k,
		       const char *v)
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

static int parse_u32(struct parser *p, const struct key_def *k, const char *v)
{
	unsigned long n;

	if (parse_ul(v, k->min, k->max, &n))
		return perr(p, p->lineno,
			    "bad %s '%s': expected an integer in %lu-%lu", k->name,
			    v, k->min, k->max);
	*(uint32_t *)((char *)p->cfg + k->offset) = n;
	return 0;
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

static int parse_forward(struct parser *p, const char *name, const char *v)
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

/* Every key but [forward]'s, whose names are the rules themselves. */
#define KEY(sec, key, fn) { .section = sec, .name = key, .parse = fn }
#define U32_KEY(sec, key, field, lo, hi)                                 \
	{ .section = sec, .name = key, .parse = parse_u32,              \
	  .offset = offsetof(struct config, field), .min = lo, .max = hi }

static const struct key_def keys[] = {
	KEY("router", "mode", parse_mode),
	KEY("router", "wan", parse_wan),
	KEY("router", "lan", parse_lan),
	KEY("router", "xdp", parse_xdp),
	KEY("router", "fastpath", parse_fastpath),
	KEY("nat", "address", parse_address),
	KEY("nat", "ports", parse_ports),
	KEY("nat", "filtering", parse_filtering),
	KEY("nat", "inbound_refresh", parse_inbound_refresh),
	U32_KEY("timeouts", "tcp_established", timeout_tcp_est, 1, TIMEOUT_MAX),
	U32_KEY("timeouts", "tcp_transitory", timeout_tcp_trans, 1, TIMEOUT_MAX),
	U32_KEY("timeouts", "udp", timeout_udp, 1, TIMEOUT_MAX),
	U32_KEY("timeouts", "icmp", timeout_icmp, 1, TIMEOUT_MAX),
	U32_KEY("timeouts", "udp_dns", timeout_udp_dns, 1, TIMEOUT_MAX),
	U32_KEY("nat", "ports_per_host", ports_per_host, 0, 65535),
	U32_KEY("flows", "max", flows_max, 1, FLOWS_MAX),
	KEY("offload", "ct_mark", parse_offload_mark),
	KEY("offload", "shaped", parse_offload_shaped),
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))
/* Their places in keys[], for the checks after the parse. */
enum { KEY_WAN = 1, KEY_LAN = 2 };

static const struct key_def *find_key(const char *section, const char *name)
{
	size_t i;

	for (i = 0; i < N_KEYS; i++)
		if (!strcmp(keys[i].section, section) &&
		    !strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* libinih handler: always go on, errors are recorded in p->errs. */
static int on_key(void *user, const char *section, const char *name,
		  const char *value)
{
	struct parser *p = user;
	const struct key_def *k;

	if (!*section) {
		perr(p, p->lineno, "key '%s' outside any section", name);
		return 1;
	}
	k = find_key(section, name);
	if (!*value) {
		perr(p, p->lineno, "empty value for '%s'", name);
		/* Given, if wrong: "missing" would only repeat this. */
		if (k && !p->key_line[k - keys])
			p->key_line[k - keys] = p->lineno;
		return 1;
	}
	if (!strcmp(section, "forward"))
		parse_forward(p, name, value);
	else if (!k)
		perr(p, p->lineno, "unknown key '%s' in [%s]", name, section);
	else if (p->key_line[k - keys])
		perr(p, p->lineno, "duplicate key '%s' in [%s] (first at line %d)",
		     name, section, p->key_line[k - keys]);
	else {
		p->key_line[k - keys] = p->lineno;
		k->parse(p, k, value);
	}
	return 1;
}

/*
 * Cut the comment (';' or '#' anywhere: no value of ours contains them) and
 * the surrounding white space. Removing the indentation also keeps libinih
 * from reading an indented line as the continuation of the previous value.
 */
static char *clean_line(char *s, int first)
{
	if (first && !strncmp(s, "\xef\xbb\xbf", 3))
		s += 3;
	s[strcspn(s, ";#")] = '\0';
	return trim(s);
}

static int check_section(struct parser *p, const char *s)
{
	size_t n = strlen(s), i;

	if (s[n - 1] != ']')
		return perr(p, p->lineno, "bad section header '%s'", s);
	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (strlen(sections[i]) == n - 2 &&
		    !strncmp(sections[i], s + 1, n - 2))
			return 0;
	return perr(p, p->lineno, "unknown section %s", s);
}

/* Only "KEY = VALUE": libinih would also take "KEY: VALUE". */
static int check_pair(struct parser *p, const char *s)
{
	size_t eq = strcspn(s, "=");

	if (!s[eq] || eq == 0 || strcspn(s, ":") < eq)
		return perr(p, p->lineno, "expected KEY = VALUE or [section]");
	return 0;
}

/*
 * libinih reader: one physical line per call, so p->lineno is exact. A
 * line in error is handed on as an empty one, and so are the keys of a
 * section whose header was wrong (each would only say "unknown key").
 */
static char *read_line(char *str, int num, void *stream)
{
	struct parser *p = stream;
	char *s;

	if (getline(&p->line, &p->cap, p->f) < 0)
		return NULL;
	p->lineno++;
	s = clean_line(p->line, p->lineno == 1);
	if (*s == '[') {
		p->in_bad_section = check_section(p, s) != 0;
		if (p->in_bad_section)
			s = "";
	} else if (*s && (p->in_bad_section || check_pair(p, s))) {
		s = "";
	}
	if (strlen(s) + 1 > (size_t)num) {
		perr(p, p->lineno, "line too long (at most %d characters)",
		     num - 1);
		s = "";
	}
	strcpy(str, s);
	return str;
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
static void check_interfaces(struct parser *p)
{
	const struct config *cfg = p->cfg;
	int i;

	if (!cfg->wan.name[0] && !p->key_line[KEY_WAN])
		perr(p, 0, "[router] wan is missing");
	if (!cfg->n_lan && !p->key_line[KEY_LAN])
		perr(p, 0, "[router] lan is missing");
	i = cfg->wan.name[0] ? find_lan(cfg, cfg->wan.name) : -1;
	if (i >= 0)
		perr(p, cfg->lan[i].line,
		     "wan %s is also listed as lan (wan at line %d)",
		     cfg->wan.name, cfg->wan.line);
}

/* A forward inside the XDP NAT range would be taken for a NAT reply. */
static void check_forwards(struct parser *p)
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
 * The whole config is checked for both modes, so that switching mode never
 * uncovers an error: the kernel ranges are checked even in kernel mode.
 * Ranges are checked only against ports that parsed.
 */
static void check_config(struct parser *p)
{
	uint16_t local[2], knat[2];
	char err[CONFIG_ERR_LEN];

	check_interfaces(p);
	if (p->ports_bad)
		return;
	check_forwards(p);
	if (config_kernel_ranges(p->cfg, local, knat, err)) {
		if (p->errs->n < CONFIG_MAX_ERRORS)
			memcpy(p->errs->msg[p->errs->n], err, CONFIG_ERR_LEN);
		p->errs->n++;
		p->failed = 1;
	}
}

static int parse_file(struct parser *p)
{
	int ret;

	ret = ini_parse_stream(read_line, p, on_key, p);
	if (ferror(p->f))
		return perr(p, 0, "%s", strerror(EIO));
	/* Lines libinih rejects without calling us; check_pair() should have
	 * caught them all, but its return value is the authority. */
	if (!p->failed && ret > 0)
		return perr(p, ret, "syntax error");
	if (ret < 0)
		return perr(p, 0, "%s", strerror(ENOMEM));
	check_config(p);
	return p->failed ? -1 : 0;
}

int config_parse_all(struct config *cfg, const char *path,
		     struct config_errors *errs)
{
	int key_line[N_KEYS] = { 0 };
	struct parser p = {
		.cfg = cfg, .errs = errs, .key_line = key_line,
	};
	int ret;

	config_init(cfg);
	errs->n = 0;
	if (strlen(path) >= sizeof(cfg->path)) {
		errs_add(errs, path, 0, "%s", strerror(ENAMETOOLONG));
		return -1;
	}
	strcpy(cfg->path, path);
	p.f = fopen(path, "r");
	if (!p.f) {
		errs_add(errs, path, 0, "%s", strerror(errno));
		return -1;
	}
	ret = parse_file(&p);
	free(p.line);
	fclose(p.f);
	return ret;
}

int config_parse(struct config *cfg, const char *path,
		 char err[CONFIG_ERR_LEN])
{
	struct config_errors *errs = malloc(sizeof(*errs));
	int ret;

	if (!errs) {
		set_err(err, path, 0, "%s", strerror(ENOMEM));
		return -1;
	}
	ret = config_parse_all(cfg, path, errs);
	if (ret)
		memcpy(err, errs->msg[0], CONFIG_ERR_LEN);
	free(errs);
	return ret;
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
