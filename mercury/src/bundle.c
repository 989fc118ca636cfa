/* Writing messages into bundles: packet chains, message headers, spanning, oversize. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const mc_message_def reply_def = {MC_REPLY_MESSAGE_ID, "reply", MC_MSG_VARIABLE, 4, NULL};

const mc_message_def *mc_reply_def(void);
const mc_message_def *mc_reply_def(void) { return &reply_def; }

/* Bytes of messages a packet may hold: the nub's largest packet minus the footer room. */
static uint16_t packet_capacity(const mc_nub *nub, const mc_channel *ch)
{
    size_t reserve = MC_FOOTER_BASE;
    if (ch && ch->indexed)
        reserve += MC_FOOTER_INDEXED;
    if (nub->cfg.checksums)
        reserve += MC_FOOTER_CHECKSUM;
    return (uint16_t)(nub->max_packet - reserve);
}

void mc_bundle_init(mc_bundle *b, mc_nub *nub, mc_channel *ch)
{
    memset(b, 0, sizeof(*b));
    b->nub = nub;
    b->channel = ch;
    b->capacity = packet_capacity(nub, ch);
}

mc_bundle *mc_bundle_new(mc_nub *nub)
{
    if (!nub)
        return NULL;
    mc_bundle *b = malloc(sizeof(*b));
    if (!b)
        return NULL;
    mc_bundle_init(b, nub, NULL);
    return b;
}

static void abort_message(mc_bundle *b);

void mc_bundle_release_all(mc_bundle *b)
{
    if (b->in_msg)
        abort_message(b);
    mc_packet_free_list(b->nub, b->head);
    b->head = b->tail = b->cur = NULL;
    b->group_first = NULL;
    b->npackets = 0;
    b->messages = 0;
    b->bytes = 0;
}

void mc_bundle_free(mc_bundle *b)
{
    if (!b || b->channel)
        return;
    mc_bundle_release_all(b);
    free(b);
}

void mc_bundle_clear(mc_bundle *b)
{
    if (b)
        mc_bundle_release_all(b);
}

static mc_packet *new_packet(mc_bundle *b)
{
    mc_packet *p = mc_packet_alloc(b->nub);
    if (!p)
        return NULL;
    if (!b->in_msg)
        b->capacity = packet_capacity(b->nub, b->channel); /* mc_nub_set_max_packet */
    if (b->tail)
        b->tail->next = p;
    else
        b->head = p;
    b->tail = p;
    b->cur = p;
    b->npackets++;
    return p;
}

mc_packet *mc_bundle_take(mc_bundle *b)
{
    mc_packet *h = b->head;
    b->head = b->tail = b->cur = NULL;
    b->npackets = 0;
    b->messages = 0;
    b->bytes = 0;
    return h;
}

/* The current packet is complete: end any fragment group in it and, on a channel, hand
 * the complete packets over for sending. */
static int close_tail(mc_bundle *b)
{
    mc_packet *p = b->cur;
    b->cur = NULL;
    if (p && p->len <= MC_HEADER_SIZE && !b->group_first) {
        /* empty: unlink it */
        mc_packet *prev = NULL;
        for (mc_packet *q = b->head; q && q != p; q = q->next)
            prev = q;
        if (prev)
            prev->next = NULL;
        else
            b->head = NULL;
        b->tail = prev;
        b->npackets--;
        mc_packet_release(b->nub, p);
    } else if (p && b->group_first) {
        uint32_t n = 0;
        for (mc_packet *q = b->group_first; q; q = q->next)
            n++;
        uint32_t i = 0;
        for (mc_packet *q = b->group_first; q; q = q->next) {
            q->group_count = n;
            q->group_index = i++;
        }
        b->group_first = NULL;
    }
    if (b->channel && b->head && !b->in_msg) {
        mc_packet *chain = mc_bundle_take(b);
        return mc_channel_enqueue(b->channel, chain);
    }
    if (b->channel && b->head && b->in_msg) {
        /* called from spill: everything in the chain is complete */
        mc_packet *chain = b->head;
        b->head = b->tail = NULL;
        b->npackets = 0;
        return mc_channel_enqueue(b->channel, chain);
    }
    return MC_OK;
}

int mc_bundle_close(mc_bundle *b)
{
    if (b->in_msg)
        return MC_ERR_STATE;
    if (b->cur)
        return close_tail(b);
    return MC_OK;
}

/* Make sure the current packet has `need` bytes of room for messages: otherwise close it
 * (on a channel, complete packets go out) and start a new one. */
static int ensure_room(mc_bundle *b, size_t need)
{
    if (b->cur && (size_t)(b->capacity - b->cur->len) >= need)
        return MC_OK;
    if (b->cur) {
        int r = close_tail(b);
        if (r != MC_OK && r != MC_ERR_OVERFLOW)
            return r;
    }
    return new_packet(b) ? MC_OK : MC_ERR_NO_MEMORY;
}

static int start_common(mc_bundle *b, const mc_message_def *def, mc_reliability rel,
                        bool is_request, uint32_t reply_id)
{
    if (b->in_msg)
        return MC_ERR_STATE;
    if (def->style == MC_MSG_VARIABLE && def->length != 1 && def->length != 2 &&
        def->length != 4)
        return MC_ERR_INVALID;
    uint16_t hdr = (uint16_t)mc_message_header_size(def, is_request);
    int room = ensure_room(b, hdr);
    if (room != MC_OK)
        return room;
    mc_packet *p = b->cur;
    b->saved_first_request = p->first_request;
    b->saved_last_link = p->last_link;
    b->saved_group_first = b->group_first;
    b->in_msg = true;
    b->msg_error = MC_OK;
    b->msg_def = def;
    b->msg_is_request = is_request;
    b->msg_rel = rel;
    b->msg_packet = p;
    b->msg_offset = p->len;
    b->msg_header = hdr;
    b->msg_len = 0;
    b->msg_reply_id = reply_id;
    uint8_t *h = p->data + p->len;
    memset(h, 0, hdr);
    h[0] = def->id;
    if (is_request) {
        mc_store_u32(h + 1, reply_id);
        if (p->last_link)
            mc_store_u16(p->data + p->last_link, p->len);
        else
            p->first_request = p->len;
        p->last_link = (uint16_t)(p->len + 5);
    }
    p->len = (uint16_t)(p->len + hdr);
    return MC_OK;
}

int mc_bundle_start_message(mc_bundle *b, const mc_message_def *def, mc_reliability rel)
{
    if (!b || !def || def->id == MC_REPLY_MESSAGE_ID || (unsigned)rel > MC_RELIABLE_CRITICAL)
        return MC_ERR_INVALID;
    return start_common(b, def, rel, false, 0);
}

int mc_bundle_start_request(mc_bundle *b, const mc_message_def *def, mc_reply_handler handler,
                            void *ctx, mc_time_us timeout_us)
{
    if (!b || !def || !handler || def->id == MC_REPLY_MESSAGE_ID)
        return MC_ERR_INVALID;
    if (b->in_msg)
        return MC_ERR_STATE;
    if (b->channel && b->channel->dead)
        return MC_ERR_DEAD; /* its requests would outlive it */
    uint32_t rid = mc_request_register(b->nub, b->channel, handler, ctx, timeout_us);
    if (!rid)
        return MC_ERR_NO_MEMORY;
    int r = start_common(b, def, MC_RELIABLE_DRIVER, true, rid);
    if (r != MC_OK)
        mc_request_forget(b->nub, rid);
    return r;
}

int mc_bundle_start_reply(mc_bundle *b, uint32_t reply_id)
{
    if (!b)
        return MC_ERR_INVALID;
    int r = start_common(b, &reply_def, MC_RELIABLE_DRIVER, false, 0);
    if (r != MC_OK)
        return r;
    return mc_bundle_write_u32(b, reply_id);
}

/* The current packet is full while writing the open message. */
static int spill(mc_bundle *b)
{
    mc_packet *p = b->cur;
    if (b->msg_packet == p && b->msg_offset > MC_HEADER_SIZE) {
        /* move the message to a fresh packet so earlier messages go out whole */
        mc_packet *np = mc_packet_alloc(b->nub);
        if (!np)
            return MC_ERR_NO_MEMORY;
        uint16_t k = (uint16_t)(p->len - b->msg_offset);
        memcpy(np->data + MC_HEADER_SIZE, p->data + b->msg_offset, k);
        np->len = (uint16_t)(MC_HEADER_SIZE + k);
        if (b->msg_is_request) {
            if (b->saved_last_link)
                mc_store_u16(p->data + b->saved_last_link, 0);
            p->first_request = b->saved_first_request;
            p->last_link = b->saved_last_link;
            np->first_request = MC_HEADER_SIZE;
            np->last_link = MC_HEADER_SIZE + 5;
        }
        p->len = b->msg_offset;
        int r = close_tail(b);
        if (b->tail)
            b->tail->next = np;
        else
            b->head = np;
        b->tail = np;
        b->cur = np;
        b->npackets++;
        b->msg_packet = np;
        b->msg_offset = MC_HEADER_SIZE;
        b->saved_first_request = 0;
        b->saved_last_link = 0;
        b->saved_group_first = NULL;
        if (r == MC_ERR_OVERFLOW)
            r = MC_OK; /* the channel reports it; keep writing */
        return r;
    }
    /* the message spans packets: they form a fragment group */
    if (!b->group_first)
        b->group_first = b->msg_packet;
    if (!new_packet(b))
        return MC_ERR_NO_MEMORY;
    return MC_OK;
}

static int raw_write(mc_bundle *b, const uint8_t *data, size_t n)
{
    while (n) {
        mc_packet *p = b->cur;
        size_t room = (size_t)(b->capacity - p->len);
        if (room == 0) {
            int r = spill(b);
            if (r != MC_OK)
                return r;
            continue;
        }
        size_t k = n < room ? n : room;
        memcpy(p->data + p->len, data, k);
        p->len = (uint16_t)(p->len + k);
        data += k;
        n -= k;
        b->msg_len += k;
    }
    return MC_OK;
}

int mc_bundle_write(mc_bundle *b, const void *data, size_t n)
{
    if (!b || (!data && n))
        return MC_ERR_INVALID;
    if (!b->in_msg)
        return MC_ERR_STATE;
    if (b->msg_error)
        return b->msg_error;
    if (n > MC_MAX_MESSAGE_SIZE - b->msg_len) {
        b->msg_error = MC_ERR_TOO_LARGE;
        return b->msg_error;
    }
    int r = raw_write(b, data, n);
    if (r != MC_OK)
        b->msg_error = r;
    return r;
}

int mc_bundle_write_u8(mc_bundle *b, uint8_t v) { return mc_bundle_write(b, &v, 1); }

int mc_bundle_write_u16(mc_bundle *b, uint16_t v)
{
    uint8_t t[2];
    mc_store_u16(t, v);
    return mc_bundle_write(b, t, 2);
}

int mc_bundle_write_u32(mc_bundle *b, uint32_t v)
{
    uint8_t t[4];
    mc_store_u32(t, v);
    return mc_bundle_write(b, t, 4);
}

int mc_bundle_write_u64(mc_bundle *b, uint64_t v)
{
    uint8_t t[8];
    mc_store_u32(t, (uint32_t)(v >> 32));
    mc_store_u32(t + 4, (uint32_t)v);
    return mc_bundle_write(b, t, 8);
}

int mc_bundle_write_blob(mc_bundle *b, const void *data, size_t n)
{
    if (n > UINT32_MAX)
        return MC_ERR_TOO_LARGE;
    uint8_t t[5];
    size_t k;
    if (n < MC_PACKED_LENGTH_ESCAPE) {
        t[0] = (uint8_t)n;
        k = 1;
    } else {
        t[0] = MC_PACKED_LENGTH_ESCAPE;
        mc_store_u32(t + 1, (uint32_t)n);
        k = 5;
    }
    int r = mc_bundle_write(b, t, k);
    if (r != MC_OK)
        return r;
    return mc_bundle_write(b, data, n);
}

int mc_bundle_write_string(mc_bundle *b, const char *s)
{
    if (!s)
        return MC_ERR_INVALID;
    return mc_bundle_write_blob(b, s, strlen(s));
}

static void abort_message(mc_bundle *b)
{
    mc_packet *p = b->msg_packet;
    mc_packet_free_list(b->nub, p->next);
    p->next = NULL;
    b->tail = p;
    b->cur = p;
    size_t n = 0;
    for (mc_packet *q = b->head; q; q = q->next)
        n++;
    b->npackets = n;
    p->len = b->msg_offset;
    if (b->msg_is_request) {
        if (b->saved_last_link)
            mc_store_u16(p->data + b->saved_last_link, 0);
        p->first_request = b->saved_first_request;
        p->last_link = b->saved_last_link;
        if (b->msg_reply_id)
            mc_request_forget(b->nub, b->msg_reply_id);
    }
    b->group_first = b->saved_group_first;
    b->in_msg = false;
}

/* Copy n bytes at (p, off) of the chain into/out of buf. */
static bool chain_access(mc_packet *p, uint16_t off, uint8_t *buf, size_t n, bool store)
{
    while (n) {
        if (!p)
            return false;
        if (off >= p->len) {
            p = p->next;
            off = MC_HEADER_SIZE;
            continue;
        }
        size_t k = (size_t)(p->len - off);
        if (k > n)
            k = n;
        if (store)
            memcpy(p->data + off, buf, k);
        else
            memcpy(buf, p->data + off, k);
        buf += k;
        n -= k;
        off = (uint16_t)(off + k);
    }
    return true;
}

static uint32_t field_escape(uint32_t field)
{
    return field >= 4 ? 0xFFFFFFFFu : (1u << (8 * field)) - 1u;
}

int mc_bundle_end_message(mc_bundle *b)
{
    if (!b)
        return MC_ERR_INVALID;
    if (!b->in_msg)
        return MC_ERR_STATE;
    int r = b->msg_error;
    const mc_message_def *def = b->msg_def;
    if (r == MC_OK && def->style == MC_MSG_FIXED && b->msg_len != def->length)
        r = b->msg_len > def->length ? MC_ERR_TOO_LARGE : MC_ERR_INVALID;
    if (r == MC_OK && def->style == MC_MSG_VARIABLE) {
        uint32_t f = def->length;
        uint32_t esc = field_escape(f);
        mc_packet *hp = b->msg_packet;
        uint8_t *field = hp->data + b->msg_offset + 1 + (b->msg_is_request ? 6 : 0);
        size_t len = b->msg_len;
        if (len < esc) {
            for (uint32_t i = 0; i < f; i++)
                field[i] = (uint8_t)(len >> (8 * (f - 1 - i)));
        } else {
            memset(field, 0xFF, f);
            uint8_t first4[4], lenbuf[4];
            uint16_t data_off = (uint16_t)(b->msg_offset + b->msg_header);
            if (!chain_access(hp, data_off, first4, 4, false))
                r = MC_ERR_STATE;
            mc_store_u32(lenbuf, (uint32_t)len);
            if (r == MC_OK && !chain_access(hp, data_off, lenbuf, 4, true))
                r = MC_ERR_STATE;
            if (r == MC_OK)
                r = raw_write(b, first4, 4);
        }
    }
    if (r != MC_OK) {
        abort_message(b);
        return r;
    }
    if (b->msg_rel == MC_RELIABLE_DRIVER || b->msg_rel == MC_RELIABLE_CRITICAL) {
        b->cur->reliable = 1;
        b->msg_packet->reliable = 1;
        if (b->msg_rel == MC_RELIABLE_CRITICAL)
            b->cur->critical = 1;
    }
    b->messages++;
    b->bytes += b->msg_len;
    b->in_msg = false;
    return MC_OK;
}

int mc_bundle_add_message(mc_bundle *b, const mc_message_def *def, mc_reliability rel,
                          const void *data, size_t n)
{
    if (!b || !def || (!data && n) || def->id == MC_REPLY_MESSAGE_ID ||
        (unsigned)rel > MC_RELIABLE_CRITICAL)
        return MC_ERR_INVALID;
    if (b->in_msg)
        return MC_ERR_STATE;
    if (def->style == MC_MSG_FIXED) {
        if (n != def->length)
            return n > def->length ? MC_ERR_TOO_LARGE : MC_ERR_INVALID;
    } else if (def->length != 1 && def->length != 2 && def->length != 4) {
        return MC_ERR_INVALID;
    }
    size_t f = def->style == MC_MSG_VARIABLE ? def->length : 0;
    size_t total = 1 + f + n;
    bool small = total <= (size_t)(b->capacity - MC_HEADER_SIZE) &&
                 (f == 0 || n < field_escape((uint32_t)f));
    if (small) {
        int room = ensure_room(b, total);
        if (room != MC_OK)
            return room;
        mc_packet *p = b->cur;
        uint8_t *h = p->data + p->len;
        h[0] = def->id;
        for (size_t i = 0; i < f; i++)
            h[1 + i] = (uint8_t)(n >> (8 * (f - 1 - i)));
        if (n)
            memcpy(h + 1 + f, data, n);
        p->len = (uint16_t)(p->len + total);
        if (rel == MC_RELIABLE_DRIVER || rel == MC_RELIABLE_CRITICAL) {
            p->reliable = 1;
            if (rel == MC_RELIABLE_CRITICAL)
                p->critical = 1;
        }
        b->messages++;
        b->bytes += n;
        return MC_OK;
    }
    int r = mc_bundle_start_message(b, def, rel);
    if (r != MC_OK)
        return r;
    r = mc_bundle_write(b, data, n);
    int e = mc_bundle_end_message(b);
    return r != MC_OK ? r : e;
}

bool mc_bundle_in_message(const mc_bundle *b) { return b && b->in_msg; }

size_t mc_bundle_packet_count(const mc_bundle *b)
{
    if (!b)
        return 0;
    size_t n = b->npackets;
    if (b->cur && b->cur->len <= MC_HEADER_SIZE && n)
        n--;
    return n;
}

size_t mc_bundle_size(const mc_bundle *b) { return b ? b->bytes : 0; }
size_t mc_bundle_message_count(const mc_bundle *b) { return b ? b->messages : 0; }
