/* Typed access to container values: the checked steps generated accessors are made of. */
#include "common/gen_access.h"

#include <stdlib.h>
#include <string.h>

#include "common/game_module.h"

static bool is_list(const mc_value *a, mc_type_kind list_kind)
{
    return a && a->kind == list_kind && (list_kind == MC_TYPE_ARRAY || list_kind == MC_TYPE_TUPLE);
}

static bool is_dict(const mc_value *d, uint32_t nfields)
{
    return d && d->kind == MC_TYPE_FIXED_DICT && (d->as.list.none || d->as.list.count == nfields);
}

int mc_gen_field(const mc_value *d, uint32_t nfields, uint32_t i, mc_type_kind k,
                 const mc_value **out)
{
    if (!is_dict(d, nfields) || i >= nfields)
        return MC_CALL_ERR_ARGS;
    if (d->as.list.none)
        return MC_CALL_ERR_STATE;
    if (d->as.list.items[i].kind != k)
        return MC_CALL_ERR_ARGS;
    *out = &d->as.list.items[i];
    return MC_CALL_OK;
}

int mc_gen_field_mut(mc_value *d, uint32_t nfields, uint32_t i, mc_type_kind k,
                     int (*init_fields)(mc_value *), mc_value **out)
{
    if (!is_dict(d, nfields) || i >= nfields)
        return MC_CALL_ERR_ARGS;
    if (d->as.list.none) {
        mc_value made;
        int rc = init_fields(&made);
        if (rc != MC_CALL_OK)
            return rc;
        mc_value_free(d);
        *d = made;
    }
    if (d->as.list.items[i].kind != k)
        return MC_CALL_ERR_ARGS;
    *out = &d->as.list.items[i];
    return MC_CALL_OK;
}

bool mc_gen_is_none(const mc_value *d)
{
    return d && d->kind == MC_TYPE_FIXED_DICT && d->as.list.none;
}

int mc_gen_set_none(mc_value *d, uint32_t nfields)
{
    if (!is_dict(d, nfields))
        return MC_CALL_ERR_ARGS;
    mc_value_free(d);
    d->kind = MC_TYPE_FIXED_DICT;
    d->as.list.none = true;
    return MC_CALL_OK;
}

uint32_t mc_gen_count(const mc_value *a, mc_type_kind list_kind)
{
    return is_list(a, list_kind) ? a->as.list.count : 0;
}

int mc_gen_item(const mc_value *a, mc_type_kind list_kind, uint32_t i, mc_type_kind k,
                const mc_value **out)
{
    if (!is_list(a, list_kind))
        return MC_CALL_ERR_ARGS;
    if (i >= a->as.list.count)
        return MC_CALL_ERR_NOT_FOUND;
    if (a->as.list.items[i].kind != k)
        return MC_CALL_ERR_ARGS;
    *out = &a->as.list.items[i];
    return MC_CALL_OK;
}

int mc_gen_item_mut(mc_value *a, mc_type_kind list_kind, uint32_t i, mc_type_kind k,
                    mc_value **out)
{
    const mc_value *c;
    int rc = mc_gen_item(a, list_kind, i, k, &c);
    if (rc == MC_CALL_OK)
        *out = (mc_value *)c;
    return rc;
}

int mc_gen_append(mc_value *a, mc_type_kind list_kind, uint32_t fixed_size, mc_value **out)
{
    if (!is_list(a, list_kind))
        return MC_CALL_ERR_ARGS;
    if (fixed_size)
        return MC_CALL_ERR_STATE;
    uint32_t n = a->as.list.count;
    if (n >= MC_DEFS_MAX_ELEMENTS)
        return MC_CALL_ERR_BUSY;
    mc_value *items = realloc(a->as.list.items, (size_t)(n + 1) * sizeof *items);
    if (!items)
        return MC_CALL_ERR_BUSY;
    memset(&items[n], 0, sizeof items[n]);
    a->as.list.items = items;
    a->as.list.count = n + 1;
    *out = &items[n];
    return MC_CALL_OK;
}

void mc_gen_unappend(mc_value *a)
{
    if (a && a->as.list.count) {
        a->as.list.count--;
        mc_value_free(&a->as.list.items[a->as.list.count]);
    }
}

int mc_gen_remove(mc_value *a, mc_type_kind list_kind, uint32_t fixed_size, uint32_t i)
{
    if (!is_list(a, list_kind))
        return MC_CALL_ERR_ARGS;
    if (fixed_size)
        return MC_CALL_ERR_STATE;
    if (i >= a->as.list.count)
        return MC_CALL_ERR_NOT_FOUND;
    mc_value_free(&a->as.list.items[i]);
    memmove(&a->as.list.items[i], &a->as.list.items[i + 1],
            (size_t)(a->as.list.count - i - 1) * sizeof(mc_value));
    a->as.list.count--;
    return MC_CALL_OK;
}

int mc_gen_clear(mc_value *a, mc_type_kind list_kind, uint32_t fixed_size)
{
    if (!is_list(a, list_kind))
        return MC_CALL_ERR_ARGS;
    if (fixed_size)
        return MC_CALL_ERR_STATE;
    mc_value_free(a);
    a->kind = list_kind;
    return MC_CALL_OK;
}

static int alloc_items(mc_value *v, mc_type_kind kind, uint32_t n)
{
    memset(v, 0, sizeof *v);
    v->kind = kind;
    if (n) {
        v->as.list.items = calloc(n, sizeof(mc_value));
        if (!v->as.list.items)
            return MC_CALL_ERR_BUSY;
    }
    v->as.list.count = n;
    return MC_CALL_OK;
}

int mc_gen_dict_alloc(mc_value *d, uint32_t nfields)
{
    return alloc_items(d, MC_TYPE_FIXED_DICT, nfields);
}

int mc_gen_list_alloc(mc_value *a, mc_type_kind list_kind, uint32_t n)
{
    return alloc_items(a, list_kind, n);
}

int mc_gen_set_bytes(mc_value *v, mc_type_kind k, const void *data, size_t len)
{
    if (!v || v->kind != k)
        return MC_CALL_ERR_ARGS;
    mc_value made;
    if (mc_value_set_bytes(&made, k, data ? data : "", data ? len : 0) != 0)
        return MC_CALL_ERR_BUSY;
    mc_value_free(v);
    *v = made;
    return MC_CALL_OK;
}

int mc_str_set(char **field, const char *s)
{
    char *copy = strdup(s ? s : "");
    if (!copy)
        return MC_CALL_ERR_BUSY;
    free(*field);
    *field = copy;
    return MC_CALL_OK;
}
