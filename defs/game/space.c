/* Example game: the Space's base and cell handlers. */
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

int Space_base_getCell(const mc_call_ctx *call, Space_base *self, mc_mailbox_ref *out_cell)
{
    (void)self;
    *out_cell = mc_base_cell(call);
    return 0;
}
