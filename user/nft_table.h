/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading xnat's nftables table back from the kernel, for `xnat status`
 * (is it there, is it what the config loads) and `xnat stats` in kernel
 * mode (its rules' counters). Nothing here changes the router.
 */
#ifndef XNAT_NFT_TABLE_H
#define XNAT_NFT_TABLE_H

#include <stdbool.h>
#include <stdint.h>

/* The table as nft lists it in this network namespace, malloc'ed in *OUT;
 * STATELESS leaves the counters' values out. -ENOENT when it is missing. */
int nft_table_list(bool stateless, char **out);

/*
 * The table the transaction CMDS (kernel_ruleset()) creates, listed as
 * nft_table_list(true, ...) would list it: loaded in a throwaway network
 * namespace of a child process, so that nft itself puts it in the form it
 * lists, and nothing here changes. That namespace has interfaces named as
 * the router's N_PORTS PORTS, for the rules that match a port by index.
 */
int nft_table_expected(const char *cmds, const char *const *ports, int n_ports,
		       char **out);

struct nft_rule_counter {
	char chain[32];
	char rule[384];        /* as listed, without the counter */
	uint64_t packets, bytes;
};

/* The rules of the table that have a counter, in order; the number of
 * them (malloc'ed array in *OUT), or -errno (-ENOENT: no table). */
int nft_table_counters(struct nft_rule_counter **out);

#endif /* XNAT_NFT_TABLE_H */
