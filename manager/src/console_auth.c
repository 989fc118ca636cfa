/* The console's operator login, sessions and CSRF tokens.
 *
 * The password is read once from --consolePasswordFile (mode 0600, first line) and kept
 * only as its BLAKE2b hash; a login hashes what was typed and compares the hashes in
 * constant time. At most --consoleLoginFailures failed logins a minute are checked (beyond,
 * 429 until the minute is over). A login makes a session: a random token in a cookie
 * (HttpOnly, SameSite=Strict, Path=/) and a random CSRF token the page reads from
 * /api/session and sends back in X-CSRF-Token with every POST. Sessions end after
 * --consoleSessionIdleS without a request, at logout, or when more than
 * --consoleSessions exist (the least recently used goes). */
#include "console_internal.h"

#include "common/log.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COOKIE_NAME "mc_console"

static void hash_password(const char *pw, size_t len, uint8_t out[32])
{
    crypto_generichash(out, 32, (const unsigned char *)pw, len,
                       (const unsigned char *)"mc-console-password", 19);
}

int con_auth_init(mc_console *c, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "--consolePasswordFile %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077)) {
        close(fd);
        snprintf(err, errlen,
                 "--consolePasswordFile %s: must be a regular file of mode 0600 (chmod 600)",
                 path);
        return -1;
    }
    char buf[CON_PASSWORD_MAX + 2];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0)
        n = 0;
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    size_t len = strlen(buf);
    if (len < 8 || len > CON_PASSWORD_MAX) {
        sodium_memzero(buf, sizeof buf);
        snprintf(err, errlen, "--consolePasswordFile %s: the password must be 8..%d characters",
                 path, CON_PASSWORD_MAX);
        return -1;
    }
    hash_password(buf, len, c->password_hash);
    sodium_memzero(buf, sizeof buf);
    return 0;
}

static void new_token(char out[CON_TOKEN_HEX + 1])
{
    uint8_t b[CON_TOKEN_HEX / 2];
    randombytes_buf(b, sizeof b);
    sodium_bin2hex(out, CON_TOKEN_HEX + 1, b, sizeof b);
}

bool con_cookie_parse(const char *h, char out[CON_TOKEN_HEX + 1])
{
    if (!h)
        return false;
    const char *p = h;
    size_t nl = strlen(COOKIE_NAME);
    while (*p) {
        while (*p == ' ' || *p == ';')
            p++;
        if (strncmp(p, COOKIE_NAME, nl) == 0 && p[nl] == '=') {
            const char *v = p + nl + 1;
            size_t n = strcspn(v, "; ");
            if (n != CON_TOKEN_HEX)
                return false;
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
        p += strcspn(p, ";");
    }
    return false;
}

/* The cookie's token (64 hex characters) or false. */
static bool cookie_token(struct evhttp_request *req, char out[CON_TOKEN_HEX + 1])
{
    return con_cookie_parse(
        evhttp_find_header(evhttp_request_get_input_headers(req), "Cookie"), out);
}

con_session *con_session_of(mc_console *c, struct evhttp_request *req)
{
    char tok[CON_TOKEN_HEX + 1];
    if (!cookie_token(req, tok))
        return NULL;
    mc_time_us now = mc_clock_now_us();
    con_session *found = NULL;
    for (size_t i = 0; i < c->max_sessions; i++) {
        con_session *s = &c->sessions[i];
        if (!s->used)
            continue;
        if (now - s->last_used > c->session_idle_us) {
            sodium_memzero(s, sizeof *s);
            continue;
        }
        if (sodium_memcmp(s->token, tok, CON_TOKEN_HEX) == 0)
            found = s;
    }
    if (found)
        found->last_used = now;
    return found;
}

bool con_csrf_ok(mc_console *c, const con_session *s, struct evhttp_request *req)
{
    const char *t = evhttp_find_header(evhttp_request_get_input_headers(req), "X-CSRF-Token");
    if (evhttp_request_get_command(req) == EVHTTP_REQ_POST && t && strlen(t) == CON_TOKEN_HEX &&
        sodium_memcmp(t, s->csrf, CON_TOKEN_HEX) == 0)
        return true;
    c->csrf_refused++;
    return false;
}

static const char failed_page[] =
    "<!doctype html><meta charset=utf-8><title>Mercury Cluster console</title>"
    "<p>Wrong password. <a href=\"/\">Try again</a>.</p>\n";

void con_handle_login(mc_console *c, struct evhttp_request *req)
{
    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
        mc_http_error(c->http, req, 405, "POST the password to /login");
        return;
    }
    mc_time_us now = mc_clock_now_us();
    if (now - c->fail_window_start > CON_FAIL_WINDOW_US) {
        c->fail_window_start = now;
        c->fail_in_window = 0;
    }
    if (c->fail_in_window >= c->max_failures) {
        c->login_throttled++;
        mc_http_error(c->http, req, 429, "too many failed logins: wait a minute");
        return;
    }
    char *pw = con_form_value(req, "password");
    if (!pw) {
        mc_http_error(c->http, req, 400, "no password in the form");
        return;
    }
    uint8_t h[32];
    hash_password(pw, strlen(pw), h);
    sodium_memzero(pw, strlen(pw));
    free(pw);
    if (sodium_memcmp(h, c->password_hash, sizeof h) != 0) {
        c->login_failures++;
        c->fail_in_window++;
        MC_WARNING("console: a login with a wrong password (%llu in this minute)",
                   (unsigned long long)c->fail_in_window);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Security-Policy",
                          CON_CSP);
        mc_http_reply(req, 403, "text/html; charset=utf-8", failed_page, sizeof failed_page - 1);
        return;
    }
    /* a free slot, else the least recently used session */
    con_session *slot = &c->sessions[0];
    for (size_t i = 0; i < c->max_sessions; i++) {
        con_session *s = &c->sessions[i];
        if (!s->used || now - s->last_used > c->session_idle_us) {
            slot = s;
            break;
        }
        if (s->last_used < slot->last_used)
            slot = s;
    }
    slot->used = true;
    new_token(slot->token);
    new_token(slot->csrf);
    slot->last_used = now;
    c->logins++;
    MC_INFO("console: operator logged in");
    char cookie[160];
    snprintf(cookie, sizeof cookie, "%s=%s; HttpOnly; SameSite=Strict; Path=/", COOKIE_NAME,
             slot->token);
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    evhttp_add_header(out, "Set-Cookie", cookie);
    evhttp_add_header(out, "Location", "/");
    mc_http_reply(req, 303, "text/plain; charset=utf-8", "", 0);
}

void con_handle_logout(mc_console *c, struct evhttp_request *req)
{
    con_session *s = con_session_of(c, req);
    if (!s) {
        c->unauthorised++;
        mc_http_error(c->http, req, 401, "not logged in");
        return;
    }
    if (!con_csrf_ok(c, s, req)) {
        mc_http_error(c->http, req, 403, "missing or wrong CSRF token");
        return;
    }
    sodium_memzero(s, sizeof *s);
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    evhttp_add_header(out, "Set-Cookie",
                      COOKIE_NAME "=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    mc_http_reply(req, 200, "application/json", "{}", 2);
}
