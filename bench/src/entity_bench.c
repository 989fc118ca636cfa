/* entity-bench: base->cell entity calls (one-way and two-way) between a real baseapp and
 * cellapp, against the same payloads sent as raw mercury messages between two processes in
 * the same run. Prints calls/s, CPU and round-trip percentiles for each and ends with
 * "ratio entity/raw: X.XX" (one-way calls/s, entity over raw). docs/tools/entity-bench.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "entity_bench.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: entity-bench [--calls N] [--rtts N] [--batch N] [--window N]\n"
            "                    [--rounds N] [--time-limit S] [--keep-logs] [--help]\n"
            "Base->cell entity calls between a real baseapp and cellapp on loopback against\n"
            "the same payloads as raw mercury messages between two processes.\n"
            "  --calls N       one-way calls per phase (default 3000000, 1..100000000)\n"
            "  --rtts N        two-way round trips per phase, one at a time (default 20000,\n"
            "                  1..10000000)\n"
            "  --batch N       one-way calls between two sync requests (default 1000,\n"
            "                  1..100000)\n"
            "  --window N      sync requests outstanding at most (default 4, 1..64)\n"
            "  --rounds N      one-way rounds, entity and raw alternating; the best of each\n"
            "                  is reported (default 3, 1..20)\n"
            "  --time-limit S  seconds each phase may take (default 60, 1..3600)\n"
            "  --keep-logs     keep the cluster's logs (their folder is printed)\n"
            "The last line is 'ratio entity/raw: X.XX'. Exit status 0: every phase completed\n"
            "and delivered everything in order; 1: a phase failed (one line says why); 2: bad\n"
            "options.\n");
}

static int parse_u32(const char *name, const char *text, uint32_t lo, uint32_t hi,
                     uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = text ? strtoull(text, &end, 10) : 0;
    if (!text || !*text || *end || errno || text[0] == '-' || v < lo || v > hi) {
        fprintf(stderr, "entity-bench: %s: '%s' is not a number within %u..%u\n", name,
                text ? text : "", lo, hi);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int parse_options(int argc, char **argv, eb_options *o)
{
    *o = (eb_options){.calls = 3000000, .rtts = 20000, .batch = 1000, .window = 4,
                      .rounds = 3, .time_limit_s = 60};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint32_t t;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--keep-logs")) {
            o->keep_logs = true;
            continue;
        } else if (!strcmp(a, "--calls")) {
            if (parse_u32(a, v, 1, 100000000, &o->calls))
                return -1;
        } else if (!strcmp(a, "--rtts")) {
            if (parse_u32(a, v, 1, 10000000, &o->rtts))
                return -1;
        } else if (!strcmp(a, "--batch")) {
            if (parse_u32(a, v, 1, 100000, &o->batch))
                return -1;
        } else if (!strcmp(a, "--window")) {
            if (parse_u32(a, v, 1, 64, &o->window))
                return -1;
        } else if (!strcmp(a, "--rounds")) {
            if (parse_u32(a, v, 1, 20, &o->rounds))
                return -1;
        } else if (!strcmp(a, "--time-limit")) {
            if (parse_u32(a, v, 1, 3600, &t))
                return -1;
            o->time_limit_s = t;
        } else {
            fprintf(stderr, "entity-bench: unknown option '%s' (--help lists them)\n", a);
            return -1;
        }
        i++;
    }
    return 0;
}

static void group(char *out, size_t n, double v)
{
    unsigned long long x = (unsigned long long)(v + 0.5);
    char tmp[32];
    int len = snprintf(tmp, sizeof tmp, "%llu", x);
    size_t k = 0;
    for (int i = 0; i < len && k + 2 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[k++] = ',';
        out[k++] = tmp[i];
    }
    out[k] = '\0';
}

static void row(const char *name, const char *sides, const eb_result *r)
{
    if (!r->ran) {
        printf("%-15s FAILED: %s\n", name, r->error);
        return;
    }
    char rate[32];
    group(rate, sizeof rate, r->elapsed_s > 0 ? r->count / r->elapsed_s : 0);
    double cpu = r->cpu_s[0] + r->cpu_s[1];
    char lat[64] = "";
    if (r->has_rtt)
        snprintf(lat, sizeof lat, "%8.0f %8.0f %8.0f", r->p50_us, r->p99_us, r->max_us);
    else
        snprintf(lat, sizeof lat, "%8s %8s %8s", "-", "-", "-");
    printf("%-15s %11s %8.3f %6.2f + %-6.2f %-11s %8.2f %s\n", name, rate, r->elapsed_s,
           r->cpu_s[0], r->cpu_s[1], sides, r->count ? cpu * 1e6 / r->count : 0.0, lat);
}

static void remove_logs(const eb_cluster *c)
{
    const char *names[] = {"manager.log", "baseapp.log", "cellapp.log"};
    char p[400];
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", c->dir, names[i]);
        unlink(p);
    }
    rmdir(c->dir);
}

int main(int argc, char **argv)
{
    eb_options o;
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("entity-bench: %u one-way calls (batch %u, window %u) x %u rounds, %u round trips; "
           "loopback\n",
           o.calls, o.batch, o.window, o.rounds, o.rtts);

    eb_cluster c;
    char why[300];
    if (eb_cluster_start(&c, why, sizeof why) != 0) {
        eb_cluster_stop(&c);
        fprintf(stderr, "entity-bench: %s\n", why);
        return 1;
    }
    printf("cluster: manager %s, baseapp pid %d, cellapp pid %d, Bench base %d (logs %s)\n",
           c.manager, (int)c.base, (int)c.cell, (int)c.entity, c.dir);

    /* Warm-up runs (not reported): first use of the channels, caches, page faults. */
    eb_result warm, ent1, ent2, raw1, raw2;
    eb_options wo = o;
    if (eb_cluster_phase(&c, &wo, 1, o.calls < 20000 ? o.calls : 20000, &warm) != 0 ||
        eb_cluster_phase(&c, &wo, 2, o.rtts < 500 ? o.rtts : 500, &warm) != 0) {
        eb_cluster_stop(&c);
        fprintf(stderr, "entity-bench: entity warm-up: %s\n", warm.error);
        return 1;
    }
    int bad = 0;
    const eb_result not_run = {.ran = false, .error = "not run (an earlier phase failed)"};
    ent2 = raw2 = not_run;
    /* One-way: entity and raw alternate, so that both get the same chance at a quiet
     * machine (it is shared); the best round of each is reported. */
    ent1 = raw1 = not_run;
    printf("one-way rounds (calls/s, entity / raw):");
    for (uint32_t round = 0; round < o.rounds && !bad; round++) {
        eb_result e1, r1;
        bad |= eb_cluster_phase(&c, &o, 1, o.calls, &e1) != 0;
        bad |= eb_raw_phase(&o, 1, o.calls, &r1) != 0;
        if (bad) {
            ent1 = e1;
            raw1 = r1;
            break;
        }
        printf(" %.0f / %.0f%s", e1.count / e1.elapsed_s, r1.count / r1.elapsed_s,
               round + 1 < o.rounds ? "," : "\n");
        if (!ent1.ran || e1.count / e1.elapsed_s > ent1.count / ent1.elapsed_s)
            ent1 = e1;
        if (!raw1.ran || r1.count / r1.elapsed_s > raw1.count / raw1.elapsed_s)
            raw1 = r1;
    }
    if (bad)
        printf("\n");
    if (!bad)
        bad |= eb_cluster_phase(&c, &o, 2, o.rtts, &ent2) != 0;
    if (eb_cluster_stop(&c) != 0) {
        fprintf(stderr, "entity-bench: warning: a cluster process did not exit cleanly on "
                        "SIGTERM (logs kept in %s)\n", c.dir);
        o.keep_logs = true;
    }
    if (!bad)
        bad |= eb_raw_phase(&o, 2, o.rtts, &raw2) != 0;
    if (!bad && !o.keep_logs)
        remove_logs(&c);

    printf("\n%-15s %11s %8s %15s %-11s %8s %8s %8s %8s\n", "", "calls/s", "time s",
           "CPU s", "(sides)", "CPU us", "p50 us", "p99 us", "max us");
    row("entity one-way", "base+cell", &ent1);
    row("raw one-way", "send+recv", &raw1);
    row("entity two-way", "base+cell", &ent2);
    row("raw two-way", "send+recv", &raw2);
    printf("(one-way: the best of %u rounds; CPU us: CPU time of both processes per call;\n"
           " two-way: one call outstanding)\n", o.rounds);
    if (bad) {
        const eb_result *all[] = {&ent1, &ent2, &raw1, &raw2};
        const char *names[] = {"entity one-way", "entity two-way", "raw one-way",
                               "raw two-way"};
        for (int i = 0; i < 4; i++)
            if (!all[i]->ran) {
                fprintf(stderr, "entity-bench: %s: %s\n", names[i], all[i]->error);
                break;
            }
        return 1;
    }
    double e = ent1.count / ent1.elapsed_s, r = raw1.count / raw1.elapsed_s;
    printf("ratio entity/raw: %.2f\n", r > 0 ? e / r : 0.0);
    return 0;
}
