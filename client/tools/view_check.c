/* The cellapps' views through the watcher tool (view_check.h). */
#define _POSIX_C_SOURCE 200809L
#include "view_check.h"

#include <errno.h>
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

static int by_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* "cellappNN  entities/<id>/aoi/inView  <n>" of witnesses ("... aoi/witness  true"). */
static void parse(view_check *v)
{
    size_t lines = 0;
    for (size_t i = 0; i < v->len; i++)
        lines += v->out[i] == '\n';
    int32_t *pairs = calloc(lines ? lines * 2 : 2, sizeof *pairs);
    int32_t *wit = calloc(lines ? lines : 1, sizeof *wit);
    if (!pairs || !wit) {
        free(pairs);
        free(wit);
        return;
    }
    size_t np = 0, nw = 0;
    char *save = NULL;
    for (char *line = strtok_r(v->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char proc[64], path[200], val[64];
        if (sscanf(line, "%63s %199s %63s", proc, path, val) != 3)
            continue;
        int id;
        char tail[64];
        if (sscanf(path, "entities/%d/aoi/%63s", &id, tail) != 2)
            continue;
        if (!strcmp(tail, "inView")) {
            pairs[2 * np] = id;
            pairs[2 * np + 1] = (int32_t)atol(val);
            np++;
        } else if (!strcmp(tail, "witness") && !strcmp(val, "true")) {
            wit[nw++] = id;
        }
    }
    qsort(wit, nw, sizeof *wit, by_id);
    qsort(pairs, np, 2 * sizeof *pairs, by_id); /* pairs (id, count) by id */
    v->ids = calloc(np ? np : 1, sizeof *v->ids);
    v->in_view = calloc(np ? np : 1, sizeof *v->in_view);
    if (v->ids && v->in_view)
        for (size_t i = 0; i < np; i++)
            if (bsearch(&pairs[2 * i], wit, nw, sizeof *wit, by_id)) {
                v->ids[v->n] = pairs[2 * i];
                v->in_view[v->n] = (uint32_t)pairs[2 * i + 1];
                v->n++;
            }
    free(pairs);
    free(wit);
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
    memset(v, 0, sizeof *v);
    v->fd = -1;
}
