/* The example game as engines use it: a shared library opened at run time, checked against
 * the loaded definitions, called through its registration table. */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/entity_api.h"
#include "common/game_module.h"
#include "defs_test_util.h"


typedef struct {
    mc_entity_defs *defs;
    mc_game *game;
    const mc_game_module *m;
    capture cap;
    mc_call_sink sink;
} fixture;

static void setup(fixture *f)
{
    memset(f, 0, sizeof(*f));
    char res[4096], err[4096];
    f->defs = mc_defs_load(tu_example_res(res, sizeof(res)), err, sizeof(err));
    ck_assert_msg(f->defs != NULL, "%s", err);
    f->game = mc_game_open(MC_GAME_EXAMPLE_PATH, f->defs, err, sizeof(err));
    ck_assert_msg(f->game != NULL, "%s", err);
    f->m = mc_game_table(f->game);
    f->sink = (mc_call_sink){.defs = f->defs, .send = capture_send, .fan_out = capture_fan_out,
                             .ctx = &f->cap};
}

static void teardown(fixture *f)
{
    mc_game_close(f->game);
    mc_defs_free(f->defs);
}

/* A part's properties, allocated and defaulted through the table. */
static void *new_props(fixture *f, uint16_t type, mc_part part)
{
    void *p = calloc(1, f->m->types[type].props_size[part]);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(f->m->types[type].props_init(f->defs, part, p), 0);
    return p;
}

static void free_props(fixture *f, uint16_t type, mc_part part, void *p)
{
    f->m->types[type].props_free(part, p);
    free(p);
}

static size_t encode_args(fixture *f, uint16_t type, mc_part part, const char *method,
                          const mc_value *args, uint8_t *out, size_t cap)
{
    const mc_def_method *md = mc_defs_method_by_name(mc_defs_type(f->defs, type), part, method);
    ck_assert_ptr_nonnull(md);
    mc_ostream os;
    mc_ostream_init(&os);
    char why[256];
    ck_assert_msg(mc_defs_encode_args(f->defs, md, args, &os, why, sizeof(why)) == 0, "%s", why);
    ck_assert_uint_le(os.size, cap);
    memcpy(out, os.data, os.size);
    size_t n = os.size;
    mc_ostream_free(&os);
    return n;
}

START_TEST(table_matches_defs)
{
    fixture f;
    setup(&f);
    ck_assert_str_eq(f.m->name, "mc_game_example");
    ck_assert_str_eq(f.m->digest_hex, mc_defs_digest_hex(f.defs));
    ck_assert_uint_eq(f.m->ntypes, 3);
    ck_assert_str_eq(f.m->types[1].name, "Avatar");
    ck_assert_uint_eq(f.m->types[1].nmethods[MC_PART_CELL], 7);
    ck_assert_str_eq(f.m->types[1].methods[MC_PART_CELL][1].name, "chat");
    teardown(&f);
}
END_TEST

START_TEST(exposed_cell_calls)
{
    fixture f;
    setup(&f);
    const uint16_t AVATAR = 1;
    void *cell = new_props(&f, AVATAR, MC_PART_CELL);
    mc_call_ctx call = {.defs = f.defs, .sink = &f.sink, .caller_id = 99, .from_client = true};
    mc_mailbox_ref_init(&call.self, 12, 0x7f000001, 5000, MC_COMPONENT_CELL, AVATAR);
    uint8_t args[256];
    mc_value text = mc_gen_str(MC_TYPE_UNICODE_STRING, "hi \xe2\x9c\x93");
    size_t n = encode_args(&f, AVATAR, MC_PART_CELL, "chat", &text, args, sizeof(args));
    char why[256];
    /* chat is exposed to all clients: another player's client may call it */
    int rc = mc_game_dispatch_exposed(f.m, &call, AVATAR, MC_PART_CELL, 0, cell, args, n, why,
                                      sizeof(why));
    ck_assert_msg(rc == MC_CALL_OK, "%s", why);
    ck_assert_int_eq(f.cap.calls, 1);
    ck_assert_int_eq(f.cap.part, MC_PART_CLIENT);
    /* to every client that sees it, its own too (allClients: a fan-out, not a mailbox) */
    ck_assert(mc_mailbox_ref_is_none(&f.cap.to));
    ck_assert_int_eq(f.cap.fan_out_to.entity_id, 12);
    ck_assert_int_eq(f.cap.fan_out_to.entity_type, AVATAR);
    ck_assert(f.cap.fan_out_to.own_client);
    /* onChat(speaker INT32 = 99, text) */
    const uint8_t want[] = {0, 0, 0, 99, 6, 'h', 'i', ' ', 0xe2, 0x9c, 0x93};
    ck_assert_uint_eq(f.cap.len, sizeof(want));
    ck_assert_mem_eq(f.cap.bytes, want, sizeof(want));
    /* emote is OWN_CLIENT: refused for player 99, accepted for the entity's own client */
    mc_value emote = mc_gen_uint(MC_TYPE_UINT16, 3);
    n = encode_args(&f, AVATAR, MC_PART_CELL, "emote", &emote, args, sizeof(args));
    rc = mc_game_dispatch_exposed(f.m, &call, AVATAR, MC_PART_CELL, 1, cell, args, n, why,
                                  sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_ERR_NO_METHOD);
    ck_assert_ptr_nonnull(strstr(why, "own client only"));
    call.caller_id = 12;
    rc = mc_game_dispatch_exposed(f.m, &call, AVATAR, MC_PART_CELL, 1, cell, args, n, why,
                                  sizeof(why));
    ck_assert_msg(rc == MC_CALL_OK, "%s", why);
    ck_assert_int_eq(f.cap.calls, 2);
    /* no exposed index reaches the other cell methods (0..2: chat, emote, train) */
    rc = mc_game_dispatch_exposed(f.m, &call, AVATAR, MC_PART_CELL, 3, cell, args, n, why,
                                  sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_ERR_NO_METHOD);
    rc = mc_game_dispatch_exposed(f.m, &call, 2, MC_PART_CELL, 0, cell, args, n, why,
                                  sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_ERR_NO_METHOD);
    /* malformed arguments: bad UTF-8, trailing byte, truncated */
    const uint8_t bad_utf8[] = {2, 0xc0, 0x80};
    rc = mc_game_dispatch_exposed(f.m, &call, AVATAR, MC_PART_CELL, 0, cell, bad_utf8,
                                  sizeof(bad_utf8), why, sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_ERR_ARGS);
    ck_assert_ptr_nonnull(strstr(why, "UTF-8"));
    const uint8_t trailing[] = {1, 'a', 0};
    rc = mc_game_dispatch_exposed(f.m, &call, AVATAR, MC_PART_CELL, 0, cell, trailing,
                                  sizeof(trailing), why, sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_ERR_ARGS);
    rc = mc_game_dispatch_exposed(f.m, &call, AVATAR, MC_PART_CELL, 0, cell, trailing, 1, why,
                                  sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_ERR_ARGS);
    /* the handler refuses an empty chat line */
    const uint8_t empty[] = {0};
    rc = mc_game_dispatch_exposed(f.m, &call, AVATAR, MC_PART_CELL, 0, cell, empty,
                                  sizeof(empty), why, sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_ERR_HANDLER);
    ck_assert_int_eq(f.cap.calls, 2);
    free_props(&f, AVATAR, MC_PART_CELL, cell);
    teardown(&f);
}
END_TEST

/* allClients / otherClients are fan-out targets of the calling cell entity, not mailboxes:
 * none outside a cell, and a fan-out sender takes them only for its own type and one-way
 * client methods, only through a sink that fans out. */
START_TEST(fan_out_targets)
{
    fixture f;
    setup(&f);
    const uint16_t AVATAR = 1, SPACE = 2;
    mc_call_ctx call = {.defs = f.defs, .sink = &f.sink};
    mc_mailbox_ref_init(&call.self, 12, 0x7f000001, 5000, MC_COMPONENT_CELL, AVATAR);
    mc_clients all = mc_allClients(&call), others = mc_otherClients(&call);
    ck_assert(all.entity_id == 12 && all.entity_type == AVATAR && all.own_client);
    ck_assert(others.entity_id == 12 && others.entity_type == AVATAR && !others.own_client);
    mc_call_ctx on_base = call;
    mc_mailbox_ref_set_component(&on_base.self, MC_COMPONENT_BASE);
    ck_assert_int_eq(mc_allClients(&on_base).entity_id, 0);
    ck_assert_int_eq(mc_otherClients(NULL).entity_id, 0);

    const mc_def_method *on_chat =
        mc_defs_method_by_name(mc_defs_type(f.defs, AVATAR), MC_PART_CLIENT, "onChat");
    ck_assert_ptr_nonnull(on_chat);
    const mc_value args[2] = {mc_gen_int(MC_TYPE_INT32, 7),
                              mc_gen_str(MC_TYPE_UNICODE_STRING, "hi")};
    ck_assert_int_eq(mc_gen_fan_out(&f.sink, &others, AVATAR, MC_PART_CLIENT, on_chat->index,
                                    "onChat", args, 2),
                     MC_CALL_OK);
    ck_assert_int_eq(f.cap.calls, 1);
    ck_assert(f.cap.fan_out_to.entity_id == 12 && !f.cap.fan_out_to.own_client);
    ck_assert_int_eq(f.cap.index, on_chat->index);
    const uint8_t want[] = {0, 0, 0, 7, 2, 'h', 'i'};
    ck_assert_uint_eq(f.cap.len, sizeof(want));
    ck_assert_mem_eq(f.cap.bytes, want, sizeof(want));
    /* another type's sender, no target, a sink that does not fan out, a base method */
    ck_assert_int_eq(mc_gen_fan_out(&f.sink, &all, SPACE, MC_PART_CLIENT, on_chat->index,
                                    "onChat", args, 2),
                     MC_CALL_ERR_DEFS);
    mc_clients wrong_type = all;
    wrong_type.entity_type = SPACE;
    ck_assert_int_eq(mc_gen_fan_out(&f.sink, &wrong_type, AVATAR, MC_PART_CLIENT,
                                    on_chat->index, "onChat", args, 2),
                     MC_CALL_ERR_MAILBOX);
    mc_clients none = mc_allClients(&on_base);
    ck_assert_int_eq(mc_gen_fan_out(&f.sink, &none, AVATAR, MC_PART_CLIENT, on_chat->index,
                                    "onChat", args, 2),
                     MC_CALL_ERR_MAILBOX);
    mc_call_sink no_fan_out = {.defs = f.defs, .send = capture_send, .ctx = &f.cap};
    ck_assert_int_eq(mc_gen_fan_out(&no_fan_out, &all, AVATAR, MC_PART_CLIENT,
                                    on_chat->index, "onChat", args, 2),
                     MC_CALL_ERR_MAILBOX);
    ck_assert_int_eq(mc_gen_fan_out(&f.sink, &all, AVATAR, MC_PART_BASE, 0, "onChat", args, 2),
                     MC_CALL_ERR_DEFS);
    ck_assert_int_eq(f.cap.calls, 1);
    teardown(&f);
}
END_TEST

START_TEST(account_flow)
{
    fixture f;
    setup(&f);
    const uint16_t ACCOUNT = 0;
    void *base = new_props(&f, ACCOUNT, MC_PART_BASE);
    mc_call_ctx call = {.defs = f.defs, .sink = &f.sink, .caller_id = 3, .from_client = true};
    mc_mailbox_ref_init(&call.self, 3, 0x7f000001, 5001, MC_COMPONENT_BASE, ACCOUNT);
    mc_value look_items[4] = {mc_gen_uint(MC_TYPE_UINT8, 1), mc_gen_uint(MC_TYPE_UINT8, 2),
                              mc_gen_uint(MC_TYPE_UINT8, 3), mc_gen_uint(MC_TYPE_UINT8, 4)};
    mc_value args[2] = {mc_gen_str(MC_TYPE_UNICODE_STRING, "Zoe"), {.kind = MC_TYPE_TUPLE}};
    args[1].as.list.items = look_items;
    args[1].as.list.count = 4;
    uint8_t bytes[256];
    size_t n = encode_args(&f, ACCOUNT, MC_PART_BASE, "createAvatar", args, bytes, sizeof(bytes));
    char why[256];
    int rc = mc_game_dispatch_exposed(f.m, &call, ACCOUNT, MC_PART_BASE, 1, base, bytes, n, why,
                                      sizeof(why));
    ck_assert_msg(rc == MC_CALL_OK, "%s", why);
    /* the client got onAvatarList([{name "Zoe", level 1}]) */
    ck_assert_int_eq(f.cap.calls, 1);
    ck_assert_int_eq(f.cap.part, MC_PART_CLIENT);
    const mc_def_method *list = mc_defs_method_by_name(mc_defs_type(f.defs, ACCOUNT),
                                                       MC_PART_CLIENT, "onAvatarList");
    ck_assert_uint_eq(f.cap.index, list->index);
    mc_value got;
    mc_istream is;
    mc_istream_init(&is, f.cap.bytes, f.cap.len);
    ck_assert_int_eq(mc_defs_decode_args(f.defs, list, &is, &got, why, sizeof(why)), 0);
    ck_assert_uint_eq(got.as.list.count, 1);
    ck_assert_str_eq(got.as.list.items[0].as.list.items[0].as.bytes.data, "Zoe");
    ck_assert_uint_eq(got.as.list.items[0].as.list.items[1].as.u, 1);
    mc_value_free(&got);
    /* the same name again: onSelectFailed("name taken") */
    rc = mc_game_dispatch_exposed(f.m, &call, ACCOUNT, MC_PART_BASE, 1, base, bytes, n, why,
                                  sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_OK);
    ck_assert_int_eq(f.cap.calls, 2);
    ck_assert_mem_eq(f.cap.bytes, "\x0aname taken", 11);
    /* two-way getAvatarCount is not callable by a client, but is by the server */
    const mc_def_method *count = mc_defs_method_by_name(mc_defs_type(f.defs, ACCOUNT),
                                                        MC_PART_BASE, "getAvatarCount");
    ck_assert_int_eq(count->exposed_index, -1);
    mc_ostream reply;
    mc_ostream_init(&reply);
    rc = mc_game_dispatch(f.m, &call, ACCOUNT, MC_PART_BASE, count->index, base, NULL, 0, &reply,
                          why, sizeof(why));
    ck_assert_msg(rc == MC_CALL_OK, "%s", why);
    ck_assert_uint_eq(reply.size, 2);
    ck_assert_mem_eq(reply.data, "\x00\x01", 2);
    mc_ostream_free(&reply);
    /* selecting an unknown avatar */
    mc_value who = mc_gen_str(MC_TYPE_UNICODE_STRING, "Nobody");
    n = encode_args(&f, ACCOUNT, MC_PART_BASE, "selectAvatar", &who, bytes, sizeof(bytes));
    rc = mc_game_dispatch_exposed(f.m, &call, ACCOUNT, MC_PART_BASE, 0, base, bytes, n, why,
                                  sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_OK);
    ck_assert_mem_eq(f.cap.bytes, "\x0eno such avatar", 15);
    /* no method 9 */
    rc = mc_game_dispatch(f.m, &call, ACCOUNT, MC_PART_BASE, 9, base, NULL, 0, NULL, why,
                          sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_ERR_NO_METHOD);
    free_props(&f, ACCOUNT, MC_PART_BASE, base);
    teardown(&f);
}
END_TEST

START_TEST(mailbox_arguments)
{
    fixture f;
    setup(&f);
    const uint16_t AVATAR = 1, SPACE = 2;
    void *base = new_props(&f, AVATAR, MC_PART_BASE);
    mc_call_ctx call = {.defs = f.defs, .sink = &f.sink};
    mc_mailbox_ref_init(&call.self, 12, 0x7f000001, 5000, MC_COMPONENT_BASE, AVATAR);
    mc_mailbox_ref account;
    mc_mailbox_ref_init(&account, 3, 0x7f000001, 5001, MC_COMPONENT_BASE, 0);
    mc_value arg = mc_gen_mailbox(account);
    uint8_t bytes[64];
    size_t n = encode_args(&f, AVATAR, MC_PART_BASE, "setAccount", &arg, bytes, sizeof(bytes));
    ck_assert_uint_eq(n, MC_MAILBOX_WIRE_SIZE);
    char why[256];
    uint16_t set_account = mc_defs_method_by_name(mc_defs_type(f.defs, AVATAR), MC_PART_BASE,
                                                  "setAccount")->index;
    int rc = mc_game_dispatch(f.m, &call, AVATAR, MC_PART_BASE, set_account, base, bytes, n,
                              NULL, why, sizeof(why));
    ck_assert_msg(rc == MC_CALL_OK, "%s", why);
    /* a mailbox naming entity type 3 (only 0..2 exist) is refused on decode */
    bytes[11] = 3;
    rc = mc_game_dispatch(f.m, &call, AVATAR, MC_PART_BASE, set_account, base, bytes, n, NULL,
                          why, sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_ERR_ARGS);
    ck_assert_ptr_nonnull(strstr(why, "not a defined type"));
    /* Persistent base properties through the table: name, gold, xp, inventory, portrait,
     * createdAt are persistent; account (a MAILBOX) and leaving (UINT8) are not. */
    mc_ostream ps;
    mc_ostream_init(&ps);
    rc = f.m->types[AVATAR].props_encode(f.defs, MC_PART_BASE, base, true, &ps, why, sizeof(why));
    ck_assert_msg(rc == MC_CALL_OK, "%s", why);
    mc_ostream all;
    mc_ostream_init(&all);
    rc = f.m->types[AVATAR].props_encode(f.defs, MC_PART_BASE, base, false, &all, why,
                                         sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_OK);
    ck_assert_uint_eq(all.size, ps.size + MC_MAILBOX_WIRE_SIZE + 1);
    void *restored = new_props(&f, AVATAR, MC_PART_BASE);
    mc_istream pis;
    mc_istream_init(&pis, all.data, all.size);
    rc = f.m->types[AVATAR].props_decode(f.defs, MC_PART_BASE, restored, false, &pis, why,
                                         sizeof(why));
    ck_assert_msg(rc == MC_CALL_OK, "%s", why);
    mc_ostream again;
    mc_ostream_init(&again);
    f.m->types[AVATAR].props_encode(f.defs, MC_PART_BASE, restored, false, &again, why,
                                    sizeof(why));
    ck_assert_uint_eq(again.size, all.size);
    ck_assert_mem_eq(again.data, all.data, all.size);
    mc_ostream_free(&again);
    mc_ostream_free(&all);
    mc_ostream_free(&ps);
    free_props(&f, AVATAR, MC_PART_BASE, restored);
    free_props(&f, AVATAR, MC_PART_BASE, base);

    void *space = new_props(&f, SPACE, MC_PART_CELL);
    mc_mailbox_ref_init(&call.self, 1, 0x7f000001, 6000, MC_COMPONENT_CELL, SPACE);
    mc_mailbox_ref who;
    mc_mailbox_ref_init(&who, 12, 0x7f000001, 5000, MC_COMPONENT_CELL, AVATAR);
    mc_value add[2] = {mc_gen_mailbox(who), mc_gen_vec(MC_TYPE_VECTOR3, 1, 2, 3, 0)};
    n = encode_args(&f, SPACE, MC_PART_CELL, "addEntity", add, bytes, sizeof(bytes));
    uint16_t add_entity = mc_defs_method_by_name(mc_defs_type(f.defs, SPACE), MC_PART_CELL,
                                                 "addEntity")->index;
    rc = mc_game_dispatch(f.m, &call, SPACE, MC_PART_CELL, add_entity, space, bytes, n, NULL, why,
                          sizeof(why));
    ck_assert_msg(rc == MC_CALL_OK, "%s", why);
    /* a base mailbox is refused by the handler */
    mc_mailbox_ref_set_component(&who, MC_COMPONENT_BASE);
    add[0] = mc_gen_mailbox(who);
    n = encode_args(&f, SPACE, MC_PART_CELL, "addEntity", add, bytes, sizeof(bytes));
    rc = mc_game_dispatch(f.m, &call, SPACE, MC_PART_CELL, add_entity, space, bytes, n, NULL, why,
                          sizeof(why));
    ck_assert_int_eq(rc, MC_CALL_ERR_HANDLER);
    free_props(&f, SPACE, MC_PART_CELL, space);
    teardown(&f);
}
END_TEST

/* The Tagged interface (shared by Avatar and Space): addTag dispatched through the module
 * appends to each type's own cell `tags` property. */
START_TEST(tagged_interface_on_two_types)
{
    fixture f;
    setup(&f);
    const uint16_t AVATAR = 1, SPACE = 2;
    const uint16_t types[2] = {AVATAR, SPACE};
    for (int t = 0; t < 2; t++) {
        uint16_t type = types[t];
        void *cell = new_props(&f, type, MC_PART_CELL);
        mc_call_ctx call = {.defs = f.defs, .sink = &f.sink};
        mc_mailbox_ref_init(&call.self, 40 + t, 0x7f000001, 6000, MC_COMPONENT_CELL, type);
        uint16_t add_tag =
            mc_defs_method_by_name(mc_defs_type(f.defs, type), MC_PART_CELL, "addTag")->index;
        const char *tags[2] = {"crimson-banner", "night-watch"};
        for (int i = 0; i < 2; i++) {
            mc_value arg = mc_gen_str(MC_TYPE_STRING, tags[i]);
            uint8_t bytes[64];
            size_t n = encode_args(&f, type, MC_PART_CELL, "addTag", &arg, bytes, sizeof(bytes));
            char why[256];
            int rc = mc_game_dispatch(f.m, &call, type, MC_PART_CELL, add_tag, cell, bytes, n,
                                      NULL, why, sizeof(why));
            ck_assert_msg(rc == MC_CALL_OK, "%s", why);
        }
        mc_ostream os;
        mc_ostream_init(&os);
        char why[256];
        ck_assert_int_eq(f.m->types[type].props_encode(f.defs, MC_PART_CELL, cell, false, &os,
                                                       why, sizeof(why)),
                         MC_CALL_OK);
        ck_assert_ptr_nonnull(memmem(os.data, os.size, "crimson-banner", 14));
        ck_assert_ptr_nonnull(memmem(os.data, os.size, "night-watch", 11));
        mc_ostream_free(&os);
        free_props(&f, type, MC_PART_CELL, cell);
    }
    teardown(&f);
}
END_TEST

/* The integer property name of a part's properties, read back through props_encode. */
static int64_t prop_int(fixture *f, uint16_t type, mc_part part, const void *props,
                        const char *name)
{
    mc_ostream os;
    mc_ostream_init(&os);
    char why[256];
    ck_assert_int_eq(f->m->types[type].props_encode(f->defs, part, props, false, &os, why,
                                                    sizeof(why)),
                     MC_CALL_OK);
    const mc_entity_type_def *t = mc_defs_type(f->defs, type);
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    int64_t got = 0;
    bool found = false;
    for (size_t k = 0; k < t->nparts_props[part]; k++) {
        const mc_def_property *p = &t->props[t->part_props[part][k]];
        mc_value v;
        ck_assert_int_eq(mc_gen_decode_prop(f->defs, p, &is, &v, why, sizeof(why)), 0);
        if (!strcmp(p->name, name)) {
            got = v.as.i;
            found = true;
        }
        mc_value_free(&v);
    }
    mc_ostream_free(&os);
    ck_assert_msg(found, "no %s property %s", mc_part_name(part), name);
    return got;
}

/* Engine callbacks: Avatar's base onTimer is the Timed interface's method (its handler runs);
 * the example game defines Avatar's and Space's base onCreated and Avatar's cell onCreated
 * and onTimer (a wandering non-player Avatar) (defs/game) and no other callback, so those
 * slots are NULL. */
START_TEST(engine_callback_slots)
{
    fixture f;
    setup(&f);
    const uint16_t AVATAR = 1;
    const mc_game_hooks *b = &f.m->types[AVATAR].hooks[MC_PART_BASE];
    const mc_game_hooks *c = &f.m->types[AVATAR].hooks[MC_PART_CELL];
    ck_assert_ptr_nonnull(b->on_timer);
    ck_assert_ptr_nonnull(c->on_timer);
    ck_assert_ptr_nonnull(b->on_created);
    ck_assert_ptr_nonnull(f.m->types[2].hooks[MC_PART_BASE].on_created);
    ck_assert_ptr_null(f.m->types[0].hooks[MC_PART_BASE].on_created);
    ck_assert_ptr_null(b->on_create_cell_failure);
    ck_assert_ptr_nonnull(c->on_created);
    ck_assert_ptr_null(c->on_space_gone);
    ck_assert_ptr_null(c->on_teleport_failure);
    ck_assert_ptr_nonnull(f.m->types[2].hooks[MC_PART_BASE].on_timer); /* Space is Timed too */
    ck_assert_ptr_null(f.m->types[0].hooks[MC_PART_BASE].on_timer);    /* Account is not */
    void *base = new_props(&f, AVATAR, MC_PART_BASE);
    mc_call_ctx call = {.defs = f.defs, .sink = &f.sink};
    mc_mailbox_ref_init(&call.self, 12, 0x7f000001, 5001, MC_COMPONENT_BASE, AVATAR);
    int64_t xp = prop_int(&f, AVATAR, MC_PART_BASE, base, "xp");
    ck_assert_int_eq(b->on_timer(&call, base, 3, 250), 0);
    ck_assert_int_eq(prop_int(&f, AVATAR, MC_PART_BASE, base, "xp"), xp + 250);
    free_props(&f, AVATAR, MC_PART_BASE, base);
    teardown(&f);
}
END_TEST

START_TEST(refuses_other_definitions)
{
    char *dir = tu_copy_example();
    ck_assert_ptr_nonnull(dir);
    ck_assert_int_eq(tu_replace(dir, "entity_defs/Avatar.def", "<emoteId>\tUINT16",
                                "<emoteId>\tUINT8"),
                     0);
    char err[1024];
    mc_entity_defs *d = mc_defs_load(dir, err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    mc_game *g = mc_game_open(MC_GAME_EXAMPLE_PATH, d, err, sizeof(err));
    ck_assert_ptr_null(g);
    ck_assert_ptr_nonnull(strstr(err, "generated from other definitions"));
    g = mc_game_open("/nonexistent/game.so", d, err, sizeof(err));
    ck_assert_ptr_null(g);
    ck_assert_ptr_nonnull(strstr(err, "cannot load game module"));
    mc_defs_free(d);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A module generated for another layout of the tables (an older MC_GAME_ABI) is refused,
 * saying which ABI it has and which the engine expects. */
START_TEST(refuses_another_abi)
{
    fixture f;
    setup(&f);
    mc_game_module old = *f.m;
    old.abi = MC_GAME_ABI - 1;
    char err[1024], want[256];
    ck_assert_int_eq(mc_game_check(&old, f.defs, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "was generated for game module ABI %u, this engine expects ABI %u",
             MC_GAME_ABI - 1, MC_GAME_ABI);
    ck_assert_msg(strstr(err, want) && strstr(err, old.name), "%s", err);
    ck_assert_int_eq(mc_game_check(f.m, f.defs, err, sizeof(err)), 0);
    teardown(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("defs_module");
    TCase *tc = tcase_create("module");
    tcase_add_test(tc, table_matches_defs);
    tcase_add_test(tc, exposed_cell_calls);
    tcase_add_test(tc, fan_out_targets);
    tcase_add_test(tc, account_flow);
    tcase_add_test(tc, mailbox_arguments);
    tcase_add_test(tc, tagged_interface_on_two_types);
    tcase_add_test(tc, refuses_other_definitions);
    tcase_add_test(tc, refuses_another_abi);
    tcase_add_test(tc, engine_callback_slots);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
