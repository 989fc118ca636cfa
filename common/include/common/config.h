/* Configuration: typed options from defaults, a config file and the command line.
 *
 * A program declares its options in a table. Values are applied in order: defaults, then
 * the file named by --config (lines "name = value", '#' comments, blank lines ignored),
 * then the command line ("--name value", "--name=value"; a bool option alone means true, "--name=false" sets it,
 * "--no-name" means false). --help prints every option with its type, default and help.
 * Unknown options, malformed values, missing values and unknown file keys are refused with
 * a one-line reason naming the option (and file:line for the file). Arguments that do not
 * start with "--" are positional and kept in order ("--" ends option parsing).
 */
#ifndef MC_COMMON_CONFIG_H
#define MC_COMMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    MC_OPT_STRING,
    MC_OPT_INT,   /* int64 */
    MC_OPT_UINT,  /* uint64 */
    MC_OPT_FLOAT, /* double */
    MC_OPT_BOOL,
} mc_option_type;

typedef struct {
    const char *name;          /* without leading dashes, e.g. "port" */
    mc_option_type type;
    const char *default_value; /* text form; NULL means "" for strings, 0 / false otherwise */
    const char *help;
} mc_option;

typedef enum {
    MC_CONFIG_OK = 0,
    MC_CONFIG_HELP = 1,     /* --help was given: help printed, caller should exit 0 */
    MC_CONFIG_ERROR = -1,   /* a one-line reason is in the error buffer */
} mc_config_status;

typedef struct mc_config mc_config;

/* The option table must outlive the config. Returns NULL if the table itself is invalid
 * (duplicate name, default that does not parse); the reason is logged. */
mc_config *mc_config_new(const char *program, const char *summary, const mc_option *options,
                         size_t count);
void mc_config_free(mc_config *cfg);

/* Apply --config FILE (if present) and then every other argument. --help prints to `help_out`
 * (stdout when NULL) and returns MC_CONFIG_HELP. */
mc_config_status mc_config_parse_args(mc_config *cfg, int argc, char **argv, char *err,
                                      size_t errlen);
/* Apply a config file. */
mc_config_status mc_config_load_file(mc_config *cfg, const char *path, char *err, size_t errlen);
/* Set one option from text, validating it (used by the file, the command line and the
 * config/ watchers). */
mc_config_status mc_config_set(mc_config *cfg, const char *name, const char *value, char *err,
                               size_t errlen);

void mc_config_print_help(const mc_config *cfg, FILE *out);
void mc_config_set_help_output(mc_config *cfg, FILE *out);

bool mc_config_has(const mc_config *cfg, const char *name);
/* Getters for declared options; asking for an undeclared option or the wrong type is a
 * programming error and returns the zero value (logged). */
const char *mc_config_get_string(const mc_config *cfg, const char *name);
int64_t mc_config_get_int(const mc_config *cfg, const char *name);
uint64_t mc_config_get_uint(const mc_config *cfg, const char *name);
double mc_config_get_float(const mc_config *cfg, const char *name);
bool mc_config_get_bool(const mc_config *cfg, const char *name);
/* Current value of any option as text (its canonical form). */
const char *mc_config_get_text(const mc_config *cfg, const char *name);

size_t mc_config_option_count(const mc_config *cfg);
const mc_option *mc_config_option_at(const mc_config *cfg, size_t index);

size_t mc_config_positional_count(const mc_config *cfg);
const char *mc_config_positional(const mc_config *cfg, size_t index);

/* Parse helpers shared with the watcher module: whole-string conversions, false on junk. */
bool mc_parse_int(const char *text, int64_t *out);
bool mc_parse_uint(const char *text, uint64_t *out);
bool mc_parse_float(const char *text, double *out);
bool mc_parse_bool(const char *text, bool *out);

#endif
