/* Example game: the Avatar's base and cell handlers (the idioms: defs/game/account.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game.h"

/* Timed's onTimer (a def method that is the engine callback): the user argument is xp. */
int Avatar_base_onTimer(const mc_call_ctx *call, Avatar_base *self, uint32_t timerId,
                        int64_t userArg)
{
    self->xp += userArg;
    return MC_CALL_OK;
}

int Avatar_base_setAccount(const mc_call_ctx *call, Avatar_base *self, mc_mailbox_ref account)
{
    if (!mc_mailbox_ref_is_none(&account) &&
        mc_mailbox_ref_component(&account) != MC_COMPONENT_BASE)
        return MC_CALL_ERR_MAILBOX;
    self->account = account;
    return MC_CALL_OK;
}

/* logout: the player goes back to its Account (when it has a client and the Account is on
 * this baseapp, the client is given back to it: it hears its avatar list again). */
int Avatar_base_logout(const mc_call_ctx *call, Avatar_base *self)
{
    if (mc_hasClient(call) && !mc_mailbox_ref_is_none(&self->account))
        mc_giveClientTo(call, &self->account);
    memset(&self->account, 0, sizeof(self->account));
    return MC_CALL_OK;
}

/* Its player went (logged off, silent, kicked): the Account is told, the cell destroyed, then
 * the base (written a last time when it has a database id): the name can log in again. */
int Avatar_base_onClientDeath(const mc_call_ctx *call, Avatar_base *self)
{
    if (!mc_mailbox_ref_is_none(&self->account))
        send_Account_base_avatarLoggedOff(call->sink, &self->account);
    memset(&self->account, 0, sizeof(self->account));
    self->leaving = 1;
    mc_mailbox_ref cell = mc_base_cell(call);
    if (!mc_mailbox_ref_is_none(&cell))
        return mc_destroyCellEntity(call);
    return mc_destroy(call);
}

/* A cell that was still being created when the player went: it goes at once. */
int Avatar_base_onGetCell(const mc_call_ctx *call, Avatar_base *self)
{
    return self->leaving ? mc_destroyCellEntity(call) : MC_CALL_OK;
}

int Avatar_base_onLoseCell(const mc_call_ctx *call, Avatar_base *self)
{
    return self->leaving ? mc_destroy(call) : MC_CALL_OK;
}

/* Restored from its backup on another baseapp after its own died (same id, its last
 * backed-up state, timers and cell back): one whose player was leaving finishes leaving (its
 * cell first, as in onClientDeath); any other plays on where it is now. */
int Avatar_base_onRestore(const mc_call_ctx *call, Avatar_base *self)
{
    if (!self->leaving)
        return 0;
    mc_mailbox_ref cell = mc_base_cell(call);
    if (!mc_mailbox_ref_is_none(&cell))
        return mc_destroyCellEntity(call) == MC_CALL_OK ? 0 : -1;
    return mc_destroy(call) == MC_CALL_OK ? 0 : -1;
}

int Avatar_base_getName(const mc_call_ctx *call, Avatar_base *self, char **out_name)
{
    *out_name = strdup(self->name ? self->name : "");
    return *out_name ? MC_CALL_OK : MC_CALL_ERR_BUSY;
}

/* Tagged's addTag: the interface's TAGS alias gives both Avatar and Space its accessors. */
int Avatar_cell_addTag(const mc_call_ctx *call, Avatar_cell *self, const char *tag)
{
    return TAGS_append(&self->tags, tag);
}

/* Chat: every client that sees the speaker hears it, the speaker's own too (allClients:
 * the cellapp fans it out to the clients of the witnesses that see this entity). */
int Avatar_cell_chat(const mc_call_ctx *call, Avatar_cell *self, const char *text)
{
    if (!text[0])
        return MC_CALL_ERR_ARGS;
    mc_clients to = mc_allClients(call);
    return fanout_Avatar_client_onChat(call->sink, &to, call->caller_id, text);
}

int Avatar_cell_emote(const mc_call_ctx *call, Avatar_cell *self, uint16_t emoteId)
{
    char text[32];
    snprintf(text, sizeof(text), "*emote %u*", (unsigned)emoteId);
    mc_clients to = mc_allClients(call);
    return fanout_Avatar_client_onChat(call->sink, &to, call->self.id, text);
}

/* train: every client that sees it learns the new level, only its own the health it cost. */
int Avatar_cell_train(const mc_call_ctx *call, Avatar_cell *self, uint8_t levels)
{
    if (!levels || self->level > 255 - levels)
        return MC_CALL_ERR_ARGS;
    self->level = (uint8_t)(self->level + levels);
    self->health -= levels;
    return MC_CALL_OK;
}

/* setTarget: an OPTIONAL_TARGET (None: no target), read and kept field by field. */
int Avatar_cell_setTarget(const mc_call_ctx *call, Avatar_cell *self, const mc_value *target)
{
    if (OPTIONAL_TARGET_is_none(target))
        return OPTIONAL_TARGET_set_none(&self->target);
    mc_mailbox_ref entity;
    double since;
    int rc;
    if ((rc = OPTIONAL_TARGET_get_entity(target, &entity)) != MC_CALL_OK ||
        (rc = OPTIONAL_TARGET_get_since(target, &since)) != MC_CALL_OK ||
        (rc = OPTIONAL_TARGET_set_entity(&self->target, entity)) != MC_CALL_OK)
        return rc;
    return OPTIONAL_TARGET_set_since(&self->target, since);
}

int Avatar_cell_teleport(const mc_call_ctx *call, Avatar_cell *self, mc_vector3 position,
                         mc_vector3 direction)
{
    self->spawnPoint = position;
    return MC_CALL_OK;
}

/* ---- life in the world ----------------------------------------------------------------- */

/* The world's cell is known: enter it at the Avatar's own spawn point, or (it has none: a
 * player's Avatar) at the one the world gave it. */
static void on_world_cell(const mc_call_ctx *call, void *ud, int status, mc_mailbox_ref cell,
                          mc_vector3 world_spawn)
{
    if (status != MC_CALL_OK || mc_mailbox_ref_is_none(&cell) || !mc_self(call))
        return;
    Avatar_cell *data = mc_cellData(call);
    if (!data)
        return; /* it has a cell already (a loaded Avatar's was restored), or one is coming */
    mc_vector3 spawn = data->spawnPoint;
    if (spawn.x == 0 && spawn.y == 0 && spawn.z == 0) {
        spawn = world_spawn;
        data->spawnPoint = spawn;
    }
    mc_createCellEntity(call, &cell, &spawn, NULL);
}

/* The world's base answered the lookup with a SERVICE mailbox: ask it for its cell. */
static void on_world(const mc_call_ctx *call, void *ud, int status, mc_mailbox_ref world)
{
    if (status == MC_CALL_OK && mc_self(call))
        send_Space_base_getCell(call->sink, &world, on_world_cell, NULL);
}

/* A new Avatar is written at once (so that it has a database id and its name is taken;
 * without a database it lives unwritten), looks for the space registered as "world" and
 * takes a cell in it. A loaded one enters the world the same way. */
int Avatar_base_onCreated(const mc_call_ctx *call, Avatar_base *self)
{
    const Avatar_cell *data = mc_cellData(call);
    bool npc = data && data->wanderRadius > 0; /* Space.populate's crowd: never written */
    if (mc_databaseID(call) == 0 && !npc)
        mc_writeToDB(call, NULL, NULL);
    return mc_lookUpBaseByName(call, "world", on_world, NULL);
}

/* meet: a call chain through every kind of mailbox.
 *   A.base.meet(B)                 (operator or game)
 *   -> B.base.hello(A)             BASE: baseapp to baseapp
 *   -> A.cell.wave(B's cell)       CELL_VIA_BASE: relayed by A's base to wherever A's cell is
 *   -> B.base.thank()              BASE_VIA_CELL: relayed by B's cell to B's base
 *   and A's cell tells its own client (CLIENT_VIA_CELL; refused "no client" until players
 *   log in). */
int Avatar_base_meet(const mc_call_ctx *call, Avatar_base *self, mc_mailbox_ref other)
{
    if (mc_mailbox_ref_component(&other) != MC_COMPONENT_BASE)
        return MC_CALL_ERR_MAILBOX;
    return send_Avatar_base_hello(call->sink, &other, call->self);
}

int Avatar_base_hello(const mc_call_ctx *call, Avatar_base *self, mc_mailbox_ref from)
{
    mc_mailbox_ref their_cell = mc_mailbox_cell(from);
    mc_mailbox_ref my_cell = mc_base_cell(call);
    if (mc_mailbox_ref_is_none(&their_cell) || mc_mailbox_ref_is_none(&my_cell))
        return MC_CALL_ERR_STATE;
    return send_Avatar_cell_wave(call->sink, &their_cell, my_cell);
}

int Avatar_cell_wave(const mc_call_ctx *call, Avatar_cell *self, mc_mailbox_ref from)
{
    mc_mailbox_ref their_base = mc_mailbox_base(from);
    mc_mailbox_ref my_client = mc_ownClient(call);
    send_Avatar_client_onChat(call->sink, &my_client, call->self.id, "*waves*");
    return send_Avatar_base_thank(call->sink, &their_base);
}

int Avatar_base_thank(const mc_call_ctx *call, Avatar_base *self)
{
    self->xp += 10;
    return MC_CALL_OK;
}

/* ---- non-player Avatars (Space.populate) ------------------------------------------------ */

#define WANDER_TICK_S 0.1

/* A wandering Avatar's cell walks: a timer ten times a second. */
int Avatar_cell_onCreated(const mc_call_ctx *call, Avatar_cell *self)
{
    if (self->wanderRadius > 0)
        return mc_addTimer(call, WANDER_TICK_S, WANDER_TICK_S, 0, NULL);
    return MC_CALL_OK;
}

/* A step of up to half a metre in a direction that drifts, turned back toward its spawn
 * point once it strays beyond its radius (deterministic per entity and tick). */
int Avatar_cell_onTimer(const mc_call_ctx *call, Avatar_cell *self, uint32_t timerId,
                        int64_t userArg)
{
    if (!(self->wanderRadius > 0))
        return MC_CALL_OK;
    uint32_t h = (uint32_t)call->self.id * 2654435761u + (uint32_t)(mc_time(call) * 10.0);
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    float turn = ((float)(h & 1023) / 1023.0f - 0.5f) * 1.5f;
    mc_vector3 pos = mc_position(call), dir = mc_direction(call);
    float yaw = dir.z + turn;
    float dx = pos.x - self->spawnPoint.x, dz = pos.z - self->spawnPoint.z;
    if (dx * dx + dz * dz > self->wanderRadius * self->wanderRadius)
        yaw = atan2f(-dz, -dx); /* home */
    pos.x += 0.5f * cosf(yaw);
    pos.z += 0.5f * sinf(yaw);
    dir.z = yaw;
    mc_setPosition(call, pos);
    return mc_setDirection(call, dir);
}
