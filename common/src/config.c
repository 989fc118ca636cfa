/* Options from defaults, a config file and the command line. */
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const mc_option *opt;
    char *text; /* canonical text of the current value */
    union {
        int64_t i;
        uint64_t u;
        double f;
        bool b;
    } v;
} option_value;

struct mc_config {
    const char *program;
    const char *summary;
    option_value *values;
    size_t count;
    char **positional;
    size_t positional_count;
    FILE *help_out;
};

bool mc_parse_int(const char *text, int64_t *out)
{
    if (!text || !*text || isspace((unsigned char)*text))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 0);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

bool mc_parse_uint(const char *text, uint64_t *out)
{
    if (!text || !*text || isspace((unsigned char)*text) || *text == '-' || *text == '+')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

bool mc_parse_float(const char *text, double *out)
{
    if (!text || !*text || isspace((unsigned char)*text))
        return false;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

bool mc_parse_bool(const char *text, bool *out)
{
    if (!text)
        return false;
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

static const char *type_name(mc_option_type t)
{
    switch (t) {
    case MC_OPT_STRING: return "string";
    case MC_OPT_INT: return "int";
    case MC_OPT_UINT: return "uint";
    case MC_OPT_FLOAT: return "float";
    case MC_OPT_BOOL: return "bool";
    }
    return "?";
}

static option_value *find(const mc_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->count; i++)
        if (strcmp(cfg->values[i].opt->name, name) == 0)
            return &cfg->values[i];
    return NULL;
}

/* Parse and store; returns false with a reason. */
static bool assign(option_value *ov, const char *text, char *err, size_t errlen)
{
    char canon[64];
    const char *stored = text;
    switch (ov->opt->type) {
    case MC_OPT_STRING:
        break;
    case MC_OPT_INT: {
        int64_t v;
        if (!mc_parse_int(text, &v)) {
            mc_set_error(err, errlen, "option --%s expects an integer, got '%s'", ov->opt->name, text);
            return false;
        }
        ov->v.i = v;
        snprintf(canon, sizeof canon, "%lld", (long long)v);
        stored = canon;
        break;
    }
    case MC_OPT_UINT: {
        uint64_t v;
        if (!mc_parse_uint(text, &v)) {
            mc_set_error(err, errlen, "option --%s expects an unsigned integer, got '%s'",
                    ov->opt->name, text);
            return false;
        }
        ov->v.u = v;
        snprintf(canon, sizeof canon, "%llu", (unsigned long long)v);
        stored = canon;
        break;
    }
    case MC_OPT_FLOAT: {
        double v;
        if (!mc_parse_float(text, &v)) {
            mc_set_error(err, errlen, "option --%s expects a number, got '%s'", ov->opt->name, text);
            return false;
        }
        ov->v.f = v;
        snprintf(canon, sizeof canon, "%g", v);
        stored = canon;
        break;
    }
    case MC_OPT_BOOL: {
        bool v;
        if (!mc_parse_bool(text, &v)) {
            mc_set_error(err, errlen, "option --%s expects true or false, got '%s'", ov->opt->name,
                    text);
            return false;
        }
        ov->v.b = v;
        stored = v ? "true" : "false";
        break;
    }
    }
    char *copy = strdup(stored);
    if (!copy) {
        mc_set_error(err, errlen, "out of memory setting --%s", ov->opt->name);
        return false;
    }
    free(ov->text);
    ov->text = copy;
    return true;
}

mc_config *mc_config_new(const char *program, const char *summary, const mc_option *options,
                         size_t count)
{
    mc_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return NULL;
    cfg->program = program;
    cfg->summary = summary;
    cfg->values = calloc(count ? count : 1, sizeof *cfg->values);
    if (!cfg->values) {
        free(cfg);
        return NULL;
    }
    cfg->count = count;
    for (size_t i = 0; i < count; i++) {
        const mc_option *o = &options[i];
        cfg->values[i].opt = o;
        if (!o->name || !*o->name || strcmp(o->name, "help") == 0 ||
            strcmp(o->name, "config") == 0 || strchr(o->name, '=')) {
            MC_ERROR("option table of %s: invalid option name '%s'", program,
                     o->name ? o->name : "(null)");
            cfg->count = i;
            mc_config_free(cfg);
            return NULL;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(options[j].name, o->name) == 0) {
                MC_ERROR("option table of %s: duplicate option '%s'", program, o->name);
                cfg->count = i;
                mc_config_free(cfg);
                return NULL;
            }
        }
        const char *def = o->default_value;
        if (!def)
            def = o->type == MC_OPT_STRING ? "" : (o->type == MC_OPT_BOOL ? "false" : "0");
        char err[256];
        if (!assign(&cfg->values[i], def, err, sizeof err)) {
            MC_ERROR("option table of %s: bad default: %s", program, err);
            cfg->count = i + 1;
            mc_config_free(cfg);
            return NULL;
        }
    }
    return cfg;
}

void mc_config_free(mc_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->count; i++)
        free(cfg->values[i].text);
    free(cfg->values);
    for (size_t i = 0; i < cfg->positional_count; i++)
        free(cfg->positional[i]);
    free(cfg->positional);
    free(cfg);
}

mc_config_status mc_config_set(mc_config *cfg, const char *name, const char *value, char *err,
                               size_t errlen)
{
    option_value *ov = find(cfg, name);
    if (!ov) {
        mc_set_error(err, errlen, "unknown option --%s (see --help)", name);
        return MC_CONFIG_ERROR;
    }
    if (!value) {
        mc_set_error(err, errlen, "option --%s needs a value", name);
        return MC_CONFIG_ERROR;
    }
    return assign(ov, value, err, errlen) ? MC_CONFIG_OK : MC_CONFIG_ERROR;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

mc_config_status mc_config_load_file(mc_config *cfg, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        mc_set_error(err, errlen, "cannot open config file %s: %s", path, strerror(errno));
        return MC_CONFIG_ERROR;
    }
    char line[4096];
    int lineno = 0;
    mc_config_status st = MC_CONFIG_OK;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(f)) {
            mc_set_error(err, errlen, "%s:%d: line too long", path, lineno);
            st = MC_CONFIG_ERROR;
            break;
        }
        char *s = trim(line);
        if (*s == '\0' || *s == '#')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            mc_set_error(err, errlen, "%s:%d: expected 'name = value', got '%s'", path, lineno, s);
            st = MC_CONFIG_ERROR;
            break;
        }
        *eq = '\0';
        char *name = trim(s);
        char *value = trim(eq + 1);
        char why[512];
        if (mc_config_set(cfg, name, value, why, sizeof why) != MC_CONFIG_OK) {
            mc_set_error(err, errlen, "%s:%d: %s", path, lineno, why);
            st = MC_CONFIG_ERROR;
            break;
        }
    }
    fclose(f);
    return st;
}

static bool add_positional(mc_config *cfg, const char *arg)
{
    char **p = realloc(cfg->positional, (cfg->positional_count + 1) * sizeof *p);
    if (!p)
        return false;
    cfg->positional = p;
    p[cfg->positional_count] = strdup(arg);
    if (!p[cfg->positional_count])
        return false;
    cfg->positional_count++;
    return true;
}

mc_config_status mc_config_parse_args(mc_config *cfg, int argc, char **argv, char *err,
                                      size_t errlen)
{
    /* --help wins; --config is applied before every other option. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            mc_config_print_help(cfg, cfg->help_out ? cfg->help_out : stdout);
            return MC_CONFIG_HELP;
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        const char *path = NULL;
        if (strcmp(argv[i], "--config") == 0) {
            if (i + 1 >= argc) {
                mc_set_error(err, errlen, "option --config needs a file name");
                return MC_CONFIG_ERROR;
            }
            path = argv[i + 1];
        } else if (strncmp(argv[i], "--config=", 9) == 0) {
            path = argv[i] + 9;
        }
        if (path && mc_config_load_file(cfg, path, err, errlen) != MC_CONFIG_OK)
            return MC_CONFIG_ERROR;
    }
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (options_done || strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (!options_done && strcmp(arg, "--") == 0) {
                options_done = true;
                continue;
            }
            if (!options_done && arg[0] == '-' && arg[1] != '\0' && !isdigit((unsigned char)arg[1])) {
                mc_set_error(err, errlen, "unknown option %s (options start with --; see --help)", arg);
                return MC_CONFIG_ERROR;
            }
            if (!add_positional(cfg, arg)) {
                mc_set_error(err, errlen, "out of memory");
                return MC_CONFIG_ERROR;
            }
            continue;
        }
        const char *name = arg + 2;
        if (strcmp(name, "config") == 0) {
            i++;
            continue;
        }
        if (strncmp(name, "config=", 7) == 0)
            continue;
        char namebuf[128];
        const char *value = NULL;
        const char *eq = strchr(name, '=');
        if (eq) {
            size_t n = (size_t)(eq - name);
            if (n >= sizeof namebuf) {
                mc_set_error(err, errlen, "option name too long: %.40s...", name);
                return MC_CONFIG_ERROR;
            }
            memcpy(namebuf, name, n);
            namebuf[n] = '\0';
            name = namebuf;
            value = eq + 1;
        }
        option_value *ov = find(cfg, name);
        if (!ov && !value && strncmp(name, "no-", 3) == 0) {
            option_value *neg = find(cfg, name + 3);
            if (neg && neg->opt->type == MC_OPT_BOOL) {
                if (!assign(neg, "false", err, errlen))
                    return MC_CONFIG_ERROR;
                continue;
            }
        }
        if (!ov) {
            mc_set_error(err, errlen, "unknown option --%s (see --help)", name);
            return MC_CONFIG_ERROR;
        }
        if (!value) {
            if (ov->opt->type == MC_OPT_BOOL) {
                value = "true";
            } else {
                if (i + 1 >= argc) {
                    mc_set_error(err, errlen, "option --%s needs a value", name);
                    return MC_CONFIG_ERROR;
                }
                value = argv[++i];
            }
        }
        if (!assign(ov, value, err, errlen))
            return MC_CONFIG_ERROR;
    }
    return MC_CONFIG_OK;
}

void mc_config_set_help_output(mc_config *cfg, FILE *out) { cfg->help_out = out; }

void mc_config_print_help(const mc_config *cfg, FILE *out)
{
    fprintf(out, "usage: %s [options]\n", cfg->program);
    if (cfg->summary && *cfg->summary)
        fprintf(out, "%s\n", cfg->summary);
    fprintf(out, "\noptions (also settable as 'name = value' lines in a --config file):\n");
    fprintf(out, "  --%-22s %s\n", "help", "print this help and exit");
    fprintf(out, "  --%-22s %s\n", "config FILE", "read options from FILE before the command line");
    for (size_t i = 0; i < cfg->count; i++) {
        const mc_option *o = cfg->values[i].opt;
        char left[64];
        snprintf(left, sizeof left, "%s %s", o->name,
                 o->type == MC_OPT_BOOL ? "[BOOL]" : (o->type == MC_OPT_STRING ? "TEXT" : "N"));
        const char *def = o->default_value ? o->default_value : "";
        fprintf(out, "  --%-22s %s (%s, default: %s)\n", left, o->help ? o->help : "",
                type_name(o->type), *def ? def : "none");
    }
}

bool mc_config_has(const mc_config *cfg, const char *name) { return find(cfg, name) != NULL; }

static const option_value *typed(const mc_config *cfg, const char *name, mc_option_type t)
{
    const option_value *ov = find(cfg, name);
    if (!ov) {
        MC_ERROR("config: no option named '%s'", name);
        return NULL;
    }
    if (ov->opt->type != t) {
        MC_ERROR("config: option '%s' is %s, read as %s", name, type_name(ov->opt->type),
                 type_name(t));
        return NULL;
    }
    return ov;
}

const char *mc_config_get_string(const mc_config *cfg, const char *name)
{
    const option_value *ov = typed(cfg, name, MC_OPT_STRING);
    return ov ? ov->text : "";
}

int64_t mc_config_get_int(const mc_config *cfg, const char *name)
{
    const option_value *ov = typed(cfg, name, MC_OPT_INT);
    return ov ? ov->v.i : 0;
}

uint64_t mc_config_get_uint(const mc_config *cfg, const char *name)
{
    const option_value *ov = typed(cfg, name, MC_OPT_UINT);
    return ov ? ov->v.u : 0;
}

double mc_config_get_float(const mc_config *cfg, const char *name)
{
    const option_value *ov = typed(cfg, name, MC_OPT_FLOAT);
    return ov ? ov->v.f : 0.0;
}

bool mc_config_get_bool(const mc_config *cfg, const char *name)
{
    const option_value *ov = typed(cfg, name, MC_OPT_BOOL);
    return ov ? ov->v.b : false;
}

const char *mc_config_get_text(const mc_config *cfg, const char *name)
{
    const option_value *ov = find(cfg, name);
    return ov ? ov->text : NULL;
}

size_t mc_config_option_count(const mc_config *cfg) { return cfg->count; }

const mc_option *mc_config_option_at(const mc_config *cfg, size_t index)
{
    return index < cfg->count ? cfg->values[index].opt : NULL;
}

size_t mc_config_positional_count(const mc_config *cfg) { return cfg->positional_count; }

const char *mc_config_positional(const mc_config *cfg, size_t index)
{
    return index < cfg->positional_count ? cfg->positional[index] : NULL;
}
