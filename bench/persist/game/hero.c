/* persist-bench's game: a Hero created with spawnCount creates that many Heroes on its
 * baseapp, each with its persistent properties filled and `left` writes to make; each Hero
 * writes itself with writeToDB, the next write when the previous one is acknowledged, so the
 * baseapp has as many writes in flight as there are Heroes. The bench reads the baseapp's
 * db/writesOk watcher. */
#include <stdio.h>
#include <string.h>

#include "common/entity_api.h"
#include "game.h"

static void written(const mc_call_ctx *call, void *ud, int status, int64_t dbid,
                    const char *reason)
{
    (void)ud;
    (void)dbid;
    (void)reason;
    Hero_base *self = mc_self(call);
    if (!self)
        return;
    if (status != MC_CALL_OK)
        self->failures++;
    if (self->left > 0) {
        self->left--;
        if (mc_writeToDB(call, written, NULL) != MC_CALL_OK)
            self->failures++;
    }
}

static void set_str(mc_value *v, mc_type_kind kind, const char *text)
{
    memset(v, 0, sizeof *v);
    mc_value_set_bytes(v, kind, text, strlen(text));
}

static void spawn(const mc_call_ctx *call, uint32_t count, uint32_t writes)
{
    for (uint32_t i = 0; i < count; i++) {
        char name[32], title[48], guild[48], motto[48];
        snprintf(name, sizeof name, "hero%u", i);
        snprintf(title, sizeof title, "title of hero %u", i);
        snprintf(guild, sizeof guild, "guild of hero %u", i);
        snprintf(motto, sizeof motto, "motto of hero %u", i);
        mc_value vname, vtitle, vguild, vmotto;
        set_str(&vname, MC_TYPE_STRING, name);
        set_str(&vtitle, MC_TYPE_STRING, title);
        set_str(&vguild, MC_TYPE_STRING, guild);
        set_str(&vmotto, MC_TYPE_UNICODE_STRING, motto);
        mc_value vleft = {.kind = MC_TYPE_UINT32, .as.u = writes};
        mc_value vlevel = {.kind = MC_TYPE_INT32, .as.i = (int64_t)(i % 100)};
        mc_value vxp = {.kind = MC_TYPE_UINT64, .as.u = (uint64_t)i * 1000u};
        mc_value vhome = {.kind = MC_TYPE_VECTOR3, .as.vec = {(float)i, 1.5f, -2.0f}};
        mc_prop_init props[] = {
            {"name", &vname}, {"title", &vtitle}, {"guild", &vguild}, {"motto", &vmotto},
            {"left", &vleft}, {"level", &vlevel}, {"xp", &vxp},      {"home", &vhome},
        };
        mc_mailbox_ref mb;
        mc_createBaseLocally(call, "Hero", props, sizeof props / sizeof props[0], &mb);
        mc_value_free(&vname);
        mc_value_free(&vtitle);
        mc_value_free(&vguild);
        mc_value_free(&vmotto);
    }
}

int Hero_base_onCreated(const mc_call_ctx *call, Hero_base *self)
{
    if (self->spawnCount > 0)
        spawn(call, self->spawnCount, self->spawnWrites);
    if (self->left > 0) {
        self->left--;
        if (mc_writeToDB(call, written, NULL) != MC_CALL_OK)
            self->failures++;
    }
    return 0;
}
