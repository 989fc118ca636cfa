/* The engine's state as the other parts read it: accessors, the engine's own mailboxes and
 * address, and rate-limited logging. Depends on nothing else in the engine, so every part
 * can sit on it (engine.c, which creates and frees the engine, sits on all of them). */
#include "engine_internal.h"

#include <stdio.h>
#include <string.h>

bool engine_log_allowed(uint64_t count) { return count <= 10 || count % 1000 == 0; }

mc_engine *engine_from_server(mc_server *s)
{
    engine_holder *h = mc_server_role_ctx(s);
    return h ? h->e : NULL;
}

mc_server *mc_engine_server(mc_engine *e) { return e->server; }
const mc_entity_defs *mc_engine_defs(mc_engine *e) { return e->defs; }
const mc_game_module *mc_engine_module(mc_engine *e) { return e->module; }
const mc_role_part *mc_engine_part(mc_engine *e) { return e->part; }
mc_entity_table *mc_engine_table(mc_engine *e) { return &e->table; }
const mc_address *mc_engine_address(mc_engine *e) { return &e->self_addr; }
uint32_t mc_engine_cell_queue_max(mc_engine *e) { return e->cell_queue_max; }
mc_time_us mc_engine_call_timeout(mc_engine *e) { return e->call_timeout_us; }
mc_entity *mc_engine_find(mc_engine *e, int32_t id) { return mc_entity_table_find(&e->table, id); }
void mc_engine_count_relayed(mc_engine *e) { e->st.relayed++; }
bool mc_engine_freeing(mc_engine *e) { return e->freeing; }
void *mc_engine_role_state(mc_engine *e) { return e->role_state; }
void mc_engine_set_role_state(mc_engine *e, void *state) { e->role_state = state; }

void mc_engine_mailbox_text(mc_engine *e, const mc_mailbox_ref *m, char *out, size_t outlen)
{
    if (mc_mailbox_ref_is_none(m)) {
        snprintf(out, outlen, "none");
        return;
    }
    mc_address a;
    mc_mailbox_address(m, &a);
    char at[MC_ADDRESS_STRLEN];
    const mc_entity_type_def *td = mc_defs_type(e->defs, mc_mailbox_ref_type(m));
    snprintf(out, outlen, "%s %d at %s (%s)", mc_component_name(mc_mailbox_ref_component(m)),
             (int)m->id, mc_address_format(&a, at, sizeof at), td ? td->name : "?");
}

bool mc_engine_is_self(mc_engine *e, const mc_address *a)
{
    return mc_address_equal(a, &e->self_addr);
}

void mc_mailbox_address(const mc_mailbox_ref *m, mc_address *out)
{
    out->ip = m->ip;
    out->port = m->port;
}

mc_mailbox_ref mc_engine_mailbox(mc_engine *e, const mc_entity *ent, mc_component c)
{
    mc_mailbox_ref m;
    if (mc_mailbox_ref_init(&m, ent->id, e->self_addr.ip, e->self_addr.port, c, ent->type) != 0)
        memset(&m, 0, sizeof m);
    return m;
}
