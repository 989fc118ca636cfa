/* Unit tests of the manager's entity id allocator (with its state file) and its table of
 * globally named bases, without a network. */
#include "globals.h"
#include "id_ranges.h"
#include "space_homes.h"
#include "server/control.h"
#include "server/server.h"

#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/mc-manager-units-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(ids_without_a_state_file_start_at_one)
{
    mc_id_ranges r;
    char why[256];
    ck_assert(mc_id_ranges_open(&r, NULL, why, sizeof why));
    uint32_t first, got;
    ck_assert_int_eq(mc_id_ranges_take(&r, 10, &first, &got, why, sizeof why), MC_IDS_OK);
    ck_assert_uint_eq(first, 1);
    ck_assert_uint_eq(got, 10);
    ck_assert_int_eq(mc_id_ranges_take(&r, 5, &first, &got, why, sizeof why), MC_IDS_OK);
    ck_assert_uint_eq(first, 11);
    ck_assert_int_eq(mc_id_ranges_take(&r, 0, &first, &got, why, sizeof why), MC_IDS_BAD_COUNT);
    ck_assert_int_eq(mc_id_ranges_take(&r, MC_ID_RANGE_MAX_COUNT + 1, &first, &got, why,
                                       sizeof why),
                     MC_IDS_BAD_COUNT);
    ck_assert_uint_eq(r.writes, 0);
}
END_TEST

START_TEST(ids_survive_a_restart_through_the_reservation)
{
    char path[300];
    snprintf(path, sizeof path, "%s/manager.state", dir);
    mc_id_ranges r;
    char why[256];
    ck_assert_msg(mc_id_ranges_open(&r, path, why, sizeof why), "%s", why);
    ck_assert_uint_eq(r.reserved, 1); /* created, nothing reserved */
    uint32_t first, got, last = 0;
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(mc_id_ranges_take(&r, 4096, &first, &got, why, sizeof why), MC_IDS_OK);
        ck_assert_uint_eq(first, last + 1);
        last = first + got - 1;
        ck_assert_uint_le(last, r.reserved - 1); /* every id given is covered on disk */
    }
    /* One write covers a million ids. */
    ck_assert_uint_eq(r.writes, 2);
    uint64_t reserved = r.reserved;
    ck_assert_uint_eq(reserved, 4096 + MC_ID_RESERVE_STEP + 1);
    mc_id_ranges again;
    ck_assert(mc_id_ranges_open(&again, path, why, sizeof why));
    ck_assert_uint_eq(again.next, reserved);
    ck_assert_int_eq(mc_id_ranges_take(&again, 1, &first, &got, why, sizeof why), MC_IDS_OK);
    ck_assert_uint_gt(first, last);
    ck_assert_uint_gt(again.reserved, first);
    /* No temp file left behind. */
    char tmp[320];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    ck_assert_int_ne(access(tmp, F_OK), 0);
}
END_TEST

START_TEST(ids_run_out_at_two_to_the_31)
{
    char path[300];
    snprintf(path, sizeof path, "%s/manager.state", dir);
    write_file(path, "mercury-cluster manager state 1\nidReserved 2147483000\n");
    mc_id_ranges r;
    char why[256];
    ck_assert(mc_id_ranges_open(&r, path, why, sizeof why));
    uint32_t first, got;
    ck_assert_int_eq(mc_id_ranges_take(&r, 65536, &first, &got, why, sizeof why), MC_IDS_OK);
    ck_assert_uint_eq(first, 2147483000u);
    ck_assert_uint_eq(got, 648);
    ck_assert_uint_eq(first + got - 1, MC_ENTITY_ID_MAX);
    ck_assert_int_eq(mc_id_ranges_take(&r, 1, &first, &got, why, sizeof why), MC_IDS_EXHAUSTED);
    ck_assert_ptr_nonnull(strstr(why, "exhausted"));
    /* A restarted manager is exhausted too. */
    mc_id_ranges again;
    ck_assert(mc_id_ranges_open(&again, path, why, sizeof why));
    ck_assert_int_eq(mc_id_ranges_take(&again, 1, &first, &got, why, sizeof why),
                     MC_IDS_EXHAUSTED);
}
END_TEST

START_TEST(corrupt_or_unusable_state_files_are_refused)
{
    const char *bad[] = {"", "hello\n", "mercury-cluster manager state 1\n",
                         "mercury-cluster manager state 1\nidReserved \n",
                         "mercury-cluster manager state 1\nidReserved 0\n",
                         "mercury-cluster manager state 1\nidReserved 12x\n",
                         "mercury-cluster manager state 1\nidReserved 2147483649\n",
                         "mercury-cluster manager state 1\nidReserved 99999999999999\n",
                         "mercury-cluster manager state 1\nidReserved 5\nmore\n"};
    char path[300], why[512];
    snprintf(path, sizeof path, "%s/manager.state", dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(path, bad[i]);
        mc_id_ranges r;
        ck_assert_msg(!mc_id_ranges_open(&r, path, why, sizeof why), "accepted %zu", i);
        ck_assert_msg(strstr(why, "corrupt") && !strchr(why, '\n'), "%s", why);
        ck_assert(!mc_id_ranges_check(path, why, sizeof why));
    }
    write_file(path, "mercury-cluster manager state 1\nidReserved 5\n");
    ck_assert(mc_id_ranges_check(path, why, sizeof why));
    unlink(path);
    ck_assert(mc_id_ranges_check(path, why, sizeof why)); /* created at start */
    ck_assert(mc_id_ranges_check("", why, sizeof why));
    mc_id_ranges r;
    snprintf(path, sizeof path, "%s/no/such/dir/manager.state", dir);
    ck_assert(!mc_id_ranges_check(path, why, sizeof why));
    ck_assert(!mc_id_ranges_open(&r, path, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "cannot write"));
    /* A directory where the file should be. */
    ck_assert(!mc_id_ranges_open(&r, dir, why, sizeof why));
}
END_TEST

static mc_mailbox_ref mailbox(int32_t id, uint16_t port)
{
    mc_mailbox_ref mb;
    ck_assert_int_eq(mc_mailbox_ref_init(&mb, id, 0x7F000001u, port, MC_COMPONENT_BASE, 3), 0);
    return mb;
}

START_TEST(globals_register_lookup_deregister_and_drop)
{
    mc_globals *g = mc_globals_new(1000);
    mc_mailbox_ref a = mailbox(17, 2000), b = mailbox(18, 2001), out;
    uint32_t owner = 0;
    ck_assert_int_eq(mc_globals_register(g, "Lobby", &a, 1), MC_GLOBALS_OK);
    ck_assert_int_eq(mc_globals_register(g, "Lobby", &b, 2), MC_GLOBALS_TAKEN);
    ck_assert_int_eq(mc_globals_lookup(g, "Lobby", &out, &owner), MC_GLOBALS_OK);
    ck_assert_int_eq(out.id, 17);
    ck_assert_uint_eq(owner, 1);
    ck_assert_int_eq(mc_globals_lookup(g, "lobby", &out, NULL), MC_GLOBALS_NOT_FOUND);
    ck_assert_int_eq(mc_globals_deregister(g, "Lobby", &b), MC_GLOBALS_NOT_FOUND);
    ck_assert_int_eq(mc_globals_deregister(g, "Lobby", &a), MC_GLOBALS_OK);
    ck_assert_int_eq(mc_globals_deregister(g, "Lobby", &a), MC_GLOBALS_NOT_FOUND);
    /* Bad names and the none mailbox. */
    mc_mailbox_ref none;
    memset(&none, 0, sizeof none);
    char long_name[80];
    memset(long_name, 'x', 65);
    long_name[65] = '\0';
    ck_assert_int_eq(mc_globals_register(g, "", &a, 1), MC_GLOBALS_BAD);
    ck_assert_int_eq(mc_globals_register(g, "has space", &a, 1), MC_GLOBALS_BAD);
    ck_assert_int_eq(mc_globals_register(g, "tab\there", &a, 1), MC_GLOBALS_BAD);
    ck_assert_int_eq(mc_globals_register(g, "caf\xc3\xa9", &a, 1), MC_GLOBALS_BAD);
    ck_assert_int_eq(mc_globals_register(g, long_name, &a, 1), MC_GLOBALS_BAD);
    long_name[64] = '\0';
    ck_assert_int_eq(mc_globals_register(g, long_name, &a, 1), MC_GLOBALS_OK);
    ck_assert_int_eq(mc_globals_register(g, "Nobody", &none, 1), MC_GLOBALS_BAD);
    /* Many names (the table grows), dropped by owner. */
    char name[32];
    for (int i = 0; i < 900; i++) {
        snprintf(name, sizeof name, "name-%d", i);
        ck_assert_int_eq(mc_globals_register(g, name, &a, (uint32_t)(i % 3)), MC_GLOBALS_OK);
    }
    ck_assert_uint_eq(mc_globals_count(g), 901);
    ck_assert_uint_eq(mc_globals_drop_owner(g, 1), 301); /* 300 + long_name */
    ck_assert_uint_eq(mc_globals_count(g), 600);
    ck_assert_int_eq(mc_globals_lookup(g, "name-1", &out, NULL), MC_GLOBALS_NOT_FOUND);
    ck_assert_int_eq(mc_globals_lookup(g, "name-2", &out, &owner), MC_GLOBALS_OK);
    ck_assert_uint_eq(owner, 2);
    mc_globals_free(g);
}
END_TEST

START_TEST(globals_are_bounded)
{
    mc_globals *g = mc_globals_new(10);
    mc_mailbox_ref a = mailbox(5, 2000);
    char name[32];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "n%d", i);
        ck_assert_int_eq(mc_globals_register(g, name, &a, 1), MC_GLOBALS_OK);
    }
    ck_assert_int_eq(mc_globals_register(g, "one-more", &a, 1), MC_GLOBALS_FULL);
    ck_assert_int_eq(mc_globals_register(g, "n3", &a, 1), MC_GLOBALS_TAKEN);
    ck_assert_int_eq(mc_globals_deregister(g, "n3", &a), MC_GLOBALS_OK);
    ck_assert_int_eq(mc_globals_register(g, "one-more", &a, 1), MC_GLOBALS_OK);
    mc_globals_free(g);
}
END_TEST

/* Homes of lost spaces: noted, changed, found; at the bound (--spaceHomesMax) the oldest
 * goes first and is counted; the bound is clamped to its range. */
START_TEST(space_homes_are_bounded)
{
    mc_space_homes *h = mc_space_homes_new(1); /* clamped to MC_SPACE_HOMES_MIN */
    ck_assert_ptr_nonnull(h);
    uint32_t pid = 0;
    ck_assert(!mc_space_homes_get(h, 5, &pid));
    for (int32_t s = 1; s <= (int32_t)MC_SPACE_HOMES_MIN; s++)
        mc_space_homes_put(h, s * 1000, (uint32_t)s);
    ck_assert_uint_eq(mc_space_homes_count(h), MC_SPACE_HOMES_MIN);
    ck_assert_uint_eq(mc_space_homes_evicted(h), 0);
    ck_assert(mc_space_homes_get(h, 3000, &pid));
    ck_assert_uint_eq(pid, 3);
    mc_space_homes_put(h, 3000, 42); /* changed in place */
    ck_assert(mc_space_homes_get(h, 3000, &pid));
    ck_assert_uint_eq(pid, 42);
    ck_assert_uint_eq(mc_space_homes_evicted(h), 0);
    /* full: two more push the two oldest out */
    mc_space_homes_put(h, 77, 7);
    mc_space_homes_put(h, 78, 8);
    ck_assert_uint_eq(mc_space_homes_evicted(h), 2);
    ck_assert_uint_eq(mc_space_homes_count(h), MC_SPACE_HOMES_MIN);
    ck_assert(!mc_space_homes_get(h, 1000, &pid));
    ck_assert(!mc_space_homes_get(h, 2000, &pid));
    for (int32_t s = 3; s <= (int32_t)MC_SPACE_HOMES_MIN; s++)
        ck_assert_msg(mc_space_homes_get(h, s * 1000, &pid), "space %d lost", (int)s * 1000);
    ck_assert(mc_space_homes_get(h, 77, &pid) && pid == 7);
    ck_assert(mc_space_homes_get(h, 78, &pid) && pid == 8);
    ck_assert(!mc_space_homes_get(h, 0, &pid));
    ck_assert(!mc_space_homes_get(h, -4, &pid));
    /* many rounds through the ring keep the index exact */
    for (int32_t s = 1; s <= 5000; s++)
        mc_space_homes_put(h, s, (uint32_t)s + 1);
    ck_assert_uint_eq(mc_space_homes_count(h), MC_SPACE_HOMES_MIN);
    for (int32_t s = 5000 - (int32_t)MC_SPACE_HOMES_MIN + 1; s <= 5000; s++)
        ck_assert(mc_space_homes_get(h, s, &pid) && pid == (uint32_t)s + 1);
    ck_assert(!mc_space_homes_get(h, 5000 - (int32_t)MC_SPACE_HOMES_MIN, &pid));
    mc_space_homes_free(h);
}
END_TEST

START_TEST(mailbox_wire_form_round_trips)
{
    mc_mailbox_ref a = mailbox(0x12345678, 0xABCD), b;
    uint8_t wire[MC_MAILBOX_WIRE_SIZE];
    mc_server_mailbox_pack(&a, wire);
    ck_assert_uint_eq(wire[0], 0x12);
    ck_assert_uint_eq(wire[4], 0x7F);
    ck_assert_uint_eq(wire[8], 0xAB);
    ck_assert(mc_server_mailbox_unpack(wire, sizeof wire, &b));
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    ck_assert(!mc_server_mailbox_unpack(wire, 11, &b));
    ck_assert(!mc_server_mailbox_unpack(NULL, 12, &b));
    uint8_t zero[12] = {0};
    ck_assert(!mc_server_mailbox_unpack(zero, sizeof zero, &b)); /* none */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("manager_units");
    TCase *tc = tcase_create("ids");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, ids_without_a_state_file_start_at_one);
    tcase_add_test(tc, ids_survive_a_restart_through_the_reservation);
    tcase_add_test(tc, ids_run_out_at_two_to_the_31);
    tcase_add_test(tc, corrupt_or_unusable_state_files_are_refused);
    suite_add_tcase(s, tc);
    TCase *tg = tcase_create("globals");
    tcase_add_test(tg, globals_register_lookup_deregister_and_drop);
    tcase_add_test(tg, globals_are_bounded);
    tcase_add_test(tg, mailbox_wire_form_round_trips);
    tcase_add_test(tg, space_homes_are_bounded);
    suite_add_tcase(s, tg);
    return s;
}

MC_CHECK_MAIN(suite)
