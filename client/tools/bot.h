/* One simulated player of bots: logs in (mcclient/login.h), connects (mcclient/client.h),
 * plays its Account (creates its avatar once, then selects it), walks its Avatar around the
 * shared world within the speed limit, chats now and then and times the chat's round trip
 * (it hears its own chat back: Avatar.chat calls allClients.onChat), and logs out. It
 * remembers its last moves (position and the time sent), so that another bot of the same
 * process that sees it arrive there (a VOLATILE world record) can time the update: the
 * update latency, move sent -> seen by another client (bots share one clock).
 * Nothing blocks: the host polls bot_fd() and calls bot_tick() (docs/tools/bots.md).
 */
#ifndef MC_CLIENT_BOT_H
#define MC_CLIENT_BOT_H

#include <stdbool.h>
#include <stdint.h>

#include "bot_ids.h"
#include "bots_stats.h"
#include "mcclient/client.h"
#include "mcclient/login.h"

typedef enum {
    BOT_IDLE = 0,  /* not started */
    BOT_LOGIN,     /* logging in */
    BOT_CONNECT,   /* the channel to the baseapp, the Account */
    BOT_PLAY,      /* the Avatar: walking and chatting */
    BOT_QUIET,     /* the Avatar stands still (a view check comes) */
    BOT_DONE,      /* logged out, failed or ended */
} bot_state;

/* What every bot shares (owned by the host). */
typedef struct {
    const mc_entity_defs *defs;
    mc_login_config login;      /* loginapp, key, digest (bind_ip set per bot) */
    const char *password;
    uint8_t login_flags;        /* MC_LOGIN_FLAG_TAKEOVER with --takeover, else 0 */
    float speed, area;          /* m/s; side of the square around the origin they roam */
    float view_radius;          /* the cellapps' view radius (--aoiRadius), m: company */
    uint32_t move_ms, chat_ms;  /* between moves; mean between chats */
    uint32_t idle_ms;           /* a silent baseapp is lost after this long */
    uint32_t login_tries;       /* attempts at a login that fails for a passing reason */
    uint64_t *rng;              /* the host's generator state */
    bots_stats *st;
    bot_ids *ids;               /* avatar entity id -> bot (filled as they start playing) */
} bot_shared;

/* Moves remembered per bot: 3.2 s of them at 10 Hz. Positions a viewer is told are the
 * floats the mover sent (the wire carries them as f32), so they match exactly; a small
 * tolerance (BOT_MOVE_MATCH_M) is kept all the same, and the newest match wins. */
#define BOT_MOVE_HISTORY 32u
#define BOT_MOVE_MATCH_M 0.001f

typedef struct {
    mc_vector3 pos;
    uint64_t sent_us;
} bot_move;

typedef struct {
    const bot_shared *sh;
    uint32_t index;
    char name[24], avatar[24], source[20];
    bot_state state;
    mc_login_attempt *login;    /* NULL in BOT_LOGIN: waiting to try again */
    uint32_t login_attempts;
    uint64_t login_retry_ms;    /* when the next attempt goes */
    mc_client *c;
    bool asked_create, asked_select;
    mc_vector3 pos, target;
    bool have_pos;
    uint64_t next_move_ms, next_chat_ms;
    uint32_t chat_seq;          /* the chat whose answer is awaited (0: none) */
    uint64_t chat_sent_us;
    bots_baseapp *baseapp;      /* the one it logged in to */
    bot_move moves[BOT_MOVE_HISTORY]; /* a ring: the newest at moves_head - 1 */
    uint32_t moves_head, moves_n;
    uint64_t heard_ms;          /* its client's last world update (0: none yet) */
} bot;

/* Set it up (nothing sent). source: the login's source address or NULL. */
void bot_init(bot *b, const bot_shared *sh, uint32_t index, const char *prefix,
              const char *source);
/* Start logging in. */
void bot_start(bot *b, uint64_t now_ms);
/* The descriptor to poll (-1 when none). */
int bot_fd(const bot *b);
/* Process what arrived and what is due. */
void bot_tick(bot *b, uint64_t now_ms);
/* The login's deadline or its next attempt (BOT_LOGIN), else 0. */
uint64_t bot_next_ms(const bot *b);
/* Stop walking (BOT_PLAY -> BOT_QUIET) or walk on (BOT_QUIET -> BOT_PLAY). */
void bot_set_quiet(bot *b, bool quiet);
/* When b sent the move that put it at pos (its newest such move among the last
 * BOT_MOVE_HISTORY), in the bots' monotonic microseconds: 0 and *sent_us set, or -1. */
int bot_move_sent(const bot *b, mc_vector3 pos, uint64_t *sent_us);
/* Log out (LOG_OFF) and count its bytes; the bot is done. */
void bot_logout(bot *b);
void bot_free(bot *b);

#endif
