/* defc internals: the summary printer and the C code generator. */
#ifndef MC_DEFC_H
#define MC_DEFC_H

#include <stdio.h>

#include "common/defs.h"

void defc_print_summary(FILE *out, const mc_entity_defs *defs);
/* Write <Type>.h/.c per entity type plus game_module.c into out_dir. Returns 0 or -1 with a
 * message on stderr. */
int defc_generate(const mc_entity_defs *defs, const char *out_dir, const char *module_name);

#endif
