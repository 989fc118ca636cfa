#include "defs_test_util.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tu_mkdtemp(void)
{
    char tmpl[] = "/tmp/mc-defs-test-XXXXXX";
    if (!mkdtemp(tmpl))
        return NULL;
    return strdup(tmpl);
}

static int mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return 0;
}

int tu_write(const char *dir, const char *rel, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    if (mkdirs(path) != 0)
        return -1;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    size_t n = strlen(text);
    int rc = fwrite(text, 1, n, f) == n ? 0 : -1;
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void tu_rmtree(const char *dir)
{
    if (dir && !strncmp(dir, "/tmp/mc-defs-test-", 18))
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *tu_example_res(char *out, size_t len)
{
    const char *src = getenv("MC_SOURCE_DIR");
    snprintf(out, len, "%s/defs", src ? src : ".");
    return out;
}

char *tu_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long n = ftell(f);
    rewind(f);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static const char *const example_files[] = {
    "entities.xml",
    "entity_defs/alias.xml",
    "entity_defs/Account.def",
    "entity_defs/Avatar.def",
    "entity_defs/Space.def",
    "entity_defs/interfaces/Timed.def",
    "entity_defs/interfaces/Tagged.def",
};

char *tu_copy_example(void)
{
    char *dir = tu_mkdtemp();
    if (!dir)
        return NULL;
    for (size_t i = 0; i < sizeof(example_files) / sizeof(example_files[0]); i++) {
        char res[4096], path[8192];
        snprintf(path, sizeof(path), "%s/%s", tu_example_res(res, sizeof(res)),
                 example_files[i]);
        char *text = tu_read(path);
        if (!text || tu_write(dir, example_files[i], text) != 0) {
            free(text);
            tu_rmtree(dir);
            free(dir);
            return NULL;
        }
        free(text);
    }
    return dir;
}

int tu_replace(const char *dir, const char *rel, const char *from, const char *to)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    char *text = tu_read(path);
    if (!text)
        return -1;
    char *at = strstr(text, from);
    if (!at) {
        free(text);
        return -1;
    }
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    if (!out) {
        free(text);
        return -1;
    }
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    int rc = tu_write(dir, rel, out);
    free(out);
    free(text);
    return rc;
}

int capture_send(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t index,
                 const uint8_t *args, size_t len)
{
    capture *c = ctx;
    if (len > sizeof(c->bytes))
        return -1;
    c->calls++;
    c->to = *to;
    c->part = part;
    c->index = index;
    memcpy(c->bytes, args, len);
    c->len = len;
    return 0;
}

int capture_request(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t index,
                    const uint8_t *args, size_t len, mc_reply_fn on_reply, void *cb, void *ud)
{
    capture *c = ctx;
    if (c->request_status)
        return c->request_status;
    int rc = capture_send(ctx, to, part, index, args, len);
    if (rc == 0) {
        c->on_reply = on_reply;
        c->cb = cb;
        c->ud = ud;
    }
    return rc;
}

int capture_fan_out(void *ctx, const mc_clients *to, uint16_t index, const uint8_t *args,
                    size_t len)
{
    capture *c = ctx;
    if (len > sizeof(c->bytes))
        return -1;
    c->calls++;
    c->fan_out_to = *to;
    c->part = MC_PART_CLIENT;
    c->index = index;
    memcpy(c->bytes, args, len);
    c->len = len;
    return 0;
}
