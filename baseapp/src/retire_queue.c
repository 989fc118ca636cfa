/* What waits for a base on its way or held (retire_internal.h): calls, its cell's messages
 * and its client's calls, kept in arrival order, bounded by RETIRE_WAIT_MAX in all; sent on
 * to its new home or run here, in that order. */
#include "baseapp.h"
#include "common/log.h"
#include "proxy.h"
#include "retire_internal.h"

#include <stdlib.h>
#include <string.h>

bool retire_enqueue(base_retire *r, retire_queue *q, retire_item_kind kind, uint8_t msg,
                    const mc_origin *o, const mc_call_header *h, int32_t id,
                    const uint8_t *data, size_t len)
{
    if (r->nwaiting >= RETIRE_WAIT_MAX)
        return false;
    retire_call *c = malloc(sizeof *c + len);
    if (!c)
        return false;
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->msg = msg;
    c->at = mc_clock_now_us();
    if (o)
        c->origin = *o;
    if (h)
        c->header = *h;
    c->header.entity_id = id;
    c->len = len;
    if (len)
        memcpy(c->args, data, len);
    if (q->tail)
        q->tail->next = c;
    else
        q->head = c;
    q->tail = c;
    q->n++;
    r->nwaiting++;
    return true;
}

static retire_call *take_all(base_retire *r, retire_queue *q)
{
    retire_call *list = q->head;
    r->nwaiting -= q->n;
    q->head = q->tail = NULL;
    q->n = 0;
    return list;
}

void retire_queue_send(base_retire *r, retire_queue *q, const mc_address *to)
{
    retire_call *list = take_all(r, q);
    while (list) {
        retire_call *c = list;
        list = c->next;
        retire_pass_item(r, to, c);
        free(c);
    }
}

void retire_queue_run(base_retire *r, retire_queue *q)
{
    mc_engine *e = r->e;
    retire_call *list = take_all(r, q);
    while (list) {
        retire_call *c = list;
        list = c->next;
        switch (c->kind) {
        case RI_CALL:
            base_on_call(e, &c->origin, &c->header, c->args, c->len);
            break;
        case RI_CELL_MSG:
            retire_run_cell_msg(e, &c->origin, c->msg, c->args, c->len);
            break;
        case RI_CLIENT_CALL: {
            mc_entity *ent = mc_engine_find(e, c->header.entity_id);
            char why[MC_REASON_MAX];
            if (ent && ent->part == MC_PART_BASE && !ent->in_reap &&
                proxy_run_client_call(e, ent, (mc_part)c->msg, c->args, c->len, why,
                                      sizeof why) >= 0)
                MC_INFO("entity %d: a call its client sent before it moved: %s",
                        (int)c->header.entity_id, why);
            break;
        }
        }
        free(c);
    }
}

void retire_queue_free(base_retire *r, retire_queue *q)
{
    retire_call *list = take_all(r, q);
    while (list) {
        retire_call *c = list;
        list = c->next;
        free(c);
    }
}
