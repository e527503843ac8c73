// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat status: the mode, the ports with how the program is attached to
 * each (through libxdp's dispatcher or directly), how full the flow table
 * is, and whether the router is whole: a missing nft table makes the exit
 * status EXIT_DEGRADED; frames lost to failed redirects are warned about.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cmd.h"
#include "config.h"
#include "json.h"
#include "kernel_mode.h"
#include "loader.h"
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

/* Frames XDP meant to forward but the egress port refused (a veth whose
 * peer has neither XDP nor GRO, a device without ndo_xdp_xmit). */
static unsigned long long redirect_drops(void)
{
	int ncpu = libbpf_num_possible_cpus(), fd = loader_map_fd(MAP_STATS);
	__u32 key = XNAT_DROP_REDIRECT;
	unsigned long long sum = 0;
	struct xnat_counter *c;

	if (fd < 0 || ncpu <= 0)
		goto out;
	c = calloc(ncpu, sizeof(*c));
	if (c && !bpf_map_lookup_elem(fd, &key, c))
		for (int i = 0; i < ncpu; i++)
			sum += c[i].packets;
	free(c);
out:
	if (fd >= 0)
		close(fd);
	return sum;
}

struct health {
	int nft_table;                 /* table inet xnat is there */
	unsigned long long drop_redirect;
};

/* Up, but not whole: what `xnat run` repairs or the operator must. */
static int health_check(const struct xnat_state *st, struct health *h)
{
	h->nft_table = kernel_table_present();
	h->drop_redirect = st->mode == MODE_XDP ? redirect_drops() : 0;
	if (!h->nft_table)
		fprintf(stderr, "xnat: warning: nft table inet xnat is missing "
			"(nft flush ruleset?): passed-up traffic is not NATed; "
			"run xnat up again (xnat run restores it)\n");
	if (h->drop_redirect)
		fprintf(stderr, "xnat: warning: %llu frames lost: an egress "
			"port refused what XDP forwarded to it (drop_redirect; "
			"a veth needs XDP or GRO on its peer)\n",
			h->drop_redirect);
	return h->nft_table ? EXIT_OK : EXIT_DEGRADED;
}

static const char *role_of(const char *name, const struct config *cfg)
{
	return strcmp(name, cfg->wan.name) ? "lan" : "wan";
}

int cmd_status(const struct opts *o)
{
	struct table_fill fill = {};
	struct health health = {};
	struct xnat_state st;
	struct config cfg;
	char err[CONFIG_ERR_LEN];
	int i, up, rc = EXIT_OK;

	up = !state_load(&st);
	config_init(&cfg);
	/* The config names the WAN; without it every port shows as LAN. */
	if (up && config_parse(&cfg, st.config_path, err))
		cfg.wan.name[0] = 0;
	if (up && st.mode == MODE_XDP)
		flow_table_fill(&fill);
	if (up)
		rc = health_check(&st, &health);

	if (o->json) {
		json_obj_begin(NULL);
		json_bool("up", up);
		if (up) {
			json_str("mode", st.mode ? "kernel" : "xdp");
			json_str("config", st.config_path);
			json_bool("nft_table", health.nft_table);
			json_u64("drop_redirect", health.drop_redirect);
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
		return rc;
	}

	if (!up) {
		printf("xnat is not up in this network namespace\n");
		return EXIT_OK;
	}
	printf("mode:    %s\nconfig:  %s\nnft:     table inet xnat %s\n",
	       st.mode ? "kernel" : "xdp", st.config_path,
	       health.nft_table ? "present" : "MISSING");
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
	return rc;
}
