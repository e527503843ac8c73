/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The router's state as Prometheus metrics, in the text exposition format
 * (https://prometheus.io/docs/instrumenting/exposition_formats/): counters
 * by reason, the ports' interface counters, flow table fill, NAT mappings
 * and external ports in use per address, each family with HELP and TYPE.
 * One writer for `xnat stats --format prometheus` (node_exporter's textfile
 * collector) and `xnat metrics --listen` (a scrape target).
 */
#ifndef XNAT_METRICS_H
#define XNAT_METRICS_H

#include <stddef.h>
#include <stdio.h>

/* The content type of the format, for HTTP. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Write every metric of the router in this network namespace to F. 0, or
 * -errno with one line in ERR (xnat not up here, a map unreadable). */
int metrics_write(FILE *f, char *err, size_t errlen);

#endif /* XNAT_METRICS_H */
