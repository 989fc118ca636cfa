#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_SIZE 16384u

struct mc_arena_block {
    mc_arena_block *next;
    size_t used;
    size_t cap;
    _Alignas(16) unsigned char data[];
};

void mc_arena_init(mc_arena *a)
{
    a->head = NULL;
    a->failed = 0;
}

void mc_arena_free(mc_arena *a)
{
    mc_arena_block *b = a->head;
    while (b) {
        mc_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}

void *mc_arena_alloc(mc_arena *a, size_t size)
{
    size = (size + 15u) & ~(size_t)15u;
    if (size == 0)
        size = 16;
    mc_arena_block *b = a->head;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > BLOCK_SIZE ? size : BLOCK_SIZE;
        b = malloc(sizeof(*b) + cap);
        if (!b) {
            a->failed = 1;
            return NULL;
        }
        b->cap = cap;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

void *mc_arena_calloc(mc_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        a->failed = 1;
        return NULL;
    }
    return mc_arena_alloc(a, n * size);
}

char *mc_arena_strndup(mc_arena *a, const char *s, size_t n)
{
    char *p = mc_arena_alloc(a, n + 1);
    if (p)
        memcpy(p, s, n);
    return p;
}

char *mc_arena_strdup(mc_arena *a, const char *s)
{
    return mc_arena_strndup(a, s, strlen(s));
}

char *mc_arena_printf(mc_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *p = mc_arena_alloc(a, (size_t)n + 1);
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}
