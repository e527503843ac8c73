/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where and how a run was measured, for its report: the tester machine
 * (host name, CPU model and count, memory, kernel), the command as it was
 * typed, and the driver of every port the tester sends and counts on (the
 * ethtool -i facts: driver, version, firmware, bus). `xnat bench compare`
 * puts runs of several machines and dates side by side with these.
 */
#ifndef XNAT_BENCH_PROVENANCE_H
#define XNAT_BENCH_PROVENANCE_H

#include <net/if.h>

#define BENCH_PORTS_MAX 4

/* One port of the tester, as ethtool -i names its driver. */
struct bench_port_info {
	char role[16];          /* "lan", "wan" */
	char netns[48];         /* the namespace that holds it */
	char ifname[IF_NAMESIZE];
	char driver[32], version[32], firmware[32], bus_info[32];
};

struct bench_provenance {
	char hostname[65];
	char cpu_model[96];     /* /proc/cpuinfo's first "model name" */
	int cpus;               /* online */
	unsigned long long mem_bytes; /* /proc/meminfo MemTotal */
	char kernel[96];        /* uname -r */
	char kernel_build[128]; /* uname -v */
	char command[512];      /* argv as typed, shell-quoted where needed */
	int n_ports;
	struct bench_port_info ports[BENCH_PORTS_MAX];
};

/* The machine and the command line of this process into P (ports
 * none yet); what cannot be read is "unknown", 0 or "". */
void bench_provenance_host(struct bench_provenance *p);
/* Add port IFNAME of the calling thread's network namespace (named
 * NETNS in the report) in ROLE: its driver facts by SIOCETHTOOL
 * ETHTOOL_GDRVINFO. 0, or -errno (the port is still listed, with
 * "unknown" for its driver). */
int bench_provenance_port(struct bench_provenance *p, const char *role,
			  const char *netns, const char *ifname);
/* This process's argv (/proc/self/cmdline) as typed, joined for a
 * shell, into BUF; "unknown" when unreadable. */
void bench_command_typed(char *buf, size_t len);
/* ARGS (N of them) as a shell would take them back into BUF: words
 * with anything but [A-Za-z0-9_./:=,+@%-] in single quotes. */
void bench_shell_join(char *buf, size_t len, char *const *args, int n);

#endif /* XNAT_BENCH_PROVENANCE_H */
