/* A datagram's parts once it is authentic: its footers, its request chain, and its message
 * units (validated whole, then dispatched to the handlers or to the request waiting for a
 * reply). Used by the channel and the off-channel receive paths alike. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const mc_message_def *mc_reply_def(void);

static int drop(mc_drop_reason why) { return (int)why + 1; }

int mc_parse_footers(mc_nub *nub, const mc_packet *pkt, mc_footers *f)
{
    memset(f, 0, sizeof(*f));
    const uint8_t *d = pkt->data;
    size_t end = pkt->len;
    if (end < MC_HEADER_SIZE)
        return drop(MC_DROP_TOO_SHORT);
    uint16_t flags = mc_load_u16(d);
    f->flags = flags;
    if (flags & ~MC_PF_KNOWN)
        return drop(MC_DROP_BAD_FLAGS);
    bool on = flags & MC_PF_ON_CHANNEL;
    if ((flags & MC_PF_IS_RELIABLE) && !(flags & MC_PF_HAS_SEQ))
        return drop(MC_DROP_BAD_FLAGS);
    if ((flags & MC_PF_IS_FRAGMENT) && !(flags & MC_PF_HAS_SEQ))
        return drop(MC_DROP_BAD_FLAGS);
    if ((flags & MC_PF_HAS_SEQ) && !(flags & (MC_PF_IS_RELIABLE | MC_PF_IS_FRAGMENT)))
        return drop(MC_DROP_BAD_FLAGS);
    if ((flags & (MC_PF_INDEXED | MC_PF_CREATE_CHANNEL | MC_PF_HAS_CUMULATIVE_ACK)) && !on)
        return drop(MC_DROP_BAD_FLAGS);
    if (on && (flags & MC_PF_IS_FRAGMENT) && !(flags & MC_PF_IS_RELIABLE))
        return drop(MC_DROP_BAD_FLAGS);
    if ((flags & MC_PF_HAS_FIRST_SEQ) && (!on || !(flags & MC_PF_IS_RELIABLE)))
        return drop(MC_DROP_BAD_FLAGS);
    if (nub->cfg.checksums && !(flags & MC_PF_HAS_CHECKSUM))
        return drop(MC_DROP_BAD_CHECKSUM);

#define NEED(n, reason)                                                                     \
    do {                                                                                    \
        if (end < MC_HEADER_SIZE + (size_t)(n))                                             \
            return drop(reason);                                                            \
        end -= (n);                                                                         \
    } while (0)

    if (flags & MC_PF_HAS_CHECKSUM) {
        NEED(4, MC_DROP_BAD_FOOTER);
        if (mc_checksum(d, end) != mc_load_u32(d + end))
            return drop(MC_DROP_BAD_CHECKSUM);
    }
    if (flags & MC_PF_HAS_PIGGYBACKS) {
        NEED(1, MC_DROP_BAD_FOOTER);
        uint32_t count = d[end];
        if (count == 0 || count > 4)
            return drop(MC_DROP_BAD_FOOTER);
        for (uint32_t i = 0; i < count; i++) {
            NEED(2, MC_DROP_BAD_FOOTER);
            uint16_t l = mc_load_u16(d + end);
            if (l < MC_HEADER_SIZE)
                return drop(MC_DROP_BAD_FOOTER);
            NEED(l, MC_DROP_BAD_FOOTER);
            f->piggy[i] = d + end;
            f->piggy_len[i] = l;
        }
        f->piggy_count = count;
    }
    if (flags & MC_PF_INDEXED) {
        NEED(8, MC_DROP_BAD_FOOTER);
        f->chan_id = mc_load_u32(d + end);
        f->chan_version = mc_load_u32(d + end + 4);
    }
    if (flags & MC_PF_CREATE_CHANNEL) {
        NEED(4, MC_DROP_BAD_FOOTER);
        f->nonce = mc_load_u32(d + end);
    }
    if (flags & MC_PF_HAS_FIRST_SEQ) {
        NEED(4, MC_DROP_BAD_FOOTER);
        f->first_seq = mc_load_u32(d + end);
        if (f->first_seq > MC_SEQ_MASK)
            return drop(MC_DROP_BAD_FOOTER);
    }
    if (flags & MC_PF_HAS_SEQ) {
        NEED(4, MC_DROP_BAD_FOOTER);
        f->seq = mc_load_u32(d + end);
        if (f->seq > MC_SEQ_MASK)
            return drop(MC_DROP_BAD_FOOTER);
        /* a packet carrying its channel's first sequence number was sent while nothing was
         * acknowledged: it lies within a window of it */
        if ((flags & MC_PF_HAS_FIRST_SEQ) &&
            (mc_seq_diff(f->seq, f->first_seq) < 0 ||
             (uint32_t)mc_seq_diff(f->seq, f->first_seq) >= MC_WINDOW_MAX))
            return drop(MC_DROP_BAD_FOOTER);
    }
    if (flags & MC_PF_IS_FRAGMENT) {
        NEED(8, MC_DROP_BAD_FOOTER);
        f->frag_first = mc_load_u32(d + end);
        f->frag_last = mc_load_u32(d + end + 4);
        if (f->frag_first > MC_SEQ_MASK || f->frag_last > MC_SEQ_MASK)
            return drop(MC_DROP_BAD_FOOTER);
        if (mc_seq_diff(f->seq, f->frag_first) < 0 || mc_seq_diff(f->frag_last, f->seq) < 0 ||
            f->frag_first == f->frag_last ||
            (uint32_t)mc_seq_diff(f->frag_last, f->frag_first) + 1u > MC_MAX_GROUP_PACKETS)
            return drop(MC_DROP_BAD_FOOTER);
    }
    if (flags & MC_PF_HAS_CUMULATIVE_ACK) {
        NEED(4, MC_DROP_BAD_FOOTER);
        f->cum_ack = mc_load_u32(d + end);
        if (f->cum_ack > MC_SEQ_MASK)
            return drop(MC_DROP_BAD_ACKS);
    }
    if (flags & MC_PF_HAS_ACKS) {
        NEED(1, MC_DROP_BAD_ACKS);
        uint32_t n = d[end];
        if (n == 0)
            return drop(MC_DROP_BAD_ACKS);
        NEED(4 * n, MC_DROP_BAD_ACKS);
        f->acks = d + end;
        f->ack_count = n;
        for (uint32_t i = 0; i < n; i++)
            if (mc_load_u32(f->acks + 4 * i) > MC_SEQ_MASK)
                return drop(MC_DROP_BAD_ACKS);
    }
    if (flags & MC_PF_HAS_REQUESTS) {
        NEED(2, MC_DROP_BAD_FOOTER);
        f->first_request = mc_load_u16(d + end);
        if (f->first_request < MC_HEADER_SIZE || f->first_request >= end)
            return drop(MC_DROP_BAD_MESSAGE);
    }
#undef NEED
    f->body_end = (uint16_t)end;
    return 0;
}

int mc_request_chain(const uint8_t *data, uint16_t body_end, uint16_t first, uint32_t *out,
                     uint32_t max)
{
    uint32_t n = 0;
    uint32_t prev = 0;
    uint32_t off = first;
    while (off) {
        if (off < MC_HEADER_SIZE || off <= prev || off + 7u > body_end || n >= max)
            return -1;
        out[n++] = off - MC_HEADER_SIZE;
        prev = off;
        off = mc_load_u16(data + off + 5);
    }
    return (int)n;
}

static const mc_message_def *lookup(mc_nub *nub, uint8_t id)
{
    if (id == MC_REPLY_MESSAGE_ID)
        return mc_reply_def();
    return nub->defs[id];
}

static uint32_t escape_of(uint32_t field)
{
    return field >= 4 ? 0xFFFFFFFFu : (1u << (8 * field)) - 1u;
}

/* Parse the header at pos: sets header size, data offset, data length, wire length. */
typedef struct {
    const mc_message_def *def;
    bool is_request;
    bool oversize;
    size_t hdr;
    size_t length; /* message data length */
    size_t wire;   /* bytes after the header */
} msg_view;

static int read_header(mc_nub *nub, const uint8_t *data, size_t len, size_t pos,
                       bool is_request, msg_view *v)
{
    uint8_t id = data[pos];
    const mc_message_def *def = lookup(nub, id);
    if (!def)
        return drop(MC_DROP_UNKNOWN_MESSAGE);
    if (is_request && id == MC_REPLY_MESSAGE_ID)
        return drop(MC_DROP_BAD_MESSAGE);
    v->def = def;
    v->is_request = is_request;
    v->oversize = false;
    size_t field = def->style == MC_MSG_VARIABLE ? def->length : 0;
    v->hdr = 1 + (is_request ? 6u : 0u) + field;
    if (len - pos < v->hdr)
        return drop(MC_DROP_BAD_MESSAGE);
    if (def->style == MC_MSG_FIXED) {
        v->length = v->wire = def->length;
    } else {
        const uint8_t *fp = data + pos + 1 + (is_request ? 6 : 0);
        uint32_t val = 0;
        for (size_t i = 0; i < field; i++)
            val = (val << 8) | fp[i];
        uint32_t esc = escape_of((uint32_t)field);
        if (val == esc) {
            if (field == 4 || len - pos - v->hdr < 4)
                return drop(MC_DROP_BAD_MESSAGE);
            uint32_t real = mc_load_u32(data + pos + v->hdr);
            if (real < esc || real > MC_MAX_MESSAGE_SIZE)
                return drop(MC_DROP_BAD_MESSAGE);
            v->oversize = true;
            v->length = real;
            v->wire = (size_t)real + 4;
        } else {
            if (val > MC_MAX_MESSAGE_SIZE)
                return drop(MC_DROP_BAD_MESSAGE);
            v->length = v->wire = val;
        }
    }
    if (v->length > nub->cfg.max_message_size)
        return drop(MC_DROP_MESSAGE_TOO_LARGE);
    if (id == MC_REPLY_MESSAGE_ID && v->length < 4)
        return drop(MC_DROP_BAD_MESSAGE);
    if (len - pos - v->hdr < v->wire)
        return drop(MC_DROP_BAD_MESSAGE);
    return 0;
}

int mc_validate_unit(mc_nub *nub, const uint8_t *data, size_t len, const uint32_t *req,
                     uint32_t nreq, mc_drop_reason *why)
{
    size_t pos = 0;
    uint32_t ri = 0;
    while (pos < len) {
        bool is_req = false;
        if (ri < nreq) {
            if (req[ri] < pos) {
                *why = MC_DROP_BAD_MESSAGE;
                return MC_ERR_DROPPED;
            }
            if (req[ri] == pos) {
                is_req = true;
                ri++;
            }
        }
        msg_view v;
        int r = read_header(nub, data, len, pos, is_req, &v);
        if (r) {
            *why = (mc_drop_reason)(r - 1);
            return MC_ERR_DROPPED;
        }
        pos += v.hdr + v.wire;
    }
    if (ri != nreq) {
        *why = MC_DROP_BAD_MESSAGE;
        return MC_ERR_DROPPED;
    }
    return MC_OK;
}

void mc_dispatch_unit(mc_nub *nub, const mc_address *src, mc_channel *ch, uint8_t *data,
                      size_t len, const uint32_t *req, uint32_t nreq)
{
    size_t pos = 0;
    uint32_t ri = 0;
    mc_address source = *src;
    uint32_t epoch = ch ? ch->epoch : 0;
    while (pos < len) {
        /* a handler reset the channel: the rest of this unit belongs to the old version */
        if (ch && ch->epoch != epoch)
            return;
        bool is_req = ri < nreq && req[ri] == pos;
        if (is_req)
            ri++;
        msg_view v;
        if (read_header(nub, data, len, pos, is_req, &v))
            return; /* validated before: cannot happen */
        uint8_t *md = data + pos + v.hdr;
        if (v.oversize)
            memcpy(md, md + v.length, 4); /* restore the displaced first 4 bytes */
        mc_message_info info;
        info.nub = nub;
        info.source = &source;
        info.channel = ch;
        info.def = v.def;
        info.length = (uint32_t)v.length;
        info.is_request = is_req;
        info.reply_id = is_req ? mc_load_u32(data + pos + 1) : 0;
        nub->stats.messages_received++;
        if (ch)
            ch->messages_received++;
        mc_istream is;
        if (v.def->id == MC_REPLY_MESSAGE_ID) {
            uint32_t rid = mc_load_u32(md);
            info.length -= 4;
            mc_istream_init(&is, md + 4, v.length - 4);
            mc_request_deliver(nub, rid, &info, &is);
        } else {
            mc_istream_init(&is, md, v.length);
            v.def->handler(nub->cfg.handler_ctx, &info, &is);
        }
        pos += v.hdr + v.wire;
    }
}
