// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmark's counting sink; see sink.h for the contract and
 * bpf/bench/xnat_sink.bpf.c for the program.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xnat_common.h"
#include "xnat_sink.skel.h"
#include "log.h"
#include "percpu.h"
#include "sink.h"
#include "xdp_link.h"

struct sink {
	struct xnat_sink_bpf *skel;
	int link_fd;
	const char *mode;
};

int sink_open(struct sink **sp, int ifindex)
{
	return sink_open_port(sp, ifindex, 0);
}

int sink_open_port(struct sink **sp, int ifindex, uint16_t dst_port)
{
	struct sink *s;
	int prog_fd, err;

	*sp = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->skel = xnat_sink_bpf__open();
	if (!s->skel) {
		err = pr_warn_errno("Failed to open the sink's BPF object");
		goto err_free;
	}
	s->skel->rodata->dst_port = htons(dst_port);
	err = xnat_sink_bpf__load(s->skel);
	if (err) {
		pr_warn("Failed to load the sink's XDP program: %s\n",
			strerror(-err));
		goto err_destroy;
	}
	prog_fd = bpf_program__fd(s->skel->progs.xdp_sink);
	s->mode = "native";
	s->link_fd = xdp_link(prog_fd, ifindex, XDP_FLAGS_DRV_MODE);
	if (s->link_fd == -EBUSY || s->link_fd == -EEXIST) {
		err = s->link_fd;
		pr_warn("Failed to attach the sink to ifindex %d: %s (another XDP "
			"program is attached)\n", ifindex, strerror(-err));
		goto err_destroy;
	}
	if (s->link_fd < 0) {
		pr_debug("Sink: native XDP on ifindex %d failed (%s); using "
			 "generic XDP\n", ifindex, strerror(-s->link_fd));
		s->mode = "generic";
		s->link_fd = xdp_link(prog_fd, ifindex, XDP_FLAGS_SKB_MODE);
	}
	if (s->link_fd < 0) {
		err = s->link_fd;
		pr_warn("Failed to attach the sink to ifindex %d (native or "
			"generic XDP): %s\n", ifindex, strerror(-err));
		goto err_destroy;
	}
	*sp = s;
	return 0;

err_destroy:
	xnat_sink_bpf__destroy(s->skel);
err_free:
	free(s);
	return err;
}

/* Counter SLOT of the sink (xnat_sink.bpf.c: 0 this trial's frames, 1
 * late ones), summed over CPUs. */
static int sink_counter(struct sink *s, __u32 slot, struct xnat_counter *sum)
{
	int err = percpu_counter_sum(bpf_map__fd(s->skel->maps.sink_stats),
				     slot, sum);

	if (err)
		pr_warn("Sink: reading its counters failed: %s\n", strerror(-err));
	return err;
}

int sink_read(struct sink *s, uint64_t *packets, uint64_t *bytes)
{
	struct xnat_counter sum;
	int err = sink_counter(s, 0, &sum);

	*packets = sum.packets;
	*bytes = sum.bytes;
	return err;
}

void sink_stamp(struct sink *s, uint16_t stamp)
{
	s->skel->bss->trial_stamp = stamp;
}

int sink_read_late(struct sink *s, uint64_t *packets)
{
	struct xnat_counter sum;
	int err = sink_counter(s, 1, &sum);

	*packets = sum.packets;
	return err;
}

void sink_close(struct sink *s)
{
	if (!s)
		return;
	close(s->link_fd);
	xnat_sink_bpf__destroy(s->skel);
	free(s);
}

const char *sink_mode(const struct sink *s)
{
	return s->mode;
}

int sink_prog_fd(const struct sink *s)
{
	return bpf_program__fd(s->skel->progs.xdp_sink);
}
