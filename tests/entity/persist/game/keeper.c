/* The persistence tests' game: Keeper calls every persistence function of the engine API
 * and records what it heard in properties the tests read through watchers. */
#include <stdlib.h>
#include <string.h>

#include "common/entity_api.h"
#include "game.h"

static void set_reason(Keeper_base *self, const char *reason)
{
    free(self->lastReason);
    self->lastReason = strdup(reason ? reason : "");
}

int Keeper_base_onCreated(const mc_call_ctx *call, Keeper_base *self)
{
    /* A loaded base knows its database id before onCreated. */
    self->createdDbid = mc_databaseID(call);
    return 0;
}

int Keeper_base_bump(const mc_call_ctx *call, Keeper_base *self, int64_t n)
{
    self->counter += n;
    return 0;
}

int Keeper_base_setScratch(const mc_call_ctx *call, Keeper_base *self, uint32_t n)
{
    self->scratch = n;
    return 0;
}

static void on_saved(const mc_call_ctx *call, void *ud, int status, int64_t dbid,
                     const char *reason)
{
    Keeper_base *self = mc_self(call);
    if (!self)
        return;
    self->lastStatus = status;
    self->lastDbid = dbid;
    self->answers++;
    set_reason(self, reason);
}

int Keeper_base_save(const mc_call_ctx *call, Keeper_base *self)
{
    int rc = mc_writeToDB(call, on_saved, NULL);
    if (rc != MC_CALL_OK) {
        self->lastStatus = rc;
        self->answers++;
    }
    return 0;
}

/* saveEvery: a write per timer tick; the counter value it carried rides in ud. */
#define SAVE_TIMER_ARG 7

static void on_saved_one(const mc_call_ctx *call, void *ud, int status, int64_t dbid,
                         const char *reason)
{
    Keeper_base *self = mc_self(call);
    if (!self)
        return;
    int64_t carried = (int64_t)(intptr_t)ud;
    if (status == MC_CALL_OK) {
        self->acked++;
        if (carried > self->maxAcked)
            self->maxAcked = carried;
    } else {
        self->failed++;
    }
}

int Keeper_base_saveEvery(const mc_call_ctx *call, Keeper_base *self, float period,
                          uint32_t count)
{
    uint32_t id;
    self->toSave = count;
    return mc_addTimer(call, period, period, SAVE_TIMER_ARG, &id) == MC_CALL_OK ? 0 : -1;
}

int Keeper_base_onTimer(const mc_call_ctx *call, Keeper_base *self, uint32_t timerId,
                        int64_t userArg)
{
    if (userArg != SAVE_TIMER_ARG)
        return 0;
    if (self->toSave == 0) {
        mc_delTimer(call, timerId);
        return 0;
    }
    self->toSave--;
    self->counter++;
    if (mc_writeToDB(call, on_saved_one, (void *)(intptr_t)self->counter) != MC_CALL_OK)
        self->failed++;
    return 0;
}

static void on_loaded(const mc_call_ctx *call, void *ud, int status, mc_mailbox_ref base,
                      int64_t dbid, bool was_live, const char *reason)
{
    Keeper_base *self = mc_self(call);
    if (!self)
        return;
    self->lastStatus = status;
    self->lastDbid = dbid;
    self->loaded = base;
    self->loadedLive = was_live ? 1 : 0;
    self->answers++;
    set_reason(self, reason);
}

static int started(Keeper_base *self, int rc)
{
    if (rc != MC_CALL_OK) {
        self->lastStatus = rc;
        self->answers++;
    }
    return 0;
}

int Keeper_base_loadId(const mc_call_ctx *call, Keeper_base *self, int64_t dbid,
                       uint8_t anywhere)
{
    return started(self, anywhere ? load_Keeper_anywhere(call, dbid, on_loaded, NULL)
                                  : load_Keeper(call, dbid, on_loaded, NULL));
}

int Keeper_base_loadName(const mc_call_ctx *call, Keeper_base *self, const char *name,
                         uint8_t anywhere)
{
    return started(self, anywhere ? load_Keeper_anywhere_by_name(call, name, on_loaded, NULL)
                                  : load_Keeper_by_name(call, name, on_loaded, NULL));
}

int Keeper_base_makeCell(const mc_call_ctx *call, Keeper_base *self)
{
    /* NULL position and direction: the cell starts where cellData says (a loaded base:
     * where its cell was when it was written). */
    return mc_createInNewSpace(call, NULL, NULL) == MC_CALL_OK ? 0 : -1;
}

int Keeper_base_dropCell(const mc_call_ctx *call, Keeper_base *self)
{
    return mc_destroyCellEntity(call) == MC_CALL_OK ? 0 : -1;
}

int Keeper_base_quit(const mc_call_ctx *call, Keeper_base *self, uint8_t deleteFromDB,
                     uint8_t writeToDB)
{
    return mc_destroyBase(call, deleteFromDB != 0, writeToDB != 0) == MC_CALL_OK ? 0 : -1;
}

int Keeper_base_autoLoad(const mc_call_ctx *call, Keeper_base *self, uint8_t on)
{
    return mc_setAutoLoad(call, on != 0) == MC_CALL_OK ? 0 : -1;
}

int Keeper_base_dbid(const mc_call_ctx *call, Keeper_base *self, int64_t *out_dbid)
{
    *out_dbid = mc_databaseID(call);
    return 0;
}

int Keeper_cell_setNote(const mc_call_ctx *call, Keeper_cell *self, const char *text)
{
    free(self->note);
    self->note = strdup(text);
    self->hits++;
    return self->note ? 0 : -1;
}

int Keeper_cell_moveTo(const mc_call_ctx *call, Keeper_cell *self, float x, float y, float z)
{
    mc_vector3 p = {x, y, z};
    return mc_setPosition(call, p) == MC_CALL_OK ? 0 : -1;
}
