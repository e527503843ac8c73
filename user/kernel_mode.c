/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's part of the router (see kernel_mode.h): the nftables table
 * "inet xnat", written as one libnftables transaction that deletes any old
 * copy and adds the new one, so a reload never leaves a moment without
 * rules; and the list of sysctls the router sets (apply.c sets them, through
 * state.c so that `xnat down` restores them). Everything acts on the
 * current network namespace.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_mode.h"
#include "log.h"
#include "names.h"
#include "offload.h"

#define SYSCTL_IP_FORWARD "net/ipv4/ip_forward"
#define SYSCTL_IP6_FORWARD "net/ipv6/conf/all/forwarding"
#define SYSCTL_LOCAL_PORTS "net/ipv4/ip_local_port_range"

/*
 * Declaring the table first makes the delete succeed whether or not it
 * exists, and the whole buffer is one transaction: idempotent and atomic.
 */
#define NFT_DELETE_TABLE "table inet xnat {}\ndelete table inet xnat\n"

/* nft's message, first line only: the rest repeats the input and a caret. */
static void nft_error(struct nft_ctx *ctx, char *err)
{
	const char *msg = nft_ctx_get_error_buffer(ctx);

	while (msg && *msg == '\n')
		msg++;
	if (!msg || !*msg)
		msg = "failed";
	snprintf(err, CONFIG_ERR_LEN, "nft: %.*s", (int)strcspn(msg, "\n"),
		 msg);
}

/* DRY_RUN: check against the kernel, commit nothing (nft -c). */
static int nft_exec(const char *cmds, bool dry_run, char *err)
{
	struct nft_ctx *ctx;
	int ret = 0;

	ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!ctx) {
		snprintf(err, CONFIG_ERR_LEN, "nft: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	/* Keep nft quiet on stdout/stderr: the caller reports. */
	if (nft_ctx_buffer_output(ctx) || nft_ctx_buffer_error(ctx)) {
		snprintf(err, CONFIG_ERR_LEN, "nft: %s", strerror(ENOMEM));
		ret = -ENOMEM;
		goto out;
	}
	nft_ctx_set_dry_run(ctx, dry_run);
	if (nft_run_cmd_from_buffer(ctx, cmds)) {
		nft_error(ctx, err);
		ret = -EINVAL;
	}
out:
	nft_ctx_free(ctx);
	return ret;
}

static int nft_run(const char *cmds, char *err)
{
	return nft_exec(cmds, false, err);
}

/* The config's LAN ports as an anonymous set: { "lan0", "lan1" }. */
static void emit_lan_set(FILE *f, const struct config *cfg)
{
	int i;

	fprintf(f, "{");
	for (i = 0; i < cfg->n_lan; i++)
		fprintf(f, "%s \"%s\"", i ? "," : "", cfg->lan[i].name);
	fprintf(f, " }");
}

/*
 * RFC 3704 strict reverse path on the WAN port: a packet arriving there
 * whose source the router routes out of a LAN port is spoofed, and would
 * otherwise reach a port forward or pass as a LAN host's traffic. rp_filter
 * is off in a new namespace and is not xnat's to change; XDP checks its
 * own new flows the same way (fib_src_check in bpf/fib.h, drop_spoofed,
 * which also holds LAN ports to their own sources), this covers what the
 * kernel forwards from the WAN, in every mode.
 * Before conntrack (priority raw), so it leaves no entry. IPv6 link-local
 * sources are looked up on the arriving port only (nft's fib does so), so
 * the WAN's neighbour discovery is not caught.
 */
static void emit_antispoof(FILE *f, const struct config *cfg)
{
	fprintf(f, "\tchain antispoof {\n"
		   "\t\ttype filter hook prerouting priority raw; policy accept;\n"
		   "\t\tiifname \"%s\" fib saddr oifname ", cfg->wan.name);
	emit_lan_set(f, cfg);
	fprintf(f, " drop\n"
		   "\t}\n");
}

/*
 * [timeouts] udp_dns for the kernel's conntrack (RFC 4787 REQ-5a), as XDP
 * applies it to its own flows (flow_timeout in bpf/common_config.h): a UDP
 * connection opened to or from port 53 gets a timeout policy of its own,
 * for both of conntrack's UDP states (which the udp_timeout and
 * udp_timeout_stream sysctls set for the rest). "ct timeout set" acts on
 * the entry conntrack (priority -200) has just made, before it is
 * confirmed, which is all the NAT chain below ever sees: it runs on a
 * connection's first packet only, so these rules cost nothing per packet
 * (a filter chain of their own did, on every packet, docs/BENCHMARKS.md
 * "What kernel mode's ruleset costs"). First in the chain, before a DNAT
 * rule rewrites a forward's port, so the ports are those the connection
 * was opened with, as in XDP's flow key. One policy serves both families
 * (l3proto inet).
 */
static void emit_dns_timeout(FILE *f)
{
	fprintf(f, "\t\tudp dport %u ct timeout set \"udp_dns\"\n"
		   "\t\tudp sport %u ct timeout set \"udp_dns\"\n",
		XNAT_DNS_PORT, XNAT_DNS_PORT);
}

/*
 * DNAT of the port forwards, after the DNS timeouts. A NAT chain: the
 * kernel runs it on a connection's first packet alone. With an auto
 * address the WAN address may change under us (DHCP), so match
 * "addressed to this box" instead.
 */
static void emit_prerouting(FILE *f, const struct config *cfg)
{
	char nat[INET_ADDRSTRLEN + 16], to[INET_ADDRSTRLEN], wan[INET_ADDRSTRLEN];
	const struct config_forward *fw;
	int i;

	if (cfg->nat_addr_auto)
		snprintf(nat, sizeof(nat), "fib daddr type local");
	else
		snprintf(nat, sizeof(nat), "ip daddr %s",
			 inet_ntop(AF_INET, &cfg->nat_addr, to, sizeof(to)));
	fprintf(f, "\tct timeout udp_dns { protocol udp; policy = { unreplied : %u, replied : %u }; }\n"
		   "\tchain prerouting {\n"
		   "\t\ttype nat hook prerouting priority dstnat; policy accept;\n",
		cfg->timeout_udp_dns, cfg->timeout_udp_dns);
	emit_dns_timeout(f);
	inet_ntop(AF_INET, &cfg->nat_addr, wan, sizeof(wan));
	for (i = 0; i < cfg->n_fwd; i++) {
		fw = &cfg->fwd[i];
		inet_ntop(AF_INET, &fw->addr, to, sizeof(to));
		fprintf(f, "\t\tiifname \"%s\" %s %s dport %u dnat ip to %s:%u\n",
			cfg->wan.name, nat, proto_name(fw->proto), fw->port, to,
			fw->to_port);
		/* Hairpin: LAN hosts reach the forward on the WAN address
		 * (the one resolved now; `xnat run` re-applies on change). */
		if (cfg->nat_addr)
			fprintf(f, "\t\tiifname != \"%s\" ip daddr %s %s dport %u dnat ip to %s:%u\n",
				cfg->wan.name, wan, proto_name(fw->proto),
				fw->port, to, fw->to_port);
	}
	fprintf(f, "\t}\n");
}

/*
 * IPv4 only: in an inet table a bare masquerade would NAT IPv6 as well. In
 * xdp mode TCP and UDP get the kernel NAT range, disjoint from the XDP one,
 * so a port the kernel hands out is never one XDP may also use. With a
 * fixed [nat] address the kernel uses that address too (snat), not the
 * WAN's primary one, so both paths present the same outside address.
 * XXX: nft cannot restrict ICMP echo ids to a range; a kernel-NATed echo
 * may pick an id XDP also uses, towards the same host, at the same time.
 */
static void emit_postrouting(FILE *f, const struct config *cfg,
			     const uint16_t knat[2])
{
	char to[64 + XNAT_MAX_POOL * 24] = "masquerade";
	char addr[INET_ADDRSTRLEN];
	size_t n;

	if (!cfg->nat_addr_auto && cfg->n_pool > 1) {
		/* Paired pooling, the same choice as XDP's (see
		 * xnat_pool_hash() in bpf/common_nat.h). */
		n = snprintf(to, sizeof(to),
			     "snat ip to jhash ip saddr mod %d seed %#x map {",
			     cfg->n_pool, XNAT_POOL_SEED);
		for (int i = 0; i < cfg->n_pool && n < sizeof(to); i++)
			n += snprintf(to + n, sizeof(to) - n, "%s %d : %s", i ? "," : "",
				      i, inet_ntop(AF_INET, &cfg->pool[i], addr,
						   sizeof(addr)));
		if (n < sizeof(to))
			snprintf(to + n, sizeof(to) - n, " }");
	} else if (!cfg->nat_addr_auto) {
		inet_ntop(AF_INET, &cfg->nat_addr, addr, sizeof(addr));
		snprintf(to, sizeof(to), "snat ip to %s", addr);
	}
	fprintf(f, "\tchain postrouting {\n"
		   "\t\ttype nat hook postrouting priority srcnat; policy accept;\n");
	if (cfg->mode == MODE_XDP)
		fprintf(f, "\t\toifname \"%s\" meta nfproto ipv4 meta l4proto { tcp, udp } %s%s:%u-%u\n",
			cfg->wan.name, to, cfg->nat_addr_auto ? " to " : "",
			knat[0], knat[1]);
	fprintf(f, "\t\toifname \"%s\" meta nfproto ipv4 %s\n",
		cfg->wan.name, to);
	/* Hairpinned connections leave by a LAN port: the server must answer
	 * through the router, so the client appears as the WAN address, as
	 * it would to an outside server (RFC 4787 REQ-9). */
	if (cfg->nat_addr) {
		inet_ntop(AF_INET, &cfg->nat_addr, addr, sizeof(addr));
		fprintf(f, "\t\tiifname != \"%s\" oifname != \"%s\" ct status dnat meta nfproto ipv4 snat ip to %s\n",
			cfg->wan.name, cfg->wan.name, addr);
	}
	fprintf(f, "\t}\n");
}

/*
 * [router] mss_clamp: forwarded SYNs and SYN-ACKs leave with an MSS that
 * fits. "rt mtu" is the smaller MTU of the routes towards the destination
 * and back to the source, less 40 (IPv4) or 60 (IPv6) bytes; the set only
 * ever lowers the option. XDP does the same for what it forwards
 * (bpf/mss.h). The forward chain's first rules, before it accepts
 * SYN-ACKs as established: in a chain of its own it cost every forwarded
 * packet a hook (docs/BENCHMARKS.md, "What kernel mode's ruleset costs").
 */
static void emit_mss(FILE *f, const struct config *cfg)
{
	const char *set = "tcp flags syn tcp option maxseg size set";

	if (cfg->mss_clamp == MSS_CLAMP_PMTU)
		fprintf(f, "\t\t%s rt mtu\n", set);
	else if (cfg->mss_clamp == MSS_CLAMP_FIXED)
		fprintf(f, "\t\tmeta nfproto ipv4 %s %u\n"
			   "\t\tmeta nfproto ipv6 %s %u\n",
			set, cfg->mss_fixed, set,
			cfg->mss_fixed - (XNAT_MSS_HDRS_V6 - XNAT_MSS_HDRS_V4));
}

/*
 * Both families: from the WAN only replies and port forwards get in, and
 * for IPv6 ([ipv6] inbound, docs/NAT.md) echo requests (RFC 4890 4.3.1)
 * or, with "open", everything: the LAN's prefix is routed and its hosts
 * filter for themselves. ICMPv6 errors get in as "related" to the flow
 * they quote; one that quotes no flow is invalid.
 * A new connection from a LAN port needs a source the router routes back
 * out of that port (RFC 3704 strict, as XDP's fib_src_check in bpf/fib.h
 * holds its own new flows to): a host forging another port's address, or
 * a WAN server's, would otherwise open a conntrack entry whose reply
 * direction is that address's next connection, and take it over. With
 * [router] source_check = feasible, out of any LAN port will do for a
 * LAN port's (asymmetric LAN routing, ECMP); other ports xnat does not
 * run on stay strict. What the router itself receives (DHCP from
 * 0.0.0.0, say) is not forwarded and not checked.
 *
 * Each of these is a connection's decision, taken on its first packet:
 * the one whose conntrack entry is not confirmed yet. "ct state new"
 * would not do: conntrack calls every packet new until the first reply,
 * so each packet of a one-way stream (UDP, a SYN sent again) would pay
 * the route look-up (docs/BENCHMARKS.md, "What kernel mode's ruleset
 * costs"). A confirmed entry is one whose first packet this chain let
 * through; a dropped packet's unconfirmed entry dies with it, so every
 * packet of a refused connection is checked, dropped and counted again.
 * Established, related and confirmed first: a connection's later packets
 * pay two conntrack loads here and nothing more.
 */
static void emit_forward(FILE *f, const struct config *cfg)
{
	const char *wan = cfg->wan.name;

	fprintf(f, "\tchain forward {\n"
		   "\t\ttype filter hook forward priority filter; policy accept;\n");
	emit_mss(f, cfg);
	fprintf(f, "\t\tct state established,related accept\n"
		   "\t\tct status confirmed accept\n");
	if (cfg->ipv6_inbound == IPV6_INBOUND_OPEN)
		fprintf(f, "\t\tiifname \"%s\" meta nfproto ipv6 accept\n", wan);
	fprintf(f, "\t\tct state invalid drop\n");
	if (cfg->source_feasible) {
		fprintf(f, "\t\tiifname ");
		emit_lan_set(f, cfg);
		fprintf(f, " fib saddr oifname != ");
		emit_lan_set(f, cfg);
		fprintf(f, " drop\n"
			   "\t\tiifname != \"%s\" iifname != ", wan);
		emit_lan_set(f, cfg);
	} else {
		fprintf(f, "\t\tiifname != \"%s\"", wan);
	}
	fprintf(f, " fib saddr . iif oif missing drop\n"
		   "\t\tiifname \"%s\" ct status dnat accept\n", wan);
	if (cfg->ipv6_inbound == IPV6_INBOUND_STATEFUL)
		fprintf(f, "\t\tiifname \"%s\" icmpv6 type echo-request accept\n",
			wan);
	fprintf(f, "\t\tiifname \"%s\" drop\n"
		   "\t}\n", wan);
}

/*
 * Give every rule of the transaction CMDS a counter, for `xnat stats` in
 * kernel mode: " counter" goes before the rule's statement (dnat, snat,
 * masquerade, offload's ct mark set, MSS clamping's option set, or the
 * final accept/drop verdict), where nft wants it.
 * Frees CMDS; the new text, or NULL on ENOMEM.
 */
static char *with_counters(char *cmds)
{
	static const char *const stmts[] = { " ct timeout set " /* DNS */,
					     " dnat ip to ", " snat ip to ",
					     " masquerade",
					     " tcp option maxseg size set ",
					     " ct mark set " /* offload */ };
	char *out = NULL, *line, *next, *at;
	size_t len;
	FILE *f;

	f = cmds ? open_memstream(&out, &len) : NULL;
	for (line = f ? cmds : NULL; line && *line; line = next) {
		next = line + strcspn(line, "\n");
		next += *next == '\n';
		at = NULL;
		/* Rules sit two tabs deep; chain headers ("type ...") too. */
		if (!strncmp(line, "\t\t", 2) && strncmp(line, "\t\ttype ", 7)) {
			for (size_t i = 0; !at && i < sizeof(stmts) / sizeof(*stmts); i++) {
				at = strstr(line, stmts[i]);
				if (at >= next)
					at = NULL;
			}
			if (!at)
				for (at = next - 1; at > line && *at != ' '; at--)
					;
		}
		if (at && at > line)
			fprintf(f, "%.*s counter%.*s", (int)(at - line), line,
				(int)(next - at), at);
		else
			fprintf(f, "%.*s", (int)(next - line), line);
	}
	free(cmds);
	if (f && fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* The transaction for CFG in a malloc'ed string, NULL on ENOMEM. */
static char *ruleset(const struct config *cfg, const uint16_t knat[2])
{
	char *buf = NULL;
	size_t len;
	FILE *f;

	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, NFT_DELETE_TABLE "table inet xnat {\n");
	emit_antispoof(f, cfg);
	emit_prerouting(f, cfg);
	emit_postrouting(f, cfg, knat);
	emit_forward(f, cfg);
	if (cfg->mode == MODE_OFFLOAD)
		offload_emit_nft(f, cfg);
	fprintf(f, "}\n");
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return with_counters(buf);
}

char *kernel_ruleset(const struct config *cfg, char err[CONFIG_ERR_LEN])
{
	uint16_t local[2] = { 0 }, knat[2] = { 0 };
	char *cmds;

	if (cfg->mode == MODE_XDP && config_kernel_ranges(cfg, local, knat, err))
		return NULL;
	cmds = ruleset(cfg, knat);
	if (!cmds)
		snprintf(err, CONFIG_ERR_LEN, "nft ruleset: %s", strerror(ENOMEM));
	return cmds;
}

int kernel_ruleset_check(const char *cmds, char err[CONFIG_ERR_LEN])
{
	return nft_exec(cmds, true, err);
}

static void add_sysctl(struct kernel_setup *k, const char *path,
		       const char *value, int optional)
{
	struct kernel_sysctl *s = &k->sysctls[k->n_sysctls++];

	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->value, sizeof(s->value), "%s", value);
	s->optional = optional;
}

/*
 * The same [timeouts] for the kernel's conntrack, so kernel mode (and the
 * flows xdp mode passes up) age like XDP flows. RFC 5382's "transitory" is
 * every TCP state but established and the 10 s after a RST. Per netns; the
 * files exist once conntrack runs in the netns, which the NAT table
 * guarantees, but a kernel without them is not an error.
 */
static void add_ct_timeout(struct kernel_setup *k, const char *name, uint32_t secs)
{
	char path[96], val[16];

	snprintf(path, sizeof(path), "net/netfilter/nf_conntrack_%s", name);
	snprintf(val, sizeof(val), "%u", secs);
	add_sysctl(k, path, val, 1);
}

static void add_ct_timeouts(const struct config *cfg, struct kernel_setup *k)
{
	static const char *const transitory[] = {
		"tcp_timeout_syn_sent", "tcp_timeout_syn_recv",
		"tcp_timeout_fin_wait", "tcp_timeout_close_wait",
		"tcp_timeout_last_ack", "tcp_timeout_time_wait",
	};

	add_ct_timeout(k, "tcp_timeout_established", cfg->timeout_tcp_est);
	for (size_t i = 0; i < sizeof(transitory) / sizeof(*transitory); i++)
		add_ct_timeout(k, transitory[i], cfg->timeout_tcp_trans);
	add_ct_timeout(k, "udp_timeout", cfg->timeout_udp);
	add_ct_timeout(k, "udp_timeout_stream", cfg->timeout_udp);
	add_ct_timeout(k, "icmp_timeout", cfg->timeout_icmp);
}

int kernel_plan(const struct config *cfg, struct kernel_setup *k,
		char err[CONFIG_ERR_LEN])
{
	uint16_t local[2] = { 0 }, knat[2] = { 0 };
	char range[16];

	if (cfg->mode == MODE_XDP &&
	    config_kernel_ranges(cfg, local, knat, err))
		return -EINVAL;
	k->nft = ruleset(cfg, knat);
	if (!k->nft) {
		snprintf(err, CONFIG_ERR_LEN, "nft ruleset: %s",
			 strerror(ENOMEM));
		return -ENOMEM;
	}
	k->n_sysctls = 0;
	add_ct_timeouts(cfg, k);
	/* In xdp mode a stray TCP segment of an XDP flow that has expired
	 * must not be picked up mid-stream by conntrack and NATed with a
	 * kernel port (a stale mapping resurrected with the wrong port):
	 * only a SYN opens a connection, in both paths. */
	if (cfg->mode == MODE_XDP)
		add_ct_timeout(k, "tcp_loose", 0);
	/* Offload mode: conntrack does not see the packets XDP carries, so
	 * its TCP window is stale when a flow comes back (FIN, RST, a
	 * packet the fast path cannot take). nf_flow_table marks such
	 * connections "be liberal"; BPF may not write that flag, so the
	 * whole namespace is liberal (only out-of-window RSTs are invalid). */
	if (cfg->mode == MODE_OFFLOAD)
		add_ct_timeout(k, "tcp_be_liberal", 1);
	/* The local port range before forwarding: the router never forwards
	 * before its port split is in place. */
	if (cfg->mode == MODE_XDP) {
		snprintf(range, sizeof(range), "%u %u", local[0], local[1]);
		add_sysctl(k, SYSCTL_LOCAL_PORTS, range, 0);
	}
	/* A kernel booted with ipv6.disable=1 has no IPv6 to forward. */
	add_sysctl(k, SYSCTL_IP6_FORWARD, "1", 1);
	add_sysctl(k, SYSCTL_IP_FORWARD, "1", 0);
	return 0;
}

int kernel_nft_apply(const char *ruleset, char err[CONFIG_ERR_LEN])
{
	pr_debug("nft transaction:\n%s", ruleset);
	return nft_run(ruleset, err);
}

int kernel_nft_remove(char err[CONFIG_ERR_LEN])
{
	return nft_run(NFT_DELETE_TABLE, err);
}

/* "list table" fails with ENOENT when the table is gone. */
int kernel_table_present(void)
{
	char err[CONFIG_ERR_LEN];

	return nft_run("list table inet xnat", err) == 0;
}
