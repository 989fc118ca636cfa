/* Entity id ranges and the state file that keeps them unique across manager restarts. */
#include "id_ranges.h"
#include "server/control.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATE_MAGIC "mercury-cluster manager state 1"

/* Write all of buf to fd. */
static bool write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

bool mc_id_ranges_write_state(const char *path, uint64_t reserved, char *why, size_t whylen)
{
    char tmp[4200], dir[4200], text[128];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    snprintf(dir, sizeof dir, "%s", path);
    int len = snprintf(text, sizeof text, STATE_MAGIC "\nidReserved %" PRIu64 "\n", reserved);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(why, whylen, "cannot write the state file %s: %s", tmp, strerror(errno));
        return false;
    }
    bool ok = write_all(fd, text, (size_t)len) && fsync(fd) == 0;
    int saved = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (!ok || rename(tmp, path) != 0) {
        if (ok)
            saved = errno;
        snprintf(why, whylen, "cannot write the state file %s: %s", path, strerror(saved));
        unlink(tmp);
        return false;
    }
    /* The rename is durable once the directory is. */
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) != 0) {
        snprintf(why, whylen, "cannot sync the state file's directory: %s", strerror(errno));
        if (dfd >= 0)
            close(dfd);
        return false;
    }
    close(dfd);
    return true;
}

/* Parse the state file's text; false with a reason. */
static bool parse_state(const char *text, uint64_t *reserved, char *why, size_t whylen)
{
    size_t ml = strlen(STATE_MAGIC);
    if (strncmp(text, STATE_MAGIC "\n", ml + 1) != 0) {
        snprintf(why, whylen, "does not start with '%s'", STATE_MAGIC);
        return false;
    }
    const char *p = text + ml + 1;
    if (strncmp(p, "idReserved ", 11) != 0) {
        snprintf(why, whylen, "no 'idReserved N' line");
        return false;
    }
    p += 11;
    uint64_t v = 0;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 12) {
        v = v * 10 + (uint64_t)(*p - '0');
        p++;
        digits++;
    }
    if (digits == 0 || strcmp(p, "\n") != 0 || v < 1 || v > MC_ID_END) {
        snprintf(why, whylen, "idReserved is not a number in 1..%u followed by the end of the "
                 "file", MC_ID_END);
        return false;
    }
    *reserved = v;
    return true;
}

/* Read the state file: true with *exists false when there is none, or *exists true and
 * *reserved; false with a reason ("--stateFile: ...") when it cannot be read or is corrupt. */
static bool read_state(const char *path, bool *exists, uint64_t *reserved, char *why,
                       size_t whylen)
{
    *exists = false;
    if (strlen(path) >= sizeof(((mc_id_ranges *)0)->path)) {
        snprintf(why, whylen, "--stateFile: path too long");
        return false;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return true;
        snprintf(why, whylen, "--stateFile: cannot read %s: %s", path, strerror(errno));
        return false;
    }
    char text[256];
    size_t n = fread(text, 1, sizeof text - 1, f);
    bool too_long = n == sizeof text - 1 && fgetc(f) != EOF;
    bool err = ferror(f);
    fclose(f);
    text[n] = '\0';
    char w[256];
    const char *problem = err ? "cannot be read (a directory?)" : too_long ? "too long"
                          : memchr(text, '\0', n) ? "binary data" : NULL;
    if (problem || !parse_state(text, reserved, w, sizeof w)) {
        snprintf(why, whylen, "--stateFile: %s is corrupt: %s", path, problem ? problem : w);
        return false;
    }
    *exists = true;
    return true;
}

bool mc_id_ranges_check(const char *path, char *why, size_t whylen)
{
    if (!path || !*path)
        return true;
    bool exists;
    uint64_t reserved;
    if (!read_state(path, &exists, &reserved, why, whylen))
        return false;
    if (!exists) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s", path);
        const char *d = dirname(dir);
        if (access(d, W_OK) != 0) {
            snprintf(why, whylen, "--stateFile: cannot create %s: %s: %s", path, d,
                     strerror(errno));
            return false;
        }
    }
    return true;
}

bool mc_id_ranges_open(mc_id_ranges *r, const char *path, char *why, size_t whylen)
{
    memset(r, 0, sizeof *r);
    r->next = 1;
    if (!path || !*path) {
        r->reserved = MC_ID_END; /* nothing to persist */
        return true;
    }
    bool exists;
    if (!read_state(path, &exists, &r->reserved, why, whylen))
        return false;
    snprintf(r->path, sizeof r->path, "%s", path);
    if (exists) {
        r->next = r->reserved;
        return true;
    }
    /* A new cluster: create the file now, so an unwritable path fails at start. */
    r->reserved = 1;
    char w[512];
    if (!mc_id_ranges_write_state(path, r->reserved, w, sizeof w)) {
        snprintf(why, whylen, "--stateFile: %s", w);
        return false;
    }
    r->writes++;
    return true;
}

mc_ids_status mc_id_ranges_take(mc_id_ranges *r, uint32_t count, uint32_t *first, uint32_t *got,
                                char *why, size_t whylen)
{
    *first = *got = 0;
    if (count < 1 || count > MC_ID_RANGE_MAX_COUNT) {
        snprintf(why, whylen, "count %u is outside 1..%u", count, MC_ID_RANGE_MAX_COUNT);
        return MC_IDS_BAD_COUNT;
    }
    if (r->next >= MC_ID_END) {
        snprintf(why, whylen, "entity ids exhausted: every id up to %u has been handed out",
                 MC_ID_END - 1);
        return MC_IDS_EXHAUSTED;
    }
    uint64_t end = r->next + count;
    if (end > MC_ID_END)
        end = MC_ID_END;
    if (end > r->reserved) {
        uint64_t reserve = end + MC_ID_RESERVE_STEP;
        if (reserve > MC_ID_END)
            reserve = MC_ID_END;
        char w[512];
        if (!mc_id_ranges_write_state(r->path, reserve, w, sizeof w)) {
            snprintf(why, whylen, "%s", w);
            return MC_IDS_WRITE_FAILED;
        }
        r->reserved = reserve;
        r->writes++;
    }
    *first = (uint32_t)r->next;
    *got = (uint32_t)(end - r->next);
    r->next = end;
    r->ranges++;
    return MC_IDS_OK;
}
