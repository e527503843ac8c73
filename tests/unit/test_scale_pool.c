// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of paired address pools (RFC 4787 REQ-2; bpf/nat.h) with
 * BPF_PROG_RUN: every flow of one inside host leaves with the same
 * external address, and the kernel's SNAT of passed-up traffic (an
 * nftables jhash) picks the same one as XDP.
 *
 * Runs on the fixture's testbed with a large flow table (scale_harness.h):
 * every forwarded frame is checked whole, both checksums against the
 * independent oracle (csum_oracle.h). Run as root from the repository
 * root. Prints "#N name:OK|FAIL" and ends with "N passed, N failed".
 */
#include <sys/socket.h>
#include "scale_harness.h"

/* ---- Address pools (RFC 4787 REQ-2) ------------------------------------ */

static const char *const pool_addrs[] = {
	"198.19.0.1", "198.19.0.10", "198.19.0.11", "198.19.0.12",
};

static bool pool_set(struct xnat_config *c, int n)
{
	__u32 i;

	for (i = 0; i < (__u32)n; i++) {
		__be32 a;

		inet_pton(AF_INET, pool_addrs[i], &a);
		if (!ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_pool),
						   &i, &a, 0), "pool") ||
		    !ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_pool_rev),
						   &a, &i, 0), "pool_rev"))
			return false;
	}
	c->pool_size = n;
	return scale_reset(c);
}

/* The address paired pooling gives inside host HOSTN. */
static const char *paired(int hostn, int n)
{
	__be32 a;
	char h[32];

	inet_pton(AF_INET, scale_host(hostn, h), &a);
	return pool_addrs[xnat_pool_hash(a, n)];
}

/*
 * Paired pooling: every flow of one inside host leaves with the same
 * external address, whatever its ports and whether its port is its own or
 * endpoint-dependent; hosts spread over the pool; replies and new inbound
 * connections (endpoint-independent filtering) reach it through that
 * address, and through no other.
 */
static bool test_pool_paired(void)
{
	struct xnat_config c = scale_cfg;
	bool seen[4] = {}, ok = true;
	uint16_t port;
	int h, i, spread = 0;

	if (!pool_set(&c, 4))
		return false;
	for (h = 50; h < 66; h++) {
		for (i = 0; i < 3; i++) {
			ok &= out_expect(&c, h, 40000 + i, 9 + i, XDP_REDIRECT,
					 XNAT_FWD_SLOW, paired(h, 4), &port);
			ok &= reply_expect(h, 40000 + i, 9 + i, paired(h, 4),
					   port);
		}
		for (i = 0; i < 4; i++)
			if (paired(h, 4) == pool_addrs[i])
				seen[i] = true;
	}
	for (i = 0; i < 4; i++)
		spread += seen[i];
	ok &= ASSERT_TRUE(spread >= 3, "16 hosts spread over the pool");

	/* Endpoint-dependent ports keep the host's address. */
	c.port_min = c.port_max = 30000;
	if (!pool_set(&c, 4))
		return false;
	ok &= out_expect(&c, 50, 30000, 9, XDP_REDIRECT, XNAT_FWD_SLOW,
			 paired(50, 4), NULL);
	ok &= out_expect(&c, 50, 1000, 10, XDP_REDIRECT, XNAT_FWD_SLOW_EDM,
			 paired(50, 4), &port);
	ok &= reply_expect(50, 1000, 10, paired(50, 4), port);

	/* Inbound to the mapping: through its address only. */
	c = scale_cfg;
	c.flags |= XNAT_F_FILTER_EIF;
	if (!pool_set(&c, 4))
		return false;
	ok &= out_expect(&c, 51, 40000, 9, XDP_REDIRECT, XNAT_FWD_SLOW,
			 paired(51, 4), &port);
	ok &= reply_expect(51, 40000, 77, paired(51, 4), port);
	{
		uint8_t frame[PKT_MAX], out[PKT_MAX];
		uint32_t out_len, got;
		const char *other = paired(51, 4) == pool_addrs[0] ?
					    pool_addrs[1] : pool_addrs[0];
		size_t len = udp_frame(frame, true, REMOTE, 78, other, port);
		uint64_t before = scale_counter(XNAT_DROP_UNSOLICITED);

		ok &= xdp_run(if_wan, frame, len, 0, out, &out_len, &got);
		ok &= ASSERT_EQ(got, XDP_DROP, "other pool address: dropped");
		ok &= ASSERT_EQ(scale_counter(XNAT_DROP_UNSOLICITED) - before, 1,
				"counted unsolicited");
	}
	c.pool_size = 0;
	return scale_reset(&c) && ok;
}

/*
 * The kernel's SNAT of passed-up traffic picks the same pool address as
 * XDP: xnat writes `jhash ip saddr mod N seed XNAT_POOL_SEED`, and
 * xnat_pool_hash() must be that function. nftables marks locally sent
 * packets with the hash here, counted per value, for 32 source addresses.
 */
static bool test_pool_hash_is_nft_jhash(void)
{
	char cmd[512], line[256];
	bool ok = true;
	FILE *f;
	int a, n = 7;

	f = popen("nft -f -", "w");
	if (!f)
		return ASSERT_TRUE(false, "nft");
	fprintf(f, "table ip xscale {\n chain out {\n"
		   "  type filter hook output priority 0; policy accept;\n"
		   "  udp dport 9 meta mark set jhash ip saddr mod %d seed %#x\n", n,
		XNAT_POOL_SEED);
	for (int v = 0; v < n; v++)
		fprintf(f, "  udp dport 9 meta mark %d counter\n", v);
	fprintf(f, " }\n}\n");
	if (!ASSERT_EQ(pclose(f), 0, "nft ruleset"))
		return false;
	for (a = 100; a < 132; a++) {
		uint64_t count[16] = {}, after[16] = {};
		char h[32];
		__be32 addr;

		snprintf(cmd, sizeof(cmd), "ip addr add %s/32 dev lan0", scale_host(a, h));
		if (sh(cmd))
			return false;
		for (int pass = 0; pass < 2; pass++) {
			uint64_t *c = pass ? after : count;

			if (pass) {
				struct sockaddr_in src = { .sin_family = AF_INET },
						   dst = { .sin_family = AF_INET,
							   .sin_port = htons(9) };
				int fd = socket(AF_INET, SOCK_DGRAM, 0);

				inet_pton(AF_INET, h, &src.sin_addr);
				inet_pton(AF_INET, HOST_NET "99", &dst.sin_addr);
				ok &= ASSERT_OK(bind(fd, (void *)&src, sizeof(src)),
						"bind");
				ok &= ASSERT_EQ(sendto(fd, "x", 1, 0, (void *)&dst,
						       sizeof(dst)), 1, "send");
				close(fd);
			}
			f = popen("nft list chain ip xscale out", "r");
			while (f && fgets(line, sizeof(line), f)) {
				unsigned int v;
				unsigned long long pk;

				if (sscanf(line, " udp dport 9 meta mark %x counter packets %llu",
					   &v, &pk) == 2 && v < 16)
					c[v] = pk;
			}
			if (f)
				pclose(f);
		}
		inet_pton(AF_INET, h, &addr);
		for (int v = 0; v < n; v++)
			ok &= ASSERT_EQ(after[v] - count[v],
					v == (int)xnat_pool_hash(addr, n),
					"nft's jhash bucket of this address");
		snprintf(cmd, sizeof(cmd), "ip addr del %s/32 dev lan0", h);
		sh(cmd);
	}
	sh("nft delete table ip xscale");
	return ok;
}

static const struct test tests[] = {
	{ .name = "pool_paired", .fn = test_pool_paired },
	{ .name = "pool_hash_is_nft_jhash", .fn = test_pool_hash_is_nft_jhash },
};

SCALE_MAIN(tests)
