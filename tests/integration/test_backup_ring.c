/* The backup ring (server/backup_ring.h), a pure function: never the owner, the same answer
 * for the same ring whatever the order of its members, entities spread evenly, a birth or
 * a death moves only the entities it must, the ring published with an owner's death names
 * the same backup as the one before it, and malformed wire rings are refused. */
#include "server/backup_ring.h"

#include "check_main.h"
#include "mercury/status.h"

#include <stdio.h>
#include <string.h>

static void ring_of(mc_backup_ring *r, int n, int first_port)
{
    mc_backup_ring_clear(r);
    r->version = 1;
    for (int i = 0; i < n; i++) {
        char text[32];
        snprintf(text, sizeof text, "127.0.0.1:%d", first_port + i);
        ck_assert_int_eq(mc_address_parse(text, &r->members[i]), MC_OK);
    }
    r->n = (size_t)n;
}

static int index_of(const mc_backup_ring *r, const mc_address *a)
{
    for (size_t i = 0; i < r->n; i++)
        if (mc_address_equal(&r->members[i], a))
            return (int)i;
    return -1;
}

START_TEST(never_the_owner_and_none_without_another)
{
    mc_backup_ring r;
    ring_of(&r, 1, 2000);
    mc_address out;
    ck_assert(!mc_backup_ring_pick(&r, 7, &r.members[0], &out));
    ring_of(&r, 4, 2000);
    for (int32_t id = 1; id < 5000; id++)
        for (size_t o = 0; o < r.n; o++) {
            ck_assert(mc_backup_ring_pick(&r, id, &r.members[o], &out));
            ck_assert(!mc_address_equal(&out, &r.members[o]));
            ck_assert_int_ge(index_of(&r, &out), 0);
        }
}
END_TEST

START_TEST(same_answer_whatever_the_member_order)
{
    mc_backup_ring a, b;
    ring_of(&a, 5, 3000);
    ring_of(&b, 5, 3000);
    /* b: reversed */
    for (size_t i = 0; i < b.n / 2; i++) {
        mc_address t = b.members[i];
        b.members[i] = b.members[b.n - 1 - i];
        b.members[b.n - 1 - i] = t;
    }
    for (int32_t id = 1; id < 20000; id += 3) {
        mc_address x, y;
        ck_assert(mc_backup_ring_pick(&a, id, &a.members[2], &x));
        ck_assert(mc_backup_ring_pick(&b, id, &a.members[2], &y));
        ck_assert(mc_address_equal(&x, &y));
    }
}
END_TEST

START_TEST(entities_spread_evenly)
{
    mc_backup_ring r;
    ring_of(&r, 5, 4000);
    int counts[5] = {0};
    const int n = 50000;
    for (int32_t id = 1; id <= n; id++) {
        mc_address out;
        ck_assert(mc_backup_ring_pick(&r, id, &r.members[0], &out));
        counts[index_of(&r, &out)]++;
    }
    ck_assert_int_eq(counts[0], 0);
    /* four members share the owner's entities: each within 10% of a quarter */
    for (int i = 1; i < 5; i++) {
        ck_assert_int_gt(counts[i], n / 4 * 9 / 10);
        ck_assert_int_lt(counts[i], n / 4 * 11 / 10);
    }
}
END_TEST

START_TEST(a_birth_moves_only_what_the_newcomer_wins)
{
    mc_backup_ring before, after;
    ring_of(&before, 4, 5000);
    ring_of(&after, 5, 5000); /* member 4 is born */
    int moved = 0;
    const int n = 40000;
    for (int32_t id = 1; id <= n; id++) {
        mc_address x, y;
        ck_assert(mc_backup_ring_pick(&before, id, &before.members[0], &x));
        ck_assert(mc_backup_ring_pick(&after, id, &after.members[0], &y));
        if (!mc_address_equal(&x, &y)) {
            moved++;
            ck_assert(mc_address_equal(&y, &after.members[4])); /* only to the newcomer */
        }
    }
    /* the newcomer wins about a quarter of the owner's entities */
    ck_assert_int_gt(moved, n / 4 * 9 / 10);
    ck_assert_int_lt(moved, n / 4 * 11 / 10);
}
END_TEST

START_TEST(the_ring_after_a_death_names_the_same_backup)
{
    mc_backup_ring before, after;
    ring_of(&before, 5, 6000);
    /* member 2 dies: the ring published with its death lacks it */
    after = before;
    after.version = 2;
    after.members[2] = after.members[4];
    after.n = 4;
    for (int32_t id = 1; id < 30000; id++) {
        mc_address x, y;
        ck_assert(mc_backup_ring_pick(&before, id, &before.members[2], &x));
        ck_assert(mc_backup_ring_pick(&after, id, &before.members[2], &y));
        ck_assert(mc_address_equal(&x, &y));
    }
    /* and a survivor's entities move only if their backup was the dead one */
    int moved = 0;
    for (int32_t id = 1; id < 30000; id++) {
        mc_address x, y;
        ck_assert(mc_backup_ring_pick(&before, id, &before.members[0], &x));
        ck_assert(mc_backup_ring_pick(&after, id, &before.members[0], &y));
        if (!mc_address_equal(&x, &y)) {
            moved++;
            ck_assert(mc_address_equal(&x, &before.members[2]));
        }
    }
    ck_assert_int_gt(moved, 0);
}
END_TEST

START_TEST(malformed_wire_rings_are_refused)
{
    mc_backup_ring r;
    ring_of(&r, 2, 7000);
    char *bad[] = {"127.0.0.1:7000", "not-an-address"};
    Mc__Control__BackupRing pb = MC__CONTROL__BACKUP_RING__INIT;
    pb.version = 9;
    pb.n_baseapps = 2;
    pb.baseapps = bad;
    ck_assert(!mc_backup_ring_from_pb(&r, &pb));
    ck_assert_uint_eq(r.version, 1); /* unchanged */
    ck_assert_uint_eq(r.n, 2);
    pb.n_baseapps = MC_RING_MAX + 1;
    ck_assert(!mc_backup_ring_from_pb(&r, &pb));
    char *good[] = {"127.0.0.1:7100"};
    pb.n_baseapps = 1;
    pb.baseapps = good;
    ck_assert(mc_backup_ring_from_pb(&r, &pb));
    ck_assert_uint_eq(r.version, 9);
    ck_assert_uint_eq(r.n, 1);
    char text[64];
    mc_backup_ring_text(&r, text, sizeof text);
    ck_assert_str_eq(text, "v9: 127.0.0.1:7100");
}
END_TEST

static Suite *ring_suite(void)
{
    Suite *s = suite_create("backup_ring");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, never_the_owner_and_none_without_another);
    tcase_add_test(tc, same_answer_whatever_the_member_order);
    tcase_add_test(tc, entities_spread_evenly);
    tcase_add_test(tc, a_birth_moves_only_what_the_newcomer_wins);
    tcase_add_test(tc, the_ring_after_a_death_names_the_same_backup);
    tcase_add_test(tc, malformed_wire_rings_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(ring_suite)
