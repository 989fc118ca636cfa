/* Teleports to a space on another cellapp through real processes (a manager, a baseapp and
 * two cellapps running the Probe game; docs/WORLD.md "Teleports"): the cell moves with its
 * properties, timers (same ids) and witness state; calls made through its base before,
 * during (the new cellapp's packets delayed so the move is in flight for seconds) and after
 * the move all arrive, in order; its base's cell mailbox names the new cellapp; the old one
 * forwards a late call on the old mailbox; DESTROY_CELL reaches the moved cell. A teleport
 * next to a cell the other cellapp does not have is refused and the entity stays, its calls
 * still arriving; it then goes there and comes back, its timer id kept. The new cellapp dying
 * before it answers, the old one dying before it lets go or after, and a DESTROY_CELL sent to
 * the old cellapp during the move: one cell at most, nothing lost, the base told. Each failed
 * move (refused, the new cellapp dead, no answer in time) calls the cell's onTeleportFailure
 * once with its reason, where it stays, and the Probe's callback can move it there; a move
 * that succeeds calls nothing. */
#include "harness.h"
#include "cells_watch.h"
#include "rules_cluster.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 20000

/* Which cellapp (index) holds the cell of id. */
static int holder(rc_cluster *c, int32_t id)
{
    char p[96], out[4096];
    cw_path(p, sizeof p, id, "type");
    for (int i = 0; i < c->ncell; i++)
        if (rc_get(c, out, sizeof out, c->cell_name[i], p) == 0)
            return i;
    ck_abort_msg("no cellapp holds entity %d", (int)id);
    return -1;
}

/* count pings (seq first..) to the cell of id through its base (CELL_VIA_BASE). */
static void pings_via_base(rc_cluster *c, int32_t id, const char *to, int count, int first)
{
    char args[512], out[256];
    snprintf(args, sizeof args, "[%s, %d, %d]", to, count, first);
    rc_entity_call(c, "baseapp01", id, "blast", args, out, sizeof out);
    ck_assert_str_eq(out, "[]");
}

/* The cell of id on proc is a witness. */
static void check_witness(rc_cluster *c, const char *proc, int32_t id)
{
    char p[128], v[64];
    cw_path(p, sizeof p, id, "aoi/witness");
    rc_value(c, proc, p, v, sizeof v);
    ck_assert_str_eq(v, "true");
}

/* The base of id (on baseapp01) names the cellapp at addr as its cell's. */
static void check_base_cell(rc_cluster *c, int32_t id, const char *addr)
{
    char p[128], v[4096];
    cw_path(p, sizeof p, id, "cell");
    rc_value(c, "baseapp01", p, v, sizeof v);
    ck_assert_msg(strstr(v, addr), "base's cell: %s, want %s", v, addr);
}

/* The cell of id on proc stayed whole after a failed move: `seen` calls delivered there, none
 * out of order, and its timer still firing (three more times). */
static void check_stayed(rc_cluster *c, const char *proc, int32_t id, long long seen)
{
    char p[128];
    cw_path(p, sizeof p, id, "props/cellSeen");
    cw_wait_int_at_least(c, proc, p, seen, WAIT_MS);
    cw_path(p, sizeof p, id, "props/cellOrderErrors");
    ck_assert_int_eq(rc_int(c, proc, p), 0);
    cw_path(p, sizeof p, id, "props/cellTimerFires");
    long long fires = rc_int(c, proc, p);
    cw_wait_int_at_least(c, proc, p, fires + 3, WAIT_MS);
}

/* The onTeleportFailure calls the cell of id on proc heard, as the Probe notes them
 * ("reason:rc;" each, rc its move to (-1, 0, -1) from the callback): exactly `want`, and,
 * when some were heard, the cell is where the last callback put it. */
static void check_tp_failures(rc_cluster *c, const char *proc, int32_t id, const char *want)
{
    char p[128], v[512], quoted[256];
    cw_path(p, sizeof p, id, "props/cellTpFailures");
    rc_value(c, proc, p, v, sizeof v);
    snprintf(quoted, sizeof quoted, "\"%s\"", want);
    ck_assert_msg(strcmp(v, quoted) == 0, "%s %s: %s, want %s", proc, p, v, quoted);
    if (!*want)
        return;
    cw_path(p, sizeof p, id, "position");
    rc_value(c, proc, p, v, sizeof v);
    ck_assert_str_eq(v, "-1 0 -1");
}

/* Delay every packet proc sends by ms (its answer to this is delayed too: the watcher may
 * give up waiting for it, exit 7). */
static void set_latency(rc_cluster *c, const char *proc, int ms)
{
    char v[1024], val[16];
    snprintf(val, sizeof val, "%d", ms);
    int rc = h_watcher(v, sizeof v, c->manager, "set", proc, "nub/rehearsal/latencyMs", val,
                       NULL);
    ck_assert_msg(rc == 0 || rc == 7, "set %s latencyMs: exit %d: %s", proc, rc, v);
}

/* The manager declares a process dead after ms of silence (delayed packets delay heartbeats
 * too: this keeps a process whose packets are slowed on purpose alive). */
static void manager_patience(rc_cluster *c, int ms)
{
    char val[16];
    snprintf(val, sizeof val, "%d", ms);
    cw_set(c, "manager", "registry/deadAfterMs", val);
}

/* A cell on each cellapp: `a` and, on the other, `t` (the first cellapp kept busy while new
 * spaces are asked for, so the manager names the other one least loaded). *from is a's. */
static void cells_on_both(rc_cluster *c, int32_t *a, int32_t *t, int *from)
{
    *a = cw_probe_with_cell(c, "a", NULL, WAIT_MS);
    *from = holder(c, *a);
    ck_assert_int_eq(cw_call_status(c, c->cell_name[*from], *a, "burn", "[0.8]", NULL, 0), 0);
    *t = 0;
    for (int i = 0; i < 30 && !*t; i++) {
        int32_t x = cw_probe_with_cell(c, "t", NULL, WAIT_MS);
        if (holder(c, x) != *from)
            *t = x;
        else
            h_sleep_ms(1000);
    }
    ck_assert_msg(*t, "no space was made on the second cellapp");
    ck_assert_int_eq(cw_call_status(c, c->cell_name[*from], *a, "burn", "[0]", NULL, 0), 0);
}

START_TEST(a_cell_moves_to_another_cellapp_with_everything_and_no_call_is_lost)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    int32_t a, t;
    int from;
    cells_on_both(&c, &a, &t, &from);
    const char *A = c.cell_name[from], *B = c.cell_name[1 - from];
    const char *b_addr = c.cell_addr[1 - from];
    char p[128], v[4096], near_t[512], cell_a[512], via[512], old[512], args[1024], out[256];
    cw_cell_json(&c, t, near_t, sizeof near_t);
    cw_cell_json(&c, a, cell_a, sizeof cell_a);
    cw_mailbox_json(via, sizeof via, a, c.base_addr[0], "CELL_VIA_BASE", cell_a);
    cw_mailbox_json(old, sizeof old, a, c.cell_addr[from], "CELL", cell_a);

    /* what it has on the first cellapp: properties, a repeating and a one-shot timer, a
     * witness with its own radius */
    rc_entity_call(&c, A, a, "note", "[\"carried\"]", out, sizeof out);
    rc_entity_call(&c, A, a, "setHp", "[77]", out, sizeof out);
    ck_assert_int_eq(cw_call_status(&c, A, a, "startTimer", "[0.2, 0.2]", NULL, 0), 0);
    ck_assert_int_eq(cw_call_status(&c, A, a, "startTimer", "[4, 0]", NULL, 0), 0);
    ck_assert_int_eq(cw_call_status(&c, A, a, "watch", "[1, 30, 2]", NULL, 0), 0);
    cw_path(p, sizeof p, a, "props/cellTimerFires");
    cw_wait_int_at_least(&c, A, p, 2, WAIT_MS);
    cw_path(p, sizeof p, a, "props/cellTimer");
    long long timer_id = rc_int(&c, A, p);

    /* calls through its base before the move */
    pings_via_base(&c, a, via, 300, 1);
    /* The new cellapp's packets take 3 s: the move is in flight (its answer on the way)
     * while more calls come, and they wait at the old cellapp. Once it has left, the old
     * cellapp's packets take 2.5 s: the base hears the new address late and the new cellapp
     * hears "flushed" later still, so the calls the base sends straight there wait at the
     * new cellapp behind those forwarded. (The answer to a set is delayed too: the watcher
     * may give up waiting for it, exit 7. The manager waits 30 s for late heartbeats.) */
    manager_patience(&c, 30000);
    set_latency(&c, B, 3000);
    snprintf(args, sizeof args, "[%s, 7, 0]", near_t);
    ck_assert_int_eq(cw_call_status(&c, A, a, "teleportTo", args, NULL, 0), 0);
    pings_via_base(&c, a, via, 300, 301);
    set_latency(&c, A, 2500);
    cw_path(p, sizeof p, a, "cell");
    ck_assert_msg(rc_wait_value(&c, "baseapp01", p, b_addr, WAIT_MS),
                  "the base never learnt the new address %s", b_addr);
    pings_via_base(&c, a, via, 300, 601);
    for (int i = 0; i < 2; i++)
        set_latency(&c, c.cell_name[i], 0);
    cw_path(p, sizeof p, a, "props/cellSeen");
    cw_wait_int_at_least(&c, B, p, 900, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, B, p), 900);
    cw_path(p, sizeof p, a, "props/cellOrderErrors");
    ck_assert_int_eq(rc_int(&c, B, p), 0);
    ck_assert_int_eq(rc_int(&c, A, "moves/started"), 1);
    ck_assert_int_eq(rc_int(&c, A, "moves/out"), 1);
    ck_assert_int_eq(rc_int(&c, A, "moves/failed"), 0);
    ck_assert_int_ge(rc_int(&c, A, "moves/queued"), 1); /* calls waited at the old one */
    ck_assert_int_ge(rc_int(&c, A, "moves/forwarded"), 1);
    ck_assert_int_ge(rc_int(&c, B, "moves/held"), 1);   /* and at the new one */
    ck_assert_int_eq(rc_int(&c, B, "moves/in"), 1);
    check_tp_failures(&c, B, a, ""); /* a move that succeeds calls no onTeleportFailure */

    /* only the second cellapp has it, in t's space, at its new position */
    cw_path(p, sizeof p, a, "type");
    ck_assert_int_ne(rc_get(&c, v, sizeof v, A, p), 0);
    cw_path(p, sizeof p, a, "space");
    long long space_a = rc_int(&c, B, p);
    cw_path(p, sizeof p, t, "space");
    ck_assert_int_eq(space_a, rc_int(&c, B, p));
    cw_path(p, sizeof p, a, "position");
    rc_value(&c, B, p, v, sizeof v);
    ck_assert_str_eq(v, "7 0 0");
    /* its properties */
    cw_path(p, sizeof p, a, "props/cellNote");
    rc_value(&c, B, p, v, sizeof v);
    ck_assert_str_eq(v, "\"carried\"");
    cw_path(p, sizeof p, a, "props/hp");
    ck_assert_int_eq(rc_int(&c, B, p), 77);
    /* its timers, with the ids the game stored: the repeating one goes on firing, the
     * one-shot fires once */
    cw_path(p, sizeof p, a, "props/cellTimer");
    ck_assert_int_eq(rc_int(&c, B, p), timer_id);
    cw_path(p, sizeof p, a, "props/cellTimerFires");
    long long fires = rc_int(&c, B, p);
    cw_wait_int_at_least(&c, B, p, fires + 3, WAIT_MS);
    cw_path(p, sizeof p, a, "props/cellOnceFires");
    cw_wait_int_at_least(&c, B, p, 1, WAIT_MS);
    /* its witness state */
    check_witness(&c, B, a);
    cw_path(p, sizeof p, a, "aoi/radius");
    rc_value(&c, B, p, v, sizeof v);
    ck_assert_msg(strncmp(v, "30", 2) == 0, "radius %s", v);
    ck_assert_int_eq(rc_int(&c, B, "aoi/witnesses"), 1);
    ck_assert_int_eq(rc_int(&c, A, "aoi/witnesses"), 0);
    /* it sees t there, and its client is introduced to it by the new cellapp: an ENTER
     * that reached a base which knew the new address (none dropped as stale) */
    cw_path(p, sizeof p, a, "aoi/inView");
    cw_wait_int_at_least(&c, B, p, 1, WAIT_MS);
    cw_wait_int_at_least(&c, B, "world/enters", 1, WAIT_MS);
    ck_assert(rc_wait_int_at_least(&c, "baseapp01", "world/updatesIn", 1, WAIT_MS));
    ck_assert_int_eq(rc_int(&c, "baseapp01", "world/stale"), 0);

    /* a late call on the old mailbox is forwarded, in order */
    long long fwd = rc_int(&c, A, "moves/forwarded");
    pings_via_base(&c, a, old, 5, 901);
    cw_path(p, sizeof p, a, "props/cellSeen");
    cw_wait_int_at_least(&c, B, p, 905, WAIT_MS);
    cw_path(p, sizeof p, a, "props/cellOrderErrors");
    ck_assert_int_eq(rc_int(&c, B, p), 0);
    ck_assert_int_ge(rc_int(&c, A, "moves/forwarded"), fwd + 5);

    /* the base destroys its cell where it is now, and hears it went */
    rc_entity_call(&c, "baseapp01", a, "dropCell", NULL, out, sizeof out);
    cw_wait_base_event(&c, a, "loseCell;", WAIT_MS);
    cw_wait_gone(&c, B, a, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, "baseapp01", "calls/refused/total"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(a_teleport_next_to_a_cell_that_is_not_there_is_refused_and_the_entity_stays)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    int32_t a, t;
    int from;
    cells_on_both(&c, &a, &t, &from);
    const char *A = c.cell_name[from], *B = c.cell_name[1 - from];
    char p[128], v[4096], near_t[512], cell_a[512], via[512], fake[600], args[1024];
    cw_cell_json(&c, t, near_t, sizeof near_t);
    cw_cell_json(&c, a, cell_a, sizeof cell_a);
    cw_mailbox_json(via, sizeof via, a, c.base_addr[0], "CELL_VIA_BASE", cell_a);
    ck_assert_int_eq(cw_call_status(&c, A, a, "startTimer", "[0.2, 0.2]", NULL, 0), 0);
    ck_assert_int_eq(cw_call_status(&c, A, a, "watch", "[1, 0, 0]", NULL, 0), 0);
    cw_path(p, sizeof p, a, "props/cellTimer");
    long long timer_id = rc_int(&c, A, p);
    /* t's mailbox with an id nobody has: its space is "gone" */
    const char *rest = strchr(near_t, ',');
    ck_assert_ptr_nonnull(rest);
    snprintf(fake, sizeof fake, "{\"id\":999999%s", rest);
    pings_via_base(&c, a, via, 100, 1);
    snprintf(args, sizeof args, "[%s, 1, 1]", fake);
    ck_assert_int_eq(cw_call_status(&c, A, a, "teleportTo", args, NULL, 0), 0);
    pings_via_base(&c, a, via, 100, 101);
    cw_wait_int_at_least(&c, A, "moves/failed", 1, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, B, "moves/refused"), 1);
    ck_assert_int_eq(rc_int(&c, A, "moves/out"), 0);
    /* its game heard it once, refused, there; its callback could move it */
    check_tp_failures(&c, A, a, "1:0;");
    /* it is where it was, with its calls, timers and witness */
    check_stayed(&c, A, a, 200);
    check_witness(&c, A, a);
    cw_path(p, sizeof p, a, "type");
    ck_assert_int_ne(rc_get(&c, v, sizeof v, B, p), 0);
    check_base_cell(&c, a, c.cell_addr[from]);
    /* and it can still move: to t for real, and back next to h (a cell on the first
     * cellapp), its timer going on with its id (the stale entries it left behind in the first
     * cellapp's timers are not taken for it) */
    int32_t h = cw_probe_near(&c, a, "h", WAIT_MS);
    char near_h[512];
    ck_assert_int_eq(holder(&c, h), from);
    cw_cell_json(&c, h, near_h, sizeof near_h);
    snprintf(args, sizeof args, "[%s, 1, 1]", near_t);
    ck_assert_int_eq(cw_call_status(&c, A, a, "teleportTo", args, NULL, 0), 0);
    cw_wait_int_at_least(&c, A, "moves/out", 1, WAIT_MS);
    cw_path(p, sizeof p, a, "cell");
    ck_assert_msg(rc_wait_value(&c, "baseapp01", p, c.cell_addr[1 - from], WAIT_MS),
                  "the base never learnt the new address");
    cw_wait_int_at_least(&c, B, "moves/in", 1, WAIT_MS);
    snprintf(args, sizeof args, "[%s, 2, 2]", near_h);
    ck_assert_int_eq(cw_call_status(&c, B, a, "teleportTo", args, NULL, 0), 0);
    cw_wait_int_at_least(&c, A, "moves/in", 1, WAIT_MS);
    ck_assert_msg(rc_wait_value(&c, "baseapp01", p, c.cell_addr[from], WAIT_MS),
                  "the base never learnt it came back");
    cw_path(p, sizeof p, a, "props/cellTimer");
    ck_assert_int_eq(rc_int(&c, A, p), timer_id);
    cw_path(p, sizeof p, a, "props/cellTimerFires");
    long long fires = rc_int(&c, A, p);
    cw_wait_int_at_least(&c, A, p, fires + 3, WAIT_MS);
    pings_via_base(&c, a, via, 100, 201);
    cw_path(p, sizeof p, a, "props/cellSeen");
    cw_wait_int_at_least(&c, A, p, 300, WAIT_MS);
    cw_path(p, sizeof p, a, "props/cellOrderErrors");
    ck_assert_int_eq(rc_int(&c, A, p), 0);
    cw_path(p, sizeof p, a, "space");
    long long space_a = rc_int(&c, A, p);
    cw_path(p, sizeof p, h, "space");
    ck_assert_int_eq(space_a, rc_int(&c, A, p));
    /* the two moves that succeeded called nothing (the note went and came back with it) */
    cw_path(p, sizeof p, a, "props/cellTpFailures");
    rc_value(&c, A, p, v, sizeof v);
    ck_assert_str_eq(v, "\"1:0;\"");
    rc_stop(&c);
}
END_TEST

START_TEST(the_new_cellapp_dying_before_it_answers_leaves_the_entity_where_it_was)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    int32_t a, t;
    int from;
    cells_on_both(&c, &a, &t, &from);
    const char *A = c.cell_name[from], *B = c.cell_name[1 - from];
    char near_t[512], cell_a[512], via[512], args[1024];
    cw_cell_json(&c, t, near_t, sizeof near_t);
    cw_cell_json(&c, a, cell_a, sizeof cell_a);
    cw_mailbox_json(via, sizeof via, a, c.base_addr[0], "CELL_VIA_BASE", cell_a);
    ck_assert_int_eq(cw_call_status(&c, A, a, "startTimer", "[0.2, 0.2]", NULL, 0), 0);
    ck_assert_int_eq(cw_call_status(&c, A, a, "watch", "[1, 0, 0]", NULL, 0), 0);
    pings_via_base(&c, a, via, 100, 1);
    /* its answer is on the way (1.5 s) when it dies; calls wait meanwhile (the manager
     * declares a process dead after 8 s of silence here) */
    manager_patience(&c, 8000);
    set_latency(&c, B, 1500);
    snprintf(args, sizeof args, "[%s, 1, 1]", near_t);
    ck_assert_int_eq(cw_call_status(&c, A, a, "teleportTo", args, NULL, 0), 0);
    pings_via_base(&c, a, via, 100, 101);
    cw_kill_cellapp(&c, 1 - from);
    /* the manager declares it dead: the entity stays, its calls delivered here in order */
    cw_wait_int_at_least(&c, A, "moves/failed", 1, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, A, "moves/out"), 0);
    ck_assert_int_ge(rc_int(&c, A, "moves/queued"), 1);
    /* its game heard it once: MC_TELEPORT_TIMED_OUT (the call timeout, 5 s, comes before the
     * manager's verdict, 8 s) */
    check_tp_failures(&c, A, a, "2:0;");
    check_stayed(&c, A, a, 200);
    check_witness(&c, A, a);
    check_base_cell(&c, a, c.cell_addr[from]);
    /* once the manager has declared it dead, a move there fails at once: MC_TELEPORT_PEER_DEAD */
    char peer[64];
    snprintf(peer, sizeof peer, "peers/%s", B);
    ck_assert_msg(rc_wait_value(&c, A, peer, "dead", WAIT_MS), "%s never heard %s died", A, B);
    ck_assert_int_eq(cw_call_status(&c, A, a, "teleportTo", args, NULL, 0), 0);
    cw_wait_int_at_least(&c, A, "moves/failed", 2, WAIT_MS);
    check_tp_failures(&c, A, a, "2:0;3:0;");
    ck_assert_int_eq(rc_int(&c, A, "moves/out"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(a_move_the_new_cellapp_answers_too_late_fails_and_the_entity_stays)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    int32_t a, t;
    int from;
    cells_on_both(&c, &a, &t, &from);
    const char *A = c.cell_name[from], *B = c.cell_name[1 - from];
    char p[128], v[4096], near_t[512], cell_a[512], via[512], args[1024];
    cw_cell_json(&c, t, near_t, sizeof near_t);
    cw_cell_json(&c, a, cell_a, sizeof cell_a);
    cw_mailbox_json(via, sizeof via, a, c.base_addr[0], "CELL_VIA_BASE", cell_a);
    ck_assert_int_eq(cw_call_status(&c, A, a, "startTimer", "[0.2, 0.2]", NULL, 0), 0);
    /* the new cellapp's answer takes 7 s, beyond the call timeout (5 s): the old cellapp
     * gives up, tells it to drop its copy and keeps the entity (the manager waits 30 s for
     * late heartbeats) */
    manager_patience(&c, 30000);
    set_latency(&c, B, 7000);
    snprintf(args, sizeof args, "[%s, 1, 1]", near_t);
    ck_assert_int_eq(cw_call_status(&c, A, a, "teleportTo", args, NULL, 0), 0);
    pings_via_base(&c, a, via, 50, 1);
    cw_wait_int_at_least(&c, A, "moves/failed", 1, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, A, "moves/out"), 0);
    check_tp_failures(&c, A, a, "2:0;"); /* MC_TELEPORT_TIMED_OUT, once */
    check_stayed(&c, A, a, 50);
    /* the copy there goes, and the late yes changes nothing here */
    set_latency(&c, B, 0);
    cw_wait_int_at_least(&c, B, "moves/aborted", 1, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, B, "moves/in"), 0);
    cw_path(p, sizeof p, a, "type");
    ck_assert_int_ne(rc_get(&c, v, sizeof v, B, p), 0);
    h_sleep_ms(2500);
    ck_assert_int_eq(rc_int(&c, A, "moves/failed"), 1);
    check_tp_failures(&c, A, a, "2:0;");
    check_base_cell(&c, a, c.cell_addr[from]);
    /* and it can move there now, hearing no failure */
    ck_assert_int_eq(cw_call_status(&c, A, a, "teleportTo", args, NULL, 0), 0);
    cw_wait_int_at_least(&c, B, "moves/in", 1, WAIT_MS);
    cw_path(p, sizeof p, a, "cell");
    ck_assert_msg(rc_wait_value(&c, "baseapp01", p, c.cell_addr[1 - from], WAIT_MS),
                  "the base never learnt the new address");
    cw_path(p, sizeof p, a, "props/cellTpFailures");
    rc_value(&c, B, p, v, sizeof v);
    ck_assert_str_eq(v, "\"2:0;\"");
    ck_assert_int_eq(rc_int(&c, A, "moves/failed"), 1);
    rc_stop(&c);
}
END_TEST

START_TEST(the_old_cellapp_dying_before_it_lets_go_leaves_no_copy_at_the_new_one)
{
    /* the base does not restore its lost cell here (test_restore.c does): what is checked
     * is that the dormant copy never lives */
    rc_cluster c;
    rc_start_opt(&c, 1, 2, "--restoreLostCells=false");
    int32_t a, t;
    int from;
    cells_on_both(&c, &a, &t, &from);
    const char *B = c.cell_name[1 - from];
    char p[128], v[4096], near_t[512], args[1024];
    cw_cell_json(&c, t, near_t, sizeof near_t);
    /* the new cellapp made the dormant copy, its answer is on the way (2 s) when the old
     * cellapp dies */
    manager_patience(&c, 8000);
    set_latency(&c, B, 2000);
    snprintf(args, sizeof args, "[%s, 1, 1]", near_t);
    ck_assert_int_eq(cw_call_status(&c, c.cell_name[from], a, "teleportTo", args, NULL, 0), 0);
    h_sleep_ms(1000);
    cw_kill_cellapp(&c, from);
    set_latency(&c, B, 0);
    /* the base loses its cell with the old cellapp; the copy never lives */
    cw_wait_base_event(&c, a, "loseCell;", WAIT_MS);
    cw_wait_int_at_least(&c, B, "moves/discarded", 1, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, B, "moves/askedBase"), 1);
    ck_assert_int_eq(rc_int(&c, B, "moves/in"), 0);
    cw_path(p, sizeof p, a, "type");
    ck_assert_int_ne(rc_get(&c, v, sizeof v, B, p), 0);
    cw_path(p, sizeof p, a, "cell");
    rc_value(&c, "baseapp01", p, v, sizeof v);
    ck_assert_str_eq(v, "none");
    rc_stop(&c);
}
END_TEST

START_TEST(the_old_cellapp_dying_after_it_let_go_leaves_the_cell_at_the_new_one)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    int32_t a, t;
    int from;
    cells_on_both(&c, &a, &t, &from);
    const char *A = c.cell_name[from], *B = c.cell_name[1 - from];
    char p[128], v[4096], near_t[512], cell_a[512], via[512], args[1024], out[256];
    cw_cell_json(&c, t, near_t, sizeof near_t);
    cw_cell_json(&c, a, cell_a, sizeof cell_a);
    cw_mailbox_json(via, sizeof via, a, c.base_addr[0], "CELL_VIA_BASE", cell_a);
    rc_entity_call(&c, A, a, "note", "[\"carried\"]", out, sizeof out);
    ck_assert_int_eq(cw_call_status(&c, A, a, "startTimer", "[0.2, 0.2]", NULL, 0), 0);
    /* the new cellapp's answer takes 1 s, and by then the old cellapp's packets take 2.5 s:
     * the base hears the new address 2.5 s after the old cellapp let go, the new cellapp its
     * "flushed" 2.5 s later still; the old cellapp dies in between */
    manager_patience(&c, 8000);
    set_latency(&c, B, 1000);
    snprintf(args, sizeof args, "[%s, 1, 1]", near_t);
    ck_assert_int_eq(cw_call_status(&c, A, a, "teleportTo", args, NULL, 0), 0);
    set_latency(&c, A, 2500);
    cw_path(p, sizeof p, a, "cell");
    ck_assert_msg(rc_wait_value(&c, "baseapp01", p, c.cell_addr[1 - from], WAIT_MS),
                  "the base never learnt the new address");
    cw_kill_cellapp(&c, from);
    set_latency(&c, B, 0);
    /* the new cellapp asks the base, which knows it: the cell lives there */
    cw_wait_int_at_least(&c, B, "moves/in", 1, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, B, "moves/askedBase"), 1);
    ck_assert_int_eq(rc_int(&c, B, "moves/discarded"), 0);
    cw_path(p, sizeof p, a, "props/cellNote");
    rc_value(&c, B, p, v, sizeof v);
    ck_assert_str_eq(v, "\"carried\"");
    cw_path(p, sizeof p, a, "props/cellTimerFires");
    long long fires = rc_int(&c, B, p);
    cw_wait_int_at_least(&c, B, p, fires + 3, WAIT_MS);
    pings_via_base(&c, a, via, 50, 1);
    cw_path(p, sizeof p, a, "props/cellSeen");
    cw_wait_int_at_least(&c, B, p, 50, WAIT_MS);
    cw_path(p, sizeof p, a, "props/cellOrderErrors");
    ck_assert_int_eq(rc_int(&c, B, p), 0);
    cw_path(p, sizeof p, a, "cell");
    rc_value(&c, "baseapp01", p, v, sizeof v);
    ck_assert_msg(strstr(v, c.cell_addr[1 - from]), "base's cell: %s", v);
    rc_stop(&c);
}
END_TEST

START_TEST(a_destroy_cell_sent_to_the_old_cellapp_during_the_move_reaches_the_cell)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    int32_t a, t;
    int from;
    cells_on_both(&c, &a, &t, &from);
    const char *A = c.cell_name[from], *B = c.cell_name[1 - from];
    char p[128], v[4096], near_t[512], args[1024], out[256];
    cw_cell_json(&c, t, near_t, sizeof near_t);
    /* the new cellapp's answer takes 1.5 s: the base's DESTROY_CELL goes to the old address
     * while the cell is on its way, waits there, follows it, and the CELL_GONE comes from
     * the new cellapp once the base knows it */
    manager_patience(&c, 8000);
    set_latency(&c, B, 1500);
    snprintf(args, sizeof args, "[%s, 1, 1]", near_t);
    ck_assert_int_eq(cw_call_status(&c, A, a, "teleportTo", args, NULL, 0), 0);
    rc_entity_call(&c, "baseapp01", a, "dropCell", NULL, out, sizeof out);
    cw_wait_base_event(&c, a, "loseCell;", WAIT_MS);
    set_latency(&c, B, 0);
    ck_assert_int_eq(rc_int(&c, A, "moves/out"), 1);
    ck_assert_int_ge(rc_int(&c, A, "moves/queued"), 1);
    ck_assert_int_ge(rc_int(&c, A, "moves/forwarded"), 1);
    ck_assert_int_ge(rc_int(&c, B, "moves/held"), 1); /* until the base knew the address */
    cw_path(p, sizeof p, a, "type");
    ck_assert_int_ne(rc_get(&c, v, sizeof v, A, p), 0);
    cw_wait_gone(&c, B, a, WAIT_MS);
    cw_path(p, sizeof p, a, "cell");
    rc_value(&c, "baseapp01", p, v, sizeof v);
    ck_assert_str_eq(v, "none");
    /* exactly one loss, and the base refused nothing */
    cw_path(p, sizeof p, a, "props/events");
    rc_value(&c, "baseapp01", p, v, sizeof v);
    ck_assert_ptr_null(strstr(strstr(v, "loseCell;") + 1, "loseCell;"));
    ck_assert_int_eq(rc_int(&c, "baseapp01", "calls/refused/total"), 0);
    rc_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("entity_teleport");
    TCase *tc = tcase_create("teleport");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, a_cell_moves_to_another_cellapp_with_everything_and_no_call_is_lost);
    tcase_add_test(tc, a_teleport_next_to_a_cell_that_is_not_there_is_refused_and_the_entity_stays);
    tcase_add_test(tc, the_new_cellapp_dying_before_it_answers_leaves_the_entity_where_it_was);
    tcase_add_test(tc, a_move_the_new_cellapp_answers_too_late_fails_and_the_entity_stays);
    tcase_add_test(tc, the_old_cellapp_dying_before_it_lets_go_leaves_no_copy_at_the_new_one);
    tcase_add_test(tc, the_old_cellapp_dying_after_it_let_go_leaves_the_cell_at_the_new_one);
    tcase_add_test(tc, a_destroy_cell_sent_to_the_old_cellapp_during_the_move_reaches_the_cell);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
