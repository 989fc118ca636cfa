/* The cellapps' views through the watcher tool (view_check.h). */
#define _POSIX_C_SOURCE 200809L
#include "view_check.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int view_check_start(view_check *v, const char *watcher, const char *manager, char *err,
                     size_t errlen)
{
    memset(v, 0, sizeof *v);
    v->fd = -1;
    v->status = -1;
    int p[2];
    if (pipe(p) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        long maxfd = sysconf(_SC_OPEN_MAX);
        for (long fd = 3; fd < (maxfd > 0 && maxfd < 65536 ? maxfd : 65536); fd++)
            close((int)fd); /* the bots' sockets stay with the bots */
        char mopt[128];
        snprintf(mopt, sizeof mopt, "--manager=%s", manager ? manager : "");
        char *argv[] = {(char *)watcher, "--timeout", "15000", "get", "cellapps", "entities",
                        NULL, NULL};
        if (manager && *manager) {
            memmove(&argv[2], &argv[1], 5 * sizeof argv[0]);
            argv[1] = mopt;
        }
        execv(watcher, argv);
        _exit(127);
    }
    close(p[1]);
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    v->pid = pid;
    v->fd = p[0];
    return 0;
}

/* One parsed watcher line: an entity's aoi value. */
typedef struct {
    int32_t id;
    uint32_t in_view;
    const char *view_ids;
    bool witness;
} aoi_row;

static int row_by_id(const void *a, const void *b)
{
    int32_t x = ((const aoi_row *)a)->id, y = ((const aoi_row *)b)->id;
    return (x > y) - (x < y);
}

/* Lines "cellappNN  entities/<id>/aoi/<name>  <value>"; an entity's rows merged; only
 * witnesses kept. The watcher lists an entity's values together, sorted by path. */
static void parse(view_check *v)
{
    size_t lines = 0;
    for (size_t i = 0; i < v->len; i++)
        lines += v->out[i] == '\n';
    aoi_row *rows = calloc(lines ? lines : 1, sizeof *rows);
    if (!rows)
        return;
    size_t nr = 0;
    char *save = NULL;
    for (char *line = strtok_r(v->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *p = strstr(line, " entities/");
        int id, used = 0;
        if (!p || sscanf(p + 1, "entities/%d/aoi/%n", &id, &used) != 1 || !used)
            continue;
        char *name = p + 1 + used, *val = name;
        while (*val && *val != ' ')
            val++;
        size_t nlen = (size_t)(val - name);
        while (*val == ' ')
            val++;
        if (!nr || rows[nr - 1].id != id)
            rows[nr++] = (aoi_row){.id = id};
        aoi_row *r = &rows[nr - 1];
        if (nlen == 6 && !strncmp(name, "inView", 6))
            r->in_view = (uint32_t)strtoul(val, NULL, 10);
        else if (nlen == 7 && !strncmp(name, "viewIds", 7))
            r->view_ids = val;
        else if (nlen == 7 && !strncmp(name, "witness", 7))
            r->witness = !strcmp(val, "true");
    }
    qsort(rows, nr, sizeof *rows, row_by_id);
    v->ids = calloc(nr ? nr : 1, sizeof *v->ids);
    v->in_view = calloc(nr ? nr : 1, sizeof *v->in_view);
    v->view_ids = calloc(nr ? nr : 1, sizeof *v->view_ids);
    if (v->ids && v->in_view && v->view_ids)
        for (size_t i = 0; i < nr; i++)
            if (rows[i].witness) {
                v->ids[v->n] = rows[i].id;
                v->in_view[v->n] = rows[i].in_view;
                v->view_ids[v->n] = rows[i].view_ids;
                v->n++;
            }
    free(rows);
}

static void finish(view_check *v)
{
    close(v->fd);
    v->fd = -1;
    int st = 0;
    if (v->pid > 0 && waitpid(v->pid, &st, 0) == v->pid)
        v->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    v->pid = 0;
    if (v->out) {
        v->out[v->len] = '\0';
        parse(v);
    }
    v->done = true;
}

void view_check_read(view_check *v)
{
    if (v->fd < 0)
        return;
    for (int i = 0; i < 64; i++) {
        if (v->cap - v->len < 65536) {
            size_t cap = v->cap ? v->cap * 2 : 1u << 20;
            char *o = cap <= VIEW_CHECK_MAX_OUTPUT ? realloc(v->out, cap + 1) : NULL;
            if (!o) { /* too much: give up on this check */
                kill(v->pid, SIGKILL);
                v->len = 0;
                finish(v);
                return;
            }
            v->out = o;
            v->cap = cap;
        }
        ssize_t n = read(v->fd, v->out + v->len, v->cap - v->len);
        if (n > 0) {
            v->len += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        finish(v); /* the end of the output */
        return;
    }
}

static long find(const view_check *v, int32_t id)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->ids[mid] == id)
            return (long)mid;
        if (v->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int view_check_same_ids(const view_check *v, int32_t id, const int32_t *ids, size_t n)
{
    long k = find(v, id);
    if (k < 0 || !v->view_ids[k])
        return -1;
    const char *p = v->view_ids[k];
    size_t i = 0;
    while (*p) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p)
            return 0;
        if (i >= n || ids[i] != (int32_t)x)
            return 0;
        i++;
        p = end;
        while (*p == ' ')
            p++;
    }
    return i == n;
}

int view_check_in_view(const view_check *v, int32_t id, uint32_t *out)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->ids[mid] == id) {
            *out = v->in_view[mid];
            return 0;
        }
        if (v->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

void view_check_free(view_check *v)
{
    if (v->fd >= 0)
        close(v->fd);
    if (v->pid > 0) {
        kill(v->pid, SIGKILL);
        waitpid(v->pid, NULL, 0);
    }
    free(v->out);
    free(v->ids);
    free(v->in_view);
    free(v->view_ids);
    memset(v, 0, sizeof *v);
    v->fd = -1;
}
