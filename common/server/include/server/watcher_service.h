/* Answering watcher requests: one WatcherRequest against a process's watcher tree.
 *
 * ls lists a directory (or describes a single leaf), get reads a leaf or every leaf under
 * a directory, set writes a read-write leaf and returns its new value, call runs a
 * callable. The reply is a heap message (free with mc_pb_free); NULL only when out of
 * memory.
 */
#ifndef MC_SERVER_WATCHER_SERVICE_H
#define MC_SERVER_WATCHER_SERVICE_H

#include "common/watcher.h"
#include "proto/control.pb-c.h"

Mc__Control__WatcherReply *mc_watcher_service_handle(mc_watchers *w,
                                                     const Mc__Control__WatcherRequest *req);

/* Map a registry status to the wire status. */
Mc__Control__WatcherStatus mc_watcher_status_to_wire(mc_watch_status st);
/* Short names used by the tool: "int", "uint"..., "ro", "rw", "call". */
const char *mc_wire_type_name(Mc__Control__WatcherType t);
const char *mc_wire_mode_name(Mc__Control__WatcherMode m);
const char *mc_wire_status_name(Mc__Control__WatcherStatus s);

#endif
