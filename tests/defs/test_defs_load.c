/* Loading the example game and BigWorld/KBEngine-style resource folders; numbering; digest. */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "common/defs.h"
#include "defs_test_util.h"

static mc_entity_defs *load_example(void)
{
    char res[4096], err[8192];
    mc_entity_defs *d = mc_defs_load(tu_example_res(res, sizeof(res)), err, sizeof(err));
    ck_assert_msg(d != NULL, "example game refused: %s", err);
    return d;
}

START_TEST(example_types)
{
    mc_entity_defs *d = load_example();
    ck_assert_uint_eq(mc_defs_type_count(d), 3);
    const mc_entity_type_def *acc = mc_defs_type(d, 0), *av = mc_defs_type(d, 1),
                             *sp = mc_defs_type(d, 2);
    ck_assert_str_eq(acc->name, "Account");
    ck_assert_str_eq(av->name, "Avatar");
    ck_assert_str_eq(sp->name, "Space");
    ck_assert(acc->client_server && av->client_server && !sp->client_server);
    ck_assert_ptr_eq(mc_defs_type_by_name(d, "Space"), sp);
    ck_assert_ptr_null(mc_defs_type_by_name(d, "Nope"));
    ck_assert_ptr_null(mc_defs_type(d, 3));

    /* Interfaces first (nested Tagged before Timed's own), then the type's own. */
    ck_assert_uint_eq(av->ninterfaces, 2);
    ck_assert_str_eq(av->props[0].name, "tags");
    ck_assert_str_eq(av->props[1].name, "createdAt");
    ck_assert_str_eq(av->props[2].name, "name");
    const mc_def_property *name = mc_defs_property_by_name(av, "name");
    ck_assert(name->identifier && name->persistent);
    ck_assert_uint_eq(name->db_length, 32);
    ck_assert_int_eq(name->flags, MC_FLAGS_BASE_AND_CLIENT);
    ck_assert_int_ge(name->part_index[MC_PART_BASE], 0);
    ck_assert_int_ge(name->part_index[MC_PART_CLIENT], 0);
    ck_assert_int_eq(name->part_index[MC_PART_CELL], -1);
    const mc_def_property *health = mc_defs_property_by_name(av, "health");
    ck_assert_int_eq(health->flags, MC_FLAGS_OWN_CLIENT);
    ck_assert(health->own_client && !health->other_clients && !health->ghosted);
    ck_assert_int_eq(health->default_value.as.i, 100);
    const mc_def_property *level = mc_defs_property_by_name(av, "level");
    ck_assert(level->own_client && level->other_clients && level->ghosted);
    const mc_def_property *tint = mc_defs_property_by_name(av, "editorTint");
    for (int p = 0; p < MC_PART_COUNT; p++)
        ck_assert_int_eq(tint->part_index[p], -1);
    ck_assert(tint->editable);
    ck_assert(mc_defs_property_by_name(av, "gold")->indexed);
    ck_assert(av->volatile_info.position && av->volatile_info.yaw && av->volatile_info.pitch &&
              !av->volatile_info.roll);
    ck_assert(av->volatile_info.pitch_dist == 20.0f);
    ck_assert_uint_eq(av->ntemp, 1);
    ck_assert_str_eq(av->temp_props[0], "lastChatTime");

    /* Part indices are dense and in declaration order. */
    for (int part = 0; part < MC_PART_COUNT; part++) {
        int32_t next = 0;
        for (size_t i = 0; i < av->nprops; i++)
            if (av->props[i].part_index[part] >= 0)
                ck_assert_int_eq(av->props[i].part_index[part], next++);
        ck_assert_uint_eq((size_t)next, av->nparts_props[part]);
        for (uint16_t k = 0; k < av->nparts_props[part]; k++)
            ck_assert_int_eq(mc_defs_part_property(av, (mc_part)part, k)->part_index[part], k);
        ck_assert_ptr_null(mc_defs_part_property(av, (mc_part)part,
                                                 (uint16_t)av->nparts_props[part]));
    }
    mc_defs_free(d);
}
END_TEST

START_TEST(example_methods)
{
    mc_entity_defs *d = load_example();
    const mc_entity_type_def *av = mc_defs_type(d, 1);
    /* interface methods first */
    ck_assert_str_eq(mc_defs_method(av, MC_PART_BASE, 0)->name, "onTimer");
    ck_assert_str_eq(mc_defs_method(av, MC_PART_CELL, 0)->name, "addTag");
    const mc_def_method *chat = mc_defs_method_by_name(av, MC_PART_CELL, "chat");
    ck_assert_ptr_nonnull(chat);
    ck_assert_int_eq(chat->exposed, MC_EXPOSED_ALL_CLIENTS);
    ck_assert_int_eq(chat->exposed_index, 0);
    ck_assert_uint_eq(chat->nargs, 1);
    ck_assert_str_eq(chat->args[0].name, "text");
    ck_assert_int_eq(chat->args[0].type->kind, MC_TYPE_UNICODE_STRING);
    const mc_def_method *emote = mc_defs_method_by_name(av, MC_PART_CELL, "emote");
    ck_assert_int_eq(emote->exposed, MC_EXPOSED_OWN_CLIENT);
    ck_assert_int_eq(emote->exposed_index, 1);
    ck_assert_uint_eq(av->nexposed[MC_PART_CELL], 3);
    ck_assert_ptr_eq(mc_defs_exposed_method(av, MC_PART_CELL, 0), chat);
    ck_assert_ptr_eq(mc_defs_exposed_method(av, MC_PART_CELL, 1), emote);
    ck_assert_ptr_eq(mc_defs_exposed_method(av, MC_PART_CELL, 2),
                     mc_defs_method_by_name(av, MC_PART_CELL, "train"));
    ck_assert_ptr_null(mc_defs_exposed_method(av, MC_PART_CELL, 3));
    /* setTarget is not exposed: no exposed index reaches it */
    const mc_def_method *st = mc_defs_method_by_name(av, MC_PART_CELL, "setTarget");
    ck_assert_int_eq(st->exposed_index, -1);
    const mc_def_method *on_timer = mc_defs_method(av, MC_PART_BASE, 0);
    ck_assert_uint_eq(on_timer->nargs, 2);
    ck_assert_ptr_null(on_timer->args[0].name);
    const mc_def_method *get_name = mc_defs_method_by_name(av, MC_PART_BASE, "getName");
    ck_assert_uint_eq(get_name->nreturns, 1);
    ck_assert_int_eq(get_name->returns[0].type->kind, MC_TYPE_STRING);
    const mc_def_method *set_acc = mc_defs_method_by_name(av, MC_PART_BASE, "setAccount");
    ck_assert_int_eq(set_acc->args[0].type->kind, MC_TYPE_MAILBOX);
    ck_assert_uint_eq(av->nmethods[MC_PART_CLIENT], 2);
    ck_assert_uint_eq(av->nexposed[MC_PART_CLIENT], 0);
    /* the shared interface numbers the same on both types */
    const mc_entity_type_def *sp = mc_defs_type(d, 2);
    ck_assert_str_eq(mc_defs_method(sp, MC_PART_BASE, 0)->name, "onTimer");
    ck_assert_str_eq(mc_defs_method(sp, MC_PART_CELL, 0)->name, "addTag");
    const mc_def_type *color = mc_defs_alias_by_name(d, "COLOR");
    ck_assert_int_eq(color->kind, MC_TYPE_TUPLE);
    ck_assert_uint_eq(color->size, 4);
    mc_defs_free(d);
}
END_TEST

static int is_hex64(const char *s)
{
    if (strlen(s) != 64)
        return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return 0;
    return 1;
}

START_TEST(digest_stable)
{
    mc_entity_defs *a = load_example(), *b = load_example();
    ck_assert(is_hex64(mc_defs_digest_hex(a)));
    ck_assert_str_eq(mc_defs_digest_hex(a), mc_defs_digest_hex(b));
    /* a copy elsewhere (different paths, same files) has the same digest */
    char *dir = tu_copy_example();
    ck_assert_ptr_nonnull(dir);
    char err[4096];
    mc_entity_defs *c = mc_defs_load(dir, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_str_eq(mc_defs_digest_hex(a), mc_defs_digest_hex(c));
    /* whitespace and comments do not matter */
    ck_assert_int_eq(tu_replace(dir, "entity_defs/Avatar.def", "<chat>",
                                "<!-- say something -->\n\t\t<chat   >"),
                     0);
    mc_entity_defs *e = mc_defs_load(dir, err, sizeof(err));
    ck_assert_msg(e != NULL, "%s", err);
    ck_assert_str_eq(mc_defs_digest_hex(a), mc_defs_digest_hex(e));
    mc_defs_free(a);
    mc_defs_free(b);
    mc_defs_free(c);
    mc_defs_free(e);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Each edit changes the wire, so the digest must change. */
static const struct {
    const char *file, *from, *to;
} digest_edits[] = {
    {"entity_defs/Avatar.def", "<text>\tUNICODE_STRING\t</text>", "<text>\tSTRING\t</text>"},
    {"entity_defs/Avatar.def", "<emoteId>\tUINT16", "<emoteId>\tUINT32"},
    {"entity_defs/alias.xml", "<ENTITY_ID>\tINT32", "<ENTITY_ID>\tINT64"},
    {"entity_defs/Avatar.def", "<size> 3 </size>", "<size> 2 </size>"},
    {"entity_defs/Avatar.def", "<Flags>\tOWN_CLIENT\t</Flags>", "<Flags>\tALL_CLIENTS\t</Flags>"},
    {"entity_defs/Account.def", "<Exposed/>", ""},
    {"entities.xml", "<Account/>\n\t\t<Avatar/>", "<Avatar/>\n\t\t<Account/>"},
    {"entity_defs/interfaces/Timed.def", "<Arg>\tINT64\t</Arg>", "<Arg>\tINT32\t</Arg>"},
    {"entity_defs/Avatar.def", "<Default>\t100\t</Default>", "<Default>\t99\t</Default>"},
};

START_TEST(digest_changes)
{
    mc_entity_defs *a = load_example();
    char *dir = tu_copy_example();
    ck_assert_ptr_nonnull(dir);
    ck_assert_int_eq(tu_replace(dir, digest_edits[_i].file, digest_edits[_i].from,
                                digest_edits[_i].to),
                     0);
    char err[4096];
    mc_entity_defs *b = mc_defs_load(dir, err, sizeof(err));
    ck_assert_msg(b != NULL, "edit %d refused: %s", _i, err);
    ck_assert_str_ne(mc_defs_digest_hex(a), mc_defs_digest_hex(b));
    mc_defs_free(a);
    mc_defs_free(b);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A def file written the BigWorld way: file-named root, comments, tabs, mixed content,
 * old-style <Arg>, FLOAT, nested interface, Parent. */
START_TEST(bigworld_style)
{
    char *dir = tu_mkdtemp();
    ck_assert_ptr_nonnull(dir);
    tu_write(dir, "entities.xml",
             "<root>\n\t<ClientServerEntities>\n\t\t<Avatar/>\n\t</ClientServerEntities>\n"
             "\t<ServerOnlyEntities>\n\t\t<NPC/>\n\t</ServerOnlyEntities>\n</root>\n");
    tu_write(dir, "entity_defs/alias.xml",
             "<root>\n\t<DBID>\tINT64\t</DBID>\n"
             "\t<VEC_LIST>\tARRAY\t<of>\tVECTOR3\t</of>\t</VEC_LIST>\n</root>\n");
    tu_write(dir, "entity_defs/Being.def",
             "<Being.def>\n\t<Properties>\n\t\t<hp>\n\t\t\t<Type>\tFLOAT\t</Type>\n"
             "\t\t\t<Flags>\tCELL_PUBLIC\t</Flags>\n\t\t</hp>\n\t</Properties>\n"
             "\t<Volatile>\n\t\t<position/>\n\t\t<yaw/>\n\t</Volatile>\n</Being.def>\n");
    tu_write(dir, "entity_defs/Avatar.def",
             "<Avatar.def>\n\t<Parent>\tBeing\t</Parent>\n"
             "\t<Implements>\t<Interface>\tTalker\t</Interface>\t</Implements>\n"
             "\t<Properties>\n\t\t<dbid>\n\t\t\t<Type>\tDBID\t</Type>\n"
             "\t\t\t<Flags>\tBASE\t</Flags>\n\t\t\t<Persistent>\ttrue\t</Persistent>\n"
             "\t\t</dbid>\n\t</Properties>\n"
             "\t<BaseMethods>\n\t\t<walk>\n\t\t\t<Exposed/>\n"
             "\t\t\t<Arg>\tVEC_LIST\t</Arg>\n\t\t\t<Arg>\tARRAY <of> INT32 </of>\t</Arg>\n"
             "\t\t</walk>\n\t</BaseMethods>\n</Avatar.def>\n");
    tu_write(dir, "entity_defs/NPC.def",
             "<NPC.def>\n\t<Parent>\tBeing\t</Parent>\n</NPC.def>\n");
    tu_write(dir, "entity_defs/interfaces/Talker.def",
             "<root>\n\t<Implements>\n\t\t<Interface> Listener </Interface>\n\t</Implements>\n"
             "\t<ClientMethods>\n\t\t<say>\n\t\t\t<Arg>\tUNICODE_STRING\t</Arg>\n"
             "\t\t</say>\n\t</ClientMethods>\n</root>\n");
    tu_write(dir, "entity_defs/interfaces/Listener.def",
             "<root>\n\t<CellMethods>\n\t\t<hear>\n\t\t\t<Arg>\tUNICODE_STRING\t</Arg>\n"
             "\t\t</hear>\n\t</CellMethods>\n</root>\n");
    char err[4096];
    mc_entity_defs *d = mc_defs_load(dir, err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    const mc_entity_type_def *av = mc_defs_type_by_name(d, "Avatar");
    ck_assert_str_eq(av->parent, "Being");
    ck_assert_str_eq(av->props[0].name, "hp");
    ck_assert_int_eq(av->props[0].type->kind, MC_TYPE_FLOAT32);
    ck_assert(av->volatile_info.position);
    ck_assert_str_eq(mc_defs_method(av, MC_PART_CELL, 0)->name, "hear");
    const mc_def_method *walk = mc_defs_method(av, MC_PART_BASE, 0);
    ck_assert_uint_eq(walk->nargs, 2);
    ck_assert_int_eq(walk->args[0].type->kind, MC_TYPE_ARRAY);
    ck_assert_int_eq(walk->args[0].type->of->kind, MC_TYPE_VECTOR3);
    ck_assert_int_eq(walk->args[1].type->of->kind, MC_TYPE_INT32);
    const mc_entity_type_def *npc = mc_defs_type_by_name(d, "NPC");
    ck_assert(!npc->client_server);
    mc_defs_free(d);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* KBEngine's layout: a flat entities.xml with hasClient, types.xml. */
START_TEST(kbengine_style)
{
    char *dir = tu_mkdtemp();
    tu_write(dir, "entities.xml",
             "<root>\n\t<Account hasClient=\"true\"/>\n\t<Spaces/>\n\t<Monster/>\n</root>\n");
    tu_write(dir, "entity_defs/types.xml",
             "<root>\n\t<UID>\tUINT64\t</UID>\n</root>\n");
    tu_write(dir, "entity_defs/Account.def",
             "<root>\n\t<Properties>\n\t\t<uid>\n\t\t\t<Type>\tUID\t</Type>\n"
             "\t\t\t<Flags>\tBASE\t</Flags>\n\t\t</uid>\n\t</Properties>\n</root>\n");
    tu_write(dir, "entity_defs/Spaces.def", "<root/>\n");
    tu_write(dir, "entity_defs/Monster.def",
             "<root>\n\t<Properties>\n\t\t<hp>\n\t\t\t<Type>\tINT32\t</Type>\n"
             "\t\t\t<Flags>\tOTHER_CLIENTS\t</Flags>\n\t\t</hp>\n\t</Properties>\n</root>\n");
    char err[4096];
    mc_entity_defs *d = mc_defs_load(dir, err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    ck_assert(mc_defs_type_by_name(d, "Account")->client_server);
    ck_assert(!mc_defs_type_by_name(d, "Spaces")->client_server);
    /* no hasClient: decided by what the type sends to clients */
    ck_assert(mc_defs_type_by_name(d, "Monster")->client_server);
    ck_assert_int_eq(mc_defs_type_by_name(d, "Account")->props[0].type->kind, MC_TYPE_UINT64);
    mc_defs_free(d);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(watchers)
{
    mc_entity_defs *d = load_example();
    mc_watchers *w = mc_watchers_new();
    ck_assert_int_eq(mc_defs_add_watchers(d, w, "defs"), MC_WATCH_OK);
    char err[256];
    mc_watch_value v;
    ck_assert_int_eq(mc_watch_get(w, "defs/digest", &v, err, sizeof(err)), MC_WATCH_OK);
    ck_assert_str_eq(v.as.s, mc_defs_digest_hex(d));
    mc_watch_value_clear(&v);
    ck_assert_int_eq(mc_watch_get(w, "defs/typeCount", &v, err, sizeof(err)), MC_WATCH_OK);
    ck_assert_uint_eq(v.as.u, 3);
    ck_assert_int_eq(mc_watch_get(w, "defs/types/Avatar/exposedCell", &v, err, sizeof(err)),
                     MC_WATCH_OK);
    ck_assert_uint_eq(v.as.u, 3);
    ck_assert_int_eq(mc_watch_get(w, "defs/types/Space/clientServer", &v, err, sizeof(err)),
                     MC_WATCH_OK);
    ck_assert(!v.as.b);
    ck_assert_int_eq(mc_watch_set(w, "defs/typeCount", "4", err, sizeof(err)),
                     MC_WATCH_ERR_READ_ONLY);
    /* adding twice collides */
    ck_assert_int_eq(mc_defs_add_watchers(d, w, "defs"), MC_WATCH_ERR_EXISTS);
    mc_watchers_free(w);
    mc_defs_free(d);
}
END_TEST

START_TEST(error_buffer_truncates)
{
    char err[24];
    memset(err, 'x', sizeof(err));
    mc_entity_defs *d = mc_defs_load("/nonexistent/mc-defs", err, sizeof(err));
    ck_assert_ptr_null(d);
    ck_assert_uint_lt(strlen(err), sizeof(err));
    ck_assert(strstr(err, "/nonexistent") != NULL);
    char err2[64];
    ck_assert_ptr_null(mc_defs_load(NULL, err2, sizeof(err2)));
    ck_assert_str_eq(err2, "no resource folder given");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("defs_load");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, example_types);
    tcase_add_test(tc, example_methods);
    tcase_add_test(tc, digest_stable);
    tcase_add_loop_test(tc, digest_changes, 0, (int)(sizeof(digest_edits) / sizeof(digest_edits[0])));
    tcase_add_test(tc, bigworld_style);
    tcase_add_test(tc, kbengine_style);
    tcase_add_test(tc, watchers);
    tcase_add_test(tc, error_buffer_truncates);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
