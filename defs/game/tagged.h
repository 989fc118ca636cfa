/* The Tagged interface (entity_defs/interfaces/Tagged.def), shared by every type that
 * implements it: its handlers call these so the behaviour is written once. */
#ifndef MC_GAME_TAGGED_H
#define MC_GAME_TAGGED_H

#include "common/value.h"

/* Append a tag to a `tags` property (ARRAY<STRING>). Returns 0, or -1 when refused. */
int tagged_add(mc_value *tags, const char *tag);

#endif
