// SPDX-License-Identifier: GPL-2.0-only
/*
 * The provenance of a run (bench_provenance.h): read from the machine
 * itself, never taken from the user, so that a report names what it was
 * measured on.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include "bench_provenance.h"

/* The first "model name" of /proc/cpuinfo (x86), else its "Model" or
 * "cpu model" line (ARM boards, MIPS routers), or "unknown". */
static void cpu_model(char *buf, size_t len)
{
	static const char *const keys[] = { "model name", "Model", "cpu model" };
	char line[256], *colon;
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		size_t n = strlen(keys[k]);

		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, keys[k], n) ||
			    (line[n] != ' ' && line[n] != '\t' && line[n] != ':') ||
			    !(colon = strchr(line, ':')))
				continue;
			colon += 1 + (colon[1] == ' ');
			colon[strcspn(colon, "\n")] = 0;
			snprintf(buf, len, "%s", colon);
			fclose(f);
			return;
		}
	}
	fclose(f);
}

static unsigned long long mem_total(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static bool shell_safe(const char *w)
{
	if (!*w)
		return false;
	for (; *w; w++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_./:=,+@%-", *w))
			return false;
	return true;
}

void bench_shell_join(char *buf, size_t len, char *const *args, int n)
{
	size_t at = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (int i = 0; i < n && at + 1 < len; i++) {
		const char *w = args[i];

		if (i)
			buf[at++] = ' ';
		if (shell_safe(w)) {
			at += snprintf(buf + at, len - at, "%s", w);
		} else {
			/* 'it'\''s': a quote ends, an escaped one, a new start. */
			buf[at++] = '\'';
			for (; *w && at + 5 < len; w++) {
				if (*w == '\'') {
					memcpy(buf + at, "'\\''", 4);
					at += 4;
				} else {
					buf[at++] = *w;
				}
			}
			if (at + 1 < len)
				buf[at++] = '\'';
		}
		if (at >= len)
			at = len - 1;
		buf[at] = 0;
	}
}

void bench_command_typed(char *buf, size_t len)
{
	char raw[2048], *args[64];
	int n = 0;
	size_t got;
	FILE *f = fopen("/proc/self/cmdline", "re");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	got = fread(raw, 1, sizeof(raw) - 1, f);
	fclose(f);
	raw[got] = 0;
	for (size_t at = 0; at < got && n < 64; at += strlen(raw + at) + 1)
		args[n++] = raw + at;
	if (n)
		bench_shell_join(buf, len, args, n);
}

void bench_provenance_host(struct bench_provenance *p)
{
	struct utsname un;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	memset(p, 0, sizeof(*p));
	if (gethostname(p->hostname, sizeof(p->hostname) - 1))
		snprintf(p->hostname, sizeof(p->hostname), "unknown");
	cpu_model(p->cpu_model, sizeof(p->cpu_model));
	p->cpus = ncpu > 0 ? (int)ncpu : 0;
	p->mem_bytes = mem_total();
	if (!uname(&un)) {
		snprintf(p->kernel, sizeof(p->kernel), "%s", un.release);
		snprintf(p->kernel_build, sizeof(p->kernel_build), "%s", un.version);
	} else {
		snprintf(p->kernel, sizeof(p->kernel), "unknown");
	}
	bench_command_typed(p->command, sizeof(p->command));
}

int bench_provenance_port(struct bench_provenance *p, const char *role,
			  const char *netns, const char *ifname)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { .ifr_data = (void *)&info };
	struct bench_port_info *port;
	int fd, err = 0;

	if (p->n_ports == BENCH_PORTS_MAX)
		return -ENOSPC;
	port = &p->ports[p->n_ports++];
	snprintf(port->role, sizeof(port->role), "%s", role);
	snprintf(port->netns, sizeof(port->netns), "%s", netns ? netns : "");
	snprintf(port->ifname, sizeof(port->ifname), "%s", ifname);
	snprintf(port->driver, sizeof(port->driver), "unknown");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	if (err)
		return err;
	snprintf(port->driver, sizeof(port->driver), "%s", info.driver);
	snprintf(port->version, sizeof(port->version), "%s", info.version);
	snprintf(port->firmware, sizeof(port->firmware), "%s", info.fw_version);
	snprintf(port->bus_info, sizeof(port->bus_info), "%s", info.bus_info);
	return 0;
}
