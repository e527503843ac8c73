// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat status: is xnat up here, and how: the mode and config, since when,
 * the NAT address and port ranges in use, where the maps are pinned, the
 * health of the nftables table (there, and as the config loads it, or
 * removed or changed behind xnat's back), the ports with how the program is
 * attached to each (through libxdp's dispatcher or directly), and how full
 * the flow table is. Exit 3 when xnat is not up in this network namespace.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "config.h"
#include "json.h"
#include "kernel_mode.h"
#include "offload.h"
#include "loader.h"
#include "nft_table.h"
#include "memory.h"
#include "percpu.h"
#include "pins.h"
#include "state.h"

#define MAX_WAN_ADDRS 8

struct table_fill {
	unsigned long entries;
	unsigned long max;
};

enum nft_health { NFT_OK, NFT_MISSING, NFT_MODIFIED, NFT_UNKNOWN };

static const char *const nft_health_names[] = {
	[NFT_OK] = "ok", [NFT_MISSING] = "missing",
	[NFT_MODIFIED] = "modified", [NFT_UNKNOWN] = "unknown",
};

/* Everything status reports, gathered before printing. */
struct status {
	struct xnat_state st;
	struct config cfg;
	bool cfg_ok;            /* the config parsed and resolved */
	/* Its LAN ports that are gone (deleted, an adapter unplugged), which
	 * the router runs without; cfg is resolved without them. */
	struct config_gone gone;
	bool config_changed;    /* the file differs from what was loaded */
	char cfg_err[CONFIG_ERR_LEN];
	struct table_fill fill;
	/* xdp mode's expiry queue (bpf/sweep.h): references queued (live
	 * connections, and ended ones the sweeper has yet to skip), its
	 * capacity, the connections the sweeper ended. have_sweep: read. */
	bool have_sweep;
	unsigned long long sweep_queued, sweep_max, swept;
	/* Offload mode's table filter (bpf/offload_filter.h). have_filter:
	 * read. */
	bool have_filter;
	struct offloaded_epoch filter;
	char nat_addr[INET_ADDRSTRLEN];
	int n_wan_addrs;
	char wan_addrs[MAX_WAN_ADDRS][INET_ADDRSTRLEN];
	uint16_t xdp_ports[2];  /* from the XDP program's config map */
	uint16_t local[2], knat[2];
	bool have_kernel_ranges;
	enum nft_health nft;
	char nft_detail[CONFIG_ERR_LEN + 64];
	/* Kernel memory of the pinned maps (fdinfo memlock). */
	unsigned long long map_bytes;
	/* External ports in use per pool address: mappings (a port of
	 * their own) and endpoint-dependent flows (a port towards one
	 * remote each). */
	int n_addrs;
	char addrs[XNAT_MAX_POOL][INET_ADDRSTRLEN];
	unsigned long mappings[XNAT_MAX_POOL];
	unsigned long edm_flows[XNAT_MAX_POOL];
};

struct fill_walk {
	struct table_fill *t;
	unsigned long *edm;
};

static int fill_count(const void *key, const void *value, void *ctx)
{
	const struct flow_value *v = value;
	struct fill_walk *w = ctx;

	w->t->entries++;
	if (w->edm && v->dir == FLOW_DIR_ORIG && v->edm != FLOW_EDM_NONE)
		w->edm[v->addr_idx]++; /* a __u8: within XNAT_MAX_POOL */
	return 0;
}

/* The flow table's fill; with EDM (xdp mode), also the endpoint-dependent
 * flows per pool address (one ORIG entry each: their ports are held by
 * their reply entries, bpf/slowpath.h edm_claim()). */
static int flow_table_fill(struct table_fill *t, unsigned long *edm)
{
	struct fill_walk w = { .t = t, .edm = edm };
	__u32 max = 0;
	long n;

	t->entries = 0;
	n = pins_map_walk(MAP_FLOWS, sizeof(struct flow_key),
			  sizeof(struct flow_value), &max, fill_count, &w);
	if (max)
		t->max = max;
	return n < 0 ? (int)n : 0;
}

/* The sweeper's queue: its fill from the count the data path keeps in
 * xnat_sweep (bpf/map_sweep.h struct flow_sweep), its capacity from the
 * queue map. Missing under a data path from before the sweeper. */
static void sweep_fill(struct status *s)
{
	struct {
		struct bpf_timer timer;
		__u64 queued;
		__u64 swept;
	} v;
	long queue_max = pins_map_max_entries(MAP_EXPIRY);

	if (queue_max >= 0 &&
	    !pins_map_read_first(MAP_SWEEP, &v, sizeof(v))) {
		s->have_sweep = true;
		s->sweep_queued = v.queued;
		s->sweep_max = queue_max;
		s->swept = v.swept;
	}
}

/* Offload mode's table filter: missing under a data path from before it. */
static void table_filter_read(struct status *s)
{
	s->have_filter = !pins_map_read_first(MAP_OFFLOADED_EPOCH, &s->filter,
					      sizeof(s->filter));
}

static const char *role_of(const char *name, const struct config *cfg)
{
	return strcmp(name, cfg->wan.name) ? "lan" : "wan";
}

static const char *mode_name(int mode)
{
	return config_mode_name(mode);
}

/* The IPv4 addresses the WAN has now. */
static void wan_addresses(struct status *s)
{
	struct ifaddrs *ifas, *ifa;

	if (getifaddrs(&ifas))
		return;
	for (ifa = ifas; ifa && s->n_wan_addrs < MAX_WAN_ADDRS; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
		    strcmp(ifa->ifa_name, s->cfg.wan.name))
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr,
			  s->wan_addrs[s->n_wan_addrs++], INET_ADDRSTRLEN);
	}
	freeifaddrs(ifas);
}

/* The NAT address in use: what the XDP program has in its config map;
 * in kernel mode the fixed one, or masquerade's (the WAN's first). */
static void nat_address(struct status *s)
{
	struct xnat_config xc;

	if (s->st.mode == MODE_XDP) {
		if (!pins_map_read_first(MAP_CONFIG, &xc, sizeof(xc))) {
			if (xc.nat_addr)
				inet_ntop(AF_INET, &xc.nat_addr, s->nat_addr,
					  sizeof(s->nat_addr));
			s->xdp_ports[0] = xc.port_min;
			s->xdp_ports[1] = xc.port_max;
		}
		return;
	}
	if (s->cfg_ok && s->cfg.nat_addr)
		inet_ntop(AF_INET, &s->cfg.nat_addr, s->nat_addr, sizeof(s->nat_addr));
}

/*
 * Is the table there, and is it the one the running config loads? The
 * expected table is loaded in a scratch network namespace and listed by
 * nft, so both sides are in nft's own form. When the config file was
 * edited since it was loaded, it no longer says what was loaded.
 */
static void nft_health(struct status *s)
{
	const char *ports[CONFIG_MAX_LAN + 1];
	char *actual = NULL, *expected = NULL, *cmds;
	int n_ports = 0;
	char err[CONFIG_ERR_LEN], list[CONFIG_GONE_LEN];
	int ret;

	ret = nft_table_list(true, &actual);
	if (ret == -ENOENT) {
		s->nft = NFT_MISSING;
		snprintf(s->nft_detail, sizeof(s->nft_detail),
			 "table inet xnat is gone (nft flush ruleset?); xnat up puts it back");
		return;
	}
	s->nft = NFT_UNKNOWN;
	if (ret) {
		snprintf(s->nft_detail, sizeof(s->nft_detail),
			 "cannot list table inet xnat: %s", strerror(-ret));
		return;
	}
	if (s->config_changed) {
		snprintf(s->nft_detail, sizeof(s->nft_detail),
			 "%s changed since it was loaded; not compared",
			 s->st.config_path);
		goto out;
	}
	/* Loaded with the port, refreshed without it by `xnat run`: either
	 * may be there. */
	if (s->gone.n) {
		snprintf(s->nft_detail, sizeof(s->nft_detail),
			 "not compared: %s gone", config_gone_list(&s->gone, list));
		goto out;
	}
	if (!s->cfg_ok) {
		snprintf(s->nft_detail, sizeof(s->nft_detail), "not compared: %s",
			 s->cfg_err);
		goto out;
	}
	cmds = kernel_ruleset(&s->cfg, err);
	if (!cmds) {
		snprintf(s->nft_detail, sizeof(s->nft_detail), "not compared: %s", err);
		goto out;
	}
	/* Only offload's mark rules name ports by index (iif, oif), which
	 * the scratch namespace needs interfaces of those names for. */
	if (s->cfg.mode == MODE_OFFLOAD)
		for (; n_ports < config_n_ports(&s->cfg); n_ports++)
			ports[n_ports] = config_port_name(&s->cfg, n_ports);
	ret = nft_table_expected(cmds, ports, n_ports, &expected);
	free(cmds);
	if (ret) {
		snprintf(s->nft_detail, sizeof(s->nft_detail),
			 "not compared: cannot load the expected table in a scratch namespace: %s",
			 strerror(-ret));
		goto out;
	}
	if (!strcmp(actual, expected)) {
		s->nft = NFT_OK;
		snprintf(s->nft_detail, sizeof(s->nft_detail), "as the config loads it");
	} else {
		s->nft = NFT_MODIFIED;
		snprintf(s->nft_detail, sizeof(s->nft_detail),
			 "differs from what the config loads (changed by hand, or the WAN address changed); xnat up puts it back");
	}
out:
	free(actual);
	free(expected);
}

static int port_count(const void *key, const void *value, void *ctx)
{
	const struct nat_port_key *k = key;
	unsigned long *count = ctx;

	count[k->addr_idx]++; /* a __u8: within XNAT_MAX_POOL */
	return 0;
}

/* Ports in use per pool address, from the port map (the endpoint-
 * dependent ones come from the flow table, flow_table_fill()). */
static void addr_use(struct status *s)
{
	int i;

	s->n_addrs = s->cfg.n_pool > 1 ? s->cfg.n_pool : 1;
	for (i = 0; i < s->n_addrs; i++)
		if (s->cfg.n_pool > 1)
			inet_ntop(AF_INET, &s->cfg.pool[i], s->addrs[i],
				  INET_ADDRSTRLEN);
		else
			snprintf(s->addrs[i], INET_ADDRSTRLEN, "%s", s->nat_addr);
	pins_map_walk(MAP_PORTS, sizeof(struct nat_port_key),
		      sizeof(struct nat_endpoint), NULL, port_count, s->mappings);
}

static void gather(struct status *s)
{
	unsigned long long hash;
	char err[CONFIG_ERR_LEN];

	hash = state_file_hash(s->st.config_path);
	s->config_changed = s->st.config_hash && hash != s->st.config_hash;
	config_init(&s->cfg);
	/* The config names the WAN; without it every port shows as LAN. */
	if (config_parse(&s->cfg, s->st.config_path, s->cfg_err)) {
		s->cfg.wan.name[0] = 0;
	} else {
		/* Without its LAN ports that are gone, the config as loaded
		 * is what the router runs (cmd_up.c, cmd_run.c); an edited
		 * file does not say what runs: its ports may never have
		 * been. */
		s->cfg_ok = s->config_changed ?
			    !config_resolve(&s->cfg, s->cfg_err) :
			    !config_resolve_running(&s->cfg, &s->gone,
						    s->cfg_err);
		/* The kernel's ranges follow from the loaded config only. */
		if (s->cfg.mode == MODE_XDP && !s->config_changed &&
		    !config_kernel_ranges(&s->cfg, s->local, s->knat, err))
			s->have_kernel_ranges = true;
	}
	if (mode_runs_xdp(s->st.mode))
		flow_table_fill(&s->fill, s->st.mode == MODE_XDP ?
					 s->edm_flows : NULL);
	if (s->cfg.wan.name[0])
		wan_addresses(s);
	nat_address(s);
	nft_health(s);
	if (s->st.mode == MODE_XDP) {
		mem_pinned_bytes(pins_dir(), &s->map_bytes);
		addr_use(s);
		sweep_fill(s);
	}
	if (s->st.mode == MODE_OFFLOAD)
		table_filter_read(s);
}

static void json_range(const char *key, unsigned int lo, unsigned int hi)
{
	json_obj_begin(key);
	json_u64("min", lo);
	json_u64("max", hi);
	json_obj_end();
}

/* The NAT address, the port ranges and the nftables table's health. */
static void json_nat(const struct status *s)
{
	int i;

	json_obj_begin("nat");
	json_str("address", s->nat_addr);
	json_bool("auto", s->cfg.nat_addr_auto);
	json_arr_begin("wan_addresses");
	for (i = 0; i < s->n_wan_addrs; i++)
		json_str(NULL, s->wan_addrs[i]);
	json_arr_end();
	json_obj_end();

	json_obj_begin("ports");
	if (s->st.mode == MODE_XDP) {
		json_range("xdp", s->xdp_ports[0], s->xdp_ports[1]);
		if (s->have_kernel_ranges) {
			json_range("kernel_nat", s->knat[0], s->knat[1]);
			json_range("local", s->local[0], s->local[1]);
		}
	}
	json_obj_end();

	json_obj_begin("nft");
	json_str("table", "inet xnat");
	json_str("state", nft_health_names[s->nft]);
	json_str("detail", s->nft_detail);
	json_obj_end();
}

/* Each port: its role and how the program is attached to it. */
static void json_interfaces(const struct status *s)
{
	const struct xnat_state *st = &s->st;

	json_arr_begin("interfaces");
	for (int i = 0; i < st->n_ifaces; i++) {
		struct attach_info ai = {};
		int ifindex = if_nametoindex(st->ifaces[i]);

		json_obj_begin(NULL);
		json_str("name", st->ifaces[i]);
		json_u64("ifindex", ifindex);
		json_str("role", role_of(st->ifaces[i], &s->cfg));
		if (mode_runs_xdp(st->mode) && !loader_attach_info(ifindex, &ai)) {
			json_str("attach", ai.mode);
			json_str("method", ai.method);
			json_u64("prog_id", ai.prog_id);
		}
		/* Offload mode keeps flows out of shaped ports in the kernel
		 * (unless [offload] shaped = offload): say which ports. */
		if (st->mode == MODE_OFFLOAD) {
			char kind[16];

			json_bool("shaped", offload_port_shaped(ifindex, kind) > 0);
			json_str("qdisc", kind);
		}
		json_obj_end();
	}
	json_arr_end();
}

/* The flow table's fill, the maps' memory and the ports per address. */
static void json_tables(const struct status *s)
{
	/* A connection takes two entries, one per direction. */
	json_obj_begin("flows");
	json_u64("entries", s->fill.entries);
	json_u64("max", s->fill.max);
	json_u64("max_connections", s->fill.max / 2);
	json_obj_end();
	if (s->have_sweep) {
		json_obj_begin("sweep");
		json_u64("queued", s->sweep_queued);
		json_u64("max", s->sweep_max);
		json_u64("ended", s->swept);
		json_obj_end();
	}
	if (s->st.mode == MODE_OFFLOAD && s->have_filter) {
		json_obj_begin("table_filter");
		json_u64("bits", OFFLOADED_BITS);
		json_u64("bits_set", s->filter.off ? 0 : s->filter.set);
		json_u64("epochs", s->filter.resets);
		json_u64("off_for_installs", s->filter.off);
		json_obj_end();
	}
	if (s->st.mode != MODE_XDP)
		return;
	/* The maps are preallocated whole; timers grow with use. */
	json_obj_begin("memory");
	json_u64("maps_bytes", s->map_bytes);
	json_u64("timers_bytes_max", mem_timers_bytes(s->fill.max / 2));
	json_obj_end();
	json_arr_begin("addresses");
	for (int i = 0; i < s->n_addrs; i++) {
		json_obj_begin(NULL);
		json_str("address", s->addrs[i]);
		json_u64("mappings", s->mappings[i]);
		json_u64("endpoint_dependent", s->edm_flows[i]);
		json_obj_end();
	}
	json_arr_end();
}

/* "ports_gone": the config's LAN ports the router runs without. */
static void json_ports_gone(const struct config_gone *gone)
{
	int i;

	json_arr_begin("ports_gone");
	for (i = 0; i < gone->n; i++)
		json_str(NULL, gone->name[i]);
	json_arr_end();
}

static void print_json(const struct status *s)
{
	const struct xnat_state *st = &s->st;
	long long now = time(NULL);

	json_obj_begin(NULL);
	json_bool("up", true);
	json_str("mode", mode_name(st->mode));
	json_str("config", st->config_path);
	json_bool("config_changed", s->config_changed);
	json_ports_gone(&s->gone);
	if (st->up_since) {
		json_i64("up_since", st->up_since);
		json_i64("uptime_s", now - st->up_since);
	}
	if (st->loaded_at)
		json_i64("loaded_at", st->loaded_at);
	if (mode_runs_xdp(st->mode))
		json_str("pin_dir", pins_dir());
	json_nat(s);
	json_interfaces(s);
	json_tables(s);
	json_obj_end();
	json_done();
}

/* "1d 2h 3m 4s", leading zero units left out. */
static void print_duration(long long secs)
{
	if (secs >= 86400)
		printf("%lldd ", secs / 86400);
	if (secs >= 3600)
		printf("%lldh ", secs / 3600 % 24);
	if (secs >= 60)
		printf("%lldm ", secs / 60 % 60);
	printf("%llds", secs % 60);
}

static void print_time(long long t)
{
	char buf[32];
	time_t tt = t;
	struct tm tm;

	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", localtime_r(&tt, &tm));
	printf("%s", buf);
}

/* Offload mode's table filter (bpf/offload_filter.h). */
static void print_filter(const struct offloaded_epoch *f)
{
	if (f->off)
		printf("filter:  off for %u more installs: every packet looks "
		       "the flow table up (too many entries for its %u bits)\n",
		       f->off, OFFLOADED_BITS);
	else
		printf("filter:  %u of %u bits set, %u epochs begun: packets "
		       "of other keys skip the flow table's look-up\n",
		       f->set, OFFLOADED_BITS, f->resets);
}

/* Mode, config and since when. */
static void print_head(const struct status *s)
{
	const struct xnat_state *st = &s->st;
	char list[CONFIG_GONE_LEN];

	printf("mode:    %s\nconfig:  %s%s\n", mode_name(st->mode),
	       st->config_path,
	       s->config_changed ? " (changed since loaded: xnat up applies it)" : "");
	if (s->gone.n)
		printf("gone:    %s (deleted since: the router runs without %s)\n",
		       config_gone_list(&s->gone, list),
		       s->gone.n > 1 ? "them" : "it");
	if (st->up_since) {
		printf("up:      since ");
		print_time(st->up_since);
		printf(" (");
		print_duration(time(NULL) - st->up_since);
		printf(")");
		if (st->loaded_at && st->loaded_at != st->up_since) {
			printf(", last loaded ");
			print_time(st->loaded_at);
		}
		printf("\n");
	}
}

static void print_text(const struct status *s)
{
	const struct xnat_state *st = &s->st;
	int i;

	print_head(s);
	printf("nat:     %s", s->nat_addr[0] ? s->nat_addr : "-");
	if (!s->cfg.wan.name[0])
		printf(" (the config does not parse: %s)\n", s->cfg_err);
	else if (s->cfg.nat_addr_auto)
		printf(" (auto: %s has", s->cfg.wan.name);
	else
		printf(" (fixed; %s has", s->cfg.wan.name);
	for (i = 0; s->cfg.wan.name[0] && i < s->n_wan_addrs; i++)
		printf(" %s", s->wan_addrs[i]);
	if (s->cfg.wan.name[0])
		printf("%s)\n", s->n_wan_addrs ? "" : " no IPv4 address");
	if (st->mode == MODE_XDP) {
		printf("ports:   xdp %u-%u", s->xdp_ports[0], s->xdp_ports[1]);
		if (s->have_kernel_ranges)
			printf(", kernel NAT %u-%u, local sockets %u-%u",
			       s->knat[0], s->knat[1], s->local[0], s->local[1]);
		printf("\n");
	}
	if (mode_runs_xdp(st->mode))
		printf("pins:    %s\n", pins_dir());
	printf("nft:     table inet xnat %s: %s\n", nft_health_names[s->nft],
	       s->nft_detail);
	if (!mode_runs_xdp(st->mode))
		return;
	printf("flows:   %lu of %lu entries (two per connection)\n",
	       s->fill.entries, s->fill.max);
	if (s->have_sweep)
		printf("sweep:   %llu of %llu queued for expiry (full: new "
		       "connections go to the kernel, pass_table_full), %llu "
		       "ended\n", s->sweep_queued, s->sweep_max, s->swept);
	if (st->mode == MODE_OFFLOAD && s->have_filter)
		print_filter(&s->filter);
	printf("memory:  %llu MB of kernel memory in maps (preallocated), up to "
	       "%llu MB more in timers when full\n", s->map_bytes >> 20,
	       mem_timers_bytes(s->fill.max / 2) >> 20);
	for (i = 0; i < s->n_addrs; i++)
		printf("%s %-15s %lu ports mapped, %lu endpoint-dependent\n",
		       i ? "        " : "address:", s->addrs[i], s->mappings[i],
		       s->edm_flows[i]);
	printf("\n%-16s %-4s %-8s %-8s %s\n", "interface", "role", "attach",
	       "method", "prog id");
	for (i = 0; i < st->n_ifaces; i++) {
		struct attach_info ai = {};
		int ifindex = if_nametoindex(st->ifaces[i]);
		char kind[16];

		if (st->mode == MODE_OFFLOAD &&
		    offload_port_shaped(ifindex, kind) > 0)
			printf("%-16s shaped by its %s qdisc: flows leaving here %s\n",
			       st->ifaces[i], kind, s->cfg.offload_shaped ?
			       "are offloaded anyway ([offload] shaped)" :
			       "stay in the kernel");
		if (loader_attach_info(ifindex, &ai))
			printf("%-16s %-4s (no xnat program attached!)\n",
			       st->ifaces[i], role_of(st->ifaces[i], &s->cfg));
		else
			printf("%-16s %-4s %-8s %-8s %u\n", st->ifaces[i],
			       role_of(st->ifaces[i], &s->cfg), ai.mode,
			       ai.method, ai.prog_id);
	}
}

/*
 * Warnings on stderr for what makes the router less than whole: its nft
 * table removed (EXIT_DEGRADED; `xnat run` puts it back), frames an egress
 * port refused (drop_redirect: a veth whose peer has neither XDP nor GRO).
 */
static int health_warnings(const struct status *s)
{
	struct xnat_counter c = {};
	int fd = mode_runs_xdp(s->st.mode) ? pins_map_open(MAP_STATS) : -1;

	if (fd >= 0 && !percpu_counter_sum(fd, XNAT_DROP_REDIRECT, &c) &&
	    c.packets)
		fprintf(stderr, "xnat: warning: %llu frames lost because an "
			"egress port refused them (drop_redirect; a veth needs "
			"XDP or GRO on its peer)\n", (unsigned long long)c.packets);
	if (fd >= 0)
		close(fd);
	if (s->nft != NFT_MISSING)
		return EXIT_OK;
	fprintf(stderr, "xnat: warning: nft table inet xnat is missing: "
		"traffic passed to the kernel is not NATed nor filtered\n");
	return EXIT_DEGRADED;
}

int cmd_status(const struct opts *o)
{
	struct status *s = calloc(1, sizeof(*s));
	int err, rc;

	if (!s)
		return fail(o, EXIT_SYSTEM, "status: %s", strerror(ENOMEM));
	err = state_load(&s->st);
	if (err) {
		free(s);
		if (err != -ENOENT)
			return fail(o, EXIT_SYSTEM, "failed to read state in %s: %s",
				    state_run_dir(), strerror(-err));
		if (o->json) {
			json_obj_begin(NULL);
			json_bool("up", false);
			json_obj_end();
			json_done();
		} else {
			printf("xnat is not up in this network namespace\n");
		}
		return EXIT_NOT_UP;
	}
	gather(s);
	if (o->json)
		print_json(s);
	else
		print_text(s);
	rc = health_warnings(s);
	free(s);
	return rc;
}
