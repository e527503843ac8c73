// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat status: the mode, the ports with how the program is attached to
 * each (through libxdp's dispatcher or directly), and how full the flow
 * table is.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "config.h"
#include "json.h"
#include "loader.h"
#include "memory.h"
#include "state.h"

struct table_fill {
	unsigned long entries;
	unsigned long max;
};

static int flow_table_fill(struct table_fill *t)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct flow_key key, next;
	void *prev = NULL;
	int fd = loader_map_fd(MAP_FLOWS);

	if (fd < 0)
		return fd;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		t->max = info.max_entries;
	t->entries = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		t->entries++;
		key = next;
		prev = &key;
	}
	close(fd);
	return 0;
}

/* External ports in use per pool address: mappings (a port of their
 * own) and endpoint-dependent bindings (a port towards one remote). */
struct addr_use {
	unsigned long mappings[XNAT_MAX_POOL];
	unsigned long bindings[XNAT_MAX_POOL];
};

static void addr_use_count(struct addr_use *u)
{
	struct nat_port_key pk, pnext;
	struct nat_edm_key ek, enext;
	void *prev = NULL;
	int fd;

	memset(u, 0, sizeof(*u));
	fd = loader_map_fd(MAP_PORTS);
	if (fd >= 0) {
		while (!bpf_map_get_next_key(fd, prev, &pnext)) {
			pk = pnext;
			prev = &pk;
			u->mappings[pk.addr_idx]++;
		}
		close(fd);
	}
	prev = NULL;
	fd = loader_map_fd(MAP_EDM);
	if (fd >= 0) {
		while (!bpf_map_get_next_key(fd, prev, &enext)) {
			ek = enext;
			prev = &ek;
			u->bindings[ek.addr_idx]++;
		}
		close(fd);
	}
}

/* The external address of pool index I as the data path has it. */
static const char *pool_addr_str(const struct config *cfg, int i, char *buf)
{
	struct xnat_config c = {};
	__u32 zero = 0;
	__be32 a = cfg->n_pool > i ? cfg->pool[i] : 0;
	int fd;

	if (!a && i == 0) { /* address = auto: as the router resolved it */
		fd = loader_map_fd(MAP_CONFIG);
		if (fd >= 0) {
			bpf_map_lookup_elem(fd, &zero, &c);
			close(fd);
		}
		a = c.nat_addr;
	}
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

static const char *role_of(const char *name, const struct config *cfg)
{
	return strcmp(name, cfg->wan.name) ? "lan" : "wan";
}

int cmd_status(const struct opts *o)
{
	struct table_fill fill = {};
	unsigned long long map_bytes = 0;
	static struct addr_use use;
	char abuf[INET_ADDRSTRLEN];
	int n_addr;
	struct xnat_state st;
	struct config cfg;
	char err[CONFIG_ERR_LEN];
	int i, up;

	up = !state_load(&st);
	config_init(&cfg);
	/* The config names the WAN; without it every port shows as LAN. */
	if (up && config_parse(&cfg, st.config_path, err))
		cfg.wan.name[0] = 0;
	if (up && st.mode == MODE_XDP) {
		flow_table_fill(&fill);
		mem_pinned_bytes(state_pin_dir(), &map_bytes);
		addr_use_count(&use);
	}
	n_addr = cfg.n_pool > 1 ? cfg.n_pool : 1;

	if (o->json) {
		json_obj_begin(NULL);
		json_bool("up", up);
		if (up) {
			json_str("mode", st.mode ? "kernel" : "xdp");
			json_str("config", st.config_path);
			json_arr_begin("interfaces");
			for (i = 0; i < st.n_ifaces; i++) {
				struct attach_info ai = {};
				int ifindex = if_nametoindex(st.ifaces[i]);

				json_obj_begin(NULL);
				json_str("name", st.ifaces[i]);
				json_u64("ifindex", ifindex);
				json_str("role", role_of(st.ifaces[i], &cfg));
				if (st.mode == MODE_XDP &&
				    !loader_attach_info(ifindex, &ai)) {
					json_str("attach", ai.mode);
					json_str("method", ai.method);
					json_u64("prog_id", ai.prog_id);
				}
				json_obj_end();
			}
			json_arr_end();
			/* A connection takes two entries, one per direction. */
			json_obj_begin("flows");
			json_u64("entries", fill.entries);
			json_u64("max", fill.max);
			json_u64("max_connections", fill.max / 2);
			json_obj_end();
			/* Kernel memory: the maps are preallocated whole; the
			 * timers grow with the connections. */
			json_obj_begin("memory");
			json_u64("maps_bytes", map_bytes);
			json_u64("timers_bytes_max",
				 mem_timers_bytes(fill.max / 2));
			json_obj_end();
			json_arr_begin("addresses");
			for (i = 0; st.mode == MODE_XDP && i < n_addr; i++) {
				json_obj_begin(NULL);
				json_str("address", pool_addr_str(&cfg, i, abuf));
				json_u64("mappings", use.mappings[i]);
				json_u64("endpoint_dependent", use.bindings[i]);
				json_obj_end();
			}
			json_arr_end();
		}
		json_obj_end();
		json_done();
		return EXIT_OK;
	}

	if (!up) {
		printf("xnat is not up in this network namespace\n");
		return EXIT_OK;
	}
	printf("mode:    %s\nconfig:  %s\n", st.mode ? "kernel" : "xdp",
	       st.config_path);
	if (st.mode == MODE_XDP) {
		printf("flows:   %lu of %lu entries (two per connection)\n",
		       fill.entries, fill.max);
		printf("memory:  %llu MB of kernel memory in maps (preallocated), "
		       "up to %llu MB more in timers when full\n", map_bytes >> 20,
		       mem_timers_bytes(fill.max / 2) >> 20);
		for (i = 0; i < n_addr; i++)
			printf("%s %-15s %lu ports mapped, %lu endpoint-dependent\n",
			       i ? "         " : "address:", pool_addr_str(&cfg, i, abuf),
			       use.mappings[i], use.bindings[i]);
		printf("\n%-16s %-4s %-8s %-8s %s\n", "interface", "role",
		       "attach", "method", "prog id");
	}
	for (i = 0; i < st.n_ifaces && st.mode == MODE_XDP; i++) {
		struct attach_info ai = {};
		int ifindex = if_nametoindex(st.ifaces[i]);

		if (loader_attach_info(ifindex, &ai))
			printf("%-16s %-4s (no xnat program attached!)\n",
			       st.ifaces[i], role_of(st.ifaces[i], &cfg));
		else
			printf("%-16s %-4s %-8s %-8s %u\n", st.ifaces[i],
			       role_of(st.ifaces[i], &cfg), ai.mode, ai.method,
			       ai.prog_id);
	}
	return EXIT_OK;
}
