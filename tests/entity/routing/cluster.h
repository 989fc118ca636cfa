/* A cluster for the entity routing tests: a manager, two baseapps and two cellapps loading
 * the Probe game (tests/entity/game), on loopback with free ports, driven through the
 * watcher tool. Built on the integration harness (tests/integration/harness.h): every
 * process started here is killed when the test process exits, whatever happens.
 *
 * Slots: 0 and 1 are the baseapps, 2 and 3 the cellapps, in the order they were started;
 * their names (baseapp01 ...) are the manager's, read back once they registered. */
#ifndef MC_TESTS_ROUTING_CLUSTER_H
#define MC_TESTS_ROUTING_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RC_SLOTS 4
#define RC_NO_NUMBER INT64_MIN

typedef struct {
    char mgr[32];
    pid_t mpid;
    char mlog[600];
    pid_t pid[RC_SLOTS];
    bool gone[RC_SLOTS]; /* killed or stopped by the test: not stopped again at the end */
    char addr[RC_SLOTS][32];
    char name[RC_SLOTS][32];
    char log[RC_SLOTS][600];
    /* a baseapp started later by rc_start_extra_baseapp (xpid 0 until then) */
    pid_t xpid;
    char xaddr[32], xname[32], xlog[600];
} rc_cluster;

/* Start the cluster; `mgr_opt` is one extra manager option (or NULL) and slot_opt[i] extra
 * options for slot i, separated by spaces (or NULL). Waits until every process is registered, named and
 * holds entity ids. False (with the reason printed) when it did not come up. */
bool rc_start(rc_cluster *c, const char *tag, const char *mgr_opt,
              const char *const slot_opt[RC_SLOTS]);
/* Stop every process still running with SIGTERM (the manager last) and check that each
 * exits with status 0 (under ASan a leak or an error makes it non-zero). */
void rc_stop(rc_cluster *c);
/* Start one more baseapp (extra options as for slots, or NULL); true once it registered and
 * holds entity ids (its name in xname, its address in xaddr). rc_stop stops it too. */
bool rc_start_extra_baseapp(rc_cluster *c, const char *tag, const char *extra);
/* Start `bin` with the options given (NULL-ended, at most 6) and check that it exits with
 * status 1 at start, its output naming `needle` (an option out of range); fails the test
 * otherwise. */
void rc_expect_refused(const char *bin, const char *needle, ...);
/* kill -9 the manager and start it again at the same address with the same state file (as
 * a reviver does); true once it answers. */
bool rc_restart_manager(rc_cluster *c, const char *tag);
/* kill -9 a slot's process and reap it. */
void rc_kill9(rc_cluster *c, int slot);

/* `watcher get TARGET PATH`: the value's text (one line) into val; false on failure. */
bool rc_get(const rc_cluster *c, const char *target, const char *path, char *val, size_t n);
/* The same for an entity property of the Probe: entities/<id>/props/<prop>. */
bool rc_prop(const rc_cluster *c, const char *target, int32_t id, const char *prop, char *val,
             size_t n);
int64_t rc_num(const rc_cluster *c, const char *target, const char *path);
int64_t rc_prop_num(const rc_cluster *c, const char *target, int32_t id, const char *prop);
double rc_float(const rc_cluster *c, const char *target, const char *path);
/* Poll (every 100 ms, up to timeout_ms) until the number equals want; the last value read
 * goes to *last when last is not NULL. */
bool rc_wait_num(const rc_cluster *c, const char *target, const char *path, int64_t want,
                 int timeout_ms, int64_t *last);
bool rc_wait_prop(const rc_cluster *c, const char *target, int32_t id, const char *prop,
                  int64_t want, int timeout_ms, int64_t *last);
/* Poll until the text contains needle. */
bool rc_wait_text(const rc_cluster *c, const char *target, const char *path,
                  const char *needle, int timeout_ms);

/* `watcher call TARGET PATH [ARGS...]` (NULL-ended, at most 4); its exit status, output in
 * out. */
int rc_call(const rc_cluster *c, char *out, size_t n, const char *target, const char *path,
            ...);
/* `watcher set TARGET PATH VALUE`: its exit status. */
int rc_set(const rc_cluster *c, const char *target, const char *path, const char *value);
/* command/call ID METHOD JSON on target; its exit status (output in out when given). */
int rc_invoke(const rc_cluster *c, const char *target, int32_t id, const char *method,
              const char *json, char *out, size_t n);
/* command/createBase Probe [props] on a slot: the new id (0 on failure). */
int32_t rc_create(const rc_cluster *c, int slot, const char *props);

/* A mailbox as JSON. */
void rc_mailbox(char *buf, size_t n, int32_t id, const char *addr, const char *component);
/* The slot whose internal address is addr, or -1. */
int rc_slot_of(const rc_cluster *c, const char *addr);
/* Wait until the base `id` on slot has a live cell; its cellapp's slot (or -1). */
int rc_wait_cell(const rc_cluster *c, int slot, int32_t id, int timeout_ms);

/* Parse a JSON array of integers ("[1,2,3]"): the count, values appended to out (up to
 * cap), -1 when malformed. */
long rc_parse_ints(const char *text, int32_t *out, size_t cap);

/* Milliseconds on the monotonic clock. */
long rc_now_ms(void);

#endif
