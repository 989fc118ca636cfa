/* Property values of a base for the store (its Persistent properties, base and cell part,
 * through the generated part streams), and a base created from a loaded record. */
#include "db.h"
#include "common/log.h"
#include "common/value_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int db_values_from_stream(mc_engine *e, const mc_entity_type_def *td, mc_part part,
                          mc_istream *is, mc_value *values, char *why, size_t whylen)
{
    const mc_entity_defs *defs = mc_engine_defs(e);
    for (size_t i = 0; i < td->nparts_props[part]; i++) {
        const mc_def_property *p = mc_defs_part_property(td, part, (uint16_t)i);
        if (!p || !p->persistent)
            continue;
        mc_value_limits lim = mc_defs_property_limits(defs, p);
        mc_value_free(&values[p->index]);
        char r[160];
        if (mc_value_decode(p->type, is, &lim, &values[p->index], r, sizeof r) != 0) {
            snprintf(why, whylen, "%s.%s does not decode: %s", td->name, p->name, r);
            return -1;
        }
    }
    if (!mc_istream_done(is)) {
        snprintf(why, whylen, "%s: trailing bytes after the %s part's properties", td->name,
                 mc_part_name(part));
        return -1;
    }
    return 0;
}

int db_values_from_struct(mc_engine *e, const mc_entity *ent, mc_part part, const void *props,
                          mc_value *values, char *why, size_t whylen)
{
    if (!props || ent->td->nparts_props[part] == 0)
        return 0;
    mc_ostream os;
    mc_ostream_init(&os);
    int rc = ent->gt->props_encode(mc_engine_defs(e), part, props, true, &os, why, whylen);
    if (rc == MC_CALL_OK) {
        mc_istream is;
        mc_istream_init(&is, os.data, os.size);
        rc = db_values_from_stream(e, ent->td, part, &is, values, why, whylen);
    }
    mc_ostream_free(&os);
    return rc == MC_CALL_OK ? 0 : -1;
}

void db_values_free(const mc_entity_type_def *td, mc_value *values)
{
    if (!values)
        return;
    for (size_t i = 0; i < td->nprops; i++)
        mc_value_free(&values[i]);
    free(values);
}

mc_entity *db_create_loaded(base_db *db, const mc_persist_record *rec, const char *token,
                            int *status, char *why, size_t whylen)
{
    const mc_entity_type_def *td = rec->type;
    uint16_t *idx = calloc(td->nprops + 1, sizeof *idx);
    mc_value *vals = calloc(td->nprops + 1, sizeof *vals);
    size_t n = 0;
    if (!idx || !vals) {
        free(idx);
        free(vals);
        *status = MC_CALL_ERR_BUSY;
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < td->nprops; i++) {
        if (!td->props[i].persistent)
            continue;
        idx[n] = (uint16_t)i;
        vals[n++] = rec->values[i]; /* borrowed: not freed here */
    }
    mc_entity *ent = base_create_quiet(db->e, td->id, idx, vals, n, status, why, whylen);
    free(idx);
    free(vals);
    if (!ent)
        return NULL;
    db_rec *r = db_rec_get(db, ent);
    if (!r) {
        mc_engine_discard_entity(db->e, ent);
        *status = MC_CALL_ERR_BUSY;
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    ent->cell_position = (mc_vector3){rec->engine.position[0], rec->engine.position[1],
                                      rec->engine.position[2]};
    ent->cell_direction = (mc_vector3){rec->engine.direction[0], rec->engine.direction[1],
                                       rec->engine.direction[2]};
    r->space_id = rec->engine.space_id;
    db_rec_set_dbid(db, r, rec->dbid, token);
    for (size_t i = 0; i < rec->nadded; i++)
        MC_INFO("%s %llu: property %s is new in the defs: it takes its default", td->name,
                (unsigned long long)rec->dbid, rec->added[i]);
    for (size_t i = 0; i < rec->nremoved; i++)
        MC_INFO("%s %llu: stored field %s is no property now: ignored", td->name,
                (unsigned long long)rec->dbid, rec->removed[i]);
    MC_INFO("loaded %s %llu as entity %d", td->name, (unsigned long long)rec->dbid,
            (int)ent->id);
    mc_engine_run_hook(db->e, ent, MC_HOOK_CREATED, NULL);
    return ent;
}
