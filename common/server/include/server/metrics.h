/* Prometheus metrics from a process's watcher tree (text exposition format 0.0.4).
 *
 * What is exported (docs/tools/metrics.md lists every name):
 *   - the well-known watchers under conventional names: counters end in _total, units are
 *     in the name (_seconds, _bytes), a watcher kept in ms or us is scaled to seconds;
 *   - the process's latency histograms (server/histogram.h) as Prometheus histograms;
 *   - every other numeric watcher (int, uint, float, bool as 0/1) as the gauge
 *     mc_watcher_value{path="..."}, per-entity subtrees (entities/<id>/) left out.
 * Every sample carries the labels role, name and host. Rendering reads watchers only (the
 * getters the watcher tool runs); it never blocks.
 */
#ifndef MC_SERVER_METRICS_H
#define MC_SERVER_METRICS_H

#include "common/watcher.h"
#include "server/histogram.h"

#include <stddef.h>

struct evbuffer;

typedef struct {
    const char *role;
    const char *name;
    const char *host;
} mc_metrics_labels;

/* Append the exposition of w and hists to out. 0, or -1 when out of memory. */
int mc_metrics_render(const mc_watchers *w, mc_histogram *const *hists, size_t nhists,
                      const mc_metrics_labels *labels, struct evbuffer *out);
/* Write v escaped as a Prometheus label value (\\, \", \n) into out (NUL-terminated,
 * truncated to outlen). */
void mc_metrics_escape_label(const char *v, char *out, size_t outlen);

#endif
