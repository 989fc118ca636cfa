/* Growable output streams and bounded input streams in network byte order. */
#include "common/stream.h"

#include <stdlib.h>
#include <string.h>

/* ---- output ---- */

void mc_ostream_init(mc_ostream *os) { memset(os, 0, sizeof *os); }

void mc_ostream_free(mc_ostream *os)
{
    free(os->data);
    memset(os, 0, sizeof *os);
}

void mc_ostream_reset(mc_ostream *os)
{
    os->size = 0;
    os->failed = false;
}

bool mc_ostream_ok(const mc_ostream *os) { return !os->failed; }

bool mc_ostream_reserve(mc_ostream *os, size_t extra)
{
    if (os->failed)
        return false;
    if (extra > MC_STREAM_MAX_SIZE || os->size > MC_STREAM_MAX_SIZE - extra) {
        os->failed = true;
        return false;
    }
    size_t need = os->size + extra;
    if (need <= os->capacity)
        return true;
    size_t cap = os->capacity ? os->capacity : 64;
    while (cap < need)
        cap *= 2;
    if (cap > MC_STREAM_MAX_SIZE)
        cap = MC_STREAM_MAX_SIZE;
    uint8_t *p = realloc(os->data, cap);
    if (!p) {
        os->failed = true;
        return false;
    }
    os->data = p;
    os->capacity = cap;
    return true;
}

uint8_t *mc_ostream_append(mc_ostream *os, size_t n)
{
    if (!mc_ostream_reserve(os, n))
        return NULL;
    uint8_t *p = os->data + os->size;
    os->size += n;
    return p;
}

uint8_t *mc_ostream_take(mc_ostream *os, size_t *size)
{
    uint8_t *p = os->data;
    if (size)
        *size = os->size;
    memset(os, 0, sizeof *os);
    return p;
}

void mc_store_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

void mc_store_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

uint16_t mc_load_u16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }

uint32_t mc_load_u32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

void mc_write_bytes(mc_ostream *os, const void *data, size_t n)
{
    if (n == 0)
        return;
    uint8_t *p = mc_ostream_append(os, n);
    if (p)
        memcpy(p, data, n);
}

void mc_write_u8(mc_ostream *os, uint8_t v)
{
    uint8_t *p = mc_ostream_append(os, 1);
    if (p)
        p[0] = v;
}

void mc_write_u16(mc_ostream *os, uint16_t v)
{
    uint8_t *p = mc_ostream_append(os, 2);
    if (p)
        mc_store_u16(p, v);
}

void mc_write_u32(mc_ostream *os, uint32_t v)
{
    uint8_t *p = mc_ostream_append(os, 4);
    if (p)
        mc_store_u32(p, v);
}

void mc_write_u64(mc_ostream *os, uint64_t v)
{
    uint8_t *p = mc_ostream_append(os, 8);
    if (p) {
        mc_store_u32(p, (uint32_t)(v >> 32));
        mc_store_u32(p + 4, (uint32_t)v);
    }
}

void mc_write_i8(mc_ostream *os, int8_t v) { mc_write_u8(os, (uint8_t)v); }
void mc_write_i16(mc_ostream *os, int16_t v) { mc_write_u16(os, (uint16_t)v); }
void mc_write_i32(mc_ostream *os, int32_t v) { mc_write_u32(os, (uint32_t)v); }
void mc_write_i64(mc_ostream *os, int64_t v) { mc_write_u64(os, (uint64_t)v); }

void mc_write_f32(mc_ostream *os, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    mc_write_u32(os, bits);
}

void mc_write_f64(mc_ostream *os, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    mc_write_u64(os, bits);
}

void mc_write_bool(mc_ostream *os, bool v) { mc_write_u8(os, v ? 1 : 0); }

void mc_write_packed_length(mc_ostream *os, uint32_t len)
{
    if (len < MC_PACKED_LENGTH_ESCAPE) {
        mc_write_u8(os, (uint8_t)len);
    } else {
        mc_write_u8(os, MC_PACKED_LENGTH_ESCAPE);
        mc_write_u32(os, len);
    }
}

void mc_write_blob(mc_ostream *os, const void *data, size_t len)
{
    if (len > UINT32_MAX) {
        os->failed = true;
        return;
    }
    mc_write_packed_length(os, (uint32_t)len);
    mc_write_bytes(os, data, len);
}

void mc_write_string(mc_ostream *os, const char *s)
{
    mc_write_blob(os, s ? s : "", s ? strlen(s) : 0);
}

/* ---- input ---- */

void mc_istream_init(mc_istream *is, const void *data, size_t size)
{
    is->data = data;
    is->size = data ? size : 0;
    is->pos = 0;
    is->failed = false;
}

bool mc_istream_ok(const mc_istream *is) { return !is->failed; }

size_t mc_istream_remaining(const mc_istream *is)
{
    return is->failed ? 0 : is->size - is->pos;
}

bool mc_istream_done(const mc_istream *is) { return !is->failed && is->pos == is->size; }

void mc_istream_fail(mc_istream *is) { is->failed = true; }

const uint8_t *mc_read_bytes(mc_istream *is, size_t n)
{
    if (is->failed || n > is->size - is->pos) {
        is->failed = true;
        return NULL;
    }
    const uint8_t *p = is->data + is->pos;
    is->pos += n;
    return p;
}

bool mc_read_into(mc_istream *is, void *out, size_t n)
{
    const uint8_t *p = mc_read_bytes(is, n);
    if (!p) {
        if (n)
            memset(out, 0, n);
        return false;
    }
    if (n)
        memcpy(out, p, n);
    return true;
}

uint8_t mc_read_u8(mc_istream *is)
{
    const uint8_t *p = mc_read_bytes(is, 1);
    return p ? p[0] : 0;
}

uint16_t mc_read_u16(mc_istream *is)
{
    const uint8_t *p = mc_read_bytes(is, 2);
    return p ? mc_load_u16(p) : 0;
}

uint32_t mc_read_u32(mc_istream *is)
{
    const uint8_t *p = mc_read_bytes(is, 4);
    return p ? mc_load_u32(p) : 0;
}

uint64_t mc_read_u64(mc_istream *is)
{
    const uint8_t *p = mc_read_bytes(is, 8);
    return p ? ((uint64_t)mc_load_u32(p) << 32) | mc_load_u32(p + 4) : 0;
}

int8_t mc_read_i8(mc_istream *is) { return (int8_t)mc_read_u8(is); }
int16_t mc_read_i16(mc_istream *is) { return (int16_t)mc_read_u16(is); }
int32_t mc_read_i32(mc_istream *is) { return (int32_t)mc_read_u32(is); }
int64_t mc_read_i64(mc_istream *is) { return (int64_t)mc_read_u64(is); }

float mc_read_f32(mc_istream *is)
{
    uint32_t bits = mc_read_u32(is);
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

double mc_read_f64(mc_istream *is)
{
    uint64_t bits = mc_read_u64(is);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

bool mc_read_bool(mc_istream *is)
{
    uint8_t b = mc_read_u8(is);
    if (b > 1) {
        is->failed = true;
        return false;
    }
    return b == 1;
}

uint32_t mc_read_packed_length(mc_istream *is, uint32_t max_len)
{
    uint8_t first = mc_read_u8(is);
    uint32_t len = first;
    if (first == MC_PACKED_LENGTH_ESCAPE)
        len = mc_read_u32(is);
    if (is->failed || len > max_len || len > is->size - is->pos) {
        is->failed = true;
        return 0;
    }
    return len;
}

const uint8_t *mc_read_blob(mc_istream *is, size_t *len, uint32_t max_len)
{
    uint32_t n = mc_read_packed_length(is, max_len);
    const uint8_t *p = is->failed ? NULL : mc_read_bytes(is, n);
    *len = p ? n : 0;
    return p;
}

char *mc_read_string_dup(mc_istream *is, uint32_t max_len)
{
    size_t len;
    const uint8_t *p = mc_read_blob(is, &len, max_len);
    if (!p)
        return NULL;
    if (len && memchr(p, '\0', len)) {
        is->failed = true;
        return NULL;
    }
    char *s = malloc(len + 1);
    if (!s) {
        is->failed = true;
        return NULL;
    }
    memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

bool mc_read_string_into(mc_istream *is, char *out, size_t outlen)
{
    if (outlen == 0) {
        is->failed = true;
        return false;
    }
    out[0] = '\0';
    size_t len;
    uint32_t max = outlen - 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(outlen - 1);
    const uint8_t *p = mc_read_blob(is, &len, max);
    if (!p)
        return false;
    if (len && memchr(p, '\0', len)) {
        is->failed = true;
        return false;
    }
    memcpy(out, p, len);
    out[len] = '\0';
    return true;
}
