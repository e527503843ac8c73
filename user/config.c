/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The INI config parser (the keys are in README.md and user/xnat.8): the
 * line reader, the key table and its dispatch, the checks across sections,
 * and the [router] mode and [offload] keys; [nat] and [forward] are in
 * config_nat.c, the interfaces in config_iface.c, the file's bytes within
 * bounds in config_read.c. libinih does the tokenising; our own
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
#include <ini.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config_parse.h"

#define FLOWS_MAX (1UL << 24)

static const char *const sections[] = {
	"router", "nat", "timeouts", "flows", "forward", "offload", "ipv6",
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

void set_err(char *err, const char *path, int line, const char *fmt, ...)
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

void errs_add(struct config_errors *errs, const char *path, int line,
	      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errs_vadd(errs, path, line, fmt, ap);
	va_end(ap);
}

/* Record an error and go on; returns -1 for `return perr(...)`. */
int perr(struct parser *p, int line, const char *fmt, ...)
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

int parse_port(const char *s, unsigned long min, uint16_t *port)
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
int parse_ipv4(const char *s, uint32_t *addr)
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

unsigned long config_timeout_max(unsigned int hz)
{
	unsigned long jiffies_max, ms_max = INT_MAX / 1000;

	jiffies_max = INT_MAX / (hz ? hz : CONFIG_TIMEOUT_HZ_MAX);
	return jiffies_max < ms_max ? jiffies_max : ms_max;
}

/* A [timeouts] key: seconds, as many as the kernel takes here. */
static int parse_timeout(struct parser *p, const struct key_def *k,
			 const char *v)
{
	unsigned int hz = clock_hz();
	unsigned long n, max = config_timeout_max(hz);
	char at[24] = "";

	if (parse_ul(v, 1, max, &n)) {
		if (hz)
			snprintf(at, sizeof(at), " at HZ %u", hz);
		return perr(p, p->lineno,
			    "bad %s '%s': expected an integer in 1-%lu (seconds; the kernel takes no more%s)",
			    k->name, v, max, at);
	}
	*(uint32_t *)((char *)p->cfg + k->offset) = n;
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

/* [router] mss_clamp: pmtu, off, or the IPv4 MSS to clamp to. */
static int parse_mss_clamp(struct parser *p, const struct key_def *k,
			   const char *v)
{
	unsigned long n;

	if (!strcmp(v, "pmtu")) {
		p->cfg->mss_clamp = MSS_CLAMP_PMTU;
	} else if (!strcmp(v, "off")) {
		p->cfg->mss_clamp = MSS_CLAMP_OFF;
	} else if (!parse_ul(v, MSS_FIXED_MIN, MSS_FIXED_MAX, &n)) {
		p->cfg->mss_clamp = MSS_CLAMP_FIXED;
		p->cfg->mss_fixed = n;
	} else {
		return perr(p, p->lineno,
			    "bad mss_clamp '%s': expected pmtu, off or an MSS in %d-%d",
			    v, MSS_FIXED_MIN, MSS_FIXED_MAX);
	}
	return 0;
}

char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

int parse_list(struct parser *p, const char *v, size_t max, const char *what,
	       int (*item)(struct parser *p, char *s, const char *v))
{
	char buf[1024], *s, *comma;

	if (strlen(v) >= max || strlen(v) >= sizeof(buf))
		return perr(p, p->lineno, "%s list too long", what);
	strcpy(buf, v);
	for (s = buf; ; s = comma + 1) {
		comma = strchr(s, ',');
		if (comma)
			*comma = '\0';
		if (item(p, s, v))
			return -1;
		if (!comma)
			return 0;
	}
}

/* One of the key's words (key_def.words), setting its int field. */
static int parse_word(struct parser *p, const struct key_def *k, const char *v)
{
	const struct key_word *w;

	for (w = k->words; w->word; w++) {
		if (!strcmp(v, w->word)) {
			*(int *)((char *)p->cfg + k->offset) = w->value;
			return 0;
		}
	}
	return perr(p, p->lineno, "bad %s '%s': expected %s", k->name, v,
		    k->expected);
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

/* Every key but [forward]'s, whose names are the rules themselves. */
#define KEY(sec, key, fn) { .section = sec, .name = key, .parse = fn }
#define U32_KEY(sec, key, field, lo, hi)                                 \
	{ .section = sec, .name = key, .parse = parse_u32,              \
	  .offset = offsetof(struct config, field), .min = lo, .max = hi }
/* A [timeouts] key, setting the uint32_t FIELD (config_timeout_max). */
#define TIMEOUT_KEY(sec, key, field)                                     \
	{ .section = sec, .name = key, .parse = parse_timeout,          \
	  .offset = offsetof(struct config, field) }
/* A key of a few words, each setting the int FIELD to a value. */
#define WORD_KEY(sec, key, field, expect, ...)                          \
	{ .section = sec, .name = key, .parse = parse_word,             \
	  .offset = offsetof(struct config, field), .expected = expect, \
	  .words = (const struct key_word[]){ __VA_ARGS__, { NULL, 0 } } }

static const struct key_def keys[] = {
	WORD_KEY("router", "mode", mode, "offload, xdp or kernel",
		 { "xdp", MODE_XDP }, { "kernel", MODE_KERNEL },
		 { "offload", MODE_OFFLOAD }),
	KEY("router", "wan", parse_wan),
	KEY("router", "lan", parse_lan),
	WORD_KEY("router", "xdp", xdp_attach, "auto, native or generic",
		 { "auto", XDP_ATTACH_AUTO }, { "native", XDP_ATTACH_NATIVE },
		 { "generic", XDP_ATTACH_GENERIC }),
	WORD_KEY("router", "fastpath", fastpath, "on or off",
		 { "on", 1 }, { "off", 0 }),
	KEY("router", "mss_clamp", parse_mss_clamp),
	WORD_KEY("router", "source_check", source_feasible,
		 "strict or feasible", { "strict", 0 }, { "feasible", 1 }),
	KEY("nat", "address", parse_address),
	KEY("nat", "ports", parse_ports),
	WORD_KEY("nat", "filtering", filter_eif,
		 "address-dependent or endpoint-independent",
		 { "address-dependent", 0 }, { "endpoint-independent", 1 }),
	WORD_KEY("nat", "inbound_refresh", inbound_refresh, "yes or no",
		 { "yes", 1 }, { "no", 0 }),
	TIMEOUT_KEY("timeouts", "tcp_established", timeout_tcp_est),
	TIMEOUT_KEY("timeouts", "tcp_transitory", timeout_tcp_trans),
	TIMEOUT_KEY("timeouts", "udp", timeout_udp),
	TIMEOUT_KEY("timeouts", "icmp", timeout_icmp),
	TIMEOUT_KEY("timeouts", "udp_dns", timeout_udp_dns),
	U32_KEY("nat", "ports_per_host", ports_per_host, 0, 65535),
	U32_KEY("flows", "max", flows_max, 1, FLOWS_MAX),
	KEY("offload", "ct_mark", parse_offload_mark),
	WORD_KEY("offload", "shaped", offload_shaped, "kernel or offload",
		 { "kernel", 0 }, { "offload", 1 }),
	WORD_KEY("ipv6", "inbound", ipv6_inbound, "stateful or open",
		 { "stateful", IPV6_INBOUND_STATEFUL },
		 { "open", IPV6_INBOUND_OPEN }),
};
/* parse_word writes an int. */
_Static_assert(sizeof(((struct config *)0)->mode) == sizeof(int) &&
	       sizeof(((struct config *)0)->xdp_attach) == sizeof(int) &&
	       sizeof(((struct config *)0)->fastpath) == sizeof(int) &&
	       sizeof(((struct config *)0)->filter_eif) == sizeof(int) &&
	       sizeof(((struct config *)0)->inbound_refresh) == sizeof(int) &&
	       sizeof(((struct config *)0)->offload_shaped) == sizeof(int) &&
	       sizeof(((struct config *)0)->ipv6_inbound) == sizeof(int),
	       "WORD_KEY fields are int");

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

	if (!config_read_line(p))
		return NULL;
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

/*
 * The whole config is checked for both modes, so that switching mode never
 * uncovers an error: the kernel ranges are checked even in kernel mode.
 * Ranges are checked only against ports that parsed.
 */
static void check_config(struct parser *p)
{
	uint16_t local[2], knat[2];
	char err[CONFIG_ERR_LEN];

	check_interfaces(p, p->key_line[KEY_WAN], p->key_line[KEY_LAN]);
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
	/* What was not read cannot be said to be missing. */
	if (!p->truncated)
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

