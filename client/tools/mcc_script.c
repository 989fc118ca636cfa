/* Parsing mc-client's command lines (mcc_script.h). */
#include "mcc_script.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *skip_ws(char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return p;
}

/* The next word (NUL-terminated in place); *p moves past it. */
static char *word(char **p)
{
    char *s = skip_ws(*p);
    char *e = s;
    while (*e && !isspace((unsigned char)*e))
        e++;
    if (*e)
        *e++ = '\0';
    *p = e;
    return s;
}

static int number(char **p, float *out)
{
    char *w = word(p), *end;
    errno = 0;
    double v = strtod(w, &end);
    if (!*w || *end || errno || !isfinite(v))
        return -1;
    *out = (float)v;
    return 0;
}

int mcc_parse(char *line, mcc_command *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    line[strcspn(line, "\r\n")] = '\0';
    char *p = skip_ws(line);
    if (!*p || *p == '#')
        return 0;
    char *verb = word(&p);
    if (!strcmp(verb, "base") || !strcmp(verb, "cell")) {
        out->kind = verb[0] == 'b' ? MCC_BASE : MCC_CELL;
        char *m = word(&p);
        if (!*m || strlen(m) >= sizeof out->name) {
            snprintf(err, errlen, "'%s' needs a method name: %s METHOD [JSON-ARGS]", verb, verb);
            return -1;
        }
        snprintf(out->name, sizeof out->name, "%s", m);
        out->json = skip_ws(p);
        return 0;
    }
    if (!strcmp(verb, "move")) {
        out->kind = MCC_MOVE;
        if (number(&p, &out->pos.x) || number(&p, &out->pos.y) || number(&p, &out->pos.z)) {
            snprintf(err, errlen, "move X Y Z [DX DY DZ]: three finite numbers first");
            return -1;
        }
        out->dir = (mc_vector3){0, 0, 1};
        if (*skip_ws(p) && (number(&p, &out->dir.x) || number(&p, &out->dir.y) ||
                            number(&p, &out->dir.z) || *skip_ws(p))) {
            snprintf(err, errlen, "move X Y Z [DX DY DZ]: the direction is three finite numbers");
            return -1;
        }
        return 0;
    }
    if (!strcmp(verb, "wait")) {
        out->kind = MCC_WAIT;
        char *w = word(&p), *end;
        errno = 0;
        unsigned long ms = strtoul(w, &end, 10);
        if (!*w || *end || errno || ms > 3600000ul || *skip_ws(p) || *w == '-') {
            snprintf(err, errlen, "wait MS: milliseconds, 0..3600000");
            return -1;
        }
        out->ms = ms;
        return 0;
    }
    if (!strcmp(verb, "expect")) {
        out->kind = MCC_EXPECT;
        char *n = word(&p);
        const char *text = skip_ws(p);
        if (!*n || strlen(n) >= sizeof out->name || strlen(text) >= sizeof out->text) {
            snprintf(err, errlen, "expect NAME [TEXT]: a client method name (and at most %zu "
                                  "bytes of text its arguments contain)", sizeof out->text - 1);
            return -1;
        }
        snprintf(out->name, sizeof out->name, "%s", n);
        snprintf(out->text, sizeof out->text, "%s", text);
        return 0;
    }
    if (!strcmp(verb, "quit") || !strcmp(verb, "exit")) {
        out->kind = MCC_QUIT;
        return 0;
    }
    snprintf(err, errlen, "unknown command '%s' (base, cell, move, wait, expect, quit)", verb);
    return -1;
}
