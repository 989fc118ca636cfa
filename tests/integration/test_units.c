/* Unit tests of the cluster parts that need no network: the manager's registry, the
 * watcher service, and the watcher tool's argument parsing and exit codes. */
#include "args.h"
#include "exit_codes.h"
#include "format.h"
#include "manager_internal.h"
#include "registry.h"
#include "server/pb.h"
#include "server/watcher_service.h"

#include "check_main.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIGEST_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define DIGEST_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static Mc__Control__RegisterRequest req_for(mc_role role, const char *addr, const char *digest)
{
    Mc__Control__RegisterRequest r = MC__CONTROL__REGISTER_REQUEST__INIT;
    r.role = role;
    r.pid = 42;
    r.host = "test";
    r.internal_addr = (char *)addr;
    r.def_digest = (char *)digest;
    r.build_version = "0.1.0";
    return r;
}

static int deaths;
static void count_death(void *ctx, mc_reg_entry *e) { (*(int *)ctx)++; }

START_TEST(registry_names_and_refuses)
{
    mc_registry *r = mc_registry_new(DIGEST_A, 3 * MC_US_PER_S);
    mc_reg_entry *e = NULL;
    char why[256];
    Mc__Control__RegisterRequest q = req_for(MC_ROLE_BASEAPP, "127.0.0.1:1000", DIGEST_A);
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
    ck_assert_str_eq(e->name, "baseapp01");
    q = req_for(MC_ROLE_CELLAPP, "127.0.0.1:1001", DIGEST_A);
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
    ck_assert_str_eq(e->name, "cellapp01");
    q = req_for(MC_ROLE_BASEAPP, "127.0.0.1:1002", DIGEST_B);
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why),
                     MC_REG_DIGEST_MISMATCH);
    ck_assert_ptr_nonnull(strstr(why, "differs"));
    q = req_for(MC_ROLE_BASEAPP, "127.0.0.1:1002", "xyz");
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why),
                     MC_REG_BAD_REQUEST);
    q = req_for(MC_ROLE_MANAGER, "127.0.0.1:1002", DIGEST_A);
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why),
                     MC_REG_BAD_REQUEST);
    q = req_for(MC_ROLE_BASEAPP, "", DIGEST_A);
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why),
                     MC_REG_BAD_REQUEST);
    /* The same process again (a retry): the same entry. */
    mc_reg_entry *first = mc_registry_find_name(r, "baseapp01");
    q = req_for(MC_ROLE_BASEAPP, "127.0.0.1:1000", DIGEST_A);
    ck_assert_int_eq(mc_registry_add(r, &q, 1, NULL, NULL, &e, why, sizeof why), MC_REG_REPEATED);
    ck_assert_ptr_eq(e, first);
    /* Same address, another pid: the old one is dead, the new one gets a new name. */
    deaths = 0;
    q = req_for(MC_ROLE_BASEAPP, "127.0.0.1:1000", DIGEST_A);
    q.pid = 43;
    ck_assert_int_eq(mc_registry_add(r, &q, 5, count_death, &deaths, &e, why, sizeof why),
                     MC_REG_OK);
    ck_assert_str_eq(e->name, "baseapp02");
    ck_assert_int_eq(deaths, 1);
    ck_assert_int_eq(mc_registry_find_name(r, "baseapp01")->state,
                     MC__CONTROL__PROCESS_STATE__STATE_DEAD);
    mc_registry_free(r);
}
END_TEST

/* A process registering again with a manager that restarted keeps its name when no process
 * here has had it; new names come after it; a taken or malformed one gets a new name. */
START_TEST(registry_gives_a_previous_name_again)
{
    mc_registry *r = mc_registry_new(DIGEST_A, 3 * MC_US_PER_S);
    mc_reg_entry *e = NULL;
    char why[256];
    Mc__Control__RegisterRequest q = req_for(MC_ROLE_BASEAPP, "127.0.0.1:1000", DIGEST_A);
    q.previous_name = "baseapp02";
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
    ck_assert_str_eq(e->name, "baseapp02");
    q = req_for(MC_ROLE_BASEAPP, "127.0.0.1:1001", DIGEST_A);
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
    ck_assert_str_eq(e->name, "baseapp03"); /* after it */
    q = req_for(MC_ROLE_BASEAPP, "127.0.0.1:1002", DIGEST_A);
    q.previous_name = "baseapp01";
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
    ck_assert_str_eq(e->name, "baseapp01"); /* free, below the count */
    const char *bad[] = {"baseapp03", /* taken */ "cellapp04", /* another role */ "baseapp",
                         "baseapp0", "baseapp1x", "baseapp1234567890", "xbaseapp05", ""};
    const char *want[] = {"baseapp04", "baseapp05", "baseapp06", "baseapp07",
                          "baseapp08", "baseapp09", "baseapp10", "baseapp11"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char addr[32];
        snprintf(addr, sizeof addr, "127.0.0.1:%zu", 2000 + i);
        q = req_for(MC_ROLE_BASEAPP, addr, DIGEST_A);
        q.previous_name = (char *)bad[i];
        ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
        ck_assert_str_eq(e->name, want[i]);
    }
    /* a new name skips one given again above the count */
    q = req_for(MC_ROLE_CELLAPP, "127.0.0.1:3000", DIGEST_A);
    q.previous_name = "cellapp02";
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
    q = req_for(MC_ROLE_CELLAPP, "127.0.0.1:3001", DIGEST_A);
    q.previous_name = "cellapp01";
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
    q = req_for(MC_ROLE_CELLAPP, "127.0.0.1:3002", DIGEST_A);
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
    ck_assert_str_eq(e->name, "cellapp03");
    mc_registry_free(r);
}
END_TEST

START_TEST(registry_adopts_first_digest_and_expires)
{
    mc_registry *r = mc_registry_new(NULL, 3 * MC_US_PER_S);
    mc_reg_entry *a = NULL, *b = NULL;
    char why[256];
    Mc__Control__RegisterRequest q = req_for(MC_ROLE_BASEAPP, "127.0.0.1:1", DIGEST_B);
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &a, why, sizeof why), MC_REG_OK);
    ck_assert_str_eq(mc_registry_digest(r), DIGEST_B);
    q = req_for(MC_ROLE_BASEAPP, "127.0.0.1:2", DIGEST_B);
    ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &b, why, sizeof why), MC_REG_OK);
    ck_assert(mc_registry_heartbeat(r, a->id, 0.7, 2 * MC_US_PER_S));
    ck_assert(mc_registry_heartbeat(r, b->id, 0.2, 2 * MC_US_PER_S));
    ck_assert_ptr_eq(mc_registry_least_loaded(r, MC_ROLE_BASEAPP), b);
    ck_assert_ptr_null(mc_registry_least_loaded(r, MC_ROLE_CELLAPP));
    /* a retiring baseapp is never the least loaded (issue 20 item 6) */
    b->retiring = true;
    ck_assert_ptr_eq(mc_registry_least_loaded(r, MC_ROLE_BASEAPP), a);
    a->retiring = true;
    ck_assert_ptr_null(mc_registry_least_loaded(r, MC_ROLE_BASEAPP));
    a->retiring = b->retiring = false;
    /* b keeps beating, a goes silent. */
    ck_assert(mc_registry_heartbeat(r, b->id, 0.2, 4 * MC_US_PER_S));
    int n = 0;
    ck_assert_uint_eq(mc_registry_expire(r, 5 * MC_US_PER_S, count_death, &n), 0);
    ck_assert_uint_eq(mc_registry_expire(r, 5 * MC_US_PER_S + 1, count_death, &n), 1);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(a->state, MC__CONTROL__PROCESS_STATE__STATE_DEAD);
    ck_assert_ptr_nonnull(strstr(a->reason, "no heartbeat"));
    ck_assert(!mc_registry_heartbeat(r, a->id, 0.1, 6 * MC_US_PER_S));
    ck_assert_ptr_eq(mc_registry_least_loaded(r, MC_ROLE_BASEAPP), b);
    ck_assert_ptr_nonnull(mc_registry_mark(r, b->id, MC__CONTROL__PROCESS_STATE__STATE_STOPPED,
                                           "bye", 7));
    ck_assert_ptr_null(mc_registry_mark(r, b->id, MC__CONTROL__PROCESS_STATE__STATE_DEAD, "x", 8));
    ck_assert_uint_eq(mc_registry_count_state(r, MC__CONTROL__PROCESS_STATE__STATE_ALIVE), 0);
    mc_registry_free(r);
}
END_TEST

static void note_forgotten(void *ctx, mc_reg_entry *e)
{
    /* The oldest gone entries go first: cellapp01.. in order of death. */
    int *n = ctx;
    char want[32];
    snprintf(want, sizeof want, "cellapp%02d", ++*n);
    ck_assert_str_eq(e->name, want);
}

START_TEST(registry_is_bounded)
{
    mc_registry *r = mc_registry_new(DIGEST_A, 3 * MC_US_PER_S);
    mc_reg_entry *e = NULL;
    char why[256], addr[32];
    for (int i = 0; i < MC_REG_MAX_ALIVE; i++) {
        snprintf(addr, sizeof addr, "127.0.0.1:%d", 1000 + i);
        Mc__Control__RegisterRequest q = req_for(MC_ROLE_CELLAPP, addr, DIGEST_A);
        ck_assert_int_eq(mc_registry_add(r, &q, 0, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
    }
    /* One more live process is refused with a reason; a retry of a live one is not. */
    Mc__Control__RegisterRequest q = req_for(MC_ROLE_BASEAPP, "127.0.0.2:1", DIGEST_A);
    ck_assert_int_eq(mc_registry_add(r, &q, 1, NULL, NULL, &e, why, sizeof why), MC_REG_FULL);
    ck_assert_ptr_nonnull(strstr(why, "full"));
    q = req_for(MC_ROLE_CELLAPP, "127.0.0.1:1000", DIGEST_A);
    ck_assert_int_eq(mc_registry_add(r, &q, 1, NULL, NULL, &e, why, sizeof why), MC_REG_REPEATED);
    /* Every one dies in turn; pruning keeps the MC_REG_MAX_GONE most recent deaths. */
    for (uint32_t id = 1; id <= MC_REG_MAX_ALIVE; id++)
        ck_assert_ptr_nonnull(
            mc_registry_mark(r, id, MC__CONTROL__PROCESS_STATE__STATE_DEAD, "x", 10 + id));
    int forgotten = 0;
    ck_assert_uint_eq(mc_registry_prune(r, MC_REG_MAX_GONE, note_forgotten, &forgotten),
                      MC_REG_MAX_ALIVE - MC_REG_MAX_GONE);
    ck_assert_int_eq(forgotten, MC_REG_MAX_ALIVE - MC_REG_MAX_GONE);
    ck_assert_uint_eq(mc_registry_count(r), MC_REG_MAX_GONE);
    ck_assert_ptr_null(mc_registry_find_name(r, "cellapp01"));
    ck_assert_ptr_nonnull(mc_registry_find_name(r, "cellapp1024"));
    ck_assert_uint_eq(mc_registry_prune(r, MC_REG_MAX_GONE, NULL, NULL), 0);
    /* Room again, and names are never reused. */
    q = req_for(MC_ROLE_CELLAPP, "127.0.0.1:1000", DIGEST_A);
    ck_assert_int_eq(mc_registry_add(r, &q, 2000, NULL, NULL, &e, why, sizeof why), MC_REG_OK);
    ck_assert_str_eq(e->name, "cellapp1025");
    mc_registry_free(r);
}
END_TEST

START_TEST(manager_timing_is_checked)
{
    char why[200];
    ck_assert(mc_manager_check_timing(3000, 500, why, sizeof why));
    ck_assert(mc_manager_check_timing(1000, 500, why, sizeof why));
    ck_assert(!mc_manager_check_timing(0, 500, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "deadAfterMs"));
    ck_assert(!mc_manager_check_timing(3000, 1501, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "heartbeatMs"));
    ck_assert(!mc_manager_check_timing(3000, 0, why, sizeof why));
}
END_TEST

static int64_t counter = 5;
static bool called;
static bool do_call(void *ctx, int argc, const char *const *argv, char **result, char *why,
                    size_t whylen)
{
    called = true;
    *result = strdup(argc > 0 ? argv[0] : "none");
    return true;
}

static Mc__Control__WatcherReply *ask(mc_watchers *w, Mc__Control__WatcherOp op, const char *path,
                                      const char *arg)
{
    Mc__Control__WatcherRequest q = MC__CONTROL__WATCHER_REQUEST__INIT;
    q.op = op;
    q.path = (char *)path;
    char *args[1] = {(char *)arg};
    q.n_args = arg ? 1 : 0;
    q.args = args;
    return mc_watcher_service_handle(w, &q);
}

START_TEST(watcher_service_operations)
{
    mc_watchers *w = mc_watchers_new();
    ck_assert_int_eq(mc_watch_add_int(w, "stats/counter", &counter, MC_WATCH_READ_WRITE), 0);
    ck_assert_int_eq(mc_watch_add_const_string(w, "role", "baseapp"), 0);
    ck_assert_int_eq(mc_watch_add_callable(w, "command/echo", do_call, NULL, "echo"), 0);

    Mc__Control__WatcherReply *r = ask(w, MC__CONTROL__WATCHER_OP__WATCHER_LS, "", NULL);
    ck_assert_int_eq(r->status, MC__CONTROL__WATCHER_STATUS__WS_OK);
    ck_assert_uint_eq(r->n_entries, 3);
    ck_assert_str_eq(r->entries[0]->path, "command");
    ck_assert(r->entries[0]->is_directory);
    ck_assert_str_eq(r->entries[1]->path, "role");
    ck_assert_int_eq(r->entries[1]->mode, MC__CONTROL__WATCHER_MODE__WM_READ_ONLY);
    mc_pb_free(r);

    r = ask(w, MC__CONTROL__WATCHER_OP__WATCHER_GET, "", NULL);
    ck_assert_uint_eq(r->n_entries, 3);
    ck_assert_str_eq(r->entries[2]->path, "stats/counter");
    ck_assert_str_eq(r->entries[2]->value, "5");
    ck_assert(!r->entries[0]->has_value); /* the callable */
    mc_pb_free(r);

    r = ask(w, MC__CONTROL__WATCHER_OP__WATCHER_SET, "stats/counter", "-12");
    ck_assert_int_eq(r->status, MC__CONTROL__WATCHER_STATUS__WS_OK);
    ck_assert_str_eq(r->entries[0]->value, "-12");
    ck_assert_int_eq(counter, -12);
    mc_pb_free(r);

    r = ask(w, MC__CONTROL__WATCHER_OP__WATCHER_SET, "stats/counter", "many");
    ck_assert_int_eq(r->status, MC__CONTROL__WATCHER_STATUS__WS_BAD_VALUE);
    ck_assert_int_eq(wt_exit_for_status(r->status), WT_EXIT_BAD_VALUE);
    mc_pb_free(r);
    r = ask(w, MC__CONTROL__WATCHER_OP__WATCHER_SET, "role", "cellapp");
    ck_assert_int_eq(wt_exit_for_status(r->status), WT_EXIT_READ_ONLY);
    mc_pb_free(r);
    r = ask(w, MC__CONTROL__WATCHER_OP__WATCHER_GET, "nope", NULL);
    ck_assert_int_eq(wt_exit_for_status(r->status), WT_EXIT_UNKNOWN_PATH);
    ck_assert_ptr_nonnull(strstr(r->error, "nope"));
    mc_pb_free(r);
    r = ask(w, MC__CONTROL__WATCHER_OP__WATCHER_SET, "stats/counter", NULL);
    ck_assert_int_eq(r->status, MC__CONTROL__WATCHER_STATUS__WS_BAD_REQUEST);
    mc_pb_free(r);

    r = ask(w, MC__CONTROL__WATCHER_OP__WATCHER_CALL, "command/echo", "hello");
    ck_assert_int_eq(r->status, MC__CONTROL__WATCHER_STATUS__WS_OK);
    ck_assert(called);
    ck_assert(r->has_result);
    ck_assert_str_eq(r->result, "hello");
    mc_pb_free(r);
    r = ask(w, MC__CONTROL__WATCHER_OP__WATCHER_CALL, "role", NULL);
    ck_assert_int_eq(wt_exit_for_status(r->status), WT_EXIT_WRONG_KIND);
    mc_pb_free(r);

    /* ls on a leaf describes the leaf. */
    r = ask(w, MC__CONTROL__WATCHER_OP__WATCHER_LS, "role", NULL);
    ck_assert_int_eq(r->status, MC__CONTROL__WATCHER_STATUS__WS_OK);
    ck_assert_uint_eq(r->n_entries, 1);
    ck_assert(!r->entries[0]->has_value);
    mc_pb_free(r);
    mc_watchers_free(w);
}
END_TEST

static int parse(wt_args *a, char *err, size_t errlen, int argc, ...)
{
    static char *argv[16];
    va_list ap;
    va_start(ap, argc);
    argv[0] = "watcher";
    for (int i = 1; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    return wt_args_parse(a, argc, argv, err, errlen);
}

START_TEST(tool_arguments)
{
    wt_args a;
    char err[256];
    ck_assert_int_eq(parse(&a, err, sizeof err, 3, "ls", "all"), 0);
    ck_assert_int_eq(a.command, WT_CMD_LS);
    ck_assert_str_eq(a.path, "");
    ck_assert_int_eq(parse(&a, err, sizeof err, 8, "--manager", "10.0.0.1:5", "--json", "set",
                           "baseapps", "config/logLevel", "debug"),
                     0);
    ck_assert_str_eq(a.manager, "10.0.0.1:5");
    ck_assert(a.json);
    ck_assert_int_eq(a.nargs, 1);
    ck_assert_str_eq(a.args[0], "debug");
    ck_assert_int_eq(parse(&a, err, sizeof err, 6, "call", "baseapp01", "command/shutdown", "x",
                           "y"),
                     0);
    ck_assert_int_eq(a.nargs, 2);
    ck_assert_int_eq(parse(&a, err, sizeof err, 2, "status"), 0);
    ck_assert_int_eq(parse(&a, err, sizeof err, 1), -1);
    ck_assert_int_eq(parse(&a, err, sizeof err, 2, "get"), -1);
    ck_assert_int_eq(parse(&a, err, sizeof err, 4, "set", "all", "x"), -1);
    ck_assert_int_eq(parse(&a, err, sizeof err, 5, "get", "all", "a", "b"), -1);
    ck_assert_int_eq(parse(&a, err, sizeof err, 3, "--timeout=0", "status"), -1);
    ck_assert_int_eq(parse(&a, err, sizeof err, 3, "--manager=nohost", "status"), -1);
    ck_assert_int_eq(parse(&a, err, sizeof err, 3, "--manager=foo:bar", "status"), -1);
    ck_assert_ptr_nonnull(strstr(err, "IP:PORT"));
    ck_assert_int_eq(parse(&a, err, sizeof err, 3, "--manager=127.0.0.1:0", "status"), -1);
    setenv("MC_MANAGER", "localhost:21000", 1);
    ck_assert_int_eq(parse(&a, err, sizeof err, 2, "status"), -1);
    ck_assert_ptr_nonnull(strstr(err, "MC_MANAGER"));
    unsetenv("MC_MANAGER");
    ck_assert_int_eq(parse(&a, err, sizeof err, 3, "--bogus", "status"), -1);
    ck_assert_ptr_nonnull(strstr(err, "--bogus"));
    ck_assert_int_eq(parse(&a, err, sizeof err, 3, "frob", "all"), -1);
}
END_TEST

START_TEST(tool_output_text_and_json)
{
    Mc__Control__WatcherEntry e1 = MC__CONTROL__WATCHER_ENTRY__INIT, e2 = e1, e3 = e1;
    e1.path = "load";
    e1.type = MC__CONTROL__WATCHER_TYPE__WT_FLOAT;
    e1.mode = MC__CONTROL__WATCHER_MODE__WM_READ_ONLY;
    e1.has_value = true;
    e1.value = "0.25";
    e2.path = "config/logLevel";
    e2.type = MC__CONTROL__WATCHER_TYPE__WT_STRING;
    e2.mode = MC__CONTROL__WATCHER_MODE__WM_READ_WRITE;
    e2.has_value = true;
    e2.value = "say \"hi\"\n";
    e3.path = "registered";
    e3.type = MC__CONTROL__WATCHER_TYPE__WT_BOOL;
    e3.has_value = true;
    e3.value = "true";
    Mc__Control__WatcherEntry *entries[] = {&e1, &e2, &e3};
    Mc__Control__WatcherReply reply = MC__CONTROL__WATCHER_REPLY__INIT;
    reply.n_entries = 3;
    reply.entries = entries;
    wt_result results[2] = {{.process = "baseapp01", .reply = &reply},
                            {.process = "baseapp02", .exit_code = WT_EXIT_TIMEOUT}};
    snprintf(results[1].error, sizeof results[1].error, "no answer in time");
    wt_args a;
    char err[256];
    ck_assert_int_eq(parse(&a, err, sizeof err, 3, "get", "baseapps"), 0);

    char *text = NULL, *errs = NULL;
    size_t tn = 0, en = 0;
    FILE *out = open_memstream(&text, &tn), *eout = open_memstream(&errs, &en);
    ck_assert_int_eq(wt_print_results(out, eout, &a, results, 2), WT_EXIT_TIMEOUT);
    fclose(out);
    fclose(eout);
    ck_assert_str_eq(text, "baseapp01  load             0.25\n"
                           "baseapp01  config/logLevel  say \"hi\"\\n\n"
                           "baseapp01  registered       true\n");
    ck_assert_str_eq(errs, "watcher: baseapp02: no answer in time\n");
    free(text);
    free(errs);

    a.json = true;
    out = open_memstream(&text, &tn);
    eout = open_memstream(&errs, &en);
    ck_assert_int_eq(wt_print_results(out, eout, &a, results, 2), WT_EXIT_TIMEOUT);
    fclose(out);
    fclose(eout);
    ck_assert_str_eq(
        text, "{\"command\":\"get\",\"target\":\"baseapps\",\"path\":\"\",\"exit\":7,"
              "\"processes\":[{\"name\":\"baseapp01\",\"ok\":true,\"entries\":["
              "{\"path\":\"load\",\"type\":\"float\",\"mode\":\"ro\",\"value\":0.25},"
              "{\"path\":\"config/logLevel\",\"type\":\"string\",\"mode\":\"rw\","
              "\"value\":\"say \\\"hi\\\"\\n\"},"
              "{\"path\":\"registered\",\"type\":\"bool\",\"mode\":\"-\",\"value\":true}]},"
              "{\"name\":\"baseapp02\",\"ok\":false,\"exit\":7,\"error\":\"no answer in "
              "time\"}]}\n");
    ck_assert_str_eq(errs, "");
    free(text);
    free(errs);
}
END_TEST

START_TEST(tool_json_numbers_are_valid_json)
{
    const struct {
        Mc__Control__WatcherType type;
        const char *value, *want;
    } cases[] = {
        {MC__CONTROL__WATCHER_TYPE__WT_FLOAT, "-1.5e+30", "-1.5e+30"},
        {MC__CONTROL__WATCHER_TYPE__WT_UINT, "0", "0"},
        {MC__CONTROL__WATCHER_TYPE__WT_FLOAT, "nan", "\"nan\""},
        {MC__CONTROL__WATCHER_TYPE__WT_FLOAT, "-inf", "\"-inf\""},
        {MC__CONTROL__WATCHER_TYPE__WT_INT, "-", "\"-\""},
        {MC__CONTROL__WATCHER_TYPE__WT_INT, "1-2", "\"1-2\""},
        {MC__CONTROL__WATCHER_TYPE__WT_FLOAT, "1e", "\"1e\""},
        {MC__CONTROL__WATCHER_TYPE__WT_FLOAT, "01", "\"01\""},
        {MC__CONTROL__WATCHER_TYPE__WT_FLOAT, "1.", "\"1.\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Mc__Control__WatcherEntry e = MC__CONTROL__WATCHER_ENTRY__INIT;
        e.path = "v";
        e.type = cases[i].type;
        e.mode = MC__CONTROL__WATCHER_MODE__WM_READ_ONLY;
        e.has_value = true;
        e.value = (char *)cases[i].value;
        Mc__Control__WatcherEntry *entries[] = {&e};
        Mc__Control__WatcherReply r = MC__CONTROL__WATCHER_REPLY__INIT;
        r.n_entries = 1;
        r.entries = entries;
        wt_result res = {.process = "p", .reply = &r};
        wt_args a = {.json = true, .command = WT_CMD_GET, .target = "p", .path = "v"};
        char *text = NULL;
        size_t tn = 0;
        FILE *out = open_memstream(&text, &tn);
        wt_print_results(out, out, &a, &res, 1);
        fclose(out);
        char want[64];
        snprintf(want, sizeof want, "\"value\":%s}", cases[i].want);
        ck_assert_msg(strstr(text, want), "%s: %s", cases[i].value, text);
        free(text);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cluster_units");
    TCase *tc = tcase_create("units");
    tcase_add_test(tc, registry_names_and_refuses);
    tcase_add_test(tc, registry_gives_a_previous_name_again);
    tcase_add_test(tc, registry_adopts_first_digest_and_expires);
    tcase_add_test(tc, registry_is_bounded);
    tcase_add_test(tc, manager_timing_is_checked);
    tcase_add_test(tc, watcher_service_operations);
    tcase_add_test(tc, tool_arguments);
    tcase_add_test(tc, tool_output_text_and_json);
    tcase_add_test(tc, tool_json_numbers_are_valid_json);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
