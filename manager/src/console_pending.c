/* The console's requests that wait for other processes (answered when they reply, or never
 * when the client or the console is gone first), and the checks every API call makes. */
#include "console_internal.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <stdlib.h>
#include <string.h>

/* --- requests waiting for processes ---------------------------------------------------- */

static void on_conn_close(struct evhttp_connection *conn, void *arg)
{
    (void)conn;
    con_pending *p = arg;
    p->req = NULL;
}

con_pending *con_pending_new(mc_console *c, struct evhttp_request *req, int op)
{
    if (c->npending >= CON_PENDING_MAX) {
        c->pending_refused++;
        mc_http_error(c->http, req, 503, "too many console requests waiting: try again");
        return NULL;
    }
    con_pending *p = calloc(1, sizeof *p);
    if (!p) {
        mc_http_error(c->http, req, 500, "out of memory");
        return NULL;
    }
    p->c = c;
    p->req = req;
    p->op = op;
    p->next = c->pending;
    if (c->pending)
        c->pending->prev = p;
    c->pending = p;
    c->npending++;
    evhttp_connection_set_closecb(evhttp_request_get_connection(req), on_conn_close, p);
    return p;
}

/* The request to answer now (NULL when the client or the console is gone). */
struct evhttp_request *con_pending_take(con_pending *p)
{
    struct evhttp_request *req = p->req;
    if (req && p->c)
        evhttp_connection_set_closecb(evhttp_request_get_connection(req), NULL, NULL);
    p->req = NULL;
    return p->c ? req : NULL;
}

void con_pending_free(con_pending *p)
{
    mc_console *c = p->c;
    if (c) {
        if (p->prev)
            p->prev->next = p->next;
        else
            c->pending = p->next;
        if (p->next)
            p->next->prev = p->prev;
        c->npending--;
    }
    if (p->parts)
        evbuffer_free(p->parts);
    for (size_t i = 0; i < p->nlisted; i++)
        free(p->listed[i].value);
    free(p->listed);
    free(p);
}

void con_api_free(mc_console *c)
{
    for (con_pending *p = c->pending, *n; p; p = n) {
        n = p->next;
        if (p->req)
            evhttp_connection_set_closecb(evhttp_request_get_connection(p->req), NULL, NULL);
        p->req = NULL;
        p->c = NULL; /* freed when its replies come (the server cancels them) */
        p->prev = p->next = NULL;
    }
    c->pending = NULL;
    c->npending = 0;
}

/* --- checks --------------------------------------------------------------------------- */

bool con_text_ok(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n]; n++)
        if ((unsigned char)s[n] < 0x20 || n >= max)
            return false;
    return true;
}

/* The session, or a 401 (and NULL). POSTs also need the CSRF token (else 403). */
con_session *con_authorised(mc_console *c, struct evhttp_request *req, bool post)
{
    c->api_requests++;
    con_session *s = con_session_of(c, req);
    if (!s) {
        c->unauthorised++;
        mc_http_error(c->http, req, 401, "log in first");
        return NULL;
    }
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    if (post) {
        if (m != EVHTTP_REQ_POST) {
            mc_http_error(c->http, req, 405, "POST only");
            return NULL;
        }
        if (!con_csrf_ok(c, s, req)) {
            mc_http_error(c->http, req, 403, "missing or wrong CSRF token");
            return NULL;
        }
    } else if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD) {
        mc_http_error(c->http, req, 405, "GET only");
        return NULL;
    }
    return s;
}
