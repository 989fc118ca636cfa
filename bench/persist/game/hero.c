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

/* count Heroes here, each with its persistent properties filled and `writes` writes to make. */
static void spawn(const mc_call_ctx *call, uint32_t count, uint32_t writes)
{
    Hero_new hero;
    if (init_Hero_new(call, &hero) != MC_CALL_OK)
        return;
    for (uint32_t i = 0; i < count; i++) {
        char name[32], title[48], guild[48], motto[48];
        snprintf(name, sizeof name, "hero%u", i);
        snprintf(title, sizeof title, "title of hero %u", i);
        snprintf(guild, sizeof guild, "guild of hero %u", i);
        snprintf(motto, sizeof motto, "motto of hero %u", i);
        if (mc_str_set(&hero.base.name, name) != MC_CALL_OK ||
            mc_str_set(&hero.base.title, title) != MC_CALL_OK ||
            mc_str_set(&hero.base.guild, guild) != MC_CALL_OK ||
            mc_str_set(&hero.base.motto, motto) != MC_CALL_OK)
            break;
        hero.base.left = writes;
        hero.base.level = (int32_t)(i % 100);
        hero.base.xp = (uint64_t)i * 1000u;
        hero.base.home = (mc_vector3){(float)i, 1.5f, -2.0f};
        mc_mailbox_ref mb;
        create_Hero_locally(call, &hero, &mb);
    }
    free_Hero_new(&hero);
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
