/* Hot reload of the game module (entity/reload.h): command/reloadGame [PATH], the game/
 * watchers, and the modules kept open after they were replaced.
 *
 * The command loads a private copy of the file (an anonymous memory file, opened by its
 * /proc/self/fd path: dlopen caches by path, and a rebuild replaces the file at the --game
 * path, so loading that path again would hand back the old code), checks it (mc_game_open:
 * ABI, definitions digest, types, method counts; mc_game_swap_check: property struct sizes)
 * and swaps it in from an event of its own, between two turns of the loop, never inside a
 * dispatch. Every entity's type table then points into the new module: calls, hooks and
 * timers from then on run the new code. The replaced module stays open until the engine is
 * freed: two-way calls, creations, lookups and database writes in flight hold function
 * pointers (and user data) into it, and their callbacks run its code when they complete. At
 * most --gameRetiredMax modules are kept so; a reload past that is refused (restart the
 * process to reload again).
 */
#include "engine_internal.h"
#include "common/log.h"
#include "entity/reload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int mc_game_swap_check(const mc_game_module *running, const mc_game_module *next, char *why,
                       size_t whylen)
{
    if (next->client_side) {
        snprintf(why, whylen, "game module %s is a client table", next->name ? next->name : "?");
        return -1;
    }
    if (next->ntypes != running->ntypes) {
        snprintf(why, whylen, "the new module has %zu entity types, the running one %zu",
                 next->ntypes, running->ntypes);
        return -1;
    }
    for (size_t i = 0; i < next->ntypes; i++) {
        const mc_game_type *a = &running->types[i], *b = &next->types[i];
        if (a->id != b->id || strcmp(a->name, b->name)) {
            snprintf(why, whylen, "entity type %zu is %s in the new module, %s in the running one",
                     i, b->name, a->name);
            return -1;
        }
        for (int p = 0; p < MC_PART_COUNT; p++) {
            if (a->props_size[p] != b->props_size[p]) {
                snprintf(why, whylen,
                         "%s's %s properties take %zu bytes in the new module, %zu in the "
                         "running one: live entities could not keep their state",
                         a->name, mc_part_name((mc_part)p), b->props_size[p], a->props_size[p]);
                return -1;
            }
            if (a->nmethods[p] != b->nmethods[p]) {
                snprintf(why, whylen, "%s has %zu %s methods in the new module, %zu in the "
                         "running one", a->name, b->nmethods[p], mc_part_name((mc_part)p),
                         a->nmethods[p]);
                return -1;
            }
        }
    }
    return 0;
}

/* The file at path copied into an anonymous memory file: its descriptor (the copy lives as
 * long as it is open) and its path in out, or -1 with the reason. */
static int private_copy(const char *path, char *out, size_t outlen, char *why, size_t whylen)
{
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    int fd = memfd_create("mc_game", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "cannot make a private copy of %s: %s", path, strerror(errno));
        close(in);
        return -1;
    }
    char buf[65536];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
            goto bad;
        }
        if (n == 0)
            break;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                snprintf(why, whylen, "cannot copy %s: %s", path, strerror(errno));
                goto bad;
            }
            off += w;
        }
    }
    close(in);
    snprintf(out, outlen, "/proc/self/fd/%d", fd);
    return fd;
bad:
    close(in);
    close(fd);
    return -1;
}

static void point_entities_at(mc_engine *e, const mc_game_module *m, mc_entity **all, size_t n)
{
    for (size_t i = 0; i < n; i++)
        all[i]->gt = &m->types[all[i]->type];
}

/* Load path and swap it in: 0, or -1 with the reason (the running module stays). */
static int reload_now(mc_engine *e, const char *path, char *why, size_t whylen)
{
    engine_reload *r = &e->rl;
    if (r->nretired >= r->retired_max) {
        snprintf(why, whylen,
                 "%zu replaced game modules are kept open already (--gameRetiredMax %u): "
                 "restart the process to reload again",
                 r->nretired, (unsigned)r->retired_max);
        return -1;
    }
    char copy[64], err[PATH_MAX + 700];
    int fd = private_copy(path, copy, sizeof copy, err, sizeof err);
    if (fd < 0) {
        snprintf(why, whylen, "%s", err);
        return -1;
    }
    mc_game *g = mc_game_open(copy, e->defs, err, sizeof err);
    if (!g) {
        snprintf(why, whylen, "%s: %s", path, err);
        close(fd);
        return -1;
    }
    const mc_game_module *m = mc_game_table(g);
    size_t n = 0;
    mc_entity **all = NULL;
    engine_module_slot *slots = NULL;
    if (mc_game_swap_check(e->module, m, err, sizeof err) != 0) {
        snprintf(why, whylen, "%s: %s", path, err);
        goto bad;
    }
    all = mc_entity_table_snapshot(&e->table, &n);
    slots = realloc(r->retired, (r->nretired + 1) * sizeof *slots);
    if ((!all && n) || !slots) {
        snprintf(why, whylen, "out of memory");
        if (slots)
            r->retired = slots;
        goto bad;
    }
    r->retired = slots;
    /* The swap itself: nothing below can fail. */
    r->retired[r->nretired++] = (engine_module_slot){.game = e->game, .fd = r->fd};
    e->game = g;
    e->module = m;
    r->fd = fd;
    point_entities_at(e, m, all, n);
    free(all);
    snprintf(r->module_path, sizeof r->module_path, "%s", path);
    int64_t s;
    int32_t us;
    mc_clock_wall(&s, &us);
    r->loaded_at = s > 0 ? (uint64_t)s : 0;
    r->reloads++;
    MC_INFO("game module reloaded from %s (%s): %zu entities kept, %zu replaced modules kept "
            "open", path, m->name, n, r->nretired);
    return 0;
bad:
    free(all);
    mc_game_close(g);
    close(fd);
    return -1;
}

static void on_reload_event(evutil_socket_t sock, short what, void *ctx)
{
    (void)sock;
    (void)what;
    mc_engine *e = ctx;
    engine_reload *r = &e->rl;
    mc_watch_done *done = r->done;
    r->done = NULL;
    if (!done)
        return;
    char why[2 * PATH_MAX + 1024];
    if (reload_now(e, r->want_path, why, sizeof why) != 0) {
        r->failures++;
        MC_WARNING("game module reload refused, the running one stays: %s", why);
        mc_watch_complete(done, false, NULL, why);
        return;
    }
    char msg[PATH_MAX + 128];
    snprintf(msg, sizeof msg, "reloaded %s (%s)", r->module_path, e->module->name);
    mc_watch_complete(done, true, msg, NULL);
}

static void cmd_reload(void *ctx, int argc, const char *const *argv, mc_watch_done *done)
{
    mc_engine *e = ctx;
    engine_reload *r = &e->rl;
    if (argc > 1) {
        mc_watch_complete(done, false, NULL, "usage: reloadGame [PATH]");
        return;
    }
    if (r->done || e->freeing) {
        r->failures++;
        mc_watch_complete(done, false, NULL,
                          e->freeing ? "the process is shutting down" : "a reload is under way");
        return;
    }
    const char *path = argc == 1 && argv[0][0] ? argv[0] : r->game_path;
    if (strlen(path) >= sizeof r->want_path) {
        r->failures++;
        mc_watch_complete(done, false, NULL, "path too long");
        return;
    }
    snprintf(r->want_path, sizeof r->want_path, "%s", path);
    /* Swapped from an event of its own: between two turns of the loop. */
    r->done = done;
    event_active(r->ev, 0, 0);
}

static void get_module(void *ctx, mc_watch_value *out)
{
    out->as.s = strdup(((mc_engine *)ctx)->rl.module_path);
}

int engine_reload_init(mc_engine *e, const char *path, uint32_t retired_max)
{
    engine_reload *r = &e->rl;
    r->fd = -1;
    r->retired_max = retired_max;
    snprintf(r->game_path, sizeof r->game_path, "%s", path);
    snprintf(r->module_path, sizeof r->module_path, "%s", path);
    int64_t s;
    int32_t us;
    mc_clock_wall(&s, &us);
    r->loaded_at = s > 0 ? (uint64_t)s : 0;
    r->ev = event_new(mc_server_event_base(e->server), -1, 0, on_reload_event, e);
    if (!r->ev)
        return -1;
    mc_watchers *w = mc_server_watchers(e->server);
    int bad = 0;
    bad |= mc_watch_add_uint(w, "game/reloads", &r->reloads, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "game/reloadFailures", &r->failures, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "game/loadedAt", &r->loaded_at, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add(w, "game/module", MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_module, NULL,
                        e) != MC_WATCH_OK;
    bad |= mc_watch_add_async_callable(
               w, "command/reloadGame", cmd_reload, e,
               "reloadGame [PATH]: load a rebuilt game module (default: the --game path) "
               "from the same definitions and swap it in between ticks") != MC_WATCH_OK;
    return bad ? -1 : 0;
}

void engine_reload_free(mc_engine *e)
{
    engine_reload *r = &e->rl;
    if (r->done) {
        mc_watch_complete(r->done, false, NULL, "the process is shutting down");
        r->done = NULL;
    }
    if (r->ev) {
        event_free(r->ev);
        r->ev = NULL;
    }
    for (size_t i = 0; i < r->nretired; i++) {
        mc_game_close(r->retired[i].game);
        if (r->retired[i].fd >= 0)
            close(r->retired[i].fd);
    }
    free(r->retired);
    r->retired = NULL;
    r->nretired = 0;
}

void engine_reload_close_running(mc_engine *e)
{
    if (e->rl.fd >= 0) {
        close(e->rl.fd);
        e->rl.fd = -1;
    }
}
