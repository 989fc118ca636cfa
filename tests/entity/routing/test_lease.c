/* The manager lease through real processes (security review, issue 19, finding 7): a
 * baseapp cut off from the manager but not from its peers keeps streaming calls into
 * another baseapp's entity. Once the manager declared it dead, none of its calls lands: it
 * held them (its lease ran out at half the dead-after time) and the receiver drops entity
 * messages from a process declared dead. Back in touch, it is fenced (exit 4) and what it
 * held is dropped, never sent.
 *
 * The partition is the manager's test fault knob faults/ignoreHeartbeatsFrom (--faultKnobs):
 * the manager neither answers nor counts that process's heartbeats, everything else flows,
 * on loopback, without network namespaces. */
#include "cluster.h"
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#define WAIT_MS 30000

static int64_t prop(const rc_cluster *c, int slot, int32_t id, const char *name)
{
    return rc_prop_num(c, c->name[slot], id, name);
}

static int64_t manager_num(const rc_cluster *c, const char *path)
{
    return rc_num(c, "manager", path);
}

START_TEST(partitioned_baseapp_lands_no_call_after_its_death)
{
    rc_cluster c;
    ck_assert(rc_start(&c, "lease", "--faultKnobs=true", NULL));
    /* The receiver on baseapp slot 1, the streamer on slot 0 (to be cut off). */
    int32_t r = rc_create(&c, 1, "{\"label\":\"receiver\"}");
    int32_t z = rc_create(&c, 0, "{\"label\":\"streamer\"}");
    ck_assert(r > 0 && z > 0);
    char mb[160], json[256], out[4096];
    rc_mailbox(mb, sizeof mb, r, c.addr[1], "BASE");
    snprintf(json, sizeof json, "[%s]", mb);
    ck_assert_int_eq(rc_invoke(&c, c.name[0], z, "remember", json, out, sizeof out), 0);
    ck_assert_int_eq(rc_invoke(&c, c.name[0], z, "streamPeer", "[0.05]", out, sizeof out), 0);
    /* The stream lands. */
    long deadline = rc_now_ms() + WAIT_MS;
    while (prop(&c, 1, r, "baseSeen") < 20) {
        ck_assert_msg(rc_now_ms() < deadline, "the stream never reached the receiver");
        h_sleep_ms(100);
    }
    ck_assert_int_eq(prop(&c, 1, r, "baseOrderErrors"), 0);

    /* Cut slot 0 off from the manager, in the middle of the stream. */
    int rc = h_watcher(out, sizeof out, c.mgr, "set", "manager", "faults/ignoreHeartbeatsFrom",
                       c.name[0], NULL);
    ck_assert_msg(rc == 0, "cannot set the fault knob: %s", out);
    char path[96];
    snprintf(path, sizeof path, "peers/%s", c.name[0]);
    ck_assert_msg(rc_wait_text(&c, c.name[1], path, "dead", WAIT_MS),
                  "the receiver never heard that %s died", c.name[0]);
    ck_assert(h_alive(c.pid[0]));
    int64_t seen_at_death = prop(&c, 1, r, "baseSeen");
    ck_assert(seen_at_death >= 20);

    /* The cut-off baseapp runs on (its heartbeats keep reaching the manager, ignored): wait
     * until it has sent eight more, four seconds of its 50 ms stream. */
    int64_t ignored = manager_num(&c, "faults/ignoredHeartbeats");
    deadline = rc_now_ms() + WAIT_MS;
    while (manager_num(&c, "faults/ignoredHeartbeats") < ignored + 8) {
        ck_assert_msg(rc_now_ms() < deadline, "no heartbeats from the cut-off baseapp");
        h_sleep_ms(100);
    }
    ck_assert(h_alive(c.pid[0]));
    /* None of its calls landed after its death. */
    int64_t seen = prop(&c, 1, r, "baseSeen");
    ck_assert_msg(seen == seen_at_death,
                  "%lld calls of a baseapp declared dead landed (receiver saw %lld at its "
                  "death, %lld now)",
                  (long long)(seen - seen_at_death), (long long)seen_at_death, (long long)seen);

    /* Back in touch: fenced, exit 4, its held calls dropped (never sent). */
    rc = h_watcher(out, sizeof out, c.mgr, "set", "manager", "faults/ignoreHeartbeatsFrom", "",
                   NULL);
    ck_assert_msg(rc == 0, "cannot clear the fault knob: %s", out);
    int status = h_wait_exit(c.pid[0], WAIT_MS);
    c.gone[0] = true;
    ck_assert_msg(status == 4, "the cut-off baseapp exited with %d (want 4); see %s", status,
                  c.log[0]);
    ck_assert_msg(h_file_contains(c.log[0], "holding entity messages and writes"),
                  "no lease warning in %s", c.log[0]);
    ck_assert_msg(h_file_contains(c.log[0], "held while out of touch with the manager dropped"),
                  "it held nothing to drop? see %s", c.log[0]);
    ck_assert_int_eq(prop(&c, 1, r, "baseSeen"), seen_at_death);
    ck_assert_int_eq(prop(&c, 1, r, "baseOrderErrors"), 0);
    rc_stop(&c);
}
END_TEST

static Suite *lease_suite(void)
{
    Suite *s = suite_create("integration_entity_lease");
    TCase *tc = tcase_create("lease");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, partitioned_baseapp_lands_no_call_after_its_death);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(lease_suite()); }
