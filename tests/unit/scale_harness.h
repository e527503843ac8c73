/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the NAT-at-scale tests share (test_scale_edm.c, test_scale_hosts.c,
 * test_scale_pool.c): the fixture's testbed (fixture.h) with a flow table
 * for thousands of connections, a default route to REMOTE beyond the WAN
 * gateway and a neighbour for inbound connections to host .51; a config
 * each test changes; and UDP flows of numbered inside hosts sent out and
 * answered, every forwarded frame checked whole against one built from
 * scratch (addresses, ports, MACs, TTL, and both checksums from the
 * oracle, csum_oracle.h).
 */
#ifndef XNAT_TEST_SCALE_HARNESS_H
#define XNAT_TEST_SCALE_HARNESS_H

#include "fixture.h"

#define REMOTE   "198.19.200.1" /* beyond the WAN gateway */
#define HOST_NET "198.18.1."   /* inside hosts: HOST_NET "10" ... */

/* Flow table entries: the capacity test's connections, twice, and some. */
#define SCALE_FLOWS_MAX 8192

/* The router's choice of source port, in the config's range. */
#define ANY_PORT 0
/* Either way of opening a flow: the range decides which it gets. */
#define ANY_FWD_SLOW (-2)

/* The config the tests start from (timeouts as the defaults, ports
 * 20000-65535, a DNS timeout of 30 s). */
extern struct xnat_config scale_cfg;
/* The testbed for fixture_main_opts(). */
extern const struct fixture_opts scale_opts;

#define SCALE_MAIN_REGISTERED()                                               \
	int main(void)                                                        \
	{                                                                     \
		return fixture_main_registered(__FILE__, &scale_opts);        \
	}

#define SCALE_MAIN(table)                                                     \
	int main(void)                                                        \
	{                                                                     \
		return fixture_main_opts(__FILE__, table, ARRAY_SIZE(table),  \
					 &scale_opts);                        \
	}

/* Packets counted under REASON, over the CPUs. */
uint64_t scale_counter(int reason);
/* Entries in the map FD. */
long map_count(int fd);
/* Flows with an endpoint-dependent port (ORIG entries with edm set): each
 * holds its port towards its remote with its reply entry. */
long edm_flows(void);
/* Forget all NAT state (flows, mappings, ports, peers, hosts, the
 * allocator's hints), and write C as the config. */
bool scale_reset(const struct xnat_config *c);
/* Inside host N's address (HOST_NET N) in BUF; returns BUF. */
char *scale_host(int n, char *buf);
/* A UDP frame SADDR:SPORT -> DADDR:DPORT, from the LAN host's MAC or, with
 * FROM_WAN, from the WAN gateway. */
size_t udp_frame(uint8_t *buf, bool from_wan, const char *saddr,
		 uint16_t sport, const char *daddr, uint16_t dport);
/* Inside host HOSTN's SPORT to REMOTE:DPORT. Expects VERDICT and REASON
 * (its counter moves by exactly one; ANY_FWD_SLOW: either slow path); for
 * a redirect checks the frame and returns the external port in *PORT,
 * from the range of C, on address NAT (NULL: NAT_ADDR). */
bool out_expect(const struct xnat_config *c, int hostn, uint16_t sport,
		uint16_t dport, uint32_t verdict, int reason, const char *nat,
		uint16_t *port);
/* The same for a flow that may get a port or not: 1 forwarded (frame
 * checked, the external port in *PORT), 0 refused for want of a port
 * (counted as XNAT_PASS_NO_PORT or XNAT_DROP_NO_PORT), -1 anything else. */
int out_try(const struct xnat_config *c, int hostn, uint16_t sport,
	    uint16_t dport, uint16_t *port);
/* REMOTE:RPORT answers to NAT:PORT; expect it at host HOSTN's SPORT. */
bool reply_expect(int hostn, uint16_t sport, uint16_t rport,
		  const char *nat, uint16_t port);

#endif /* XNAT_TEST_SCALE_HARNESS_H */
