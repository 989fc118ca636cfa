/* JSON output and form/query input helpers for the console. */
#include "console_internal.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void con_json_str(struct evbuffer *out, const char *s)
{
    evbuffer_add(out, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': evbuffer_add(out, "\\\"", 2); break;
        case '\\': evbuffer_add(out, "\\\\", 2); break;
        case '\n': evbuffer_add(out, "\\n", 2); break;
        case '\r': evbuffer_add(out, "\\r", 2); break;
        case '\t': evbuffer_add(out, "\\t", 2); break;
        case '<': evbuffer_add(out, "\\u003c", 6); break; /* never markup, whatever the page */
        case '>': evbuffer_add(out, "\\u003e", 6); break;
        case '&': evbuffer_add(out, "\\u0026", 6); break;
        default:
            if (*p < 0x20)
                evbuffer_add_printf(out, "\\u%04x", *p);
            else
                evbuffer_add(out, p, 1);
        }
    }
    evbuffer_add(out, "\"", 1);
}

void con_json_num(struct evbuffer *out, double v)
{
    if (isnan(v) || isinf(v) || v < 0)
        evbuffer_add(out, "null", 4);
    else
        evbuffer_add_printf(out, "%.6g", v);
}

char *con_query_lookup(const char *query, const char *key)
{
    struct evkeyvalq q;
    if (evhttp_parse_query_str(query, &q) != 0) {
        evhttp_clear_headers(&q);
        return NULL;
    }
    const char *v = evhttp_find_header(&q, key);
    char *copy = v ? strdup(v) : NULL;
    evhttp_clear_headers(&q);
    return copy;
}

char *con_form_value(struct evhttp_request *req, const char *key)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    char *body = malloc(n + 1);
    if (!body)
        return NULL;
    evbuffer_copyout(in, body, n);
    body[n] = '\0';
    if (strlen(body) != n) { /* a NUL inside */
        free(body);
        return NULL;
    }
    char *v = con_query_lookup(body, key);
    free(body);
    return v;
}

char *con_query_value(struct evhttp_request *req, const char *key)
{
    const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
    const char *q = u ? evhttp_uri_get_query(u) : NULL;
    return q ? con_query_lookup(q, key) : NULL;
}

void con_reply_json(struct evhttp_request *req, struct evbuffer *out)
{
    mc_http_reply_buffer(req, 200, "application/json; charset=utf-8", out);
}
