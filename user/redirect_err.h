/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Counting frames the egress device refused after XDP redirected them
 * (bpf/redirect_err.bpf.c) as drop_redirect, for the router of this
 * network namespace.
 */
#ifndef XNAT_REDIRECT_ERR_H
#define XNAT_REDIRECT_ERR_H

/* Attach the counters and pin their links next to the maps, unless
 * pinned already. Needs the pinned stats map. 0, or -errno (a warning is
 * printed: the router works without it, only less visibly). */
int redirect_err_attach(void);

/* Unpin the links (they detach): before a new stats map is counted into. */
void redirect_err_detach(void);

#endif /* XNAT_REDIRECT_ERR_H */
