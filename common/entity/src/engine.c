/* The engine's life: options, loading the game module, the server glue (messages, peer
 * deaths, shutdown), the timer tick, and freeing. */
#include "engine_internal.h"
#include "common/log.h"
#include "server/control.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENGINE_TICK_MS 10

const mc_option mc_engine_options[] = {
    {"game", MC_OPT_STRING, "",
     "game module (.so) built by mc_add_game_module from the same defs as --res (default: "
     "lib/mc_game_example.so next to bin/)"},
    {"callTimeoutMs", MC_OPT_UINT, "5000",
     "how long a two-way call or a creation waits for its answer (100..600000)"},
    {"cellQueueMax", MC_OPT_UINT, "1024",
     "calls a base holds for a cell that is being created (1..1000000)"},
    {"gameRetiredMax", MC_OPT_UINT, "32",
     "game modules replaced by command/reloadGame that are kept open (calls in flight may "
     "still run their code); a reload past it is refused (1..1000)"},
};
const size_t mc_engine_option_count = sizeof mc_engine_options / sizeof mc_engine_options[0];

static bool check_config(const mc_config *cfg, char *err, size_t errlen)
{
    uint64_t t = mc_config_get_uint(cfg, "callTimeoutMs");
    if (t < 100 || t > 600000) {
        snprintf(err, errlen, "--callTimeoutMs: %llu is not within 100..600000",
                 (unsigned long long)t);
        return false;
    }
    uint64_t q = mc_config_get_uint(cfg, "cellQueueMax");
    if (q < 1 || q > 1000000) {
        snprintf(err, errlen, "--cellQueueMax: %llu is not within 1..1000000",
                 (unsigned long long)q);
        return false;
    }
    uint64_t r = mc_config_get_uint(cfg, "gameRetiredMax");
    if (r < 1 || r > 1000) {
        snprintf(err, errlen, "--gameRetiredMax: %llu is not within 1..1000",
                 (unsigned long long)r);
        return false;
    }
    return true;
}

static void on_peer_event(mc_server *s, void *ctx, const Mc__Control__ProcessEvent *ev)
{
    (void)ctx;
    mc_engine *e = engine_from_server(s);
    if (!e || !ev->process || !ev->process->internal_addr || !*ev->process->internal_addr)
        return;
    const char *addr = ev->process->internal_addr;
    /* A process at our own address that died is an earlier incarnation of us. */
    if (strcmp(addr, e->self_addr_text) == 0)
        return;
    if (ev->kind == MC__CONTROL__EVENT_KIND__EVENT_BIRTH) {
        engine_mark_peer(e, addr, false); /* a new process at that address */
        engine_forget_new_home(e, addr);
        return;
    }
    if (ev->kind != MC__CONTROL__EVENT_KIND__EVENT_DEATH)
        return;
    engine_mark_peer(e, addr, true);
    if (e->part->on_peer_down)
        e->part->on_peer_down(e, addr,
                              ev->process->state == MC__CONTROL__PROCESS_STATE__STATE_STOPPED);
    if (ev->process->role == MC_ROLE_BASEAPP)
        engine_note_new_homes(e, addr); /* its bases are restored on their backups (or, a
                                         * retired baseapp's, were offloaded there) */
    engine_fail_pending_to(e, addr);
    if (e->part->on_peer_death)
        e->part->on_peer_death(e, addr);
    if (e->part->on_process_death)
        e->part->on_process_death(e, ev->process->name ? ev->process->name : "",
                                  ev->process->pid, ev->process->host ? ev->process->host : "",
                                  ev->process->incarnation, addr,
                                  ev->process->state == MC__CONTROL__PROCESS_STATE__STATE_STOPPED);
    mc_server_forget_peer(s, addr);
}

static void on_shutdown(mc_server *s, void *ctx)
{
    (void)ctx;
    mc_engine *e = engine_from_server(s);
    if (e && e->part->on_shutdown)
        e->part->on_shutdown(e);
}

static bool draining(mc_server *s, void *ctx)
{
    (void)ctx;
    mc_engine *e = engine_from_server(s);
    return e && e->part->draining && e->part->draining(e);
}

static void engine_free(mc_engine *e);

static void on_control(mc_server *s, void *ctx, uint8_t msg_id, const char *src,
                       const uint8_t *data, size_t len, mc_server_request *request)
{
    (void)ctx;
    (void)request;
    mc_engine *e = engine_from_server(s);
    if (e && e->part->on_control)
        e->part->on_control(e, msg_id, src, data, len);
    else
        MC_WARNING("%s from %s: not handled here", mc_control_name(msg_id), src);
}

static void on_free(mc_server *s, void *ctx)
{
    engine_holder *h = ctx;
    (void)s;
    if (h && h->e) {
        engine_free(h->e);
        h->e = NULL;
    }
}

void mc_engine_fill_desc(mc_server_desc *desc, const mc_role_part *part, void *holder)
{
    desc->options = mc_engine_options;
    desc->option_count = mc_engine_option_count;
    desc->check_config = check_config;
    desc->on_peer_event = on_peer_event;
    desc->on_shutdown = on_shutdown;
    desc->draining = part && part->draining ? draining : NULL;
    desc->on_control = on_control;
    desc->on_free = on_free;
    desc->role_messages = mc_engine_messages;
    desc->role_message_count = mc_engine_message_count;
    desc->entity_ids = true;
    desc->ctx = holder;
}

static bool default_game_path(char *out, size_t outlen)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    snprintf(out, outlen, "%s/../lib/mc_game_example.so", dirname(exe));
    return true;
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    engine_timers_tick(ctx, mc_clock_now_us());
}

static mc_engine *engine_new(mc_server *s, const mc_role_part *part, char *err, size_t errlen)
{
    mc_engine *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    e->server = s;
    e->rl.fd = -1;
    e->part = part;
    e->defs = mc_server_defs(s);
    e->started_at = mc_clock_now_us();
    e->nub = mc_server_internal_nub(s);
    e->next_timer_id = 1;
    const mc_config *cfg = mc_server_config(s);
    e->call_timeout_us = mc_config_get_uint(cfg, "callTimeoutMs") * MC_US_PER_MS;
    e->cell_queue_max = (uint32_t)mc_config_get_uint(cfg, "cellQueueMax");
    e->self_addr = *mc_nub_address(e->nub);
    mc_address_format(&e->self_addr, e->self_addr_text, sizeof e->self_addr_text);
    e->message_defs = mc_engine_messages;
    e->message_def_count = mc_engine_message_count;
    e->deliver = engine_handle_message;
    engine_transport_init(e);
    engine_waits_init(e);
    if (engine_handlers_init(e, err, errlen) != 0)
        goto bad;

    char path[PATH_MAX + 64];
    const char *given = mc_config_get_string(cfg, "game");
    if (given && *given)
        snprintf(path, sizeof path, "%s", given);
    else if (!default_game_path(path, sizeof path)) {
        snprintf(err, errlen, "cannot find the game module: pass --game PATH");
        goto bad;
    }
    char why[512];
    e->game = mc_game_open(path, e->defs, why, sizeof why);
    if (!e->game) {
        snprintf(err, errlen, "%s", why);
        goto bad;
    }
    e->module = mc_game_table(e->game);
    e->type_counts = calloc(mc_defs_type_count(e->defs) + 1, sizeof *e->type_counts);
    if (!e->type_counts || mc_entity_table_init(&e->table) != 0) {
        snprintf(err, errlen, "out of memory");
        goto bad;
    }
    struct event_base *base = mc_server_event_base(s);
    e->local_ev = event_new(base, -1, 0, engine_on_local_event, e);
    e->reap_ev = event_new(base, -1, 0, engine_on_reap_event, e);
    e->flush_ev = event_new(base, -1, 0, engine_on_flush_event, e);
    e->tick_ev = event_new(base, -1, EV_PERSIST, on_tick, e);
    if (!e->local_ev || !e->reap_ev || !e->flush_ev || !e->tick_ev) {
        snprintf(err, errlen, "cannot create events");
        goto bad;
    }
    struct timeval tv = {0, ENGINE_TICK_MS * 1000};
    event_add(e->tick_ev, &tv);
    if (engine_add_watchers(e) != 0 || engine_add_commands(e) != 0 ||
        engine_reload_init(e, path, (uint32_t)mc_config_get_uint(cfg, "gameRetiredMax")) != 0) {
        snprintf(err, errlen, "cannot publish the entity watchers");
        goto bad;
    }
    if (part->on_init && part->on_init(e, err, errlen) != 0)
        goto bad;
    MC_INFO("game module %s (%s, %zu entity types)", path, e->module->name,
            e->module->ntypes);
    return e;
bad:
    engine_free(e);
    return NULL;
}

static void free_all_entities(mc_engine *e)
{
    size_t n = 0;
    mc_entity **all = mc_entity_table_snapshot(&e->table, &n);
    for (size_t i = 0; i < n; i++)
        engine_free_entity(e, all[i]);
    free(all);
}

static void engine_free(mc_engine *e)
{
    if (!e)
        return;
    e->freeing = true;
    free_all_entities(e);
    engine_transport_free(e);
    engine_waits_free(e);
    if (e->part->on_free)
        e->part->on_free(e);
    engine_timers_free(e);
    if (e->local_ev)
        event_free(e->local_ev);
    if (e->reap_ev)
        event_free(e->reap_ev);
    if (e->flush_ev)
        event_free(e->flush_ev);
    if (e->tick_ev)
        event_free(e->tick_ev);
    free(e->reap);
    free(e->dirty);
    free(e->dead);
    engine_new_homes_free(e);
    mc_entity_table_free(&e->table);
    free(e->type_counts);
    /* Last: callbacks of calls failed above may have run code of a replaced module. */
    engine_reload_free(e);
    if (e->game)
        mc_game_close(e->game);
    engine_reload_close_running(e);
    free(e);
}

int mc_engine_main(mc_role role, const char *summary, bool has_external,
                   const mc_role_part *part, int argc, char **argv)
{
    engine_holder holder = {.e = NULL, .part = part};
    mc_server_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.role = role;
    desc.summary = summary;
    desc.has_external = has_external;
    mc_engine_fill_desc(&desc, part, &holder);
    mc_option opts[64];
    if (part->option_count) {
        if (mc_engine_option_count + part->option_count > sizeof opts / sizeof opts[0]) {
            fprintf(stderr, "%s: too many options\n", mc_role_name(role));
            return 1;
        }
        memcpy(opts, mc_engine_options, mc_engine_option_count * sizeof *opts);
        memcpy(opts + mc_engine_option_count, part->options, part->option_count * sizeof *opts);
        desc.options = opts;
        desc.option_count = mc_engine_option_count + part->option_count;
    }
    int code = 1;
    mc_server *s = mc_server_new(&desc, argc, argv, &code);
    if (!s)
        return code;
    char err[600];
    holder.e = engine_new(s, part, err, sizeof err);
    if (!holder.e) {
        fprintf(stderr, "%s: %s\n", mc_role_name(role), err);
        mc_server_free(s);
        return 1;
    }
    code = mc_server_run(s);
    if (part->after_run && holder.e)
        part->after_run(holder.e);
    mc_server_free(s);
    return code;
}
