/* Handlers of the test type Probe: every() stores each argument in the cell's properties;
 * twoWay(n) returns values derived from n, one of every def type; a few engine callbacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game.h"

static int keep_str(char **field, const char *s)
{
    char *copy = strdup(s);
    if (!copy)
        return -1;
    free(*field);
    *field = copy;
    return 0;
}

static int keep_value(mc_value *field, const mc_value *v)
{
    mc_value copy;
    if (mc_value_copy(&copy, v) != 0)
        return -1;
    mc_value_free(field);
    *field = copy;
    return 0;
}

int Probe_cell_every(const mc_call_ctx *call, Probe_cell *self, int8_t i8, int16_t i16,
                     int32_t i32, int64_t i64, uint8_t u8, uint16_t u16, uint32_t u32,
                     uint64_t u64, float f32, double f64, const char *s, const char *us,
                     const mc_value *b, mc_vector2 v2, mc_vector3 v3, mc_vector4 v4,
                     mc_mailbox_ref mb, const mc_value *arr, const mc_value *tup,
                     const mc_value *dict)
{
    self->i8 = i8;
    self->i16 = i16;
    self->i32 = i32;
    self->i64 = i64;
    self->u8 = u8;
    self->u16 = u16;
    self->u32 = u32;
    self->u64 = u64;
    self->f32 = f32;
    self->f64 = f64;
    self->v2 = v2;
    self->v3 = v3;
    self->v4 = v4;
    self->mb = mb;
    if (keep_str(&self->s, s) || keep_str(&self->us, us) || keep_value(&self->b, b) ||
        keep_value(&self->arr, arr) || keep_value(&self->tup, tup) ||
        keep_value(&self->dict, dict))
        return -1;
    return 0;
}

int Probe_cell_numbers(const mc_call_ctx *call, Probe_cell *self, int8_t i8, int16_t i16,
                       int32_t i32, int64_t i64, uint8_t u8, uint16_t u16, uint32_t u32,
                       uint64_t u64, float f32, double f64, mc_vector2 v2, mc_vector3 v3,
                       mc_vector4 v4)
{
    self->i8 = i8;
    self->i16 = i16;
    self->i32 = i32;
    self->i64 = i64;
    self->u8 = u8;
    self->u16 = u16;
    self->u32 = u32;
    self->u64 = u64;
    self->f32 = f32;
    self->f64 = f64;
    self->v2 = v2;
    self->v3 = v3;
    self->v4 = v4;
    return i32 == 13 ? -1 : 0; /* 13: the handler fails (a test of the error path) */
}

int Probe_base_numbersBack(const mc_call_ctx *call, Probe_base *self, int32_t arg1,
                           int8_t *out_i8, int16_t *out_i16, int32_t *out_i32,
                           int64_t *out_i64, uint8_t *out_u8, uint16_t *out_u16,
                           uint32_t *out_u32, uint64_t *out_u64, float *out_f32,
                           double *out_f64, mc_vector2 *out_v2, mc_vector3 *out_v3,
                           mc_vector4 *out_v4)
{
    if (arg1 < 0)
        return -1;
    *out_i8 = (int8_t)-arg1;
    *out_i16 = (int16_t)-(arg1 * 2);
    *out_i32 = -arg1 * 3;
    *out_i64 = -(int64_t)arg1 * 1000000000000;
    *out_u8 = (uint8_t)(250 + arg1 % 5);
    *out_u16 = (uint16_t)(65000 + arg1);
    *out_u32 = 4000000000u + (uint32_t)arg1;
    *out_u64 = UINT64_MAX - (uint64_t)arg1;
    *out_f32 = -(float)arg1 / 8;
    *out_f64 = (double)arg1 / 3;
    *out_v2 = (mc_vector2){-1, (float)arg1};
    *out_v3 = (mc_vector3){0.5f, -0.25f, (float)arg1};
    *out_v4 = (mc_vector4){1e30f, -1e-30f, 0, (float)arg1};
    return 0;
}

int Probe_base_twoWay(const mc_call_ctx *call, Probe_base *self, int32_t arg1, int8_t *out_i8,
                      int16_t *out_i16, int32_t *out_i32, int64_t *out_i64, uint8_t *out_u8,
                      uint16_t *out_u16, uint32_t *out_u32, uint64_t *out_u64, float *out_f32,
                      double *out_f64, char **out_s, char **out_us, mc_value *out_b,
                      mc_vector2 *out_v2, mc_vector3 *out_v3, mc_vector4 *out_v4,
                      mc_mailbox_ref *out_mb, mc_value *out_arr, mc_value *out_tup,
                      mc_value *out_dict)
{
    if (arg1 < 0)
        return -1;
    *out_i8 = (int8_t)-arg1;
    *out_i16 = (int16_t)(arg1 * 2);
    *out_i32 = arg1 * 3;
    *out_i64 = (int64_t)arg1 * 1000000000000;
    *out_u8 = (uint8_t)(arg1 + 1);
    *out_u16 = (uint16_t)(arg1 + 2);
    *out_u32 = (uint32_t)arg1 + 3;
    *out_u64 = (uint64_t)arg1 + 4;
    *out_f32 = (float)arg1 / 2;
    *out_f64 = (double)arg1 / 4;
    *out_s = strdup("plain");
    *out_us = strdup("\xc3\xbc");
    if (!*out_s || !*out_us)
        return -1;
    const uint8_t blob[3] = {(uint8_t)arg1, 0, 0xff};
    mc_value_free(out_b); /* generic outs arrive holding the type's default */
    if (mc_value_set_bytes(out_b, MC_TYPE_BLOB, blob, sizeof(blob)) != 0)
        return -1;
    *out_v2 = (mc_vector2){1, 2};
    *out_v3 = (mc_vector3){1, 2, 3};
    *out_v4 = (mc_vector4){1, 2, 3, 4};
    *out_mb = call->self;
    mc_value n = mc_gen_int(MC_TYPE_INT16, arg1);
    if (mc_value_append(out_arr, &n) != 0)
        return -1;
    /* out_tup arrives as its default (two empty strings), out_dict as None */
    mc_value_free(&out_tup->as.list.items[1]);
    if (mc_value_set_bytes(&out_tup->as.list.items[1], MC_TYPE_STRING, "second", 6) != 0)
        return -1;
    return 0;
}

/* Engine callbacks: some defined (their slots are set), the others not (NULL slots). The
 * base ones write what they saw into the text buffer call->engine points at (64 bytes). */
int Probe_base_onCreated(const mc_call_ctx *call, Probe_base *self)
{
    snprintf(call->engine, 64, "created %d", (int)call->self.id);
    return 0;
}

int Probe_base_onCreateCellFailure(const mc_call_ctx *call, Probe_base *self, const char *reason)
{
    snprintf(call->engine, 64, "no cell: %s", reason);
    return 7;
}

int Probe_cell_onTimer(const mc_call_ctx *call, Probe_cell *self, uint32_t timerId,
                       int64_t userArg)
{
    self->u32 = timerId;
    self->i64 = userArg;
    return 0;
}
