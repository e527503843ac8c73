// SPDX-License-Identifier: GPL-2.0-only
/* The NAT-at-scale tests' harness; see scale_harness.h. */
#include "scale_harness.h"

static const uint8_t mac_gw[ETH_ALEN] = MAC_WAN_GW;
static const uint8_t mac_host[ETH_ALEN] = MAC_LAN_HOST;

struct xnat_config scale_cfg;

/* After the fixture's testbed: the route to REMOTE, the inbound host's
 * neighbour, and the config the tests start from. */
static int scale_setup(void)
{
	if (sh("ip route add default via " WAN_GW) ||
	    sh("ip neigh add " HOST_NET "51 lladdr 02:00:00:00:01:0a dev lan0 "
	       "nud permanent"))
		return -1;
	scale_cfg = (struct xnat_config){
		.port_min = 20000, .port_max = 65535, .wan_ifindex = if_wan,
		.timeout_tcp_est = 7440, .timeout_tcp_trans = 240,
		.timeout_udp = 300, .timeout_icmp = 60, .timeout_udp_dns = 30,
	};
	inet_pton(AF_INET, NAT_ADDR, &scale_cfg.nat_addr);
	return 0;
}

const struct fixture_opts scale_opts = {
	.flow_entries = SCALE_FLOWS_MAX,
	.setup = scale_setup,
};

uint64_t scale_counter(int reason)
{
	struct xnat_counter sum[XNAT_REASON_MAX];

	stats_read(sum);
	return sum[reason].packets;
}

long map_count(int fd)
{
	uint8_t key[64], next[64];
	long n = 0;

	if (bpf_map_get_next_key(fd, NULL, next))
		return 0;
	do {
		memcpy(key, next, sizeof(key));
		n++;
	} while (!bpf_map_get_next_key(fd, key, next));
	return n;
}

long edm_flows(void)
{
	struct flow_key key, next;
	struct flow_value v;
	long n = 0;

	if (bpf_map_get_next_key(flows_fd, NULL, &next))
		return 0;
	do {
		key = next;
		if (!bpf_map_lookup_elem(flows_fd, &key, &v) &&
		    v.dir == FLOW_DIR_ORIG && v.edm != FLOW_EDM_NONE)
			n++;
	} while (!bpf_map_get_next_key(flows_fd, &key, &next));
	return n;
}

bool scale_reset(const struct xnat_config *c)
{
	/* The allocator's hints too: a range a test before found full
	 * would make this one probe at random instead of preserving ports. */
	int ncpus = libbpf_num_possible_cpus();
	struct nat_alloc_hint *none;
	__u32 zero = 0;
	bool ok;

	flows_clear();
	none = ncpus > 0 ? calloc(ncpus, sizeof(*none)) : NULL;
	ok = ASSERT_TRUE(none, "memory for the hints") &&
	     ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.xnat_alloc),
					   &zero, none, BPF_ANY), "hints cleared");
	free(none);
	return ok && config_set(c);
}

char *scale_host(int n, char *buf)
{
	sprintf(buf, HOST_NET "%d", n);
	return buf;
}

size_t udp_frame(uint8_t *buf, bool from_wan, const char *saddr,
		 uint16_t sport, const char *daddr, uint16_t dport)
{
	struct pkt_spec s = {
		.saddr = saddr, .daddr = daddr, .proto = IPPROTO_UDP,
		.sport = sport, .dport = dport, .ttl = 64, .ip_id = 0x4242,
	};

	memcpy(s.smac, from_wan ? mac_gw : mac_host, ETH_ALEN);
	memcpy(s.dmac, from_wan ? mac_wan0 : mac_lan0, ETH_ALEN);
	return pkt_build(buf, &s);
}

/*
 * A forwarded frame, checked whole against one built from scratch: the
 * expected addresses and ports, the next hop's MACs, TTL 63 and both
 * checksums from the oracle (pkt_build computes them independently of the
 * data path's incremental updates). ANY_PORT: the source port is the
 * router's choice, in [lo, hi]; *PORT gets it.
 */
static bool check_out(const uint8_t *out, uint32_t out_len, bool to_wan,
		      const char *saddr, uint16_t sport, const char *daddr,
		      uint16_t dport, uint16_t lo, uint16_t hi, uint16_t *port)
{
	const struct pkt_v4_udp *o = (const void *)out;
	uint8_t want[PKT_MAX];
	struct pkt_spec s = {
		.saddr = saddr, .daddr = daddr, .proto = IPPROTO_UDP,
		.sport = sport, .dport = dport, .ttl = 63, .ip_id = 0x4242,
	};
	size_t len;
	bool ok = true;

	if (sport == ANY_PORT) {
		s.sport = ntohs(o->udp.source);
		ok &= ASSERT_TRUE(s.sport >= lo && s.sport <= hi,
				  "chosen port in the range");
	}
	if (port)
		*port = s.sport;
	memcpy(s.smac, to_wan ? mac_wan0 : mac_lan0, ETH_ALEN);
	memcpy(s.dmac, to_wan ? mac_gw : mac_host, ETH_ALEN);
	len = pkt_build(want, &s);
	ok &= ASSERT_EQ(out_len, len, "output length");
	ok &= ASSERT_TRUE(!memcmp(out, want, len),
			  "output frame as built by the oracle");
	return ok;
}

static uint64_t slow_count(void)
{
	return scale_counter(XNAT_FWD_SLOW) + scale_counter(XNAT_FWD_SLOW_EDM);
}

bool out_expect(const struct xnat_config *c, int hostn, uint16_t sport,
		       uint16_t dport, uint32_t verdict, int reason,
		       const char *nat, uint16_t *port)
{
	uint8_t frame[PKT_MAX], out[PKT_MAX];
	uint32_t out_len, got;
	uint64_t before = reason == ANY_FWD_SLOW ? slow_count() : scale_counter(reason);
	char h[32];
	size_t len = udp_frame(frame, false, scale_host(hostn, h), sport, REMOTE,
			       dport);
	bool ok;

	if (!xdp_run(if_lan, frame, len, 0, out, &out_len, &got))
		return false;
	ok = ASSERT_EQ(got, verdict, "verdict");
	ok &= ASSERT_EQ((reason == ANY_FWD_SLOW ? slow_count() :
			 scale_counter(reason)) - before, 1, "reason counter");
	if (ok && verdict == XDP_REDIRECT)
		ok &= check_out(out, out_len, true, nat ? nat : NAT_ADDR,
				ANY_PORT, REMOTE, dport, c->port_min,
				c->port_max, port);
	if (!ok)
		fprintf(stderr, "    (host %s port %u to %s:%u)\n", h, sport,
			REMOTE, dport);
	return ok;
}

int out_try(const struct xnat_config *c, int hostn, uint16_t sport,
	    uint16_t dport, uint16_t *port)
{
	uint8_t frame[PKT_MAX], out[PKT_MAX];
	uint32_t out_len, got;
	uint64_t slow0 = slow_count();
	uint64_t refused0 = scale_counter(XNAT_PASS_NO_PORT) +
			    scale_counter(XNAT_DROP_NO_PORT);
	char h[32];
	size_t len = udp_frame(frame, false, scale_host(hostn, h), sport, REMOTE,
			       dport);
	bool ok;

	if (!xdp_run(if_lan, frame, len, 0, out, &out_len, &got))
		return -1;
	if (got == XDP_REDIRECT) {
		ok = ASSERT_EQ(slow_count() - slow0, 1, "slow path counter");
		ok &= check_out(out, out_len, true, NAT_ADDR, ANY_PORT, REMOTE,
				dport, c->port_min, c->port_max, port);
	} else {
		ok = ASSERT_TRUE(got == XDP_PASS || got == XDP_DROP, "verdict");
		ok &= ASSERT_EQ(scale_counter(XNAT_PASS_NO_PORT) +
				scale_counter(XNAT_DROP_NO_PORT) - refused0, 1,
				"no-port counter");
	}
	if (!ok) {
		fprintf(stderr, "    (host %s port %u to %s:%u)\n", h, sport,
			REMOTE, dport);
		return -1;
	}
	return got == XDP_REDIRECT;
}

bool reply_expect(int hostn, uint16_t sport, uint16_t rport,
			 const char *nat, uint16_t port)
{
	uint8_t frame[PKT_MAX], out[PKT_MAX];
	uint32_t out_len, got;
	char h[32];
	size_t len = udp_frame(frame, true, REMOTE, rport, nat ? nat : NAT_ADDR,
			       port);

	if (!xdp_run(if_wan, frame, len, 0, out, &out_len, &got) ||
	    !ASSERT_EQ(got, XDP_REDIRECT, "reply verdict"))
		return false;
	return check_out(out, out_len, false, REMOTE, rport, scale_host(hostn, h),
			 sport, 0, 0, NULL);
}
