/* A baseapp's half of logging in: PREPARE_LOGIN from a loginapp (proto/login.h,
 * docs/PROTOCOL.md "PrepareLogin"). The baseapp readies the account's base and issues a
 * one-time session for it (client_sessions.h) that the client presents on the baseapp's
 * external interface:
 *
 * - with a database id: the account is loaded here (createBaseFromDB's path, db_load);
 * - without one: it is looked up by its identifier property (the account name) when the type
 *   has one, and otherwise, or when there is none, a new base of the type is created here
 *   (its identifier set to the name) and written to get its database id (writeToDB's path).
 *
 * A base that was live already is the account logged in: with takeover, when it lives here,
 * its older sessions are forgotten and a new one issued (telling the connected client is the
 * proxy's part); when it lives on another baseapp the answer names that baseapp
 * (PREPARE_LIVE_ELSEWHERE) and the loginapp asks it. Without takeover: already logged in.
 * Taken only from a live loginapp of the cluster (as the manager announced it); from anyone
 * else it is refused (BAD_REQUEST) and counted in notLoginapp. Counted in the watchers
 * login/prepare/{requests,ok,created,alreadyLoggedIn,liveElsewhere,failed,malformed,
 * notLoginapp}.
 */
#ifndef MC_BASEAPP_LOGIN_PREPARE_H
#define MC_BASEAPP_LOGIN_PREPARE_H

#include "entity/engine.h"

/* PREPARE_LOGIN (a request) from o. */
void login_on_prepare(mc_engine *e, const mc_origin *o, mc_istream *is);
/* Its counters and watchers login/prepare/... (once, from app.c). 0 or -1. */
int login_prepare_init(mc_engine *e);
/* When the baseapp goes (app.c). */
void login_prepare_free(mc_engine *e);

#endif
