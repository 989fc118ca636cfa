/* The watcher registry: reads, writes, calls, listing, and every error path. */
#include "common/watcher.h"

#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mc_watchers *w;
static int64_t packets_sent;
static uint64_t resends;
static double tick_rate;
static bool verbose;
static int64_t limited; /* read-write, setter refuses negatives */

static void get_limited(void *ctx, mc_watch_value *out) { out->as.i = *(int64_t *)ctx; }
static bool set_limited(void *ctx, const mc_watch_value *v, char *why, size_t n)
{
    if (v->as.i < 0) {
        snprintf(why, n, "must be >= 0");
        return false;
    }
    *(int64_t *)ctx = v->as.i;
    return true;
}

static void get_name(void *ctx, mc_watch_value *out) { mc_watch_value_set_string(out, "baseapp01"); }

static bool call_echo(void *ctx, int argc, const char *const *argv, char **result, char *why,
                      size_t n)
{
    int *calls = ctx;
    (*calls)++;
    if (argc == 1 && strcmp(argv[0], "fail") == 0) {
        snprintf(why, n, "asked to fail");
        *result = strdup("partial output is discarded");
        return false;
    }
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = calloc(1, len);
    for (int i = 0; i < argc; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    *result = s;
    return true;
}

static int echo_calls;

static void setup(void)
{
    w = mc_watchers_new();
    ck_assert_ptr_nonnull(w);
    packets_sent = 42;
    resends = 7;
    tick_rate = 10.0;
    verbose = false;
    limited = 5;
    echo_calls = 0;
    ck_assert_int_eq(mc_watch_add_int(w, "nub/packetsSent", &packets_sent, MC_WATCH_READ_ONLY),
                     MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_add_uint(w, "nub/resends", &resends, MC_WATCH_READ_ONLY),
                     MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_add_float(w, "config/tickRate", &tick_rate, MC_WATCH_READ_WRITE),
                     MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_add_bool(w, "config/verbose", &verbose, MC_WATCH_READ_WRITE),
                     MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_add(w, "config/limited", MC_WATCH_INT, MC_WATCH_READ_WRITE,
                                  get_limited, set_limited, &limited),
                     MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_add(w, "name", MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_name, NULL,
                                  NULL),
                     MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_add_const_string(w, "role", "baseapp"), MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_add_callable(w, "command/echo", call_echo, &echo_calls, "echo"),
                     MC_WATCH_OK);
}

static void teardown(void) { mc_watchers_free(w); }

START_TEST(get_reads_current_values)
{
    mc_watch_value v;
    char err[256];
    ck_assert_int_eq(mc_watch_get(w, "nub/packetsSent", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_int_eq(v.type, MC_WATCH_INT);
    ck_assert_int_eq(v.as.i, 42);
    packets_sent = 43;
    ck_assert_int_eq(mc_watch_get(w, "/nub/packetsSent/", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_int_eq(v.as.i, 43);
    ck_assert_int_eq(mc_watch_get(w, "nub/resends", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_int_eq(v.type, MC_WATCH_UINT);
    ck_assert_uint_eq(v.as.u, 7);
    ck_assert_int_eq(mc_watch_get(w, "name", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_int_eq(v.type, MC_WATCH_STRING);
    ck_assert_str_eq(v.as.s, "baseapp01");
    mc_watch_value_clear(&v);
    ck_assert_int_eq(mc_watch_get(w, "role", &v, err, sizeof err), MC_WATCH_OK);
    char *text = mc_watch_value_to_text(&v);
    ck_assert_str_eq(text, "baseapp");
    free(text);
    mc_watch_value_clear(&v);
}
END_TEST

START_TEST(set_parses_by_type)
{
    char err[256];
    ck_assert_int_eq(mc_watch_set(w, "config/tickRate", "20.5", err, sizeof err), MC_WATCH_OK);
    ck_assert_double_eq(tick_rate, 20.5);
    ck_assert_int_eq(mc_watch_set(w, "config/verbose", "true", err, sizeof err), MC_WATCH_OK);
    ck_assert(verbose);
    ck_assert_int_eq(mc_watch_set(w, "config/verbose", "off", err, sizeof err), MC_WATCH_OK);
    ck_assert(!verbose);
    ck_assert_int_eq(mc_watch_set(w, "config/limited", "0", err, sizeof err), MC_WATCH_OK);
    ck_assert_int_eq(limited, 0);
}
END_TEST

START_TEST(set_errors)
{
    char err[256] = "";
    ck_assert_int_eq(mc_watch_set(w, "nub/packetsSent", "1", err, sizeof err),
                     MC_WATCH_ERR_READ_ONLY);
    ck_assert_ptr_nonnull(strstr(err, "read-only"));
    ck_assert_int_eq(packets_sent, 42);
    ck_assert_int_eq(mc_watch_set(w, "command/echo", "x", err, sizeof err),
                     MC_WATCH_ERR_READ_ONLY);
    ck_assert_int_eq(mc_watch_set(w, "config/tickRate", "fast", err, sizeof err),
                     MC_WATCH_ERR_BAD_VALUE);
    ck_assert_ptr_nonnull(strstr(err, "float"));
    ck_assert_int_eq(mc_watch_set(w, "config/tickRate", "", err, sizeof err),
                     MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(mc_watch_set(w, "config/tickRate", "1e999", err, sizeof err),
                     MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(mc_watch_set(w, "config/tickRate", NULL, err, sizeof err),
                     MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(mc_watch_set(w, "config/verbose", "maybe", err, sizeof err),
                     MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(mc_watch_set(w, "config/limited", "12abc", err, sizeof err),
                     MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(mc_watch_set(w, "config/limited", "99999999999999999999", err, sizeof err),
                     MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(mc_watch_set(w, "config/limited", "-1", err, sizeof err),
                     MC_WATCH_ERR_REFUSED);
    ck_assert_ptr_nonnull(strstr(err, "must be >= 0"));
    ck_assert_int_eq(limited, 5);
    ck_assert_int_eq(mc_watch_set(w, "config", "1", err, sizeof err), MC_WATCH_ERR_IS_DIRECTORY);
    ck_assert_int_eq(mc_watch_set(w, "config/nothing", "1", err, sizeof err),
                     MC_WATCH_ERR_NOT_FOUND);
    ck_assert_int_eq(mc_watch_set(w, "role/deeper", "1", err, sizeof err),
                     MC_WATCH_ERR_NOT_DIRECTORY);
    ck_assert_int_eq(mc_watch_set(w, "config//limited", "1", err, sizeof err),
                     MC_WATCH_ERR_BAD_PATH);
}
END_TEST

START_TEST(uint_refuses_negative)
{
    uint64_t u = 3;
    char err[128];
    ck_assert_int_eq(mc_watch_add_uint(w, "config/u", &u, MC_WATCH_READ_WRITE), MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_set(w, "config/u", "-3", err, sizeof err), MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(mc_watch_set(w, "config/u", "18446744073709551615", err, sizeof err),
                     MC_WATCH_OK);
    ck_assert(u == UINT64_MAX);
}
END_TEST

START_TEST(get_errors)
{
    mc_watch_value v;
    char err[256] = "";
    ck_assert_int_eq(mc_watch_get(w, "nub/unknown", &v, err, sizeof err), MC_WATCH_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err, "nub/unknown"));
    ck_assert_int_eq(mc_watch_get(w, "nub", &v, err, sizeof err), MC_WATCH_ERR_IS_DIRECTORY);
    ck_assert_int_eq(mc_watch_get(w, "", &v, err, sizeof err), MC_WATCH_ERR_IS_DIRECTORY);
    ck_assert_int_eq(mc_watch_get(w, "command/echo", &v, err, sizeof err),
                     MC_WATCH_ERR_NOT_CALLABLE);
    ck_assert_int_eq(mc_watch_get(w, "name/x", &v, err, sizeof err), MC_WATCH_ERR_NOT_DIRECTORY);
    ck_assert_int_eq(mc_watch_get(w, "a b", &v, err, sizeof err), MC_WATCH_ERR_BAD_PATH);
    ck_assert_int_eq(mc_watch_get(w, "nub/../name", &v, err, sizeof err), MC_WATCH_ERR_BAD_PATH);
    char longpath[400];
    memset(longpath, 'a', sizeof longpath - 1);
    longpath[sizeof longpath - 1] = '\0';
    ck_assert_int_eq(mc_watch_get(w, longpath, &v, err, sizeof err), MC_WATCH_ERR_BAD_PATH);
    /* Errors with no buffer do not crash. */
    ck_assert_int_eq(mc_watch_get(w, "nope", &v, NULL, 0), MC_WATCH_ERR_NOT_FOUND);
}
END_TEST

START_TEST(call_runs_with_arguments)
{
    char *result = NULL;
    char err[256];
    const char *args[] = {"a", "b c"};
    ck_assert_int_eq(mc_watch_call(w, "command/echo", 2, args, &result, err, sizeof err),
                     MC_WATCH_OK);
    ck_assert_str_eq(result, "a b c");
    free(result);
    ck_assert_int_eq(mc_watch_call(w, "command/echo", 0, NULL, &result, err, sizeof err),
                     MC_WATCH_OK);
    ck_assert_str_eq(result, "");
    free(result);
    ck_assert_int_eq(echo_calls, 2);
}
END_TEST

START_TEST(call_errors)
{
    char *result = NULL;
    char err[256] = "";
    const char *fail[] = {"fail"};
    ck_assert_int_eq(mc_watch_call(w, "command/echo", 1, fail, &result, err, sizeof err),
                     MC_WATCH_ERR_REFUSED);
    ck_assert_ptr_null(result);
    ck_assert_ptr_nonnull(strstr(err, "asked to fail"));
    ck_assert_int_eq(mc_watch_call(w, "nub/packetsSent", 0, NULL, &result, err, sizeof err),
                     MC_WATCH_ERR_NOT_CALLABLE);
    ck_assert_int_eq(mc_watch_call(w, "command", 0, NULL, &result, err, sizeof err),
                     MC_WATCH_ERR_NOT_CALLABLE);
    ck_assert_int_eq(mc_watch_call(w, "command/none", 0, NULL, &result, err, sizeof err),
                     MC_WATCH_ERR_NOT_FOUND);
}
END_TEST

typedef struct {
    char names[16][MC_WATCH_MAX_NAME];
    bool dirs[16];
    int n;
} listing;

static void collect(void *ctx, const mc_watch_entry *e)
{
    listing *l = ctx;
    if (l->n < 16) {
        snprintf(l->names[l->n], MC_WATCH_MAX_NAME, "%s", e->name);
        l->dirs[l->n] = e->is_directory;
        l->n++;
    }
}

START_TEST(list_is_sorted_and_typed)
{
    listing l = {0};
    char err[256];
    ck_assert_int_eq(mc_watch_list(w, "", collect, &l, err, sizeof err), MC_WATCH_OK);
    ck_assert_int_eq(l.n, 5);
    ck_assert_str_eq(l.names[0], "command");
    ck_assert_str_eq(l.names[1], "config");
    ck_assert_str_eq(l.names[2], "name");
    ck_assert_str_eq(l.names[3], "nub");
    ck_assert_str_eq(l.names[4], "role");
    ck_assert(l.dirs[0] && l.dirs[1] && !l.dirs[2] && l.dirs[3] && !l.dirs[4]);
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(mc_watch_list(w, "config", collect, &l, err, sizeof err), MC_WATCH_OK);
    ck_assert_int_eq(l.n, 3);
    ck_assert_str_eq(l.names[0], "limited");
    ck_assert_int_eq(mc_watch_list(w, "name", collect, &l, err, sizeof err),
                     MC_WATCH_ERR_NOT_DIRECTORY);
    ck_assert_int_eq(mc_watch_list(w, "missing", collect, &l, err, sizeof err),
                     MC_WATCH_ERR_NOT_FOUND);
    ck_assert(mc_watch_is_directory(w, "nub"));
    ck_assert(!mc_watch_is_directory(w, "name"));
    ck_assert(!mc_watch_is_directory(w, "missing"));
}
END_TEST

typedef struct {
    char text[1024];
} walked;

static void walk_cb(void *ctx, const char *path, mc_watch_mode mode, const mc_watch_value *v)
{
    walked *wk = ctx;
    char *t = v ? mc_watch_value_to_text(v) : strdup("<call>");
    size_t len = strlen(wk->text);
    snprintf(wk->text + len, sizeof wk->text - len, "%s=%s;", path, t);
    free(t);
}

START_TEST(walk_reads_recursively)
{
    walked wk = {{0}};
    char err[256];
    ck_assert_int_eq(mc_watch_walk(w, "config", walk_cb, &wk, err, sizeof err), MC_WATCH_OK);
    ck_assert_str_eq(wk.text, "config/limited=5;config/tickRate=10;config/verbose=false;");
    wk.text[0] = '\0';
    ck_assert_int_eq(mc_watch_walk(w, "", walk_cb, &wk, err, sizeof err), MC_WATCH_OK);
    ck_assert_ptr_nonnull(strstr(wk.text, "command/echo=<call>;"));
    ck_assert_ptr_nonnull(strstr(wk.text, "nub/packetsSent=42;"));
    wk.text[0] = '\0';
    ck_assert_int_eq(mc_watch_walk(w, "role", walk_cb, &wk, err, sizeof err), MC_WATCH_OK);
    ck_assert_str_eq(wk.text, "role=baseapp;");
    ck_assert_int_eq(mc_watch_walk(w, "zzz", walk_cb, &wk, err, sizeof err),
                     MC_WATCH_ERR_NOT_FOUND);
}
END_TEST

START_TEST(add_errors)
{
    int64_t x = 0;
    ck_assert_int_eq(mc_watch_add_int(w, "nub/packetsSent", &x, MC_WATCH_READ_ONLY),
                     MC_WATCH_ERR_EXISTS);
    ck_assert_int_eq(mc_watch_add_int(w, "nub", &x, MC_WATCH_READ_ONLY), MC_WATCH_ERR_EXISTS);
    ck_assert_int_eq(mc_watch_add_int(w, "role/sub", &x, MC_WATCH_READ_ONLY),
                     MC_WATCH_ERR_NOT_DIRECTORY);
    ck_assert_int_eq(mc_watch_add_int(w, "", &x, MC_WATCH_READ_ONLY), MC_WATCH_ERR_BAD_PATH);
    ck_assert_int_eq(mc_watch_add_int(w, "a//b", &x, MC_WATCH_READ_ONLY), MC_WATCH_ERR_BAD_PATH);
    ck_assert_int_eq(mc_watch_add(w, "x", MC_WATCH_INT, MC_WATCH_READ_WRITE, get_limited, NULL,
                                  &x),
                     MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(mc_watch_add(w, "x", MC_WATCH_INT, MC_WATCH_CALLABLE, get_limited, NULL, &x),
                     MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(mc_watch_add_callable(w, "y", NULL, NULL, NULL), MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(mc_watch_add_directory(w, "nub"), MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_add_directory(w, "name"), MC_WATCH_ERR_EXISTS);
    char deep[200] = "";
    for (int i = 0; i < 20; i++)
        strcat(deep, "d/");
    strcat(deep, "leaf");
    ck_assert_int_eq(mc_watch_add_int(w, deep, &x, MC_WATCH_READ_ONLY), MC_WATCH_ERR_BAD_PATH);
}
END_TEST

START_TEST(remove_subtrees)
{
    mc_watch_value v;
    char err[128];
    ck_assert_int_eq(mc_watch_remove(w, "nub/resends"), MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_get(w, "nub/resends", &v, err, sizeof err), MC_WATCH_ERR_NOT_FOUND);
    ck_assert_int_eq(mc_watch_remove(w, "config"), MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_get(w, "config/tickRate", &v, err, sizeof err),
                     MC_WATCH_ERR_NOT_FOUND);
    ck_assert_int_eq(mc_watch_remove(w, "config"), MC_WATCH_ERR_NOT_FOUND);
    ck_assert_int_eq(mc_watch_remove(w, "role/x"), MC_WATCH_ERR_NOT_FOUND);
    ck_assert_int_eq(mc_watch_remove(w, "a//b"), MC_WATCH_ERR_BAD_PATH);
    /* Re-adding after removal works. */
    ck_assert_int_eq(mc_watch_add_float(w, "config/tickRate", &tick_rate, MC_WATCH_READ_ONLY),
                     MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_remove(w, ""), MC_WATCH_OK);
    ck_assert(mc_watch_is_directory(w, ""));
}
END_TEST

START_TEST(two_registries_are_independent)
{
    mc_watchers *other = mc_watchers_new();
    int64_t a = 1, b = 2;
    ck_assert_int_eq(mc_watch_add_int(other, "nub/packetsSent", &a, MC_WATCH_READ_ONLY),
                     MC_WATCH_OK);
    mc_watch_value v;
    char err[64];
    ck_assert_int_eq(mc_watch_get(other, "nub/packetsSent", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_int_eq(v.as.i, 1);
    ck_assert_int_eq(mc_watch_get(w, "nub/packetsSent", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_int_eq(v.as.i, 42);
    (void)b;
    mc_watchers_free(other);
}
END_TEST

START_TEST(value_text_round_trip)
{
    mc_watch_value v = {.type = MC_WATCH_FLOAT};
    v.as.f = 0.1;
    char *t = mc_watch_value_to_text(&v);
    mc_watch_value back;
    ck_assert(mc_watch_value_parse(MC_WATCH_FLOAT, t, &back));
    ck_assert_double_eq(back.as.f, 0.1);
    free(t);
    v.type = MC_WATCH_INT;
    v.as.i = INT64_MIN;
    t = mc_watch_value_to_text(&v);
    ck_assert_str_eq(t, "-9223372036854775808");
    free(t);
    ck_assert(!mc_watch_value_parse(MC_WATCH_INT, "0x", &back));
    ck_assert(mc_watch_value_parse(MC_WATCH_STRING, "hi there", &back));
    ck_assert_str_eq(back.as.s, "hi there");
    mc_watch_value_clear(&back);
    ck_assert_str_eq(mc_watch_status_name(MC_WATCH_ERR_READ_ONLY), "read-only");
    ck_assert_str_eq(mc_watch_type_name(MC_WATCH_UINT), "uint");
    ck_assert_str_eq(mc_watch_mode_name(MC_WATCH_CALLABLE), "call");
}
END_TEST


/* --- asynchronous callables ------------------------------------------------------------ */

/* An asynchronous callable that keeps its done to complete later, or completes at once
 * when its first argument is "now" (refusing when it is "no"). */
typedef struct {
    mc_watch_done *held;
    int calls;
} async_owner;

static void async_fn(void *ctx, int argc, const char *const *argv, mc_watch_done *done)
{
    async_owner *o = ctx;
    o->calls++;
    if (argc >= 1 && strcmp(argv[0], "now") == 0)
        mc_watch_complete(done, true, argc >= 2 ? argv[1] : NULL, NULL);
    else if (argc >= 1 && strcmp(argv[0], "no") == 0)
        mc_watch_complete(done, false, NULL, "not today");
    else
        o->held = done;
}

typedef struct {
    int count;
    mc_watch_status st;
    char result[128];
    bool has_result;
    char err[256];
} outcome;

static void on_outcome(void *ctx, mc_watch_status st, const char *result, const char *err)
{
    outcome *o = ctx;
    o->count++;
    o->st = st;
    o->has_result = result != NULL;
    snprintf(o->result, sizeof o->result, "%s", result ? result : "");
    snprintf(o->err, sizeof o->err, "%s", err ? err : "");
}

START_TEST(async_callable_answers_later)
{
    async_owner own = {0};
    char err[256] = "";
    ck_assert_int_eq(mc_watch_add_async_callable(w, "command/later", async_fn, &own, "later"),
                     MC_WATCH_OK);
    ck_assert(mc_watch_is_async(w, "command/later"));
    ck_assert(!mc_watch_is_async(w, "command/echo"));
    ck_assert(!mc_watch_is_async(w, "command"));
    outcome o = {0};
    const char *args[] = {"wait"};
    ck_assert_int_eq(mc_watch_call_async(w, "command/later", 1, args, on_outcome, &o, err,
                                         sizeof err),
                     MC_WATCH_OK);
    ck_assert_int_eq(o.count, 0);
    ck_assert_ptr_nonnull(own.held);
    ck_assert_uint_eq(mc_watch_pending(w), 1);
    mc_watch_complete(own.held, true, "base 17 on baseapp02", NULL);
    ck_assert_int_eq(o.count, 1);
    ck_assert_int_eq(o.st, MC_WATCH_OK);
    ck_assert_str_eq(o.result, "base 17 on baseapp02");
    ck_assert_uint_eq(mc_watch_pending(w), 0);

    /* Completing inside the function answers before call_async returns; refusals carry
     * the path and the reason. */
    outcome now = {0}, no = {0};
    const char *a_now[] = {"now", "at once"}, *a_no[] = {"no"};
    ck_assert_int_eq(mc_watch_call_async(w, "command/later", 2, a_now, on_outcome, &now, err,
                                         sizeof err),
                     MC_WATCH_OK);
    ck_assert_int_eq(now.count, 1);
    ck_assert_str_eq(now.result, "at once");
    ck_assert_int_eq(mc_watch_call_async(w, "command/later", 1, a_no, on_outcome, &no, err,
                                         sizeof err),
                     MC_WATCH_OK);
    ck_assert_int_eq(no.count, 1);
    ck_assert_int_eq(no.st, MC_WATCH_ERR_REFUSED);
    ck_assert_msg(strstr(no.err, "command/later") && strstr(no.err, "not today"), "%s", no.err);
    ck_assert_uint_eq(mc_watch_pending(w), 0);

    /* A listing shows it as an ordinary callable. */
    mc_watch_value v;
    ck_assert_int_eq(mc_watch_get(w, "command/later", &v, err, sizeof err),
                     MC_WATCH_ERR_NOT_CALLABLE);
}
END_TEST

START_TEST(call_async_runs_sync_callables_and_reports_errors)
{
    char err[256] = "";
    outcome o = {0};
    const char *args[] = {"x", "y"};
    ck_assert_int_eq(mc_watch_call_async(w, "command/echo", 2, args, on_outcome, &o, err,
                                         sizeof err),
                     MC_WATCH_OK);
    ck_assert_int_eq(o.count, 1);
    ck_assert_int_eq(o.st, MC_WATCH_OK);
    ck_assert_str_eq(o.result, "x y");
    const char *fail[] = {"fail"};
    ck_assert_int_eq(mc_watch_call_async(w, "command/echo", 1, fail, on_outcome, &o, err,
                                         sizeof err),
                     MC_WATCH_OK);
    ck_assert_int_eq(o.count, 2);
    ck_assert_int_eq(o.st, MC_WATCH_ERR_REFUSED);
    ck_assert_ptr_nonnull(strstr(o.err, "asked to fail"));
    /* Nothing runs (and on_result is not called) when there is nothing to call. */
    ck_assert_int_eq(mc_watch_call_async(w, "command/none", 0, NULL, on_outcome, &o, err,
                                         sizeof err),
                     MC_WATCH_ERR_NOT_FOUND);
    ck_assert_int_eq(mc_watch_call_async(w, "nub/resends", 0, NULL, on_outcome, &o, err,
                                         sizeof err),
                     MC_WATCH_ERR_NOT_CALLABLE);
    ck_assert_int_eq(mc_watch_call_async(w, "command", 0, NULL, on_outcome, &o, err, sizeof err),
                     MC_WATCH_ERR_NOT_CALLABLE);
    ck_assert_int_eq(mc_watch_call_async(w, "a//b", 0, NULL, on_outcome, &o, err, sizeof err),
                     MC_WATCH_ERR_BAD_PATH);
    ck_assert_int_eq(mc_watch_call_async(w, "command/echo", 0, NULL, NULL, NULL, err, sizeof err),
                     MC_WATCH_ERR_BAD_VALUE);
    ck_assert_int_eq(o.count, 2);
}
END_TEST

START_TEST(sync_call_on_async_callable)
{
    async_owner own = {0};
    char err[256] = "";
    char *result = NULL;
    ck_assert_int_eq(mc_watch_add_async_callable(w, "command/later", async_fn, &own, NULL),
                     MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_add_async_callable(w, "command/nofn", NULL, &own, NULL),
                     MC_WATCH_ERR_BAD_VALUE);
    const char *a_now[] = {"now", "done"};
    ck_assert_int_eq(mc_watch_call(w, "command/later", 2, a_now, &result, err, sizeof err),
                     MC_WATCH_OK);
    ck_assert_str_eq(result, "done");
    free(result);
    const char *a_no[] = {"no"};
    ck_assert_int_eq(mc_watch_call(w, "command/later", 1, a_no, &result, err, sizeof err),
                     MC_WATCH_ERR_REFUSED);
    ck_assert_ptr_null(result);
    ck_assert_ptr_nonnull(strstr(err, "not today"));
    /* One that does not complete at once: a clear error; its later result goes nowhere. */
    const char *a_wait[] = {"wait"};
    ck_assert_int_eq(mc_watch_call(w, "command/later", 1, a_wait, &result, err, sizeof err),
                     MC_WATCH_ERR_PENDING);
    ck_assert_ptr_null(result);
    ck_assert_ptr_nonnull(strstr(err, "asynchronous"));
    ck_assert_ptr_nonnull(own.held);
    ck_assert_uint_eq(mc_watch_pending(w), 1);
    mc_watch_complete(own.held, true, "too late", NULL);
    ck_assert_uint_eq(mc_watch_pending(w), 0);
    ck_assert_str_eq(mc_watch_status_name(MC_WATCH_ERR_PENDING),
                     "asynchronous call did not complete at once");
}
END_TEST

START_TEST(freeing_the_registry_detaches_pending_calls)
{
    mc_watchers *own_w = mc_watchers_new();
    async_owner own = {0};
    char err[256] = "";
    ck_assert_int_eq(mc_watch_add_async_callable(own_w, "slow", async_fn, &own, NULL),
                     MC_WATCH_OK);
    outcome o = {0};
    mc_watch_done *held[3];
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(mc_watch_call_async(own_w, "slow", 0, NULL, on_outcome, &o, err,
                                             sizeof err),
                         MC_WATCH_OK);
        held[i] = own.held;
    }
    ck_assert_uint_eq(mc_watch_pending(own_w), 3);
    mc_watch_complete(held[1], false, NULL, "gave up"); /* one from the middle of the list */
    ck_assert_int_eq(o.count, 1);
    mc_watchers_free(own_w);
    /* The owner completes later: nothing is called, the dones are freed (ASan: no leak,
     * no use-after-free). */
    mc_watch_complete(held[0], true, "late", NULL);
    mc_watch_complete(held[2], false, NULL, "late");
    mc_watch_complete(NULL, true, NULL, NULL);
    ck_assert_int_eq(o.count, 1);
}
END_TEST

static Suite *watcher_suite(void)
{
    Suite *s = suite_create("common_watcher");
    TCase *tc = tcase_create("registry");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, get_reads_current_values);
    tcase_add_test(tc, set_parses_by_type);
    tcase_add_test(tc, set_errors);
    tcase_add_test(tc, uint_refuses_negative);
    tcase_add_test(tc, get_errors);
    tcase_add_test(tc, call_runs_with_arguments);
    tcase_add_test(tc, call_errors);
    tcase_add_test(tc, list_is_sorted_and_typed);
    tcase_add_test(tc, walk_reads_recursively);
    tcase_add_test(tc, add_errors);
    tcase_add_test(tc, remove_subtrees);
    tcase_add_test(tc, two_registries_are_independent);
    tcase_add_test(tc, value_text_round_trip);
    tcase_add_test(tc, async_callable_answers_later);
    tcase_add_test(tc, call_async_runs_sync_callables_and_reports_errors);
    tcase_add_test(tc, sync_call_on_async_callable);
    tcase_add_test(tc, freeing_the_registry_detaches_pending_calls);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(watcher_suite)
