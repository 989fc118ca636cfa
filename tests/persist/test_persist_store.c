/* The persistence data layer against a real redis-server started by the test (or a local
 * three-master Redis Cluster in test_persist_store_cluster): round trip of every def type,
 * identifier index, check-out races, token fencing, dead-owner release, Redis killed and
 * restarted in a stream of writes, passwords, schema changes, the queue bound, enumeration. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/value_json.h"
#include "check_main.h"
#include "harness.h"
#include "persist/schema.h"
#include "persist_test_util.h"

static const struct {
    const char *name, *json;
} every[] = {
    {"i8", "-5"}, {"i16", "-300"}, {"i32", "-70000"}, {"i64", "-5000000000"},
    {"u8", "200"}, {"u16", "60000"}, {"u32", "4000000000"}, {"u64", "18446744073709551615"},
    {"f32", "1.5"}, {"f64", "3.141592653589793"}, {"s", "\"hello \\\"q\\\" \\n\""},
    {"us", "\"h\\u00e9llo \\u2603\""}, {"b", "\"AAEC/w==\""}, {"v2", "[1.5,-2]"},
    {"v3", "[1,2,3]"}, {"v4", "[1,2,3,4.25]"},
    {"mb", "{\"id\":12,\"addr\":\"127.0.0.1:20013\",\"component\":\"BASE\",\"type\":1}"},
    {"arr", "[1,-2,3]"}, {"tup", "[\"a\",\"b\"]"}, {"dict", "{\"key\":\"k\",\"value\":2.5}"},
    {"name", "\"thing-one\""},
};

static void set_json(const mc_entity_defs *defs, pt_entity *pe, const char *name,
                     const char *json)
{
    const mc_def_property *p = mc_defs_property_by_name(pe->e.type, name);
    ck_assert_ptr_nonnull(p);
    mc_value_limits lim = mc_defs_property_limits(defs, p);
    mc_value v;
    char why[256];
    ck_assert_msg(mc_value_from_json(p->type, json, strlen(json), &lim, &v, why, sizeof why) == 0,
                  "%s: %s", name, why);
    mc_value_free(&pe->values[p->index]);
    pe->values[p->index] = v;
}

typedef struct {
    struct event_base *base;
    pt_redis redis;
    mc_entity_defs *defs;
    const mc_entity_type_def *thing, *hero;
} fixture;

static void setup(fixture *f, const rh_options *opt)
{
    memset(f, 0, sizeof *f);
    f->base = event_base_new();
    ck_assert_ptr_nonnull(f->base);
    ck_assert(pt_redis_start(&f->redis, opt));
    f->defs = pt_defs("res");
    ck_assert_ptr_nonnull(f->defs);
    f->thing = mc_defs_type_by_name(f->defs, "Thing");
    f->hero = mc_defs_type_by_name(f->defs, "Hero");
    ck_assert_ptr_nonnull(f->thing);
    ck_assert_ptr_nonnull(f->hero);
}

static void teardown(fixture *f)
{
    pt_redis_stop(&f->redis);
    mc_defs_free(f->defs);
    event_base_free(f->base);
}

/* Create a Thing named name (other properties default) checked out by s. */
static uint64_t create_thing(fixture *f, mc_persist_store *s, const char *name, char *token)
{
    pt_entity pe;
    pt_entity_init(&pe, f->thing);
    pt_set_str(&pe, "name", name);
    pt_res r = {0};
    mc_persist_create(s, &pe.e, pt_cb, &r);
    pt_entity_free(&pe);
    ck_assert(pt_wait_res(f->base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "create %s: %s", name, r.reason);
    ck_assert_uint_gt(r.dbid, 0);
    ck_assert_uint_eq(strlen(r.token), 32);
    if (token)
        strcpy(token, r.token);
    uint64_t dbid = r.dbid;
    pt_res_clear(&r);
    return dbid;
}

START_TEST(round_trip_of_every_type)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    ck_assert_ptr_nonnull(s);
    pt_entity pe;
    pt_entity_init(&pe, f.thing);
    for (size_t i = 0; i < sizeof every / sizeof every[0]; i++)
        set_json(f.defs, &pe, every[i].name, every[i].json);
    pt_set_int(&pe, "scratch", 77); /* not persistent: must come back as its default */
    pe.e.engine = (mc_persist_engine){{1.5f, -2.25f, 3}, {0.5f, 0, -1}, 42};
    pt_res r = {0};
    mc_persist_create(s, &pe.e, pt_cb, &r);
    ck_assert(!r.done); /* never called back inside the call */
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
    uint64_t dbid = r.dbid;
    pt_res_clear(&r);

    mc_persist_load(s, f.thing, dbid, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
    ck_assert_uint_eq(r.nvalues, f.thing->nprops);
    for (size_t i = 0; i < f.thing->nprops; i++) {
        const mc_def_property *p = &f.thing->props[i];
        const mc_value *want = p->persistent ? &pe.values[i] : &p->default_value;
        ck_assert_msg(mc_value_equal(&r.values[i], want), "property %s differs", p->name);
    }
    ck_assert_str_eq(r.added, "");
    ck_assert_str_eq(r.removed, "");
    ck_assert(r.engine.position[0] == 1.5f && r.engine.position[1] == -2.25f &&
              r.engine.position[2] == 3.0f);
    ck_assert(r.engine.direction[0] == 0.5f && r.engine.direction[2] == -1.0f);
    ck_assert_int_eq(r.engine.space_id, 42);
    pt_res_clear(&r);

    /* Readable with redis-cli: one field per property in canonical JSON. */
    char key[128], out[1024];
    snprintf(key, sizeof key, "mc:e:{Thing:%llu}", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(pt_redis_node(&f.redis), out, sizeof out, "-c", "hget", key, "u32", NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "4000000000"));
    ck_assert_int_eq(rh_cli(pt_redis_node(&f.redis), out, sizeof out, "-c", "get",
                            "mc:id:{Thing:thing-one}", NULL), 0);
    char want[32];
    snprintf(want, sizeof want, "%llu", (unsigned long long)dbid);
    ck_assert_ptr_nonnull(strstr(out, want));
    ck_assert_int_eq(rh_cli(pt_redis_node(&f.redis), out, sizeof out, "-c", "hget", "mc:s:{Thing}",
                            "dict", NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "FIXED_DICT"));

    pt_entity_free(&pe);
    mc_persist_store_free(s);
    teardown(&f);
}
END_TEST

START_TEST(identifier_index)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    char tok1[40];
    uint64_t a = create_thing(&f, s, "alice", tok1);
    uint64_t b = create_thing(&f, s, "bob", NULL);
    ck_assert_uint_ne(a, b);
    pt_res r = {0};
    mc_persist_lookup(s, f.thing, "alice", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.dbid, a);
    pt_res_clear(&r);
    mc_persist_lookup(s, f.thing, "nobody", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_NOT_FOUND);
    pt_res_clear(&r);

    /* A create or a write that takes another entity's identifier is refused. */
    pt_entity pe;
    pt_entity_init(&pe, f.thing);
    pt_set_str(&pe, "name", "bob");
    mc_persist_create(s, &pe.e, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_IDENT_TAKEN);
    ck_assert_uint_eq(r.dbid, b);
    pt_res_clear(&r);
    pe.e.dbid = a;
    pt_set_int(&pe, "u8", 9);
    mc_persist_write(s, &pe.e, tok1, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_IDENT_TAKEN);
    ck_assert_msg(strstr(r.reason, "bob") != NULL, "%s", r.reason);
    pt_res_clear(&r);
    /* Nothing of the refused write landed. */
    mc_persist_load(s, f.thing, a, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.values[mc_defs_property_by_name(f.thing, "u8")->index].as.u, 0);
    pt_res_clear(&r);

    /* Renaming alice to carol moves the index entry. */
    pt_set_str(&pe, "name", "carol");
    mc_persist_write(s, &pe.e, tok1, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
    pt_res_clear(&r);
    mc_persist_lookup(s, f.thing, "alice", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_NOT_FOUND);
    pt_res_clear(&r);
    mc_persist_lookup(s, f.thing, "carol", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.dbid, a);
    pt_res_clear(&r);
    /* alice is free again. */
    uint64_t c = create_thing(&f, s, "alice", NULL);
    ck_assert_uint_ne(c, a);

    /* Check-out by identifier: bob is checked out by its creator (this store). */
    mc_persist_checkout_ident(s, f.thing, "bob", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OWNED);
    ck_assert_uint_eq(r.dbid, b);
    ck_assert_str_eq(r.owner, "baseapp01");
    pt_res_clear(&r);
    mc_persist_checkout_ident(s, f.thing, "zed", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_NOT_FOUND);
    pt_res_clear(&r);
    pt_entity_free(&pe);
    mc_persist_store_free(s);
    teardown(&f);
}
END_TEST

START_TEST(checkout_race_one_winner)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *a = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    mc_persist_store *b = pt_store(f.base, &f.redis, f.defs, "baseapp02");
    char tok[40];
    uint64_t ids[20];
    for (int i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof name, "racer%d", i);
        ids[i] = create_thing(&f, a, name, tok);
        pt_res r = {0};
        mc_persist_release(a, f.thing, ids[i], tok, pt_cb, &r);
        ck_assert(pt_wait_res(f.base, &r));
        ck_assert_int_eq(r.st, MC_PERSIST_OK);
    }
    /* Both ask for each entity in the same loop turn: exactly one wins each time. */
    for (int i = 0; i < 20; i++) {
        pt_res ra = {0}, rb = {0};
        if (i % 2) {
            mc_persist_checkout(a, f.thing, ids[i], pt_cb, &ra);
            mc_persist_checkout(b, f.thing, ids[i], pt_cb, &rb);
        } else {
            mc_persist_checkout(b, f.thing, ids[i], pt_cb, &rb);
            mc_persist_checkout(a, f.thing, ids[i], pt_cb, &ra);
        }
        ck_assert(pt_wait_res(f.base, &ra));
        ck_assert(pt_wait_res(f.base, &rb));
        ck_assert_msg((ra.st == MC_PERSIST_OK) != (rb.st == MC_PERSIST_OK), "%d: %s / %s", i,
                      mc_persist_status_name(ra.st), mc_persist_status_name(rb.st));
        pt_res *win = ra.st == MC_PERSIST_OK ? &ra : &rb, *lose = win == &ra ? &rb : &ra;
        mc_persist_store *ws = win == &ra ? a : b, *ls = win == &ra ? b : a;
        ck_assert_int_eq(lose->st, MC_PERSIST_OWNED);
        ck_assert_str_eq(lose->owner, win == &ra ? "baseapp01" : "baseapp02");
        ck_assert_int_eq(lose->owner_state, MC_PERSIST_LOADING);
        /* Live: the loser's next try gets the mailbox. */
        pt_res rl = {0};
        mc_persist_mark_live(ws, f.thing, ids[i], win->token, (const uint8_t *)"mbox\0x", 6,
                             pt_cb, &rl);
        ck_assert(pt_wait_res(f.base, &rl));
        ck_assert_int_eq(rl.st, MC_PERSIST_OK);
        pt_res again = {0};
        mc_persist_checkout(ls, f.thing, ids[i], pt_cb, &again);
        ck_assert(pt_wait_res(f.base, &again));
        ck_assert_int_eq(again.st, MC_PERSIST_OWNED);
        ck_assert_int_eq(again.owner_state, MC_PERSIST_LIVE);
        ck_assert_uint_eq(again.mailbox_len, 6);
        ck_assert(memcmp(again.mailbox, "mbox\0x", 6) == 0);
        ck_assert_uint_eq(again.owner_inc, 1);
    }
    mc_persist_store_free(a);
    mc_persist_store_free(b);
    teardown(&f);
}
END_TEST

START_TEST(token_fencing)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *a = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    mc_persist_store *b = pt_store(f.base, &f.redis, f.defs, "baseapp02");
    char old_tok[40];
    uint64_t id = create_thing(&f, a, "fenced", old_tok);
    pt_res r = {0};
    /* a is declared dead: its check-outs are released, b loads the entity. */
    mc_persist_release_owner(b, "baseapp01", 1, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.count, 1);
    pt_res_clear(&r);
    mc_persist_checkout(b, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    char new_tok[40];
    strcpy(new_tok, r.token);
    ck_assert_str_ne(new_tok, old_tok);
    pt_res_clear(&r);

    pt_entity pe;
    pt_entity_init(&pe, f.thing);
    pt_set_str(&pe, "name", "fenced");
    pe.e.dbid = id;
    pt_set_int(&pe, "i32", 2);
    mc_persist_write(b, &pe.e, new_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    /* The cut-off process writes with its old token: refused, nothing changes. */
    pt_set_int(&pe, "i32", 1);
    mc_persist_write(a, &pe.e, old_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    /* ... also when it renames the entity (the claim is undone). */
    pt_set_str(&pe, "name", "stolen");
    mc_persist_write(a, &pe.e, old_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    mc_persist_lookup(b, f.thing, "stolen", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_NOT_FOUND);
    pt_res_clear(&r);
    mc_persist_release(a, f.thing, id, old_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    mc_persist_delete(a, f.thing, id, old_tok, false, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    mc_persist_mark_live(a, f.thing, id, old_tok, NULL, 0, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    mc_persist_load(a, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.values[mc_defs_property_by_name(f.thing, "i32")->index].as.i, 2);
    pt_res_clear(&r);
    /* Released, an old token stays refused; a new check-out by b works again. */
    mc_persist_release(b, f.thing, id, new_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    mc_persist_write(b, &pe.e, new_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    pt_entity_free(&pe);
    mc_persist_store_free(a);
    mc_persist_store_free(b);
    teardown(&f);
}
END_TEST

/* A base restored from its backup takes its check-out over from its dead owner (issue 20):
 * only with the dead owner's check-out token (never by the owner's name); the record names
 * the new owner with a new token and the restored mailbox; a write with the new token lands
 * (its serials start afresh), one with the old token is refused; a second takeover with the
 * old token is refused; a released record cannot be taken over. */
START_TEST(take_over_passes_a_checkout)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *a = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    mc_persist_store *b = pt_store(f.base, &f.redis, f.defs, "baseapp02");
    char old_tok[40];
    uint64_t id = create_thing(&f, a, "restored", old_tok);
    pt_entity pe;
    pt_entity_init(&pe, f.thing);
    pt_set_str(&pe, "name", "restored");
    pe.e.dbid = id;
    pe.e.serial = 5; /* a's writes had come this far */
    pt_set_int(&pe, "i32", 5);
    pt_res r = {0};
    mc_persist_write(a, &pe.e, old_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    const uint8_t mb[12] = {0, 0, 0, 9, 127, 0, 0, 1, 0x4e, 0x20, 0x20, 0x01};
    /* the wrong token: refused, nothing changes */
    mc_persist_take_over(b, f.thing, id, "0123456789abcdef0123456789abcdef", mb, sizeof mb,
                         pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    /* the dead owner's token: taken over */
    mc_persist_take_over(b, f.thing, id, old_tok, mb, sizeof mb, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "take_over: %s", r.reason);
    char new_tok[40];
    ck_assert_uint_eq(strlen(r.token), 32);
    strcpy(new_tok, r.token);
    ck_assert_str_ne(new_tok, old_tok);
    pt_res_clear(&r);
    /* a check-out elsewhere finds the new owner, live, with the restored mailbox */
    mc_persist_checkout(a, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OWNED);
    ck_assert_str_eq(r.owner, "baseapp02");
    ck_assert_int_eq(r.owner_state, MC_PERSIST_LIVE);
    ck_assert_uint_eq(r.mailbox_len, sizeof mb);
    ck_assert_int_eq(memcmp(r.mailbox, mb, sizeof mb), 0);
    pt_res_clear(&r);
    /* the old token is refused; the new one lands, its serials start afresh */
    pt_set_int(&pe, "i32", 6);
    pe.e.serial = 6;
    mc_persist_write(a, &pe.e, old_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    pt_set_int(&pe, "i32", 7);
    pe.e.serial = 1;
    mc_persist_write(b, &pe.e, new_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    mc_persist_load(b, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.values[mc_defs_property_by_name(f.thing, "i32")->index].as.i, 7);
    pt_res_clear(&r);
    /* taken over already: the old token is no good any more */
    mc_persist_take_over(a, f.thing, id, old_tok, mb, sizeof mb, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    /* the dead owner's release finds nothing of its own (the record names baseapp02) */
    mc_persist_release_owner(a, "baseapp01", 0, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.count, 0);
    pt_res_clear(&r);
    /* released: nothing to take over */
    mc_persist_release(b, f.thing, id, new_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    mc_persist_take_over(a, f.thing, id, new_tok, mb, sizeof mb, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    pt_entity_free(&pe);
    mc_persist_store_free(a);
    mc_persist_store_free(b);
    teardown(&f);
}
END_TEST

/* Names are reused (a baseapp registering while the manager restarts may be given the name
 * a returning baseapp had): the takeover goes by the check-out's token alone. A store under
 * the dead owner's name (another process life) cannot take the check-out over with a wrong
 * token, and a store under any name takes it over with the right one. */
START_TEST(take_over_by_token_when_the_name_is_reused)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *dead = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    char old_tok[40];
    uint64_t id = create_thing(&f, dead, "reused", old_tok);
    mc_persist_store_free(dead); /* kill -9: its check-out stays */
    /* a new process is given the name baseapp01 (a new incarnation) */
    mc_persist_store *same_name = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    mc_persist_set_owner(same_name, "baseapp01", 2);
    /* the restorer knows the dead owner as baseapp03 (its name after a manager restart) */
    mc_persist_store *other = pt_store(f.base, &f.redis, f.defs, "baseapp03");
    const uint8_t mb[12] = {0, 0, 0, 9, 127, 0, 0, 1, 0x4e, 0x20, 0x20, 0x02};
    pt_res r = {0};
    /* the reused name is no key: the wrong token is refused */
    mc_persist_take_over(same_name, f.thing, id, "fedcba9876543210fedcba9876543210", mb,
                         sizeof mb, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_FENCED);
    pt_res_clear(&r);
    /* the record still names the dead owner's first life */
    mc_persist_checkout(same_name, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OWNED);
    ck_assert_str_eq(r.owner, "baseapp01");
    ck_assert_uint_eq(r.owner_inc, 1);
    pt_res_clear(&r);
    /* the right token: taken over, whatever name the taker or the dead owner goes by now */
    mc_persist_take_over(other, f.thing, id, old_tok, mb, sizeof mb, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "take_over: %s", r.reason);
    char new_tok[40];
    strcpy(new_tok, r.token);
    pt_res_clear(&r);
    mc_persist_checkout(same_name, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OWNED);
    ck_assert_str_eq(r.owner, "baseapp03");
    ck_assert_int_eq(r.owner_state, MC_PERSIST_LIVE);
    pt_res_clear(&r);
    /* the name's new life releasing "its" check-outs leaves the taken-over one alone */
    mc_persist_release_owner(same_name, "baseapp01", 0, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    mc_persist_checkout(same_name, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OWNED);
    ck_assert_str_eq(r.owner, "baseapp03");
    pt_res_clear(&r);
    mc_persist_release(other, f.thing, id, new_tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    mc_persist_store_free(same_name);
    mc_persist_store_free(other);
    teardown(&f);
}
END_TEST

/* The write gate (the baseapp's manager lease): closed, a write is not sent, and what is
 * queued behind it waits too; opened, it lands. */
static bool gate_flag;
static bool gate_open(void *ctx)
{
    (void)ctx;
    return gate_flag;
}

START_TEST(write_gate_holds_changes)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *a = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    mc_persist_store *b = pt_store(f.base, &f.redis, f.defs, "baseapp02");
    gate_flag = true;
    mc_persist_set_write_gate(a, gate_open, NULL);
    char tok[40];
    uint64_t id = create_thing(&f, a, "gated", tok);
    ck_assert_uint_eq(mc_persist_gated(a), 0);
    gate_flag = false; /* out of touch with the manager */
    pt_entity pe;
    pt_entity_init(&pe, f.thing);
    pt_set_str(&pe, "name", "gated");
    pe.e.dbid = id;
    pt_set_int(&pe, "i32", 5);
    pt_res w = {0}, l = {0}, r = {0};
    mc_persist_write(a, &pe.e, tok, pt_cb, &w);
    mc_persist_load(a, f.thing, id, pt_cb, &l); /* behind the write: waits with it */
    ck_assert_uint_eq(mc_persist_gated(a), 1);
    /* Another store reads the entity: unchanged, while the gated write waits. */
    mc_persist_load(b, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_run(f.base, 300);
    ck_assert(!w.done);
    ck_assert(!l.done);
    ck_assert_uint_eq(mc_persist_gated(a), 1);
    pt_res_clear(&r);
    mc_persist_load(b, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.values[mc_defs_property_by_name(f.thing, "i32")->index].as.i, 0);
    pt_res_clear(&r);
    /* Back in touch: the write lands, then the load behind it sees it. */
    gate_flag = true;
    ck_assert(pt_wait_res(f.base, &w));
    ck_assert_int_eq(w.st, MC_PERSIST_OK);
    ck_assert(pt_wait_res(f.base, &l));
    ck_assert_int_eq(l.values[mc_defs_property_by_name(f.thing, "i32")->index].as.i, 5);
    ck_assert_uint_eq(mc_persist_gated(a), 0);
    pt_res_clear(&w);
    pt_res_clear(&l);
    pt_entity_free(&pe);
    mc_persist_store_free(a);
    mc_persist_store_free(b);
    teardown(&f);
}
END_TEST

START_TEST(dead_owner_release_from_two_survivors)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *dead = pt_store(f.base, &f.redis, f.defs, "baseapp07");
    mc_persist_store *s1 = pt_store(f.base, &f.redis, f.defs, "baseapp08");
    mc_persist_store *s2 = pt_store(f.base, &f.redis, f.defs, "baseapp09");
    enum { N = 150 };
    uint64_t ids[N];
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "held%d", i);
        ids[i] = create_thing(&f, dead, name, NULL);
    }
    /* One more held by s1 must stay held. */
    uint64_t mine = create_thing(&f, s1, "mine", NULL);
    mc_persist_store_free(dead);
    pt_res r1 = {0}, r2 = {0};
    mc_persist_release_owner(s1, "baseapp07", 1, pt_cb, &r1);
    mc_persist_release_owner(s2, "baseapp07", 0, pt_cb, &r2);
    ck_assert(pt_wait_res(f.base, &r1));
    ck_assert(pt_wait_res(f.base, &r2));
    ck_assert_int_eq(r1.st, MC_PERSIST_OK);
    ck_assert_int_eq(r2.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r1.count + r2.count, N);
    for (int i = 0; i < N; i++) {
        pt_res r = {0};
        mc_persist_checkout(i % 2 ? s1 : s2, f.thing, ids[i], pt_cb, &r);
        ck_assert(pt_wait_res(f.base, &r));
        ck_assert_msg(r.st == MC_PERSIST_OK, "%d: %s", i, r.reason);
    }
    pt_res r = {0};
    mc_persist_checkout(s2, f.thing, mine, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OWNED);
    pt_res_clear(&r);
    /* Again: nothing left to release. */
    mc_persist_release_owner(s2, "baseapp07", 0, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_uint_eq(r.count, 0);
    mc_persist_store_free(s1);
    mc_persist_store_free(s2);
    teardown(&f);
}
END_TEST

/* A check-out its owner's set does not name (the member was removed, or never added):
 * release_owner cannot find it, release_checkout releases it by its key, checked against
 * owner and incarnation. A member whose check-out does not exist (yet) stays in the set. */
START_TEST(release_checkout_by_key)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *dead = pt_store(f.base, &f.redis, f.defs, "baseapp07");
    mc_persist_store *s1 = pt_store(f.base, &f.redis, f.defs, "baseapp08");
    uint64_t id = create_thing(&f, dead, "lost", NULL);
    mc_persist_store_free(dead);
    char out[256], member[64];
    snprintf(member, sizeof member, "Thing:%llu", (unsigned long long)id);
    rh_redis *n = pt_redis_node(&f.redis);
    ck_assert_int_eq(rh_cli(n, out, sizeof out, "-c", "srem", "mc:owned:{baseapp07}", member,
                            NULL),
                     0);
    pt_res r = {0};
    mc_persist_release_owner(s1, "baseapp07", 1, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.count, 0); /* the set does not name it */
    pt_res_clear(&r);
    /* Another incarnation, another name: not released. */
    mc_persist_release_checkout(s1, f.thing, id, "baseapp07", 2, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.count, 0);
    pt_res_clear(&r);
    mc_persist_release_checkout(s1, f.thing, id, "baseapp06", 1, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_uint_eq(r.count, 0);
    pt_res_clear(&r);
    mc_persist_checkout(s1, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OWNED);
    pt_res_clear(&r);
    /* The owner and incarnation: released; again: nothing to do. */
    mc_persist_release_checkout(s1, f.thing, id, "baseapp07", 1, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.count, 1);
    pt_res_clear(&r);
    mc_persist_release_checkout(s1, f.thing, id, "baseapp07", 0, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.count, 0);
    pt_res_clear(&r);
    mc_persist_checkout(s1, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
    pt_res_clear(&r);
    /* A member whose check-out does not exist (its owner added it and has not checked the
     * entity out yet) is kept: release_owner must not take it from a running owner. */
    ck_assert_int_eq(rh_cli(n, out, sizeof out, "-c", "sadd", "mc:owned:{baseapp07}",
                            "Thing:999999", NULL),
                     0);
    mc_persist_release_owner(s1, "baseapp07", 0, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.count, 0);
    pt_res_clear(&r);
    ck_assert_int_eq(rh_cli(n, out, sizeof out, "-c", "sismember", "mc:owned:{baseapp07}",
                            "Thing:999999", NULL),
                     0);
    ck_assert_msg(strncmp(out, "1", 1) == 0, "the member was removed: %s", out);
    mc_persist_store_free(s1);
    teardown(&f);
}
END_TEST

/* Writes of one check-out carry serials: one older than the last applied (a write resent
 * after a lost connection, arriving after a newer one) is answered OK and not applied, and
 * touches no identifier entry; the same serial again (a resend) and a newer one are. */
static int64_t load_i32(fixture *f, mc_persist_store *s, uint64_t id, char *name, size_t n)
{
    pt_res r = {0};
    mc_persist_load(s, f->thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f->base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    int64_t v = r.values[mc_defs_property_by_name(f->thing, "i32")->index].as.i;
    const mc_value *nm = &r.values[mc_defs_property_by_name(f->thing, "name")->index];
    snprintf(name, n, "%.*s", (int)nm->as.bytes.len, nm->as.bytes.data ? nm->as.bytes.data : "");
    pt_res_clear(&r);
    return v;
}

static mc_persist_status write_serial(fixture *f, mc_persist_store *s, uint64_t id,
                                      const char *tok, const char *name, int64_t i32,
                                      uint64_t serial)
{
    pt_entity pe;
    pt_entity_init(&pe, f->thing);
    pt_set_str(&pe, "name", name);
    pt_set_int(&pe, "i32", i32);
    pe.e.dbid = id;
    pe.e.serial = serial;
    pt_res r = {0};
    mc_persist_write(s, &pe.e, tok, pt_cb, &r);
    pt_entity_free(&pe);
    ck_assert(pt_wait_res(f->base, &r));
    mc_persist_status st = r.st;
    pt_res_clear(&r);
    return st;
}

START_TEST(write_serials_keep_order)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    char tok[40], name[64];
    uint64_t id = create_thing(&f, s, "ordered", tok);
    ck_assert_int_eq(write_serial(&f, s, id, tok, "ordered", 2, 2), MC_PERSIST_OK);
    ck_assert_int_eq(load_i32(&f, s, id, name, sizeof name), 2);
    /* Serial 1 arrives late: answered OK, not applied; its rename claims nothing. */
    ck_assert_int_eq(write_serial(&f, s, id, tok, "ordered", 1, 1), MC_PERSIST_OK);
    ck_assert_int_eq(write_serial(&f, s, id, tok, "renamed", 1, 1), MC_PERSIST_OK);
    ck_assert_int_eq(load_i32(&f, s, id, name, sizeof name), 2);
    ck_assert_str_eq(name, "ordered");
    pt_res r = {0};
    mc_persist_lookup(s, f.thing, "renamed", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_NOT_FOUND);
    pt_res_clear(&r);
    mc_persist_lookup(s, f.thing, "ordered", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.dbid, id);
    pt_res_clear(&r);
    /* Serial 2 again (a resend of the applied write) and serial 3 are applied, renames too. */
    ck_assert_int_eq(write_serial(&f, s, id, tok, "ordered", 2, 2), MC_PERSIST_OK);
    ck_assert_int_eq(write_serial(&f, s, id, tok, "renamed", 3, 3), MC_PERSIST_OK);
    ck_assert_int_eq(load_i32(&f, s, id, name, sizeof name), 3);
    ck_assert_str_eq(name, "renamed");
    /* Unordered writes (serial 0) are applied whatever the serial stored. */
    ck_assert_int_eq(write_serial(&f, s, id, tok, "renamed", 4, 0), MC_PERSIST_OK);
    ck_assert_int_eq(load_i32(&f, s, id, name, sizeof name), 4);
    /* A new check-out starts its serials afresh. */
    mc_persist_release(s, f.thing, id, tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    mc_persist_checkout(s, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    char tok2[40];
    snprintf(tok2, sizeof tok2, "%s", r.token);
    pt_res_clear(&r);
    ck_assert_int_eq(write_serial(&f, s, id, tok2, "renamed", 5, 1), MC_PERSIST_OK);
    ck_assert_int_eq(load_i32(&f, s, id, name, sizeof name), 5);
    mc_persist_store_free(s);
    teardown(&f);
}
END_TEST

static long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* A stream of writes through a Redis kill -9 and restart. */
typedef struct {
    uint64_t acked, failed, last_acked, order_errors;
    char reason[256];
} stream;

typedef struct {
    stream *st;
    uint64_t seq;
} write_ctx;

static void stream_cb(void *ctx, const mc_persist_result *res)
{
    write_ctx *w = ctx;
    if (res->status == MC_PERSIST_OK) {
        if (w->seq != w->st->last_acked + 1)
            w->st->order_errors++;
        w->st->last_acked = w->seq;
        w->st->acked++;
    } else {
        w->st->failed++;
        snprintf(w->st->reason, sizeof w->st->reason, "%s", res->reason);
    }
}

START_TEST(redis_killed_and_restarted_mid_stream)
{
    fixture f;
    rh_options opt = {.aof = true};
    setup(&f, &opt);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    mc_watchers *w = mc_watchers_new();
    ck_assert_int_eq(mc_persist_add_watchers(s, w, "persist"), MC_WATCH_OK);
    char tok[40];
    uint64_t id = create_thing(&f, s, "streamer", tok);
    enum { N = 3000, WINDOW = 100 };
    static write_ctx ctxs[N + 1];
    stream st = {0};
    pt_entity pe;
    pt_entity_init(&pe, f.thing);
    pt_set_str(&pe, "name", "streamer");
    pe.e.dbid = id;
    uint64_t sent = 0;
    bool killed = false, restarted = false;
    long killed_at = 0;
    uint64_t depth_while_down = 0;
    rh_redis *victim = pt_redis_node(&f.redis);
    if (pt_cluster_mode()) {
        /* The node that holds the entity is the one killed and restarted. */
        char key[64], out[256];
        snprintf(key, sizeof key, "mc:e:{Thing:%llu}", (unsigned long long)id);
        /* The node that owns the slot. */
        for (int i = 0; i < RH_CLUSTER_NODES; i++) {
            rh_redis *n = rh_cluster_node(f.redis.cluster, i);
            rh_cli(n, out, sizeof out, "exists", key, NULL);
            if (!strstr(out, "MOVED"))
                victim = n;
        }
    }
    for (int guard = 0; guard < 100000 && st.acked + st.failed < N; guard++) {
        while (sent < N && sent - st.acked - st.failed < WINDOW) {
            sent++;
            ctxs[sent] = (write_ctx){&st, sent};
            pt_set_int(&pe, "u64", (int64_t)sent);
            mc_persist_write(s, &pe.e, tok, stream_cb, &ctxs[sent]);
        }
        pt_run(f.base, 5);
        if (!killed && st.acked >= N / 3) {
            ck_assert_int_eq(rh_kill(victim, SIGKILL), 0);
            killed = true;
            killed_at = mono_ms();
        } else if (killed && !restarted && mono_ms() - killed_at > 700) {
            /* Writes queued up while it was down (also in the watcher). */
            depth_while_down = mc_persist_queue_depth(s);
            mc_watch_value qv;
            char qerr[128];
            ck_assert_int_eq(mc_watch_get(w, "persist/queueDepth", &qv, qerr, sizeof qerr),
                             MC_WATCH_OK);
            ck_assert_uint_eq(qv.as.u, depth_while_down);
            /* With one Redis the store is disconnected; a cluster still has two nodes. */
            ck_assert_int_eq(mc_watch_get(w, "persist/connected", &qv, qerr, sizeof qerr),
                             MC_WATCH_OK);
            ck_assert(qv.as.b == pt_cluster_mode());
            ck_assert_int_eq(rh_restart(victim), 0);
            restarted = true;
        }
    }
    ck_assert(killed && restarted);
    ck_assert_msg(st.failed == 0, "%llu failed: %s", (unsigned long long)st.failed, st.reason);
    ck_assert_uint_eq(st.acked, N);
    ck_assert_uint_eq(st.order_errors, 0);
    ck_assert_uint_gt(depth_while_down, 0);
    mc_watch_value v;
    char err[128];
    ck_assert_int_eq(mc_watch_get(w, "persist/reconnects", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_uint_ge(v.as.u, 1);
    ck_assert_int_eq(mc_watch_get(w, "persist/writesOk", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_uint_eq(v.as.u, N + 1); /* the stream and the create */
    ck_assert_int_eq(mc_watch_get(w, "persist/writesFailed", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_uint_eq(v.as.u, 0);
    ck_assert_int_eq(mc_watch_get(w, "persist/connected", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert(v.as.b);
    mc_watchers_free(w);
    pt_res r = {0};
    mc_persist_load(s, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_uint_eq(r.values[mc_defs_property_by_name(f.thing, "u64")->index].as.u, N);
    pt_res_clear(&r);
    pt_entity_free(&pe);
    mc_persist_store_free(s);
    teardown(&f);
}
END_TEST

START_TEST(password_and_wrong_password)
{
    fixture f;
    rh_options opt = {.password = true, .user = "mercury"};
    setup(&f, &opt);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    create_thing(&f, s, "secret", NULL);
    mc_persist_store_free(s);

    /* A wrong password: a clear error, in the callback and the watcher. */
    char path[700];
    snprintf(path, sizeof path, "%s/wrong-password", rh_dir(pt_redis_node(&f.redis)));
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("not-the-password\n", fp);
    fclose(fp);
    mc_persist_config cfg = {.process_name = "baseapp02", .defs = f.defs};
    pt_config(&f.redis, &cfg, true);
    cfg.password_file = path;
    char err[256];
    s = mc_persist_store_new(f.base, &cfg, err, sizeof err);
    ck_assert_ptr_nonnull(s);
    pt_res r = {0};
    mc_persist_lookup(s, f.thing, "secret", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_AUTH);
    ck_assert_msg(strstr(r.reason, "credentials") != NULL, "%s", r.reason);
    mc_watchers *w = mc_watchers_new();
    ck_assert_int_eq(mc_persist_add_watchers(s, w, "persist"), MC_WATCH_OK);
    mc_watch_value v;
    ck_assert_int_eq(mc_watch_get(w, "persist/lastError", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_msg(strstr(v.as.s, "WRONGPASS") || strstr(v.as.s, "invalid"), "%s", v.as.s);
    free(v.as.s);
    ck_assert_int_eq(mc_watch_get(w, "persist/connected", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert(!v.as.b);
    mc_watchers_free(w);
    mc_persist_store_free(s);

    /* A missing password file is a configuration error at once. */
    cfg.password_file = "/nonexistent/password";
    ck_assert_ptr_null(mc_persist_store_new(f.base, &cfg, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/password"));
    teardown(&f);
}
END_TEST

/* A store without the password against a Redis that wants one: its scripts are refused
 * (NOAUTH); the request fails with AUTH and its callback frees the store. Nothing touches
 * the freed store afterwards (run under ASan). */
typedef struct {
    mc_persist_store *s;
    bool done;
    mc_persist_status st;
} free_in_cb;

static void free_store_cb(void *ctx, const mc_persist_result *r)
{
    free_in_cb *f = ctx;
    f->st = r->status;
    f->done = true;
    mc_persist_store_free(f->s);
    f->s = NULL;
}

START_TEST(auth_missing_store_freed_in_callback)
{
    fixture f;
    rh_options opt = {.password = true};
    setup(&f, &opt);
    for (int round = 0; round < 3; round++) {
        mc_persist_config cfg = {.process_name = "baseapp03", .defs = f.defs};
        pt_config(&f.redis, &cfg, false);
        char err[256];
        free_in_cb fc = {0};
        fc.s = mc_persist_store_new(f.base, &cfg, err, sizeof err);
        ck_assert_ptr_nonnull(fc.s);
        mc_persist_lookup(fc.s, f.thing, "anyone", free_store_cb, &fc);
        ck_assert(pt_wait(f.base, &fc.done, 10000));
        ck_assert_int_eq(fc.st, MC_PERSIST_AUTH);
        ck_assert_ptr_null(fc.s);
        pt_run(f.base, 300); /* the connection's last replies and callbacks */
    }
    teardown(&f);
}
END_TEST

/* Redis forgets the scripts (SCRIPT FLUSH): the next requests fall back to EVAL and work. */
START_TEST(scripts_flushed)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    char tok[40];
    uint64_t id = create_thing(&f, s, "forgetful", tok);
    char out[256];
    int nodes = pt_cluster_mode() ? RH_CLUSTER_NODES : 1;
    for (int i = 0; i < nodes; i++) {
        rh_redis *n = pt_cluster_mode() ? rh_cluster_node(f.redis.cluster, i) : f.redis.single;
        ck_assert_int_eq(rh_cli(n, out, sizeof out, "script", "flush", NULL), 0);
    }
    pt_entity pe;
    pt_entity_init(&pe, f.thing);
    pt_set_str(&pe, "name", "forgetful");
    pe.e.dbid = id;
    pt_set_int(&pe, "i8", -7);
    pt_res r = {0};
    mc_persist_write(s, &pe.e, tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
    pt_res_clear(&r);
    mc_persist_release(s, f.thing, id, tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    mc_persist_checkout(s, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    mc_persist_load(s, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.values[mc_defs_property_by_name(f.thing, "i8")->index].as.i, -7);
    pt_res_clear(&r);
    pt_entity_free(&pe);
    mc_persist_store_free(s);
    teardown(&f);
}
END_TEST

/* Load the Hero written with the original defs through a store on changed defs. */
static void hero_with(fixture *f, const char *res, pt_res *out)
{
    mc_entity_defs *d = pt_defs(res);
    ck_assert_ptr_nonnull(d);
    mc_persist_store *s = pt_store(f->base, &f->redis, d, "baseapp05");
    pt_res r = {0};
    mc_persist_lookup(s, mc_defs_type_by_name(d, "Hero"), "conan", pt_cb, &r);
    ck_assert(pt_wait_res(f->base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    mc_persist_load(s, mc_defs_type_by_name(d, "Hero"), r.dbid, pt_cb, out);
    ck_assert(pt_wait_res(f->base, out));
    mc_persist_store_free(s);
    mc_defs_free(d);
}

START_TEST(def_changes)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    pt_entity pe;
    pt_entity_init(&pe, f.hero);
    pt_set_str(&pe, "name", "conan");
    pt_set_int(&pe, "level", 12);
    pt_set_int(&pe, "gold", 999);
    pt_res r = {0};
    mc_persist_create(s, &pe.e, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    pt_entity_free(&pe);
    mc_persist_store_free(s);

    /* Added: default, reported. */
    hero_with(&f, "res_added", &r);
    ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
    ck_assert_str_eq(r.added, "title");
    ck_assert_str_eq(r.removed, "");
    ck_assert_str_eq(r.values[3].as.bytes.data, "nobody");
    ck_assert_int_eq(r.values[1].as.i, 12);
    pt_res_clear(&r);
    /* Removed: ignored, reported. */
    hero_with(&f, "res_removed", &r);
    ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
    ck_assert_str_eq(r.removed, "gold");
    ck_assert_int_eq(r.values[1].as.i, 12);
    pt_res_clear(&r);
    /* Changed type: refused, naming the property (also in the store's watcher). */
    {
        mc_entity_defs *d = pt_defs("res_changed");
        mc_persist_store *cs = pt_store(f.base, &f.redis, d, "baseapp06");
        mc_watchers *w = mc_watchers_new();
        ck_assert_int_eq(mc_persist_add_watchers(cs, w, "persist"), MC_WATCH_OK);
        bool ready = false;
        for (int i = 0; i < 500 && !ready; i++) {
            pt_run(f.base, 10);
            ready = mc_persist_ready(cs);
        }
        ck_assert(ready);
        mc_watch_value v;
        char err[128];
        ck_assert_int_eq(mc_watch_get(w, "persist/schema/Hero", &v, err, sizeof err), MC_WATCH_OK);
        ck_assert_msg(strstr(v.as.s, "refused: changed: Hero.level") == v.as.s, "%s", v.as.s);
        free(v.as.s);
        mc_watchers_free(w);
        mc_persist_store_free(cs);
        mc_defs_free(d);
    }
    hero_with(&f, "res_changed", &r);
    ck_assert_int_eq(r.st, MC_PERSIST_SCHEMA);
    ck_assert_msg(strstr(r.reason, "Hero.level: stored INT8, now INT32") != NULL, "%s", r.reason);
    pt_res_clear(&r);
    teardown(&f);
}
END_TEST

START_TEST(schema_compare_pure)
{
    mc_entity_defs *d = pt_defs("res_changed");
    ck_assert_ptr_nonnull(d);
    const mc_entity_type_def *t = mc_defs_type_by_name(d, "Hero");
    mc_persist_field stored[] = {
        {"name", 4, "STRING", 6}, {"level", 5, "INT8", 4}, {"old\x01", 4, "BLOB", 4},
    };
    mc_persist_schema_diff diff;
    ck_assert_int_eq(mc_persist_schema_compare(t, stored, 3, &diff), 0);
    ck_assert_uint_eq(diff.nchanged, 1);
    ck_assert_str_eq(diff.changed[0], "Hero.level: stored INT8, now INT32");
    ck_assert_uint_eq(diff.nadded, 1);
    ck_assert_str_eq(diff.added[0], "gold");
    ck_assert_uint_eq(diff.nremoved, 1);
    ck_assert_str_eq(diff.removed[0], "old?");
    char *text = mc_persist_schema_diff_text(&diff);
    ck_assert_str_eq(text, "changed: Hero.level: stored INT8, now INT32; added: gold; removed: old?");
    free(text);
    mc_persist_schema_diff_free(&diff);
    mc_defs_free(d);
}
END_TEST

static void count_cb(void *ctx, const mc_persist_result *r)
{
    int *calls = ctx;
    calls[r->status == MC_PERSIST_QUEUE_FULL ? 1 : 0]++;
}

START_TEST(queue_bound_without_redis)
{
    struct event_base *base = event_base_new();
    mc_entity_defs *defs = pt_defs("res");
    int port = h_free_port(true);
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    mc_persist_config cfg = {.process_name = "baseapp01", .defs = defs, .address = addr,
                             .queue_max = 5, .request_timeout_ms = 4000,
                             .backoff_min_ms = 50, .backoff_max_ms = 200};
    char err[256];
    mc_persist_store *s = mc_persist_store_new(base, &cfg, err, sizeof err);
    ck_assert_ptr_nonnull(s);
    const mc_entity_type_def *t = mc_defs_type_by_name(defs, "Thing");
    int calls[2] = {0, 0};
    for (int i = 0; i < 8; i++)
        mc_persist_load(s, t, 1, count_cb, calls);
    ck_assert_int_eq(calls[0] + calls[1], 0); /* never inside the call */
    pt_run(base, 100);
    ck_assert_int_eq(calls[1], 3); /* beyond the bound: at once */
    ck_assert_uint_eq(mc_persist_queue_depth(s), 5);
    /* The others time out (UNAVAILABLE after 4 s), not before. */
    pt_run(base, 300);
    ck_assert_int_eq(calls[0], 0);
    for (int i = 0; i < 500 && calls[0] < 5; i++)
        pt_run(base, 20);
    ck_assert_int_eq(calls[0], 5);
    ck_assert_uint_eq(mc_persist_queue_depth(s), 0);
    pt_res r = {0};
    /* Freeing with requests pending calls them back with CLOSED. */
    mc_persist_lookup(s, t, "y", pt_cb, &r);
    mc_persist_store_free(s);
    ck_assert(r.done);
    ck_assert_int_eq(r.st, MC_PERSIST_CLOSED);
    mc_defs_free(defs);
    event_base_free(base);
}
END_TEST

START_TEST(enumeration_autoload_delete)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    enum { N = 1200 };
    uint64_t first = 0;
    for (int i = 0; i < N; i++) {
        pt_entity pe;
        pt_entity_init(&pe, f.thing);
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        pt_set_str(&pe, "name", name);
        pt_res r = {0};
        mc_persist_create(s, &pe.e, pt_cb, &r);
        pt_entity_free(&pe);
        ck_assert(pt_wait_res(f.base, &r));
        ck_assert_int_eq(r.st, MC_PERSIST_OK);
        if (!first)
            first = r.dbid;
    }
    pt_res r = {0};
    mc_persist_list_types(s, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_msg(strstr(r.types, "Thing=1200,") != NULL, "%s", r.types);
    pt_res_clear(&r);
    /* Page through the type's dbids: every one exactly once. */
    static bool seen[N + 10];
    uint64_t cursor = 0, total = 0;
    for (int pages = 0; pages < 1000; pages++) {
        mc_persist_scan_type(s, "Thing", cursor, pt_cb, &r);
        ck_assert(pt_wait_res(f.base, &r));
        ck_assert_int_eq(r.st, MC_PERSIST_OK);
        for (char *p = r.dbids; *p;) {
            uint64_t id = strtoull(p, &p, 10);
            p++;
            ck_assert(id >= first && id < first + N);
            if (!seen[id - first]) {
                seen[id - first] = true;
                total++;
            }
        }
        cursor = r.cursor;
        pt_res_clear(&r);
        if (!cursor)
            break;
    }
    ck_assert_uint_eq(total, N);
    /* Auto-load flags. */
    mc_persist_set_autoload(s, f.thing, first, true, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    mc_persist_scan_autoload(s, 0, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    char want[64];
    snprintf(want, sizeof want, "Thing:%llu", (unsigned long long)first);
    ck_assert_str_eq(r.refs, want);
    pt_res_clear(&r);
    /* Delete: refused while checked out unless forced; then gone with its index entry. */
    mc_persist_delete(s, f.thing, first, NULL, false, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OWNED);
    pt_res_clear(&r);
    mc_persist_delete(s, f.thing, first, NULL, true, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_res_clear(&r);
    mc_persist_delete(s, f.thing, first, NULL, true, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_NOT_FOUND);
    pt_res_clear(&r);
    mc_persist_lookup(s, f.thing, "t0", pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_NOT_FOUND);
    pt_res_clear(&r);
    mc_persist_scan_autoload(s, 0, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_str_eq(r.refs, "");
    pt_res_clear(&r);
    mc_persist_list_types(s, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(strstr(r.types, "Thing=1199,") != NULL, "%s", r.types);
    pt_res_clear(&r);
    mc_persist_load_raw(s, "Thing", first + 1, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_ptr_nonnull(strstr(r.refs, "name\n\"t1\""));
    pt_res_clear(&r);
    mc_persist_store_free(s);
    teardown(&f);
}
END_TEST

START_TEST(redis_stopped_then_continued)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_config cfg = {.process_name = "baseapp01", .defs = f.defs,
                             .request_timeout_ms = 4000, .backoff_min_ms = 50,
                             .backoff_max_ms = 200};
    pt_config(&f.redis, &cfg, false);
    char err[256];
    mc_persist_store *s = mc_persist_store_new(f.base, &cfg, err, sizeof err);
    ck_assert_ptr_nonnull(s);
    mc_persist_set_owner(s, "baseapp01", 1);
    char tok[40];
    uint64_t id = create_thing(&f, s, "sleeper", tok);
    rh_redis *victim = pt_redis_node(&f.redis);
    if (pt_cluster_mode()) {
        char key[64], out[256];
        snprintf(key, sizeof key, "mc:e:{Thing:%llu}", (unsigned long long)id);
        for (int i = 0; i < RH_CLUSTER_NODES; i++) {
            rh_redis *n = rh_cluster_node(f.redis.cluster, i);
            rh_cli(n, out, sizeof out, "exists", key, NULL);
            if (!strstr(out, "MOVED"))
                victim = n;
        }
    }
    /* Redis stops answering: the write fails UNAVAILABLE after the timeout, not before. */
    kill(rh_pid(victim), SIGSTOP);
    pt_entity pe;
    pt_entity_init(&pe, f.thing);
    pt_set_str(&pe, "name", "sleeper");
    pe.e.dbid = id;
    pt_set_int(&pe, "i16", 5);
    pt_res r = {0};
    mc_persist_write(s, &pe.e, tok, pt_cb, &r);
    pt_run(f.base, 500);
    ck_assert(!r.done);
    ck_assert(pt_wait(f.base, &r.done, 10000));
    ck_assert_int_eq(r.st, MC_PERSIST_UNAVAILABLE);
    ck_assert_int_eq(r.calls, 1);
    pt_res_clear(&r);
    kill(rh_pid(victim), SIGCONT);
    /* It answers again: the next write goes through (on a new connection). */
    pt_set_int(&pe, "i16", 6);
    mc_persist_write(s, &pe.e, tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
    ck_assert_int_eq(r.calls, 1);
    pt_res_clear(&r);
    mc_persist_load(s, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.values[mc_defs_property_by_name(f.thing, "i16")->index].as.i, 6);
    pt_res_clear(&r);
    pt_entity_free(&pe);
    mc_persist_store_free(s);
    teardown(&f);
}
END_TEST

typedef struct {
    mc_persist_store *s;
    int calls, ok, closed, late;
    bool freed;
} free_ctx;

static void free_inside_cb(void *ctx, const mc_persist_result *r)
{
    free_ctx *fc = ctx;
    if (fc->freed)
        fc->late++;
    fc->calls++;
    if (r->status == MC_PERSIST_OK)
        fc->ok++;
    if (r->status == MC_PERSIST_CLOSED)
        fc->closed++;
    if (fc->calls == 10) {
        mc_persist_store_free(fc->s); /* from inside its own callback */
        fc->freed = true;
    }
}

START_TEST(store_freed_inside_its_callback)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    char tok[40];
    uint64_t id = create_thing(&f, s, "freer", tok);
    pt_entity pe;
    pt_entity_init(&pe, f.thing);
    pt_set_str(&pe, "name", "freer");
    pe.e.dbid = id;
    free_ctx fc = {.s = s};
    for (int i = 0; i < 50; i++) {
        pt_set_int(&pe, "i32", i);
        mc_persist_write(s, &pe.e, tok, free_inside_cb, &fc);
    }
    for (int i = 0; i < 100 && !fc.freed; i++)
        pt_run(f.base, 20);
    ck_assert(fc.freed);
    /* Every request was answered once, at the latest by the free; none after it. */
    ck_assert_int_eq(fc.calls, 50);
    ck_assert_int_eq(fc.late, 0);
    ck_assert_int_ge(fc.ok, 10);
    ck_assert_int_eq(fc.ok + fc.closed, 50);
    pt_run(f.base, 300);
    ck_assert_int_eq(fc.calls, 50);
    pt_entity_free(&pe);
    teardown(&f);
}
END_TEST

/* The cluster node that holds an entity's hash. */
static rh_redis *holder(fixture *f, uint64_t id)
{
    char key[64], out[256];
    snprintf(key, sizeof key, "mc:e:{Thing:%llu}", (unsigned long long)id);
    for (int i = 0; i < RH_CLUSTER_NODES; i++) {
        rh_redis *n = rh_cluster_node(f->redis.cluster, i);
        rh_cli(n, out, sizeof out, "exists", key, NULL);
        if (!strstr(out, "MOVED"))
            return n;
    }
    return NULL;
}

/* Redis Cluster only: a master down holds up only the requests for its slots; writes of
 * entities on the other masters go on, and the held ones complete after its restart. */
START_TEST(one_node_down_others_go_on)
{
    fixture f;
    rh_options opt = {.aof = true};
    setup(&f, &opt);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    char tok_a[40], tok_b[40], name_b[16] = "";
    uint64_t a = create_thing(&f, s, "here", tok_a), b = 0;
    rh_redis *na = holder(&f, a), *nb = NULL;
    for (int i = 0; i < 40 && !nb; i++) {
        snprintf(name_b, sizeof name_b, "there%d", i);
        b = create_thing(&f, s, name_b, tok_b);
        if (holder(&f, b) != na)
            nb = holder(&f, b);
    }
    ck_assert_ptr_nonnull(nb);
    ck_assert_int_eq(rh_kill(nb, SIGKILL), 0);
    pt_entity pa, pb;
    pt_entity_init(&pa, f.thing);
    pt_entity_init(&pb, f.thing);
    pt_set_str(&pa, "name", "here");
    pt_set_str(&pb, "name", name_b);
    pa.e.dbid = a;
    pb.e.dbid = b;
    pt_set_int(&pb, "u16", 22);
    pt_set_int(&pa, "u16", 12);
    pt_res ra = {0}, rb = {0}, lb = {0};
    /* b's write, first, waits for its node; a's goes through meanwhile. */
    mc_persist_write(s, &pb.e, tok_b, pt_cb, &rb);
    mc_persist_write(s, &pa.e, tok_a, pt_cb, &ra);
    ck_assert(pt_wait_res(f.base, &ra));
    ck_assert_msg(ra.st == MC_PERSIST_OK, "%s", ra.reason);
    ck_assert(!rb.done);
    ck_assert_int_eq(rh_restart(nb), 0);
    ck_assert(pt_wait_res(f.base, &rb));
    ck_assert_msg(rb.st == MC_PERSIST_OK, "%s", rb.reason);
    mc_persist_load(s, f.thing, b, pt_cb, &lb);
    ck_assert(pt_wait_res(f.base, &lb));
    ck_assert_int_eq(lb.st, MC_PERSIST_OK);
    ck_assert_uint_eq(lb.values[mc_defs_property_by_name(f.thing, "u16")->index].as.u, 22);
    pt_res_clear(&lb);
    pt_res_clear(&ra);
    pt_res_clear(&rb);
    pt_entity_free(&pa);
    pt_entity_free(&pb);
    mc_persist_store_free(s);
    teardown(&f);
}
END_TEST

/* redis-cli's one-line answer, trimmed. */
static void cli1(rh_redis *n, char *out, size_t len, const char *a, const char *b,
                 const char *c, const char *d, const char *e)
{
    ck_assert_int_eq(rh_cli(n, out, len, a, b, c, d, e, NULL), 0);
    out[strcspn(out, "\r\n")] = '\0';
}

/* Redis Cluster only: an entity's slot moves to another node in the middle of writes (ASK while
 * it is migrating, MOVED once it has moved); every write lands. */
START_TEST(slot_migrates_between_writes)
{
    fixture f;
    setup(&f, NULL);
    mc_persist_store *s = pt_store(f.base, &f.redis, f.defs, "baseapp01");
    mc_watchers *w = mc_watchers_new();
    ck_assert_int_eq(mc_persist_add_watchers(s, w, "persist"), MC_WATCH_OK);
    char tok[40];
    uint64_t id = create_thing(&f, s, "mover", tok);
    char ekey[64], okey[64], out[512], slot[16];
    snprintf(ekey, sizeof ekey, "mc:e:{Thing:%llu}", (unsigned long long)id);
    snprintf(okey, sizeof okey, "mc:o:{Thing:%llu}", (unsigned long long)id);
    rh_redis *from = NULL, *to = NULL;
    for (int i = 0; i < RH_CLUSTER_NODES; i++) {
        rh_redis *n = rh_cluster_node(f.redis.cluster, i);
        rh_cli(n, out, sizeof out, "exists", ekey, NULL);
        if (!strstr(out, "MOVED"))
            from = n;
    }
    ck_assert_ptr_nonnull(from);
    to = rh_cluster_node(f.redis.cluster, 0) == from ? rh_cluster_node(f.redis.cluster, 1)
                                                    : rh_cluster_node(f.redis.cluster, 0);
    char from_id[64], to_id[64], to_port[16];
    cli1(from, slot, sizeof slot, "cluster", "keyslot", ekey, NULL, NULL);
    cli1(from, from_id, sizeof from_id, "cluster", "myid", NULL, NULL, NULL);
    cli1(to, to_id, sizeof to_id, "cluster", "myid", NULL, NULL, NULL);
    snprintf(to_port, sizeof to_port, "%d", rh_port(to));
    cli1(to, out, sizeof out, "cluster", "setslot", slot, "importing", from_id);
    cli1(from, out, sizeof out, "cluster", "setslot", slot, "migrating", to_id);
    ck_assert_int_eq(rh_cli(from, out, sizeof out, "migrate", "127.0.0.1", to_port, "", "0",
                            "5000", "keys", ekey, okey, NULL), 0);
    ck_assert_msg(strstr(out, "OK") != NULL, "%s", out);

    pt_entity pe;
    pt_entity_init(&pe, f.thing);
    pt_set_str(&pe, "name", "mover");
    pe.e.dbid = id;
    pt_res r = {0};
    /* Migrating: the old node answers ASK, the write goes to the new one after ASKING. */
    pt_set_int(&pe, "i64", 1);
    mc_persist_write(s, &pe.e, tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
    pt_res_clear(&r);
    mc_watch_value v;
    char err[128];
    ck_assert_int_eq(mc_watch_get(w, "persist/redirects", &v, err, sizeof err), MC_WATCH_OK);
    uint64_t after_ask = v.as.u;
    ck_assert_uint_gt(after_ask, 0);
    /* Moved for good: every node is told; the next write follows MOVED. */
    for (int i = 0; i < RH_CLUSTER_NODES; i++)
        cli1(rh_cluster_node(f.redis.cluster, i), out, sizeof out, "cluster", "setslot", slot,
             "node", to_id);
    pt_set_int(&pe, "i64", 2);
    mc_persist_write(s, &pe.e, tok, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
    pt_res_clear(&r);
    ck_assert_int_eq(mc_watch_get(w, "persist/redirects", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_uint_gt(v.as.u, after_ask);
    /* The value is on the new node. */
    ck_assert_int_eq(rh_cli(to, out, sizeof out, "hget", ekey, "i64", NULL), 0);
    ck_assert_msg(strstr(out, "2") != NULL, "%s", out);
    mc_persist_load(s, f.thing, id, pt_cb, &r);
    ck_assert(pt_wait_res(f.base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    ck_assert_int_eq(r.values[mc_defs_property_by_name(f.thing, "i64")->index].as.i, 2);
    pt_res_clear(&r);
    pt_entity_free(&pe);
    mc_watchers_free(w);
    mc_persist_store_free(s);
    teardown(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("persist_store");
    TCase *tc = tcase_create("store");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, round_trip_of_every_type);
    tcase_add_test(tc, identifier_index);
    tcase_add_test(tc, checkout_race_one_winner);
    tcase_add_test(tc, token_fencing);
    tcase_add_test(tc, take_over_passes_a_checkout);
    tcase_add_test(tc, take_over_by_token_when_the_name_is_reused);
    tcase_add_test(tc, write_gate_holds_changes);
    tcase_add_test(tc, dead_owner_release_from_two_survivors);
    tcase_add_test(tc, release_checkout_by_key);
    tcase_add_test(tc, write_serials_keep_order);
    tcase_add_test(tc, redis_killed_and_restarted_mid_stream);
    tcase_add_test(tc, password_and_wrong_password);
    tcase_add_test(tc, auth_missing_store_freed_in_callback);
    tcase_add_test(tc, redis_stopped_then_continued);
    tcase_add_test(tc, def_changes);
    tcase_add_test(tc, schema_compare_pure);
    tcase_add_test(tc, queue_bound_without_redis);
    tcase_add_test(tc, enumeration_autoload_delete);
    tcase_add_test(tc, store_freed_inside_its_callback);
    tcase_add_test(tc, scripts_flushed);
    if (pt_cluster_mode()) {
        tcase_add_test(tc, slot_migrates_between_writes);
        tcase_add_test(tc, one_node_down_others_go_on);
    }
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
#ifdef MC_TEST_CLUSTER
    pt_use_cluster(true);
#endif
    return mc_check_run(suite());
}
