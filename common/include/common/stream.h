/* Binary streams: the encodings every wire format in Mercury Cluster uses.
 *
 * All multi-byte integers and floats are network byte order (big-endian); floats are IEEE
 * 754 bit patterns. Strings and blobs carry a *packed length*: one byte when the length is
 * below 255, otherwise the byte 0xFF followed by a 4-byte big-endian length.
 *
 * mc_ostream is a growable output buffer. A failed allocation (or a write beyond
 * MC_STREAM_MAX_SIZE) puts it in an error state: further writes do nothing and
 * mc_ostream_ok() is false.
 *
 * mc_istream reads a bounded byte range it does not own. Any read past the end, or a length
 * larger than what remains or than the caller's limit, puts it in an error state: that read
 * and every later read return zeroes (or NULL / empty) and never touch memory outside the
 * range. Check mc_istream_ok() once after a sequence of reads.
 */
#ifndef MC_COMMON_STREAM_H
#define MC_COMMON_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest buffer an output stream will grow to (and largest packed length accepted). */
#define MC_STREAM_MAX_SIZE (256u * 1024u * 1024u)

/* Values below this are encoded in a single length byte. */
#define MC_PACKED_LENGTH_ESCAPE 0xFFu

typedef struct {
    uint8_t *data;
    size_t size;
    size_t capacity;
    bool failed;
} mc_ostream;

void mc_ostream_init(mc_ostream *os);
void mc_ostream_free(mc_ostream *os);
/* Empty the stream, keeping its buffer; clears the error state. */
void mc_ostream_reset(mc_ostream *os);
bool mc_ostream_ok(const mc_ostream *os);
/* Make room for at least `extra` more bytes. Returns false (and fails the stream) if not. */
bool mc_ostream_reserve(mc_ostream *os, size_t extra);
/* Append n uninitialised bytes and return a pointer to them (NULL when failed). The pointer
 * is valid until the next write. */
uint8_t *mc_ostream_append(mc_ostream *os, size_t n);
/* Give the buffer to the caller (who frees it with free()); the stream becomes empty. */
uint8_t *mc_ostream_take(mc_ostream *os, size_t *size);

void mc_write_bytes(mc_ostream *os, const void *data, size_t n);
void mc_write_u8(mc_ostream *os, uint8_t v);
void mc_write_u16(mc_ostream *os, uint16_t v);
void mc_write_u32(mc_ostream *os, uint32_t v);
void mc_write_u64(mc_ostream *os, uint64_t v);
void mc_write_i8(mc_ostream *os, int8_t v);
void mc_write_i16(mc_ostream *os, int16_t v);
void mc_write_i32(mc_ostream *os, int32_t v);
void mc_write_i64(mc_ostream *os, int64_t v);
void mc_write_f32(mc_ostream *os, float v);
void mc_write_f64(mc_ostream *os, double v);
void mc_write_bool(mc_ostream *os, bool v);
void mc_write_packed_length(mc_ostream *os, uint32_t len);
/* Packed length then the bytes. Lengths above UINT32_MAX fail the stream. */
void mc_write_blob(mc_ostream *os, const void *data, size_t len);
/* A NUL-terminated C string written as a blob (no terminator on the wire). */
void mc_write_string(mc_ostream *os, const char *s);

/* Store big-endian values into a buffer (for patching reserved space). */
void mc_store_u16(uint8_t *p, uint16_t v);
void mc_store_u32(uint8_t *p, uint32_t v);
uint16_t mc_load_u16(const uint8_t *p);
uint32_t mc_load_u32(const uint8_t *p);

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t pos;
    bool failed;
} mc_istream;

void mc_istream_init(mc_istream *is, const void *data, size_t size);
bool mc_istream_ok(const mc_istream *is);
size_t mc_istream_remaining(const mc_istream *is);
/* True when every byte was consumed and no read failed. */
bool mc_istream_done(const mc_istream *is);
/* Put the stream in its error state (for callers' own validation failures). */
void mc_istream_fail(mc_istream *is);

/* Return a pointer to the next n bytes and advance, or NULL (and fail) if fewer remain. */
const uint8_t *mc_read_bytes(mc_istream *is, size_t n);
/* Copy n bytes into out; on failure out is zero-filled. Returns false on failure. */
bool mc_read_into(mc_istream *is, void *out, size_t n);
uint8_t mc_read_u8(mc_istream *is);
uint16_t mc_read_u16(mc_istream *is);
uint32_t mc_read_u32(mc_istream *is);
uint64_t mc_read_u64(mc_istream *is);
int8_t mc_read_i8(mc_istream *is);
int16_t mc_read_i16(mc_istream *is);
int32_t mc_read_i32(mc_istream *is);
int64_t mc_read_i64(mc_istream *is);
float mc_read_f32(mc_istream *is);
double mc_read_f64(mc_istream *is);
/* Any byte other than 0 or 1 is invalid and fails the stream. */
bool mc_read_bool(mc_istream *is);
/* A packed length no larger than max_len and no larger than what remains. */
uint32_t mc_read_packed_length(mc_istream *is, uint32_t max_len);
/* A blob: returns a view into the stream's buffer (not NUL-terminated) and its length.
 * Fails if the length exceeds max_len or the remaining bytes. On failure *len is 0 and the
 * return value is NULL. A zero-length blob returns a non-NULL pointer. */
const uint8_t *mc_read_blob(mc_istream *is, size_t *len, uint32_t max_len);
/* A string copied into a new NUL-terminated heap buffer (free()), or NULL on failure.
 * Embedded NUL bytes are refused. */
char *mc_read_string_dup(mc_istream *is, uint32_t max_len);
/* A string copied into out[outlen] with a terminator; fails if it does not fit or holds a
 * NUL byte. */
bool mc_read_string_into(mc_istream *is, char *out, size_t outlen);

#endif
