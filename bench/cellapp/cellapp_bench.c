/* cellapp-bench: the cost of the area of interest per tick, as one cellapp runs it (the
 * grid and witness views of cellapp/src/aoi_grid.c and aoi_view.c), for N entities walking
 * at random in one space, a tenth of them witnesses, the radius set so that about 50
 * entities are in each view. Per N: tick time p50/p99/max (moving every entity + updating
 * every view), AoI events (enters + leaves) per tick, and memory per entity; beside it, for
 * the sizes where it finishes in time, the same views computed by checking every witness
 * against every entity (the quadratic baseline). Ends with "p99 tick at 10000 entities: X ms".
 * docs/tools/cellapp-bench.md. */
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
#include "common/clock.h"

#define RADIUS 50.0f
#define HYSTERESIS 5.0f
#define IN_VIEW 50.0    /* entities wanted in a view on average */
#define STEP 0.5f       /* metres per tick (5 m/s at 10 Hz) */

typedef struct {
    aoi_node node;
    int32_t id;
    float heading;
} walker;

static int32_t id_of(const aoi_node *n) { return ((const walker *)n->owner)->id; }

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
    double p50_ms, p99_ms, max_ms, events_per_tick, bytes_per_entity, in_view;
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
    double *t = calloc(ticks, sizeof *t);
    if (!w || !views || !t)
        return -1;
    aoi_grid g;
    if (aoi_grid_init(&g, RADIUS) != 0)
        return -1;
    uint32_t s = 2463534242u ^ n;
    for (unsigned i = 0; i < n; i++) {
        w[i].id = (int32_t)i + 1;
        w[i].node.owner = &w[i];
        w[i].heading = frand(&s) * 6.2831853f;
        if (aoi_grid_insert(&g, &w[i].node, frand(&s) * side, frand(&s) * side) != 0)
            return -1;
    }
    for (unsigned i = 0; i < nw; i++)
        aoi_view_init(&views[i], RADIUS, HYSTERESIS);
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
            if (aoi_view_update(&views[i], &g, w[i].node.x, w[i].node.z, w[i].id, id_of, &in,
                                &nin, &out, &nout) != 0)
                return -1;
            ev += nin + nout;
        }
        uint64_t dt = mc_clock_now_us() - t0;
        if (k >= 5) { /* the first ticks fill the views: not measured */
            t[k - 5] = (double)dt / 1000.0;
            events += ev;
            for (unsigned i = 0; i < nw; i++)
                inview += views[i].n;
        }
    }
    struct mallinfo2 m1 = mallinfo2();
    r->bytes_per_entity = (double)(m1.uordblks - m0.uordblks) / n;
    r->in_view = (double)inview / ticks / (nw ? nw : 1);
    r->events_per_tick = (double)events / ticks;
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
    for (unsigned i = 0; i < nw; i++)
        aoi_view_free(&views[i]);
    for (unsigned i = 0; i < n; i++)
        aoi_grid_remove(&g, &w[i].node);
    aoi_grid_free(&g);
    free(w);
    free(views);
    free(t);
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
    printf("%9s %9s %11s %11s %11s %13s %11s %10s %15s\n", "entities", "witnesses",
           "p50 ms", "p99 ms", "max ms", "events/tick", "in view", "bytes/ent",
           "all-pairs p50");
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
        printf("%9u %9u %11.3f %11.3f %11.3f %13.1f %11.1f %10.0f %15s\n", r.n, r.n / 10,
               r.p50_ms, r.p99_ms, r.max_ms, r.events_per_tick, r.in_view, r.bytes_per_entity,
               brute);
        if (sizes[k] == 10000)
            p99_at_10k = r.p99_ms;
    }
    printf("\n(tick: move every entity in the grid + update every witness's view; all-pairs: "
           "the same views by checking every witness against every entity)\n");
    if (p99_at_10k < 0) {
        fprintf(stderr, "cellapp-bench: 10000 was not among --sizes: no closing line\n");
        return 1;
    }
    printf("p99 tick at 10000 entities: %.2f ms\n", p99_at_10k);
    return 0;
}
