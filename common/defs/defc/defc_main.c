/* defc: check entity definitions and generate the C API of a game module. */
#include <ctype.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "defc.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: defc --check --res DIR\n"
            "       defc --res DIR --out DIR [--module NAME]\n"
            "\n"
            "Loads the entity definitions in DIR (entities.xml, entity_defs/).\n"
            "  --check        validate and print a summary (types, properties, methods per\n"
            "                 component, exposed methods, digest); exit 0, or print every\n"
            "                 error and exit 2\n"
            "  --out DIR      generate per entity type <Type>.h and <Type>.c (property\n"
            "                 structs, container accessors, typed creation, senders,\n"
            "                 handler and callback prototypes, dispatchers), plus game.h,\n"
            "                 game_values.h/.c (accessors of container aliases),\n"
            "                 game_types.c, game_module.c (registration table) and\n"
            "                 game_client.c, into DIR\n"
            "  --module NAME  module name recorded in the registration table (default game)\n"
            "  --help         this text\n");
}

/* The module name lands in a C string and comments of generated code: keep it plain. */
static bool module_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
            return false;
    return true;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"check", no_argument, NULL, 'c'}, {"res", required_argument, NULL, 'r'},
        {"out", required_argument, NULL, 'o'}, {"module", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    const char *res = NULL, *out = NULL, *module = "game";
    /* defc prints its own results; the library's log lines would repeat them */
    mc_log_set_process_name("defc");
    mc_log_set_level(MC_LOG_CRITICAL);
    int check = 0, c;
    while ((c = getopt_long(argc, argv, "cr:o:m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': check = 1; break;
        case 'r': res = optarg; break;
        case 'o': out = optarg; break;
        case 'm': module = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "defc: unexpected argument '%s'\n", argv[optind]);
        return 1;
    }
    if (!res || (!check && !out)) {
        fprintf(stderr, "defc: need --res DIR and either --check or --out DIR (see --help)\n");
        return 1;
    }
    if (!module_name_ok(module)) {
        fprintf(stderr, "defc: module name '%.80s' must be 1..63 letters, digits, '_', '-' or "
                        "'.'\n", module);
        return 1;
    }
    size_t errlen = 1 << 20;
    char *err = malloc(errlen);
    if (!err) {
        fprintf(stderr, "defc: out of memory\n");
        return 1;
    }
    mc_entity_defs *defs = mc_defs_load(res, err, errlen);
    if (!defs) {
        fprintf(stderr, "%s\n", err);
        fprintf(stderr, "defc: %s: definitions refused\n", res);
        free(err);
        return 2;
    }
    free(err);
    if (defc_check_codegen(stderr, defs) != 0) {
        fprintf(stderr, "defc: %s: definitions refused\n", res);
        mc_defs_free(defs);
        return 2;
    }
    int rc = 0;
    if (check)
        defc_print_summary(stdout, defs);
    if (out && defc_generate(defs, out, module) != 0)
        rc = 1;
    mc_defs_free(defs);
    return rc;
}
