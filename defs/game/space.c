/* Example game: the Space's base and cell handlers (the idioms: defs/game/account.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "game.h"

int Space_base_onTimer(const mc_call_ctx *call, Space_base *self, uint32_t timerId,
                       int64_t userArg)
{
    /* The first timer of a space that was never loaded stamps its creation time (seconds in
     * the user argument). */
    if (self->createdAt == 0.0)
        self->createdAt = (double)userArg;
    return MC_CALL_OK;
}

int Space_base_onLoaded(const mc_call_ctx *call, Space_base *self)
{
    self->createdAt = (double)mc_clock_now_us() / 1e6;
    return MC_CALL_OK;
}

int Space_cell_addTag(const mc_call_ctx *call, Space_cell *self, const char *tag)
{
    return TAGS_append(&self->tags, tag);
}

int Space_cell_addEntity(const mc_call_ctx *call, Space_cell *self, mc_mailbox_ref entity,
                         mc_vector3 position)
{
    if (mc_mailbox_ref_is_none(&entity) || mc_mailbox_ref_component(&entity) != MC_COMPONENT_CELL)
        return MC_CALL_ERR_MAILBOX;
    if (self->population == UINT16_MAX)
        return MC_CALL_ERR_BUSY;
    self->population++;
    return MC_CALL_OK;
}

/* A new Space makes itself known cluster-wide by its name ("world" when it has none) and
 * opens its space on the least-loaded cellapp. */
int Space_base_onCreated(const mc_call_ctx *call, Space_base *self)
{
    const char *name = self->spaceName && self->spaceName[0] ? self->spaceName : "world";
    int rc = mc_registerGlobally(call, name, NULL, NULL);
    return rc == MC_CALL_OK ? mc_createInNewSpace(call, NULL, NULL) : rc;
}

/* The k-th newcomer's spawn point: spread evenly over the disc of spawnRadius around the
 * origin (a low-discrepancy sequence: consecutive arrivals land far apart and any number of
 * them covers the disc uniformly), so that a crowd logging in at once is not one crowd. */
static mc_vector3 spawn_point(float radius, uint32_t k)
{
    if (!(radius > 0) || radius > 1e5f)
        return (mc_vector3){0, 0, 0}; /* none, or not a sane one (NaN, huge): the origin */
    /* the plastic number's two-dimensional additive recurrence */
    double u = fmod(0.5 + 0.7548776662466927 * (double)k, 1.0);
    double v = fmod(0.5 + 0.5698402909980532 * (double)k, 1.0);
    double r = (double)radius * sqrt(u), a = 6.283185307179586 * v;
    return (mc_vector3){(float)(r * cos(a)), 0, (float)(r * sin(a))};
}

/* getCell: the space's cell, and where a newcomer enters it. */
int Space_base_getCell(const mc_call_ctx *call, Space_base *self, mc_mailbox_ref *out_cell,
                       mc_vector3 *out_spawn)
{
    *out_cell = mc_base_cell(call);
    *out_spawn = spawn_point(self->spawnRadius, self->arrivals++);
    return MC_CALL_OK;
}

/* populate: count non-player Avatars created here (each finds the "world" and takes a cell
 * at its spawn point, as players do), spread evenly over a disc of the radius (a sunflower
 * spiral), each wandering around its spot. */
int Space_base_populate(const mc_call_ctx *call, Space_base *self, uint16_t count, float radius,
                        float wander)
{
    if (!(radius >= 0) || !(wander >= 0) || radius > 1e5f || wander > 1e5f)
        return MC_CALL_ERR_ARGS;
    Avatar_new npc;
    int rc = init_Avatar_new(call, &npc);
    for (uint16_t i = 0; i < count && rc == MC_CALL_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "npc%d-%u", (int)call->self.id, (unsigned)i);
        float r = radius * sqrtf(((float)i + 0.5f) / (float)count);
        float a = 2.39996323f * (float)i; /* the golden angle */
        npc.cell.spawnPoint = (mc_vector3){r * cosf(a), 0, r * sinf(a)};
        npc.cell.wanderRadius = wander;
        mc_mailbox_ref made;
        if ((rc = mc_str_set(&npc.base.name, name)) == MC_CALL_OK)
            rc = create_Avatar_locally(call, &npc, &made);
    }
    free_Avatar_new(&npc); /* also after a failed init: it leaves nothing to free */
    return rc;
}
