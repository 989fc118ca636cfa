/* World update records against the example game's defs: what the writers produce parses back
 * to the same records; the parser refuses, with a reason, every kind of bad input (unknown
 * kind or type, a property the receiver may not see, an own-client property of another
 * entity, truncation at every byte, non-finite positions, an unknown entity's properties). */
#include "check_main.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "entity/world_wire.h"

static mc_entity_defs *defs;
static const mc_entity_type_def *avatar;

static void load(void)
{
    char err[4096];
    defs = mc_defs_load(MC_GAME_RES, err, sizeof err);
    ck_assert_msg(defs != NULL, "%s", err);
    avatar = mc_defs_type_by_name(defs, "Avatar");
    ck_assert_ptr_nonnull(avatar);
}

static void unload(void) { mc_defs_free(defs); }

typedef struct {
    char log[2048];
    size_t n;
} seen;

static int type_of(void *ctx, int32_t id)
{
    (void)ctx;
    return id == 99 ? -1 : (int)avatar->id; /* 99: unknown */
}

static int record(void *ctx, const mc_world_record *r)
{
    seen *s = ctx;
    char one[256];
    int at = snprintf(one, sizeof one, "%d:%d", r->kind, (int)r->id);
    if (r->kind == MC_WORLD_CALL)
        at += snprintf(one + at, sizeof one - (size_t)at, " %s(", r->method->name);
    if (r->kind == MC_WORLD_ENTER || r->kind == MC_WORLD_VOLATILE ||
        r->kind == MC_WORLD_CORRECTION)
        at += snprintf(one + at, sizeof one - (size_t)at, "@%g,%g,%g/%g", r->position.x,
                       r->position.y, r->position.z, r->direction.z);
    for (size_t i = 0; i < r->n; i++) {
        char *t = mc_value_to_text(&r->values[i]);
        if (r->kind == MC_WORLD_CALL)
            at += snprintf(one + at, sizeof one - (size_t)at, "%s%s", i ? "," : "", t ? t : "?");
        else
            at += snprintf(one + at, sizeof one - (size_t)at, " %s=%s", r->props[i]->name,
                           t ? t : "?");
        free(t);
    }
    snprintf(s->log + strlen(s->log), sizeof s->log - strlen(s->log), "%s;", one);
    s->n++;
    return 0;
}

static void write_prop(mc_ostream *os, const char *name, const mc_value *v)
{
    const mc_def_property *p = mc_defs_property_by_name(avatar, name);
    ck_assert_ptr_nonnull(p);
    mc_world_write_prop_index(os, p->index);
    char why[128];
    ck_assert_int_eq(mc_value_encode(p->type, v, NULL, os, why, sizeof why), 0);
}

static mc_value int_value(mc_type_kind k, int64_t i)
{
    mc_value v;
    memset(&v, 0, sizeof v);
    v.kind = k;
    v.as.i = i;
    return v;
}

/* ENTER(7) with level and rank, PROPS(7) rank, VOLATILE(7), PROPS(5) health (own), LEAVE(7) */
static void sample(mc_ostream *os)
{
    mc_vector3 pos = {1, 2, 3}, dir = {0, 0, 1.5f};
    size_t n_at;
    mc_world_write_enter(os, 7, avatar->id, pos, dir, 0, &n_at);
    mc_value lv = int_value(MC_TYPE_UINT8, 4), rv = int_value(MC_TYPE_INT8, -2);
    write_prop(os, "level", &lv);
    write_prop(os, "rank", &rv);
    mc_store_u16(os->data + n_at, 2);
    mc_world_write_props(os, 7, 1, NULL);
    rv.as.i = 3;
    write_prop(os, "rank", &rv);
    mc_world_write_volatile(os, 7, (mc_vector3){4, 5, 6}, dir);
    mc_world_write_props(os, 5, 1, NULL);
    mc_value hv = int_value(MC_TYPE_INT32, 42);
    write_prop(os, "health", &hv);
    /* onChat(speaker INT32, text STRING) */
    const mc_def_method *chat = mc_defs_method_by_name(avatar, MC_PART_CLIENT, "onChat");
    ck_assert_ptr_nonnull(chat);
    mc_ostream args;
    mc_ostream_init(&args);
    mc_write_i32(&args, 7);
    mc_write_string(&args, "hi");
    mc_world_write_call(os, 7, chat->index, args.data, args.size);
    mc_ostream_free(&args);
    mc_world_write_leave(os, 7);
    mc_world_write_correction(os, 5, (mc_vector3){9, 0, 9}, (mc_vector3){0, 0, 0.5f});
    ck_assert(mc_ostream_ok(os));
}

START_TEST(records_parse_back)
{
    load();
    mc_ostream os;
    mc_ostream_init(&os);
    sample(&os);
    seen s = {0};
    char why[256] = "";
    int rc = mc_world_parse(defs, 5, os.data, os.size, type_of, record, &s, why, sizeof why);
    ck_assert_msg(rc == 0, "%s", why);
    ck_assert_uint_eq(s.n, 7);
    ck_assert_msg(strcmp(s.log, "1:7@1,2,3/1.5 level=4 rank=-2;3:7 rank=3;4:7@4,5,6/1.5;"
                                "3:5 health=42;5:7 onChat(7,\"hi\";2:7;6:5@9,0,9/0.5;") == 0,
                  "%s", s.log);
    /* the same bytes for another player: health is not its own any more */
    memset(&s, 0, sizeof s);
    rc = mc_world_parse(defs, 6, os.data, os.size, type_of, record, &s, why, sizeof why);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(why, "health") && strstr(why, "not sent"), "%s", why);
    ck_assert_uint_eq(s.n, 3); /* what came before was handed over */
    /* every truncation is refused, never read past */
    for (size_t cut = 1; cut < os.size; cut++) {
        memset(&s, 0, sizeof s);
        rc = mc_world_parse(defs, 5, os.data, cut, type_of, record, &s, why, sizeof why);
        bool at_boundary = rc == 0;
        if (at_boundary)
            continue; /* a cut between records is a shorter valid run */
        ck_assert_int_eq(rc, -1);
        ck_assert(why[0]);
    }
    mc_ostream_free(&os);
    unload();
}
END_TEST

START_TEST(bad_records_are_refused_with_a_reason)
{
    load();
    seen s;
    char why[256];
    mc_ostream os;
    mc_ostream_init(&os);
    /* unknown kind */
    mc_write_u8(&os, 9);
    mc_write_i32(&os, 7);
    ck_assert_int_eq(mc_world_parse(defs, 5, os.data, os.size, type_of, record, &s, why,
                                    sizeof why), -1);
    ck_assert_msg(strstr(why, "kind"), "%s", why);
    /* unknown entity type */
    mc_ostream_reset(&os);
    mc_world_write_enter(&os, 7, 999, (mc_vector3){0, 0, 0}, (mc_vector3){0, 0, 0}, 0, NULL);
    ck_assert_int_eq(mc_world_parse(defs, 5, os.data, os.size, type_of, record, &s, why,
                                    sizeof why), -1);
    ck_assert_msg(strstr(why, "type"), "%s", why);
    /* a property no client may see (aggro: CELL_PRIVATE; gold: BASE) */
    const char *hidden[] = {"aggro", "gold", "faction"};
    for (int i = 0; i < 3; i++) {
        mc_ostream_reset(&os);
        mc_world_write_props(&os, 7, 1, NULL);
        const mc_def_property *p = mc_defs_property_by_name(avatar, hidden[i]);
        mc_world_write_prop_index(&os, p->index);
        mc_write_u64(&os, 0);
        ck_assert_int_eq(mc_world_parse(defs, 7, os.data, os.size, type_of, record, &s, why,
                                        sizeof why), -1);
        ck_assert_msg(strstr(why, hidden[i]), "%s: %s", hidden[i], why);
    }
    /* an index beyond the type's properties */
    mc_ostream_reset(&os);
    mc_world_write_props(&os, 7, 1, NULL);
    mc_world_write_prop_index(&os, 5000);
    ck_assert_int_eq(mc_world_parse(defs, 7, os.data, os.size, type_of, record, &s, why,
                                    sizeof why), -1);
    /* more properties than the type has */
    mc_ostream_reset(&os);
    mc_world_write_props(&os, 7, 60000, NULL);
    ck_assert_int_eq(mc_world_parse(defs, 7, os.data, os.size, type_of, record, &s, why,
                                    sizeof why), -1);
    /* a client method the type lacks; arguments that do not decode */
    mc_ostream_reset(&os);
    mc_world_write_call(&os, 7, 999, NULL, 0);
    ck_assert_int_eq(mc_world_parse(defs, 7, os.data, os.size, type_of, record, &s, why,
                                    sizeof why), -1);
    ck_assert_msg(strstr(why, "client method"), "%s", why);
    mc_ostream_reset(&os);
    const mc_def_method *chat = mc_defs_method_by_name(avatar, MC_PART_CLIENT, "onChat");
    mc_world_write_call(&os, 7, chat->index, (const uint8_t *)"\0\0", 2);
    ck_assert_int_eq(mc_world_parse(defs, 7, os.data, os.size, type_of, record, &s, why,
                                    sizeof why), -1);
    ck_assert_msg(strstr(why, "onChat"), "%s", why);
    /* properties of an entity the client does not know */
    mc_ostream_reset(&os);
    mc_world_write_props(&os, 99, 0, NULL);
    ck_assert_int_eq(mc_world_parse(defs, 7, os.data, os.size, type_of, record, &s, why,
                                    sizeof why), -1);
    ck_assert_msg(strstr(why, "not known"), "%s", why);
    /* non-finite position, bad entity id */
    mc_ostream_reset(&os);
    mc_world_write_volatile(&os, 7, (mc_vector3){NAN, 0, 0}, (mc_vector3){0, 0, 0});
    ck_assert_int_eq(mc_world_parse(defs, 7, os.data, os.size, type_of, record, &s, why,
                                    sizeof why), -1);
    mc_ostream_reset(&os);
    mc_world_write_leave(&os, -3);
    ck_assert_int_eq(mc_world_parse(defs, 7, os.data, os.size, type_of, record, &s, why,
                                    sizeof why), -1);
    /* a correction is only ever of the player's own entity */
    mc_ostream_reset(&os);
    mc_world_write_correction(&os, 8, (mc_vector3){0, 0, 0}, (mc_vector3){0, 0, 0});
    ck_assert_int_eq(mc_world_parse(defs, 7, os.data, os.size, type_of, record, &s, why,
                                    sizeof why), -1);
    ck_assert_msg(strstr(why, "correction"), "%s", why);
    /* nothing at all is fine */
    ck_assert_int_eq(mc_world_parse(defs, 7, NULL, 0, type_of, record, &s, why, sizeof why), 0);
    mc_ostream_free(&os);
    unload();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("world_wire");
    TCase *tc = tcase_create("records");
    tcase_add_test(tc, records_parse_back);
    tcase_add_test(tc, bad_records_are_refused_with_a_reason);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
