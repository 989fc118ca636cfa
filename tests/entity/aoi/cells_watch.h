/* Watching entities and cells of a running rc_cluster (tests/entity/rules/rules_cluster.h)
 * through the watcher tool, for the integration tests of tests/entity/aoi: polling a watcher
 * value until it holds, where an entity's real is and waiting for it to be on a cellapp,
 * calling cell methods, making Probes with cells, mailboxes as JSON, a space's cells in the
 * manager's layout, what a witness saw. Every wait polls a condition up to a bound the caller
 * gives (in ms of polling sleeps) and fails the test with what it last saw; nothing here
 * waits blindly. Every path is a cellapp's or baseapp's watcher path ("entities/<id>/..."). */
#ifndef MC_TEST_CELLS_WATCH_H
#define MC_TEST_CELLS_WATCH_H

#include "rules_cluster.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "entities/<id>/<rest>" into out. */
void cw_path(char *out, size_t n, int32_t id, const char *rest);

/* Set a watcher value (`watcher set proc path value`); fails the test when it fails. */
void cw_set(rc_cluster *c, const char *proc, const char *path, const char *value);

/* Poll until proc's value at path contains want; fails the test after ms. */
void cw_wait_value(rc_cluster *c, const char *proc, const char *path, const char *want, int ms);
/* Poll until proc's value at path does not contain text; fails the test after ms. */
void cw_wait_without(rc_cluster *c, const char *proc, const char *path, const char *text, int ms);
/* Poll until proc's integer at path equals want; fails the test after ms. */
void cw_wait_int_eq(rc_cluster *c, const char *proc, const char *path, long long want, int ms);
/* Poll until proc's integer at path is at least min; fails the test after ms. */
void cw_wait_int_at_least(rc_cluster *c, const char *proc, const char *path, long long min,
                          int ms);
/* proc's value at path as a float (fails the test when the get fails). */
double cw_value_f(rc_cluster *c, const char *proc, const char *path);
/* Poll until proc's float at path is at least min; fails the test after ms. */
void cw_wait_f_at_least(rc_cluster *c, const char *proc, const char *path, double min, int ms);
/* Poll until the base of id on baseapp01 has want in its events; fails the test after ms. */
void cw_wait_base_event(rc_cluster *c, int32_t id, const char *want, int ms);
/* Poll until proc holds no entity id (a ghost deleted, a cell gone); fails after ms. */
void cw_wait_gone(rc_cluster *c, const char *proc, int32_t id, int ms);

/* The cellapp (index) holding entity id's real: -1 none, -2 two (a move under way: the new
 * cellapp's dormant copy until the old one lets go). Dead cellapps (pid <= 0) are skipped. */
int cw_real_of(rc_cluster *c, int32_t id);
/* Poll until id's real is on cellapp `want`, and only there; fails the test after ms. */
void cw_wait_real_on(rc_cluster *c, int32_t id, int want, int ms);

/* Call a cell method of id on proc that answers its status first ("[status, ...]"): the
 * status; the whole answer in out when out is not NULL. Fails the test on no answer. */
int cw_call_status(rc_cluster *c, const char *proc, int32_t id, const char *method,
                   const char *args, char *out, size_t outlen);
/* Call a cell method of id on the cellapp holding its real; it must answer "[0]" (a status
 * method) or "[]" (a method answering nothing). */
void cw_real_call(rc_cluster *c, int32_t id, const char *method, const char *args);
/* Move id's real (wherever it is) to (x, z); moveTo must answer "[0]". */
void cw_move_real(rc_cluster *c, int32_t id, double x, double z);

/* The CELL mailbox of a Probe's cell as JSON ("{...}"), from its base on baseapp01. */
void cw_cell_json(rc_cluster *c, int32_t id, char *out, size_t n);
/* A mailbox of entity id's `component` (CELL, CELL_VIA_BASE, ...) naming the process at
 * addr, as JSON; the type taken from a CELL mailbox JSON of the same entity. */
void cw_mailbox_json(char *out, size_t n, int32_t id, const char *addr, const char *component,
                     const char *cell);

/* A Probe base on baseapp01 whose cell is made next to the cell near_json (a CELL mailbox
 * JSON; NULL: in a new space); returns once its base heard getCell (within ms). */
int32_t cw_probe_with_cell(rc_cluster *c, const char *label, const char *near_json, int ms);
/* A Probe whose cell is made next to the cell of Probe `near`. */
int32_t cw_probe_near(rc_cluster *c, int32_t near, const char *label, int ms);
/* A Probe with a cell in a new space: its id, the cellapp holding its real (waited for), its
 * space. */
int32_t cw_probe_in_new_space(rc_cluster *c, const char *label, int *holder, int32_t *space,
                              int ms);

/* Kill cellapp i at once with SIGKILL (rc_stop leaves it alone afterwards). */
void cw_kill_cellapp(rc_cluster *c, int i);

/* One cell of the manager's layout of a space. */
typedef struct {
    char name[16];
    float x0, x1, z0, z1;
} cw_rect;

/* The manager's layout of space (cells/spaces/<id>: "cellapp01 x[-inf,0) z[-inf,inf); ..."),
 * at most max cells into out: the count. */
int cw_layout(rc_cluster *c, int32_t space, cw_rect *out, int max);
/* Whether (x, z) lies in r (lower bounds in, upper out). */
bool cw_holds(const cw_rect *r, float x, float z);
/* The index of the cellapp called name; fails the test when there is none. */
int cw_cellapp_index(rc_cluster *c, const char *name);
/* The upper bound on x of name's (first) cell in the manager's layout of space; fails the
 * test when it has none. */
float cw_x_max_of(rc_cluster *c, int32_t space, const char *name);

/* Poll until id is in the view of witness w (aoi/viewIds on proc); fails the test after ms. */
void cw_wait_in_view(rc_cluster *c, const char *proc, int32_t w, int32_t id, int ms);
/* The witness w (on proc) never heard id leave its view ("-<id>;" in its aoiEvents). */
void cw_check_never_left(rc_cluster *c, const char *proc, int32_t w, int32_t id);
/* The witness w (on proc) heard id enter its view exactly once ("+<id>;" in its aoiEvents). */
void cw_check_entered_once(rc_cluster *c, const char *proc, int32_t w, int32_t id);

#endif
