/* World update records: writers and the pure parser (entity/world_wire.h). */
#include "entity/world_wire.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (its own copies of the vector codec: the client library links this file alone) */
static void write_vec3(mc_ostream *os, mc_vector3 v)
{
    mc_write_f32(os, v.x);
    mc_write_f32(os, v.y);
    mc_write_f32(os, v.z);
}

static bool read_vec3(mc_istream *is, mc_vector3 *v)
{
    v->x = mc_read_f32(is);
    v->y = mc_read_f32(is);
    v->z = mc_read_f32(is);
    return mc_istream_ok(is) && isfinite(v->x) && isfinite(v->y) && isfinite(v->z);
}

void mc_world_write_enter(mc_ostream *os, int32_t id, uint16_t type, mc_vector3 position,
                          mc_vector3 direction, uint16_t n, size_t *n_at)
{
    mc_write_u8(os, MC_WORLD_ENTER);
    mc_write_i32(os, id);
    mc_write_u16(os, type);
    write_vec3(os, position);
    write_vec3(os, direction);
    if (n_at)
        *n_at = os->size;
    mc_write_u16(os, n);
}

void mc_world_write_leave(mc_ostream *os, int32_t id)
{
    mc_write_u8(os, MC_WORLD_LEAVE);
    mc_write_i32(os, id);
}

void mc_world_write_props(mc_ostream *os, int32_t id, uint16_t n, size_t *n_at)
{
    mc_write_u8(os, MC_WORLD_PROPS);
    mc_write_i32(os, id);
    if (n_at)
        *n_at = os->size;
    mc_write_u16(os, n);
}

void mc_world_write_prop_index(mc_ostream *os, uint16_t index) { mc_write_u16(os, index); }

void mc_world_write_volatile(mc_ostream *os, int32_t id, mc_vector3 position,
                             mc_vector3 direction)
{
    mc_write_u8(os, MC_WORLD_VOLATILE);
    mc_write_i32(os, id);
    write_vec3(os, position);
    write_vec3(os, direction);
}

void mc_world_write_correction(mc_ostream *os, int32_t id, mc_vector3 position,
                               mc_vector3 direction)
{
    mc_write_u8(os, MC_WORLD_CORRECTION);
    mc_write_i32(os, id);
    write_vec3(os, position);
    write_vec3(os, direction);
}

void mc_world_write_call(mc_ostream *os, int32_t id, uint16_t method, const uint8_t *args,
                         size_t len)
{
    mc_write_u8(os, MC_WORLD_CALL);
    mc_write_i32(os, id);
    mc_write_u16(os, method);
    mc_write_bytes(os, args, len);
}

/* ---- parser ---------------------------------------------------------------------------- */

typedef struct {
    const mc_def_property **props;
    mc_value *values;
    size_t n, cap;
} prop_list;

static void list_clear(prop_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        mc_value_free(&l->values[i]);
    l->n = 0;
}

static void list_free(prop_list *l)
{
    list_clear(l);
    free(l->props);
    free(l->values);
}

static int list_room(prop_list *l, size_t n, char *why, size_t whylen)
{
    list_clear(l);
    if (n > l->cap) {
        const mc_def_property **p = realloc(l->props, n * sizeof *p);
        if (p)
            l->props = p;
        mc_value *v = realloc(l->values, n * sizeof *v);
        if (v)
            l->values = v;
        if (!p || !v) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        l->cap = n;
    }
    return 0;
}

/* n x (index, value) of an entity of type td; own: the player's own entity. */
static int read_props(const mc_entity_defs *defs, const mc_entity_type_def *td, bool own,
                      size_t n, mc_istream *is, prop_list *l, char *why, size_t whylen)
{
    if (n > td->nprops) {
        list_clear(l);
        snprintf(why, whylen, "%zu properties for a %s (it has %zu)", n, td->name, td->nprops);
        return -1;
    }
    if (list_room(l, n, why, whylen) != 0)
        return -1;
    mc_value_limits lim = {.entity_types = mc_defs_type_count(defs)};
    for (size_t i = 0; i < n; i++) {
        uint16_t index = mc_read_u16(is);
        if (!mc_istream_ok(is)) {
            snprintf(why, whylen, "truncated property list");
            return -1;
        }
        if (index >= td->nprops) {
            snprintf(why, whylen, "%s has no property %u", td->name, (unsigned)index);
            return -1;
        }
        const mc_def_property *p = &td->props[index];
        bool visible = p->part_index[MC_PART_CELL] >= 0 && (p->other_clients || (own && p->own_client));
        if (!visible) {
            snprintf(why, whylen, "%s.%s is not sent to this client", td->name, p->name);
            return -1;
        }
        lim.max_bytes = p->db_length;
        char vwhy[160];
        if (mc_value_decode(p->type, is, &lim, &l->values[l->n], vwhy, sizeof vwhy) != 0) {
            snprintf(why, whylen, "%s.%s: %s", td->name, p->name, vwhy);
            return -1;
        }
        l->props[l->n++] = p;
    }
    return 0;
}

/* The arguments of client method m. */
static int read_args(const mc_entity_defs *defs, const mc_entity_type_def *td,
                     const mc_def_method *m, mc_istream *is, prop_list *l, char *why,
                     size_t whylen)
{
    if (list_room(l, m->nargs, why, whylen) != 0)
        return -1;
    mc_value_limits lim = {.entity_types = mc_defs_type_count(defs)};
    for (size_t i = 0; i < m->nargs; i++) {
        char vwhy[160];
        if (mc_value_decode(m->args[i].type, is, &lim, &l->values[l->n], vwhy, sizeof vwhy) !=
            0) {
            snprintf(why, whylen, "%s.%s argument %zu: %s", td->name, m->name, i + 1, vwhy);
            return -1;
        }
        l->props[l->n++] = NULL;
    }
    return 0;
}

int mc_world_parse(const mc_entity_defs *defs, int32_t own_id, const uint8_t *data,
                   size_t len, int (*type_of)(void *ctx, int32_t id), mc_world_record_fn fn,
                   void *ctx, char *why, size_t whylen)
{
    mc_istream is;
    mc_istream_init(&is, data, len);
    prop_list l = {0};
    int rc = 0;
    while (rc == 0 && mc_istream_remaining(&is) > 0) {
        mc_world_record r;
        memset(&r, 0, sizeof r);
        r.kind = mc_read_u8(&is);
        r.id = mc_read_i32(&is);
        if (!mc_istream_ok(&is) || r.id <= 0) {
            snprintf(why, whylen, "truncated record or bad entity id");
            rc = -1;
            break;
        }
        const mc_entity_type_def *td = NULL;
        if (r.kind == MC_WORLD_ENTER) {
            r.type = mc_read_u16(&is);
            td = mc_defs_type(defs, r.type);
            if (!td) {
                snprintf(why, whylen, "entity %d: no entity type %u", (int)r.id,
                         (unsigned)r.type);
                rc = -1;
                break;
            }
        } else if (r.kind == MC_WORLD_PROPS || r.kind == MC_WORLD_CALL) {
            int t = type_of ? type_of(ctx, r.id) : -1;
            td = t >= 0 ? mc_defs_type(defs, (uint16_t)t) : NULL;
            if (!td) {
                snprintf(why, whylen, "properties of entity %d, which is not known here",
                         (int)r.id);
                rc = -1;
                break;
            }
        } else if (r.kind == MC_WORLD_CORRECTION && r.id != own_id) {
            snprintf(why, whylen, "a correction of entity %d, not the player's", (int)r.id);
            rc = -1;
            break;
        } else if (r.kind != MC_WORLD_LEAVE && r.kind != MC_WORLD_VOLATILE &&
                   r.kind != MC_WORLD_CORRECTION) {
            snprintf(why, whylen, "unknown record kind %d", r.kind);
            rc = -1;
            break;
        }
        if (r.kind == MC_WORLD_ENTER || r.kind == MC_WORLD_VOLATILE ||
            r.kind == MC_WORLD_CORRECTION) {
            if (!read_vec3(&is, &r.position) || !read_vec3(&is, &r.direction)) {
                snprintf(why, whylen, "entity %d: truncated or non-finite position", (int)r.id);
                rc = -1;
                break;
            }
        }
        if (r.kind == MC_WORLD_ENTER || r.kind == MC_WORLD_PROPS) {
            r.n = mc_read_u16(&is);
            if (!mc_istream_ok(&is)) {
                snprintf(why, whylen, "entity %d: truncated record", (int)r.id);
                rc = -1;
                break;
            }
            if (read_props(defs, td, r.id == own_id, r.n, &is, &l, why, whylen) != 0) {
                rc = -1;
                break;
            }
            r.props = l.props;
            r.values = l.values;
        }
        if (r.kind == MC_WORLD_CALL) {
            uint16_t index = mc_read_u16(&is);
            r.method = mc_istream_ok(&is) ? mc_defs_method(td, MC_PART_CLIENT, index) : NULL;
            if (!r.method) {
                snprintf(why, whylen, "entity %d: no client method %u of %s", (int)r.id,
                         (unsigned)index, td->name);
                rc = -1;
                break;
            }
            if (read_args(defs, td, r.method, &is, &l, why, whylen) != 0) {
                rc = -1;
                break;
            }
            r.n = l.n;
            r.props = NULL;
            r.values = l.values;
        }
        rc = fn(ctx, &r);
    }
    list_free(&l);
    return rc;
}
