// SPDX-License-Identifier: GPL-2.0-only
/*
 * The record of what `xnat up` changed (see state.h), as "key value" lines:
 *   instance 9f3c...
 *   generation 3
 *   mode xdp
 *   config /etc/xnat.ini
 *   up_since 1796025600
 *   loaded_at 1796029200
 *   config_hash 6a1c...
 *   iface lan0
 *   sysctl net/ipv4/ip_forward 0
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "log.h"
#include "netns.h"
#include "pins.h"
#include "../bpf/xnat_common.h"
#include "state.h"
#include "sysctl.h"

#define RUN_ROOT "/run/xnat"

static char pin_dir[64], run_dir[64], state_file[80], applied[80], lock_file[80];

static void paths_init(void)
{
	unsigned long id = netns_id();

	pins_dir_of(id, pin_dir, sizeof(pin_dir));
	snprintf(run_dir, sizeof(run_dir), "%s/%lu", RUN_ROOT, id);
	snprintf(state_file, sizeof(state_file), "%s/state", run_dir);
	snprintf(applied, sizeof(applied), "%s/applied.ini", run_dir);
	snprintf(lock_file, sizeof(lock_file), "%s/lock", run_dir);
}

const char *state_applied_config(void)
{
	paths_init();
	return applied;
}

static int run_dir_make(void)
{
	paths_init();
	mkdir(RUN_ROOT, 0755);
	if (mkdir(run_dir, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Lock LOCK_FILE; 0 when held, 1 when the file was replaced under us (a
 * `down` removed it while we waited: lock the new one), -errno. */
static int lock_once(int fd)
{
	struct stat a, b;

	if (flock(fd, LOCK_EX | LOCK_NB))
		return -errno;
	if (fstat(fd, &a) || stat(lock_file, &b) || a.st_ino != b.st_ino)
		return 1;
	return 0;
}

int state_lock(int wait_s)
{
	int fd, ret, tries = wait_s * 10;

	for (;;) {
		ret = run_dir_make();
		if (ret)
			return ret;
		fd = open(lock_file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		/* A `down` ending removed the directory between the mkdir
		 * and the open (state_remove): make it again. */
		if (fd < 0 && errno == ENOENT && tries-- > 0)
			continue;
		if (fd < 0)
			return -errno;
		ret = lock_once(fd);
		if (!ret)
			return fd;
		close(fd);
		if (ret == 1)
			continue;
		if (ret != -EWOULDBLOCK || tries-- <= 0)
			return ret;
		if (tries % 50 == 0)
			pr_info("Waiting for another xnat command (%s)\n",
				lock_file);
		usleep(100 * 1000);
	}
}

void state_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void staged_path(char *tmp, size_t len)
{
	snprintf(tmp, len, "%s.tmp", applied);
}

int state_stage_config(const char *path)
{
	char tmp[96], buf[4096];
	FILE *in, *out;
	size_t n;
	int err = 0;

	if ((err = run_dir_make()))
		return err;
	staged_path(tmp, sizeof(tmp));
	in = fopen(path, "r");
	if (!in)
		return -errno;
	out = fopen(tmp, "w");
	if (!out) {
		err = -errno;
		fclose(in);
		return err;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			err = -EIO;
	if (ferror(in))
		err = -EIO;
	fclose(in);
	if (fclose(out) && !err)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

unsigned long long state_staged_hash(void)
{
	char tmp[96];

	paths_init();
	staged_path(tmp, sizeof(tmp));
	return state_file_hash(tmp);
}

int state_publish_config(void)
{
	char tmp[96];
	int err = 0;

	paths_init();
	staged_path(tmp, sizeof(tmp));
	if (rename(tmp, applied)) {
		err = -errno;
		unlink(tmp);
	}
	return err;
}

void state_discard_config(void)
{
	char tmp[96];

	paths_init();
	staged_path(tmp, sizeof(tmp));
	unlink(tmp);
}

const char *state_run_dir(void)
{
	paths_init();
	return run_dir;
}

/* Unpin what a deleted namespace left under our inode, and its record. */
static void state_clear_stale(void)
{
	char path[sizeof(pin_dir) + 256];
	struct dirent *de;
	DIR *d = opendir(pin_dir);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	/* Not state_remove(): our caller may hold the lock, which must stay
	 * the file it locked for as long as it runs. */
	rmdir(pin_dir);
	unlink(state_file);
	unlink(applied);
}

int state_load(struct xnat_state *st)
{
	char line[256], key[32], val[200];
	unsigned long long cookie = 0;
	FILE *f;

	paths_init();
	memset(st, 0, sizeof(*st));
	f = fopen(state_file, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct saved_sysctl *s;

		val[0] = 0;
		if (sscanf(line, "%31s %199[^\n]", key, val) < 1)
			continue;
		if (!strcmp(key, "netns_cookie")) {
			cookie = strtoull(val, NULL, 10);
		} else if (!strcmp(key, "generation")) {
			st->generation = strtoul(val, NULL, 10);
		} else if (!strcmp(key, "instance")) {
			st->instance = strtoull(val, NULL, 16);
		} else if (!strcmp(key, "mode")) {
			st->mode = atoi(val);
		} else if (!strcmp(key, "config")) {
			snprintf(st->config_path, sizeof(st->config_path), "%s", val);
		} else if (!strcmp(key, "up_since")) {
			st->up_since = strtoll(val, NULL, 10);
		} else if (!strcmp(key, "loaded_at")) {
			st->loaded_at = strtoll(val, NULL, 10);
		} else if (!strcmp(key, "prog_hash")) {
			st->prog_hash = strtoull(val, NULL, 16);
		} else if (!strcmp(key, "config_hash")) {
			st->config_hash = strtoull(val, NULL, 16);
		} else if (!strcmp(key, "iface") && st->n_ifaces < STATE_MAX_IFACES) {
			snprintf(st->ifaces[st->n_ifaces++], IF_NAMESIZE, "%s", val);
		} else if (!strcmp(key, "sysctl") &&
			   st->n_sysctls < STATE_MAX_SYSCTLS) {
			s = &st->sysctls[st->n_sysctls];
			s->value[0] = 0;
			/* An empty old value (ip_local_reserved_ports) is valid. */
			if (sscanf(val, "%95s %63[^\n]", s->path, s->value) >= 1)
				st->n_sysctls++;
		}
	}
	fclose(f);
	/* Left by a namespace that was deleted while xnat was up, whose
	 * inode this one reuses: nothing of it is ours. Clear it. */
	if (cookie && netns_cookie() && cookie != netns_cookie()) {
		state_clear_stale();
		memset(st, 0, sizeof(*st));
		return -ENOENT;
	}
	return 0;
}

int state_save(const struct xnat_state *st)
{
	char tmp[96];
	FILE *f;
	int i;

	if (run_dir_make())
		return -errno;
	/* Write and rename: a crash never leaves half a record. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", state_file);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "netns_cookie %llu\n", netns_cookie());
	fprintf(f, "instance %016llx\n", st->instance);
	fprintf(f, "generation %lu\n", st->generation);
	fprintf(f, "mode %d\n", st->mode);
	fprintf(f, "config %s\n", st->config_path);
	fprintf(f, "up_since %lld\n", st->up_since ? st->up_since : (long long)time(NULL));
	fprintf(f, "loaded_at %lld\n", (long long)time(NULL));
	fprintf(f, "config_hash %016llx\n", st->config_hash);
	fprintf(f, "prog_hash %016llx\n", st->prog_hash);
	for (i = 0; i < st->n_ifaces; i++)
		fprintf(f, "iface %s\n", st->ifaces[i]);
	for (i = 0; i < st->n_sysctls; i++)
		fprintf(f, "sysctl %s %s\n", st->sysctls[i].path,
			st->sysctls[i].value);
	if (fclose(f) || rename(tmp, state_file)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

unsigned long long state_new_instance(void)
{
	unsigned long long id = 0;
	struct timespec ts;

	/* Random; where getrandom() cannot answer (an early boot without
	 * entropy, a seccomp filter), the clock and the PID: two routers in
	 * one namespace are never started in the same nanosecond. */
	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != sizeof(id)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		id = ((unsigned long long)ts.tv_sec * 1000000000ULL +
		      ts.tv_nsec) ^ ((unsigned long long)getpid() << 40);
	}
	return id ? id : 1;
}

unsigned long long state_file_hash(const char *path)
{
	unsigned long long h = 0xcbf29ce484222325ULL;
	FILE *f = fopen(path, "r");
	int c;

	if (!f)
		return 0;
	while ((c = getc(f)) != EOF)
		h = (h ^ (unsigned char)c) * 0x100000001b3ULL;
	fclose(f);
	return h;
}

int state_remove(void)
{
	paths_init();
	unlink(state_file);
	unlink(applied);
	rmdir(pin_dir);
	rmdir(XNAT_PIN_ROOT_DIR);
	/*
	 * The lock file last: from its unlink on, the next command locks a
	 * new file at once, so everything of ours must be gone by then (a
	 * pin directory removed after it could be the next `up`'s). Whoever
	 * waits on the old file sees it replaced and locks anew (lock_once);
	 * a directory removed under the next command's open is made again
	 * (state_lock).
	 */
	unlink(lock_file);
	rmdir(run_dir);
	rmdir(RUN_ROOT);          /* only when no other router is up */
	return 0;
}

int state_sysctl_set(struct xnat_state *st, const char *path, const char *value)
{
	struct saved_sysctl *s = NULL;
	int i, err;

	for (i = 0; i < st->n_sysctls; i++)
		if (!strcmp(st->sysctls[i].path, path))
			s = &st->sysctls[i];
	if (!s) {
		if (st->n_sysctls == STATE_MAX_SYSCTLS)
			return -ENOSPC;
		s = &st->sysctls[st->n_sysctls];
		snprintf(s->path, sizeof(s->path), "%s", path);
		err = sysctl_read(path, s->value, sizeof(s->value));
		if (err)
			return err;
		st->n_sysctls++;
	}
	err = sysctl_write(path, value);
	if (err)
		pr_warn("Failed to set sysctl %s to %s: %s\n", path, value,
			strerror(-err));
	return err;
}

int state_sysctl_restore(struct xnat_state *st)
{
	int i, n = 0, err, first = 0;

	/* In reverse: forwarding, set last, goes off first. */
	for (i = st->n_sysctls - 1; i >= 0; i--) {
		err = sysctl_write(st->sysctls[i].path, st->sysctls[i].value);
		if (!err) {
			st->sysctls[i].path[0] = 0;
			continue;
		}
		pr_warn("Failed to restore sysctl %s to %s: %s\n",
			st->sysctls[i].path, st->sysctls[i].value,
			strerror(-err));
		first = first ? first : err;
	}
	/* What failed stays, with its value from before xnat: the next
	 * restore tries it again, and state_sysctl_set keeps that value. */
	for (i = 0; i < st->n_sysctls; i++)
		if (st->sysctls[i].path[0])
			st->sysctls[n++] = st->sysctls[i];
	st->n_sysctls = n;
	return first;
}
