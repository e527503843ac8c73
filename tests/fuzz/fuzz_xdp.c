// SPDX-License-Identifier: GPL-2.0-only
/*
 * The data-path fuzzer behind `make fuzz` (tests/fuzz/run.sh runs it).
 * libFuzzer mutates frames; each input is one frame run through the XDP
 * program by BPF_PROG_RUN on the LAN or the WAN port of the unit tests'
 * testbed (tests/unit/fixture.c: a network namespace with routes and
 * neighbours, the maps filled as user/maps.c fills them), with flows
 * already installed by sending their real first packets. State carries
 * over from input to input (flows the fuzzer opens, fragment records) and
 * goes back to that baseline every RESET_EVERY inputs.
 *
 * Coverage is the BPF program's: the program is built with -DXNAT_FUZZ
 * (bpf/fuzz.h), which counts every place that stops a packet and the marked
 * decisions in a .bss array; after each run the harness copies it into
 * libFuzzer's extra counters. The harness itself is not instrumented.
 *
 * Input: byte 0 selects the port (bit 0: WAN) and config flags for this
 * packet (bit 1 fast path off, bit 2 endpoint-independent filtering, bit 3
 * inbound refresh, bit 4 offload mode, bits 5 and 6 make the IPv4 header
 * and the L4 checksums valid before the run, bit 7 clears the NAT address
 * as before the WAN has one); the rest is the frame.
 *
 * Every run is checked (fuzz_checks.c, with the parser of fuzz_frame.c and
 * checksums by
 * tests/unit/csum_oracle.h), and a violation aborts, which libFuzzer
 * reports as a crash with the input saved:
 *  - the verdict is never XDP_ABORTED, the program goes through count()
 *    exactly once, and the reason's kind matches the verdict (fwd_*
 *    redirect, pass_* pass, drop_* drop); every RESET_EVERY runs and at
 *    the end the stats map must hold exactly the runs' counts;
 *  - a frame passed to the kernel or dropped is unmodified;
 *  - a forwarded frame was well formed and is well formed, its TTL went
 *    down by one, its IPv4 header checksum verifies, and its TCP, UDP,
 *    ICMP checksums (and a quoted header's, for ICMP errors) verify from
 *    scratch if and only if the input's did (for a first fragment: the
 *    checksum's partial sum is preserved); IPv6 is forwarded unchanged;
 *  - a frame from the WAN reaches the LAN only through a flow opened from
 *    the LAN, a port forward or a mapping open to inbound traffic.
 * The inputs since the last reset are written to fuzz-history.bin on a
 * violation: FUZZ_PRELUDE=fuzz-history.bin replays them before a crash
 * input, to reproduce a violation that depends on state.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <net/if.h>
#include <linux/if_link.h>
#include "fuzz.h"

/* bpf/fuzz.h's array; the program's counters come first in the extra
 * counters, then one per (reason, port). */
#define COV_SLOTS 1024
/* The fixture's flow table holds 8 connections, 6 of them the baseline's:
 * a frequent reset keeps room for the flows the fuzzer opens. */
#define RESET_EVERY 512

__attribute__((section("__libfuzzer_extra_counters"), used))
static uint8_t extra_counters[COV_SLOTS + 2 * XNAT_REASON_MAX];

static uint32_t sites;              /* XNAT_COV() expansions in the program */
static uint8_t ever[COV_SLOTS];     /* reached at least once */
static uint64_t reason_runs[XNAT_REASON_MAX]; /* by the harness's count */
static bool reason_ever[XNAT_REASON_MAX];       /* over the whole campaign */
static struct xnat_counter stats_base[XNAT_REASON_MAX];
static uint64_t runs, since_reset;
struct xnat_config base_cfg;
static struct xnat_config fixture_cfg; /* as the fixture set it up */
uint32_t cur_flags;
static int frags_fd;
int fwd_fd, peers_fd;

/* Inputs since the last reset, for fuzz-history.bin. */
static uint8_t *history;
static size_t history_len;
#define HISTORY_MAX ((size_t)RESET_EVERY * (FRAME_MAX + 3))

/* ---- Reporting a violation ------------------------------------------ */

static void hexdump(const char *tag, const uint8_t *b, size_t len)
{
	size_t i;

	fprintf(stderr, "  %s (%zu bytes):", tag, len);
	for (i = 0; i < len; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n    ", b[i]);
	fputc('\n', stderr);
}

static void history_dump(void)
{
	int fd = open("fuzz-history.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, history, history_len) != (ssize_t)history_len)
		fprintf(stderr, "fuzz: writing fuzz-history.bin: %s\n",
			strerror(errno));
	else
		fprintf(stderr, "fuzz: the %llu inputs since the last reset are "
			"in fuzz-history.bin (FUZZ_PRELUDE replays them)\n",
			(unsigned long long)since_reset);
	if (fd >= 0)
		close(fd);
}

static const uint8_t *cur_in;
static size_t cur_in_len;
static const uint8_t *cur_out;
static size_t cur_out_len;
static uint32_t cur_verdict, cur_reason, cur_side;

void violation(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\nfuzz: INVARIANT VIOLATED after %llu packets: ",
		(unsigned long long)runs);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  ingress %s, verdict %s, reason %s, flags 0x%x\n",
		cur_side ? "WAN" : "LAN", verdict_name(cur_verdict),
		reason_name(cur_reason), cur_flags);
	if (cur_in)
		hexdump("input", cur_in, cur_in_len);
	if (cur_out)
		hexdump("output", cur_out, cur_out_len);
	history_dump();
	abort();
}

/* The stats map holds exactly what the runs counted. */
static void stats_check(void)
{
	struct xnat_counter now[XNAT_REASON_MAX];
	int r;

	stats_read(now);
	for (r = 0; r < XNAT_REASON_MAX; r++)
		if (now[r].packets - stats_base[r].packets != reason_runs[r])
			violation("stats counter %s says %llu packets, the runs "
				  "counted %llu", reason_name(r),
				  (unsigned long long)(now[r].packets -
						       stats_base[r].packets),
				  (unsigned long long)reason_runs[r]);
}

/* ---- Running ----------------------------------------------------------- */

static void set_flags(uint32_t flags)
{
	struct xnat_config c = base_cfg;

	if (flags == cur_flags)
		return;
	c.flags = (base_cfg.flags & ~CTL_FLAGS_MASK) | (flags & CTL_FLAGS_MASK);
	if (flags & CTL_NO_NAT_ADDR)
		c.nat_addr = 0;
	if (!config_set(&c))
		violation("writing the config map failed");
	cur_flags = flags;
}

/* The frame of an input: the bytes after the control byte, at most
 * FRAME_MAX, at least an Ethernet header (the kernel refuses less). */
static uint32_t input_frame(const uint8_t *data, size_t size, uint8_t *frame)
{
	uint32_t len = size > 1 ? size - 1 : 0;

	if (len > FRAME_MAX)
		len = FRAME_MAX;
	memset(frame, 0, 14);
	memcpy(frame, data + 1, len);
	return len < 14 ? 14 : len;
}

/* The program's branches of this run into libFuzzer's extra counters,
 * then (reason, port); the program's counters are zeroed for the next. */
static void coverage_collect(int side)
{
	uint32_t i, c;

	for (i = 0; i < sites; i++) {
		c = skel->bss->xnat_fuzz_cov[i];
		if (!c)
			continue;
		extra_counters[i] = c > 255 ? 255 : c;
		ever[i] = 1;
		skel->bss->xnat_fuzz_cov[i] = 0;
	}
	extra_counters[COV_SLOTS + 2 * cur_reason + side] = 1;
}

/* Counted once, with a reason of the verdict's kind, never aborted. */
static void check_counted(uint32_t retval)
{
	if (skel->bss->xnat_fuzz_counted != 1)
		violation("the run went through count() %u times",
			  skel->bss->xnat_fuzz_counted);
	if (cur_reason >= XNAT_REASON_MAX)
		violation("reason %u out of range", cur_reason);
	reason_runs[cur_reason]++;
	reason_ever[cur_reason] = true;
	if (retval == XDP_ABORTED)
		violation("XDP_ABORTED");
	if (!reason_fits(cur_reason, retval))
		violation("verdict does not fit the reason");
}

static void run_packet(const uint8_t *data, size_t size)
{
	static uint8_t frame[FRAME_MAX], out[FRAME_MAX];
	uint8_t ctl = size ? data[0] : 0;
	int side = ctl & CTL_WAN ? 1 : 0;
	uint32_t out_len = 0, retval = ~0u, len;
	bool keyed = false, had_flow = false;
	struct parsed pin, pout;
	struct flow_value before;
	struct flow_key key;

	len = input_frame(data, size, frame);
	fix_checksums(frame, len, ctl);
	set_flags(((ctl >> CTL_FLAGS_SHIFT) & CTL_FLAGS_MASK) |
		  (ctl & CTL_NO_NAT_ADDR));
	parse(&pin, frame, len);
	if (side && pin.family && !pin.malformed) {
		keyed = wan_key(&pin, &key);
		had_flow = keyed && !bpf_map_lookup_elem(flows_fd, &key, &before);
	}

	cur_in = frame;
	cur_in_len = len;
	cur_out = NULL;
	cur_side = side;
	cur_verdict = ~0u;
	cur_reason = ~0u;
	skel->bss->xnat_fuzz_counted = 0;
	if (!xdp_run(side ? if_wan : if_lan, frame, len, 0, out, &out_len,
		     &retval))
		violation("BPF_PROG_RUN failed");
	runs++;
	cur_out = out;
	cur_out_len = out_len;
	cur_verdict = retval;
	cur_reason = skel->bss->xnat_fuzz_reason;
	check_counted(retval);
	coverage_collect(side);

	switch (retval) {
	case XDP_PASS:
	case XDP_DROP:
		if (cur_reason == XNAT_DROP_REDIRECT)
			break; /* rewritten on purpose, never reaches the kernel */
		if (out_len != len || memcmp(out, frame, len))
			violation("a frame passed or dropped was modified");
		break;
	case XDP_REDIRECT:
		parse(&pout, out, out_len);
		check_forwarded_frame(&pin, &pout);
		if (side && is_mac(out + 6, mac_lan0))
			check_wan_to_lan(&pin, had_flow, &before, &key, keyed);
		break;
	case XDP_TX:
		parse(&pout, out, out_len);
		check_tx_frame(&pin, &pout);
		break;
	default:
		violation("unknown verdict %u", retval);
	}
}

/* The first packets of the flows every run starts from, as LAN hosts and
 * a WAN client send them; each must be forwarded. */
static const struct pkt_spec baseline[] = {
	{ FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_UDP,
	  .sport = 40000, .dport = 53 },
	{ FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_TCP,
	  .sport = 40001, .dport = 443, .tcp_flags = TCP_SYN, .seq = 1000 },
	{ FROM_LAN, .saddr = LAN_HOST, .daddr = WAN_GW, .proto = IPPROTO_ICMP,
	  .icmp_type = 8, .icmp_id = 40002, .icmp_seq = 1 },
	{ FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW, .proto = IPPROTO_UDP,
	  .sport = 40003, .dport = 53 },
	{ FROM_LAN, .saddr = LAN6_HOST, .daddr = WAN6_GW, .proto = IPPROTO_TCP,
	  .sport = 40004, .dport = 443, .tcp_flags = TCP_SYN, .seq = 2000 },
	{ FROM_WAN, .saddr = WAN_GW, .daddr = NAT_ADDR, .proto = IPPROTO_TCP,
	  .sport = 50000, .dport = 8080, .tcp_flags = TCP_SYN, .seq = 3000 },
};

/*
 * The config of each epoch between resets, in turn: the fixture's; a
 * [nat] ports_per_host the baseline's LAN host already holds (its UDP, TCP
 * and echo mappings), so its new flows meet the limit, with [ipv6] inbound
 * open; a port range of one port, which the baseline's mappings take (one
 * per protocol), so new mappings find none (endpoint-dependent fallback,
 * no port), with a fixed MSS clamp. The others clamp MSS to the MTU.
 */
static void config_epoch(void)
{
	static unsigned int epoch;

	base_cfg = fixture_cfg;
	/* MSS clamping as configured by default, to the ports' MTU. */
	base_cfg.flags |= XNAT_F_MSS_PMTU;
	switch (epoch++ % 3) {
	case 1:
		base_cfg.ports_per_host = 3;
		/* [ipv6] inbound = open. */
		base_cfg.flags |= XNAT_F_IPV6_OPEN;
		break;
	case 2:
		base_cfg.port_min = 40000;
		base_cfg.port_max = 40000;
		/* A fixed MSS low enough to lower most SYNs' (IPv4 1000). */
		base_cfg.flags &= ~XNAT_F_MSS_PMTU;
		base_cfg.mss_mtu = 1000 + XNAT_MSS_HDRS_V4;
		break;
	}
	cur_flags = ~0u; /* written by the set_flags(0) that follows */
}

static void baseline_install(void)
{
	uint8_t frame[PKT_MAX], out[PKT_MAX];
	uint32_t out_len, retval;
	struct xnat_counter now[XNAT_REASON_MAX];
	size_t i, len;

	config_epoch();
	set_flags(0);
	flows_clear();
	/* Connections the program taught the kernel (kernel_adopt_flow, on
	 * the way to every reason flow_hand_up() passes with: too big,
	 * fragments, IP options, and a rerouted flow's failed route) would
	 * make the baseline's first packets the kernel's. */
	if ((reason_runs[XNAT_PASS_MTU] || reason_runs[XNAT_PASS_FRAGMENT] ||
	     reason_runs[XNAT_PASS_IP_OPTIONS] ||
	     reason_runs[XNAT_PASS_NO_NEIGH] ||
	     reason_runs[XNAT_PASS_NO_ROUTE] || reason_runs[XNAT_PASS_LOCAL] ||
	     !runs) && sh("conntrack -F 2>/dev/null"))
		abort();
	map_clear(frags_fd, 8192 + 1);
	wan_datagrams_reset();
	for (i = 0; i < ARRAY_SIZE(baseline); i++) {
		len = pkt_build(frame, &baseline[i]);
		if (!xdp_run(i == ARRAY_SIZE(baseline) - 1 ? if_wan : if_lan,
			     frame, len, 0, out, &out_len, &retval) ||
		    retval != XDP_REDIRECT) {
			fprintf(stderr, "fuzz: baseline flow %zu not forwarded "
				"(verdict %s, reason %s)\n", i,
				verdict_name(retval),
				reason_name(skel->bss->xnat_fuzz_reason));
			abort();
		}
	}
	/* The stats from here on are the runs'. */
	stats_read(now);
	memcpy(stats_base, now, sizeof(now));
	memset(reason_runs, 0, sizeof(reason_runs));
	memset((void *)skel->bss->xnat_fuzz_cov, 0,
	       sizeof(skel->bss->xnat_fuzz_cov));
	since_reset = 0;
	history_len = 0;
}

static void history_add(const uint8_t *data, size_t size)
{
	if (size > FRAME_MAX + 1)
		size = FRAME_MAX + 1;
	if (history_len + size + 2 > HISTORY_MAX)
		return;
	history[history_len++] = size >> 8;
	history[history_len++] = size & 0xff;
	memcpy(history + history_len, data, size);
	history_len += size;
}

static void one_input(const uint8_t *data, size_t size)
{
	if (since_reset == RESET_EVERY) {
		stats_check();
		baseline_install();
	}
	history_add(data, size);
	since_reset++;
	run_packet(data, size);
}

/* FUZZ_PRELUDE: inputs (2-byte length, bytes) run before the fuzzing. */
static void prelude(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t buf[FRAME_MAX + 1], hdr[2];
	size_t n, count = 0;

	if (!f) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	while (fread(hdr, 1, 2, f) == 2) {
		n = get16(hdr);
		if (n > sizeof(buf) || fread(buf, 1, n, f) != n)
			break;
		one_input(buf, n);
		count++;
	}
	fclose(f);
	fprintf(stderr, "fuzz: replayed %zu inputs from %s\n", count, path);
}

static void report(void)
{
	uint32_t i, reached = 0, reasons_seen = 0;

	if (!skel)
		return;
	stats_check();
	for (i = 0; i < sites; i++)
		reached += ever[i];
	for (i = 0; i < XNAT_REASON_MAX; i++)
		reasons_seen += reason_ever[i];
	fprintf(stderr, "fuzz: reasons never counted:");
	for (i = 0; i < XNAT_REASON_MAX; i++)
		if (!reason_ever[i])
			fprintf(stderr, " %s", reason_name(i));
	fprintf(stderr, "\nfuzz: %llu packets, %u of %u branches of the data "
		"path reached, %u of %u reasons, invariants held\n",
		(unsigned long long)runs, reached, sites, reasons_seen,
		XNAT_REASON_MAX);
}

/* An XDP program attached nowhere makes every BPF_PROG_RUN pay for adding
 * it to the XDP dispatcher and removing it again; attached in generic mode
 * to a port that is down and never carries a packet, the runs skip that. */
static void attach_idle(void)
{
	int ifindex, err;

	if (sh("ip link add fz0 type veth peer name fz0p"))
		return;
	ifindex = if_nametoindex("fz0");
	err = bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_SKB_MODE, NULL);
	if (err)
		fprintf(stderr, "fuzz: attaching to fz0 (runs will be slow): %s\n",
			strerror(-err));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fwd_key fk = { .port = htons(5353), .proto = IPPROTO_UDP };
	struct fwd_value fv = { .port = htons(53) };
	const char *pre = getenv("FUZZ_PRELUDE");

	if (fixture_setup())
		exit(2);
	cur_test = "fuzz";
	reason_verdicts_init();
	sites = skel->rodata->xnat_fuzz_sites;
	if (sites > COV_SLOTS) {
		fprintf(stderr, "fuzz: %u branches, more than %u slots\n", sites,
			COV_SLOTS);
		exit(2);
	}
	frags_fd = bpf_map__fd(skel->maps.xnat_fragments);
	fwd_fd = bpf_map__fd(skel->maps.xnat_forwards);
	peers_fd = bpf_map__fd(skel->maps.xnat_peers);
	inet_pton(AF_INET, LAN_HOST, &fv.addr);
	if (bpf_map_update_elem(fwd_fd, &fk, &fv, BPF_ANY)) {
		fprintf(stderr, "fuzz: adding the UDP forward: %s\n",
			strerror(errno));
		exit(2);
	}
	if (!config_get(&fixture_cfg))
		exit(2);
	history = malloc(HISTORY_MAX);
	if (!history)
		exit(2);
	attach_idle();
	baseline_install();
	atexit(report);
	if (pre)
		prelude(pre);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one_input(data, size);
	return 0;
}
