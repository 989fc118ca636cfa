/* Definitions written the way BigWorld's own examples write them (tests/defs/bigworld: a
 * Parent, an interface, old-style <Arg>s, Editable, TempProperties, an Identifier on an
 * ALL_CLIENTS property and one on a CELL_PUBLIC property) load as they are, and the game
 * module defc built from them opens against them. The persistence of the cell identifiers
 * through real processes is integration_persist_cell_identifier (tests/entity/persist). */
#include "check_main.h"
#include "defs_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mc_entity_defs *load_bigworld(char *err, size_t errlen)
{
    char res[4096];
    const char *src = getenv("MC_SOURCE_DIR");
    snprintf(res, sizeof res, "%s/tests/defs/bigworld", src ? src : ".");
    return mc_defs_load(res, err, errlen);
}

START_TEST(loads_as_written)
{
    char err[8192] = "";
    mc_entity_defs *d = load_bigworld(err, sizeof err);
    ck_assert_msg(d != NULL, "refused: %s", err);
    ck_assert_int_eq(mc_defs_type_count(d), 3);
    const mc_entity_type_def *avatar = mc_defs_type_by_name(d, "Avatar");
    ck_assert_ptr_nonnull(avatar);
    ck_assert(avatar->client_server);
    ck_assert_str_eq(avatar->parent, "Being");
    ck_assert_int_eq(avatar->ninterfaces, 1);
    ck_assert_str_eq(avatar->interfaces[0], "Chatter");
    /* inherited first: Being's health, then the Avatar's own */
    ck_assert_str_eq(avatar->props[0].name, "health");
    ck_assert_int_eq(avatar->props[0].default_value.as.i, 100);
    ck_assert(mc_defs_method_by_name(avatar, MC_PART_CELL, "takeDamage") != NULL);
    ck_assert(mc_defs_method_by_name(avatar, MC_PART_CELL, "say") != NULL);
    ck_assert(mc_defs_method_by_name(avatar, MC_PART_CLIENT, "chat") != NULL);
    mc_defs_free(d);
}
END_TEST

/* The Identifiers on cell properties: accepted, persistent, held by the cell part only. */
START_TEST(identifiers_on_the_cell)
{
    char err[8192] = "";
    mc_entity_defs *d = load_bigworld(err, sizeof err);
    ck_assert_msg(d != NULL, "refused: %s", err);
    struct {
        const char *type, *prop;
        mc_prop_flags flags;
    } want[] = {{"Avatar", "playerName", MC_FLAGS_ALL_CLIENTS},
                {"Merchant", "shopName", MC_FLAGS_CELL_PUBLIC},
                {"Realm", "realmName", MC_FLAGS_BASE}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const mc_entity_type_def *t = mc_defs_type_by_name(d, want[i].type);
        ck_assert_ptr_nonnull(t);
        const mc_def_property *p = mc_defs_property_by_name(t, want[i].prop);
        ck_assert_ptr_nonnull(p);
        ck_assert(p->identifier && p->persistent);
        ck_assert_int_eq(p->flags, want[i].flags);
        bool on_base = want[i].flags == MC_FLAGS_BASE;
        ck_assert_int_eq(p->part_index[MC_PART_BASE] >= 0, on_base);
        ck_assert_int_eq(p->part_index[MC_PART_CELL] >= 0, !on_base);
    }
    mc_defs_free(d);
}
END_TEST

START_TEST(its_game_module_opens)
{
    char err[8192] = "";
    mc_entity_defs *d = load_bigworld(err, sizeof err);
    ck_assert_msg(d != NULL, "refused: %s", err);
    mc_game *g = mc_game_open(MC_BIGWORLD_GAME, d, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    const mc_game_module *m = mc_game_table(g);
    ck_assert_int_eq(m->ntypes, 3);
    /* the cell identifiers are fields of the cell structs the engine allocates */
    ck_assert_uint_gt(m->types[0].props_size[MC_PART_CELL], 1);
    mc_game_close(g);
    mc_defs_free(d);
}
END_TEST

/* A second Identifier in the type (one inherited from the parent on the cell) is still one
 * too many. */
START_TEST(one_identifier_per_type)
{
    char *dir = tu_mkdtemp();
    const char *src = getenv("MC_SOURCE_DIR");
    char res[4096], cmd[8300];
    snprintf(res, sizeof res, "%s/tests/defs/bigworld", src ? src : ".");
    snprintf(cmd, sizeof cmd, "cp -r '%s/.' '%s/'", res, dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(tu_replace(dir, "entity_defs/Being.def",
                                "<Editable>\t\ttrue\t\t\t</Editable>",
                                "<Identifier> true </Identifier>"),
                     0);
    char err[8192] = "";
    ck_assert_int_eq(tu_replace(dir, "entity_defs/Being.def", "<Type>\t\t\tINT32\t\t\t</Type>",
                                "<Type> STRING </Type>"),
                     0);
    mc_entity_defs *d = mc_defs_load(dir, err, sizeof err);
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(err, "more than one Identifier"), "%s", err);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("defs_bigworld");
    TCase *tc = tcase_create("bigworld");
    tcase_add_test(tc, loads_as_written);
    tcase_add_test(tc, identifiers_on_the_cell);
    tcase_add_test(tc, its_game_module_opens);
    tcase_add_test(tc, one_identifier_per_type);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
