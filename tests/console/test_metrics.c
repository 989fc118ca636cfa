/* Metrics and the console's safety, through the real path (no browser): a cluster launched
 * with deploy/cluster, each process's /metrics read over TCP and checked with
 * `promtool check metrics`; the Prometheus targets file and the cluster file; bad HTTP
 * requests answered 4xx without disturbing the process; the console's login (wrong password,
 * cookie flags), CSRF token and Content-Security-Policy, a watcher set through the API read
 * back with the watcher tool. And on a manager of its own: the HTTP connection limit (a
 * connection beyond waits until one closes) and the request size limit. */
#include "console_cluster.h"
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"

static char answer[1 << 20];
static char all_metrics[4 << 20]; /* every role's, for the dashboard's names */

/* promtool check metrics on the /metrics of addr; the text stays in answer. */
static void check_promtool(const char *addr, const char *role)
{
    int code = cc_get(addr, "/metrics", NULL, answer, sizeof answer);
    ck_assert_msg(code == 200, "%s /metrics: %d", role, code);
    ck_assert_msg(strstr(answer, "Content-Type: text/plain; version=0.0.4"), "%.300s", answer);
    char path[700];
    snprintf(path, sizeof path, "%s/metrics-%s.txt", h_tmpdir(), role);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(cc_body(answer), f);
    fclose(f);
    char cmd[900], out[8192];
    snprintf(cmd, sizeof cmd, "promtool check metrics < '%s'", path);
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    int rc = h_run(argv, out, sizeof out, 60000);
    ck_assert_msg(rc == 0, "promtool check metrics on the %s's (%s) failed (%d):\n%s", role, path,
                  rc, out);
    char label[64];
    snprintf(label, sizeof label, "role=\"%s\"", role);
    /* refetch: the body of `answer` is what the asserts below look at */
    cc_get(addr, "/metrics", NULL, answer, sizeof answer);
    strncat(all_metrics, cc_body(answer), sizeof all_metrics - strlen(all_metrics) - 1);
    ck_assert_msg(strstr(answer, label), "%s: no %s label", role, label);
    ck_assert_msg(strstr(answer, "# TYPE mc_process_uptime_seconds gauge"), "%s", role);
    ck_assert_msg(strstr(answer, "# TYPE mc_internal_sent_bytes_total counter"), "%s", role);
    ck_assert_msg(strstr(answer, "mc_watcher_value{"), "%s", role);
}

static bool mode_0600(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && (st.st_mode & 0777) == 0600;
}

/* The value of the cookie mc_console in a Set-Cookie header, or false. */
static bool session_cookie(const char *ans, char *out, size_t outlen)
{
    const char *p = strstr(ans, "Set-Cookie: mc_console=");
    if (!p)
        return false;
    p += strlen("Set-Cookie: mc_console=");
    size_t n = strcspn(p, ";\r");
    if (n == 0 || n >= outlen)
        return false;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

START_TEST(every_role_serves_clean_metrics_and_the_console_is_guarded)
{
    cc_cluster c;
    cc_up(&c, "metrics");
    char buf[700], text[8192];

    /* the targets file lists every process; the cluster file names the console */
    FILE *f = fopen(cc_run_file(&c, "prometheus-targets.json", buf, sizeof buf), "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    const char *addrs[] = {c.manager, c.loginapp, c.baseapp, c.cellapp};
    for (int i = 0; i < 4; i++) {
        char t[96];
        snprintf(t, sizeof t, "\"%s\"", addrs[i]);
        ck_assert_msg(strstr(text, t), "targets file lacks %s:\n%s", t, text);
    }
    char want[128];
    snprintf(want, sizeof want, "console http://%s/", c.manager);
    ck_assert(h_file_contains(cc_run_file(&c, "cluster.conf", buf, sizeof buf), want));
    ck_assert(mode_0600(cc_run_file(&c, "console.password", buf, sizeof buf)));

    /* every role's metrics pass promtool, with the names metrics.md lists */
    check_promtool(c.manager, "manager");
    ck_assert(strstr(answer, "mc_registry_alive_processes{"));
    check_promtool(c.loginapp, "loginapp");
    ck_assert(strstr(answer, "# TYPE mc_login_duration_seconds histogram"));
    check_promtool(c.baseapp, "baseapp");
    ck_assert(strstr(answer, "mc_clients_connected{"));
    ck_assert(strstr(answer, "mc_client_sent_bytes_total{"));
    check_promtool(c.cellapp, "cellapp");
    ck_assert(strstr(answer, "mc_cellapp_tick_seconds_bucket{"));
    ck_assert(strstr(answer, "le=\"+Inf\""));

    /* Prometheus takes the targets file (promtool check config reads file_sd files) */
    char cfg[700], cmd[2048], out0[8192];
    snprintf(cfg, sizeof cfg, "%s/prometheus.yml", h_tmpdir());
    f = fopen(cfg, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "scrape_configs:\n  - job_name: mercury-cluster\n    file_sd_configs:\n"
               "      - files: ['%s']\n",
            cc_run_file(&c, "prometheus-targets.json", buf, sizeof buf));
    fclose(f);
    snprintf(cmd, sizeof cmd, "promtool check config '%s'", cfg);
    char *pargv[] = {"/bin/sh", "-c", cmd, NULL};
    int prc = h_run(pargv, out0, sizeof out0, 60000);
    ck_assert_msg(prc == 0 && strstr(out0, "SUCCESS"), "promtool check config (%d):\n%s", prc,
                  out0);
    /* the Grafana dashboard's queries parse, and use only metrics the processes serve */
    char rules[700];
    snprintf(rules, sizeof rules, "%s/dashboard-rules.yml", h_tmpdir());
    snprintf(cmd, sizeof cmd,
             "python3 '%s/tests/console/dashboard_rules.py' '%s/deploy/grafana/mercury-cluster.json'"
             " '%s' && promtool check rules '%s' >/dev/null",
             h_source_dir(), h_source_dir(), rules, rules);
    prc = h_run(pargv, out0, sizeof out0, 60000);
    ck_assert_msg(prc == 0, "the dashboard's queries (%d):\n%s", prc, out0);
    int names = 0;
    for (char *line = strtok(out0, "\n"); line; line = strtok(NULL, "\n")) {
        char want_name[160];
        snprintf(want_name, sizeof want_name, "\n%s{", line);
        ck_assert_msg(strstr(all_metrics, want_name), "the dashboard uses %s, which no process serves",
                      line);
        names++;
    }
    ck_assert_int_ge(names, 8);

    /* bad requests get a 4xx; the process serves on */
    const char garbage[] = "HELLO THERE\r\n\r\n";
    int code = cc_http(c.manager, garbage, sizeof garbage - 1, answer, sizeof answer, 20000);
    ck_assert_msg(code >= 400 && code < 500, "garbage: %d", code);
    size_t big = 40000;
    char *huge = malloc(big + 200);
    ck_assert_ptr_nonnull(huge);
    int k = snprintf(huge, 200, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(huge + k, 'a', big);
    memcpy(huge + k + big, "\r\n\r\n", 4);
    code = cc_http(c.manager, huge, (size_t)k + big + 4, answer, sizeof answer, 20000);
    free(huge);
    ck_assert_msg(code >= 400 && code < 500, "oversized headers: %d", code);
    ck_assert_int_eq(cc_get(c.manager, "/no-such-page", NULL, answer, sizeof answer), 404);
    const char put[] = "PUT /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
    code = cc_http(c.manager, put, sizeof put - 1, answer, sizeof answer, 20000);
    ck_assert_msg(code == 405, "PUT: %d", code);
    ck_assert_int_eq(cc_get(c.manager, "/metrics", NULL, answer, sizeof answer), 200);
    ck_assert_msg(strstr(answer, "mc_http_refused_total{"), "no refusals counted");

    /* the console: login page without a session; the API refuses */
    ck_assert_int_eq(cc_get(c.manager, "/", NULL, answer, sizeof answer), 200);
    ck_assert(strstr(answer, "name=\"password\""));
    ck_assert(strstr(answer, "Content-Security-Policy: default-src 'none'; script-src 'self'"));
    ck_assert(strstr(answer, "X-Frame-Options: DENY"));
    ck_assert_int_eq(cc_get(c.manager, "/api/processes", NULL, answer, sizeof answer), 401);
    ck_assert_int_eq(cc_post(c.manager, "/login", NULL, NULL, "password=wrong-password", answer,
                             sizeof answer),
                     403);
    ck_assert_int_eq(cc_get(c.manager, "/api/processes", "00", answer, sizeof answer), 401);

    /* the right password: a session cookie, HttpOnly and SameSite=Strict */
    f = fopen(cc_run_file(&c, "console.password", buf, sizeof buf), "r");
    ck_assert_ptr_nonnull(f);
    char pw[128];
    ck_assert_ptr_nonnull(fgets(pw, sizeof pw, f));
    fclose(f);
    pw[strcspn(pw, "\r\n")] = '\0';
    char form[256];
    snprintf(form, sizeof form, "password=%s", pw); /* base64url: no escaping needed */
    ck_assert_int_eq(cc_post(c.manager, "/login", NULL, NULL, form, answer, sizeof answer), 303);
    ck_assert_msg(strstr(answer, "HttpOnly; SameSite=Strict; Path=/"), "%s", answer);
    char cookie[128];
    ck_assert(session_cookie(answer, cookie, sizeof cookie));
    ck_assert_int_eq(cc_get(c.manager, "/api/processes", cookie, answer, sizeof answer), 200);
    ck_assert_msg(strstr(answer, "\"baseapp01\"") && strstr(answer, "\"cellapp01\"") &&
                      strstr(answer, "\"loginapp01\""),
                  "%s", cc_body(answer));
    ck_assert_int_eq(cc_get(c.manager, "/api/session", cookie, answer, sizeof answer), 200);
    const char *cs = strstr(answer, "\"csrf\":\"");
    ck_assert_ptr_nonnull(cs);
    char csrf[80];
    snprintf(csrf, sizeof csrf, "%.64s", cs + 8);

    /* a change without the token is refused; with it, it is made (read back with watcher) */
    const char *set = "process=cellapp01&path=aoi%2FsliceMs&value=33";
    ck_assert_int_eq(cc_post(c.manager, "/api/set", cookie, NULL, set, answer, sizeof answer), 403);
    ck_assert_int_eq(cc_post(c.manager, "/api/set", cookie, "0123", set, answer, sizeof answer),
                     403);
    ck_assert_int_eq(cc_post(c.manager, "/api/set", NULL, csrf, set, answer, sizeof answer), 401);
    char out[4096];
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "get", "cellapp01", "aoi/sliceMs", NULL),
                     0);
    ck_assert_msg(!strstr(out, " 33"), "set without a token changed it: %s", out);
    ck_assert_int_eq(cc_post(c.manager, "/api/set", cookie, csrf, set, answer, sizeof answer), 200);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "get", "cellapp01", "aoi/sliceMs", NULL),
                     0);
    ck_assert_msg(strstr(out, "33"), "%s", out);
    /* bad input: 4xx with a reason */
    ck_assert_int_eq(cc_post(c.manager, "/api/set", cookie, csrf,
                             "process=cellapp01&path=aoi%2FsliceMs&value=5000", answer,
                             sizeof answer),
                     400);
    ck_assert_int_eq(cc_post(c.manager, "/api/set", cookie, csrf,
                             "process=nobody01&path=x&value=1", answer, sizeof answer),
                     404);
    ck_assert_int_eq(cc_get(c.manager, "/api/ls?process=cellapp01&path=no%2Fsuch", cookie,
                            answer, sizeof answer),
                     404);
    ck_assert_int_eq(cc_get(c.manager, "/api/entity?id=0", cookie, answer, sizeof answer), 400);
    ck_assert_int_eq(cc_get(c.manager, "/api/set?process=cellapp01", cookie, answer,
                            sizeof answer),
                     405);
    /* a listing of another process carries values; the plots answer */
    ck_assert_int_eq(cc_get(c.manager, "/api/ls?process=baseapp01&path=clients", cookie, answer,
                            sizeof answer),
                     200);
    ck_assert_msg(strstr(answer, "{\"path\":\"connected\",\"dir\":false,\"type\":\"uint\","
                                 "\"mode\":\"ro\",\"value\":\"0\"}"),
                  "%s", cc_body(answer));
    /* the plots: a sample every 2 s (the first once the first round of answers is in) */
    bool sampled = false;
    for (int i = 0; i < 100 && !sampled; i++) {
        ck_assert_int_eq(cc_get(c.manager, "/api/series", cookie, answer, sizeof answer), 200);
        sampled = strstr(answer, "\"load\":{\"manager\":") != NULL;
        if (!sampled)
            h_sleep_ms(200);
    }
    ck_assert_msg(sampled, "no sample in 20 s: %s", cc_body(answer));
    /* a callable called through the console: a space named "world" (it registers that global
     * name), then the entity page finds it by name, with its base and its cell */
    ck_assert_int_eq(cc_post(c.manager, "/api/call", cookie, NULL,
                             "process=baseapp01&path=command%2FcreateBaseAnywhere&args=Space",
                             answer, sizeof answer),
                     403);
    ck_assert_int_eq(cc_post(c.manager, "/api/call", cookie, csrf,
                             "process=baseapp01&path=command%2FcreateBaseAnywhere&args=Space+"
                             "%7B%22spaceName%22%3A%22world%22%7D",
                             answer, sizeof answer),
                     200);
    ck_assert_msg(strstr(answer, "\"result\":"), "%s", cc_body(answer));
    bool found = false;
    for (int i = 0; i < 100 && !found; i++) {
        int ec = cc_get(c.manager, "/api/entity?name=world", cookie, answer, sizeof answer);
        found = ec == 200 && strstr(answer, "\"role\":\"cellapp\"");
        if (!found)
            h_sleep_ms(200);
    }
    ck_assert_msg(found, "the space by its global name: %s", answer);
    ck_assert_msg(strstr(answer, "\"globalName\":\"world\",\"type\":\"Space\"") &&
                      strstr(answer, "\"role\":\"baseapp\"") && strstr(answer, "\"methods\":["),
                  "%s", cc_body(answer));
    ck_assert_int_eq(cc_get(c.manager, "/api/entity?name=nowhere", cookie, answer, sizeof answer),
                     404);

    /* the console's refusals are counted */
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "get", "manager", "console", NULL), 0);
    ck_assert_msg(strstr(out, "console/csrfRefused") && strstr(out, "console/loginFailures"), "%s",
                  out);
    cc_down(&c);
}
END_TEST

/* A connection to addr that stays open (NULL-terminated request text sent, if any). */
static int open_conn(const char *addr, const char *req)
{
    int port = atoi(strrchr(addr, ':') + 1);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    if (req)
        ck_assert_int_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    return fd;
}

static bool readable_within(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, ms) > 0;
}

START_TEST(connections_and_request_size_are_bounded)
{
    char mgr[64] = "", http[64], log[700];
    int port = h_free_port(true);
    snprintf(http, sizeof http, "127.0.0.1:%d", port);
    snprintf(log, sizeof log, "%s/manager.log", h_tmpdir());
    pid_t pid = h_start_manager(mgr, sizeof mgr, log, "--metrics", http, "--httpMaxConnections",
                                "2", "--httpMaxRequestBytes", "1024", NULL);
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(cc_get(http, "/metrics", NULL, answer, sizeof answer), 200);
    int a = open_conn(http, NULL), b = open_conn(http, NULL);
    int third = open_conn(http, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    /* two connections are open: the third waits (in the backlog), unanswered */
    ck_assert_msg(!readable_within(third, 800), "a connection beyond the limit was served");
    close(a);
    ck_assert_msg(readable_within(third, 10000), "the waiting connection was never served");
    char got[64] = "";
    ck_assert_int_gt(recv(third, got, sizeof got - 1, 0), 0);
    ck_assert_msg(strncmp(got, "HTTP/1.1 200", 12) == 0, "%s", got);
    close(third);
    close(b);
    char out[4096];
    ck_assert_int_eq(h_watcher(out, sizeof out, mgr, "get", "manager", "http/atConnectionLimit",
                               NULL),
                     0);
    const char *sp = strrchr(out, ' ');
    ck_assert_msg(strstr(out, "atConnectionLimit") && sp && atoi(sp + 1) >= 1, "%s", out);
    /* a body beyond --httpMaxRequestBytes: refused */
    char body[3000];
    memset(body, 'x', sizeof body - 1);
    body[sizeof body - 1] = '\0';
    int code = cc_post(http, "/login", NULL, NULL, body, answer, sizeof answer);
    ck_assert_msg(code == 413 || code == 400, "oversized body: %d", code);
    ck_assert_int_eq(cc_get(http, "/metrics", NULL, answer, sizeof answer), 200);
    /* no console without --consolePasswordFile */
    ck_assert_int_eq(cc_get(http, "/", NULL, answer, sizeof answer), 404);
    h_kill(pid, SIGTERM);
    ck_assert_int_eq(h_wait_exit(pid, 15000), 0);
}
END_TEST

/* A password file (mode given) in the test's dir. */
static const char *password_file(const char *name, const char *pw, mode_t mode, char *buf,
                                 size_t buflen)
{
    snprintf(buf, buflen, "%s/%s", h_tmpdir(), name);
    FILE *f = fopen(buf, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s\n", pw);
    fclose(f);
    ck_assert_int_eq(chmod(buf, mode), 0);
    return buf;
}

/* The manager binary with these options must refuse to start (exit 1) saying why. */
static void refuses(const char *why, ...)
{
    char bin[512], internal[64], res[600];
    snprintf(internal, sizeof internal, "--internal=127.0.0.1:%d", h_free_port(true));
    snprintf(res, sizeof res, "--res=%s/defs", h_source_dir());
    char *argv[16] = {(char *)h_bin("manager", bin, sizeof bin), internal, res};
    int n = 3;
    va_list ap;
    va_start(ap, why);
    for (const char *a; n < 15 && (a = va_arg(ap, const char *));)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    char out[4096];
    int rc = h_run(argv, out, sizeof out, 30000);
    ck_assert_msg(rc == 1 && strstr(out, why), "expected exit 1 with '%s', got %d: %s", why, rc,
                  out);
}

START_TEST(console_limits_and_idle_connections)
{
    char pw[700], loose[700];
    password_file("console.password", "operator-password-1", 0600, pw, sizeof pw);
    password_file("loose.password", "operator-password-1", 0644, loose, sizeof loose);
    char http[64], mgr[64] = "", log[700];
    snprintf(http, sizeof http, "127.0.0.1:%d", h_free_port(true));
    /* a password others may read, a console without an HTTP port, a limit out of range */
    refuses("mode 0600", "--metrics", http, "--consolePasswordFile", loose, NULL);
    refuses("needs --metrics", "--consolePasswordFile", pw, NULL);
    refuses("--consoleSessions: 0 is outside", "--metrics", http, "--consolePasswordFile", pw,
            "--consoleSessions", "0", NULL);
    refuses("--httpMaxConnections: 0 is outside", "--metrics", http, "--httpMaxConnections", "0",
            NULL);

    snprintf(log, sizeof log, "%s/console-manager.log", h_tmpdir());
    pid_t pid = h_start_manager(mgr, sizeof mgr, log, "--metrics", http, "--consolePasswordFile",
                                pw, "--consoleLoginFailures", "2", "--consoleSessions", "1",
                                "--consoleSessionIdleS", "2", "--httpTimeoutS", "2", NULL);
    ck_assert_int_gt(pid, 0);

    /* an idle connection is closed after --httpTimeoutS */
    int idle = open_conn(http, NULL);
    ck_assert_msg(readable_within(idle, 15000), "an idle connection was never closed");
    char got[16];
    ck_assert_int_eq(recv(idle, got, sizeof got, 0), 0);
    close(idle);

    /* --consoleSessions 1: a second login ends the first session */
    const char *good = "password=operator-password-1";
    char c1[128], c2[128];
    ck_assert_int_eq(cc_post(http, "/login", NULL, NULL, good, answer, sizeof answer), 303);
    ck_assert(session_cookie(answer, c1, sizeof c1));
    ck_assert_int_eq(cc_get(http, "/api/session", c1, answer, sizeof answer), 200);
    ck_assert_int_eq(cc_post(http, "/login", NULL, NULL, good, answer, sizeof answer), 303);
    ck_assert(session_cookie(answer, c2, sizeof c2));
    ck_assert_int_eq(cc_get(http, "/api/session", c1, answer, sizeof answer), 401);
    ck_assert_int_eq(cc_get(http, "/api/session", c2, answer, sizeof answer), 200);
    /* --consoleSessionIdleS 2: unused for longer, the session ends */
    /* (a look refreshes a live session, so each look comes more than 2 s after the last) */
    bool ended = false;
    for (int i = 0; i < 5 && !ended; i++) {
        h_sleep_ms(2600);
        ended = cc_get(http, "/api/session", c2, answer, sizeof answer) == 401;
    }
    ck_assert_msg(ended, "an idle session did not end");

    /* a login form without the field, a GET of /login: 400, 405 (neither is a failure) */
    ck_assert_int_eq(cc_post(http, "/login", NULL, NULL, "user=x", answer, sizeof answer), 400);
    ck_assert_int_eq(cc_get(http, "/login", NULL, answer, sizeof answer), 405);
    /* --consoleLoginFailures 2: the third login in the minute is refused, even a good one */
    const char *bad = "password=operator-password-2";
    ck_assert_int_eq(cc_post(http, "/login", NULL, NULL, bad, answer, sizeof answer), 403);
    ck_assert_int_eq(cc_post(http, "/login", NULL, NULL, bad, answer, sizeof answer), 403);
    ck_assert_int_eq(cc_post(http, "/login", NULL, NULL, bad, answer, sizeof answer), 429);
    ck_assert_int_eq(cc_post(http, "/login", NULL, NULL, good, answer, sizeof answer), 429);
    char out[4096];
    ck_assert_int_eq(h_watcher(out, sizeof out, mgr, "get", "manager", "console/loginsThrottled",
                               NULL),
                     0);
    const char *sp = strrchr(out, ' ');
    ck_assert_msg(sp && atoi(sp + 1) == 2, "%s", out);
    h_kill(pid, SIGTERM);
    ck_assert_int_eq(h_wait_exit(pid, 15000), 0);
}
END_TEST

static Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("metrics");
    tcase_set_timeout(tc, 280);
    tcase_add_test(tc, every_role_serves_clean_metrics_and_the_console_is_guarded);
    tcase_add_test(tc, connections_and_request_size_are_bounded);
    tcase_add_test(tc, console_limits_and_idle_connections);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(metrics_suite)
