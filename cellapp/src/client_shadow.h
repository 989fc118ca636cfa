/* What clients were last told of a cell entity's client-visible properties: the encoding
 * of each, and a change number per property. Game code writes property fields directly, so
 * each tick client_shadow_diff compares the current encodings with these and gives every
 * property that changed a new change number; a witness then sends, per entity it sees, the
 * properties changed since the change number it last sent (docs/WORLD.md). The encodings
 * are what goes on the wire: entering a view sends them as they are.
 *
 * Kept for the cell properties that reach some client: OTHER_CLIENTS and ALL_CLIENTS (to
 * every client that sees the entity, `other` set), OWN_CLIENT and CELL_PUBLIC_AND_OWN (to
 * its own client only).
 */
#ifndef MC_CELLAPP_CLIENT_SHADOW_H
#define MC_CELLAPP_CLIENT_SHADOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/stream.h"
#include "entity/entity.h"

typedef struct {
    uint16_t index;     /* the property's index in its type */
    bool other;         /* sent to other clients (else to its own client only) */
    bool own;           /* sent to its own client */
    uint32_t changed;   /* change number of its last change (0: as first encoded) */
    uint8_t *bytes;
    uint32_t len;
} client_shadow_prop;

typedef struct client_shadow {
    uint32_t seq;       /* the last change number handed out */
    size_t n, n_other;  /* properties kept, and how many of them go to other clients */
    size_t other_bytes; /* encoded size of those (an ENTER's property part, without indices) */
    client_shadow_prop *props;
} client_shadow;

/* The shadow of ent (a cell entity) with its current encodings. NULL with why (out of
 * memory, or a value that does not encode). */
client_shadow *client_shadow_new(const mc_entity_defs *defs, const mc_entity *ent,
                                 mc_ostream *scratch, char *why, size_t whylen);
void client_shadow_free(client_shadow *s);
/* Compare with the current values: every changed property gets a new change number and its
 * new encoding. Returns how many changed, or -1 with why (the shadow keeps what it had). */
int client_shadow_diff(client_shadow *s, const mc_entity_defs *defs, const mc_entity *ent,
                       mc_ostream *scratch, char *why, size_t whylen);

#endif
