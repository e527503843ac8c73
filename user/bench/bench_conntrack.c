// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's conntrack limits for the many-endpoint profiles: a million
 * flows through the kernel's NAT need nf_conntrack_max and the conntrack
 * hash table sized for them. Both are global: nf_conntrack_max is
 * writable only from the host's network namespace, the hash size is a
 * module parameter. The bench raises them for the run and puts the old
 * values back when the testbed goes down; where it cannot, the samples
 * that need them are marked unverified (bench_conntrack_ok()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"
#include "log.h"
#include "sysctl.h"

#define CT_MAX "net/netfilter/nf_conntrack_max"
#define CT_HASHSIZE "/sys/module/nf_conntrack/parameters/hashsize"

static long long read_ll(const char *path, bool sys)
{
	char buf[32];
	FILE *f;

	if (!sys)
		return sysctl_read(path, buf, sizeof(buf)) ? -1 : atoll(buf);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return buf[0] ? atoll(buf) : -1;
}

static int write_ll(const char *path, bool sys, long long v)
{
	char buf[32];
	FILE *f;
	int err = 0;

	snprintf(buf, sizeof(buf), "%lld", v);
	if (!sys)
		return sysctl_write(path, buf);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fputs(buf, f) < 0)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int bench_conntrack_raise(struct bench *b, long long need)
{
	long long max, hash;
	int err = 0;

	/* The host's namespace: the only one where the limit is writable. */
	if (b->host_ns_fd >= 0 && bench_enter(b, NS_MAX))
		return -EIO;
	max = read_ll(CT_MAX, false);
	hash = read_ll(CT_HASHSIZE, true);
	if (max < 0 || hash < 0)
		return -ENOENT;
	if (max < need + 65536) {
		if (!b->ct_saved) {
			b->ct_max_saved = max;
			b->ct_hash_saved = hash;
		}
		err = write_ll(CT_MAX, false, need + 65536);
		b->ct_saved = true;
	}
	if (!err && hash < need) {
		if (!b->ct_saved) {
			b->ct_max_saved = max;
			b->ct_hash_saved = hash;
			b->ct_saved = true;
		}
		err = write_ll(CT_HASHSIZE, true, need);
	}
	b->ct_need = need;
	b->ct_ok = !err && read_ll(CT_MAX, false) >= need &&
		   read_ll(CT_HASHSIZE, true) >= need;
	if (!b->ct_ok)
		pr_warn("xnat bench: could not raise nf_conntrack_max and the "
			"conntrack hash size to %lld: %s; kernel NAT samples of "
			"the many-endpoint profiles are unverified\n", need,
			strerror(err ? -err : EPERM));
	return b->ct_ok ? 0 : err ? err : -EPERM;
}

bool bench_conntrack_ok(const struct bench *b, long long need)
{
	return b->ct_ok && b->ct_need >= need;
}

void bench_conntrack_restore(struct bench *b)
{
	if (!b->ct_saved)
		return;
	if (b->host_ns_fd >= 0)
		bench_enter(b, NS_MAX);
	/* The hash size first: a smaller table then holds fewer entries. */
	if (write_ll(CT_HASHSIZE, true, b->ct_hash_saved) ||
	    write_ll(CT_MAX, false, b->ct_max_saved))
		pr_warn("xnat bench: could not restore nf_conntrack_max %lld and "
			"hash size %lld\n", b->ct_max_saved, b->ct_hash_saved);
	b->ct_saved = false;
}
