/* Off-channel requests from the watcher tool. */
#include "client.h"
#include "mercury/mercury.h"
#include "server/control.h"
#include "server/pb.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wt_client {
    struct event_base *base;
    struct event *deadline_ev;
    mc_nub *nub;
    unsigned timeout_ms;
    size_t outstanding;
};

typedef struct {
    wt_client *c;
    wt_request *req;
} pending;

wt_client *wt_client_new(unsigned timeout_ms, const char *secret_file, char *err,
                         size_t errlen)
{
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    secret_file = mc_auth_secret_file(secret_file);
    if (!secret_file) {
        snprintf(err, errlen,
                 "no cluster secret: pass --secretFile, set MC_SECRET_FILE, or use a cluster "
                 "file with a secretFile line");
        return NULL;
    }
    if (mc_auth_load_secret(secret_file, cfg.auth_secret, err, errlen) != 0)
        return NULL;
    cfg.authenticate = true;
    wt_client *c = calloc(1, sizeof *c);
    if (!c) {
        mc_auth_wipe_secret(cfg.auth_secret);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->timeout_ms = timeout_ms;
    c->base = event_base_new();
    if (!c->base) {
        mc_auth_wipe_secret(cfg.auth_secret);
        snprintf(err, errlen, "cannot create an event loop");
        free(c);
        return NULL;
    }
    cfg.bind = "0.0.0.0:0";
    cfg.accept_channels = false;
    cfg.request_timeout_us = (mc_time_us)timeout_ms * MC_US_PER_MS;
    int rc = mc_nub_new(c->base, &cfg, &c->nub);
    mc_auth_wipe_secret(cfg.auth_secret);
    if (rc != MC_OK) {
        snprintf(err, errlen, "cannot open a UDP socket: %s", mc_status_name(rc));
        event_base_free(c->base);
        free(c);
        return NULL;
    }
    return c;
}

void wt_client_free(wt_client *c)
{
    if (!c)
        return;
    mc_nub_free(c->nub);
    if (c->deadline_ev)
        event_free(c->deadline_ev);
    event_base_free(c->base);
    free(c);
}

void wt_request_clear(wt_request *req)
{
    free(req->reply);
    memset(req, 0, sizeof *req);
}

static void finish(pending *p)
{
    wt_client *c = p->c;
    if (c->outstanding > 0 && --c->outstanding == 0)
        event_base_loopbreak(c->base);
    free(p);
}

static void on_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
                     mc_istream *data)
{
    pending *p = ctx;
    wt_request *req = p->req;
    if (status == MC_REPLY_OK && data) {
        size_t n = mc_istream_remaining(data);
        const uint8_t *bytes = n ? mc_read_bytes(data, n) : NULL;
        req->reply = malloc(n ? n : 1);
        if (req->reply && (bytes || n == 0)) {
            if (n)
                memcpy(req->reply, bytes, n);
            req->reply_len = n;
            req->state = WT_REQ_OK;
        } else {
            req->state = WT_REQ_FAILED;
            snprintf(req->error, sizeof req->error, "out of memory reading a reply");
        }
    } else if (status == MC_REPLY_TIMEOUT) {
        req->state = WT_REQ_TIMEOUT;
        snprintf(req->error, sizeof req->error, "no answer in time");
    } else {
        req->state = WT_REQ_FAILED;
        snprintf(req->error, sizeof req->error, "request failed: %s",
                 mc_reply_status_name(status));
    }
    finish(p);
}

void wt_client_send(wt_client *c, const char *addr, uint8_t msg_id, const void *msg,
                    wt_request *req)
{
    memset(req, 0, sizeof *req);
    mc_address to;
    if (mc_address_parse(addr, &to) != MC_OK || to.port == 0) {
        req->state = WT_REQ_FAILED;
        snprintf(req->error, sizeof req->error, "'%s' is not IP:PORT", addr);
        return;
    }
    const mc_message_def *def = mc_interface_find(mc_control_interface(), msg_id);
    size_t n = 0;
    uint8_t *buf = mc_pb_pack(msg, &n);
    mc_bundle *b = mc_bundle_new(c->nub);
    pending *p = malloc(sizeof *p);
    int rc = MC_ERR_NO_MEMORY;
    if (def && buf && b && p) {
        p->c = c;
        p->req = req;
        rc = mc_bundle_start_request(b, def, on_reply, p,
                                     (mc_time_us)c->timeout_ms * MC_US_PER_MS);
        if (rc == MC_OK) {
            c->outstanding++; /* the handler now runs exactly once */
            mc_bundle_write(b, buf, n);
            if (mc_bundle_end_message(b) != MC_OK)
                rc = MC_ERR_TOO_LARGE;
            else
                rc = mc_nub_send_bundle(c->nub, &to, b, MC_SEND_RELIABLE_ONCE);
            p = NULL;
        }
    }
    if (rc != MC_OK && req->state == WT_REQ_PENDING) {
        req->state = WT_REQ_FAILED;
        snprintf(req->error, sizeof req->error, "cannot send to %s: %s", addr,
                 mc_status_name(rc));
    }
    free(p);
    free(buf);
    mc_bundle_free(b);
}

static void on_deadline(evutil_socket_t fd, short what, void *ctx)
{
    event_base_loopbreak(((wt_client *)ctx)->base);
}

void wt_client_wait(wt_client *c)
{
    if (c->outstanding == 0)
        return;
    /* Mercury times every request out; this is a backstop twice as long. */
    if (!c->deadline_ev)
        c->deadline_ev = event_new(c->base, -1, 0, on_deadline, c);
    if (c->deadline_ev) {
        struct timeval tv = {(time_t)(c->timeout_ms * 2 / 1000),
                             (suseconds_t)(c->timeout_ms * 2 % 1000) * 1000};
        event_add(c->deadline_ev, &tv);
    }
    event_base_dispatch(c->base);
    if (c->deadline_ev)
        event_del(c->deadline_ev);
}
