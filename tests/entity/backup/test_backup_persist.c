/* A persistent base restored from its backup takes its check-out over (issue 20): the Keeper
 * game on two baseapps with a private redis-server (tests/entity/persist/persist_cluster.h).
 * Every process started here is stopped by the test (the harness kills what is left when
 * the test process exits, also on failure).
 *
 *   takeover_after_kill9  a written Keeper changed since its last write is backed up; its
 *                         baseapp is killed with SIGKILL; the survivor restores it with the
 *                         same id and the changed value, its owner record in Redis names
 *                         the survivor with a new token, nothing is released as the dead
 *                         one's, a write lands with the new token, a load by database id
 *                         finds the restored base (live, the same id), and a base that was
 *                         written just before the kill is restored too (a base is backed up
 *                         at once when it gets its database id) or, had that backup not
 *                         arrived, released and loadable: never lost, never live twice
 *   ring_change_moves_backups  a third baseapp is born: the backups the new ring gives it
 *                         move there (sent to it, dropped at the old holder), the others
 *                         stay; every base is held exactly once
 *   refused_backups_sent_again  a backup baseapp that may hold only 1 KiB refuses the
 *                         backups beyond it and tells their owner (BACKUP_REFUSED); when its
 *                         bound is raised live (backups/heldMaxBytes) the owner's next
 *                         visits send them again, until every base is held
 *   lost_base_released    without backups (--backupPeriodMs=0 on the dead baseapp) a written
 *                         Keeper is counted lost (backups/lostBases) and its check-out
 *                         released after --restoreGraceMs; a load started at once waits for
 *                         that rather than release it itself, then loads it
 */
#include "harness.h"
#include "persist_cluster.h"
#include "redis_harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 30000

static uint64_t write_ok(pc_cluster *c, const char *proc, int32_t id)
{
    char why[8192];
    uint64_t dbid = pc_write(c, proc, id, why, sizeof why);
    ck_assert_msg(dbid > 0, "writeToDB %d on %s: %s", (int)id, proc, why);
    return dbid;
}

static void owner_field(rh_redis *r, uint64_t dbid, const char *field, char *out, size_t n)
{
    char key[96];
    snprintf(key, sizeof key, "mc:o:{Keeper:%llu}", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(r, out, n, "HGET", key, field, NULL), 0);
    out[strcspn(out, "\n")] = '\0';
}

static bool wait_at_least(pc_cluster *c, const char *proc, const char *path, long long want)
{
    for (int waited = 0; waited < WAIT_MS; waited += 100) {
        if (pc_int(c, proc, path) >= want)
            return true;
        h_sleep_ms(100);
    }
    return false;
}

START_TEST(takeover_after_kill9)
{
    rh_options opt = {0};
    rh_redis *r = rh_start(&opt);
    ck_assert_msg(r != NULL, "redis-server did not start");
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, "--backupPeriodMs=200");
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    int32_t id = pc_create(&c, b1, "{\"name\":\"kept\",\"counter\":1}");
    uint64_t dbid = write_ok(&c, b1, id);
    char owner[128], old_token[128], token[128];
    owner_field(r, dbid, "owner", owner, sizeof owner);
    ck_assert_str_eq(owner, b1);
    owner_field(r, dbid, "token", old_token, sizeof old_token);
    ck_assert_uint_eq(strlen(old_token), 32);
    /* Changed since its write: only the backup knows 42 (a backup sent after the change). */
    long long sent = pc_int(&c, b1, "backups/sent");
    pc_invoke(&c, b1, id, "bump", "[41]");
    ck_assert(wait_at_least(&c, b2, "backups/held", 1));
    ck_assert(wait_at_least(&c, b1, "backups/sent", sent + 1));
    /* A second Keeper, written, then killed with its baseapp before any backup of it could
     * go: backups are visited once per period, and the kill follows at once. */
    int32_t late = pc_create(&c, b1, "{\"name\":\"late\",\"counter\":7}");
    uint64_t late_dbid = write_ok(&c, b1, late);

    h_kill(c.base[0], SIGKILL);
    h_wait_exit(c.base[0], 10000);
    c.base[0] = -1;
    ck_assert_msg(wait_at_least(&c, b2, "backups/restored", 1), "nothing restored (log %s)",
                  c.log_base[1]);
    /* the late base: restored too (its backup with its database id made it), or its
     * check-out released once the grace has passed (--restoreGraceMs) */
    for (int waited = 0; pc_int(&c, b2, "backups/restored") < 2 &&
                         pc_int(&c, b2, "db/releasedOfDead") < 1;
         waited += 100) {
        ck_assert_msg(waited < WAIT_MS, "the late base was neither restored nor released");
        h_sleep_ms(100);
    }
    ck_assert_msg(pc_wait_int(&c, b2, "backups/takeovers", pc_int(&c, b2, "backups/restored"),
                              WAIT_MS),
                  "the check-out was not taken over (log %s)", c.log_base[1]);
    ck_assert_int_eq(pc_int(&c, b2, "backups/takeoversFailed"), 0);
    /* The same id with the backed-up value; Redis names the survivor, with a new token. */
    ck_assert_int_eq(pc_prop_int(&c, b2, id, "counter"), 42);
    owner_field(r, dbid, "owner", owner, sizeof owner);
    ck_assert_str_eq(owner, b2);
    owner_field(r, dbid, "token", token, sizeof token);
    ck_assert_uint_eq(strlen(token), 32);
    ck_assert_str_ne(token, old_token);
    owner_field(r, dbid, "state", owner, sizeof owner);
    ck_assert_str_eq(owner, "live");
    /* A write with the new token lands. */
    ck_assert_int_eq(write_ok(&c, b2, id), dbid);
    char key[96], out[256];
    snprintf(key, sizeof key, "mc:e:{Keeper:%llu}", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HGET", key, "counter", NULL), 0);
    ck_assert_msg(strncmp(out, "42", 2) == 0, "stored counter: %s", out);
    /* A load finds the restored base, live: never a second copy. */
    char dbid_s[32];
    snprintf(dbid_s, sizeof dbid_s, "%llu", (unsigned long long)dbid);
    ck_assert_int_eq(pc_load(&c, b2, "createBaseFromDB", dbid_s, out, sizeof out), 0);
    ck_assert_msg(atoi(out) == id && strstr(out, " live"), "load: %s", out);
    /* The late one: restored if its backup made it, else released after the grace and
     * loadable again (never lost, never twice). */
    bool late_restored = pc_int(&c, b2, "backups/restored") == 2;
    if (!late_restored) {
        ck_assert_int_eq(pc_int(&c, b2, "db/releasedOfDead"), 1);
        snprintf(dbid_s, sizeof dbid_s, "%llu", (unsigned long long)late_dbid);
        ck_assert_int_eq(pc_load(&c, b2, "createBaseFromDB", dbid_s, out, sizeof out), 0);
        ck_assert_msg(strstr(out, " loaded"), "late load: %s", out);
        ck_assert_int_eq(pc_prop_int(&c, b2, atoi(out), "counter"), 7);
    } else {
        ck_assert_int_eq(pc_prop_int(&c, b2, late, "counter"), 7);
    }
    ck_assert_int_eq(pc_int(&c, b2, "entities/count"), 2);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

START_TEST(ring_change_moves_backups)
{
    rh_options opt = {0};
    rh_redis *r = rh_start(&opt);
    ck_assert_msg(r != NULL, "redis-server did not start");
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, "--backupPeriodMs=200");
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    enum { N = 40 };
    for (int i = 0; i < N; i++) {
        char props[64];
        snprintf(props, sizeof props, "{\"name\":\"r%d\"}", i);
        pc_create(&c, b1, props);
    }
    ck_assert_msg(pc_wait_int(&c, b2, "backups/held", N, WAIT_MS), "%s holds %lld", b2,
                  pc_int(&c, b2, "backups/held"));
    int s3 = pc_add_baseapp(&c, "--backupPeriodMs=200");
    const char *b3 = c.base_name[s3];
    /* b1's bases the new ring gives b3 move there (about half of them) */
    for (int waited = 0;; waited += 100) {
        long long h2 = pc_int(&c, b2, "backups/held"), h3 = pc_int(&c, b3, "backups/held");
        if (h3 > 0 && h2 + h3 == N && pc_int(&c, b1, "backups/pending") == 0 &&
            pc_int(&c, b2, "backups/dropped") == h3)
            break;
        ck_assert_msg(waited < WAIT_MS,
                      "held: %s %lld, %s %lld, dropped at %s %lld, not from a live baseapp at %s %lld "
                      "(logs %s, %s)",
                      b2, h2, b3, h3, b2, pc_int(&c, b2, "backups/dropped"), b3,
                      pc_int(&c, b3, "backups/notFromLiveBaseapp"), c.log_base[0], c.log_base[s3]);
        h_sleep_ms(100);
    }
    long long h3 = pc_int(&c, b3, "backups/held");
    ck_assert_msg(h3 >= N / 5 && h3 <= N - N / 5, "%lld of %d moved", h3, N);
    ck_assert_int_eq(pc_int(&c, b1, "backups/dropsSent"), h3);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

START_TEST(refused_backups_sent_again)
{
    rh_options opt = {0};
    rh_redis *r = rh_start(&opt);
    ck_assert_msg(r != NULL, "redis-server did not start");
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, "--backupHeldMaxBytes=1024");
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    enum { N = 20 };
    for (int i = 0; i < N; i++) {
        char props[64];
        snprintf(props, sizeof props, "{\"name\":\"full%d\"}", i);
        pc_create(&c, b1, props);
    }
    /* b2 keeps what fits in 1 KiB and tells b1 about the rest */
    for (int waited = 0; pc_int(&c, b1, "backups/refusals") == 0; waited += 100) {
        ck_assert_msg(waited < WAIT_MS, "%s heard of no refusal (held at %s: %lld, full %lld)",
                      b1, b2, pc_int(&c, b2, "backups/held"), pc_int(&c, b2, "backups/heldFull"));
        h_sleep_ms(100);
    }
    ck_assert_int_lt(pc_int(&c, b2, "backups/held"), N);
    ck_assert_int_gt(pc_int(&c, b2, "backups/heldFull"), 0);
    ck_assert_int_gt(pc_int(&c, b2, "backups/refusalsSent"), 0);
    /* a bound out of range is refused; a larger one is taken, and the rest arrive */
    char out[4096];
    ck_assert_int_ne(h_watcher(out, sizeof out, c.manager, "set", b2, "backups/heldMaxBytes",
                               "10", NULL),
                     0);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "set", b2, "backups/heldMaxBytes",
                               "1048576", NULL),
                     0);
    ck_assert_msg(pc_wait_int(&c, b2, "backups/held", N, WAIT_MS), "%s holds %lld of %d", b2,
                  pc_int(&c, b2, "backups/held"), N);
    ck_assert_int_eq(pc_int(&c, b2, "backups/refused"), 0); /* none was malformed */
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

START_TEST(lost_base_released)
{
    rh_options opt = {0};
    rh_redis *r = rh_start(&opt);
    ck_assert_msg(r != NULL, "redis-server did not start");
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, "--backupPeriodMs=0");
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    int32_t id = pc_create(&c, b1, "{\"name\":\"lost\",\"counter\":5}");
    uint64_t dbid = write_ok(&c, b1, id);
    ck_assert_int_eq(pc_int(&c, b2, "backups/held"), 0);
    h_kill(c.base[0], SIGKILL);
    h_wait_exit(c.base[0], 10000);
    c.base[0] = -1;
    char path[64], v[64];
    snprintf(path, sizeof path, "peers/%s", b1);
    for (int waited = 0; !(pc_value(&c, b2, path, v, sizeof v) && strcmp(v, "dead") == 0);
         waited += 50) {
        ck_assert_msg(waited < WAIT_MS, "%s never heard %s died", b2, b1);
        h_sleep_ms(50);
    }
    /* At once: the load waits for the grace (the check-out is the dead owner's), then finds
     * it released by the survivor and loads it. */
    char dbid_s[32], out[512];
    snprintf(dbid_s, sizeof dbid_s, "%llu", (unsigned long long)dbid);
    ck_assert_int_eq(pc_load(&c, b2, "createBaseFromDB", dbid_s, out, sizeof out), 0);
    ck_assert_msg(strstr(out, " loaded"), "load: %s", out);
    ck_assert_int_eq(pc_prop_int(&c, b2, atoi(out), "counter"), 5);
    ck_assert_int_eq(pc_int(&c, b2, "db/releasedOfDead"), 1);
    ck_assert_int_eq(pc_int(&c, b2, "backups/lostBases"), 1);
    ck_assert_int_eq(pc_int(&c, b2, "backups/restored"), 0);
    ck_assert(h_file_contains(c.log_base[1], "were not restored from a backup"));
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("integration_entity_backup_persist");
    TCase *tc = tcase_create("takeover");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, takeover_after_kill9);
    tcase_add_test(tc, lost_base_released);
    tcase_add_test(tc, ring_change_moves_backups);
    tcase_add_test(tc, refused_backups_sent_again);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
