/* cellapp-bench: the cost of the area of interest per tick, as one cellapp runs it (the
 * grid and witness views of cellapp/src/aoi_grid.c and aoi_view.c, and the world updates of
 * cellapp/src/witness.c: what each witness's client is sent, within its budget), for N
 * entities walking at random in one space, a tenth of them witnesses, the radius set so that
 * about 50 entities are in each view, 2% of them changing a client-visible property each
 * tick. Per N: tick time p50/p99/max (moving every entity + updating every view + building
 * every witness's updates), the AoI part alone, AoI events per tick, update bytes per tick,
 * and memory per entity; beside it, for the sizes where it finishes in time, the same views
 * computed by checking every witness against every entity (the quadratic baseline). Ends
 * with "p99 tick at 10000 entities: X ms". docs/tools/cellapp-bench.md. */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aoi_grid.h"
#include "aoi_view.h"
#include "client_shadow.h"
#include "common/clock.h"
#include "witness.h"

#define RADIUS 50.0f
#define HYSTERESIS 5.0f
#define IN_VIEW 50.0    /* entities wanted in a view on average */
#define STEP 0.5f       /* metres per tick (5 m/s at 10 Hz) */
#define BUDGET 2000     /* bytes a tick per client: the cellapp's default */
#define CHANGE_PER_MILLE 20 /* entities that change a client-visible property each tick */

/* A walker is also a cell entity as the world updates see it: its position and direction,
 * a type with a volatile position and yaw, and a shadow of two client-visible properties
 * (a level, 1 byte, and a title, 9 bytes). */
typedef struct {
    aoi_node node;
    int32_t id;
    float heading;
    mc_entity ent;
    client_shadow shadow;
    client_shadow_prop props[2];
    uint8_t level, title[9];
} walker;

static const mc_entity_type_def walker_type = {
    .name = "Walker", .client_server = true,
    .volatile_info = {.position = true, .yaw = true}};

typedef struct {
    walker *w;
    unsigned n;
} world;

static mc_entity *find_walker(void *ctx, int32_t id)
{
    world *wd = ctx;
    return id >= 1 && (unsigned)id <= wd->n ? &wd->w[id - 1].ent : NULL;
}

static client_shadow *walker_shadow(void *ctx, mc_entity *ent)
{
    (void)ctx;
    return ent->role_data;
}


static uint32_t rng(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}
static float frand(uint32_t *s) { return (float)(rng(s) % 1000000u) / 1000000.0f; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
    size_t k = (size_t)ceil(p * (double)n);
    return v[k ? k - 1 : 0];
}

typedef struct {
    unsigned n, ticks;
    double p50_ms, p99_ms, max_ms, aoi_p99_ms, events_per_tick, bytes_per_entity, in_view;
    double update_bytes_per_tick, deferred_per_tick;
    double brute_p50_ms; /* < 0: not run */
} result;

/* One random step, turning a little, bouncing off the square's edges. */
static void walk(walker *w, float side, uint32_t *s)
{
    w->heading += (frand(s) - 0.5f) * 0.6f;
    float x = w->node.x + STEP * cosf(w->heading), z = w->node.z + STEP * sinf(w->heading);
    if (x < 0 || x > side || z < 0 || z > side) {
        w->heading += 3.14159265f;
        x = w->node.x;
        z = w->node.z;
    }
    w->node.x = x; /* the grid move below sets them again */
    w->node.z = z;
    w->ent.position = (mc_vector3){x, 0, z};
    w->ent.direction = (mc_vector3){0, 0, w->heading};
}

static int run(unsigned n, unsigned ticks, double brute_limit_s, result *r)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->ticks = ticks;
    unsigned nw = n / 10;
    /* density so that a circle of RADIUS holds IN_VIEW entities */
    float side = (float)sqrt((double)n * M_PI * RADIUS * RADIUS / IN_VIEW);
    struct mallinfo2 m0 = mallinfo2();
    walker *w = calloc(n, sizeof *w);
    aoi_view *views = calloc(nw, sizeof *views);
    witness **streams = calloc(nw, sizeof *streams);
    double *t = calloc(ticks, sizeof *t), *ta = calloc(ticks, sizeof *ta);
    if (!w || !views || !streams || !t || !ta)
        return -1;
    world wd = {w, n};
    uint64_t enters = 0, leaves = 0, props = 0, volatiles = 0, deferred = 0;
    witness_env env = {.ctx = &wd, .find = find_walker, .shadow = walker_shadow,
                       .budget = BUDGET, .enters = &enters, .leaves = &leaves, .props = &props,
                       .volatiles = &volatiles, .deferred = &deferred};
    aoi_grid g;
    if (aoi_grid_init(&g, RADIUS) != 0)
        return -1;
    uint32_t s = 2463534242u ^ n;
    for (unsigned i = 0; i < n; i++) {
        w[i].id = (int32_t)i + 1;
        w[i].node.owner = &w[i];
        w[i].node.id = w[i].id;
        w[i].heading = frand(&s) * 6.2831853f;
        if (aoi_grid_insert(&g, &w[i].node, frand(&s) * side, frand(&s) * side) != 0)
            return -1;
        w[i].ent.id = w[i].id;
        w[i].ent.td = &walker_type;
        w[i].ent.part = MC_PART_CELL;
        w[i].ent.position = (mc_vector3){w[i].node.x, 0, w[i].node.z};
        w[i].ent.role_data = &w[i].shadow;
        w[i].level = 1;
        memcpy(w[i].title, "\x08Novice!", 9);
        w[i].props[0] = (client_shadow_prop){.index = 0, .other = true, .own = true,
                                             .bytes = &w[i].level, .len = 1};
        w[i].props[1] = (client_shadow_prop){.index = 1, .other = true, .own = true,
                                             .bytes = w[i].title, .len = 9};
        w[i].shadow = (client_shadow){.n = 2, .n_other = 2, .other_bytes = 10,
                                      .props = w[i].props};
    }
    for (unsigned i = 0; i < nw; i++) {
        aoi_view_init(&views[i], RADIUS, HYSTERESIS);
        if (!(streams[i] = witness_new()))
            return -1;
    }
    uint64_t update_bytes = 0, deferred_measured = 0;
    uint64_t events = 0, inview = 0;
    for (unsigned k = 0; k < ticks + 5; k++) {
        uint64_t t0 = mc_clock_now_us();
        for (unsigned i = 0; i < n; i++) {
            float ox = w[i].node.x, oz = w[i].node.z;
            walk(&w[i], side, &s);
            float nx = w[i].node.x, nz = w[i].node.z;
            w[i].node.x = ox;
            w[i].node.z = oz;
            if (aoi_grid_move(&g, &w[i].node, nx, nz) != 0)
                return -1;
        }
        uint64_t ev = 0;
        for (unsigned i = 0; i < nw; i++) {
            int32_t *in, *out;
            size_t nin, nout;
            if (aoi_view_update(&views[i], &g, w[i].node.x, w[i].node.z, w[i].id, &in,
                                &nin, &out, &nout) != 0)
                return -1;
            ev += nin + nout;
            for (size_t j = 0; j < nout; j++)
                witness_left(streams[i], out[j]);
            for (size_t j = 0; j < nin; j++)
                if (witness_entered(streams[i], in[j]) != 0)
                    return -1;
        }
        uint64_t ta0 = mc_clock_now_us();
        /* what changed (the cellapp diffs encodings; here the changes are made directly) */
        for (unsigned i = 0; i < n; i++) {
            if (rng(&s) % 1000u < CHANGE_PER_MILLE) {
                w[i].level++;
                w[i].props[0].changed = ++w[i].shadow.seq;
            }
        }
        uint64_t bytes = 0, deferred0 = deferred;
        for (unsigned i = 0; i < nw; i++) {
            const mc_ostream *rel, *vol;
            if (witness_build(streams[i], &env, &w[i].ent, &rel, &vol) != 0)
                return -1;
            bytes += rel->size + vol->size;
        }
        uint64_t dt = mc_clock_now_us() - t0;
        if (k >= 5) { /* the first ticks fill the views: not measured */
            t[k - 5] = (double)dt / 1000.0;
            ta[k - 5] = (double)(ta0 - t0) / 1000.0;
            update_bytes += bytes;
            deferred_measured += deferred - deferred0;
            events += ev;
            for (unsigned i = 0; i < nw; i++)
                inview += views[i].n;
        }
    }
    struct mallinfo2 m1 = mallinfo2();
    r->bytes_per_entity = (double)(m1.uordblks - m0.uordblks) / n;
    r->in_view = (double)inview / ticks / (nw ? nw : 1);
    r->events_per_tick = (double)events / ticks;
    r->update_bytes_per_tick = (double)update_bytes / ticks;
    r->deferred_per_tick = (double)deferred_measured / ticks;
    qsort(ta, ticks, sizeof *ta, cmp_double);
    r->aoi_p99_ms = pct(ta, ticks, 0.99);
    qsort(t, ticks, sizeof *t, cmp_double);
    r->p50_ms = pct(t, ticks, 0.50);
    r->p99_ms = pct(t, ticks, 0.99);
    r->max_ms = t[ticks - 1];

    /* The baseline: every witness against every entity, with the same hysteresis rule
     * (the views above are the state). A few ticks, when one fits the time limit. */
    r->brute_p50_ms = -1;
    double est = (double)nw * n * 4e-9; /* ~4 ns per pair: skip sizes far out of reach */
    if (est < brute_limit_s) {
        unsigned bt = 5;
        double bts[5];
        volatile uint64_t sink = 0;
        for (unsigned k = 0; k < bt; k++) {
            uint64_t t0 = mc_clock_now_us();
            for (unsigned i = 0; i < nw; i++) {
                const aoi_view *v = &views[i];
                float r2 = RADIUS * RADIUS, rh = (RADIUS + HYSTERESIS) * (RADIUS + HYSTERESIS);
                uint64_t c = 0;
                for (unsigned j = 0; j < n; j++) {
                    if (j == i)
                        continue;
                    float dx = w[j].node.x - w[i].node.x, dz = w[j].node.z - w[i].node.z;
                    float d2 = dx * dx + dz * dz;
                    c += d2 <= r2 || (d2 <= rh && aoi_view_has(v, w[j].id));
                }
                sink += c;
            }
            bts[k] = (double)(mc_clock_now_us() - t0) / 1000.0;
        }
        (void)sink;
        qsort(bts, bt, sizeof *bts, cmp_double);
        r->brute_p50_ms = bts[bt / 2];
    }
    for (unsigned i = 0; i < nw; i++) {
        aoi_view_free(&views[i]);
        witness_free(streams[i]);
    }
    for (unsigned i = 0; i < n; i++)
        aoi_grid_remove(&g, &w[i].node);
    aoi_grid_free(&g);
    free(w);
    free(views);
    free(streams);
    free(t);
    free(ta);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cellapp-bench [--ticks N] [--sizes N,N,...]\n"
               "The area of interest of one cellapp's world (a tenth of the entities witnesses,\n"
               "about 50 in each view, 5 m/s random walks at 10 Hz), per tick.\n"
               "  --ticks N    measured ticks per size (default 300, 10..100000)\n"
               "  --sizes LIST entity counts (default 1000,5000,10000,20000; each 10..1000000;\n"
               "               10000 must be among them for the closing line)\n");
}

int main(int argc, char **argv)
{
    unsigned ticks = 300;
    unsigned sizes[16] = {1000, 5000, 10000, 20000};
    size_t nsizes = 4;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--ticks") && v) {
            char *end;
            errno = 0;
            unsigned long x = strtoul(v, &end, 10);
            if (*end || errno || x < 10 || x > 100000 || v[0] == '-') {
                fprintf(stderr, "cellapp-bench: --ticks: '%s' is not within 10..100000\n", v);
                return 2;
            }
            ticks = (unsigned)x;
            i++;
        } else if (!strcmp(argv[i], "--sizes") && v) {
            nsizes = 0;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                char *end;
                errno = 0;
                unsigned long x = strtoul(tok, &end, 10);
                if (*end || errno || x < 10 || x > 1000000 || tok[0] == '-' || nsizes == 16) {
                    fprintf(stderr, "cellapp-bench: --sizes: '%s' is not a list of 1..16 "
                                    "counts within 10..1000000\n", v);
                    return 2;
                }
                sizes[nsizes++] = (unsigned)x;
            }
            if (!nsizes) {
                fprintf(stderr, "cellapp-bench: --sizes: empty list\n");
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "cellapp-bench: unknown option or missing value '%s' (--help)\n",
                    argv[i]);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("cellapp-bench: %u ticks per size; a tenth of the entities are witnesses, radius %g m "
           "+ %g m hysteresis, ~%g in view, walking %g m per tick\n\n",
           ticks, RADIUS, HYSTERESIS, IN_VIEW, STEP);
    printf("%9s %9s %9s %9s %9s %9s %12s %8s %12s %10s %9s %14s\n", "entities", "witnesses",
           "p50 ms", "p99 ms", "max ms", "AoI p99", "events/tick", "in view", "update B/tick",
           "deferred", "bytes/ent", "all-pairs p50");
    double p99_at_10k = -1;
    for (size_t k = 0; k < nsizes; k++) {
        result r;
        if (run(sizes[k], ticks, 2.0, &r) != 0) {
            fprintf(stderr, "cellapp-bench: out of memory at %u entities\n", sizes[k]);
            return 1;
        }
        char brute[32] = "(not run)";
        if (r.brute_p50_ms >= 0)
            snprintf(brute, sizeof brute, "%.2f ms", r.brute_p50_ms);
        printf("%9u %9u %9.3f %9.3f %9.3f %9.3f %12.1f %8.1f %12.0f %10.1f %9.0f %14s\n", r.n,
               r.n / 10, r.p50_ms, r.p99_ms, r.max_ms, r.aoi_p99_ms, r.events_per_tick,
               r.in_view, r.update_bytes_per_tick, r.deferred_per_tick, r.bytes_per_entity,
               brute);
        if (sizes[k] == 10000)
            p99_at_10k = r.p99_ms;
    }
    printf("\n(tick: move every entity in the grid + update every witness's view + build every "
           "witness's world updates within a %d-byte budget; AoI p99: the first two alone; "
           "update B/tick: all witnesses' records; deferred: entities left for a later tick; "
           "all-pairs: the same views by checking every witness against every entity)\n",
           BUDGET);
    if (p99_at_10k < 0) {
        fprintf(stderr, "cellapp-bench: 10000 was not among --sizes: no closing line\n");
        return 1;
    }
    printf("p99 tick at 10000 entities: %.2f ms\n", p99_at_10k);
    return 0;
}
