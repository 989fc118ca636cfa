/* Retiring a baseapp (issue 20 item 6; docs/ENTITIES.md "Retiring a baseapp") through real
 * processes: a manager, two baseapps and two cellapps loading the Probe game
 * (tests/entity/routing/cluster.h), driven through the watcher tool; every process started
 * here is stopped by the test (the harness kills what is left when it exits, also on
 * failure).
 *
 *   offload_keeps_state_and_calls  A (a cell, a global name, a repeating timer, a changed
 *                        property) and B live on the baseapp that retires; S on the other
 *                        streams pings to A's mailbox (naming the retiring baseapp) from a
 *                        timer, before, during and after the move. command/retire: the
 *                        manager takes it out of the ring and never names it least loaded
 *                        again; it offloads both to the other baseapp and exits 0. A and B
 *                        live there with the same ids and their state (no onRestore), the
 *                        timer fires there, the name resolves there, the cell was told its
 *                        base's new home; the stream's pings reach A, none lost and in order,
 *                        and go on arriving once it is gone; nothing lives twice.
 *   retiring_survives_manager_restart  a manager restarted meanwhile keeps it out of the ring
 *   order_kept_across_the_switch  the retiring baseapp's sends 300 ms late: no ping lost or
 *                        out of order across the switch to the new home (the hold, RETIRED,
 *                        RETIRE_END)
 *   cell_messages_follow  a CELL_COPY that reaches it while the base is on its way follows it
 *   client_calls_follow   the client's calls sent meanwhile on its old channel follow it
 *   ring_change_keeps_mailboxes  a baseapp born during the retirement: mailboxes naming the
 *                        retired baseapp reach every base (RETIRE_HOMES)
 *   born_after_handover_reaches_moved  a baseapp born after the handover: its calls on
 *                        mailboxes naming the retired baseapp reach every base
 *   target_dies_mid_offload  the base goes to a live baseapp of the new ring instead
 *   home_dies_after_taking  a new home dies after it took bases: they are sent again
 *   home_dies_during_handover  ... during the handover: sent again, the handover starts over
 *   home_stops_during_linger  a new home that stops gracefully (SIGTERM) while the retiring
 *                        one lingers: its bases are not sent again (they ended with it)
 *   home_stops_during_handover  ... stops gracefully during the handover: not sent again,
 *                        the handover is not started over
 *   born_during_handover_reaches_moved  a baseapp born while the retiring one hands over
 *                        (after RETIRE_HOMES went): the holder tells it once the retiring
 *                        one stopped; its calls on mailboxes naming it reach every base
 *   late_sender_keeps_order  a peer that answers RETIRED late: what it sends straight to the
 *                        new home is held until its stream through the retiring one ended
 *   hold_lasts_while_old_home_lives  no time bound on the hold; its bound a base (holdFull)
 *   bad_options_are_refused  --retireHoldMax / --retireHoldBytes / --retireLingerMs out of range
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

START_TEST(offload_keeps_state_and_calls)
{
    const char *opts[RC_SLOTS] = {"--retireLingerMs=10000", "--retireLingerMs=10000", NULL,
                                  NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire", NULL, opts));
    const int retiring = 1, survivor = 0;
    int32_t a = rc_create(&c, retiring, "{\"label\":\"alpha\"}");
    int32_t b = rc_create(&c, retiring, "{\"label\":\"beta\"}");
    ck_assert(a > 0 && b > 0);
    bc_invoke(&c, retiring, a, "makeCell", "[null]");
    int cs = rc_wait_cell(&c, retiring, a, WAIT_MS);
    ck_assert_msg(cs >= 2, "A got no cell");
    bc_invoke(&c, retiring, a, "registerAs", "[\"svcA\"]");
    bc_expect_prop(&c, retiring, a, "answers", 1);
    bc_invoke(&c, retiring, a, "startTimer", "[0.3, 0.3]");
    bc_invoke(&c, retiring, a, "event", "[\"changed\"]");
    /* S streams pings to A's BASE mailbox naming the retiring baseapp */
    char m_abase[160], json[256];
    rc_mailbox(m_abase, sizeof m_abase, a, c.addr[retiring], "BASE");
    int32_t s = rc_create(&c, survivor, "{\"label\":\"streamer\"}");
    ck_assert(s > 0);
    snprintf(json, sizeof json, "[%s]", m_abase);
    bc_invoke(&c, survivor, s, "remember", json);
    bc_invoke(&c, survivor, s, "streamPeer", "[0.02]");
    ck_assert(bc_wait_prop_at_least(&c, retiring, a, "baseSeen", 10));

    char out[4096];
    int rc = rc_call(&c, out, sizeof out, bc_name(&c, retiring), "command/retire", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "retiring"), "command/retire: exit %d: %s", rc, out);
    /* the manager left it out of the ring and places nothing on it any more */
    char ring[1024] = "", least[128] = "";
    ck_assert(rc_get(&c, "manager", "backupRing/members", ring, sizeof ring));
    ck_assert_msg(strstr(ring, c.addr[survivor]) && !strstr(ring, c.addr[retiring]), "%s", ring);
    ck_assert(rc_get(&c, "manager", "leastLoaded/baseapp", least, sizeof least));
    ck_assert_msg(strstr(least, bc_name(&c, survivor)), "least loaded: %s", least);
    /* while it lingers (alive, sending calls on): the stream reaches A at its new home
     * through it, none lost, in order */
    long until = rc_now_ms() + WAIT_MS;
    while (rc_now_ms() < until && !h_file_contains(c.log[retiring], "every base is offloaded"))
        h_sleep_ms(100);
    ck_assert_msg(h_file_contains(c.log[retiring], "every base is offloaded"), "%s",
                  c.log[retiring]);
    int64_t seen0 = rc_prop_num(&c, bc_name(&c, survivor), a, "baseSeen");
    ck_assert(seen0 != RC_NO_NUMBER && seen0 >= 10);
    ck_assert(bc_wait_prop_at_least(&c, survivor, a, "baseSeen", seen0 + 20));
    ck_assert_int_eq(rc_prop_num(&c, bc_name(&c, survivor), a, "baseOrderErrors"), 0);
    ck_assert_int_eq(rc_prop_num(&c, bc_name(&c, survivor), s, "streamRefused"), 0);
    ck_assert_int_ge(bc_num(&c, retiring, "retire/forwarded"), 20);
    ck_assert_int_eq(bc_num(&c, retiring, "retire/failed"), 0);
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    ck_assert_msg(h_file_contains(c.log[retiring], "every base is offloaded"), "%s",
                  c.log[retiring]);
    /* both live on the survivor, same ids and state; nothing lives twice */
    ck_assert_int_ge(bc_num(&c, survivor, "retire/received"), 2);
    ck_assert_int_eq(bc_num(&c, survivor, "retire/receiveRefused"), 0);
    ck_assert_int_eq(bc_num(&c, survivor, "entities/count"), 3);
    ck_assert_int_eq(bc_num(&c, cs, "entities/count") + bc_num(&c, cs == 2 ? 3 : 2, "entities/count"),
                     1);
    char v[4096], path[96];
    bc_expect_label(&c, survivor, a, "alpha");
    bc_expect_label(&c, survivor, b, "beta");
    snprintf(path, sizeof path, "entities/%d/props/events", (int)a);
    bc_expect_text(&c, survivor, path, "changed");
    ck_assert(rc_get(&c, bc_name(&c, survivor), path, v, sizeof v));
    ck_assert_msg(!strstr(v, "restore:"), "onRestore ran on an offloaded base: %s", v);
    /* its timer fires there, its name resolves there, its cell knows where it is */
    int64_t fires = rc_prop_num(&c, bc_name(&c, survivor), a, "timerFires");
    ck_assert(fires != RC_NO_NUMBER && fires > 0);
    ck_assert_msg(bc_wait_prop_at_least(&c, survivor, a, "timerFires", fires + 3),
                  "the offloaded timer does not fire");
    snprintf(path, sizeof path, "entities/%d/globalNames", (int)a);
    bc_expect_text(&c, survivor, path, "svcA");
    snprintf(path, sizeof path, "entities/%d/base", (int)a);
    bc_expect_text(&c, cs, path, c.addr[survivor]);
    /* the stream goes on reaching A once the retired baseapp is gone (its mailbox is
     * redirected to A's backup on the ring, its new home) */
    int64_t seen = rc_prop_num(&c, bc_name(&c, survivor), a, "baseSeen");
    ck_assert(seen != RC_NO_NUMBER);
    ck_assert_msg(bc_wait_prop_at_least(&c, survivor, a, "baseSeen", seen + 20),
                  "the stream stopped reaching A");
    bc_expect_prop(&c, survivor, s, "streamRefused", 0);
    int32_t p = rc_create(&c, survivor, "{\"label\":\"asker\"}");
    ck_assert(p > 0);
    bc_invoke(&c, survivor, p, "lookup", "[\"svcA\"]");
    bc_expect_prop(&c, survivor, p, "answers", 1);
    bc_expect_prop(&c, survivor, p, "lastStatus", 0);
    rc_stop(&c);
}
END_TEST

/* A manager restarted while a baseapp retires (a reviver restarts it) does not put it back in
 * the ring: the baseapp says it is retiring when it registers again (RegisterRequest
 * .retiring). */
START_TEST(retiring_survives_manager_restart)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=120000", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-mgr", NULL, opts));
    const int retiring = 1, survivor = 0;
    int32_t a = bc_create(&c, retiring, "{\"label\":\"alpha\"}");
    char out[4096];
    int rc = rc_call(&c, out, sizeof out, bc_name(&c, retiring), "command/retire", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "retiring"), "command/retire: exit %d: %s", rc, out);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", WAIT_MS));
    bc_expect_label(&c, survivor, a, "alpha");
    ck_assert(rc_restart_manager(&c, "retire-mgr"));
    /* both baseapps registered again under their names, the retiring one out of the ring */
    char path[96];
    for (int slot = 0; slot < 2; slot++) {
        snprintf(path, sizeof path, "processes/%s/internal", bc_name(&c, slot));
        ck_assert_msg(rc_wait_text(&c, "manager", path, c.addr[slot], WAIT_MS),
                      "%s did not register again", bc_name(&c, slot));
    }
    ck_assert(rc_wait_num(&c, "manager", "registry/retiring", 1, WAIT_MS, NULL));
    char ring[1024] = "", least[128] = "";
    ck_assert(rc_get(&c, "manager", "backupRing/members", ring, sizeof ring));
    ck_assert_msg(strstr(ring, c.addr[survivor]) && !strstr(ring, c.addr[retiring]), "%s", ring);
    ck_assert(rc_get(&c, "manager", "leastLoaded/baseapp", least, sizeof least));
    ck_assert_msg(strstr(least, bc_name(&c, survivor)), "least loaded: %s", least);
    rc_stop(&c);
}
END_TEST

/* Wait (polling fast: a window of a few seconds) until the number at path is at least want. */
static bool wait_soon(const rc_cluster *c, int slot, const char *path, int64_t want)
{
    long deadline = rc_now_ms() + WAIT_MS;
    while (rc_now_ms() < deadline) {
        int64_t v = rc_num(c, bc_name(c, slot), path);
        if (v != RC_NO_NUMBER && v >= want)
            return true;
        h_sleep_ms(20);
    }
    return false;
}

static void retire(rc_cluster *c, int slot)
{
    char out[4096];
    int rc = rc_call(c, out, sizeof out, bc_name(c, slot), "command/retire", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "retiring"), "command/retire: exit %d: %s", rc, out);
}

static void set_latency(rc_cluster *c, int slot, const char *ms)
{
    ck_assert_int_eq(rc_set(c, bc_name(c, slot), "nub/rehearsal/latencyMs", ms), 0);
}

/* A stream of pings from S (on the survivor) to A's mailbox naming the retiring baseapp, whose
 * own sends are 300 ms late: the pings it passes on are still on their way when it stops.
 * Every ping reaches A at its new home exactly once and in order (a gap or a swap counts in
 * baseOrderErrors): the survivor learned the new home from RETIRED and held what it sent
 * straight to A until RETIRE_END, which comes after the last ping passed on. */
START_TEST(order_kept_across_the_switch)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=1000", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-order", NULL, opts));
    const int retiring = 1, survivor = 0;
    int32_t a = bc_create(&c, retiring, "{\"label\":\"alpha\"}");
    int32_t s = bc_create(&c, survivor, "{\"label\":\"streamer\"}");
    char m_abase[160], json[256];
    rc_mailbox(m_abase, sizeof m_abase, a, c.addr[retiring], "BASE");
    snprintf(json, sizeof json, "[%s]", m_abase);
    bc_invoke(&c, survivor, s, "remember", json);
    bc_invoke(&c, survivor, s, "streamPeer", "[0.02]");
    ck_assert(bc_wait_prop_at_least(&c, retiring, a, "baseSeen", 10));
    set_latency(&c, retiring, "300");
    retire(&c, retiring);
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    int64_t seen = rc_prop_num(&c, bc_name(&c, survivor), a, "baseSeen");
    ck_assert(seen != RC_NO_NUMBER);
    ck_assert_msg(bc_wait_prop_at_least(&c, survivor, a, "baseSeen", seen + 30),
                  "the stream stopped reaching A");
    ck_assert_int_eq(rc_prop_num(&c, bc_name(&c, survivor), a, "baseOrderErrors"), 0);
    ck_assert_int_eq(rc_prop_num(&c, bc_name(&c, survivor), s, "streamRefused"), 0);
    ck_assert_int_ge(bc_num(&c, survivor, "calls/retiredNoted"), 1);
    ck_assert_int_ge(bc_num(&c, survivor, "retire/held"), 1);
    rc_stop(&c);
}
END_TEST

/* A's cell moves while A is on its way (its new home is stopped meanwhile): the CELL_COPY
 * that reaches the retiring baseapp is passed on (RETIRE_PASS) and the new home keeps it (its
 * cell would be restored there from it). */
START_TEST(cell_messages_follow)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=5000", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-cell", "--deadAfterMs=15000", opts));
    const int retiring = 1, survivor = 0;
    int32_t a = bc_create(&c, retiring, "{\"label\":\"alpha\"}");
    bc_invoke(&c, retiring, a, "makeCell", "[null]");
    int cs = rc_wait_cell(&c, retiring, a, WAIT_MS);
    ck_assert_msg(cs >= 2, "A got no cell");
    char path[96], out[4096];
    snprintf(path, sizeof path, "entities/%d/cellCopy", (int)a);
    ck_assert(rc_get(&c, bc_name(&c, retiring), path, out, sizeof out));
    ck_assert_msg(!strstr(out, "at 12.5 0 -7.25"), "there already: %s", out);
    /* the new home stopped: A waits on its way */
    h_kill(c.pid[survivor], SIGSTOP);
    retire(&c, retiring);
    ck_assert(wait_soon(&c, retiring, "retire/moving", 1));
    int rc = rc_invoke(&c, bc_name(&c, cs), a, "moveTo", "[12.5, -7.25]", out, sizeof out);
    ck_assert_msg(rc == 0, "moveTo: %s", out);
    ck_assert_msg(wait_soon(&c, retiring, "retire/callsWaited", 1), "its cell's copy did not wait");
    h_kill(c.pid[survivor], SIGCONT);
    ck_assert_msg(bc_wait_at_least(&c, retiring, "retire/passed", 1), "nothing passed on");
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    bc_expect_text(&c, survivor, path, "at 12.5 0 -7.25");
    ck_assert_int_eq(bc_num(&c, survivor, "retire/received"), 1);
    rc_stop(&c);
}
END_TEST

static void ping_from_client(mc_client *client, int32_t id, uint16_t exposed, uint32_t seq)
{
    uint8_t arg[4] = {(uint8_t)(seq >> 24), (uint8_t)(seq >> 16), (uint8_t)(seq >> 8),
                      (uint8_t)seq};
    ck_assert_int_eq(mc_client_call_raw(client, MC_PART_BASE, id, exposed, arg, sizeof arg), 0);
}

static void tick_client(mc_client *client, int ms)
{
    for (int t = 0; t < ms; t += MC_CLIENT_TICK_MS) {
        struct pollfd pf = {.fd = mc_client_fd(client), .events = POLLIN};
        poll(&pf, 1, MC_CLIENT_TICK_MS);
        mc_client_tick(client);
    }
}

/* The client of P keeps calling an exposed method of P while P is on its way (its new home
 * is stopped meanwhile; the client has not read its DISCONNECT yet): those calls follow P
 * (RETIRE_CLIENT_CALL) and run at its new home, every one, in order. */
START_TEST(client_calls_follow)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=5000", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-client", "--deadAfterMs=15000", opts));
    const int retiring = 1, survivor = 0;
    int32_t p = bc_create(&c, retiring, "{\"label\":\"player\"}");
    char err[4096];
    mc_entity_defs *defs = mc_defs_load(MC_PROBE_RES, err, sizeof err);
    ck_assert_msg(defs != NULL, "%s", err);
    const mc_def_method *m =
        mc_defs_method_by_name(mc_defs_type_by_name(defs, "Probe"), MC_PART_BASE, "clientPing");
    ck_assert(m && m->exposed_index >= 0);
    uint16_t exposed = (uint16_t)m->exposed_index;
    mc_client *client = bc_connect_client(&c, retiring, p, defs);
    long deadline = rc_now_ms() + WAIT_MS;
    while (rc_num(&c, bc_name(&c, retiring), "clients/connected") < 1 && rc_now_ms() < deadline)
        tick_client(client, 100);
    ck_assert_int_eq(bc_num(&c, retiring, "clients/connected"), 1);
    for (uint32_t i = 1; i <= 5; i++)
        ping_from_client(client, p, exposed, i);
    tick_client(client, 200);
    bc_expect_prop(&c, retiring, p, "clientSeen", 5);
    /* the new home stopped: P waits on its way */
    h_kill(c.pid[survivor], SIGSTOP);
    retire(&c, retiring);
    ck_assert(wait_soon(&c, retiring, "retire/moving", 1));
    /* not ticked: the client has not read that it must go */
    for (uint32_t i = 6; i <= 25; i++)
        ping_from_client(client, p, exposed, i);
    ck_assert_msg(wait_soon(&c, retiring, "retire/clientCalls", 20),
                  "the calls did not follow their player");
    h_kill(c.pid[survivor], SIGCONT);
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    mc_client_free(client);
    mc_defs_free(defs);
    bc_expect_prop(&c, survivor, p, "clientSeen", 25);
    bc_expect_prop(&c, survivor, p, "clientOrderErrors", 0);
    rc_stop(&c);
}
END_TEST

/* A baseapp born while one retires changes the ring: some bases went to a baseapp that is
 * no longer their pick. The retiring one tells every baseapp which (RETIRE_HOMES): calls on
 * mailboxes naming it, redirected by the new ring to the newcomer, are sent on from there to
 * where each base lives; every one is answered. */
#define RING_BASES 16
START_TEST(ring_change_keeps_mailboxes)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=30000", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-ring", NULL, opts));
    const int retiring = 1, survivor = 0;
    int32_t ids[RING_BASES];
    for (int i = 0; i < RING_BASES; i++)
        ids[i] = bc_create(&c, retiring, "{\"label\":\"moved\"}");
    int32_t s = bc_create(&c, survivor, "{\"label\":\"asker\"}");
    retire(&c, retiring);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", WAIT_MS));
    ck_assert_int_eq(bc_num(&c, survivor, "retire/received"), RING_BASES);
    /* a baseapp is born: the ring now has two members */
    ck_assert(rc_start_extra_baseapp(&c, "retire-ring", NULL));
    ck_assert(rc_wait_text(&c, "manager", "backupRing/members", c.xaddr, WAIT_MS));
    /* the retiring baseapp knows the new ring while it still lingers */
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "backupRing/members", c.xaddr, WAIT_MS));
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", 1000));
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    for (int i = 0; i < RING_BASES; i++) {
        char mb[160], json[256];
        rc_mailbox(mb, sizeof mb, ids[i], c.addr[retiring], "BASE");
        snprintf(json, sizeof json, "[%s, %d]", mb, i + 1);
        bc_invoke(&c, survivor, s, "ask", json);
        bc_expect_prop(&c, survivor, s, "answers", i + 1);
        bc_expect_prop(&c, survivor, s, "lastStatus", 0);
        bc_expect_prop(&c, survivor, s, "lastAnswer", i + 1);
    }
    int64_t forwarded = rc_num(&c, c.xname, "retire/homesForwarded");
    ck_assert_msg(forwarded >= 1 && forwarded != RC_NO_NUMBER,
                  "no call went through the newcomer: %lld", (long long)forwarded);
    rc_stop(&c);
}
END_TEST

/* A peer that does not answer RETIRED in time (here the new home itself: its sends are
 * 800 ms late, the retiring baseapp's --callTimeoutMs is 400) still sends calls through the
 * retiring baseapp after RETIRE_END. RETIRE_END names it: the new home keeps holding what it
 * sends straight to A until the retiring baseapp says its stream ended (its RETIRED_NOTED
 * came: RETIRE_SENDER_END). Every ping reaches A once and in order. (Before, RETIRE_END
 * released the hold and the pings still on their way through the retiring baseapp came
 * after later direct ones: baseOrderErrors.) */
START_TEST(late_sender_keeps_order)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=30000 --callTimeoutMs=400", NULL,
                                  NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-late", "--deadAfterMs=15000", opts));
    const int retiring = 1, survivor = 0;
    int32_t a = bc_create(&c, retiring, "{\"label\":\"alpha\"}");
    int32_t s = bc_create(&c, survivor, "{\"label\":\"streamer\"}");
    char m_abase[160], json[256];
    rc_mailbox(m_abase, sizeof m_abase, a, c.addr[retiring], "BASE");
    snprintf(json, sizeof json, "[%s]", m_abase);
    bc_invoke(&c, survivor, s, "remember", json);
    bc_invoke(&c, survivor, s, "streamPeer", "[0.02]");
    ck_assert(bc_wait_prop_at_least(&c, retiring, a, "baseSeen", 10));
    retire(&c, retiring);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", WAIT_MS));
    /* A lives at the survivor, whose sends are late from now on: its answers too (also the
     * one to this set, which may come after the watcher tool gave up: the retiring
     * baseapp's log says below whether the survivor's answer was late) */
    rc_set(&c, bc_name(&c, survivor), "nub/rehearsal/latencyMs", "800");
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", 1000));
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    ck_assert_msg(h_file_contains(c.log[retiring], "did not answer RETIRED in time"),
                  "the survivor answered in time: %s", c.log[retiring]);
    ck_assert_msg(h_file_contains(c.log[retiring], "stream through us ended"), "%s",
                  c.log[retiring]);
    /* (the answer to this set may come too late for the watcher tool: set again) */
    long until = rc_now_ms() + WAIT_MS;
    while (rc_set(&c, bc_name(&c, survivor), "nub/rehearsal/latencyMs", "0") != 0 &&
           rc_now_ms() < until)
        h_sleep_ms(100);
    int64_t seen = rc_prop_num(&c, bc_name(&c, survivor), a, "baseSeen");
    ck_assert(seen != RC_NO_NUMBER);
    ck_assert_msg(bc_wait_prop_at_least(&c, survivor, a, "baseSeen", seen + 30),
                  "the stream stopped reaching A");
    ck_assert_int_eq(rc_prop_num(&c, bc_name(&c, survivor), a, "baseOrderErrors"), 0);
    ck_assert_int_eq(rc_prop_num(&c, bc_name(&c, survivor), s, "streamRefused"), 0);
    ck_assert_int_ge(bc_num(&c, survivor, "retire/lagHeld"), 1);
    ck_assert_int_eq(bc_num(&c, survivor, "retire/lagSenders"), 0);
    rc_stop(&c);
}
END_TEST

/* The hold has no time bound: it lasts while the old home lives. Pings 1..10 go to A through
 * the retiring baseapp (its sends 4 s late, longer than the former 3 s bound), then 11..30
 * straight to A at its new home while the retiring one lingers: 11..25 wait for its stream
 * (--retireHoldMax=15), 26..30 are refused (retire/holdFull). A sees 1..25 in order. */
START_TEST(hold_lasts_while_old_home_lives)
{
    const char *opts[RC_SLOTS] = {"--retireHoldMax=15", "--retireLingerMs=30000", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-hold", "--deadAfterMs=15000", opts));
    const int retiring = 1, survivor = 0;
    int32_t a = bc_create(&c, retiring, "{\"label\":\"alpha\"}");
    int32_t s = bc_create(&c, survivor, "{\"label\":\"sender\"}");
    retire(&c, retiring);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", WAIT_MS));
    bc_expect_label(&c, survivor, a, "alpha");
    /* (its answer to this set may come after the watcher tool gave up: not asked again) */
    rc_set(&c, bc_name(&c, retiring), "nub/rehearsal/latencyMs", "4000");
    char via[160], direct[160], json[256];
    rc_mailbox(via, sizeof via, a, c.addr[retiring], "BASE");
    rc_mailbox(direct, sizeof direct, a, c.addr[survivor], "BASE");
    snprintf(json, sizeof json, "[%s, 10, 1]", via);
    bc_invoke(&c, survivor, s, "blast", json);
    snprintf(json, sizeof json, "[%s, 20, 11]", direct);
    bc_invoke(&c, survivor, s, "blast", json);
    ck_assert(wait_soon(&c, survivor, "retire/holdFull", 5));
    ck_assert_int_eq(bc_num(&c, survivor, "retire/held"), 15);
    /* the handover had not begun: the first ten went through the retiring baseapp */
    ck_assert_int_eq(bc_num(&c, survivor, "calls/retiredNoted"), 0);
    /* the pings through the retiring baseapp come first, however late */
    ck_assert(bc_wait_prop_at_least(&c, survivor, a, "baseSeen", 10));
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    ck_assert(bc_wait_prop_at_least(&c, survivor, a, "baseSeen", 25));
    ck_assert_int_eq(rc_prop_num(&c, bc_name(&c, survivor), a, "baseSeen"), 25);
    ck_assert_int_eq(rc_prop_num(&c, bc_name(&c, survivor), a, "baseOrderErrors"), 0);
    ck_assert_int_eq(bc_num(&c, survivor, "retire/holdFull"), 5);
    ck_assert_int_eq(bc_num(&c, survivor, "retire/holding"), 0);
    rc_stop(&c);
}
END_TEST

/* A baseapp born after the handover (the retired one gone) never heard RETIRE_HOMES nor the
 * ring of the retired one's death; calls it sends on mailboxes naming the retired baseapp
 * must still reach every base. The holder of bases taken from a retiring baseapp tells each
 * baseapp born later where they live (RETIRE_HOMES to it, retire/homesTold): the newcomer
 * sends such a call there (retire/homesForwarded). Every ask is answered. */
START_TEST(born_after_handover_reaches_moved)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=1000", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-born", NULL, opts));
    const int retiring = 1, survivor = 0;
    int32_t ids[RING_BASES];
    for (int i = 0; i < RING_BASES; i++)
        ids[i] = bc_create(&c, retiring, "{\"label\":\"moved\"}");
    retire(&c, retiring);
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    ck_assert(rc_wait_num(&c, bc_name(&c, survivor), "entities/count", RING_BASES, WAIT_MS,
                          NULL));
    /* a baseapp is born: about half of the bases now pick it on the ring */
    ck_assert(rc_start_extra_baseapp(&c, "retire-born", NULL));
    ck_assert(rc_wait_text(&c, bc_name(&c, survivor), "backupRing/members", c.xaddr, WAIT_MS));
    ck_assert_msg(rc_wait_num(&c, c.xname, "retire/homesKnown", RING_BASES, WAIT_MS, NULL),
                  "the newcomer was not told where the moved bases live");
    char out[1024];
    int rc = rc_call(&c, out, sizeof out, c.xname, "command/createBase", "Probe",
                     "{\"label\":\"asker\"}", NULL);
    const char *p = strstr(out, "command/createBase");
    ck_assert_msg(rc == 0 && p, "createBase on the newcomer: %s", out);
    int32_t asker = (int32_t)atol(p + strlen("command/createBase"));
    ck_assert(asker > 0);
    for (int i = 0; i < RING_BASES; i++) {
        char mb[160], json[256];
        rc_mailbox(mb, sizeof mb, ids[i], c.addr[retiring], "BASE");
        snprintf(json, sizeof json, "[%s, %d]", mb, i + 1);
        ck_assert_int_eq(rc_invoke(&c, c.xname, asker, "ask", json, out, sizeof out), 0);
        ck_assert_msg(rc_wait_prop(&c, c.xname, asker, "answers", i + 1, WAIT_MS, NULL),
                      "base %d not answered", (int)ids[i]);
        ck_assert_int_eq(rc_prop_num(&c, c.xname, asker, "lastStatus"), 0);
        ck_assert_int_eq(rc_prop_num(&c, c.xname, asker, "lastAnswer"), i + 1);
    }
    ck_assert_int_ge(rc_num(&c, c.xname, "retire/homesForwarded"), 1);
    rc_stop(&c);
}
END_TEST

/* The baseapp a base is sent to dies before it answered (stopped, then killed): the base is
 * thawed and sent to a live baseapp of the new ring; every base lands there. */
START_TEST(target_dies_mid_offload)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=5000", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-target", "--deadAfterMs=4000", opts));
    const int retiring = 1, target = 0;
    ck_assert(rc_start_extra_baseapp(&c, "retire-target", NULL));
    ck_assert(rc_wait_text(&c, "manager", "backupRing/members", c.xaddr, WAIT_MS));
    for (int i = 0; i < RING_BASES; i++)
        bc_create(&c, retiring, "{\"label\":\"moved\"}");
    h_kill(c.pid[target], SIGSTOP);
    retire(&c, retiring);
    ck_assert(wait_soon(&c, retiring, "retire/moving", 1));
    rc_kill9(&c, target);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", WAIT_MS));
    ck_assert_int_ge(bc_num(&c, retiring, "retire/retargeted"), 1);
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    ck_assert(rc_wait_num(&c, c.xname, "entities/count", RING_BASES, WAIT_MS, NULL));
    rc_stop(&c);
}
END_TEST

/* Out-of-range retirement options stop a baseapp at start with one line naming them. */
START_TEST(bad_options_are_refused)
{
    const char *res = "--res=" MC_PROBE_RES, *game = "--game=" MC_PROBE_GAME,
               *in = "--internal=127.0.0.1:0", *ex = "--external=127.0.0.1:0";
    rc_expect_refused("baseapp", "retireHoldMax", res, game, in, ex, "--retireHoldMax=0", NULL);
    rc_expect_refused("baseapp", "retireHoldMax", res, game, in, ex, "--retireHoldMax=100001",
                      NULL);
    rc_expect_refused("baseapp", "retireHoldBytes", res, game, in, ex,
                      "--retireHoldBytes=1023", NULL);
    rc_expect_refused("baseapp", "retireLingerMs", res, game, in, ex,
                      "--retireLingerMs=600001", NULL);
}
END_TEST

/* A new home dies (SIGKILL, no backups in this cluster) after it took some of the bases, while
 * the retiring baseapp lingers: it sends those again, from the state they went with, to a
 * live baseapp; every base lives there in the end. */
START_TEST(home_dies_after_taking)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=20000", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-home", "--deadAfterMs=4000", opts));
    const int retiring = 1, home = 0;
    ck_assert(rc_start_extra_baseapp(&c, "retire-home", NULL));
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "backupRing/members", c.xaddr, WAIT_MS));
    for (int i = 0; i < RING_BASES; i++)
        bc_create(&c, retiring, "{\"label\":\"moved\"}");
    retire(&c, retiring);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", WAIT_MS));
    int64_t there = bc_num(&c, home, "entities/count");
    ck_assert_msg(there >= 1, "no base went to the home that dies");
    rc_kill9(&c, home);
    ck_assert_msg(rc_wait_num(&c, c.xname, "entities/count", RING_BASES, WAIT_MS, NULL),
                  "the bases of the dead home were not sent again");
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    ck_assert_int_eq(rc_num(&c, c.xname, "entities/count"), RING_BASES);
    rc_stop(&c);
}
END_TEST

/* A new home dies (SIGKILL) during the handover itself: stopped once the retiring baseapp
 * lingers, so the handover waits on its answers (RETIRED, --callTimeoutMs 20 s), killed once
 * retire/state says "handing over". The retiring baseapp sends the bases that went there
 * again, from the state they went with, to the live baseapp of the new ring, starts the
 * handover over and exits 0: every base lives there, once. */
START_TEST(home_dies_during_handover)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=3000 --callTimeoutMs=20000", NULL,
                                  NULL};
    rc_cluster c;
    /* (the manager declares the stopped home dead only well after the linger is over) */
    ck_assert(rc_start(&c, "retire-handover", "--deadAfterMs=15000", opts));
    const int retiring = 1, home = 0;
    ck_assert(rc_start_extra_baseapp(&c, "retire-handover", NULL));
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "backupRing/members", c.xaddr, WAIT_MS));
    for (int i = 0; i < RING_BASES; i++)
        bc_create(&c, retiring, "{\"label\":\"moved\"}");
    retire(&c, retiring);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", WAIT_MS));
    int64_t there = bc_num(&c, home, "entities/count");
    ck_assert_msg(there >= 1 && there < RING_BASES, "%lld bases went to the home that dies",
                  (long long)there);
    h_kill(c.pid[home], SIGSTOP);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "handing over", WAIT_MS));
    rc_kill9(&c, home);
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    ck_assert_msg(h_file_contains(c.log[retiring], "died during the handover"), "%s",
                  c.log[retiring]);
    ck_assert_msg(rc_wait_num(&c, c.xname, "entities/count", RING_BASES, WAIT_MS, NULL),
                  "the bases of the home that died were not sent again");
    rc_stop(&c);
}
END_TEST

/* A new home stops gracefully (SIGTERM: it deregisters, its bases end with it) while the
 * retiring baseapp lingers. Its bases are not sent again from the state they left with: that
 * would bring back bases that ended (or, had it passed them on, make a second, stale copy).
 * The retiring baseapp exits 0; the survivor holds only the bases sent to it. (Before, every
 * home "not live" counted as dead: they were sent again, the survivor held them all.) */
START_TEST(home_stops_during_linger)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=40000", NULL, NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-stop", NULL, opts));
    const int retiring = 1, survivor = 0;
    ck_assert(rc_start_extra_baseapp(&c, "retire-stop", NULL));
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "backupRing/members", c.xaddr, WAIT_MS));
    for (int i = 0; i < RING_BASES; i++)
        bc_create(&c, retiring, "{\"label\":\"moved\"}");
    retire(&c, retiring);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", WAIT_MS));
    int64_t there = rc_num(&c, c.xname, "entities/count");
    ck_assert_msg(there >= 1 && there < RING_BASES, "%lld bases went to the home that stops",
                  (long long)there);
    int64_t here = bc_num(&c, survivor, "entities/count");
    ck_assert_int_eq(here + there, RING_BASES);
    h_kill(c.xpid, SIGTERM);
    ck_assert_int_eq(h_wait_exit(c.xpid, 60000), 0);
    c.xpid = 0;
    /* the retiring one saw the stop while it lingered (it lingers 40 s), then retired */
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", 1000));
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    ck_assert_msg(!h_file_contains(c.log[retiring], "sending them again"), "%s",
                  c.log[retiring]);
    ck_assert_int_eq(bc_num(&c, survivor, "entities/count"), here);
    rc_stop(&c);
}
END_TEST

/* A new home stops gracefully during the handover: a cellapp stopped (SIGSTOP) once the
 * retiring baseapp lingers keeps the handover waiting on its answer to RETIRED
 * (--callTimeoutMs 60 s; it answers once it goes on); meanwhile the new home is told to stop
 * (SIGTERM) and deregisters.
 * That is a stop, not a death: the handover is not started over and its bases are not sent
 * again. (Before, a home "not live" at any step counted as dead.) */
START_TEST(home_stops_during_handover)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=3000 --callTimeoutMs=60000", NULL,
                                  NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-hstop", "--deadAfterMs=60000", opts));
    const int retiring = 1, survivor = 0, cellapp = 2;
    ck_assert(rc_start_extra_baseapp(&c, "retire-hstop", NULL));
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "backupRing/members", c.xaddr, WAIT_MS));
    for (int i = 0; i < RING_BASES; i++)
        bc_create(&c, retiring, "{\"label\":\"moved\"}");
    retire(&c, retiring);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "lingering", WAIT_MS));
    int64_t there = rc_num(&c, c.xname, "entities/count");
    ck_assert_msg(there >= 1 && there < RING_BASES, "%lld bases went to the home that stops",
                  (long long)there);
    int64_t here = bc_num(&c, survivor, "entities/count");
    ck_assert_int_eq(here + there, RING_BASES);
    h_kill(c.pid[cellapp], SIGSTOP);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "handing over", WAIT_MS));
    h_kill(c.xpid, SIGTERM);
    ck_assert_int_eq(h_wait_exit(c.xpid, 60000), 0);
    c.xpid = 0;
    /* the retiring baseapp heard of the stop (the ring lost it) while it still waits */
    char ring[512] = "";
    long until = rc_now_ms() + WAIT_MS;
    while (rc_now_ms() < until &&
           (!rc_get(&c, bc_name(&c, retiring), "backupRing/members", ring, sizeof ring) ||
            strstr(ring, c.xaddr)))
        h_sleep_ms(50);
    ck_assert_msg(!strstr(ring, c.xaddr), "the retiring baseapp's ring: %s", ring);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "handing over", 1000));
    h_kill(c.pid[cellapp], SIGCONT);
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    ck_assert_msg(!h_file_contains(c.log[retiring], "died during the handover"), "%s",
                  c.log[retiring]);
    ck_assert_msg(!h_file_contains(c.log[retiring], "sending them again"), "%s",
                  c.log[retiring]);
    ck_assert_int_eq(bc_num(&c, survivor, "entities/count"), here);
    rc_stop(&c);
}
END_TEST

/* A baseapp born while the retiring one hands over (its RETIRE_HOMES and RETIRED went to the
 * ring of before: a cellapp stopped with SIGSTOP keeps it waiting on RETIRED) heard neither.
 * The holder of the bases keeps it queued while the retiring one is alive and tells it
 * (RETIRED_HOMES) once it stopped: every call the newcomer sends on a mailbox naming the
 * retired baseapp is answered. (Before, the holder dropped the newcomer because the retiring
 * one was still alive, and never told it.) */
START_TEST(born_during_handover_reaches_moved)
{
    const char *opts[RC_SLOTS] = {NULL, "--retireLingerMs=1000 --callTimeoutMs=60000", NULL,
                                  NULL};
    rc_cluster c;
    ck_assert(rc_start(&c, "retire-during", "--deadAfterMs=60000", opts));
    const int retiring = 1, survivor = 0, cellapp = 2;
    int32_t ids[RING_BASES];
    for (int i = 0; i < RING_BASES; i++)
        ids[i] = bc_create(&c, retiring, "{\"label\":\"moved\"}");
    h_kill(c.pid[cellapp], SIGSTOP);
    retire(&c, retiring);
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "handing over", WAIT_MS));
    ck_assert(rc_wait_num(&c, bc_name(&c, survivor), "entities/count", RING_BASES, WAIT_MS,
                          NULL));
    ck_assert(rc_start_extra_baseapp(&c, "retire-during", NULL));
    ck_assert(rc_wait_text(&c, bc_name(&c, survivor), "backupRing/members", c.xaddr, WAIT_MS));
    /* the newcomer was born during the handover: it still waits on the stopped cellapp */
    ck_assert(rc_wait_text(&c, bc_name(&c, retiring), "retire/state", "handing over", 1000));
    h_kill(c.pid[cellapp], SIGCONT);
    ck_assert_int_eq(h_wait_exit(c.pid[retiring], 120000), 0);
    c.gone[retiring] = true;
    ck_assert_msg(rc_wait_num(&c, c.xname, "retire/homesKnown", RING_BASES, WAIT_MS, NULL),
                  "the newcomer was not told where the moved bases live");
    char out[1024];
    int rc = rc_call(&c, out, sizeof out, c.xname, "command/createBase", "Probe",
                     "{\"label\":\"asker\"}", NULL);
    const char *p = strstr(out, "command/createBase");
    ck_assert_msg(rc == 0 && p, "createBase on the newcomer: %s", out);
    int32_t asker = (int32_t)atol(p + strlen("command/createBase"));
    ck_assert(asker > 0);
    for (int i = 0; i < RING_BASES; i++) {
        char mb[160], json[256];
        rc_mailbox(mb, sizeof mb, ids[i], c.addr[retiring], "BASE");
        snprintf(json, sizeof json, "[%s, %d]", mb, i + 1);
        ck_assert_int_eq(rc_invoke(&c, c.xname, asker, "ask", json, out, sizeof out), 0);
        ck_assert_msg(rc_wait_prop(&c, c.xname, asker, "answers", i + 1, WAIT_MS, NULL),
                      "base %d not answered", (int)ids[i]);
        ck_assert_int_eq(rc_prop_num(&c, c.xname, asker, "lastStatus"), 0);
        ck_assert_int_eq(rc_prop_num(&c, c.xname, asker, "lastAnswer"), i + 1);
    }
    rc_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("entity_retire");
    TCase *tc = tcase_create("retire");
    tcase_set_timeout(tc, 600);


    tcase_add_test(tc, offload_keeps_state_and_calls);
    tcase_add_test(tc, retiring_survives_manager_restart);
    tcase_add_test(tc, order_kept_across_the_switch);
    tcase_add_test(tc, cell_messages_follow);
    tcase_add_test(tc, client_calls_follow);
    tcase_add_test(tc, late_sender_keeps_order);
    tcase_add_test(tc, hold_lasts_while_old_home_lives);
    tcase_add_test(tc, ring_change_keeps_mailboxes);
    tcase_add_test(tc, born_after_handover_reaches_moved);
    tcase_add_test(tc, target_dies_mid_offload);
    tcase_add_test(tc, home_dies_after_taking);
    tcase_add_test(tc, home_dies_during_handover);
    tcase_add_test(tc, home_stops_during_linger);
    tcase_add_test(tc, home_stops_during_handover);
    tcase_add_test(tc, born_during_handover_reaches_moved);
    tcase_add_test(tc, bad_options_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
