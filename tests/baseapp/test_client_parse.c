/* What a client may send its baseapp (client_parse.h) and the client <-> baseapp messages
 * (entity/client_wire.h), on the example game's defs: exposed calls of its own player pass with
 * their arguments; another entity, an unexposed or two-way method, a cell index on the base,
 * bad or extra argument bytes and truncated headers are refused with their reason; the
 * player, property and disconnect messages round-trip and refuse what the own client may
 * not see. */
#include "check_main.h"

#include <string.h>

#include "client_parse.h"
#include "common/game_module.h"
#include "entity/client_wire.h"

static mc_entity_defs *defs;

static void load(void)
{
    char err[4096];
    defs = mc_defs_load(MC_EXAMPLE_RES, err, sizeof err);
    ck_assert_msg(defs != NULL, "%s", err);
}

/* A call message: header, then args. */
static size_t msg(uint8_t *out, int32_t id, uint16_t index, const uint8_t *args, size_t n)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cw_write_call(&os, id, index, args, n);
    size_t len = os.size;
    memcpy(out, os.data, len);
    mc_ostream_free(&os);
    return len;
}

START_TEST(exposed_calls_of_its_own_player_pass_the_rest_is_refused_by_reason)
{
    load();
    const uint16_t ACCOUNT = 0, AVATAR = 1;
    uint8_t m[256];
    char why[256];
    client_call c;
    /* Account.createAvatar("Hero", (1,2,3,4)): exposed base index 1 */
    const uint8_t create[] = {4, 'H', 'e', 'r', 'o', 4, 1, 2, 3, 4};
    size_t n = msg(m, 7, 1, create, sizeof create);
    ck_assert_int_eq(client_parse_call(defs, ACCOUNT, 7, MC_PART_BASE, m, n, &c, why, sizeof why),
                     -1);
    ck_assert_str_eq(c.method->name, "createAvatar");
    ck_assert_uint_eq(c.len, sizeof create);
    /* another entity */
    n = msg(m, 8, 1, create, sizeof create);
    ck_assert_int_eq(client_parse_call(defs, ACCOUNT, 7, MC_PART_BASE, m, n, &c, why, sizeof why),
                     CLIENT_REFUSE_NOT_OWN);
    /* an index past the exposed ones (play and getAvatarCount are not exposed) */
    n = msg(m, 7, 2, NULL, 0);
    ck_assert_int_eq(client_parse_call(defs, ACCOUNT, 7, MC_PART_BASE, m, n, &c, why, sizeof why),
                     CLIENT_REFUSE_NOT_EXPOSED);
    ck_assert(strstr(why, "no exposed base method 2"));
    /* Account has no cell methods */
    n = msg(m, 7, 0, NULL, 0);
    ck_assert_int_eq(client_parse_call(defs, ACCOUNT, 7, MC_PART_CELL, m, n, &c, why, sizeof why),
                     CLIENT_REFUSE_NOT_EXPOSED);
    /* arguments: truncated, or a byte too many */
    n = msg(m, 7, 1, create, sizeof create - 1);
    ck_assert_int_eq(client_parse_call(defs, ACCOUNT, 7, MC_PART_BASE, m, n, &c, why, sizeof why),
                     CLIENT_REFUSE_BAD_ARGS);
    uint8_t more[sizeof create + 1];
    memcpy(more, create, sizeof create);
    more[sizeof create] = 0;
    n = msg(m, 7, 1, more, sizeof more);
    ck_assert_int_eq(client_parse_call(defs, ACCOUNT, 7, MC_PART_BASE, m, n, &c, why, sizeof why),
                     CLIENT_REFUSE_BAD_ARGS);
    /* invalid UTF-8 in a UNICODE_STRING */
    const uint8_t bad_utf8[] = {2, 0xC0, 0x80};
    n = msg(m, 7, 0, bad_utf8, sizeof bad_utf8);
    ck_assert_int_eq(client_parse_call(defs, ACCOUNT, 7, MC_PART_BASE, m, n, &c, why, sizeof why),
                     CLIENT_REFUSE_BAD_ARGS);
    /* a header shorter than 6 bytes */
    ck_assert_int_eq(client_parse_call(defs, ACCOUNT, 7, MC_PART_BASE, m, 5, &c, why, sizeof why),
                     CLIENT_REFUSE_MALFORMED);
    ck_assert_int_eq(client_parse_call(defs, ACCOUNT, 7, MC_PART_BASE, NULL, 0, &c, why,
                                       sizeof why),
                     CLIENT_REFUSE_MALFORMED);
    /* Avatar: exposed cell chat (0) and emote (1), exposed base logout (0) */
    const uint8_t hello[] = {5, 'h', 'e', 'l', 'l', 'o'};
    n = msg(m, 9, 0, hello, sizeof hello);
    ck_assert_int_eq(client_parse_call(defs, AVATAR, 9, MC_PART_CELL, m, n, &c, why, sizeof why),
                     -1);
    ck_assert_str_eq(c.method->name, "chat");
    ck_assert_int_eq(c.method->part, MC_PART_CELL);
    n = msg(m, 9, 0, NULL, 0);
    ck_assert_int_eq(client_parse_call(defs, AVATAR, 9, MC_PART_BASE, m, n, &c, why, sizeof why),
                     -1);
    ck_assert_str_eq(c.method->name, "logout");
    ck_assert_str_eq(client_refuse_name(CLIENT_REFUSE_NOT_OWN), "notOwn");
    mc_defs_free(defs);
}
END_TEST

START_TEST(server_messages_round_trip_and_refuse_what_the_client_may_not_see)
{
    load();
    const mc_entity_type_def *acc = mc_defs_type_by_name(defs, "Account");
    const mc_def_property *name = mc_defs_property_by_name(acc, "accountName");
    const mc_def_property *avatars = mc_defs_property_by_name(acc, "avatars"); /* BASE only */
    ck_assert(mc_cw_base_client_prop(name));
    ck_assert(!mc_cw_base_client_prop(avatars));
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cw_write_player_header(&os, acc->id, 42, 1);
    mc_write_u16(&os, name->index);
    mc_write_blob(&os, "alice", 5);
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    mc_cw_player p;
    char why[256];
    ck_assert_int_eq(mc_cw_read_player(defs, &is, &p, why, sizeof why), 0);
    ck_assert_int_eq(p.id, 42);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_uint_eq(p.values[0].as.bytes.len, 5);
    mc_cw_player_free(&p);
    /* a base-only property in a player is refused */
    mc_ostream_reset(&os);
    mc_cw_write_player_header(&os, acc->id, 42, 1);
    mc_write_u16(&os, avatars->index);
    mc_write_u8(&os, 0);
    mc_istream_init(&is, os.data, os.size);
    ck_assert_int_eq(mc_cw_read_player(defs, &is, &p, why, sizeof why), -1);
    /* the same property twice, a trailing byte, a server-only type */
    mc_ostream_reset(&os);
    mc_cw_write_player_header(&os, acc->id, 42, 2);
    for (int i = 0; i < 2; i++) {
        mc_write_u16(&os, name->index);
        mc_write_blob(&os, "a", 1);
    }
    mc_istream_init(&is, os.data, os.size);
    ck_assert_int_eq(mc_cw_read_player(defs, &is, &p, why, sizeof why), -1);
    mc_ostream_reset(&os);
    mc_cw_write_player_header(&os, acc->id, 42, 0);
    mc_write_u8(&os, 0);
    mc_istream_init(&is, os.data, os.size);
    ck_assert_int_eq(mc_cw_read_player(defs, &is, &p, why, sizeof why), -1);
    mc_ostream_reset(&os);
    mc_cw_write_player_header(&os, mc_defs_type_by_name(defs, "Space")->id, 42, 0);
    mc_istream_init(&is, os.data, os.size);
    ck_assert_int_eq(mc_cw_read_player(defs, &is, &p, why, sizeof why), -1);
    /* a property change */
    mc_ostream_reset(&os);
    const uint8_t bob[] = {3, 'b', 'o', 'b'};
    mc_cw_write_property(&os, 42, name->index, bob, sizeof bob);
    mc_istream_init(&is, os.data, os.size);
    int32_t id;
    const mc_def_property *prop;
    mc_value v;
    ck_assert_int_eq(mc_cw_read_property(defs, acc->id, &is, &id, &prop, &v, why, sizeof why), 0);
    ck_assert_ptr_eq(prop, name);
    ck_assert_int_eq(id, 42);
    mc_value_free(&v);
    mc_ostream_reset(&os);
    mc_cw_write_property(&os, 42, avatars->index, (const uint8_t *)"\0", 1);
    mc_istream_init(&is, os.data, os.size);
    ck_assert_int_eq(mc_cw_read_property(defs, acc->id, &is, &id, &prop, &v, why, sizeof why),
                     -1);
    /* disconnect: the text is bounded */
    mc_ostream_reset(&os);
    char longer[400];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    mc_cw_write_disconnect(&os, MC_CW_BYE_TAKEN_OVER, longer);
    mc_istream_init(&is, os.data, os.size);
    uint8_t reason;
    char text[MC_CW_REASON_MAX + 1];
    ck_assert(mc_cw_read_disconnect(&is, &reason, text, sizeof text));
    ck_assert_int_eq(reason, MC_CW_BYE_TAKEN_OVER);
    ck_assert_uint_eq(strlen(text), MC_CW_REASON_MAX);
    mc_ostream_free(&os);
    mc_defs_free(defs);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("client_parse");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, exposed_calls_of_its_own_player_pass_the_rest_is_refused_by_reason);
    tcase_add_test(tc, server_messages_round_trip_and_refuse_what_the_client_may_not_see);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
