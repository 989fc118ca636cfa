/* Base backups and their restore through real processes (issue 20): a manager, two baseapps
 * and two cellapps loading the Probe game (tests/entity/routing/cluster.h), driven through
 * the watcher tool; every process started here is stopped by the test (the harness kills
 * what is left when the test process exits, also on failure).
 *
 *   restore_after_kill9  bases on one baseapp (one with a cell, a global name and a
 *                        repeating timer) are backed up on the other; the first is killed
 *                        with SIGKILL; both bases live again on the survivor with the same
 *                        ids and their last backed-up state, onRestore ran, the timer
 *                        fires there, the name resolves there, the cell (on a cellapp) was
 *                        told its base's new home, and calls on mailboxes that name the
 *                        dead baseapp - held by the cellapp, relayed by the cell, held by a
 *                        base on the survivor - all reach the restored base in order; no
 *                        entity is live twice
 *                        calls sent to the survivor for a base before it knew of the death
 *                        wait for the restore and are delivered then, in order
 *   restored_proxy_waits_for_its_client  a base with a client (connected with a session the
 *                        victim issued) is restored without one: it waits as for a login
 *                        session (--sessionExpiryMs) and then hears onClientDeath like a base
 *                        whose client never came (sessions/unclaimed), so its account is not
 *                        locked out as online
 *   byte_rate_bound      300 bases backed up at --backupBytesPerSec=20000: the bytes sent
 *                        never run ahead of the rate (one second's burst), what waits is
 *                        counted as pending, and all of them are backed up in the end; a
 *                        call for a held backup whose owner lives waits --restoreWaitMs, then
 *                        fails "no entity"
 */
#include "backup_checks.h"
#include "harness.h"

#include "common/defs.h"
#include "mcclient/client.h"

#include <check.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS BC_WAIT_MS

START_TEST(restore_after_kill9)
{
    const char *opts[RC_SLOTS] = {"--backupPeriodMs=200", "--backupPeriodMs=200", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "backup", "--deadAfterMs=4000", opts));
    const int victim = 1, survivor = 0;
    /* A: a cell, a global name, a repeating timer, calls seen; B: plain. */
    int32_t a = bc_create(&c, victim, "{\"label\":\"alpha\"}");
    int32_t b = bc_create(&c, victim, "{\"label\":\"beta\"}");
    bc_invoke(&c, victim, a, "makeCell", "[null]");
    int cs = rc_wait_cell(&c, victim, a, WAIT_MS);
    ck_assert_msg(cs >= 2, "A got no cell");
    bc_invoke(&c, victim, a, "registerAs", "[\"svcA\"]");
    bc_expect_prop(&c, victim, a, "answers", 1);
    bc_expect_prop(&c, victim, a, "lastStatus", 0);
    bc_invoke(&c, victim, a, "startTimer", "[0.3, 0.3]");
    for (int i = 1; i <= 3; i++) {
        char json[16];
        snprintf(json, sizeof json, "[%d]", i);
        bc_invoke(&c, victim, a, "ping", json);
    }
    /* P on the survivor holds A's BASE mailbox (naming the victim). */
    char m_abase[160], m_abvc[160];
    rc_mailbox(m_abase, sizeof m_abase, a, c.addr[victim], "BASE");
    rc_mailbox(m_abvc, sizeof m_abvc, a, c.addr[cs], "BASE_VIA_CELL");
    int32_t p = bc_create(&c, survivor, "{\"label\":\"holder\"}");
    {
        char json[256];
        snprintf(json, sizeof json, "[%s]", m_abase);
        bc_invoke(&c, survivor, p, "remember", json);
    }
    /* Backed up: both held on the survivor, and sent again after the last change. */
    int64_t sent = bc_num(&c, victim, "backups/sent");
    bc_invoke(&c, victim, a, "event", "[\"changed\"]");
    ck_assert_msg(bc_wait_at_least(&c, survivor, "backups/held", 2),
                  "the survivor holds %lld backups", (long long)bc_num(&c, survivor, "backups/held"));
    ck_assert(bc_wait_at_least(&c, victim, "backups/sent", sent + 3));
    ck_assert_int_eq(bc_num(&c, survivor, "backups/refused"), 0);

    long killed_at = rc_now_ms();
    rc_kill9(&c, victim);
    /* Calls reaching the survivor for B before it knows of the death (the manager needs
     * 4 s of silence): they wait for B's restore and are delivered then, in order. */
    char m_bhere[160];
    rc_mailbox(m_bhere, sizeof m_bhere, b, c.addr[survivor], "BASE");
    {
        char json[256];
        snprintf(json, sizeof json, "[%s, 5, 1]", m_bhere);
        bc_invoke(&c, survivor, p, "blast", json);
    }
    bool before_death = rc_now_ms() - killed_at < 3000;
    ck_assert_msg(rc_wait_num(&c, bc_name(&c, survivor), "backups/restored", 2, WAIT_MS, NULL),
                  "the bases were not restored (log %s)", c.log[survivor]);
    bc_expect_prop(&c, survivor, b, "baseSeen", 5);
    bc_expect_prop(&c, survivor, b, "baseOrderErrors", 0);
    if (before_death) { /* sent well before the death could be declared: they waited */
        ck_assert_int_ge(bc_num(&c, survivor, "backups/calls/waited"), 5);
        ck_assert_int_ge(bc_num(&c, survivor, "backups/calls/released"), 5);
    }
    ck_assert_int_eq(bc_num(&c, survivor, "backups/calls/expired"), 0);
    ck_assert_int_eq(bc_num(&c, survivor, "backups/lostBases"), 0);
    /* Same ids, their backed-up state, onRestore ran; nothing lives twice. */
    char path[96];
    bc_expect_label(&c, survivor, a, "alpha");
    bc_expect_label(&c, survivor, b, "beta");
    snprintf(path, sizeof path, "entities/%d/props/events", (int)a);
    bc_expect_text(&c, survivor, path, "getCell;changed;restore:");
    snprintf(path, sizeof path, "entities/%d/props/events", (int)b);
    bc_expect_text(&c, survivor, path, "restore:0");
    ck_assert_int_eq(bc_num(&c, survivor, "entities/count"), 3);
    ck_assert_int_eq(bc_num(&c, cs, "entities/count"), 1);
    ck_assert_int_eq(bc_num(&c, cs == 2 ? 3 : 2, "entities/count"), 0);
    /* The timer fires on the survivor. */
    int64_t fires = rc_prop_num(&c, bc_name(&c, survivor), a, "timerFires");
    ck_assert(fires != RC_NO_NUMBER);
    ck_assert_msg(bc_wait_prop_at_least(&c, survivor, a, "timerFires", fires + 3),
                  "the restored timer does not fire");
    /* The cell knows its base's new home. */
    snprintf(path, sizeof path, "entities/%d/base", (int)a);
    bc_expect_text(&c, cs, path, c.addr[survivor]);
    /* Calls on mailboxes naming the dead baseapp reach the restored base, in order: from the
     * cellapp (the cell's blast to A's BASE), relayed by the cell (BASE_VIA_CELL from P),
     * and from P's remembered BASE mailbox. */
    char json[512];
    snprintf(json, sizeof json, "[%s, 10, 4]", m_abase);
    bc_invoke(&c, cs, a, "blast", json);
    bc_expect_prop(&c, survivor, a, "baseSeen", 13);
    snprintf(json, sizeof json, "[%s, 5, 14]", m_abvc);
    bc_invoke(&c, survivor, p, "blast", json);
    bc_expect_prop(&c, survivor, a, "baseSeen", 18);
    bc_invoke(&c, survivor, p, "blastPeer", "[5, 19]");
    bc_expect_prop(&c, survivor, a, "baseSeen", 23);
    bc_expect_prop(&c, survivor, a, "baseLast", 23);
    bc_expect_prop(&c, survivor, a, "baseOrderErrors", 0);
    ck_assert(bc_num(&c, cs, "calls/redirected") >= 10);
    ck_assert(bc_num(&c, survivor, "calls/redirected") >= 5);
    /* The global name resolves to the restored base. */
    snprintf(path, sizeof path, "entities/%d/globalNames", (int)a);
    bc_expect_text(&c, survivor, path, "svcA");
    bc_invoke(&c, survivor, p, "lookup", "[\"svcA\"]");
    bc_expect_prop(&c, survivor, p, "answers", 1);
    bc_expect_prop(&c, survivor, p, "lastStatus", 0);
    snprintf(path, sizeof path, "entities/%d/props/peer", (int)p);
    bc_expect_text(&c, survivor, path, c.addr[survivor]);
    rc_stop(&c);
}
END_TEST

/* Poll until the number at path is at least want, ticking the client meanwhile (so that its
 * baseapp does not drop it as silent). */
static bool wait_ticking(const rc_cluster *c, int slot, const char *path, int64_t want,
                         mc_client *client)
{
    long deadline = rc_now_ms() + WAIT_MS;
    while (rc_now_ms() < deadline) {
        int64_t v = rc_num(c, bc_name(c, slot), path);
        if (v != RC_NO_NUMBER && v >= want)
            return true;
        for (int i = 0; i < 10; i++) {
            struct pollfd pf = {.fd = mc_client_fd(client), .events = POLLIN};
            poll(&pf, 1, MC_CLIENT_TICK_MS);
            mc_client_tick(client);
        }
    }
    return false;
}

START_TEST(restored_proxy_waits_for_its_client)
{
    const char *opts[RC_SLOTS] = {"--backupPeriodMs=200 --sessionExpiryMs=2000",
                                  "--backupPeriodMs=200", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "backupproxy", "--deadAfterMs=4000", opts));
    const int victim = 1, survivor = 0;
    int32_t p = bc_create(&c, victim, "{\"label\":\"player\"}");
    /* a client connects to the victim with a session issued for p */
    char err[4096];
    mc_entity_defs *defs = mc_defs_load(MC_PROBE_RES, err, sizeof err);
    ck_assert_msg(defs != NULL, "%s", err);
    ck_assert(bc_wait_at_least(&c, survivor, "backups/held", 1));
    int64_t sent = bc_num(&c, victim, "backups/sent");
    mc_client *client = bc_connect_client(&c, victim, p, defs);
    ck_assert_msg(wait_ticking(&c, victim, "clients/connected", 1, client),
                  "the client never connected");
    /* backed up again with its client (its state changed), then the victim dies, the
     * client's channel with it */
    ck_assert(wait_ticking(&c, victim, "backups/sent", sent + 1, client));
    ck_assert_int_eq(bc_num(&c, victim, "clients/connected"), 1);
    int64_t issued = bc_num(&c, survivor, "sessions/issued");
    rc_kill9(&c, victim);
    mc_client_free(client);
    mc_defs_free(defs);
    ck_assert_msg(rc_wait_num(&c, bc_name(&c, survivor), "backups/restored", 1, WAIT_MS, NULL),
                  "not restored (log %s)", c.log[survivor]);
    ck_assert_int_eq(bc_num(&c, survivor, "sessions/issued"), issued + 1);
    ck_assert_int_eq(bc_num(&c, survivor, "sessions/unclaimed"), 0);
    /* no client came within --sessionExpiryMs: onClientDeath */
    ck_assert_msg(rc_wait_num(&c, bc_name(&c, survivor), "sessions/unclaimed", 1, WAIT_MS, NULL),
                  "the restored proxy never heard onClientDeath (log %s)", c.log[survivor]);
    rc_stop(&c);
}
END_TEST

START_TEST(byte_rate_bound)
{
    const int rate = 20000, n = 300;
    /* slot 0 only holds backups (and lets calls wait for a restore 500 ms) */
    const char *opts[RC_SLOTS] = {"--restoreWaitMs=500", "--backupBytesPerSec=20000", NULL,
                                  NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "backuprate", "--deadAfterMs=20000", opts));
    int32_t maker = bc_create(&c, 1, "{\"label\":\"maker\"}");
    char json[64];
    snprintf(json, sizeof json, "[%d, 0]", n);
    int64_t before = bc_num(&c, 1, "backups/bytesSent");
    long t0 = rc_now_ms();
    bc_invoke(&c, 1, maker, "spawnHere", json);
    bool saw_pending = false;
    for (;;) {
        int64_t bytes = bc_num(&c, 1, "backups/bytesSent");
        long t = rc_now_ms();
        /* the rate, plus at most a second's worth at once and one backup beyond it */
        int64_t bound = (int64_t)rate * (t - t0) / 1000 + rate + 2000;
        ck_assert_msg(bytes - before <= bound, "%lld bytes sent in %ld ms (rate %d)",
                      (long long)(bytes - before), t - t0, rate);
        if (bc_num(&c, 1, "backups/pending") > 0)
            saw_pending = true;
        if (bc_num(&c, 0, "backups/held") >= n + 1)
            break;
        ck_assert_msg(t - t0 < 60000, "only %lld of %d backed up",
                      (long long)bc_num(&c, 0, "backups/held"), n + 1);
        h_sleep_ms(100);
    }
    ck_assert_msg(saw_pending, "the rate never held a backup back");
    /* what was sent covers every base: more than one second's worth */
    ck_assert(bc_num(&c, 1, "backups/bytesSent") - before > rate);
    /* A call to a base whose backup slot 0 holds, sent to slot 0 while its owner lives (no
     * restore comes): it waits --restoreWaitMs, then fails "no entity". */
    char v[65536];
    ck_assert(rc_prop(&c, bc_name(&c, 1), maker, "created", v, sizeof v));
    int32_t ids[400];
    ck_assert_int_eq(rc_parse_ints(v, ids, 400), n);
    int32_t q = bc_create(&c, 0, "{\"label\":\"asker\"}");
    char m_held[160], ask_json[256];
    rc_mailbox(m_held, sizeof m_held, ids[0], c.addr[0], "BASE");
    snprintf(ask_json, sizeof ask_json, "[%s, 5]", m_held);
    long asked = rc_now_ms();
    bc_invoke(&c, 0, q, "ask", ask_json);
    bc_expect_prop(&c, 0, q, "answers", 1);
    ck_assert_int_eq(rc_prop_num(&c, bc_name(&c, 0), q, "lastStatus"), -7);
    ck_assert_msg(rc_now_ms() - asked >= 500, "answered before the wait ran out");
    ck_assert_int_ge(bc_num(&c, 0, "backups/calls/waited"), 1);
    ck_assert_int_ge(bc_num(&c, 0, "backups/calls/expired"), 1);
    rc_stop(&c);
}
END_TEST

static Suite *backup_suite(void)
{
    Suite *s = suite_create("integration_entity_backup");
    const struct {
        const char *name;
        const TTest *test;
    } tests[] = {
        {"restore_after_kill9", restore_after_kill9},
        {"restored_proxy_waits_for_its_client", restored_proxy_waits_for_its_client},
        {"byte_rate_bound", byte_rate_bound},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, tests[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void) { return h_run_suite(backup_suite()); }
