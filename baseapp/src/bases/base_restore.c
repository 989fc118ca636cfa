/* Cells restored after their cellapp died (docs/WORLD.md "Cells restored").
 *
 * The copy: a cellapp sends each real cell's data to its base whenever it changed
 * (CELL_COPY: space, position, direction, every cell property; cellapp/src/cell_copy.c),
 * and the base keeps it as its cellData, accepted only from where its cell is.
 *
 * The restore: when the manager declares a cellapp dead, each base whose live cell was there
 * asks the manager for its space's home (QUERY_SPACE_HOME: the least-loaded live cellapp the
 * first time that space is asked about, the same one for every later ask, from any baseapp),
 * and sends it RESTORE_CELL: the cell comes back in a space of the same id, with the same
 * entity id, position, direction and properties, from the copy. Meanwhile its cell state is
 * "creating", so calls to the cell (CELL_VIA_BASE) wait in its queue (bounded by
 * --cellQueueMax) and go once it is back. Then the game hears onRestoreCell and a client of
 * the base is introduced to the world again (CLIENT_ATTACHED). A cell that cannot be
 * restored (--restoreLostCells off, its base was destroying it, no live cellapp, the
 * cellapp refused) is lost as before: onLoseCell, counted by reason. */
#include "app.h"
#include "bases.h"
#include "common/log.h"
#include "entity/restore_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct base_restore {
    bool on; /* --restoreLostCells */
    uint64_t copies_in, copies_bytes, copies_stale, copies_malformed;
    uint64_t started, restored, lost_off, lost_destroying, lost_no_cellapp, lost_refused;
} base_restore;

const mc_option base_restore_options[BASE_RESTORE_OPTION_COUNT] = {
    {"restoreLostCells", MC_OPT_BOOL, "true",
     "when a cellapp dies, each base whose cell was there has it made again on a live "
     "cellapp, in a space of the same id, from the copy of its cell it keeps (false: the base "
     "only hears onLoseCell)"},
};

static base_restore *state(mc_engine *e) { return base_restore_of(e); }

int base_restore_init(mc_engine *e, char *err, size_t errlen)
{
    baseapp *a = baseapp_of(e);
    base_restore *r = a ? calloc(1, sizeof *r) : NULL;
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    a->lost_cells = r;
    mc_server *srv = mc_engine_server(e);
    r->on = mc_config_get_bool(mc_server_config(srv), "restoreLostCells");
    mc_watchers *w = mc_server_watchers(srv);
    int bad = mc_watch_add_uint(w, "cells/copiesIn", &r->copies_in, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/copyBytesIn", &r->copies_bytes, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/copiesStale", &r->copies_stale, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/copiesMalformed", &r->copies_malformed,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/restoring", &r->started, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/restored", &r->restored, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/lost/off", &r->lost_off, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/lost/destroying", &r->lost_destroying,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/lost/noCellapp", &r->lost_no_cellapp,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/lost/refused", &r->lost_refused, MC_WATCH_READ_ONLY);
    if (bad) {
        snprintf(err, errlen, "cannot publish the cells/ watchers");
        return -1;
    }
    return 0;
}

void base_restore_free(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    if (!a)
        return;
    free(a->lost_cells);
    a->lost_cells = NULL;
}

/* ---- the copy ------------------------------------------------------------------------ */

void base_on_cell_copy(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    base_restore *r = state(e);
    size_t len = mc_istream_remaining(is);
    mc_cell_copy_head h;
    char why[MC_REASON_MAX] = "";
    if (!mc_cell_copy_decode(is, &h, why, sizeof why)) {
        r->copies_malformed++;
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS, "%s", why);
        return;
    }
    mc_entity *ent = mc_engine_find(e, h.entity_id);
    mc_address cellapp;
    if (ent)
        mc_mailbox_address(&ent->cell, &cellapp);
    if (!ent || ent->part != MC_PART_BASE || ent->cell_state != MC_CELL_LIVE || o->local ||
        !mc_address_equal(&cellapp, &o->addr)) {
        /* a copy overtaken by a move, a destroy, a death: not from where its cell is now
         * (normal, so counted apart and not logged; a request hears why) */
        r->copies_stale++;
        mc_engine_reply_status(e, o, MC_CALL_ERR_NO_ENTITY, "CELL_COPY: no such cell from there");
        return;
    }
    void *fresh = calloc(1, ent->gt->props_size[MC_PART_CELL] + 1);
    if (!fresh || ent->gt->props_init(mc_engine_defs(e), MC_PART_CELL, fresh) != 0) {
        free(fresh);
        MC_ERROR("%s %d: out of memory taking its cell's copy", ent->td->name, (int)ent->id);
        return;
    }
    if (ent->gt->props_decode(mc_engine_defs(e), MC_PART_CELL, fresh, false, is, why,
                              sizeof why) != MC_CALL_OK ||
        !mc_istream_done(is)) {
        ent->gt->props_free(MC_PART_CELL, fresh);
        free(fresh);
        r->copies_malformed++;
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "CELL_COPY for %d: %s", (int)h.entity_id,
                         why[0] ? why : "trailing bytes after the cell properties");
        return;
    }
    ent->gt->props_free(MC_PART_CELL, ent->cell_data);
    free(ent->cell_data);
    ent->cell_data = fresh;
    ent->cell_position = h.position;
    ent->cell_direction = h.direction;
    ent->cell_space = h.space_id;
    r->copies_in++;
    r->copies_bytes += len;
}

static void get_copy(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    char text[160] = "?";
    if (ent)
        snprintf(text, sizeof text, "space %d at %g %g %g", (int)ent->cell_space,
                 ent->cell_position.x, ent->cell_position.y, ent->cell_position.z);
    out->as.s = strdup(text);
}

void base_restore_add_entity_watchers(mc_engine *e, const char *dir, void *ref)
{
    char path[MC_WATCH_MAX_PATH];
    snprintf(path, sizeof path, "%s/cellCopy", dir);
    mc_watch_add(mc_server_watchers(mc_engine_server(e)), path, MC_WATCH_STRING,
                 MC_WATCH_READ_ONLY, get_copy, NULL, ref);
}

/* ---- the restore --------------------------------------------------------------------- */

/* The bases of one space waiting for its home. */
typedef struct {
    int32_t space;
    size_t n;
    int32_t ids[];
} space_wait;

static void lost(mc_engine *e, mc_entity *ent, uint64_t *counter, const char *why)
{
    (*counter)++;
    MC_INFO("%s %d: its cell is not restored (%s): onLoseCell", ent->td->name, (int)ent->id,
            why);
    base_lose_cell(e, ent, "its cellapp died");
}

void base_restore_failed(mc_engine *e, mc_entity *ent, int status, const char *why)
{
    base_restore *r = state(e);
    ent->cell_state = MC_CELL_NONE;
    memset(&ent->cell, 0, sizeof ent->cell);
    base_fail_cell_queue(e, ent, MC_CALL_ERR_NO_ENTITY, "its cell could not be restored");
    char text[MC_REASON_MAX + 64];
    snprintf(text, sizeof text, "%s: %s", mc_call_status_name(status), why ? why : "");
    lost(e, ent, status == MC_CALL_ERR_UNAVAILABLE ? &r->lost_no_cellapp : &r->lost_refused,
         text);
}

void base_restore_done(mc_engine *e, mc_entity *ent)
{
    state(e)->restored++;
    MC_INFO("%s %d: its cell is restored in space %d", ent->td->name, (int)ent->id,
            (int)ent->cell_space);
    mc_engine_run_hook(e, ent, MC_HOOK_RESTORE_CELL, NULL);
}

static bool restoring(const mc_entity *ent)
{
    return ent && ent->part == MC_PART_BASE && !ent->in_reap &&
           ent->cell_state == MC_CELL_CREATING && ent->cell_space > 0;
}

static void on_home(mc_engine *e, void *ctx, const char *addr, const char *reason)
{
    space_wait *w = ctx;
    mc_address a;
    bool ok = addr && mc_address_parse(addr, &a) == MC_OK;
    char why[MC_REASON_MAX];
    snprintf(why, sizeof why, "no cellapp for space %d: %s", (int)w->space,
             reason ? reason : "bad address");
    if (ok)
        MC_INFO("restoring %zu cells of space %d on the cellapp at %s", w->n, (int)w->space,
                addr);
    for (size_t i = 0; i < w->n; i++) {
        mc_entity *ent = mc_engine_find(e, w->ids[i]);
        if (!restoring(ent) || ent->cell_space != w->space)
            continue; /* destroyed meanwhile */
        int rc = ok ? base_send_restore_cell(e, ent, &a, w->space) : MC_CALL_ERR_UNAVAILABLE;
        if (rc != MC_CALL_OK)
            base_restore_failed(e, ent, rc, ok ? mc_call_status_name(rc) : why);
    }
    free(w);
}

static int cmp_space(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* ids sorted by space: one ask of the manager per space. */
static void ask_homes(mc_engine *e, int32_t (*pairs)[2], size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && pairs[j][0] == pairs[i][0])
            j++;
        space_wait *w = malloc(sizeof *w + (j - i) * sizeof w->ids[0]);
        int rc = MC_CALL_ERR_BUSY;
        if (w) {
            w->space = pairs[i][0];
            w->n = j - i;
            for (size_t k = i; k < j; k++)
                w->ids[k - i] = pairs[k][1];
            rc = mc_engine_pick_space_home(e, w->space, on_home, w);
        }
        if (rc != MC_CALL_OK) {
            free(w);
            for (size_t k = i; k < j; k++) {
                mc_entity *ent = mc_engine_find(e, pairs[k][1]);
                if (restoring(ent))
                    base_restore_failed(e, ent, MC_CALL_ERR_UNAVAILABLE,
                                        "cannot ask the manager for a cellapp");
            }
        }
        i = j;
    }
}

void base_restore_lost(mc_engine *e, const int32_t *ids, size_t n)
{
    base_restore *r = state(e);
    int32_t (*pairs)[2] = malloc((n ? n : 1) * sizeof *pairs);
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        mc_entity *ent = mc_engine_find(e, ids[i]);
        if (!ent || ent->in_reap ||
            (ent->cell_state != MC_CELL_LIVE && ent->cell_state != MC_CELL_DESTROYING))
            continue;
        if (!r->on)
            lost(e, ent, &r->lost_off, "--restoreLostCells is off");
        else if (ent->cell_state == MC_CELL_DESTROYING || ent->destroying)
            lost(e, ent, &r->lost_destroying, "its base was destroying it");
        else if (!pairs || ent->cell_space <= 0)
            lost(e, ent, &r->lost_refused,
                 !pairs ? "out of memory" : "no space known: it moved and sent no copy since");
        else {
            /* calls to the cell wait in its queue from now on */
            ent->cell_state = MC_CELL_CREATING;
            memset(&ent->cell, 0, sizeof ent->cell);
            r->started++;
            pairs[np][0] = ent->cell_space;
            pairs[np][1] = ent->id;
            np++;
        }
    }
    if (np) {
        qsort(pairs, np, sizeof *pairs, cmp_space);
        MC_WARNING("restoring %zu cells whose cellapp died", np);
        ask_homes(e, pairs, np);
    }
    free(pairs);
}
