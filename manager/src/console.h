/* The manager's web console: operators' view of the cluster in a browser.
 *
 * Served on the manager's HTTP port (--metrics) when --consolePasswordFile names the
 * operator password (deploy/cluster makes one, mode 0600). Pages: the processes with state,
 * load and uptime; live plots over the last minutes (load per process, cellapp tick p99,
 * players online, logins/s, bytes to clients/s) from samples the console takes every
 * --consoleSampleMs; the watcher tree of any process (read-write values settable,
 * callables callable); an entity page (by id, or by global name: its type, where its base
 * and cell are, their properties and methods). Plain HTML, CSS and a small script built
 * into the binary (manager/console/). Safe by default: a session cookie (HttpOnly,
 * SameSite=Strict) after the password (compared in constant time; failures limited),
 * POSTs only with the session's CSRF token, a strict Content-Security-Policy, 4xx for bad
 * input. Watchers console/... count logins, failures, sessions and refusals.
 */
#ifndef MC_MANAGER_CONSOLE_H
#define MC_MANAGER_CONSOLE_H

#include "server/server.h"

#include <stdbool.h>
#include <stddef.h>

struct mc_manager;
typedef struct mc_console mc_console;

/* Check the console's options (ranges; a readable password file of mode 0600 when one is
 * named, and then --metrics): false with a one-line reason. */
bool mc_console_check(const mc_config *cfg, char *err, size_t errlen);

/* Start the console on the server's HTTP port. NULL with a one-line reason (no HTTP port,
 * unreadable or empty password file, out of memory). */
mc_console *mc_console_new(struct mc_manager *m, mc_server *s, char *err, size_t errlen);
void mc_console_free(mc_console *c);

#endif
