/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the offload mode unit tests (test_offload.c, test_offload_tcp.c)
 * share: the config, the kernel's conntrack entries they insert and read
 * with conntrack(8) in the fixture's namespace, the packets of one TCP
 * connection in both directions, and the hand-back check.
 */
#ifndef XNAT_TEST_OFFLOAD_HARNESS_H
#define XNAT_TEST_OFFLOAD_HARNESS_H

#include <net/if.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include <unistd.h>
#include "fixture.h"

#define MARK_ORIG  0x40000000u
#define MARK_REPLY 0x80000000u
#define EXT_PORT   30001 /* the kernel's masquerade port in the entries */

static int offload_fd;

/* Offload mode on, with the config's mark bits. Every miss asks
 * conntrack (XNAT_OFFLOAD_F_LOOKUP_FIRST), so that each packet below
 * tests the decision on the entry it sees; first_miss_not_looked_up
 * tests the filter that otherwise lets first misses go up unasked. */
static inline bool offload_config(uint32_t orig, uint32_t reply, uint32_t tcp_est)
{
	struct xnat_offload_config oc = { .mark_orig = orig,
					  .mark_reply = reply,
					  .flags = XNAT_OFFLOAD_F_LOOKUP_FIRST };
	struct xnat_config c;
	__u32 zero = 0;

	if (bpf_map_update_elem(offload_fd, &zero, &oc, BPF_ANY)) {
		fprintf(stderr, "  xnat_offload update: %s\n", strerror(errno));
		return false;
	}
	if (!config_get(&c))
		return false;
	c.flags |= XNAT_F_OFFLOAD;
	c.timeout_tcp_est = tcp_est;
	return config_set(&c);
}

/* Clean slate: no flows, no conntrack entries, the default settings. */
static inline bool reset(void)
{
	flows_clear();
	sh("conntrack -F >/dev/null 2>&1");
	return offload_config(MARK_ORIG, MARK_REPLY, 7440);
}

/* The kernel's entry of PROTO LAN_HOST:SPORT -> WAN_GW:DPORT masqueraded
 * to NAT_ADDR:EXT_PORT, its timeout 100 s, with MARK; EXTRA: more
 * options of conntrack -I (the TCP state). */
static inline bool ct_insert(const char *proto, uint16_t sport,
			     uint16_t dport, const char *extra, uint32_t mark)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "conntrack -I -p %s -s %s -d %s --sport %u --dport %u "
		 "-r %s -q %s --reply-port-src %u --reply-port-dst %u "
		 "%s -t 100 -m 0x%x >/dev/null 2>&1",
		 proto, LAN_HOST, WAN_GW, sport, dport, WAN_GW, NAT_ADDR, dport,
		 EXT_PORT, extra, mark);
	return !sh(cmd);
}

/* The TCP entry of LAN_HOST:SPORT -> WAN_GW:443, in STATE, seen both
 * ways. */
static inline bool ct_tcp(uint16_t sport, const char *state, uint32_t mark)
{
	char extra[96];

	snprintf(extra, sizeof(extra), "--state %s -u SEEN_REPLY,ASSURED",
		 state);
	return ct_insert("tcp", sport, 443, extra, mark);
}

/* The entry's line in `conntrack -L`, for its mark and timeout. */
static inline bool ct_line(const char *filter, char *line, size_t len)
{
	char cmd[256];
	FILE *f;
	bool ok;

	snprintf(cmd, sizeof(cmd), "conntrack -L %s 2>/dev/null", filter);
	f = popen(cmd, "r");
	if (!f)
		return false;
	ok = fgets(line, len, f) != NULL;
	pclose(f);
	if (!ok)
		fprintf(stderr, "  conntrack -L %s: no entry\n", filter);
	return ok;
}

static inline bool ct_mark_is(const char *filter, uint32_t want)
{
	char line[512], *m;
	unsigned long mark;

	if (!ct_line(filter, line, sizeof(line)))
		return false;
	m = strstr(line, "mark=");
	mark = m ? strtoul(m + 5, NULL, 0) : ~0UL;
	if (mark != want) {
		fprintf(stderr, "  conntrack mark %lu, expected %u: %s", mark,
			want, line);
		return false;
	}
	return true;
}

/* The remaining timeout (seconds) of the entry FILTER selects, or -1. */
static inline long ct_timeout(const char *filter)
{
	char line[512], *t;

	if (!ct_line(filter, line, sizeof(line)))
		return -1;
	/* "udp 17 TIMEOUT src=..." or "tcp 6 TIMEOUT ESTABLISHED ..." */
	t = line + strcspn(line, "0123456789");
	t += strcspn(t, " ");
	return strtol(t, NULL, 10);
}

static inline bool flows_are(int n)
{
	int got = flows_count();

	if (got != n)
		fprintf(stderr, "  %d flow entries, expected %d\n", got, n);
	return got == n;
}

/* Every word of the table filter set to 0. */
static inline bool table_filter_words_clear(void)
{
	int fd = bpf_map__fd(skel->maps.xnat_offloaded);
	__u32 v = 0;

	for (__u32 i = 0; i < OFFLOADED_WORDS; i++)
		if (bpf_map_update_elem(fd, &i, &v, BPF_ANY))
			return false;
	return true;
}

/* Offload mode's table filter (bpf/offload_filter.h) as new: epoch 0,
 * every bit clear. */
static inline bool table_filter_fresh(void)
{
	struct offloaded_epoch e = {};
	__u32 zero = 0;

	if (!table_filter_words_clear())
		return false;
	return !bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_offloaded_epoch),
				    &zero, &e, BPF_ANY);
}

static inline bool table_filter_get(struct offloaded_epoch *e)
{
	__u32 zero = 0;

	return ASSERT_OK(bpf_map_lookup_elem(
		bpf_map__fd(skel->maps.xnat_offloaded_epoch), &zero, e),
		"the table filter's epoch");
}

static inline bool table_filter_put(const struct offloaded_epoch *e)
{
	__u32 zero = 0;

	return ASSERT_OK(bpf_map_update_elem(
		bpf_map__fd(skel->maps.xnat_offloaded_epoch), &zero, e, BPF_ANY),
		"the table filter's epoch written");
}

/* How many words of the table filter hold VALUE. */
static inline __u32 table_filter_words_are(__u32 value)
{
	int fd = bpf_map__fd(skel->maps.xnat_offloaded);
	__u32 n = 0, w;

	for (__u32 i = 0; i < OFFLOADED_WORDS; i++)
		n += !bpf_map_lookup_elem(fd, &i, &w) && w == value;
	return n;
}

/* A new epoch, as the data path starts one: every bit clear. */
static inline bool table_filter_new_epoch(void)
{
	struct offloaded_epoch e;

	if (!table_filter_get(&e) || !table_filter_words_clear())
		return false;
	e.epoch++;
	e.set = 0;
	return table_filter_put(&e);
}

/* Packets of the entry ct_tcp() makes, in both directions. */
#define ORIG_AT(sp, fl, sq)                                                  \
	.ingress = LAN,                                                       \
	.in = TCP_PKT(LAN_HOST, WAN_GW, sp, 443, FROM_LAN, .tcp_flags = fl,   \
		      .seq = sq, .ack_seq = 2000, .ttl = 64, .ip_id = 0x0101)
#define ORIG_ACK(sp, fl) ORIG_AT(sp, fl, 1000)
#define ORIG_OUT(fl)                                                         \
	.has_out = true,                                                      \
	.out = TCP_PKT(NAT_ADDR, WAN_GW, EXT_PORT, 443, TO_WAN, .tcp_flags = fl, \
		       .seq = 1000, .ack_seq = 2000, .ttl = 63, .ip_id = 0x0101)
#define REPLY_AT(fl, sq)                                                     \
	.ingress = WAN,                                                       \
	.in = TCP_PKT(WAN_GW, NAT_ADDR, 443, EXT_PORT, FROM_WAN, .tcp_flags = fl, \
		      .seq = sq, .ack_seq = 1000, .ttl = 60, .ip_id = 0x0202)
#define REPLY_ACK(fl) REPLY_AT(fl, 2000)
/* After the two segments above (the default payload each), each side's
 * next sequence number; each advertises pkt_build()'s 64240 bytes. */
#define ORIG_NEXT (1000u + (uint32_t)PKT_DEFAULT_PAYLOAD_LEN)
#define REPLY_NEXT (2000u + (uint32_t)PKT_DEFAULT_PAYLOAD_LEN)
#define PEER_WIN 64240
#define REPLY_OUT(dp, fl)                                                    \
	.has_out = true,                                                      \
	.out = TCP_PKT(WAN_GW, LAN_HOST, 443, dp, TO_LAN, .tcp_flags = fl,    \
		       .seq = 2000, .ack_seq = 1000, .ttl = 59, .ip_id = 0x0202)

#define ACK TCP_ACK

/* The ACK of the connection on SP from the LAN, and of its reply to the
 * LAN host's DP, forwarded as REASON (OFFLOAD, FAST...). */
#define ORIG_FWD(sp, reason) ORIG_ACK(sp, ACK), FWD(reason), ORIG_OUT(ACK)
#define REPLY_FWD(dp, reason) REPLY_ACK(ACK), FWD(reason), REPLY_OUT(dp, ACK)

/* The connection on SPORT, its entry inserted, offloaded both ways: its
 * first packet each way forwarded as fwd_offload, two flows installed. */
static inline bool offload_both(uint16_t sport)
{
	const struct fixture both[] = {
		{ .name = "orig offloaded", ORIG_FWD(sport, OFFLOAD) },
		{ .name = "reply offloaded", REPLY_FWD(sport, OFFLOAD) },
	};

	return run_fixtures(both, ARRAY_SIZE(both)) && flows_are(2);
}

/*
 * A hand-back: F goes up untouched, counted once under its reason, and
 * (unlike any other XDP_PASS, which run_fixture() checks) takes the flow
 * off the fast path: both of its entries are gone afterwards.
 */
static inline bool run_handback(const struct fixture *f)
{
	struct xnat_counter before[XNAT_REASON_MAX], after[XNAT_REASON_MAX];
	uint8_t in[PKT_MAX], out[PKT_MAX];
	uint32_t len = pkt_build(in, &f->in), out_len = sizeof(out), ret = 0;
	bool ok = true;

	stats_read(before);
	if (!xdp_run(side_ifindex(f->ingress), in, len, 0, out, &out_len, &ret))
		return false;
	stats_read(after);
	if (ret != XDP_PASS) {
		check_fail("%s: verdict %s, expected XDP_PASS", f->name,
			   verdict_name(ret));
		ok = false;
	}
	for (int r = 0; r < XNAT_REASON_MAX; r++) {
		__u64 want = r == f->reason, got = after[r].packets -
						   before[r].packets;

		if (got != want) {
			check_fail("%s: counter %s moved by %llu, expected %llu",
				   f->name, reason_name(r),
				   (unsigned long long)got,
				   (unsigned long long)want);
			ok = false;
		}
	}
	if (!expect_bytes(out, out_len, in, len, "handed back, yet modified"))
		ok = false;
	return ok && flows_are(0);
}

/* Is the kernel's entry FILTER selects ESTABLISHED, with more than
 * MIN_S seconds left? */
static inline bool ct_established(const char *filter, long min_s)
{
	char line[512];
	long t = ct_timeout(filter);

	if (!ct_line(filter, line, sizeof(line)))
		return false;
	if (t <= min_s || !strstr(line, "ESTABLISHED")) {
		fprintf(stderr, "  conntrack entry changed (timeout %ld, expected "
			"> %ld, established): %s", t, min_s, line);
		return false;
	}
	return true;
}

/*
 * Hand the segment S (an IPv4 TCP spec), advertising WINDOW, to the
 * kernel's conntrack for real: sent into the veth peer of the port its
 * side names, it arrives there as from the wire. Conntrack then records
 * that sender's next sequence number and window (td_end, td_maxwin),
 * which no ctnetlink insert sets. A table of the test's own namespace
 * hooks conntrack in (the ct expression) and drops the segment after
 * (nothing forwarded or answered); be_liberal as xnat sets it. Done once
 * the entry FILTER selects (ct_tcp()'s, 100 s) has been refreshed to the
 * namespace's established timeout (5 days): a bounded poll.
 */
static inline bool ct_feed(enum side side, const struct pkt_spec *s,
			   uint16_t window, const char *filter)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_halen = ETH_ALEN };
	uint8_t buf[PKT_MAX], *l3 = buf + sizeof(struct ethhdr);
	uint8_t *l4 = l3 + sizeof(struct iphdr);
	size_t len = pkt_build(buf, s);
	bool ok = false;
	int fd, i;

	l4[14] = window >> 8;
	l4[15] = window & 0xff;
	pkt_fill_l4_csum_v4(l3, l4, len - (size_t)(l4 - buf), s);
	sll.sll_ifindex = if_nametoindex(side == LAN ? "lan0p" : "wan0p");
	if (write_file("/proc/sys/net/netfilter/nf_conntrack_tcp_be_liberal", "1") ||
	    sh("nft add table ip xnat_ut_feed && "
	       "nft add chain ip xnat_ut_feed pre "
	       "'{ type filter hook prerouting priority 0; }' && "
	       "nft add rule ip xnat_ut_feed pre ct state established drop && "
	       "nft add rule ip xnat_ut_feed pre meta l4proto tcp drop"))
		return false;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd >= 0 && sll.sll_ifindex &&
	    sendto(fd, buf, len, 0, (struct sockaddr *)&sll, sizeof(sll)) ==
		    (ssize_t)len) {
		for (i = 0; i < 200 && !ok; i++) {
			ok = ct_timeout(filter) > 1000;
			if (!ok)
				usleep(10000);
		}
	}
	if (fd < 0 || !ok)
		fprintf(stderr, "  conntrack did not see the segment: %s\n",
			fd < 0 ? strerror(errno) : "entry not refreshed");
	if (fd >= 0)
		close(fd);
	return !sh("nft delete table ip xnat_ut_feed") && ok;
}

/* Each binary's first test: the offload map, and conntrack(8). */
static inline bool offload_setup(void)
{
	offload_fd = bpf_map__fd(skel->maps.xnat_offload);
	if (offload_fd < 0 || system("conntrack -F >/dev/null 2>&1")) {
		fprintf(stderr, "  conntrack (conntrack-tools) is needed: scripts/deps.sh installs it\n");
		return false;
	}
	return true;
}

/* Each binary's last test: the data path's other tests run with offload
 * off, and no entry is left behind. */
static inline bool offload_off_again(void)
{
	struct xnat_config c;

	flows_clear();
	sh("conntrack -F >/dev/null 2>&1");
	if (!config_get(&c))
		return false;
	c.flags &= ~XNAT_F_OFFLOAD;
	c.timeout_tcp_est = 7440;
	return config_set(&c);
}

#endif /* XNAT_TEST_OFFLOAD_HARNESS_H */
