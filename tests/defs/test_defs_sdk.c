/* The generated SDK (defc) on the test type Hero (tests/defs/sdk): container accessors of
 * aliases and anonymous types (fields by name, elements bounds-checked, statuses), defaults
 * equal to the loader's, values built with them valid for their def types on the wire, a
 * container argument through its sender and dispatcher, and typed entity creation reaching
 * the engine API with the type and every property. */
#include "check_main.h"
#include "defs_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/entity_api.h"
#include "game.h"

static mc_entity_defs *load_sdk(void)
{
    char res[4096], err[8192];
    const char *src = getenv("MC_SOURCE_DIR");
    snprintf(res, sizeof res, "%s/tests/defs/sdk", src ? src : ".");
    mc_entity_defs *d = mc_defs_load(res, err, sizeof err);
    ck_assert_msg(d != NULL, "%s", err);
    return d;
}

static const mc_def_property *prop(const mc_entity_defs *defs, const char *name)
{
    const mc_def_property *p = mc_defs_property_by_name(mc_defs_type(defs, Hero_TYPE_ID), name);
    ck_assert_msg(p != NULL, "no property %s", name);
    return p;
}

/* v is a valid value of type t: it checks, encodes and decodes to an equal value. */
static void assert_wire_round_trip(const mc_entity_defs *defs, const mc_def_type *t,
                                   const mc_value *v)
{
    char why[256];
    mc_value_limits lim = {.entity_types = mc_defs_type_count(defs)};
    ck_assert_msg(mc_value_check(t, v, &lim, why, sizeof why), "%s", why);
    mc_ostream os;
    mc_ostream_init(&os);
    ck_assert_msg(mc_value_encode(t, v, &lim, &os, why, sizeof why) == 0, "%s", why);
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    mc_value back;
    ck_assert_msg(mc_value_decode(t, &is, &lim, &back, why, sizeof why) == 0, "%s", why);
    ck_assert(mc_value_equal(v, &back));
    mc_value_free(&back);
    mc_ostream_free(&os);
}

static void assert_init_is_default(int (*init)(mc_value *), const mc_def_type *t)
{
    mc_value made, def;
    ck_assert_int_eq(init(&made), MC_CALL_OK);
    ck_assert_int_eq(mc_value_init_default(&def, t), 0);
    ck_assert(mc_value_equal(&made, &def));
    mc_value_free(&made);
    mc_value_free(&def);
}

START_TEST(defaults_are_the_loaders)
{
    mc_entity_defs *defs = load_sdk();
    assert_init_is_default(BAG_init, mc_defs_alias_by_name(defs, "BAG"));
    assert_init_is_default(SLOT_init, mc_defs_alias_by_name(defs, "SLOT"));
    assert_init_is_default(RGB_init, mc_defs_alias_by_name(defs, "RGB"));
    assert_init_is_default(Hero_notes_init, prop(defs, "notes")->type);
    assert_init_is_default(Hero_quests_init, prop(defs, "quests")->type);
    assert_init_is_default(Hero_quests_item_init, prop(defs, "quests")->type->of);
    assert_init_is_default(Hero_grid_init, prop(defs, "grid")->type);
    assert_init_is_default(Hero_grid_item_init, prop(defs, "grid")->type->of);
    /* MAYBE_SLOT_init makes a present value; its default is None */
    const mc_def_type *maybe = mc_defs_alias_by_name(defs, "MAYBE_SLOT");
    mc_value m, def;
    ck_assert_int_eq(MAYBE_SLOT_init(&m), MC_CALL_OK);
    ck_assert(!MAYBE_SLOT_is_none(&m));
    assert_wire_round_trip(defs, maybe, &m);
    ck_assert_int_eq(MAYBE_SLOT_set_none(&m), MC_CALL_OK);
    ck_assert_int_eq(mc_value_init_default(&def, maybe), 0);
    ck_assert(mc_value_equal(&m, &def));
    mc_value_free(&m);
    mc_value_free(&def);
    mc_defs_free(defs);
}
END_TEST

START_TEST(dict_fields_by_name)
{
    mc_entity_defs *defs = load_sdk();
    mc_value s;
    ck_assert_int_eq(SLOT_init(&s), MC_CALL_OK);
    mc_mailbox_ref owner, got_owner;
    mc_mailbox_ref_init(&owner, 42, 0x7f000001, 4000, MC_COMPONENT_BASE, Hero_TYPE_ID);
    ck_assert_int_eq(SLOT_set_item(&s, 4000000000u), MC_CALL_OK);
    ck_assert_int_eq(SLOT_set_label(&s, "\xe2\x82\xac sword"), MC_CALL_OK);
    ck_assert_int_eq(SLOT_set_pos(&s, (mc_vector3){1.5f, -2, 3}), MC_CALL_OK);
    ck_assert_int_eq(SLOT_set_owner(&s, owner), MC_CALL_OK);
    uint32_t item = 0;
    const char *label = NULL;
    mc_vector3 pos;
    ck_assert_int_eq(SLOT_get_item(&s, &item), MC_CALL_OK);
    ck_assert_uint_eq(item, 4000000000u);
    ck_assert_int_eq(SLOT_get_label(&s, &label), MC_CALL_OK);
    ck_assert_str_eq(label, "\xe2\x82\xac sword");
    ck_assert_int_eq(SLOT_get_pos(&s, &pos), MC_CALL_OK);
    ck_assert(pos.x == 1.5f && pos.y == -2 && pos.z == 3);
    ck_assert_int_eq(SLOT_get_owner(&s, &got_owner), MC_CALL_OK);
    ck_assert(memcmp(&owner, &got_owner, sizeof owner) == 0);
    assert_wire_round_trip(defs, mc_defs_alias_by_name(defs, "SLOT"), &s);

    /* a value of another shape is refused, and the out is left alone */
    mc_value bag;
    ck_assert_int_eq(BAG_init(&bag), MC_CALL_OK);
    item = 7;
    ck_assert_int_eq(SLOT_get_item(&bag, &item), MC_CALL_ERR_ARGS);
    ck_assert_uint_eq(item, 7);
    ck_assert_int_eq(SLOT_set_item(&bag, 1), MC_CALL_ERR_ARGS);
    ck_assert_int_eq(BAG_count(&s), 0);
    mc_value_free(&bag);
    mc_value_free(&s);
    mc_defs_free(defs);
}
END_TEST

START_TEST(none_dicts)
{
    mc_entity_defs *defs = load_sdk();
    Hero_base b;
    ck_assert_int_eq(init_Hero_base(defs, &b), 0);
    ck_assert(MAYBE_SLOT_is_none(&b.maybe));
    const char *note = "unchanged";
    ck_assert_int_eq(MAYBE_SLOT_get_note(&b.maybe, &note), MC_CALL_ERR_STATE);
    ck_assert_str_eq(note, "unchanged");
    /* a change makes it present, every other field at its default */
    ck_assert_int_eq(MAYBE_SLOT_set_note(&b.maybe, "kept"), MC_CALL_OK);
    ck_assert(!MAYBE_SLOT_is_none(&b.maybe));
    mc_value *slot;
    ck_assert_int_eq(MAYBE_SLOT_edit_slot(&b.maybe, &slot), MC_CALL_OK);
    ck_assert_int_eq(SLOT_set_item(slot, 9), MC_CALL_OK);
    const mc_value *cslot;
    uint32_t item;
    ck_assert_int_eq(MAYBE_SLOT_get_slot(&b.maybe, &cslot), MC_CALL_OK);
    ck_assert_int_eq(SLOT_get_item(cslot, &item), MC_CALL_OK);
    ck_assert_uint_eq(item, 9);
    ck_assert_int_eq(MAYBE_SLOT_get_note(&b.maybe, &note), MC_CALL_OK);
    ck_assert_str_eq(note, "kept");
    assert_wire_round_trip(defs, prop(defs, "maybe")->type, &b.maybe);
    free_Hero_base(&b);
    mc_defs_free(defs);
}
END_TEST

START_TEST(arrays_bounds_checked)
{
    mc_entity_defs *defs = load_sdk();
    Hero_base b;
    Hero_cell c;
    ck_assert_int_eq(init_Hero_base(defs, &b), 0);
    ck_assert_int_eq(init_Hero_cell(defs, &c), 0);
    ck_assert_int_eq(Hero_notes_count(&b.notes), 0);
    ck_assert_int_eq(Hero_notes_append(&b.notes, "one"), MC_CALL_OK);
    ck_assert_int_eq(Hero_notes_append(&b.notes, "two"), MC_CALL_OK);
    ck_assert_int_eq(Hero_notes_append(&b.notes, "three"), MC_CALL_OK);
    ck_assert_int_eq(Hero_notes_set(&b.notes, 1, "TWO"), MC_CALL_OK);
    const char *s = "untouched";
    ck_assert_int_eq(Hero_notes_at(&b.notes, 3, &s), MC_CALL_ERR_NOT_FOUND);
    ck_assert_str_eq(s, "untouched");
    ck_assert_int_eq(Hero_notes_set(&b.notes, 3, "x"), MC_CALL_ERR_NOT_FOUND);
    ck_assert_int_eq(Hero_notes_remove(&b.notes, 0), MC_CALL_OK);
    ck_assert_int_eq(Hero_notes_remove(&b.notes, 2), MC_CALL_ERR_NOT_FOUND);
    ck_assert_int_eq(Hero_notes_count(&b.notes), 2);
    ck_assert_int_eq(Hero_notes_at(&b.notes, 0, &s), MC_CALL_OK);
    ck_assert_str_eq(s, "TWO");
    ck_assert_int_eq(Hero_notes_at(&b.notes, 1, &s), MC_CALL_OK);
    ck_assert_str_eq(s, "three");
    assert_wire_round_trip(defs, prop(defs, "notes")->type, &b.notes);
    ck_assert_int_eq(Hero_notes_clear(&b.notes), MC_CALL_OK);
    ck_assert_int_eq(Hero_notes_count(&b.notes), 0);
    assert_wire_round_trip(defs, prop(defs, "notes")->type, &b.notes);

    /* fixed-size tuples: elements set in place, never appended (no such function) */
    ck_assert_int_eq(RGB_count(&c.color), 3);
    ck_assert_int_eq(RGB_set(&c.color, 2, 255), MC_CALL_OK);
    uint8_t u = 1;
    ck_assert_int_eq(RGB_at(&c.color, 3, &u), MC_CALL_ERR_NOT_FOUND);
    ck_assert_int_eq(u, 1);
    ck_assert_int_eq(RGB_at(&c.color, 2, &u), MC_CALL_OK);
    ck_assert_int_eq(u, 255);
    mc_value *row;
    ck_assert_int_eq(Hero_grid_edit(&c.grid, 1, &row), MC_CALL_OK);
    ck_assert_int_eq(Hero_grid_item_set(row, 0, 0.25f), MC_CALL_OK);
    ck_assert_int_eq(Hero_grid_edit(&c.grid, 2, &row), MC_CALL_ERR_NOT_FOUND);
    const mc_value *crow;
    float x = 0;
    ck_assert_int_eq(Hero_grid_at(&c.grid, 1, &crow), MC_CALL_OK);
    ck_assert_int_eq(Hero_grid_item_at(crow, 0, &x), MC_CALL_OK);
    ck_assert(x == 0.25f);
    assert_wire_round_trip(defs, prop(defs, "color")->type, &c.color);
    assert_wire_round_trip(defs, prop(defs, "grid")->type, &c.grid);
    /* the status helpers refuse a change of length of a fixed-size list */
    mc_value *e;
    ck_assert_int_eq(mc_gen_append(&c.color, MC_TYPE_TUPLE, 3, &e), MC_CALL_ERR_STATE);
    ck_assert_int_eq(mc_gen_remove(&c.color, MC_TYPE_TUPLE, 3, 0), MC_CALL_ERR_STATE);
    ck_assert_int_eq(RGB_count(&c.color), 3);
    /* at most MC_DEFS_MAX_ELEMENTS (65535, the wire's bound): one more is refused */
    mc_value full;
    ck_assert_int_eq(mc_gen_list_alloc(&full, MC_TYPE_ARRAY, MC_DEFS_MAX_ELEMENTS), MC_CALL_OK);
    for (uint32_t i = 0; i < MC_DEFS_MAX_ELEMENTS; i++)
        full.as.list.items[i].kind = MC_TYPE_INT16;
    ck_assert_int_eq(Hero_quests_item_steps_append(&full, 1), MC_CALL_ERR_BUSY);
    ck_assert_int_eq(Hero_quests_item_steps_count(&full), MC_DEFS_MAX_ELEMENTS);
    ck_assert_int_eq(Hero_quests_item_steps_remove(&full, 0), MC_CALL_OK);
    ck_assert_int_eq(Hero_quests_item_steps_append(&full, 1), MC_CALL_OK);
    mc_value_free(&full);
    free_Hero_base(&b);
    free_Hero_cell(&c);
    mc_defs_free(defs);
}
END_TEST

START_TEST(nested_anonymous_containers)
{
    mc_entity_defs *defs = load_sdk();
    Hero_base b;
    ck_assert_int_eq(init_Hero_base(defs, &b), 0);
    mc_value *q, *steps, *reward;
    ck_assert_int_eq(Hero_quests_append(&b.quests, &q), MC_CALL_OK);
    ck_assert_int_eq(Hero_quests_item_set_title(q, "dragon"), MC_CALL_OK);
    ck_assert_int_eq(Hero_quests_item_edit_steps(q, &steps), MC_CALL_OK);
    for (int16_t i = -2; i <= 2; i++)
        ck_assert_int_eq(Hero_quests_item_steps_append(steps, (int16_t)(i * 1000)), MC_CALL_OK);
    ck_assert_int_eq(Hero_quests_item_edit_reward(q, &reward), MC_CALL_OK);
    ck_assert_int_eq(SLOT_set_label(reward, "gold"), MC_CALL_OK);
    const uint8_t seal[] = {0, 0xff, 7};
    ck_assert_int_eq(Hero_quests_item_set_seal(q, seal, sizeof seal), MC_CALL_OK);
    assert_wire_round_trip(defs, prop(defs, "quests")->type, &b.quests);

    const mc_value *cq, *csteps, *cseal;
    int16_t step;
    ck_assert_int_eq(Hero_quests_at(&b.quests, 0, &cq), MC_CALL_OK);
    ck_assert_int_eq(Hero_quests_at(&b.quests, 1, &cq), MC_CALL_ERR_NOT_FOUND);
    ck_assert_int_eq(Hero_quests_item_get_steps(cq, &csteps), MC_CALL_OK);
    ck_assert_int_eq(Hero_quests_item_steps_count(csteps), 5);
    ck_assert_int_eq(Hero_quests_item_steps_at(csteps, 4, &step), MC_CALL_OK);
    ck_assert_int_eq(step, 2000);
    ck_assert_int_eq(Hero_quests_item_get_seal(cq, &cseal), MC_CALL_OK);
    ck_assert_int_eq(cseal->as.bytes.len, 3);
    ck_assert_int_eq((uint8_t)cseal->as.bytes.data[1], 0xff);
    /* a field accessor of one shape on an element of another */
    const char *title;
    ck_assert_int_eq(Hero_quests_item_get_title(csteps, &title), MC_CALL_ERR_ARGS);
    free_Hero_base(&b);
    mc_defs_free(defs);
}
END_TEST

/* A container argument built with accessors goes through the generated sender and
 * dispatcher to the handler, which reads it with accessors (sdk_handlers.c). */
START_TEST(container_argument_sent_and_dispatched)
{
    mc_entity_defs *defs = load_sdk();
    char err[512];
    ck_assert_msg(mc_game_check(mc_game_module_get(), defs, err, sizeof err) == 0, "%s", err);
    capture cap = {0};
    mc_call_sink sink = {.defs = defs, .send = capture_send, .ctx = &cap};
    mc_mailbox_ref to;
    mc_mailbox_ref_init(&to, 9, 0x7f000001, 4000, MC_COMPONENT_BASE, Hero_TYPE_ID);
    mc_value slots;
    mc_value *s;
    ck_assert_int_eq(Hero_base_give_slots_init(&slots), MC_CALL_OK);
    ck_assert_int_eq(Hero_base_give_slots_append(&slots, &s), MC_CALL_OK);
    ck_assert_int_eq(SLOT_set_item(s, 11), MC_CALL_OK);
    ck_assert_int_eq(SLOT_set_label(s, "axe"), MC_CALL_OK);
    ck_assert_int_eq(Hero_base_give_slots_append(&slots, &s), MC_CALL_OK);
    ck_assert_int_eq(SLOT_set_item(s, 12), MC_CALL_OK);
    ck_assert_int_eq(SLOT_set_label(s, "bow"), MC_CALL_OK);
    ck_assert_int_eq(send_Hero_base_give(&sink, &to, &slots), MC_CALL_OK);
    ck_assert_int_eq(cap.calls, 1);
    /* a label beyond the field's DatabaseLength (16) never leaves the sender */
    ck_assert_int_eq(SLOT_set_label(s, "a label far longer than sixteen"), MC_CALL_OK);
    ck_assert_int_eq(send_Hero_base_give(&sink, &to, &slots), MC_CALL_ERR_ARGS);
    ck_assert_int_eq(cap.calls, 1);
    mc_value_free(&slots);

    Hero_base hero;
    ck_assert_int_eq(init_Hero_base(defs, &hero), 0);
    mc_call_ctx call = {.defs = defs, .sink = &sink, .self = to};
    char why[256];
    ck_assert_int_eq(mc_game_dispatch(mc_game_module_get(), &call, Hero_TYPE_ID, MC_PART_BASE,
                                      Hero_base_give_INDEX, &hero, cap.bytes, cap.len, NULL,
                                      why, sizeof why),
                     MC_CALL_OK);
    ck_assert_int_eq(BAG_count(&hero.bag), 2);
    const mc_value *kept;
    uint32_t item;
    const char *note;
    ck_assert_int_eq(BAG_at(&hero.bag, 1, &kept), MC_CALL_OK);
    ck_assert_int_eq(SLOT_get_item(kept, &item), MC_CALL_OK);
    ck_assert_uint_eq(item, 12);
    ck_assert_int_eq(Hero_notes_at(&hero.notes, 0, &note), MC_CALL_OK);
    ck_assert_str_eq(note, "axe");
    free_Hero_base(&hero);
    mc_defs_free(defs);
}
END_TEST

/* An engine that records what creations and loads asked for. */
typedef struct {
    int calls;
    char type[64];
    char ident[64];
    int64_t dbid;
    bool anywhere;
    size_t n;
    const mc_entity_defs *defs;
    bool values_ok;
    char why[256];
    int64_t level;
    char name[64];
} fake_engine;

static void record_props(fake_engine *fe, const char *type, const mc_prop_init *props, size_t n)
{
    fe->calls++;
    snprintf(fe->type, sizeof fe->type, "%s", type);
    fe->n = n;
    fe->values_ok = true;
    const mc_entity_type_def *t = mc_defs_type_by_name(fe->defs, type);
    for (size_t i = 0; t && i < n; i++) {
        const mc_def_property *p = mc_defs_property_by_name(t, props[i].name);
        mc_value_limits lim = p ? mc_defs_property_limits(fe->defs, p) : (mc_value_limits){0};
        if (!p || !mc_value_check(p->type, props[i].value, &lim, fe->why, sizeof fe->why))
            fe->values_ok = false;
        else if (!strcmp(p->name, "level"))
            fe->level = (int64_t)props[i].value->as.u;
        else if (!strcmp(p->name, "name"))
            snprintf(fe->name, sizeof fe->name, "%s", props[i].value->as.bytes.data);
    }
}

static int fake_create_locally(const mc_call_ctx *call, const char *type,
                               const mc_prop_init *props, size_t nprops, mc_mailbox_ref *out)
{
    record_props(call->engine, type, props, nprops);
    mc_mailbox_ref_init(out, 500, 0x7f000001, 4000, MC_COMPONENT_BASE, Hero_TYPE_ID);
    return MC_CALL_OK;
}

static int fake_create_anywhere(const mc_call_ctx *call, const char *type,
                                const mc_prop_init *props, size_t nprops, mc_create_fn fn,
                                void *ud)
{
    (void)fn;
    (void)ud;
    record_props(call->engine, type, props, nprops);
    return MC_CALL_OK;
}

static int fake_from_db(const mc_call_ctx *call, bool anywhere, const char *type, int64_t dbid,
                        const char *name, mc_load_fn fn, void *ud)
{
    (void)fn;
    (void)ud;
    fake_engine *fe = call->engine;
    fe->calls++;
    fe->anywhere = anywhere;
    fe->dbid = dbid;
    snprintf(fe->type, sizeof fe->type, "%s", type);
    snprintf(fe->ident, sizeof fe->ident, "%s", name ? name : "");
    return MC_CALL_OK;
}

START_TEST(typed_creation_reaches_the_engine)
{
    mc_entity_defs *defs = load_sdk();
    fake_engine fe = {.defs = defs};
    mc_engine_ops ops = {.create_base_locally = fake_create_locally,
                         .create_base_anywhere = fake_create_anywhere,
                         .create_base_from_db = fake_from_db};
    mc_call_ctx call = {.defs = defs, .engine = &fe, .ops = &ops};
    mc_mailbox_ref_init(&call.self, 1, 0x7f000001, 4000, MC_COMPONENT_BASE, Hero_TYPE_ID);

    Hero_new n;
    ck_assert_int_eq(init_Hero_new(&call, &n), MC_CALL_OK);
    ck_assert_int_eq(n.cell.level, 3); /* the def's Default */
    ck_assert_int_eq(mc_str_set(&n.base.name, "zed"), MC_CALL_OK);
    n.cell.level = 7;
    ck_assert_int_eq(Hero_notes_append(&n.base.notes, "born"), MC_CALL_OK);
    mc_mailbox_ref made;
    ck_assert_int_eq(create_Hero_locally(&call, &n, &made), MC_CALL_OK);
    ck_assert_int_eq(fe.calls, 1);
    ck_assert_str_eq(fe.type, "Hero");
    /* every base and cell property, each valid for its def */
    ck_assert_uint_eq(fe.n, 8);
    ck_assert_msg(fe.values_ok, "%s", fe.why);
    ck_assert_int_eq(fe.level, 7);
    ck_assert_str_eq(fe.name, "zed");
    ck_assert_int_eq(made.id, 500);
    ck_assert_int_eq(create_Hero_anywhere(&call, NULL, NULL, NULL), MC_CALL_OK);
    ck_assert_int_eq(fe.calls, 2);
    ck_assert_uint_eq(fe.n, 0); /* NULL: every default */
    free_Hero_new(&n);

    ck_assert_int_eq(load_Hero_anywhere_by_name(&call, "zed", NULL, NULL), MC_CALL_OK);
    ck_assert(fe.anywhere);
    ck_assert_str_eq(fe.type, "Hero");
    ck_assert_str_eq(fe.ident, "zed");
    ck_assert_int_eq(load_Hero(&call, 77, NULL, NULL), MC_CALL_OK);
    ck_assert(!fe.anywhere);
    ck_assert_int_eq(fe.dbid, 77);
    mc_defs_free(defs);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("defs_sdk");
    TCase *tc = tcase_create("sdk");
    tcase_add_test(tc, defaults_are_the_loaders);
    tcase_add_test(tc, dict_fields_by_name);
    tcase_add_test(tc, none_dicts);
    tcase_add_test(tc, arrays_bounds_checked);
    tcase_add_test(tc, nested_anonymous_containers);
    tcase_add_test(tc, container_argument_sent_and_dispatched);
    tcase_add_test(tc, typed_creation_reaches_the_engine);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
