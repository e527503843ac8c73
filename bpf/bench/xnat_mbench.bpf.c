// SPDX-License-Identifier: GPL-2.0-only
/*
 * The microbenchmark's harness (user/bench/microbench.c). BPF_PROG_RUN with
 * repeat runs a program many times on one buffer, and the programs under
 * test rewrite it: after one pass of the data path the packet carries the
 * NAT address and the next hop's MACs, a key no flow has, and the TTL
 * drains. xdp_mbench therefore writes the original packet back into the
 * buffer on every pass, then tail-calls the program under test, so each
 * pass is a fresh packet and the programs themselves stay as they ship.
 * The copy and the tail call cost the same for every program; the
 * microbenchmark measures them (with xdp_pass as the target) and subtracts.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* The packet every pass starts from: a 64 B frame without its FCS, 60
 * bytes, in words so that the copy is eight loads and stores. */
#define MB_PKT_LEN 60
__u64 mb_pkt[8];
/* The slot of mb_progs to run, set by userspace before each call. */
volatile __u32 mb_target;

/* The programs under test, by slot (enum microbench_case). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 8);
} mb_progs SEC(".maps");

SEC("xdp")
int xdp_mbench(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	__u64 *data = (void *)(long)ctx->data;

	if ((void *)data + MB_PKT_LEN > data_end)
		return XDP_ABORTED;
	data[0] = mb_pkt[0];
	data[1] = mb_pkt[1];
	data[2] = mb_pkt[2];
	data[3] = mb_pkt[3];
	data[4] = mb_pkt[4];
	data[5] = mb_pkt[5];
	data[6] = mb_pkt[6];
	*(__u32 *)&data[7] = (__u32)mb_pkt[7]; /* little endian: bytes 56..59 */
	bpf_tail_call(ctx, &mb_progs, mb_target);
	return XDP_ABORTED;
}
