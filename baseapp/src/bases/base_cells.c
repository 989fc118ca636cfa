/* A base's cell: created in the space of another cell or in a new space (CREATE_CELL to the
 * cellapp), destroyed on request (DESTROY_CELL), lost when the cell goes (CELL_GONE) or its
 * cellapp dies. The base keeps cellData: what its next cell starts from. */
#include "app.h"
#include "bases.h"
#include "common/log.h"
#include "entity/move_wire.h"
#include "entity/restore_wire.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mc_entity *calling_base(const mc_call_ctx *call, mc_engine **e)
{
    *e = mc_engine_of(call);
    return mc_engine_entity_of(call, MC_PART_BASE);
}

static bool finite3(const mc_vector3 *v)
{
    return isfinite(v->x) && isfinite(v->y) && isfinite(v->z);
}

/* The answer to CREATE_CELL. */
typedef struct {
    int32_t id;
    mc_address cellapp;
    int32_t restore_space; /* RESTORE_CELL into that space (base_restore.c); 0: CREATE_CELL */
} cell_wait;

/* Persistence hears of it (a fenced copy's next step). */
static void cell_change(mc_engine *e, int32_t id)
{
    const base_hooks *hk = base_hooks_of(e);
    if (hk && hk->cell_change)
        hk->cell_change(e, id);
}

static void cell_failed(mc_engine *e, mc_entity *ent, int status, const char *reason)
{
    ent->cell_state = MC_CELL_NONE;
    memset(&ent->cell, 0, sizeof ent->cell);
    MC_INFO("%s %d: no cell (%s: %s)", ent->td->name, (int)ent->id, mc_call_status_name(status),
            reason);
    base_fail_cell_queue(e, ent, MC_CALL_ERR_NO_ENTITY, "its cell could not be created");
    int32_t id = ent->id;
    mc_engine_run_hook(e, ent, MC_HOOK_CREATE_CELL_FAILURE, reason);
    cell_change(e, id); /* a fenced copy goes once its cell is gone */
}

static void on_cell_created(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    cell_wait *w = ctx;
    mc_entity *ent = mc_engine_find(e, w->id);
    char why[MC_REASON_MAX] = "";
    int32_t space = 0;
    if (status == MC_CALL_OK) {
        int8_t st = mc_read_i8(payload);
        space = mc_read_i32(payload);
        if (!mc_read_string_into(payload, why, sizeof why))
            st = MC_CALL_ERR_ARGS, snprintf(why, sizeof why, "malformed answer to CREATE_CELL");
        status = st;
    } else {
        snprintf(why, sizeof why, "%s", mc_call_status_name(status));
    }
    if (!ent || ent->cell_state != MC_CELL_CREATING) {
        free(w);
        return; /* the engine is freeing (the base is gone) */
    }
    if (status != MC_CALL_OK) {
        if (w->restore_space)
            base_restore_failed(e, ent, status, why);
        else
            cell_failed(e, ent, status, why);
        free(w);
        return;
    }
    mc_mailbox_ref_init(&ent->cell, ent->id, w->cellapp.ip, w->cellapp.port, MC_COMPONENT_CELL,
                        ent->type);
    ent->cell_state = MC_CELL_LIVE;
    ent->cell_space = space;
    MC_DEBUG("%s %d: cell created in space %d", ent->td->name, (int)ent->id, (int)space);
    bool restored = w->restore_space != 0;
    free(w);
    int32_t id = ent->id;
    const base_hooks *hk = base_hooks_or_none(e);
    if (hk->cell_space)
        hk->cell_space(e, id, space); /* where restored cells of that space go (db_cells.c) */
    base_flush_cell_queue(e, ent);
    if (hk->cell_live)
        hk->cell_live(e, ent); /* the new cell serves its client, if any: a witness */
    if (restored)
        base_restore_done(e, ent);
    else
        mc_engine_run_hook(e, ent, MC_HOOK_GET_CELL, NULL);
    cell_change(e, id); /* a copy fenced while its cell was being created */
}

/* Send CREATE_CELL for ent to the cellapp at addr (or RESTORE_CELL into restore_space). */
static int send_cell(mc_engine *e, mc_entity *ent, const mc_address *addr, int32_t near_id,
                     int32_t restore_space)
{
    mc_ostream os;
    mc_ostream_init(&os);
    if (restore_space)
        mc_restore_cell_encode(&os, restore_space);
    mc_create_cell_head head = {.entity_id = ent->id, .type = ent->type, .near_id = near_id,
                                .base = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE),
                                .position = ent->cell_position,
                                .direction = ent->cell_direction};
    mc_create_cell_encode(&os, &head);
    char why[MC_REASON_MAX];
    if (ent->gt->props_encode(mc_engine_defs(e), MC_PART_CELL, ent->cell_data, false, &os, why,
                              sizeof why) != MC_CALL_OK) {
        MC_WARNING("%s %d: cellData does not encode: %s", ent->td->name, (int)ent->id, why);
        mc_ostream_free(&os);
        return MC_CALL_ERR_ARGS;
    }
    cell_wait *w = malloc(sizeof *w);
    int rc = w ? MC_CALL_OK : MC_CALL_ERR_BUSY;
    if (w) {
        w->id = ent->id;
        w->cellapp = *addr;
        w->restore_space = restore_space;
        rc = mc_engine_request(e, addr, restore_space ? MC_MSG_RESTORE_CELL : MC_MSG_CREATE_CELL,
                               os.data, os.size, on_cell_created, w);
        if (rc != MC_CALL_OK)
            free(w);
    }
    mc_ostream_free(&os);
    return rc;
}

static int send_create_cell(mc_engine *e, mc_entity *ent, const mc_address *addr,
                            int32_t near_id)
{
    return send_cell(e, ent, addr, near_id, 0);
}

int base_send_restore_cell(mc_engine *e, mc_entity *ent, const mc_address *addr, int32_t space)
{
    return send_cell(e, ent, addr, 0, space);
}

static int prepare(mc_entity *ent, const mc_vector3 *position, const mc_vector3 *direction)
{
    if (ent->cell_state != MC_CELL_NONE || ent->destroying)
        return MC_CALL_ERR_STATE;
    if ((position && !finite3(position)) || (direction && !finite3(direction)))
        return MC_CALL_ERR_ARGS;
    if (position)
        ent->cell_position = *position;
    if (direction)
        ent->cell_direction = *direction;
    return MC_CALL_OK;
}

int base_op_create_cell(const mc_call_ctx *call, const mc_mailbox_ref *near,
                        const mc_vector3 *position, const mc_vector3 *direction)
{
    mc_engine *e;
    mc_entity *ent = calling_base(call, &e);
    if (!ent)
        return MC_CALL_ERR_STATE;
    return base_create_cell(e, ent, near, position, direction);
}

int base_create_cell(mc_engine *e, mc_entity *ent, const mc_mailbox_ref *near,
                     const mc_vector3 *position, const mc_vector3 *direction)
{
    if (!near || mc_mailbox_ref_is_none(near) ||
        mc_mailbox_ref_component(near) != MC_COMPONENT_CELL)
        return MC_CALL_ERR_MAILBOX;
    int rc = prepare(ent, position, direction);
    if (rc != MC_CALL_OK)
        return rc;
    mc_address addr;
    mc_mailbox_address(near, &addr);
    rc = send_create_cell(e, ent, &addr, near->id);
    if (rc == MC_CALL_OK)
        ent->cell_state = MC_CELL_CREATING;
    return rc;
}

static void on_cellapp_picked(mc_engine *e, void *ctx, const char *addr, const char *reason)
{
    int32_t id = (int32_t)(intptr_t)ctx;
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent || ent->cell_state != MC_CELL_CREATING)
        return;
    char why[MC_REASON_MAX];
    mc_address a;
    if (!addr || mc_address_parse(addr, &a) != MC_OK) {
        snprintf(why, sizeof why, "no cellapp: %s", reason ? reason : "bad address");
        cell_failed(e, ent, MC_CALL_ERR_UNAVAILABLE, why);
        return;
    }
    int rc = send_create_cell(e, ent, &a, 0);
    if (rc != MC_CALL_OK)
        cell_failed(e, ent, rc, mc_call_status_name(rc));
}

int base_op_create_in_new_space(const mc_call_ctx *call, const mc_vector3 *position,
                                const mc_vector3 *direction)
{
    mc_engine *e;
    mc_entity *ent = calling_base(call, &e);
    if (!ent)
        return MC_CALL_ERR_STATE;
    return base_create_in_new_space(e, ent, position, direction);
}

int base_create_in_new_space(mc_engine *e, mc_entity *ent, const mc_vector3 *position,
                             const mc_vector3 *direction)
{
    int rc = prepare(ent, position, direction);
    if (rc != MC_CALL_OK)
        return rc;
    rc = mc_engine_pick(e, MC_ROLE_CELLAPP, on_cellapp_picked, (void *)(intptr_t)ent->id);
    if (rc == MC_CALL_OK)
        ent->cell_state = MC_CELL_CREATING; /* calls on base.cell wait from now on */
    return rc;
}

int base_op_destroy_cell(const mc_call_ctx *call)
{
    mc_engine *e;
    mc_entity *ent = calling_base(call, &e);
    return ent ? base_destroy_cell(e, ent) : MC_CALL_ERR_STATE;
}

int base_destroy_cell(mc_engine *e, mc_entity *ent)
{
    if (ent->cell_state != MC_CELL_LIVE)
        return MC_CALL_ERR_STATE;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_destroy_cell_encode(&os, ent->id);
    mc_address addr;
    mc_mailbox_address(&ent->cell, &addr);
    int rc = mc_engine_send(e, &addr, MC_MSG_DESTROY_CELL, os.data, os.size);
    mc_ostream_free(&os);
    if (rc == MC_CALL_OK)
        ent->cell_state = MC_CELL_DESTROYING;
    return rc;
}

void base_lose_cell(mc_engine *e, mc_entity *ent, const char *why)
{
    ent->cell_state = MC_CELL_NONE;
    ent->cell_space = 0;
    memset(&ent->cell, 0, sizeof ent->cell);
    MC_DEBUG("%s %d lost its cell (%s)", ent->td->name, (int)ent->id, why);
    int32_t id = ent->id;
    mc_engine_run_hook(e, ent, MC_HOOK_LOSE_CELL, NULL);
    cell_change(e, id); /* a fenced copy goes once its cell is gone */
}

void base_on_cell_gone(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    mc_cell_gone_head head;
    bool ok = mc_cell_gone_decode(is, &head);
    int32_t id = head.entity_id;
    uint8_t why = head.why;
    mc_vector3 pos = head.position, dir = head.direction;
    mc_entity *ent = ok ? mc_engine_find(e, id) : NULL;
    mc_address cellapp;
    if (ent)
        mc_mailbox_address(&ent->cell, &cellapp);
    if (!ent || (ent->cell_state != MC_CELL_LIVE && ent->cell_state != MC_CELL_DESTROYING) ||
        !mc_address_equal(&cellapp, &o->addr)) {
        /* A request (CELL_GONE is one-way) hears the refusal rather than waiting in vain. */
        mc_engine_refuse(e, o, ok ? MC_REFUSE_NO_ENTITY : MC_REFUSE_MALFORMED,
                         ok ? MC_CALL_ERR_NO_ENTITY : MC_CALL_ERR_ARGS,
                         "CELL_GONE for %d ignored (%s)", (int)id,
                         ok ? "no such cell from there" : "malformed");
        return;
    }
    char r[MC_REASON_MAX];
    /* The cell's last properties become cellData (kept as they were if they do not decode). */
    void *fresh = calloc(1, ent->gt->props_size[MC_PART_CELL] + 1);
    if (fresh && ent->gt->props_init(mc_engine_defs(e), MC_PART_CELL, fresh) == 0) {
        if (ent->gt->props_decode(mc_engine_defs(e), MC_PART_CELL, fresh, false, is, r,
                                  sizeof r) == MC_CALL_OK) {
            ent->gt->props_free(MC_PART_CELL, ent->cell_data);
            free(ent->cell_data);
            ent->cell_data = fresh;
            fresh = NULL;
            ent->cell_position = pos;
            ent->cell_direction = dir;
        } else {
            MC_WARNING("%s %d: its cell's last properties do not decode: %s", ent->td->name,
                       (int)ent->id, r);
            ent->gt->props_free(MC_PART_CELL, fresh);
        }
    }
    free(fresh);
    static const char *const whys[] = {"destroyed by its base", "destroyed itself",
                                       "its space was destroyed", "its cellapp shut down"};
    base_lose_cell(e, ent, why < 4 ? whys[why] : "?");
}

static void moved_answer(mc_engine *e, const mc_origin *o, int status, const char *why)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_write_i8(&os, (int8_t)status);
    mc_write_string(&os, why);
    mc_engine_reply(e, o, os.data, os.size);
    mc_ostream_free(&os);
}

void base_on_cell_moved(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    int32_t id;
    mc_mailbox_ref cell;
    char why[MC_REASON_MAX] = "";
    if (!mc_cell_moved_decode(mc_engine_defs(e), is, &id, &cell, why, sizeof why)) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        moved_answer(e, o, MC_CALL_ERR_ARGS, why);
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    mc_address now;
    if (ent)
        mc_mailbox_address(&ent->cell, &now);
    /* Only from where its cell is now (a DESTROY_CELL sent there is forwarded by it). */
    if (!ent || (ent->cell_state != MC_CELL_LIVE && ent->cell_state != MC_CELL_DESTROYING) ||
        o->local || !mc_address_equal(&now, &o->addr) ||
        mc_mailbox_ref_type(&cell) != ent->type) {
        snprintf(why, sizeof why, "CELL_MOVED for %d ignored: no such cell from there",
                 (int)id);
        mc_engine_count_refused(e, MC_REFUSE_NO_ENTITY);
        MC_INFO("%s", why);
        moved_answer(e, o, MC_CALL_ERR_NO_ENTITY, why);
        return;
    }
    ent->cell = cell;
    /* its space there is named by the new cellapp's first CELL_COPY: until then a restore
     * would not know where to go (base_restore.c loses such a cell rather than guess) */
    ent->cell_space = 0;
    char text[128];
    mc_engine_mailbox_text(e, &cell, text, sizeof text);
    MC_DEBUG("%s %d: its cell moved: %s", ent->td->name, (int)id, text);
    /* the answer follows, on this channel, every call relayed to the old address */
    moved_answer(e, o, MC_CALL_OK, "");
}

typedef struct {
    mc_address dead;
    mc_entity **lost;
    size_t n, cap;
} death_scan;

static void scan(void *ctx, mc_entity *ent)
{
    death_scan *d = ctx;
    if (ent->cell_state != MC_CELL_LIVE && ent->cell_state != MC_CELL_DESTROYING)
        return;
    mc_address a;
    mc_mailbox_address(&ent->cell, &a);
    if (!mc_address_equal(&a, &d->dead))
        return;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        mc_entity **l = realloc(d->lost, cap * sizeof *l);
        if (!l)
            return;
        d->lost = l;
        d->cap = cap;
    }
    d->lost[d->n++] = ent;
}

void base_on_peer_death(mc_engine *e, const char *addr)
{
    death_scan d = {0};
    if (mc_address_parse(addr, &d.dead) != MC_OK)
        return;
    mc_entity_table_each(mc_engine_table(e), scan, &d);
    if (d.n)
        MC_WARNING("%zu bases lost their cells: the cellapp at %s died", d.n, addr);
    /* Hooks may destroy bases: the restore looks each up again by id. */
    int32_t *ids = malloc((d.n ? d.n : 1) * sizeof *ids);
    for (size_t i = 0; ids && i < d.n; i++)
        ids[i] = d.lost[i]->id;
    free(d.lost);
    if (ids)
        base_restore_lost(e, ids, d.n);
    free(ids);
}
