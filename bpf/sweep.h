/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flow sweeper: how xdp mode's connections expire. A new connection
 * is pushed on a queue (xnat_expiry) instead of getting a timer of its
 * own: arming a BPF timer allocates (bpf_timer_init) and takes two
 * IRQ-saving locks, the costliest part of a new flow. One timer for the
 * whole table ticks every SWEEP_TICK_NS, pops a batch of connections,
 * ends those idle for their timeout (flow_is_over(), flow_end()) and
 * pushes the others back, so each connection comes up once per cycle: an
 * eighth of the shortest timeout, at least a second (the defaults: 3.75
 * s), or longer when SWEEP_BATCH_MAX bounds the batch (a million
 * connections: about 12 s). A connection so ends between its timeout and
 * its timeout plus one cycle, never before. The fast path only refreshes
 * last_seen_ns, as before.
 *
 * A live connection's reference, popped, must find room to go back: new
 * connections are queued only while the count of references (queued,
 * stale ones included) leaves SWEEP_RESERVE slots free; beyond that
 * they go to the kernel (pass_table_full), as when the queue is full.
 *
 * Offload mode keeps its per-entry timers (offload.h): its entries are
 * never queued.
 */
#ifndef XNAT_SWEEP_H
#define XNAT_SWEEP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "flow.h"

#define SWEEP_TICK_NS (50 * 1000 * 1000ULL)
#define SWEEP_CYCLE_TICKS 20
/* Connections looked at per tick at most: bounds the time one tick takes
 * in softirq (a few hundred ns each: about a millisecond), and so the
 * sweeper's share of a CPU (a few % with a million connections). */
#define SWEEP_BATCH_MAX 4096
/* `xnat flows delete` marks at most this many per tick are ended at once. */
#define SWEEP_NOW_MAX 256
/* Slots of xnat_expiry new connections leave free for the sweeper's
 * push-backs. A reference is counted in queued from before its push to
 * after its pop, so the sweeper's own are always counted; new connections
 * check the count then add to it, so those racing on other CPUs can
 * overshoot it by one each: room for 64 pushing in the same instant. */
#define SWEEP_RESERVE 64

/* xnat_expiry's capacity: the loader sets both (user/loader.c). */
const volatile __u32 sweep_queue_max = XNAT_EXPIRY_MAX_DEFAULT;

/* Has this program (this load of it) made the timer call its own
 * callback? A reload's new program takes the pinned timer over with its
 * first new connection. */
static volatile __u32 sweep_claimed;

static __always_inline struct flow_sweep *sweep_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnat_sweep, &zero);
}

/* Is OV (found under a queued reference of CREATED) that connection? */
static __always_inline int sweep_ref_live(const struct flow_value *ov,
					  __u32 created)
{
	return ov && ov->dir == FLOW_DIR_ORIG && ov->nat != FLOW_NAT_CT &&
	       (__u32)ov->created_ns == created;
}

/* bpf_loop body: one queued connection. 1 stops the loop (queue empty). */
static int sweep_one(__u32 i, void *ctx)
{
	struct flow_sweep *s = sweep_get();
	struct xnat_config *cfg = config_get();
	struct flow_value *ov, *rv;
	struct expiry_ref ref;
	struct flow_key rkey;

	if (!s || !cfg || bpf_map_pop_elem(&xnat_expiry, &ref))
		return 1;
	ov = bpf_map_lookup_elem(&xnat_flows, &ref.key);
	if (!sweep_ref_live(ov, ref.created)) {
		/* Ended some other way (flows delete, a flush, a failed
		 * insert): nothing to do. */
		__sync_fetch_and_add(&s->queued, (__u64)-1);
		return 0;
	}
	flow_reply_key(&ref.key, ov, &rkey);
	rv = bpf_map_lookup_elem(&xnat_flows, &rkey);
	if (!flow_is_over(cfg, &ref.key, ov, rv, bpf_ktime_get_ns()) &&
	    !bpf_map_push_elem(&xnat_expiry, &ref, 0))
		return 0;
	/* Over; or alive, but the queue filled while it was out, which
	 * SWEEP_RESERVE prevents unless more CPUs than it raced (or
	 * something pushed past the count): a connection that is not
	 * queued would never end, so it ends now. */
	flow_end(cfg, &ref.key, ov, &rkey, rv);
	__sync_fetch_and_add(&s->queued, (__u64)-1);
	s->swept++;
	return 0;
}

/* bpf_loop body: one connection `xnat flows delete` marked. */
static int sweep_now_one(__u32 i, void *ctx)
{
	struct xnat_config *cfg = config_get();
	struct flow_value *ov, *rv;
	struct flow_key okey, rkey;

	if (!cfg || bpf_map_pop_elem(&xnat_expire_now, &okey))
		return 1;
	ov = bpf_map_lookup_elem(&xnat_flows, &okey);
	if (!ov || ov->dir != FLOW_DIR_ORIG || ov->nat == FLOW_NAT_CT ||
	    !ov->expired)
		return 0;
	flow_reply_key(&okey, ov, &rkey);
	rv = bpf_map_lookup_elem(&xnat_flows, &rkey);
	flow_end(cfg, &okey, ov, &rkey, rv);
	return 0;
}

/*
 * Ticks per cycle: an eighth of the shortest timeout (a connection ends
 * at most that much late), at least SWEEP_CYCLE_TICKS. Each check costs a
 * few cache misses, on the CPUs that forward: no more often than needed.
 */
static __always_inline __u64 sweep_cycle_ticks(void)
{
	struct xnat_config *cfg = config_get();
	__u64 t;

	if (!cfg)
		return SWEEP_CYCLE_TICKS;
	t = cfg->timeout_udp < cfg->timeout_icmp ? cfg->timeout_udp :
						   cfg->timeout_icmp;
	if (cfg->timeout_tcp_trans < t)
		t = cfg->timeout_tcp_trans;
	if (cfg->timeout_udp_dns && cfg->timeout_udp_dns < t)
		t = cfg->timeout_udp_dns;
	t = t * (NSEC_PER_SEC / SWEEP_TICK_NS) / 8;
	return t > SWEEP_CYCLE_TICKS ? t : SWEEP_CYCLE_TICKS;
}

/* The sweeper's timer callback: the marked connections, then a batch. */
static int sweep_tick(void *map, __u32 *key, struct flow_sweep *s)
{
	__u64 n = s->queued / sweep_cycle_ticks() + 1;

	bpf_loop(SWEEP_NOW_MAX, sweep_now_one, NULL, 0);
	bpf_loop(n < SWEEP_BATCH_MAX ? n : SWEEP_BATCH_MAX, sweep_one, NULL, 0);
	bpf_timer_start(&s->timer, SWEEP_TICK_NS, 0);
	return 0;
}

/* Point the timer at this program's callback and start it. -EBUSY from
 * init: the pinned timer exists already (a reload, or another CPU). */
static __noinline void sweep_claim(void)
{
	struct flow_sweep *s = sweep_get();

	if (!s)
		return;
	bpf_timer_init(&s->timer, &xnat_sweep, XNAT_CLOCK_MONOTONIC);
	bpf_timer_set_callback(&s->timer, sweep_tick);
	bpf_timer_start(&s->timer, SWEEP_TICK_NS, 0);
	sweep_claimed = 1;
}

/*
 * Queue a new connection (its ORIG key, entry created at CREATED) for
 * the sweeper. Called once both entries are in the table: a sweep that
 * found the reference before them would drop it. 0, or -ENOSPC when the
 * queue is full but for SWEEP_RESERVE (the caller takes the connection
 * out again).
 */
static __always_inline int sweep_track(const struct flow_key *okey,
				       __u64 created)
{
	struct expiry_ref ref = { .key = *okey, .created = (__u32)created };
	struct flow_sweep *s = sweep_get();

	if (!s || s->queued + SWEEP_RESERVE >= sweep_queue_max)
		return -ENOSPC;
	/* Counted before it is pushed: the sweeper may pop it at once. */
	__sync_fetch_and_add(&s->queued, 1);
	if (bpf_map_push_elem(&xnat_expiry, &ref, 0)) {
		__sync_fetch_and_add(&s->queued, (__u64)-1);
		return -ENOSPC;
	}
	if (!sweep_claimed)
		sweep_claim();
	return 0;
}

#endif /* XNAT_SWEEP_H */
