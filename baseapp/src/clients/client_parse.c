/* Checking what a client sends (client_parse.h). */
#include "client_parse.h"
#include "entity/client_wire.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const names[CLIENT_REFUSE_COUNT] = {
    "malformed", "notOwn", "notExposed", "badArgs", "noCell", "handler", "noPlayer",
};

const char *client_refuse_name(client_refuse r)
{
    return r < CLIENT_REFUSE_COUNT ? names[r] : "?";
}

int client_parse_call(const mc_entity_defs *defs, uint16_t type, int32_t id, mc_part part,
                      const uint8_t *data, size_t len, client_call *out, char *why,
                      size_t whylen)
{
    mc_istream is;
    mc_istream_init(&is, data, len);
    int32_t target;
    uint16_t index;
    if (!mc_cw_read_call(&is, &target, &index, &out->args, &out->len)) {
        snprintf(why, whylen, "a call of %zu bytes (at least 6)", len);
        return CLIENT_REFUSE_MALFORMED;
    }
    if (target != id) {
        snprintf(why, whylen, "a call on entity %d, its player is %d", (int)target, (int)id);
        return CLIENT_REFUSE_NOT_OWN;
    }
    const mc_entity_type_def *td = mc_defs_type(defs, type);
    const mc_def_method *m =
        td && part != MC_PART_CLIENT ? mc_defs_exposed_method(td, part, index) : NULL;
    if (!m || m->exposed == MC_EXPOSED_NO || m->nreturns) {
        snprintf(why, whylen, "%s has no exposed %s method %u", td ? td->name : "?",
                 mc_part_name(part), (unsigned)index);
        return CLIENT_REFUSE_NOT_EXPOSED;
    }
    /* decode once against the def (the handler's dispatch decodes again; a relayed cell call
     * is checked here so the cell never sees what its client could not send) */
    mc_value *vals = calloc(m->nargs ? m->nargs : 1, sizeof *vals);
    if (!vals) {
        snprintf(why, whylen, "out of memory");
        return CLIENT_REFUSE_BAD_ARGS;
    }
    mc_istream as;
    mc_istream_init(&as, out->args, out->len);
    char w[200];
    int rc = mc_defs_decode_args(defs, m, &as, vals, w, sizeof w);
    for (size_t i = 0; i < m->nargs; i++)
        mc_value_free(&vals[i]);
    free(vals);
    if (rc != 0) {
        snprintf(why, whylen, "%s.%s: %s", td->name, m->name, w);
        return CLIENT_REFUSE_BAD_ARGS;
    }
    out->method = m;
    return -1;
}
