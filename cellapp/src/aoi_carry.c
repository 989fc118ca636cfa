/* An offloaded witness's client calls carried while it moves (aoi_carry.h). */
#include "aoi_carry.h"

#include <stdlib.h>
#include <string.h>

struct aoi_carry {
    int32_t *told; /* sorted */
    size_t ntold;
    uint32_t *heard; /* per told id: the last numbered call heard */
    bool *has;       /* per told id: heard is known */
    mc_address peer;
    bool arriving, committed;
    mc_ostream q[2]; /* 0: early (the old cellapp's, on the new one), 1: this side's */
    size_t n[2];
    uint64_t dropped;
};

static int by_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

aoi_carry *aoi_carry_new(const int32_t *told, size_t n, const mc_address *peer, bool arriving)
{
    aoi_carry *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->told = malloc((n ? n : 1) * sizeof *c->told);
    c->heard = calloc(n ? n : 1, sizeof *c->heard);
    c->has = calloc(n ? n : 1, sizeof *c->has);
    if (!c->told || !c->heard || !c->has) {
        free(c->told);
        free(c->heard);
        free(c->has);
        free(c);
        return NULL;
    }
    if (n)
        memcpy(c->told, told, n * sizeof *told);
    qsort(c->told, n, sizeof *c->told, by_id);
    c->ntold = n;
    c->peer = *peer;
    c->arriving = arriving;
    mc_ostream_init(&c->q[0]);
    mc_ostream_init(&c->q[1]);
    return c;
}

void aoi_carry_free(aoi_carry *c)
{
    if (!c)
        return;
    free(c->told);
    free(c->heard);
    free(c->has);
    mc_ostream_free(&c->q[0]);
    mc_ostream_free(&c->q[1]);
    free(c);
}

void aoi_carry_committed(aoi_carry *c) { c->committed = true; }

bool aoi_carry_wants(const aoi_carry *c, int32_t caller, const mc_address *ghost_of)
{
    if (!bsearch(&caller, c->told, c->ntold, sizeof caller, by_id))
        return false;
    if (!ghost_of)
        return true;
    if (c->arriving)
        return false; /* the old cellapp carries what reached it through ghosts */
    return !(c->committed && mc_address_equal(ghost_of, &c->peer));
}

int aoi_carry_add(aoi_carry *c, bool early, const mc_witness_call *call)
{
    mc_ostream *q = &c->q[early ? 0 : 1];
    size_t need = 10 + 5 + call->len;
    if (c->n[0] + c->n[1] >= MC_WITNESS_CALLS_MAX || q->size + need > AOI_CARRY_BYTES_MAX) {
        c->dropped++;
        return -1;
    }
    mc_witness_call_encode(q, call);
    if (!mc_ostream_ok(q)) {
        c->dropped++;
        return -1;
    }
    c->n[early ? 0 : 1]++;
    return 0;
}

size_t aoi_carry_count(const aoi_carry *c) { return c->n[0] + c->n[1]; }

void aoi_carry_entries(const aoi_carry *c, mc_ostream *out)
{
    mc_write_bytes(out, c->q[0].data, c->q[0].size);
    mc_write_bytes(out, c->q[1].data, c->q[1].size);
}

uint64_t aoi_carry_dropped(const aoi_carry *c) { return c->dropped; }

void aoi_carry_heard(aoi_carry *c, int32_t id, uint32_t seq)
{
    const int32_t *at = bsearch(&id, c->told, c->ntold, sizeof id, by_id);
    if (!at)
        return;
    size_t i = (size_t)(at - c->told);
    if (!c->has[i] || seq > c->heard[i])
        c->heard[i] = seq;
    c->has[i] = true;
}

size_t aoi_carry_record(const aoi_carry *c, mc_witness_heard *out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < c->ntold && (!out || k < max); i++)
        if (c->has[i]) {
            if (out)
                out[k] = (mc_witness_heard){c->told[i], c->heard[i]};
            k++;
        }
    return k;
}

bool aoi_carry_heard_of(const aoi_carry *c, int32_t id, uint32_t *seq)
{
    const int32_t *at = bsearch(&id, c->told, c->ntold, sizeof id, by_id);
    if (!at || !c->has[at - c->told])
        return false;
    *seq = c->heard[at - c->told];
    return true;
}
