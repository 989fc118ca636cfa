/* Entity routing through real processes (issue 8): a manager, two baseapps and two cellapps
 * on loopback loading the Probe game (tests/entity/game), driven through the watcher tool.
 * Each test runs its own cluster (Check forks each test; the harness kills every process
 * when the test process exits, also on failure) and stops it with SIGTERM at the end,
 * checking every process exits 0 (under ASan, a leak or an error in a server shows there).
 *
 *   least_loaded        bases created anywhere land on the least-loaded baseapp
 *   unique_ids          10,000 creations across the four processes give unique ids
 *   eight_components    each of the eight components delivers 1,000 calls in order end to
 *                       end (relays included), and a MAILBOX passed as an argument works;
 *                       calls to a cell being created wait for it (bounded, then refused)
 *   two_way             two-way calls return values; each error comes back as its own
 *                       status, in time (no entity, handler failed, destroyed, timed out,
 *                       process dead at once, a pending call when its target is killed)
 *   faults              a cellapp killed: its bases get onLoseCell and make new cells; a
 *                       baseapp killed (without backups): calls from cells to their bases
 *                       go to its backup baseapp, which has no such base: refused cleanly
 */
#include "cluster.h"
#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 30000
/* Tests that kill nothing give the manager a long patience: a loop stalled for seconds on a
 * loaded machine (sanitizers, tests in parallel) must not be declared dead. Tests that kill
 * processes use a few seconds, so deaths are noticed in time. */
#define PATIENT "--deadAfterMs=20000"

static const char *S(const rc_cluster *c, int slot) { return c->name[slot]; }

/* Run a method of an entity through command/call; the test fails if it is refused. */
static void invoke(const rc_cluster *c, int slot, int32_t id, const char *method,
                   const char *json)
{
    char out[4096];
    int rc = rc_invoke(c, S(c, slot), id, method, json, out, sizeof out);
    ck_assert_msg(rc == 0, "%s: call %d %s %s: exit %d: %s", S(c, slot), (int)id, method, json,
                  rc, out);
}

static void expect_prop(const rc_cluster *c, int slot, int32_t id, const char *prop,
                        int64_t want)
{
    int64_t got;
    ck_assert_msg(rc_wait_prop(c, S(c, slot), id, prop, want, WAIT_MS, &got),
                  "%s entity %d %s: %lld, expected %lld", S(c, slot), (int)id, prop,
                  (long long)got, (long long)want);
}

static void expect_num(const rc_cluster *c, int slot, const char *path, int64_t want)
{
    int64_t got;
    ck_assert_msg(rc_wait_num(c, S(c, slot), path, want, WAIT_MS, &got), "%s %s: %lld, expected %lld",
                  S(c, slot), path, (long long)got, (long long)want);
}

static int64_t num(const rc_cluster *c, int slot, const char *path)
{
    int64_t v = rc_num(c, S(c, slot), path);
    ck_assert_msg(v != RC_NO_NUMBER, "%s %s: no number", S(c, slot), path);
    return v;
}

static int32_t create(const rc_cluster *c, int slot, const char *props)
{
    int32_t id = rc_create(c, slot, props);
    ck_assert_msg(id > 0, "createBase on %s failed", S(c, slot));
    return id;
}

/* Give base `id` on `slot` a cell in a new space; the slot of its cellapp. */
static int make_cell(const rc_cluster *c, int slot, int32_t id)
{
    invoke(c, slot, id, "makeCell", "[null]");
    int cs = rc_wait_cell(c, slot, id, WAIT_MS);
    ck_assert_msg(cs >= 2, "base %d on %s got no cell", (int)id, S(c, slot));
    char path[64];
    snprintf(path, sizeof path, "entities/%d/props/events", (int)id);
    ck_assert(rc_wait_text(c, S(c, slot), path, "getCell", WAIT_MS));
    return cs;
}

/* Wait until the manager names `slot` the least-loaded process of its role. */
static void wait_least_loaded(const rc_cluster *c, int slot)
{
    const char *path = slot < 2 ? "leastLoaded/baseapp" : "leastLoaded/cellapp";
    ck_assert_msg(rc_wait_text(c, "manager", path, S(c, slot), WAIT_MS),
                  "the manager never named %s least loaded", S(c, slot));
}

/* A busy cell: its cellapp stops being the least loaded one. */
static void burn_cell(const rc_cluster *c, int cell_slot, int32_t id, const char *fraction)
{
    char json[32];
    snprintf(json, sizeof json, "[%s]", fraction);
    invoke(c, cell_slot, id, "burn", json);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

/* --- 1. least loaded ----------------------------------------------------------------- */

START_TEST(least_loaded)
{
    rc_cluster c;
    ck_assert(rc_start(&c, "least", PATIENT, NULL));
    /* A busy baseapp (slot 0): a base there spins 70% of a core. */
    int32_t hot = create(&c, 0, "{\"label\":\"hot\"}");
    invoke(&c, 0, hot, "burn", "[0.7]");
    wait_least_loaded(&c, 1);
    char p0[96], p1[96];
    snprintf(p0, sizeof p0, "processes/%s/load", S(&c, 0));
    snprintf(p1, sizeof p1, "processes/%s/load", S(&c, 1));
    long deadline = rc_now_ms() + WAIT_MS;
    double l0 = 0, l1 = 0;
    while (rc_now_ms() < deadline) {
        l0 = rc_float(&c, "manager", p0);
        l1 = rc_float(&c, "manager", p1);
        if (l0 > l1 + 0.3)
            break;
        h_sleep_ms(200);
    }
    ck_assert_msg(l0 > l1 + 0.3, "loads as the manager sees them: %s %.3f, %s %.3f", S(&c, 0),
                  l0, S(&c, 1), l1);

    /* Created anywhere from either baseapp (operator command): all on the idle one. */
    for (int i = 0; i < 6; i++) {
        char out[1024], want[80];
        int rc = rc_call(&c, out, sizeof out, S(&c, i % 2), "command/createBaseAnywhere",
                         "Probe", NULL);
        ck_assert_msg(rc == 0, "createBaseAnywhere: %s", out);
        snprintf(want, sizeof want, " at %s ", c.addr[1]);
        ck_assert_msg(strstr(out, want), "created on the busy baseapp: %s", out);
    }
    /* And by game code on the busy baseapp (createBaseAnywhere from Probe.spawn). */
    invoke(&c, 0, hot, "spawn", "[100]");
    expect_num(&c, 1, "entities/count", 106);
    expect_prop(&c, 0, hot, "spawnFailures", 0);
    ck_assert_int_eq(num(&c, 0, "entities/count"), 1); /* only the hot base itself */
    char created[8192];
    ck_assert(rc_prop(&c, S(&c, 0), hot, "created", created, sizeof created));
    int32_t ids[128];
    ck_assert_int_eq(rc_parse_ints(created, ids, 128), 100);
    for (int i = 0; i < 100; i += 33) { /* a sample lives on the idle baseapp */
        char path[64], v[64];
        snprintf(path, sizeof path, "entities/%d/type", (int)ids[i]);
        ck_assert_msg(rc_get(&c, S(&c, 1), path, v, sizeof v) && !strcmp(v, "Probe"),
                      "base %d is not on %s", (int)ids[i], S(&c, 1));
    }
    invoke(&c, 0, hot, "burn", "[0]");
    rc_stop(&c);
}
END_TEST

/* --- 2. 10,000 unique ids ------------------------------------------------------------ */

#define SPAWN_HERE 2500
#define CELLS_EACH 250
#define ANYWHERE_1 2248
#define ANYWHERE_2 2250
#define TOTAL_IDS (2 + 2 * SPAWN_HERE + 2 * CELLS_EACH + ANYWHERE_1 + ANYWHERE_2)

static int64_t spaces_total(const rc_cluster *c)
{
    return num(c, 2, "spaces/count") + num(c, 3, "spaces/count");
}

static bool wait_spaces(const rc_cluster *c, int64_t want)
{
    long deadline = rc_now_ms() + WAIT_MS;
    while (rc_now_ms() < deadline) {
        if (spaces_total(c) == want)
            return true;
        h_sleep_ms(200);
    }
    return false;
}

/* The numeric directories `watcher ls TARGET DIR` lists ("<target>  <id>/  dir" lines),
 * appended to ids (at most cap). */
static size_t numeric_dirs(const rc_cluster *c, int slot, const char *dir, int32_t *ids,
                           size_t cap)
{
    static char out[80 * 1024];
    ck_assert_int_eq(h_watcher(out, sizeof out, c->mgr, "ls", S(c, slot), dir, NULL), 0);
    size_t n = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char target[64], name[64];
        if (sscanf(line, "%63s %63s", target, name) != 2)
            continue;
        char *end;
        long id = strtol(name, &end, 10);
        if (end == name || strcmp(end, "/") != 0 || id <= 0)
            continue; /* count, created, byType/ ... */
        if (n < cap)
            ids[n] = (int32_t)id;
        n++;
    }
    return n;
}

/* The ids of a cellapp's spaces (its spaces/ directory) appended to ids. */
static size_t space_ids(const rc_cluster *c, int slot, int32_t *ids, size_t cap)
{
    size_t n = numeric_dirs(c, slot, "spaces", ids, cap);
    ck_assert_uint_le(n, cap);
    return n;
}

/* The first cell entity id listed on a cellapp. */
static int32_t some_cell(const rc_cluster *c, int slot)
{
    int32_t id = 0;
    return numeric_dirs(c, slot, "entities", &id, 1) > 0 ? id : 0;
}

START_TEST(unique_ids)
{
    rc_cluster c;
    /* Thousands of creations at once queue for seconds on a loaded machine: a create's answer
     * that comes after the default call timeout (5 s) would count as a spawn failure although
     * the base was made. This test is about ids, not timeouts: a patient timeout. */
    const char *patient_calls[RC_SLOTS];
    for (int i = 0; i < RC_SLOTS; i++)
        patient_calls[i] = "--callTimeoutMs=120000";
    ck_assert(rc_start(&c, "ids", PATIENT, patient_calls));
    int32_t s1 = create(&c, 0, "{\"label\":\"spawner1\"}");
    int32_t s2 = create(&c, 1, "{\"label\":\"spawner2\"}");
    char json[64];

    /* Bases created here on baseapp 1, the first of them with cells in new spaces. */
    snprintf(json, sizeof json, "[%d, %d]", SPAWN_HERE, CELLS_EACH);
    invoke(&c, 0, s1, "spawnHere", json);
    ck_assert_msg(wait_spaces(&c, CELLS_EACH), "spaces: %lld", (long long)spaces_total(&c));
    /* Make the cellapp holding most of them busy, so the next spaces go to the other. */
    int busy = num(&c, 2, "spaces/count") >= num(&c, 3, "spaces/count") ? 2 : 3;
    int32_t hot = some_cell(&c, busy);
    ck_assert_int_gt(hot, 0);
    burn_cell(&c, busy, hot, "0.8");
    wait_least_loaded(&c, busy == 2 ? 3 : 2);
    invoke(&c, 1, s2, "spawnHere", json);
    ck_assert_msg(wait_spaces(&c, 2 * CELLS_EACH), "spaces: %lld", (long long)spaces_total(&c));
    burn_cell(&c, busy, hot, "0");
    ck_assert_int_gt(num(&c, 2, "spaces/count"), 0);
    ck_assert_int_gt(num(&c, 3, "spaces/count"), 0);

    /* Bases created anywhere by game code on both baseapps. */
    snprintf(json, sizeof json, "[%d]", ANYWHERE_1);
    invoke(&c, 0, s1, "spawn", json);
    snprintf(json, sizeof json, "[%d]", ANYWHERE_2);
    invoke(&c, 1, s2, "spawn", json);
    int64_t bases = 2 + 2 * SPAWN_HERE + ANYWHERE_1 + ANYWHERE_2;
    long deadline = rc_now_ms() + 60000;
    int64_t have = 0;
    while (rc_now_ms() < deadline) {
        have = num(&c, 0, "entities/count") + num(&c, 1, "entities/count");
        if (have == bases)
            break;
        h_sleep_ms(200);
    }
    ck_assert_msg(have == bases, "bases: %lld of %lld", (long long)have, (long long)bases);
    expect_prop(&c, 0, s1, "spawnFailures", 0);
    expect_prop(&c, 1, s2, "spawnFailures", 0);
    ck_assert_int_eq(num(&c, 0, "entities/byType/Probe") + num(&c, 1, "entities/byType/Probe"),
                     bases);
    ck_assert_int_eq(num(&c, 2, "entities/count") + num(&c, 3, "entities/count"),
                     2 * CELLS_EACH);

    /* Every id: the spawners', what each created (its `created` array), every space's. */
    int32_t *ids = calloc(TOTAL_IDS + 16, sizeof *ids);
    ck_assert_ptr_nonnull(ids);
    size_t n = 0;
    ids[n++] = s1;
    ids[n++] = s2;
    static char text[80 * 1024];
    int32_t spawners[2] = {s1, s2};
    long expect_created[2] = {SPAWN_HERE + ANYWHERE_1, SPAWN_HERE + ANYWHERE_2};
    for (int k = 0; k < 2; k++) {
        ck_assert(rc_prop(&c, S(&c, k), spawners[k], "created", text, sizeof text));
        long got = rc_parse_ints(text, ids + n, TOTAL_IDS + 16 - n);
        ck_assert_int_eq(got, expect_created[k]);
        n += (size_t)got;
    }
    n += space_ids(&c, 2, ids + n, TOTAL_IDS + 16 - n);
    n += space_ids(&c, 3, ids + n, TOTAL_IDS + 16 - n);
    ck_assert_uint_eq(n, TOTAL_IDS);
    ck_assert_uint_eq(n, 10000);
    qsort(ids, n, sizeof *ids, cmp_i32);
    ck_assert_int_gt(ids[0], 0);
    for (size_t i = 1; i < n; i++)
        ck_assert_msg(ids[i] != ids[i - 1], "id %d given twice", (int)ids[i]);
    free(ids);
    rc_stop(&c);
}
END_TEST

/* --- 3. the eight components ---------------------------------------------------------- */

/* Blast `count` pings (seq first..) from entity `from` on slot to the mailbox. */
static void blast(const rc_cluster *c, int slot, int32_t from, const char *mb, int count,
                  int first)
{
    char json[512];
    snprintf(json, sizeof json, "[%s, %d, %d]", mb, count, first);
    invoke(c, slot, from, "blast", json);
}

static void expect_seen(const rc_cluster *c, int slot, int32_t id, const char *part, int seen)
{
    char p[32];
    snprintf(p, sizeof p, "%sSeen", part);
    expect_prop(c, slot, id, p, seen);
    snprintf(p, sizeof p, "%sLast", part);
    expect_prop(c, slot, id, p, seen);
    snprintf(p, sizeof p, "%sOrderErrors", part);
    expect_prop(c, slot, id, p, 0);
}

START_TEST(eight_components)
{
    rc_cluster c;
    ck_assert(rc_start(&c, "eight", PATIENT, NULL));
    /* The target T: base on baseapp slot 0, cell on cellapp `tc`. */
    int32_t t = create(&c, 0, "{\"label\":\"target\"}");
    int tc = make_cell(&c, 0, t);
    int oc = tc == 2 ? 3 : 2;
    /* The sender S: base on baseapp slot 1, cell on the other cellapp. */
    burn_cell(&c, tc, t, "0.8");
    wait_least_loaded(&c, oc);
    int32_t s = create(&c, 1, "{\"label\":\"sender\"}");
    ck_assert_int_eq(make_cell(&c, 1, s), oc);
    burn_cell(&c, tc, t, "0");
    /* R on baseapp slot 0: given a mailbox as an argument, uses it. */
    int32_t r = create(&c, 0, "{\"label\":\"relay\"}");

    char m_base[160], m_cell[160], m_cvb[160], m_bvc[160], m_client[160], m_clvb[160],
        m_clvc[160];
    rc_mailbox(m_base, sizeof m_base, t, c.addr[0], "BASE");
    rc_mailbox(m_cell, sizeof m_cell, t, c.addr[tc], "CELL");
    rc_mailbox(m_cvb, sizeof m_cvb, t, c.addr[0], "CELL_VIA_BASE");
    rc_mailbox(m_bvc, sizeof m_bvc, t, c.addr[tc], "BASE_VIA_CELL");
    rc_mailbox(m_client, sizeof m_client, t, c.addr[0], "CLIENT");
    rc_mailbox(m_clvb, sizeof m_clvb, t, c.addr[0], "CLIENT_VIA_BASE");
    rc_mailbox(m_clvc, sizeof m_clvc, t, c.addr[tc], "CLIENT_VIA_CELL");
    int64_t relayed_b0 = num(&c, 0, "calls/relayed"), relayed_tc = num(&c, tc, "calls/relayed");

    /* BASE: baseapp 2 -> baseapp 1. */
    blast(&c, 1, s, m_base, 1000, 1);
    expect_seen(&c, 0, t, "base", 1000);
    /* CELL: baseapp 2 -> the cellapp. */
    blast(&c, 1, s, m_cell, 1000, 1);
    expect_seen(&c, tc, t, "cell", 1000);
    /* CELL_VIA_BASE: baseapp 2 -> baseapp 1, relayed to the cell. */
    blast(&c, 1, s, m_cvb, 1000, 1001);
    expect_seen(&c, tc, t, "cell", 2000);
    expect_num(&c, 0, "calls/relayed", relayed_b0 + 1000);
    /* BASE_VIA_CELL, sent by S's cell: the other cellapp -> T's cellapp, relayed to the
     * base on baseapp 1. */
    blast(&c, oc, s, m_bvc, 1000, 1001);
    expect_seen(&c, 0, t, "base", 2000);
    expect_num(&c, tc, "calls/relayed", relayed_tc + 1000);
    /* SERVICE: T registers a global name, S looks it up (a SERVICE mailbox in its peer). */
    invoke(&c, 0, t, "registerAs", "[\"routing.target\"]");
    expect_prop(&c, 0, t, "answers", 1);
    expect_prop(&c, 0, t, "lastStatus", 0);
    invoke(&c, 1, s, "lookup", "[\"routing.target\"]");
    expect_prop(&c, 1, s, "answers", 1);
    expect_prop(&c, 1, s, "lastStatus", 0);
    char peer[256];
    ck_assert(rc_prop(&c, S(&c, 1), s, "peer", peer, sizeof peer));
    ck_assert_msg(strstr(peer, "SERVICE") && strstr(peer, c.addr[0]), "peer: %s", peer);
    invoke(&c, 1, s, "blastPeer", "[1000, 2001]");
    expect_seen(&c, 0, t, "base", 3000);
    /* A MAILBOX as an argument: S tells R (on baseapp 1) T's CELL_VIA_BASE mailbox; R uses
     * it. */
    char json[512];
    char m_r[160];
    rc_mailbox(m_r, sizeof m_r, r, c.addr[0], "BASE");
    snprintf(json, sizeof json, "[%s, %s]", m_r, m_cvb);
    invoke(&c, 1, s, "tell", json);
    char path[96];
    snprintf(path, sizeof path, "entities/%d/props/peer", (int)r);
    ck_assert(rc_wait_text(&c, S(&c, 0), path, "CELL_VIA_BASE", WAIT_MS));
    invoke(&c, 0, r, "blastPeer", "[1000, 2001]");
    expect_seen(&c, tc, t, "cell", 3000);
    expect_num(&c, 0, "calls/relayed", relayed_b0 + 2000);
    /* CLIENT, CLIENT_VIA_BASE, CLIENT_VIA_CELL: no clients yet, so every call is refused
     * "no client" by T's base, 1,000 each, none lost. */
    int64_t noclient = num(&c, 0, "calls/refused/noClient");
    blast(&c, 1, s, m_client, 1000, 1);
    expect_num(&c, 0, "calls/refused/noClient", noclient + 1000);
    blast(&c, 1, s, m_clvb, 1000, 1);
    expect_num(&c, 0, "calls/refused/noClient", noclient + 2000);
    blast(&c, 1, s, m_clvc, 1000, 1);
    expect_num(&c, 0, "calls/refused/noClient", noclient + 3000);
    expect_num(&c, tc, "calls/relayed", relayed_tc + 2000);

    /* Nothing else was refused anywhere, and the counts did not move on. */
    ck_assert_int_eq(num(&c, 0, "calls/refused/total"), noclient + 3000);
    for (int i = 1; i < RC_SLOTS; i++)
        ck_assert_msg(num(&c, i, "calls/refused/total") == 0, "%s refused calls", S(&c, i));
    expect_seen(&c, 0, t, "base", 3000);
    expect_seen(&c, tc, t, "cell", 3000);

    /* Calls to a cell that is being created wait for it at the base, in order, up to
     * --cellQueueMax (1024 by default); beyond that they are refused "queueFull", counted. */
    int32_t q1 = create(&c, 0, "{\"label\":\"soon\"}");
    invoke(&c, 0, q1, "cellSoon", "[1000]");
    int qc = rc_wait_cell(&c, 0, q1, WAIT_MS);
    ck_assert_int_ge(qc, 2);
    expect_seen(&c, qc, q1, "cell", 1000);
    ck_assert_int_eq(num(&c, 0, "calls/refused/queueFull"), 0);
    int32_t q2 = create(&c, 0, "{\"label\":\"too soon\"}");
    invoke(&c, 0, q2, "cellSoon", "[1100]");
    qc = rc_wait_cell(&c, 0, q2, WAIT_MS);
    ck_assert_int_ge(qc, 2);
    expect_seen(&c, qc, q2, "cell", 1024);
    expect_num(&c, 0, "calls/refused/queueFull", 1100 - 1024);
    rc_stop(&c);
}
END_TEST

/* --- 4. two-way calls ------------------------------------------------------------------- */

typedef struct {
    int64_t status, answer;
    long ms;
} answer;

/* Run a method that makes a two-way call (ask, askFail, dieAndAsk) on `asker` and wait for
 * its outcome (its answers count grows by one): status, answer and how long it took. */
static answer ask(const rc_cluster *c, int slot, int32_t asker, const char *method,
                  const char *json, int timeout_ms)
{
    int64_t before = rc_prop_num(c, S(c, slot), asker, "answers");
    ck_assert(before != RC_NO_NUMBER);
    long t0 = rc_now_ms();
    invoke(c, slot, asker, method, json);
    int64_t got;
    ck_assert_msg(rc_wait_prop(c, S(c, slot), asker, "answers", before + 1, timeout_ms, &got),
                  "%s %s: no answer in %d ms", method, json, timeout_ms);
    answer a = {.ms = rc_now_ms() - t0};
    a.status = rc_prop_num(c, S(c, slot), asker, "lastStatus");
    a.answer = rc_prop_num(c, S(c, slot), asker, "lastAnswer");
    return a;
}

static void ask_value(const rc_cluster *c, int slot, int32_t asker, const char *mb, int x)
{
    char json[256];
    snprintf(json, sizeof json, "[%s, %d]", mb, x);
    answer a = ask(c, slot, asker, "ask", json, WAIT_MS);
    ck_assert_msg(a.status == 0 && a.answer == x, "ask %s: status %lld answer %lld", mb,
                  (long long)a.status, (long long)a.answer);
}

static answer ask_status(const rc_cluster *c, int slot, int32_t asker, const char *mb, int x,
                         int timeout_ms)
{
    char json[256];
    snprintf(json, sizeof json, "[%s, %d]", mb, x);
    return ask(c, slot, asker, "ask", json, timeout_ms);
}

START_TEST(two_way)
{
    /* Slot 0 waits 20 s for answers, slot 1 1.5 s; a silent process is dead after 8 s. Slot
     * 0 does not restore lost cells (test_restore.c does): T's base is left without one. */
    const char *opts[RC_SLOTS] = {"--callTimeoutMs=20000 --restoreLostCells=false",
                                  "--callTimeoutMs=1500", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "twoway", "--deadAfterMs=8000", opts));
    int32_t t = create(&c, 0, "{\"label\":\"target\"}");
    int tc = make_cell(&c, 0, t);
    int32_t v = create(&c, 0, "{\"label\":\"victim\"}");
    int32_t u = create(&c, 0, "{\"label\":\"patient asker\"}");
    int32_t s = create(&c, 1, "{\"label\":\"quick asker\"}");
    char m_base[160], m_cell[160], m_cvb[160], m_bvc[160], m_none[160], m_v[160];
    rc_mailbox(m_base, sizeof m_base, t, c.addr[0], "BASE");
    rc_mailbox(m_cell, sizeof m_cell, t, c.addr[tc], "CELL");
    rc_mailbox(m_cvb, sizeof m_cvb, t, c.addr[0], "CELL_VIA_BASE");
    rc_mailbox(m_bvc, sizeof m_bvc, t, c.addr[tc], "BASE_VIA_CELL");
    rc_mailbox(m_none, sizeof m_none, 999999, c.addr[0], "BASE");
    rc_mailbox(m_v, sizeof m_v, v, c.addr[0], "BASE");

    /* Values come back, directly and through relays. */
    ask_value(&c, 1, s, m_base, 42);
    ask_value(&c, 1, s, m_cell, 43);
    ask_value(&c, 1, s, m_cvb, 44);
    ask_value(&c, 1, s, m_bvc, 45);
    ask_value(&c, 0, u, m_cell, 46);

    /* No such entity. */
    answer a = ask_status(&c, 1, s, m_none, 1, WAIT_MS);
    ck_assert_int_eq(a.status, -7);
    /* The handler failed. */
    char json[256];
    snprintf(json, sizeof json, "[%s]", m_base);
    a = ask(&c, 1, s, "askFail", json, WAIT_MS);
    ck_assert_int_eq(a.status, -5);
    /* Destroyed: die() and echo() in one bundle; the echo finds it being destroyed. */
    snprintf(json, sizeof json, "[%s, 5]", m_v);
    a = ask(&c, 1, s, "dieAndAsk", json, WAIT_MS);
    ck_assert_int_eq(a.status, -8);
    char path[64], val[64];
    snprintf(path, sizeof path, "entities/%d/type", (int)v);
    for (int i = 0; i < 100 && rc_get(&c, S(&c, 0), path, val, sizeof val); i++)
        h_sleep_ms(100);
    ck_assert_msg(!rc_get(&c, S(&c, 0), path, val, sizeof val), "the victim is still there");
    /* Every error so far came back quickly (well within the 1.5 s call timeout's order). */

    /* Timed out: the cellapp is stopped. U (20 s) asks first and waits; S (1.5 s) times out
     * after about 1.5 s. */
    h_kill(c.pid[tc], SIGSTOP);
    int64_t u_before = rc_prop_num(&c, S(&c, 0), u, "answers");
    snprintf(json, sizeof json, "[%s, 7]", m_cell);
    invoke(&c, 0, u, "ask", json);
    a = ask_status(&c, 1, s, m_cell, 8, 10000);
    ck_assert_int_eq(a.status, -10);
    ck_assert_msg(a.ms >= 1400 && a.ms < 10000, "timed out after %ld ms (call timeout 1500)",
                  a.ms);
    /* SIGCONT: U's call, still waiting, gets its answer. */
    ck_assert_int_eq(rc_prop_num(&c, S(&c, 0), u, "answers"), u_before);
    h_kill(c.pid[tc], SIGCONT);
    expect_prop(&c, 0, u, "answers", u_before + 1);
    expect_prop(&c, 0, u, "lastStatus", 0);
    expect_prop(&c, 0, u, "lastAnswer", 7);

    /* A call pending when its target is killed: stopped again, U asks, kill -9; U's call
     * fails "process dead" when the manager declares the death (8 s), not at its 20 s
     * timeout. */
    h_kill(c.pid[tc], SIGSTOP);
    u_before = rc_prop_num(&c, S(&c, 0), u, "answers");
    snprintf(json, sizeof json, "[%s, 9]", m_cell);
    long t_kill = rc_now_ms();
    invoke(&c, 0, u, "ask", json);
    h_sleep_ms(300); /* the request is on its way (it waits, unanswered, either way) */
    ck_assert_int_eq(rc_prop_num(&c, S(&c, 0), u, "answers"), u_before);
    rc_kill9(&c, tc);
    int64_t got;
    ck_assert_msg(rc_wait_prop(&c, S(&c, 0), u, "answers", u_before + 1, 19000, &got),
                  "the pending call did not fail before its timeout");
    long waited = rc_now_ms() - t_kill;
    ck_assert_int_eq(rc_prop_num(&c, S(&c, 0), u, "lastStatus"), -9);
    ck_assert_msg(waited < 19000, "process dead after %ld ms (dead after 8 s, timeout 20 s)",
                  waited);
    snprintf(path, sizeof path, "processes/%s/state", S(&c, tc));
    ck_assert(rc_wait_text(&c, "manager", path, "dead", WAIT_MS));
    /* The process is dead: a new call to it fails at once. */
    a = ask_status(&c, 0, u, m_cell, 10, 10000);
    ck_assert_int_eq(a.status, -9);
    ck_assert_msg(a.ms < 8000, "process dead answered after %ld ms (timeout 20 s)", a.ms);
    /* T's base heard its cell was lost: CELL_VIA_BASE is now refused at once at the base
     * ("no entity": it has no cell), not relayed to the dead cellapp. */
    snprintf(path, sizeof path, "entities/%d/props/events", (int)t);
    ck_assert(rc_wait_text(&c, S(&c, 0), path, "loseCell", WAIT_MS));
    a = ask_status(&c, 0, u, m_cvb, 11, 10000);
    ck_assert_int_eq(a.status, -7);
    ck_assert_msg(a.ms < 8000, "answered after %ld ms (call timeout 20 s)", a.ms);
    rc_stop(&c);
}
END_TEST

/* --- 5. faults ------------------------------------------------------------------------ */

START_TEST(faults)
{
    /* Baseapp slot 0 waits 20 s for answers: an answer well before that is not a timeout;
     * it does not restore lost cells (test_restore.c does): its bases hear onLoseCell. */
    const char *opts[RC_SLOTS] = {"--callTimeoutMs=20000 --restoreLostCells=false", NULL, NULL,
                                  NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "faults", "--deadAfterMs=6000", opts));
    /* Three bases on baseapp slot 0 with cells; the cellapp of the first is killed. */
    int32_t b[3];
    int cs[3];
    for (int i = 0; i < 3; i++) {
        b[i] = create(&c, 0, "{\"label\":\"holder\"}");
        cs[i] = make_cell(&c, 0, b[i]);
    }
    int dead = cs[0], live = cs[0] == 2 ? 3 : 2;
    rc_kill9(&c, dead);
    for (int i = 0; i < 3; i++) {
        char path[64];
        snprintf(path, sizeof path, "entities/%d/props/events", (int)b[i]);
        if (cs[i] != dead)
            continue;
        ck_assert_msg(rc_wait_text(&c, S(&c, 0), path, "loseCell", WAIT_MS),
                      "base %d never heard its cell was lost", (int)b[i]);
        snprintf(path, sizeof path, "entities/%d/cell", (int)b[i]);
        ck_assert(rc_wait_text(&c, S(&c, 0), path, "none", WAIT_MS));
        /* A new cell, elsewhere. */
        invoke(&c, 0, b[i], "makeCell", "[null]");
        ck_assert_int_eq(rc_wait_cell(&c, 0, b[i], WAIT_MS), live);
        snprintf(path, sizeof path, "entities/%d/props/events", (int)b[i]);
        ck_assert(rc_wait_text(&c, S(&c, 0), path, "loseCell;getCell", WAIT_MS));
    }
    /* --restoreLostCells=false: none restored, each lost counted by its reason */
    ck_assert_int_eq(num(&c, 0, "cells/restored"), 0);
    ck_assert_int_ge(num(&c, 0, "cells/lost/off"), 1);
    /* The new cells work. */
    char m_cell[160];
    rc_mailbox(m_cell, sizeof m_cell, b[0], c.addr[live], "CELL");
    int32_t asker = b[1];
    {
        char json[256];
        snprintf(json, sizeof json, "[%s, 12]", m_cell);
        invoke(&c, 0, asker, "ask", json);
        expect_prop(&c, 0, asker, "lastAnswer", 12);
    }

    /* K: base on baseapp slot 1, cell on the live cellapp; then baseapp slot 1 is killed. */
    int32_t k = create(&c, 1, "{\"label\":\"orphan\"}");
    ck_assert_int_eq(make_cell(&c, 1, k), live);
    char m_kbase[160], m_kbvc[160];
    rc_mailbox(m_kbase, sizeof m_kbase, k, c.addr[1], "BASE");
    rc_mailbox(m_kbvc, sizeof m_kbvc, k, c.addr[live], "BASE_VIA_CELL");
    rc_kill9(&c, 1);
    char path[96];
    snprintf(path, sizeof path, "peers/%s", S(&c, 1));
    ck_assert_msg(rc_wait_text(&c, S(&c, live), path, "dead", WAIT_MS),
                  "the cellapp never heard the baseapp died");
    /* Calls to a base of a dead baseapp go to its backup baseapp on the ring of that death
     * (issue 20): the survivor, slot 0, which holds no backup of K here (backups are off in
     * these tests) and refuses them: "no entity". The orphan cell's calls to its base
     * mailbox, ... */
    char out[4096];
    char json[512];
    snprintf(json, sizeof json, "[%s, 10, 1]", m_kbase);
    int64_t no_entity = num(&c, 0, "calls/refused/noEntity");
    int64_t redirected = num(&c, live, "calls/redirected");
    int rc = rc_invoke(&c, S(&c, live), k, "blast", json, out, sizeof out);
    ck_assert_msg(rc == 0, "blast to a dead base refused at once: %s", out);
    expect_num(&c, 0, "calls/refused/noEntity", no_entity + 10);
    ck_assert_int_eq(num(&c, live, "calls/redirected"), redirected + 10);
    /* ... calls relayed by the cell to its dead base (BASE_VIA_CELL) ... */
    snprintf(json, sizeof json, "[%s, 100, 1]", m_kbvc);
    invoke(&c, live, b[0], "blast", json);
    expect_num(&c, 0, "calls/refused/noEntity", no_entity + 110);
    /* ... and a two-way call through it, which answers "no entity" to its caller on slot 0
     * in time, not after the 20 s call timeout. */
    answer a = ask_status(&c, 0, asker, m_kbvc, 13, 10000);
    ck_assert_int_eq(a.status, -7);
    ck_assert_msg(a.ms < 8000, "answered after %ld ms (call timeout 20 s)", a.ms);
    /* The cellapp is alive and well, the orphan cell still there. */
    ck_assert(h_alive(c.pid[live]));
    char v[256];
    snprintf(path, sizeof path, "entities/%d/base", (int)k);
    ck_assert(rc_get(&c, S(&c, live), path, v, sizeof v));
    ck_assert_msg(strstr(v, c.addr[1]), "orphan's base: %s", v);
    ck_assert_int_eq(num(&c, live, "entities/count"), 4);
    rc_stop(&c);
}
END_TEST

static Suite *routing_suite(void)
{
    Suite *s = suite_create("integration_entity_routing");
    const struct {
        const char *name;
        const TTest *test;
    } tests[] = {
        {"least_loaded", least_loaded},         {"unique_ids", unique_ids},
        {"eight_components", eight_components}, {"two_way", two_way},
        {"faults", faults},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, tests[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void) { return h_run_suite(routing_suite()); }
