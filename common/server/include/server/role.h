/* Process roles: the four server processes (and tools) and their names.
 *
 * A role has a singular name ("baseapp", used for binaries and process names such as
 * "baseapp01") and a plural one ("baseapps", used as a watcher TARGET).
 */
#ifndef MC_SERVER_ROLE_H
#define MC_SERVER_ROLE_H

#include "proto/control.pb-c.h"

#include <stdbool.h>

typedef Mc__Control__Role mc_role;

#define MC_ROLE_UNKNOWN MC__CONTROL__ROLE__ROLE_UNKNOWN
#define MC_ROLE_MANAGER MC__CONTROL__ROLE__ROLE_MANAGER
#define MC_ROLE_LOGINAPP MC__CONTROL__ROLE__ROLE_LOGINAPP
#define MC_ROLE_BASEAPP MC__CONTROL__ROLE__ROLE_BASEAPP
#define MC_ROLE_CELLAPP MC__CONTROL__ROLE__ROLE_CELLAPP
#define MC_ROLE_TOOL MC__CONTROL__ROLE__ROLE_TOOL

/* "manager", "loginapp", "baseapp", "cellapp", "tool", or "unknown". */
const char *mc_role_name(mc_role role);
/* "managers", "loginapps", "baseapps", "cellapps", "tools", or "unknown". */
const char *mc_role_plural(mc_role role);
/* Parse a singular name; false for anything else. */
bool mc_role_parse(const char *text, mc_role *out);
/* Parse a plural name ("baseapps"); false for anything else. */
bool mc_role_parse_plural(const char *text, mc_role *out);
/* True for the roles that may register with the manager (loginapp, baseapp, cellapp). */
bool mc_role_registers(mc_role role);

/* "alive", "dead", "stopped", "fenced", "unknown". */
const char *mc_state_name(Mc__Control__ProcessState state);

#endif
