/* Backups of other baseapps' bases held here, and calls waiting for their restore
 * (backup.h). A backup is taken only from a live baseapp (never from ourselves), whole and
 * well-formed, within --backupHeldMaxBytes (a refused one is answered with BACKUP_REFUSED, so
 * that its owner sends it again); it is forgotten when its owner drops it, when it
 * is restored, or when its owner shuts down gracefully. */
#include "backup.h"
#include "common/log.h"
#include "entity/backup_wire.h"

#include <stdlib.h>
#include <string.h>

static bool log_allowed(uint64_t n) { return n <= 10 || n % 1000 == 0; }

void backup_forget(base_backup *b, backup_held *h)
{
    mc_map_remove(&b->held, (uint64_t)h->id, 0);
    b->nheld--;
    b->held_bytes -= h->len;
    free(h);
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int32_t *backup_held_ids(base_backup *b, const mc_address *owner, size_t *n)
{
    *n = 0;
    if (!b->nheld)
        return NULL;
    int32_t *ids = malloc(b->nheld * sizeof *ids);
    if (!ids)
        return NULL;
    size_t pos = 0;
    for (backup_held *h; (h = mc_map_next(&b->held, &pos));)
        if (mc_address_equal(&h->owner, owner))
            ids[(*n)++] = h->id;
    qsort(ids, *n, sizeof *ids, cmp_id);
    return ids;
}

static void refuse(base_backup *b, const mc_origin *o, const char *fmt, const char *detail,
                   int32_t id)
{
    b->st.refused++;
    mc_engine_count_refused(b->e, MC_REFUSE_MALFORMED);
    if (log_allowed(b->st.refused)) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("backup of %d from %s refused: %s%s", (int)id,
                   mc_address_format(&o->addr, a, sizeof a), fmt, detail ? detail : "");
    }
}

/* Tell the owner a backup was not kept, so that it sends it again when the reason may pass. */
static void tell_refused(base_backup *b, const mc_origin *o, int32_t id, uint8_t reason)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_backup_refused_encode(&os, id, reason);
    if (mc_engine_send(b->e, &o->addr, MC_MSG_BACKUP_REFUSED, os.data, os.size) == MC_CALL_OK)
        b->st.refusals_sent++;
    mc_ostream_free(&os);
}

void backup_on_backup(base_backup *b, const mc_origin *o, mc_istream *is)
{
    mc_engine *e = b->e;
    size_t len = mc_istream_remaining(is);
    const uint8_t *data = is->data + is->pos;
    mc_backup_head h;
    char why[160];
    if (o->local) {
        refuse(b, o, "sent to ourselves", NULL, 0);
        return;
    }
    if (!mc_backup_decode(mc_engine_defs(e), is, &h, why, sizeof why)) {
        refuse(b, o, why, NULL, 0);
        return;
    }
    mc_backup_head_free(&h);
    /* A baseapp we have not heard of yet (its birth, or our registration's reply, is still on
     * its way) is refused for now and told so: it sends the backup again at its next visit. */
    if (!mc_server_peer_is_live(mc_engine_server(e), &o->addr, MC_ROLE_BASEAPP)) {
        b->st.not_live++;
        if (log_allowed(b->st.not_live)) {
            char a[MC_ADDRESS_STRLEN];
            MC_INFO("backup of %d from %s not kept: not a live baseapp here (yet)",
                    (int)h.entity_id, mc_address_format(&o->addr, a, sizeof a));
        }
        tell_refused(b, o, h.entity_id, MC_BACKUP_REFUSED_NOT_LIVE);
        return;
    }
    if (mc_engine_find(e, h.entity_id)) {
        b->st.live_here++;
        if (log_allowed(b->st.live_here))
            MC_WARNING("backup of %d not kept: that entity is live here", (int)h.entity_id);
        tell_refused(b, o, h.entity_id, MC_BACKUP_REFUSED_LIVE_HERE);
        return;
    }
    backup_held *old = mc_map_get(&b->held, (uint64_t)h.entity_id, 0);
    uint64_t after = b->held_bytes - (old ? old->len : 0) + len;
    if (after > b->held_max_bytes) {
        b->st.held_full++;
        if (log_allowed(b->st.held_full))
            MC_WARNING("backup of %d refused: %llu bytes of backups held already "
                       "(--backupHeldMaxBytes %llu)",
                       (int)h.entity_id, (unsigned long long)b->held_bytes,
                       (unsigned long long)b->held_max_bytes);
        tell_refused(b, o, h.entity_id, MC_BACKUP_REFUSED_FULL);
        return;
    }
    backup_held *n = malloc(sizeof *n + len);
    if (!n) {
        b->st.held_full++;
        tell_refused(b, o, h.entity_id, MC_BACKUP_REFUSED_FULL);
        return;
    }
    n->id = h.entity_id;
    n->owner = o->addr;
    n->serial = h.serial;
    n->received_at = mc_clock_now_us();
    n->len = len;
    memcpy(n->data, data, len);
    if (old)
        backup_forget(b, old);
    if (!mc_map_put(&b->held, (uint64_t)n->id, 0, n)) {
        free(n);
        b->st.held_full++;
        tell_refused(b, o, h.entity_id, MC_BACKUP_REFUSED_FULL);
        return;
    }
    b->nheld++;
    b->held_bytes += len;
    b->st.received++;
}

void backup_on_drop(base_backup *b, const mc_origin *o, mc_istream *is)
{
    int32_t id;
    if (!mc_backup_drop_decode(is, &id)) {
        refuse(b, o, "malformed BACKUP_DROP", NULL, 0);
        return;
    }
    backup_held *h = mc_map_get(&b->held, (uint64_t)id, 0);
    if (!h || o->local || !mc_address_equal(&h->owner, &o->addr))
        return; /* not held, or not from its owner: nothing to do */
    backup_release_calls(b, id, false);
    backup_forget(b, h);
    b->st.dropped++;
}

/* ---- calls waiting for a restore --------------------------------------------------- */

typedef struct backup_wait {
    struct backup_wait *next;
    mc_time_us since;
    mc_origin origin;
    mc_call_header header;
    size_t len;
    uint8_t args[];
} backup_wait;

bool backup_hold_call(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                      const uint8_t *args, size_t len)
{
    base_backup *b = backup_of(e);
    if (!b || !mc_map_get(&b->held, (uint64_t)h->entity_id, 0))
        return false;
    if (b->nwaiting >= b->wait_max) {
        b->st.calls_refused++;
        mc_engine_refuse(e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY,
                         "entity %d is not restored yet and %llu calls wait already",
                         (int)h->entity_id, (unsigned long long)b->nwaiting);
        return true;
    }
    backup_wait *w = malloc(sizeof *w + len);
    if (!w) {
        b->st.calls_refused++;
        mc_engine_refuse(e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY, "out of memory");
        return true;
    }
    w->next = NULL;
    w->since = mc_clock_now_us();
    w->origin = *o;
    w->header = *h;
    w->len = len;
    if (len)
        memcpy(w->args, args, len);
    if (b->wait_tail)
        b->wait_tail->next = w;
    else
        b->wait_head = w;
    b->wait_tail = w;
    b->nwaiting++;
    b->st.calls_waited++;
    return true;
}

/* Take the waiting calls of id (or, with id 0, those waiting since before `before`) out of
 * the list, in order. */
static backup_wait *take(base_backup *b, int32_t id, mc_time_us before)
{
    backup_wait *out = NULL, **out_tail = &out, *keep = NULL, **keep_tail = &keep;
    for (backup_wait *w = b->wait_head, *next; w; w = next) {
        next = w->next;
        w->next = NULL;
        bool match = id ? w->header.entity_id == id : w->since < before;
        if (match) {
            *out_tail = w;
            out_tail = &w->next;
            b->nwaiting--;
        } else {
            *keep_tail = w;
            keep_tail = &w->next;
        }
    }
    b->wait_head = keep;
    b->wait_tail = NULL;
    for (backup_wait *w = keep; w; w = w->next)
        b->wait_tail = w;
    return out;
}

void backup_release_calls(base_backup *b, int32_t id, bool restored)
{
    backup_wait *list = take(b, id, 0);
    while (list) {
        backup_wait *w = list;
        list = w->next;
        if (restored) {
            b->st.calls_released++;
            base_on_call(b->e, &w->origin, &w->header, w->args, w->len);
        } else {
            b->st.calls_expired++;
            mc_engine_refuse(b->e, &w->origin, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                             "entity %d was not restored here", (int)w->header.entity_id);
        }
        free(w);
    }
}

void backup_expire_calls(base_backup *b, mc_time_us now)
{
    if (!b->wait_head || now - b->wait_head->since < b->wait_ms * MC_US_PER_MS)
        return;
    backup_wait *list = take(b, 0, now - b->wait_ms * MC_US_PER_MS);
    while (list) {
        backup_wait *w = list;
        list = w->next;
        b->st.calls_expired++;
        mc_engine_refuse(b->e, &w->origin, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                         "entity %d was not restored here within %llu ms",
                         (int)w->header.entity_id, (unsigned long long)b->wait_ms);
        free(w);
    }
}

void backup_hold_free(base_backup *b)
{
    size_t pos = 0;
    for (void *h; (h = mc_map_next(&b->held, &pos));)
        free(h);
    mc_map_free(&b->held);
    b->nheld = b->held_bytes = 0;
    while (b->wait_head) {
        backup_wait *w = b->wait_head;
        b->wait_head = w->next;
        free(w);
    }
    b->wait_tail = NULL;
    b->nwaiting = 0;
}
