/* One simulated player (bot.h). */
#define _POSIX_C_SOURCE 200809L
#include "bot.h"

#include "common/value_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* xorshift64*: the host's generator. */
static uint64_t rnd(const bot *b)
{
    uint64_t x = *b->sh->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *b->sh->rng = x;
    return x * 2685821657736338717ull;
}

static float rndf(const bot *b) { return (float)(rnd(b) >> 40) / (float)(1u << 24); }

static void pick_target(bot *b)
{
    float a = b->sh->area;
    b->target = (mc_vector3){(rndf(b) - 0.5f) * a, 0, (rndf(b) - 0.5f) * a};
}

void bot_init(bot *b, const bot_shared *sh, uint32_t index, const char *prefix,
              const char *source)
{
    memset(b, 0, sizeof *b);
    b->sh = sh;
    b->index = index;
    snprintf(b->name, sizeof b->name, "%s%04u", prefix, index + 1);
    snprintf(b->avatar, sizeof b->avatar, "%s", b->name); /* bot0001 plays Bot0001 */
    b->avatar[0] = (char)(b->avatar[0] >= 'a' && b->avatar[0] <= 'z' ? b->avatar[0] - 32
                                                                      : b->avatar[0]);
    if (source)
        snprintf(b->source, sizeof b->source, "%s", source);
}

static void fail_login(bot *b, int status)
{
    b->sh->st->failed++;
    b->sh->st->failed_by_status[status >= 0 && status <= MC_LOGIN_TIMED_OUT ? status : 9]++;
    b->state = BOT_DONE;
}

static void attempt_login(bot *b, uint64_t now_ms)
{
    mc_login_config cfg = b->sh->login;
    cfg.bind_ip = b->source[0] ? b->source : NULL;
    char err[256];
    b->login_attempts++;
    b->login = mc_login_start(&cfg, b->name, b->sh->password, b->sh->login_flags, now_ms, err,
                              sizeof err);
    if (!b->login) {
        fprintf(stderr, "bots: %s: %s\n", b->name, err);
        fail_login(b, MC_LOGIN_SERVER_ERROR);
        return;
    }
    b->state = BOT_LOGIN;
}

void bot_start(bot *b, uint64_t now_ms)
{
    if (!b->sh->st->first_login_start_ms)
        b->sh->st->first_login_start_ms = now_ms;
    b->sh->st->started++;
    attempt_login(b, now_ms);
}

/* What a loaded or restarting cluster answers for a moment (a game client tries again). */
static bool login_may_pass(int status)
{
    return status == MC_LOGIN_SERVER_ERROR || status == MC_LOGIN_OVERLOADED ||
           status == MC_LOGIN_RATE_LIMITED || status == MC_LOGIN_TIMED_OUT ||
           status == MC_LOGIN_NO_BASEAPP;
}

int bot_fd(const bot *b)
{
    if (b->state == BOT_LOGIN)
        return b->login ? mc_login_fd(b->login) : -1;
    if (b->c && (b->state == BOT_CONNECT || b->state == BOT_PLAY || b->state == BOT_QUIET))
        return mc_client_fd(b->c); /* it changes when the channel is resumed */
    return -1;
}

uint64_t bot_next_ms(const bot *b)
{
    if (b->state != BOT_LOGIN)
        return 0;
    return b->login ? mc_login_next_ms(b->login) : b->login_retry_ms;
}

/* ---- calls ------------------------------------------------------------------------------ */

static int call_json(bot *b, mc_part part, const char *method, const char *json)
{
    const mc_entity_type_def *td = mc_defs_type(b->sh->defs, mc_client_player_type(b->c));
    const mc_def_method *m = td ? mc_defs_method_by_name(td, part, method) : NULL;
    mc_value args[4];
    char why[256];
    if (!m || m->nargs > 4 ||
        mc_json_to_args(b->sh->defs, m, json, strlen(json), args, why, sizeof why) != 0)
        return -1;
    int rc = mc_client_call(b->c, part, method, args, m->nargs);
    for (size_t i = 0; i < m->nargs; i++)
        mc_value_free(&args[i]);
    return rc;
}

/* The Account's avatar list: select ours when it is there, else create it (once). */
static void on_avatar_list(bot *b, const mc_value *list)
{
    bool have = false;
    for (uint32_t i = 0; list && i < list->as.list.count; i++) {
        const mc_value *s = &list->as.list.items[i];
        if (s->as.list.count && s->as.list.items[0].as.bytes.data &&
            !strcmp(s->as.list.items[0].as.bytes.data, b->avatar))
            have = true;
    }
    char json[96];
    if (have && !b->asked_select) {
        snprintf(json, sizeof json, "[\"%s\"]", b->avatar);
        if (call_json(b, MC_PART_BASE, "selectAvatar", json) == 0)
            b->asked_select = true;
    } else if (!have && !b->asked_create) {
        snprintf(json, sizeof json, "[\"%s\",[%u,%u,%u,255]]", b->avatar,
                 (unsigned)(rnd(b) & 255), (unsigned)(rnd(b) & 255), (unsigned)(rnd(b) & 255));
        if (call_json(b, MC_PART_BASE, "createAvatar", json) == 0)
            b->asked_create = true;
    }
}

static void cb_call(void *ud, mc_client *c, int32_t id, const mc_def_method *m,
                    const mc_value *args)
{
    (void)c;
    (void)id;
    bot *b = ud;
    if (!strcmp(m->name, "onAvatarList")) {
        on_avatar_list(b, &args[0]);
    } else if (!strcmp(m->name, "onChat") && m->nargs == 2 && b->chat_seq) {
        char want[48];
        snprintf(want, sizeof want, "rtt %u", b->chat_seq);
        const char *text = args[1].as.bytes.data;
        if (text && !strcmp(text, want)) {
            b->sh->st->calls_answered++;
            if (b->baseapp)
                b->baseapp->calls_answered++;
            bots_stats_rtt(b->sh->st, now_us() - b->chat_sent_us);
            b->chat_seq = 0;
        }
    }
}

int bot_move_sent(const bot *b, mc_vector3 pos, uint64_t *sent_us)
{
    for (uint32_t k = 1; k <= b->moves_n; k++) {
        const bot_move *m = &b->moves[(b->moves_head + BOT_MOVE_HISTORY - k) % BOT_MOVE_HISTORY];
        if (fabsf(m->pos.x - pos.x) <= BOT_MOVE_MATCH_M &&
            fabsf(m->pos.z - pos.z) <= BOT_MOVE_MATCH_M &&
            fabsf(m->pos.y - pos.y) <= BOT_MOVE_MATCH_M) {
            *sent_us = m->sent_us;
            return 0;
        }
    }
    return -1;
}

static void remember_move(bot *b, mc_vector3 pos, uint64_t sent_us)
{
    b->moves[b->moves_head] = (bot_move){.pos = pos, .sent_us = sent_us};
    b->moves_head = (b->moves_head + 1) % BOT_MOVE_HISTORY;
    if (b->moves_n < BOT_MOVE_HISTORY)
        b->moves_n++;
}

/* Another entity moved in b's view: when a bot of this process plays it, time the update. */
static void time_update(bot *b, const mc_world_record *r)
{
    bots_stats *st = b->sh->st;
    if (!st->steady || !b->sh->ids)
        return;
    const bot *mover = bot_ids_get(b->sh->ids, r->id);
    if (!mover || mover == b)
        return;
    uint64_t sent;
    if (bot_move_sent(mover, r->position, &sent) != 0) {
        st->update_unmatched++;
        return;
    }
    uint64_t now = now_us();
    bots_stats_update(st, now > sent ? now - sent : 0);
}

static void cb_world(void *ud, mc_client *c, const mc_world_record *r)
{
    (void)c;
    bot *b = ud;
    b->heard_ms = now_us() / 1000;
    fault_watch_world(&b->sh->st->faults, b->index, b->heard_ms);
    if (r->kind == MC_WORLD_VOLATILE)
        time_update(b, r);
    else if (r->kind == MC_WORLD_CALL && r->method && !strcmp(r->method->name, "onChat"))
        b->sh->st->chats_heard++;
    else if (r->kind == MC_WORLD_CORRECTION) {
        b->sh->st->corrections++;
        b->pos = r->position;
    }
}

static void cb_end(void *ud, mc_client *c, int how, int reason, const char *text)
{
    (void)c;
    (void)reason;
    (void)text;
    bot *b = ud;
    if (how == MC_CLIENT_END_CLOSED)
        return;
    b->sh->st->ended_early++;
    fault_watch_ended(&b->sh->st->faults, b->index, now_us() / 1000);
    b->sh->st->ended_by_how[how > 0 && how < BOTS_END_KINDS ? how : 0]++;
    if (b->baseapp)
        b->baseapp->ended_early++;
}

/* Its channel died and the library resumed it with its ticket (no login), or could not. */
static void cb_resume(void *ud, mc_client *c, int status, const char *name)
{
    (void)c;
    (void)name;
    bot *b = ud;
    if (status == MC_LOGIN_OK) {
        b->sh->st->resumes++;
        return;
    }
    b->sh->st->resume_failed++;
    b->sh->st->resume_failed_by_status[status > 0 && status < MC_LOGIN_STATUS_COUNT ? status
                                                                                    : 0]++;
}

static void connect_channel(bot *b, const mc_login_result *r)
{
    char addr[32], err[256];
    snprintf(addr, sizeof addr, "%u.%u.%u.%u:%u", r->baseapp_ip >> 24,
             (r->baseapp_ip >> 16) & 255, (r->baseapp_ip >> 8) & 255, r->baseapp_ip & 255,
             r->baseapp_port);
    mc_client_config cfg = {.baseapp = addr, .session_id = r->session_id, .defs = b->sh->defs,
                            .ud = b, .idle_ms = b->sh->idle_ms,
                            .loginapp = b->sh->login.loginapp,
                            .bind_ip = b->source[0] ? b->source : NULL};
    b->baseapp = bots_stats_baseapp(b->sh->st, addr);
    if (b->baseapp)
        b->baseapp->logged_in++;
    memcpy(cfg.session_key, r->session_key, sizeof cfg.session_key);
    cfg.cb.on_call = cb_call;
    cfg.cb.on_world = cb_world;
    cfg.cb.on_end = cb_end;
    cfg.cb.on_resume = cb_resume;
    b->c = mc_client_connect(&cfg, err, sizeof err);
    memset(cfg.session_key, 0, sizeof cfg.session_key);
    if (!b->c) {
        fprintf(stderr, "bots: %s: %s\n", b->name, err);
        b->sh->st->ended_early++;
        b->state = BOT_DONE;
        return;
    }
    b->state = BOT_CONNECT;
}

/* ---- walking and chatting -------------------------------------------------------------- */

static void walk(bot *b, uint64_t now)
{
    if (b->state != BOT_PLAY || now < b->next_move_ms)
        return;
    float step = b->sh->speed * (float)b->sh->move_ms / 1000.0f;
    float dx = b->target.x - b->pos.x, dz = b->target.z - b->pos.z;
    float d = sqrtf(dx * dx + dz * dz);
    if (d < step) {
        b->pos = b->target;
        pick_target(b);
    } else {
        b->pos.x += dx / d * step;
        b->pos.z += dz / d * step;
    }
    mc_vector3 dir = d > 0 ? (mc_vector3){dx / d, 0, dz / d} : (mc_vector3){0, 0, 1};
    if (mc_client_move(b->c, b->pos, dir) == MC_CALL_OK) {
        b->sh->st->moves_sent++;
        remember_move(b, b->pos, now_us());
    }
    /* a steady cadence: the next move a period after this one was due, not after it was
     * sent (a loop that comes round late would otherwise slow every bot down); one more
     * than a period late starts afresh rather than catching up in a burst */
    b->next_move_ms += b->sh->move_ms;
    if (b->next_move_ms <= now)
        b->next_move_ms = now + b->sh->move_ms;
}

static void chat(bot *b, uint64_t now)
{
    if (b->state != BOT_PLAY || now < b->next_chat_ms)
        return;
    b->next_chat_ms = now + b->sh->chat_ms / 2 + rnd(b) % (b->sh->chat_ms + 1);
    if (b->chat_seq && now_us() - b->chat_sent_us < 10000000u)
        return; /* the last one is still on its way (a lost one is given up after 10 s) */
    char json[64];
    uint32_t seq = (uint32_t)(rnd(b) % 1000000000u) + 1;
    snprintf(json, sizeof json, "[\"rtt %u\"]", seq);
    if (call_json(b, MC_PART_CELL, "chat", json) == 0) {
        b->sh->st->calls_sent++;
        if (b->baseapp)
            b->baseapp->calls_sent++;
        b->chat_seq = seq;
        b->chat_sent_us = now_us();
    }
}

void bot_tick(bot *b, uint64_t now)
{
    if (b->state == BOT_LOGIN) {
        if (!b->login) {
            if (now >= b->login_retry_ms)
                attempt_login(b, now);
            return;
        }
        int st = mc_login_tick(b->login, now);
        if (st == MC_LOGIN_PENDING)
            return;
        if (st == MC_LOGIN_OK) {
            mc_login_result r = *mc_login_result_of(b->login);
            b->sh->st->logged_in++;
            b->sh->st->last_login_ok_ms = now;
            mc_login_free(b->login);
            b->login = NULL;
            connect_channel(b, &r);
            memset(&r, 0, sizeof r);
        } else {
            mc_login_free(b->login);
            b->login = NULL;
            if (login_may_pass(st) && b->login_attempts < b->sh->login_tries) {
                /* back off: 500 ms, doubling, with a random half on top */
                uint64_t wait = 500u << (b->login_attempts - 1 < 5 ? b->login_attempts - 1 : 5);
                b->login_retry_ms = now + wait + rnd(b) % (wait / 2 + 1);
                b->sh->st->login_retries++;
                return;
            }
            fail_login(b, st);
        }
        return;
    }
    if (!b->c || b->state == BOT_DONE || b->state == BOT_IDLE)
        return;
    if (mc_client_tick(b->c) == MC_CLIENT_ENDED) {
        b->state = BOT_DONE;
        return;
    }
    int32_t id = mc_client_player_id(b->c);
    if (b->state == BOT_CONNECT && id > 0) {
        const mc_client_entity *me = mc_client_entity_of(b->c, id);
        if (me) { /* the Avatar has its cell: play */
            b->pos = me->position;
            b->have_pos = true;
            pick_target(b);
            b->state = BOT_PLAY;
            b->sh->st->playing++;
            if (b->sh->ids)
                bot_ids_put(b->sh->ids, id, b);
            b->next_move_ms = now + rnd(b) % (b->sh->move_ms + 1);
            b->next_chat_ms = now + rnd(b) % (b->sh->chat_ms + 1);
        }
    }
    walk(b, now);
    chat(b, now);
}

void bot_set_quiet(bot *b, bool quiet)
{
    if (quiet && b->state == BOT_PLAY)
        b->state = BOT_QUIET;
    else if (!quiet && b->state == BOT_QUIET)
        b->state = BOT_PLAY;
}

void bot_logout(bot *b)
{
    if (b->login) {
        mc_login_free(b->login);
        b->login = NULL;
    }
    if (b->c) {
        if (mc_client_state(b->c) == MC_CLIENT_RESUMING) {
            /* its channel died and it had not come back by the end: it did not play on */
            b->sh->st->ended_early++;
            b->sh->st->ended_by_how[MC_CLIENT_END_LOST]++;
            if (b->baseapp)
                b->baseapp->ended_early++;
        }
        mc_client_close(b->c);
        mc_client_stats cs;
        mc_client_get_stats(b->c, &cs);
        b->sh->st->bytes_sent += cs.bytes_sent;
        b->sh->st->bytes_received += cs.bytes_received;
        b->sh->st->packets_sent += cs.packets_sent;
        b->sh->st->packets_received += cs.packets_received;
        mc_client_free(b->c);
        b->c = NULL;
    }
    b->state = BOT_DONE;
}

void bot_free(bot *b) { bot_logout(b); }
