/* A cluster for the metrics and console tests, and a small HTTP client (console_cluster.h). */
#include "console_cluster.h"
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int cc_cmd(cc_cluster *c, const char *verb, const char *arg, char *out, size_t outlen)
{
    char run_env[700], build_env[700];
    snprintf(run_env, sizeof run_env, "MC_RUN_DIR=%s", c->run);
    snprintf(build_env, sizeof build_env, "MC_BUILD_DIR=%s", c->build);
    char *argv[] = {"/usr/bin/env", run_env,          build_env,     "MC_DOWN_TIMEOUT=4",
                    "MC_TEST=1",    "bash",           c->script,     (char *)verb,
                    (char *)arg,    NULL};
    return h_run(argv, out, outlen, 120000);
}

const char *cc_run_file(const cc_cluster *c, const char *name, char *buf, size_t buflen)
{
    snprintf(buf, buflen, "%s/%s", c->run, name);
    return buf;
}

/* Track every pid in the run dir's state file so a failing test still kills them. */
static void track_state(cc_cluster *c)
{
    char path[700];
    FILE *f = fopen(cc_run_file(c, "cluster.state", path, sizeof path), "r");
    if (!f)
        return;
    char slot[64], host[64];
    int pid;
    while (fscanf(f, "%63s %63s %d", slot, host, &pid) == 3)
        h_track(pid);
    fclose(f);
}

void cc_up(cc_cluster *c, const char *name)
{
    memset(c, 0, sizeof *c);
    snprintf(c->script, sizeof c->script, "%s/deploy/cluster", h_source_dir());
    snprintf(c->run, sizeof c->run, "%s/%s-run", h_tmpdir(), name);
    snprintf(c->layout, sizeof c->layout, "%s/%s.layout", h_tmpdir(), name);
    const char *bin = getenv("MC_BIN_DIR");
    snprintf(c->build, sizeof c->build, "%s/..", bin ? bin : "build/bin");
    int ports[6];
    for (int i = 0; i < 6; i++) {
        ports[i] = h_free_port(true);
        ck_assert_int_gt(ports[i], 0);
    }
    c->redis_port = ports[0];
    snprintf(c->manager, sizeof c->manager, "127.0.0.1:%d", ports[1]);
    snprintf(c->loginapp, sizeof c->loginapp, "127.0.0.1:%d", ports[2]);
    snprintf(c->login_ext, sizeof c->login_ext, "127.0.0.1:%d", ports[3]);
    snprintf(c->baseapp, sizeof c->baseapp, "127.0.0.1:%d", ports[4]);
    snprintf(c->cellapp, sizeof c->cellapp, "127.0.0.1:%d", ports[5]);
    int ext = h_free_port(true);
    FILE *f = fopen(c->layout, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "redis 127.0.0.1 %d\nmanager 127.0.0.1 %d\nloginapp 127.0.0.1 %d %d\n"
               "baseapp 127.0.0.1 %d %d\ncellapp 127.0.0.1 %d\nset res %s/defs\n",
            ports[0], ports[1], ports[2], ports[3], ports[4], ext, ports[5], h_source_dir());
    fclose(f);
    char out[16384];
    int rc = cc_cmd(c, "up", c->layout, out, sizeof out);
    track_state(c);
    ck_assert_msg(rc == 0, "deploy/cluster up failed (%d):\n%s", rc, out);
    char secret[700];
    ck_assert_int_eq(setenv("MC_SECRET_FILE", cc_run_file(c, "cluster.secret", secret,
                                                          sizeof secret), 1), 0);
}

void cc_down(cc_cluster *c)
{
    char out[8192];
    int rc = cc_cmd(c, "down", NULL, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "cluster: down"), "down (%d): %s", rc, out);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Is the answer in buf[0..n) complete (headers and Content-Length bytes of body)? */
static bool complete(const char *buf, size_t n)
{
    const char *end = strstr(buf, "\r\n\r\n");
    if (!end)
        return false;
    const char *cl = strcasestr(buf, "\r\nContent-Length:");
    if (!cl || cl > end)
        return false;
    long want = strtol(cl + 17, NULL, 10);
    return (long)(n - (size_t)(end + 4 - buf)) >= want;
}

int cc_http(const char *addr, const char *req, size_t len, char *out, size_t outlen,
            int timeout_ms)
{
    out[0] = '\0';
    char ip[64];
    snprintf(ip, sizeof ip, "%s", addr);
    char *colon = strrchr(ip, ':');
    if (!colon)
        return -1;
    *colon = '\0';
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    inet_pton(AF_INET, ip, &sin.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    long deadline = now_ms() + timeout_ms;
    if (connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
        close(fd);
        return -1;
    }
    size_t sent = 0;
    while (sent < len) {
        ssize_t k = send(fd, req + sent, len - sent, MSG_NOSIGNAL);
        if (k <= 0)
            break; /* the server may answer (4xx) and close before reading it all */
        sent += (size_t)k;
    }
    size_t used = 0;
    while (used + 1 < outlen) {
        long left = deadline - now_ms();
        if (left <= 0)
            break;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)left) <= 0)
            break;
        ssize_t k = recv(fd, out + used, outlen - 1 - used, 0);
        if (k <= 0)
            break;
        used += (size_t)k;
        out[used] = '\0';
        if (complete(out, used))
            break;
    }
    close(fd);
    int code = -1;
    if (strncmp(out, "HTTP/1.", 7) == 0)
        code = atoi(out + 9);
    return code;
}

int cc_get(const char *addr, const char *path, const char *cookie, char *out, size_t outlen)
{
    char req[2048];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\n%s%s%sConnection: close\r\n\r\n",
                     path, addr, cookie ? "Cookie: mc_console=" : "", cookie ? cookie : "",
                     cookie ? "\r\n" : "");
    return cc_http(addr, req, (size_t)n, out, outlen, 20000);
}

int cc_post(const char *addr, const char *path, const char *cookie, const char *csrf,
            const char *body, char *out, size_t outlen)
{
    size_t blen = strlen(body);
    char *req = malloc(blen + 2048);
    ck_assert_ptr_nonnull(req);
    int n = snprintf(req, 2048,
                     "POST %s HTTP/1.1\r\nHost: %s\r\n%s%s%s%s%s%s"
                     "Content-Type: application/x-www-form-urlencoded\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     path, addr, cookie ? "Cookie: mc_console=" : "", cookie ? cookie : "",
                     cookie ? "\r\n" : "", csrf ? "X-CSRF-Token: " : "", csrf ? csrf : "",
                     csrf ? "\r\n" : "", blen);
    memcpy(req + n, body, blen);
    int code = cc_http(addr, req, (size_t)n + blen, out, outlen, 20000);
    free(req);
    return code;
}

const char *cc_body(const char *answer)
{
    const char *p = strstr(answer, "\r\n\r\n");
    return p ? p + 4 : "";
}
