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
#include <bpf/bpf.h>
#include "cmd.h"
#include "config.h"
#include "json.h"
#include "loader.h"
#include "pins.h"
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
	int fd = pins_map_open(MAP_FLOWS);

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

static const char *role_of(const char *name, const struct config *cfg)
{
	return strcmp(name, cfg->wan.name) ? "lan" : "wan";
}

int cmd_status(const struct opts *o)
{
	struct table_fill fill = {};
	struct xnat_state st;
	struct config cfg;
	char err[CONFIG_ERR_LEN];
	int i, up;

	up = !state_load(&st);
	config_init(&cfg);
	/* The config names the WAN; without it every port shows as LAN. */
	if (up && config_parse(&cfg, st.config_path, err))
		cfg.wan.name[0] = 0;
	if (up && st.mode == MODE_XDP)
		flow_table_fill(&fill);

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
		}
		json_obj_end();
		json_done();
		return up ? EXIT_OK : EXIT_NOT_UP;
	}

	if (!up) {
		printf("xnat is not up in this network namespace\n");
		return EXIT_NOT_UP;
	}
	printf("mode:    %s\nconfig:  %s\n", st.mode ? "kernel" : "xdp",
	       st.config_path);
	if (st.mode == MODE_XDP) {
		printf("flows:   %lu of %lu entries (two per connection)\n",
		       fill.entries, fill.max);
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
