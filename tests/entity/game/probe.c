/* The entity tests' game: Probe records what reaches it and makes calls on request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/entity_api.h"
#include "game.h"

static void seen(uint32_t seq, uint32_t *count, uint32_t *last, uint32_t *errors)
{
    /* Sequences start at 1 (or continue where the last blast ended). */
    if (*count > 0 && seq != *last + 1)
        (*errors)++;
    (*count)++;
    *last = seq;
}

static void add_event(Probe_base *self, const char *what)
{
    size_t old = self->events ? strlen(self->events) : 0;
    if (old > 4000)
        return;
    char *s = malloc(old + strlen(what) + 2);
    if (!s)
        return;
    snprintf(s, old + strlen(what) + 2, "%s%s;", self->events ? self->events : "", what);
    free(self->events);
    self->events = s;
}

/* Busy work: the timer's user argument is BURN_ARG + the fraction in thousandths; every
 * 100 ms the handler spins on this thread's CPU clock for that fraction of 100 ms. */
#define BURN_ARG 100000
#define BURN_PERIOD 0.1

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin(int64_t user_arg)
{
    double want = (double)(user_arg - BURN_ARG) / 1000.0 * BURN_PERIOD;
    double start = cpu_seconds();
    volatile uint64_t x = 0;
    while (cpu_seconds() - start < want)
        for (int i = 0; i < 1000; i++)
            x = x + (uint64_t)i;
}

/* Start, change or stop (fraction <= 0) the burn timer whose id *timer holds. */
static int burn(const mc_call_ctx *call, int32_t *timer, float fraction)
{
    if (*timer > 0) {
        mc_delTimer(call, (uint32_t)*timer);
        *timer = 0;
    }
    if (!(fraction > 0))
        return 0;
    if (fraction > 1)
        fraction = 1;
    uint32_t id;
    int rc = mc_addTimer(call, BURN_PERIOD, BURN_PERIOD, BURN_ARG + (int64_t)(fraction * 1000),
                         &id);
    if (rc != MC_CALL_OK)
        return -1;
    *timer = (int32_t)id;
    return 0;
}

/* ---- base ---------------------------------------------------------------------------- */

int Probe_base_ping(const mc_call_ctx *call, Probe_base *self, uint32_t seq)
{
    seen(seq, &self->baseSeen, &self->baseLast, &self->baseOrderErrors);
    return 0;
}

int Probe_base_clientPing(const mc_call_ctx *call, Probe_base *self, uint32_t seq)
{
    seen(seq, &self->clientSeen, &self->clientLast, &self->clientOrderErrors);
    return 0;
}

int Probe_base_echo(const mc_call_ctx *call, Probe_base *self, int32_t x, int32_t *out_y)
{
    *out_y = x;
    return 0;
}

int Probe_base_fail(const mc_call_ctx *call, Probe_base *self, int32_t *out_y)
{
    return -1;
}

static int blast(const mc_call_ctx *call, mc_mailbox_ref to, uint32_t count, uint32_t first)
{
    mc_component fin = mc_component_final(mc_mailbox_ref_component(&to));
    for (uint32_t i = 0; i < count; i++) {
        int rc;
        if (fin == MC_COMPONENT_BASE)
            rc = send_Probe_base_ping(call->sink, &to, first + i);
        else if (fin == MC_COMPONENT_CELL)
            rc = send_Probe_cell_ping(call->sink, &to, first + i);
        else
            rc = send_Probe_client_onPing(call->sink, &to, first + i);
        if (rc != MC_CALL_OK)
            return rc;
    }
    return 0;
}

int Probe_base_blast(const mc_call_ctx *call, Probe_base *self, mc_mailbox_ref to,
                     uint32_t count, uint32_t first)
{
    return blast(call, to, count, first);
}

static void on_answer(const mc_call_ctx *call, void *ud, int status, int32_t y)
{
    Probe_base *self = mc_self(call);
    if (!self)
        return;
    self->lastStatus = status;
    self->lastAnswer = y;
    self->answers++;
}

int Probe_base_ask(const mc_call_ctx *call, Probe_base *self, mc_mailbox_ref to, int32_t x)
{
    mc_component fin = mc_component_final(mc_mailbox_ref_component(&to));
    int rc = fin == MC_COMPONENT_CELL ? send_Probe_cell_echo(call->sink, &to, x, on_answer, NULL)
                                      : send_Probe_base_echo(call->sink, &to, x, on_answer, NULL);
    if (rc != MC_CALL_OK) { /* refused at once: recorded like an answer */
        self->lastStatus = rc;
        self->answers++;
    }
    return 0;
}

int Probe_base_remember(const mc_call_ctx *call, Probe_base *self, mc_mailbox_ref mb)
{
    self->peer = mb;
    return 0;
}

int Probe_base_blastPeer(const mc_call_ctx *call, Probe_base *self, uint32_t count,
                         uint32_t first)
{
    return blast(call, self->peer, count, first);
}

int Probe_base_makeCell(const mc_call_ctx *call, Probe_base *self, mc_mailbox_ref near)
{
    int rc = mc_mailbox_ref_is_none(&near) ? mc_createInNewSpace(call, NULL, NULL)
                                           : mc_createCellEntity(call, &near, NULL, NULL);
    if (rc != MC_CALL_OK) {
        char e[64];
        snprintf(e, sizeof e, "makeCell:%s", mc_call_status_name(rc));
        add_event(self, e);
    }
    return 0;
}

int Probe_base_dropCell(const mc_call_ctx *call, Probe_base *self)
{
    int rc = mc_destroyCellEntity(call);
    if (rc != MC_CALL_OK) {
        char e[64];
        snprintf(e, sizeof e, "dropCell:%s", mc_call_status_name(rc));
        add_event(self, e);
    }
    return 0;
}

int Probe_base_die(const mc_call_ctx *call, Probe_base *self, int32_t *out_result)
{
    *out_result = mc_destroy(call);
    return 0;
}

static void record_created(Probe_base *self, int32_t id)
{
    mc_value v = mc_gen_int(MC_TYPE_INT32, id);
    if (mc_value_append(&self->created, &v) != 0)
        self->spawnFailures++;
}

static void on_spawned(const mc_call_ctx *call, void *ud, int status, mc_mailbox_ref base,
                       const char *reason)
{
    Probe_base *self = mc_self(call);
    if (!self)
        return;
    if (status != MC_CALL_OK) {
        self->spawnFailures++;
        return;
    }
    record_created(self, base.id);
}

int Probe_base_spawn(const mc_call_ctx *call, Probe_base *self, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (create_Probe_anywhere(call, NULL, on_spawned, NULL) != MC_CALL_OK)
            self->spawnFailures++;
    return 0;
}

int Probe_base_startTimer(const mc_call_ctx *call, Probe_base *self, float initial,
                          float repeat)
{
    uint32_t id;
    int rc = mc_addTimer(call, initial, repeat, 7, &id);
    self->defc_timer1 = rc == MC_CALL_OK ? (int32_t)id : rc;
    return rc == MC_CALL_OK ? 0 : -1;
}

/* streamPeer's timer: one ping to peer per fire. */
#define STREAM_ARG 8
static void stream_one(const mc_call_ctx *call, Probe_base *self)
{
    int rc = blast(call, self->peer, 1, self->streamSent + self->streamRefused + 1);
    if (rc == MC_CALL_OK) {
        self->streamSent++;
    } else {
        self->streamRefused++;
        self->streamLastRc = rc;
    }
}

int Probe_base_streamPeer(const mc_call_ctx *call, Probe_base *self, float period)
{
    uint32_t id;
    return mc_addTimer(call, period, period, STREAM_ARG, &id) == MC_CALL_OK ? 0 : -1;
}

int Probe_base_onTimer(const mc_call_ctx *call, Probe_base *self, uint32_t timerId,
                       int64_t userArg)
{
    if (userArg == 7 && (int32_t)timerId == self->defc_timer1)
        self->timerFires++;
    else if (userArg == STREAM_ARG)
        stream_one(call, self);
    else if (userArg >= BURN_ARG && userArg <= BURN_ARG + 1000)
        spin(userArg);
    return 0;
}

static void on_registered(const mc_call_ctx *call, void *ud, int status, const char *reason)
{
    Probe_base *self = mc_self(call);
    if (self) {
        self->lastStatus = status;
        self->answers++;
    }
}

int Probe_base_registerAs(const mc_call_ctx *call, Probe_base *self, const char *name)
{
    return mc_registerGlobally(call, name, on_registered, NULL) == MC_CALL_OK ? 0 : -1;
}

static void on_found(const mc_call_ctx *call, void *ud, int status, mc_mailbox_ref service)
{
    Probe_base *self = mc_self(call);
    if (!self)
        return;
    self->lastStatus = status;
    if (status == MC_CALL_OK)
        self->peer = service;
    self->answers++;
}

int Probe_base_lookup(const mc_call_ctx *call, Probe_base *self, const char *name)
{
    return mc_lookUpBaseByName(call, name, on_found, NULL) == MC_CALL_OK ? 0 : -1;
}

int Probe_base_cellMailbox(const mc_call_ctx *call, Probe_base *self, mc_mailbox_ref *out_cell)
{
    *out_cell = mc_base_cell(call);
    return 0;
}

int Probe_base_event(const mc_call_ctx *call, Probe_base *self, const char *text)
{
    add_event(self, text);
    return 0;
}

int Probe_base_onGetCell(const mc_call_ctx *call, Probe_base *self)
{
    add_event(self, "getCell");
    return 0;
}

int Probe_base_onRestoreCell(const mc_call_ctx *call, Probe_base *self)
{
    (void)call;
    add_event(self, "restoreCell");
    return 0;
}

int Probe_base_onLoseCell(const mc_call_ctx *call, Probe_base *self)
{
    add_event(self, "loseCell");
    /* cellData holds what the cell had: its note survives the cell. */
    Probe_cell *data = mc_cellData(call);
    if (data && data->cellNote && data->cellNote[0]) {
        char e[96];
        snprintf(e, sizeof e, "note=%.80s", data->cellNote);
        add_event(self, e);
    }
    return 0;
}

/* Restored from its backup after its baseapp died: noted with its timer fires so far. */
int Probe_base_onRestore(const mc_call_ctx *call, Probe_base *self)
{
    (void)call;
    char e[64];
    snprintf(e, sizeof e, "restore:%u", (unsigned)self->timerFires);
    add_event(self, e);
    return 0;
}

int Probe_base_onCreateCellFailure(const mc_call_ctx *call, Probe_base *self,
                                   const char *reason)
{
    char e[128];
    snprintf(e, sizeof e, "createCellFailure:%.100s", reason);
    add_event(self, e);
    return 0;
}

int Probe_base_onDestroy(const mc_call_ctx *call, Probe_base *self)
{
    return 0;
}

int Probe_base_burn(const mc_call_ctx *call, Probe_base *self, float fraction)
{
    return burn(call, &self->burnTimer, fraction);
}

int Probe_base_spawnHere(const mc_call_ctx *call, Probe_base *self, uint32_t count,
                         uint32_t cells)
{
    mc_mailbox_ref none;
    memset(&none, 0, sizeof none);
    for (uint32_t i = 0; i < count; i++) {
        mc_mailbox_ref mb;
        if (create_Probe_locally(call, NULL, &mb) != MC_CALL_OK) {
            self->spawnFailures++;
            continue;
        }
        record_created(self, mb.id);
        if (i < cells && send_Probe_base_makeCell(call->sink, &mb, none) != MC_CALL_OK)
            self->spawnFailures++;
    }
    return 0;
}

int Probe_base_tell(const mc_call_ctx *call, Probe_base *self, mc_mailbox_ref to,
                    mc_mailbox_ref mb)
{
    return send_Probe_base_remember(call->sink, &to, mb) == MC_CALL_OK ? 0 : -1;
}

int Probe_base_askFail(const mc_call_ctx *call, Probe_base *self, mc_mailbox_ref to)
{
    int rc = send_Probe_base_fail(call->sink, &to, on_answer, NULL);
    if (rc != MC_CALL_OK) {
        self->lastStatus = rc;
        self->answers++;
    }
    return 0;
}

static void on_died(const mc_call_ctx *call, void *ud, int status, int32_t result)
{
}

int Probe_base_dieAndAsk(const mc_call_ctx *call, Probe_base *self, mc_mailbox_ref to,
                         int32_t x)
{
    int rc = send_Probe_base_die(call->sink, &to, on_died, NULL);
    if (rc == MC_CALL_OK)
        rc = send_Probe_base_echo(call->sink, &to, x, on_answer, NULL);
    if (rc != MC_CALL_OK) {
        self->lastStatus = rc;
        self->answers++;
    }
    return 0;
}

int Probe_base_cellSoon(const mc_call_ctx *call, Probe_base *self, uint32_t count)
{
    int rc = mc_createInNewSpace(call, NULL, NULL);
    if (rc != MC_CALL_OK) {
        char e[64];
        snprintf(e, sizeof e, "cellSoon:%s", mc_call_status_name(rc));
        add_event(self, e);
        return 0;
    }
    mc_mailbox_ref cell = mc_mailbox_cell(call->self);
    for (uint32_t i = 0; i < count; i++)
        if (send_Probe_cell_ping(call->sink, &cell, i + 1) != MC_CALL_OK)
            return -1;
    return 0;
}

/* ---- cell ---------------------------------------------------------------------------- */

int Probe_cell_ping(const mc_call_ctx *call, Probe_cell *self, uint32_t seq)
{
    seen(seq, &self->cellSeen, &self->cellLast, &self->cellOrderErrors);
    return 0;
}

int Probe_cell_echo(const mc_call_ctx *call, Probe_cell *self, int32_t x, int32_t *out_y)
{
    *out_y = x;
    return 0;
}

int Probe_cell_note(const mc_call_ctx *call, Probe_cell *self, const char *text)
{
    char *copy = strdup(text);
    if (!copy)
        return -1;
    free(self->cellNote);
    self->cellNote = copy;
    return 0;
}

int Probe_cell_die(const mc_call_ctx *call, Probe_cell *self)
{
    return mc_destroy(call) == MC_CALL_OK ? 0 : -1;
}

int Probe_cell_killSpace(const mc_call_ctx *call, Probe_cell *self)
{
    return mc_destroySpace(call) == MC_CALL_OK ? 0 : -1;
}

int Probe_cell_blast(const mc_call_ctx *call, Probe_cell *self, mc_mailbox_ref to,
                     uint32_t count, uint32_t first)
{
    return blast(call, to, count, first);
}

int Probe_cell_onSpaceGone(const mc_call_ctx *call, Probe_cell *self)
{
    mc_mailbox_ref base = mc_cell_base(call);
    return send_Probe_base_event(call->sink, &base, "spaceGone");
}

int Probe_cell_burn(const mc_call_ctx *call, Probe_cell *self, float fraction)
{
    return burn(call, &self->cellBurnTimer, fraction);
}

/* User argument of the timers startTimer starts. */
#define CELL_TIMER_ARG 42

int Probe_cell_onTimer(const mc_call_ctx *call, Probe_cell *self, uint32_t timerId,
                       int64_t userArg)
{
    if (userArg >= BURN_ARG && userArg <= BURN_ARG + 1000)
        spin(userArg);
    else if (userArg == CELL_TIMER_ARG && (int32_t)timerId == self->cellTimer)
        self->cellTimerFires++;
    else if (userArg == CELL_TIMER_ARG && (int32_t)timerId == self->cellOnceTimer)
        self->cellOnceFires++;
    return 0;
}

int Probe_cell_startTimer(const mc_call_ctx *call, Probe_cell *self, float initial,
                          float repeat, int32_t *out_rc)
{
    uint32_t id = 0;
    *out_rc = mc_addTimer(call, initial, repeat, CELL_TIMER_ARG, &id);
    if (*out_rc == MC_CALL_OK) {
        if (repeat > 0)
            self->cellTimer = (int32_t)id;
        else
            self->cellOnceTimer = (int32_t)id;
    }
    return 0;
}

/* ---- area of interest ------------------------------------------------------------------ */

static int aoi_event(Probe_cell *self, char sign, int32_t id)
{
    size_t have = self->aoiEvents ? strlen(self->aoiEvents) : 0;
    if (have > 16384)
        return 0; /* enough for any test; the rest is not kept */
    char *p = realloc(self->aoiEvents, have + 16);
    if (!p)
        return -1;
    snprintf(p + have, 16, "%c%d;", sign, (int)id);
    self->aoiEvents = p;
    return 0;
}

int Probe_cell_onEnteredAoI(const mc_call_ctx *call, Probe_cell *self, mc_mailbox_ref entity)
{
    return aoi_event(self, '+', entity.id);
}

int Probe_cell_onLeftAoI(const mc_call_ctx *call, Probe_cell *self, int32_t entityId)
{
    return aoi_event(self, '-', entityId);
}

int Probe_cell_moveTo(const mc_call_ctx *call, Probe_cell *self, float x, float z,
                      int32_t *out_rc)
{
    mc_vector3 p = mc_position(call);
    p.x = x;
    p.z = z;
    *out_rc = mc_setPosition(call, p);
    return 0;
}

int Probe_cell_setHp(const mc_call_ctx *call, Probe_cell *self, int32_t hp)
{
    self->hp = hp;
    return 0;
}

int Probe_cell_shout(const mc_call_ctx *call, Probe_cell *self, uint32_t seq, uint8_t all,
                     int32_t *out_rc)
{
    mc_clients to = all ? mc_allClients(call) : mc_otherClients(call);
    *out_rc = fanout_Probe_client_onPing(call->sink, &to, seq);
    return 0;
}

int Probe_cell_watch(const mc_call_ctx *call, Probe_cell *self, uint8_t on, float radius,
                     float hysteresis, int32_t *out_rc)
{
    int rc = radius != 0 ? mc_setAoIRadius(call, radius, hysteresis) : MC_CALL_OK;
    *out_rc = rc == MC_CALL_OK ? mc_setWitness(call, on != 0) : rc;
    return 0;
}

int Probe_cell_scan(const mc_call_ctx *call, Probe_cell *self, float radius, const char *type,
                    int32_t *out_rc, uint32_t *out_count, char **out_ids)
{
    mc_mailbox_ref found[64];
    size_t n = 0;
    *out_rc = mc_entitiesInRange(call, radius, *type ? type : NULL, found, 64, &n);
    *out_count = (uint32_t)n;
    char buf[64 * 12 + 1] = "";
    size_t len = 0;
    for (size_t i = 0; *out_rc == MC_CALL_OK && i < n && i < 64; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%d", i ? "," : "",
                                (int)found[i].id);
    *out_ids = strdup(buf);
    return *out_ids ? 0 : -1;
}

int Probe_cell_teleportTo(const mc_call_ctx *call, Probe_cell *self, mc_mailbox_ref near,
                          float x, float z, int32_t *out_rc)
{
    mc_vector3 p = {x, 0, z}, d = mc_direction(call);
    *out_rc = mc_teleport(call, &near, p, d);
    return 0;
}

/* A move to another cellapp failed: it is still here, as it was; note the reason and move it
 * within its space to (-1, 0, -1) (which works: it is not moving any more). */
int Probe_cell_onTeleportFailure(const mc_call_ctx *call, Probe_cell *self, int32_t reason)
{
    mc_mailbox_ref none = {0};
    mc_vector3 p = {-1, 0, -1};
    int rc = mc_teleport(call, &none, p, mc_direction(call));
    size_t have = self->cellTpFailures ? strlen(self->cellTpFailures) : 0;
    if (have > 4000)
        return 0;
    char *s = realloc(self->cellTpFailures, have + 32);
    if (!s)
        return -1;
    snprintf(s + have, 32, "%d:%d;", (int)reason, rc);
    self->cellTpFailures = s;
    return 0;
}
