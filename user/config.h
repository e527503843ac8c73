/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The router config as parsed from the INI file. Parsing checks everything
 * it can without touching the system (syntax, ranges, overlaps); checks that
 * need the system (do the interfaces exist) are in config_resolve(). Both
 * report "FILE:LINE: what is wrong" and change nothing.
 */
#ifndef XNAT_CONFIG_H
#define XNAT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include "../bpf/xnat_common.h"

#define CONFIG_MAX_LAN 16
#define CONFIG_ERR_LEN 512
#define CONFIG_MAX_ERRORS 32

enum router_mode {
	MODE_XDP = 0,
	MODE_KERNEL = 1,
	MODE_OFFLOAD = 2,  /* the kernel decides, XDP carries its flows */
};

/* Does MODE run xnat's XDP program on the ports? */
static inline int mode_runs_xdp(int mode)
{
	return mode != MODE_KERNEL;
}

/* "xdp", "kernel" or "offload". */
const char *config_mode_name(int mode);

/* Default [offload] ct_mark: the two top bits, far from the low bits that
 * policy routing and QoS setups usually give marks. */
#define CONFIG_OFFLOAD_MARK 0xc0000000u

/* [router] mss_clamp. */
enum mss_clamp {
	MSS_CLAMP_PMTU = 0,  /* the MTU of the ports both ways, as nft's
				"rt mtu" (default) */
	MSS_CLAMP_OFF = 1,
	MSS_CLAMP_FIXED = 2, /* mss_fixed */
};
/* The range of a fixed [router] mss_clamp (IPv4 MSS): RFC 9293's
 * default 536 up to a 65535-byte packet. */
#define MSS_FIXED_MIN 536
#define MSS_FIXED_MAX 65495

/* [ipv6] inbound: what IPv6 from the WAN may open towards LAN hosts. */
enum ipv6_inbound {
	IPV6_INBOUND_STATEFUL = 0, /* replies, ICMPv6 echo, errors of flows */
	IPV6_INBOUND_OPEN = 1,     /* everything: hosts filter for themselves */
};

enum xdp_attach {
	XDP_ATTACH_AUTO = 0,   /* native where the driver has it, else generic */
	XDP_ATTACH_NATIVE = 1,
	XDP_ATTACH_GENERIC = 2,
};

struct config_iface {
	char name[IF_NAMESIZE];
	int line;              /* where it was named, for later errors */
	uint32_t ifindex;      /* filled by config_resolve() */
};

struct config_forward {
	uint8_t proto;         /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port;         /* external port, host order */
	uint32_t addr;         /* inside host, network order */
	uint16_t to_port;      /* host order */
	int line;
};

struct config {
	char path[256];
	enum router_mode mode;
	enum xdp_attach xdp_attach;
	struct config_iface wan;
	struct config_iface lan[CONFIG_MAX_LAN];
	int n_lan;

	uint32_t nat_addr;     /* network order; with nat_addr_auto 0 until
				  config_resolve() finds the WAN's */
	/* [nat] address as a list of addresses and ranges: every external
	 * address, network order, pool[0] == nat_addr; n_pool 1 for one. */
	uint32_t pool[XNAT_MAX_POOL];
	int n_pool;
	int nat_addr_auto;
	int nat_addr_line;
	/* Set by `xnat run` before config_resolve(): a WAN without an IPv4
	 * address yet (DHCP, PPPoE) leaves nat_addr 0, NAT waits for it. */
	int nat_addr_wait;
	uint16_t port_min, port_max; /* host order, inclusive */
	int ports_line;
	/* [nat] filtering: 0 address-dependent (default), 1 endpoint-
	 * independent; inbound_refresh: UDP from the WAN keeps mappings. */
	int filter_eif;
	int inbound_refresh;
	/* [router] fastpath: 1 on (default), 0 off: every packet of a flow
	 * is routed again as its first was (fwd_routed), to show what the
	 * flow cache saves. */
	int fastpath;

	/* [router] source_check: 0 strict (default), a LAN port's new
	 * connections need a source routed back out of that port; 1
	 * feasible, out of any LAN port (XNAT_F_SRC_FEASIBLE). */
	int source_feasible;

	/* [router] mss_clamp: what the MSS option of forwarded SYNs and
	 * SYN-ACKs is lowered to (see enum mss_clamp); mss_fixed is the
	 * IPv4 MSS of MSS_CLAMP_FIXED (IPv6 gets 20 less: the same MTU). */
	int mss_clamp;
	uint16_t mss_fixed;
	/* [ipv6] inbound: 0 stateful (default), 1 open (see enum
	 * ipv6_inbound). */
	int ipv6_inbound;

	/* [nat] ports_per_host: 0 no limit (RFC 6888 REQ-4). */
	uint32_t ports_per_host;

	uint32_t timeout_tcp_est, timeout_tcp_trans, timeout_udp, timeout_icmp;
	uint32_t timeout_udp_dns; /* UDP to or from port 53 (RFC 4787 REQ-5a) */
	uint32_t flows_max;    /* connections; the map holds two entries each */

	struct config_forward fwd[XNAT_MAX_FORWARDS];
	int n_fwd;

	/* [offload]: the two conntrack mark bits xnat owns (the lower one
	 * for the original direction), and whether flows leaving a shaped
	 * port are offloaded anyway (1) or stay in the kernel (0). */
	uint32_t offload_mark;
	int offload_shaped;
};

/* The router's ports by index: 0 the WAN, 1 to n_lan the LANs in the
 * config's order, as offload's mark rules number them (user/offload.c)
 * and `xnat status` names them for its comparison. */
static inline int config_n_ports(const struct config *cfg)
{
	return cfg->n_lan + 1;
}

static inline const char *config_port_name(const struct config *cfg, int i)
{
	return i ? cfg->lan[i - 1].name : cfg->wan.name;
}

/* Every error of a config, in the order found: N counts them all, the first
 * CONFIG_MAX_ERRORS are kept. For `xnat check`. */
struct config_errors {
	int n;
	char msg[CONFIG_MAX_ERRORS][CONFIG_ERR_LEN];
};

/*
 * The longest [timeouts] value `up` can apply, in seconds, on a kernel of
 * HZ ticks a second (0: unknown, then the largest HZ any architecture
 * builds with, CONFIG_TIMEOUT_HZ_MAX). Every timeout goes to conntrack in
 * every mode: its sysctls hold jiffies in an int (proc_dointvec_jiffies
 * refuses over INT_MAX / HZ seconds), the udp_dns policy too (a longer
 * one wraps, or lies in the past), and offload mode hands them to
 * bpf_ct_change_timeout() in milliseconds, which the kernel takes for
 * "for ever" (MAX_JIFFY_OFFSET) from 2^31 on (__msecs_to_jiffies() in
 * kernel/time/time.c): at most INT_MAX / 1000 seconds.
 */
#define CONFIG_TIMEOUT_HZ_MAX 1200
unsigned long config_timeout_max(unsigned int hz);

/* Defaults as in the README's config reference. */
void config_init(struct config *cfg);

/*
 * Parse PATH into CFG, starting from the defaults. On error returns -1 with
 * ERR set to a single line "PATH:LINE: message" (or "PATH: message" when no
 * line applies).
 */
int config_parse(struct config *cfg, const char *path, char err[CONFIG_ERR_LEN]);

/*
 * Look the interfaces up in the current network namespace, fill ifindex and,
 * with nat_addr_auto, the WAN's primary IPv4 address. Same error contract.
 */
int config_resolve(struct config *cfg, char err[CONFIG_ERR_LEN]);

/* A config's LAN ports that are gone from the system (deleted: an adapter
 * unplugged): a running router whose port went runs without them. */
struct config_gone {
	int n;
	char name[CONFIG_MAX_LAN][IF_NAMESIZE];
};

/* How long GONE's names, ", " between them, may be. */
#define CONFIG_GONE_LEN (CONFIG_MAX_LAN * (IF_NAMESIZE + 2))

/*
 * Resolve CFG as config_resolve() does; if it does not resolve, resolve it
 * without its LAN ports that are gone, their names into GONE. 0 when CFG
 * is resolved (GONE->n says whether without some), or -1 with ERR (CFG as
 * the whole config's attempt left it) when no port is gone, none would be
 * left, or the rest does not resolve either.
 */
int config_resolve_running(struct config *cfg, struct config_gone *gone,
			   char err[CONFIG_ERR_LEN]);

/* GONE's names, ", " between them, in BUF (CONFIG_GONE_LEN); BUF. */
const char *config_gone_list(const struct config_gone *gone, char *buf);

/* "lan1, in the running config, is gone: the router runs without it"
 * (one port) or "... are gone: ... without them" into BUF
 * (CONFIG_ERR_LEN), with UNTIL_BACK "... until it is back"; BUF. */
const char *config_gone_say(const struct config_gone *gone, bool until_back,
			    char *buf);

/* The same two, reporting every error into ERRS instead of the first. */
int config_parse_all(struct config *cfg, const char *path,
		     struct config_errors *errs);
int config_resolve_all(struct config *cfg, struct config_errors *errs);

/*
 * The ports the kernel may use when xnat runs in xdp mode: the complement of
 * the XDP range within 1024-65535 split in two disjoint ranges, one for the
 * router's own sockets (ip_local_port_range) and one for the kernel's NAT of
 * passed-up traffic. Returns -1 (with ERR) when either would be too small.
 */
int config_kernel_ranges(const struct config *cfg, uint16_t local[2],
			 uint16_t knat[2], char err[CONFIG_ERR_LEN]);

#endif /* XNAT_CONFIG_H */
