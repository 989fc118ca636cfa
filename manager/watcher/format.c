/* Plain-text and JSON output of the watcher tool. */
#include "format.h"
#include "exit_codes.h"
#include "server/role.h"
#include "server/watcher_service.h"

#include <stdlib.h>
#include <string.h>

int wt_exit_for_status(Mc__Control__WatcherStatus st)
{
    switch (st) {
    case MC__CONTROL__WATCHER_STATUS__WS_OK: return WT_EXIT_OK;
    case MC__CONTROL__WATCHER_STATUS__WS_NOT_FOUND:
    case MC__CONTROL__WATCHER_STATUS__WS_BAD_PATH: return WT_EXIT_UNKNOWN_PATH;
    case MC__CONTROL__WATCHER_STATUS__WS_READ_ONLY: return WT_EXIT_READ_ONLY;
    case MC__CONTROL__WATCHER_STATUS__WS_BAD_VALUE: return WT_EXIT_BAD_VALUE;
    case MC__CONTROL__WATCHER_STATUS__WS_NOT_DIRECTORY:
    case MC__CONTROL__WATCHER_STATUS__WS_IS_DIRECTORY:
    case MC__CONTROL__WATCHER_STATUS__WS_NOT_CALLABLE: return WT_EXIT_WRONG_KIND;
    case MC__CONTROL__WATCHER_STATUS__WS_REFUSED: return WT_EXIT_REFUSED;
    default: return WT_EXIT_FAILURE;
    }
}

void wt_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

/* Is s a number as JSON writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool json_number(const char *s)
{
    const char *p = s + (*s == '-');
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        p += strspn(p, "0123456789");
    else
        return false;
    if (*p == '.') {
        size_t n = strspn(p + 1, "0123456789");
        if (n == 0)
            return false;
        p += 1 + n;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        size_t n = strspn(p, "0123456789");
        if (n == 0)
            return false;
        p += n;
    }
    return *p == '\0';
}

/* A value in JSON: numbers and bools bare (when they are valid JSON), everything else a
 * string. */
static void json_value(FILE *out, const Mc__Control__WatcherEntry *e)
{
    const char *v = e->value ? e->value : "";
    bool bare = false;
    switch (e->type) {
    case MC__CONTROL__WATCHER_TYPE__WT_INT:
    case MC__CONTROL__WATCHER_TYPE__WT_UINT:
    case MC__CONTROL__WATCHER_TYPE__WT_FLOAT:
        bare = json_number(v);
        break;
    case MC__CONTROL__WATCHER_TYPE__WT_BOOL:
        bare = strcmp(v, "true") == 0 || strcmp(v, "false") == 0;
        break;
    default: break;
    }
    if (bare)
        fputs(v, out);
    else
        wt_json_string(out, v);
}

static void print_json(FILE *out, const wt_args *a, const wt_result *results, size_t n,
                       int code)
{
    fputs("{\"command\":", out);
    wt_json_string(out, wt_command_name(a->command));
    fputs(",\"target\":", out);
    wt_json_string(out, a->target);
    fputs(",\"path\":", out);
    wt_json_string(out, a->path);
    fprintf(out, ",\"exit\":%d,\"processes\":[", code);
    for (size_t i = 0; i < n; i++) {
        const wt_result *r = &results[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        wt_json_string(out, r->process);
        fprintf(out, ",\"ok\":%s", r->exit_code == WT_EXIT_OK ? "true" : "false");
        if (r->exit_code != WT_EXIT_OK) {
            fprintf(out, ",\"exit\":%d,\"error\":", r->exit_code);
            wt_json_string(out, r->error);
        }
        if (r->reply && r->exit_code == WT_EXIT_OK) {
            fputs(",\"entries\":[", out);
            for (size_t k = 0; k < r->reply->n_entries; k++) {
                const Mc__Control__WatcherEntry *e = r->reply->entries[k];
                fputs(k ? ",{\"path\":" : "{\"path\":", out);
                wt_json_string(out, e->path);
                if (e->is_directory) {
                    fputs(",\"directory\":true}", out);
                    continue;
                }
                fputs(",\"type\":", out);
                wt_json_string(out, mc_wire_type_name(e->type));
                fputs(",\"mode\":", out);
                wt_json_string(out, mc_wire_mode_name(e->mode));
                if (e->has_value) {
                    fputs(",\"value\":", out);
                    json_value(out, e);
                }
                fputc('}', out);
            }
            fputc(']', out);
            if (r->reply->has_result) {
                fputs(",\"result\":", out);
                wt_json_string(out, r->reply->result);
            }
        }
        fputc('}', out);
    }
    fputs("]}\n", out);
}

/* One row of text output: up to 4 columns. */
typedef struct {
    const char *col[4];
} row;

/* A value on one line: control characters are shown as \n, \t, \r or \xNN. */
static void print_text_value(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\n')
            fputs("\\n", out);
        else if (*p == '\t')
            fputs("\\t", out);
        else if (*p == '\r')
            fputs("\\r", out);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\x%02x", *p);
        else
            fputc(*p, out);
    }
    fputc('\n', out);
}

static void print_rows(FILE *out, const row *rows, size_t n)
{
    size_t width[4] = {0};
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            if (rows[i].col[c] && strlen(rows[i].col[c]) > width[c])
                width[c] = strlen(rows[i].col[c]);
    for (size_t i = 0; i < n; i++) {
        int last = 3;
        while (last > 0 && !rows[i].col[last])
            last--;
        for (int c = 0; c <= last; c++) {
            const char *s = rows[i].col[c] ? rows[i].col[c] : "";
            if (c == last)
                print_text_value(out, s);
            else
                fprintf(out, "%-*s  ", (int)width[c], s);
        }
    }
}

int wt_print_results(FILE *out, FILE *err, const wt_args *a, const wt_result *results,
                     size_t n)
{
    int code = WT_EXIT_OK;
    for (size_t i = 0; i < n; i++)
        if (results[i].exit_code != WT_EXIT_OK) {
            code = results[i].exit_code;
            break;
        }
    if (a->json) {
        print_json(out, a, results, n, code);
        return code;
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (results[i].reply && results[i].exit_code == WT_EXIT_OK)
            total += results[i].reply->n_entries + 1;
    row *rows = calloc(total ? total : 1, sizeof *rows);
    char (*names)[128] = calloc(total ? total : 1, sizeof *names);
    if (!rows || !names) {
        free(rows);
        free(names);
        fprintf(err, "watcher: out of memory\n");
        return WT_EXIT_FAILURE;
    }
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        const wt_result *r = &results[i];
        if (r->exit_code != WT_EXIT_OK || !r->reply)
            continue;
        if (a->command == WT_CMD_CALL) {
            rows[nr++] = (row){{r->process, a->path,
                                r->reply->has_result ? r->reply->result : "ok", NULL}};
            continue;
        }
        for (size_t k = 0; k < r->reply->n_entries; k++) {
            const Mc__Control__WatcherEntry *e = r->reply->entries[k];
            row *w = &rows[nr++];
            w->col[0] = r->process;
            if (e->is_directory) {
                snprintf(names[nr - 1], sizeof names[0], "%s/", e->path);
                w->col[1] = names[nr - 1];
                w->col[2] = "dir";
            } else if (a->command == WT_CMD_LS) {
                w->col[1] = e->path;
                w->col[2] = mc_wire_mode_name(e->mode);
                w->col[3] = e->mode == MC__CONTROL__WATCHER_MODE__WM_CALLABLE
                                ? NULL
                                : mc_wire_type_name(e->type);
            } else {
                w->col[1] = e->path;
                w->col[2] = e->has_value ? e->value : "(callable)";
            }
        }
    }
    print_rows(out, rows, nr);
    free(rows);
    free(names);
    /* Every process failing the same way is one failure: one line. */
    bool same = n > 1;
    for (size_t i = 0; same && i < n; i++)
        same = results[i].exit_code != WT_EXIT_OK && results[i].exit_code == results[0].exit_code;
    if (same) {
        fprintf(err, "watcher: %s: %s (and the same on the other %zu processes)\n",
                results[0].process, results[0].error, n - 1);
        return code;
    }
    for (size_t i = 0; i < n; i++)
        if (results[i].exit_code != WT_EXIT_OK)
            fprintf(err, "watcher: %s: %s\n", results[i].process, results[i].error);
    return code;
}

void wt_print_status(FILE *out, bool json, const Mc__Control__QueryReply *reply)
{
    if (json) {
        fputs("{\"processes\":[", out);
        for (size_t i = 0; i < reply->n_processes; i++) {
            const Mc__Control__ProcessInfo *p = reply->processes[i];
            fputs(i ? ",{\"name\":" : "{\"name\":", out);
            wt_json_string(out, p->name);
            fputs(",\"role\":", out);
            wt_json_string(out, mc_role_name(p->role));
            fputs(",\"state\":", out);
            wt_json_string(out, mc_state_name(p->state));
            fprintf(out, ",\"id\":%u,\"pid\":%u,\"load\":%.3f,\"uptime_ms\":%llu,"
                         "\"heartbeat_age_ms\":%llu,\"internal\":",
                    p->id, p->pid, p->load, (unsigned long long)p->uptime_ms,
                    (unsigned long long)p->heartbeat_age_ms);
            wt_json_string(out, p->internal_addr);
            fputs(",\"external\":", out);
            wt_json_string(out, p->external_addr);
            fputs(",\"host\":", out);
            wt_json_string(out, p->host);
            fputs(",\"reason\":", out);
            wt_json_string(out, p->death_reason);
            fputc('}', out);
        }
        fputs("]}\n", out);
        return;
    }
    const char *hdr[] = {"NAME", "ROLE", "STATE", "PID", "LOAD", "INTERNAL", "EXTERNAL",
                         "UPTIME", "NOTE"};
    enum { NCOL = 9 };
    size_t n = reply->n_processes;
    char (*cells)[NCOL][96] = calloc(n + 1, sizeof *cells);
    if (!cells)
        return;
    for (int c = 0; c < NCOL; c++)
        snprintf(cells[0][c], sizeof cells[0][c], "%s", hdr[c]);
    for (size_t i = 0; i < n; i++) {
        const Mc__Control__ProcessInfo *p = reply->processes[i];
        char (*r)[96] = cells[i + 1];
        snprintf(r[0], 96, "%s", p->name);
        snprintf(r[1], 96, "%s", mc_role_name(p->role));
        snprintf(r[2], 96, "%s", mc_state_name(p->state));
        snprintf(r[3], 96, "%u", p->pid);
        snprintf(r[4], 96, "%.2f", p->load);
        snprintf(r[5], 96, "%s", p->internal_addr);
        snprintf(r[6], 96, "%s", p->external_addr[0] ? p->external_addr : "-");
        snprintf(r[7], 96, "%llu.%llus", (unsigned long long)(p->uptime_ms / 1000),
                 (unsigned long long)(p->uptime_ms % 1000 / 100));
        snprintf(r[8], 96, "%s", p->death_reason);
    }
    size_t width[NCOL] = {0};
    for (size_t i = 0; i <= n; i++)
        for (int c = 0; c < NCOL; c++)
            if (strlen(cells[i][c]) > width[c])
                width[c] = strlen(cells[i][c]);
    for (size_t i = 0; i <= n; i++) {
        char line[NCOL * 100];
        size_t used = 0;
        for (int c = 0; c < NCOL && used < sizeof line; c++) {
            int w = snprintf(line + used, sizeof line - used, "%-*s  ", (int)width[c],
                             cells[i][c]);
            if (w > 0)
                used += (size_t)w;
        }
        if (used >= sizeof line)
            used = sizeof line - 1;
        while (used > 0 && line[used - 1] == ' ')
            used--;
        line[used] = '\0';
        fprintf(out, "%s\n", line);
    }
    free(cells);
}

void wt_print_error(FILE *out, FILE *err, bool json, int code, const char *message)
{
    if (json) {
        fprintf(out, "{\"exit\":%d,\"error\":", code);
        wt_json_string(out, message);
        fputs("}\n", out);
    } else {
        fprintf(err, "watcher: %s\n", message);
    }
}
