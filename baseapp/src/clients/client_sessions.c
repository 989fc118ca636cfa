/* Login sessions a baseapp issued (client_sessions.h): a map from session id to its key,
 * entity and expiry, in bounded memory. */
#include "client_sessions.h"

#include "common/clock.h"
#include "common/map.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t entity_id;
    mc_time_us expires_at;
    uint8_t key[MC_SECURE_KEY_BYTES];
    char name[BASE_SESSION_NAME_MAX + 1]; /* the account it was issued for ("" unknown) */
    bool resume;                          /* issued by a RESUME (proxy_resume.h) */
} session;

/* Sessions gone (taken, expired, forgotten) are remembered by id for a while, so that a
 * client presenting one is told it was refused rather than met with silence, which is what
 * an id this baseapp never issued gets. */
#define RETIRED_MAX 1024u
#define RETIRED_KEEP_US (60ull * MC_US_PER_S)

typedef struct {
    uint64_t id;
    mc_time_us at;
} retired;

struct base_sessions {
    mc_map by_id;
    size_t max;
    mc_time_us expiry_us;
    base_sessions_stats st;
    retired gone[RETIRED_MAX];
    size_t gone_next;
};

base_sessions *base_sessions_new(size_t max, uint32_t expiry_ms)
{
    if (max == 0 || expiry_ms == 0 || sodium_init() < 0)
        return NULL;
    base_sessions *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->max = max;
    s->expiry_us = (mc_time_us)expiry_ms * MC_US_PER_MS;
    return s;
}

static void drop(base_sessions *s, uint64_t id, session *x)
{
    s->gone[s->gone_next] = (retired){id, mc_clock_now_us()};
    s->gone_next = (s->gone_next + 1) % RETIRED_MAX;
    sodium_memzero(x, sizeof *x);
    free(x);
    mc_map_remove(&s->by_id, id, 0);
}

void base_sessions_free(base_sessions *s)
{
    if (!s)
        return;
    size_t pos = 0;
    for (session *x; (x = mc_map_next(&s->by_id, &pos));) {
        sodium_memzero(x, sizeof *x);
        free(x);
    }
    mc_map_free(&s->by_id);
    free(s);
}

#define SWEEP_BATCH 64

void base_sessions_expire(base_sessions *s, base_session_expired_fn fn, void *ctx)
{
    mc_time_us now = mc_clock_now_us();
    /* Keys first, drops after (a removal moves entries); the callbacks come after the drops
     * (they may issue or forget sessions). With a callback, one batch a sweep (the rest at the
     * next, so that none goes unreported). */
    uint64_t keys[SWEEP_BATCH];
    int32_t gone[SWEEP_BATCH];
    size_t n;
    do {
        n = 0;
        size_t pos = 0;
        uint64_t k;
        for (session *x; n < SWEEP_BATCH && (x = mc_map_next_key(&s->by_id, &pos, &k, NULL));)
            if (x->expires_at <= now) {
                keys[n] = k;
                gone[n++] = x->entity_id;
            }
        for (size_t i = 0; i < n; i++) {
            drop(s, keys[i], mc_map_get(&s->by_id, keys[i], 0));
            s->st.expired++;
        }
        for (size_t i = 0; fn && i < n; i++)
            fn(ctx, gone[i]);
    } while (n == SWEEP_BATCH && !fn);
}

bool base_sessions_has_entity(const base_sessions *s, int32_t entity_id)
{
    mc_time_us now = mc_clock_now_us();
    size_t pos = 0;
    for (const session *x; (x = mc_map_next(&s->by_id, &pos));)
        if (x->entity_id == entity_id && x->expires_at > now)
            return true;
    return false;
}

int base_sessions_issue(base_sessions *s, int32_t entity_id, const char *name, bool resume,
                        uint64_t *session_id, uint8_t key[MC_SECURE_KEY_BYTES])
{
    if (s->by_id.count >= s->max) {
        s->st.refused_full++;
        return -1;
    }
    session *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    uint64_t id;
    do
        randombytes_buf(&id, sizeof id);
    while (id == 0 || mc_map_get(&s->by_id, id, 0));
    x->entity_id = entity_id;
    snprintf(x->name, sizeof x->name, "%s", name ? name : "");
    x->resume = resume;
    x->expires_at = mc_clock_now_us() + s->expiry_us;
    randombytes_buf(x->key, sizeof x->key);
    if (!mc_map_put(&s->by_id, id, 0, x)) {
        free(x);
        return -1;
    }
    *session_id = id;
    memcpy(key, x->key, MC_SECURE_KEY_BYTES);
    s->st.issued++;
    return 0;
}

/* The live session with this id (an expired one waits for the sweep, which reports it). */
static session *live(base_sessions *s, uint64_t id)
{
    session *x = id ? mc_map_get(&s->by_id, id, 0) : NULL;
    return x && x->expires_at > mc_clock_now_us() ? x : NULL;
}

int base_sessions_lookup(void *ctx, uint64_t session_id, uint8_t key[MC_SECURE_KEY_BYTES])
{
    base_sessions *s = ctx;
    session *x = live(s, session_id);
    if (!x) {
        s->st.unknown_lookups++;
        return -1;
    }
    memcpy(key, x->key, MC_SECURE_KEY_BYTES);
    return 0;
}

int base_sessions_take(base_sessions *s, uint64_t session_id, int32_t *entity_id,
                       char name[BASE_SESSION_NAME_MAX + 1], bool *resume)
{
    session *x = live(s, session_id);
    if (!x)
        return -1;
    *entity_id = x->entity_id;
    if (name)
        memcpy(name, x->name, sizeof x->name);
    if (resume)
        *resume = x->resume;
    drop(s, session_id, x);
    s->st.taken++;
    return 0;
}

size_t base_sessions_forget_entity(base_sessions *s, int32_t entity_id)
{
    size_t total = 0, n;
    uint64_t keys[SWEEP_BATCH];
    do { /* keys first, drops after: a removal moves entries */
        n = 0;
        size_t pos = 0;
        uint64_t k;
        for (session *x; n < SWEEP_BATCH && (x = mc_map_next_key(&s->by_id, &pos, &k, NULL));)
            if (x->entity_id == entity_id)
                keys[n++] = k;
        for (size_t i = 0; i < n; i++)
            drop(s, keys[i], mc_map_get(&s->by_id, keys[i], 0));
        total += n;
    } while (n == SWEEP_BATCH);
    return total;
}

size_t base_sessions_count(const base_sessions *s) { return s->by_id.count; }

void base_sessions_get_stats(const base_sessions *s, base_sessions_stats *out) { *out = s->st; }

bool base_sessions_known(void *ctx, uint64_t session_id)
{
    base_sessions *s = ctx;
    if (session_id == 0)
        return false;
    if (mc_map_get(&s->by_id, session_id, 0))
        return true;
    mc_time_us now = mc_clock_now_us();
    for (size_t i = 0; i < RETIRED_MAX; i++)
        if (s->gone[i].id == session_id && now - s->gone[i].at < RETIRED_KEEP_US)
            return true;
    return false;
}
