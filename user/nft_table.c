// SPDX-License-Identifier: GPL-2.0-only
/*
 * xnat's nftables table as the kernel has it (see nft_table.h): listed
 * through libnftables, compared with what the config would load by
 * loading that into a scratch network namespace, and its rules' counters
 * parsed from the listing ("counter packets N bytes M").
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <nftables/libnftables.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "grow.h"
#include "nft_table.h"
#include "rtnl.h"

#define LIST_CMD "list table inet xnat"

/* Run CMD; its output malloc'ed in *OUT (when OUT). -ENOENT when nft
 * says the table is not there, -EINVAL for other refusals. */
static int nft_cmd(const char *cmd, bool stateless, char **out)
{
	struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	const char *err;
	int ret = 0;

	if (!ctx)
		return -ENOMEM;
	if (nft_ctx_buffer_output(ctx) || nft_ctx_buffer_error(ctx)) {
		ret = -ENOMEM;
		goto out;
	}
	if (stateless)
		nft_ctx_output_set_flags(ctx, nft_ctx_output_get_flags(ctx) |
					 NFT_CTX_OUTPUT_STATELESS);
	if (nft_run_cmd_from_buffer(ctx, cmd)) {
		err = nft_ctx_get_error_buffer(ctx);
		ret = err && strstr(err, "No such file or directory") ? -ENOENT :
		      -EINVAL;
		goto out;
	}
	if (out) {
		*out = strdup(nft_ctx_get_output_buffer(ctx));
		if (!*out)
			ret = -ENOMEM;
	}
out:
	nft_ctx_free(ctx);
	return ret;
}

int nft_table_list(bool stateless, char **out)
{
	return nft_cmd(LIST_CMD, stateless, out);
}

/* Everything from FD until EOF, malloc'ed. */
static char *read_all(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *bigger;
	ssize_t n;

	while (buf) {
		if (len + 1 == cap) {
			bigger = realloc(buf, cap *= 2);
			if (!bigger)
				break;
			buf = bigger;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			buf[len] = 0;
			return n < 0 ? (free(buf), NULL) : buf;
		}
		len += n;
	}
	free(buf);
	return NULL;
}

/* A veth pair NAME and PEER, in this network namespace. */
static int veth_add(const char *name, const char *peer)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlattr *info, *data, *peer_attr;
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	peer_attr = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	mnl_attr_put_strz(nlh, IFLA_IFNAME, peer);
	mnl_attr_nest_end(nlh, peer_attr);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	return rtnl_request(nlh);
}

/* A name none of the N PORTS has. */
static void spare_name(const char *const *ports, int n, char name[IF_NAMESIZE])
{
	for (unsigned short k = 0;; k++) {
		int j = 0;

		snprintf(name, IF_NAMESIZE, "xnat-spare%hu", k);
		while (j < n && strcmp(ports[j], name))
			j++;
		if (j == n)
			return;
	}
}

/*
 * Interfaces named as the router's ports, for rules that match a port by
 * index (`iif`, `oif`): nft resolves the name when the table loads, and
 * lists the index by the name again. veth pairs, two ports each (veth is
 * what every kernel that runs xnat's tests has); an odd one out gets a
 * peer under a name no port has.
 */
static void scratch_ports(const char *const *ports, int n)
{
	char spare[IF_NAMESIZE];

	for (int i = 0; i < n; i += 2) {
		if (i + 1 == n)
			spare_name(ports, n, spare);
		veth_add(ports[i], i + 1 < n ? ports[i + 1] : spare);
	}
}

int nft_table_expected(const char *cmds, const char *const *ports, int n_ports,
		       char **out)
{
	int pipefd[2], status, ret;
	char *listing = NULL;
	pid_t pid;

	if (pipe(pipefd))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return ret;
	}
	if (pid == 0) {
		/* The child: a network namespace of its own, gone with it. */
		close(pipefd[0]);
		if (unshare(CLONE_NEWNET))
			_exit(1);
		/* Without them (a kernel without veth), only a table that
		 * names a port by index fails to load: not compared. */
		scratch_ports(ports, n_ports);
		if (nft_cmd(cmds, false, NULL) ||
		    nft_cmd(LIST_CMD, true, &listing))
			_exit(1);
		ret = write(pipefd[1], listing, strlen(listing)) < 0;
		_exit(ret);
	}
	close(pipefd[1]);
	*out = read_all(pipefd[0]);
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || !*out) {
		free(*out);
		*out = NULL;
		return -EIO;
	}
	return 0;
}

int nft_table_counters(struct nft_rule_counter **out)
{
	struct nft_rule_counter *rules = NULL, *r;
	char *listing, *line, *next, *c, chain[32] = "";
	size_t head, cap = 0;
	int n = 0, ret;

	ret = nft_table_list(false, &listing);
	if (ret)
		return ret;
	for (line = listing; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = 0;
		while (*line == '\t' || *line == ' ')
			line++;
		if (sscanf(line, "chain %31s {", chain) == 1)
			continue;
		c = strstr(line, " counter packets ");
		if (!c)
			continue;
		ret = grow_for(&rules, sizeof(*rules), n, &cap, 16);
		if (ret)
			goto fail;
		r = &rules[n];
		memset(r, 0, sizeof(*r));
		snprintf(r->chain, sizeof(r->chain), "%s", chain);
		if (sscanf(c, " counter packets %" SCNu64 " bytes %" SCNu64,
			   &r->packets, &r->bytes) != 2)
			continue;
		/* The rule without " counter packets N bytes M". */
		head = c - line;
		c = strstr(c, " bytes ") + 7;
		c += strspn(c, "0123456789");
		snprintf(r->rule, sizeof(r->rule), "%.*s%s", (int)head, line, c);
		n++;
	}
	free(listing);
	*out = rules;
	return n;
fail:
	free(listing);
	free(rules);
	return ret;
}
