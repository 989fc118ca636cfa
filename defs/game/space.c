/* Example game: the Space's base and cell handlers. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/entity_api.h"
#include "game.h"
#include "tagged.h"

int Space_base_onTimer(const mc_call_ctx *call, Space_base *self, uint32_t arg1, int64_t arg2)
{
    (void)call;
    (void)arg1;
    /* The first timer of a space that was never loaded stamps its creation time (seconds in
     * the user argument). */
    if (self->createdAt == 0.0)
        self->createdAt = (double)arg2;
    return 0;
}

int Space_base_onLoaded(const mc_call_ctx *call, Space_base *self)
{
    (void)call;
    self->createdAt = (double)mc_clock_now_us() / 1e6;
    return 0;
}

int Space_cell_addTag(const mc_call_ctx *call, Space_cell *self, const char *arg1)
{
    (void)call;
    return tagged_add(&self->tags, arg1);
}

int Space_cell_addEntity(const mc_call_ctx *call, Space_cell *self, mc_mailbox_ref entity,
                         mc_vector3 position)
{
    (void)call;
    (void)position;
    if (mc_mailbox_ref_is_none(&entity) || mc_mailbox_ref_component(&entity) != MC_COMPONENT_CELL)
        return -1;
    if (self->population == UINT16_MAX)
        return -1;
    self->population++;
    return 0;
}

/* A new Space makes itself known cluster-wide by its name ("world" when it has none) and
 * opens its space on the least-loaded cellapp. */
int Space_base_onCreated(const mc_call_ctx *call, Space_base *self)
{
    const char *name = self->spaceName && self->spaceName[0] ? self->spaceName : "world";
    if (mc_registerGlobally(call, name, NULL, NULL) != MC_CALL_OK)
        return -1;
    return mc_createInNewSpace(call, NULL, NULL) == MC_CALL_OK ? 0 : -1;
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
    return 0;
}

/* populate: count non-player Avatars created here (each finds the "world" and takes a cell
 * at its spawn point, as players do), spread evenly over a disc of the radius (a sunflower
 * spiral), each wandering around its spot. */
int Space_base_populate(const mc_call_ctx *call, Space_base *self, uint16_t count, float radius,
                        float wander)
{
    (void)self;
    if (!(radius >= 0) || !(wander >= 0) || radius > 1e5f || wander > 1e5f)
        return -1;
    for (uint16_t i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "npc%d-%u", (int)call->self.id, (unsigned)i);
        float r = radius * sqrtf(((float)i + 0.5f) / (float)count);
        float a = 2.39996323f * (float)i; /* the golden angle */
        mc_value vname, vspawn, vwander;
        memset(&vname, 0, sizeof vname);
        memset(&vspawn, 0, sizeof vspawn);
        memset(&vwander, 0, sizeof vwander);
        if (mc_value_set_bytes(&vname, MC_TYPE_STRING, name, strlen(name)) != 0)
            return -1;
        vspawn.kind = MC_TYPE_VECTOR3;
        vspawn.as.vec[0] = r * cosf(a);
        vspawn.as.vec[1] = 0;
        vspawn.as.vec[2] = r * sinf(a);
        vwander.kind = MC_TYPE_FLOAT32;
        vwander.as.f = wander;
        mc_prop_init init[] = {{"name", &vname}, {"spawnPoint", &vspawn},
                               {"wanderRadius", &vwander}};
        mc_mailbox_ref made;
        int rc = mc_createBaseLocally(call, "Avatar", init, 3, &made);
        mc_value_free(&vname);
        if (rc != MC_CALL_OK)
            return -1;
    }
    return 0;
}
