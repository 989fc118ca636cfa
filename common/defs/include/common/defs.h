/* Entity definitions: load a resource folder of BigWorld-style .def files.
 *
 * A resource folder holds entities.xml (the entity types in order), entity_defs/<Type>.def,
 * entity_defs/interfaces/<Name>.def and named type aliases in entity_defs/alias.xml (or
 * KBEngine's entity_defs/types.xml). mc_defs_load parses and checks everything, refusing
 * what it does not support with "file:line: <element>: reason" lines, and builds the
 * flattened model below: per entity type its properties and its methods per part (base,
 * cell, client), parents and interfaces first, in declaration order, each numbered within
 * its part; exposed methods are also numbered in the space a client may call.
 *
 * The loaded model is immutable; every pointer in it lives as long as the mc_entity_defs.
 * See docs/DEFS.md for the accepted format, the numbering and the digest.
 */
#ifndef MC_COMMON_DEFS_H
#define MC_COMMON_DEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/def_type.h"
#include "common/mailbox_ref.h"
#include "common/value.h"
#include "common/watcher.h"

typedef struct mc_entity_defs mc_entity_defs;

/* Where a method runs / a property lives. */
typedef enum {
    MC_PART_BASE = 0,
    MC_PART_CELL = 1,
    MC_PART_CLIENT = 2,
} mc_part;
#define MC_PART_COUNT 3

/* Property data flags (BigWorld's <Flags>). */
typedef enum {
    MC_FLAGS_CELL_PRIVATE,
    MC_FLAGS_CELL_PUBLIC,
    MC_FLAGS_OTHER_CLIENTS,
    MC_FLAGS_OWN_CLIENT,
    MC_FLAGS_BASE,
    MC_FLAGS_BASE_AND_CLIENT,
    MC_FLAGS_CELL_PUBLIC_AND_OWN,
    MC_FLAGS_ALL_CLIENTS,
    MC_FLAGS_EDITOR_ONLY,
} mc_prop_flags;

/* Who may call a method from a client. */
typedef enum {
    MC_EXPOSED_NO = 0,
    MC_EXPOSED_OWN_CLIENT,  /* the entity's own client only (every exposed base method) */
    MC_EXPOSED_ALL_CLIENTS, /* any client whose player sees the entity (cell methods) */
} mc_exposure;

typedef struct {
    const char *name;
    const mc_def_type *type;
    mc_prop_flags flags;
    bool persistent;
    bool identifier;
    bool indexed;
    bool editable;
    uint32_t db_length;      /* DatabaseLength, 0 = none (then the type's byte limit) */
    mc_value default_value;  /* <Default> or the type's default */
    uint16_t index;          /* position among all the type's properties */
    int32_t part_index[MC_PART_COUNT]; /* index among the properties that part holds, -1 */
    bool ghosted;            /* copied to ghosts (CELL_PUBLIC, *_CLIENTS, CELL_PUBLIC_AND_OWN) */
    bool own_client;         /* sent to the entity's own client */
    bool other_clients;      /* sent to other clients that see the entity */
    const char *file;        /* where it is declared */
    int line;
} mc_def_property;

typedef struct {
    const char *name; /* NULL for old-style <Arg> */
    const mc_def_type *type;
} mc_def_arg;

typedef struct {
    const char *name;
    mc_part part;
    uint16_t index;          /* index within the part */
    mc_exposure exposed;
    int32_t exposed_index;   /* index in the part's exposed space, -1 when not exposed */
    size_t nargs;
    const mc_def_arg *args;
    size_t nreturns;         /* <ReturnValues>: a two-way call when > 0 */
    const mc_def_arg *returns;
    const char *file;
    int line;
    uint32_t signature;      /* mc_def_method_signature() of this method */
} mc_def_method;

/* A 32-bit FNV-1a hash of a method's name, part, and the kinds of its arguments and return
 * values. defc writes it into generated code, which checks a method by it on every call
 * (cheaper than comparing names, and it also notices changed argument kinds); the digest
 * check when a game module is opened remains the real guard. */
uint32_t mc_def_method_signature(const mc_def_method *m);

typedef struct {
    bool position, yaw, pitch, roll;  /* volatile members */
    float position_dist, yaw_dist, pitch_dist, roll_dist; /* 0 = always */
} mc_def_volatile;

typedef struct {
    const char *name;
    uint16_t id;                /* index in entities.xml, the type id in mailboxes */
    bool client_server;         /* has a client part (ClientServerEntities / hasClient) */
    const char *parent;         /* NULL when none */
    size_t ninterfaces;         /* every interface implemented, directly or not */
    const char *const *interfaces;
    size_t nprops;
    const mc_def_property *props;
    size_t ntemp;
    const char *const *temp_props;
    mc_def_volatile volatile_info;
    size_t nmethods[MC_PART_COUNT];
    const mc_def_method *methods[MC_PART_COUNT];
    size_t nexposed[MC_PART_COUNT];
    const uint16_t *exposed[MC_PART_COUNT]; /* exposed index -> method index */
    size_t nparts_props[MC_PART_COUNT];     /* properties each part holds */
    const uint16_t *part_props[MC_PART_COUNT]; /* part index -> property index */
    const char *file;
} mc_entity_type_def;

/* Load a resource folder. NULL on failure, with every error in err (one per line). */
mc_entity_defs *mc_defs_load(const char *res_dir, char *err, size_t errlen);
void mc_defs_free(mc_entity_defs *defs);
/* 64 lowercase hex chars: BLAKE2b-256 (crypto_generichash) of the normalised definitions. */
const char *mc_defs_digest_hex(const mc_entity_defs *defs);
/* The 32 digest bytes. */
const uint8_t *mc_defs_digest(const mc_entity_defs *defs);
/* The normalised text the digest is computed over (for tools and tests). */
const char *mc_defs_normalised(const mc_entity_defs *defs);

size_t mc_defs_type_count(const mc_entity_defs *defs);
const mc_entity_type_def *mc_defs_type(const mc_entity_defs *defs, uint16_t id);
const mc_entity_type_def *mc_defs_type_by_name(const mc_entity_defs *defs, const char *name);
/* Named aliases in declaration order. */
size_t mc_defs_alias_count(const mc_entity_defs *defs);
const mc_def_type *mc_defs_alias(const mc_entity_defs *defs, size_t i);
const mc_def_type *mc_defs_alias_by_name(const mc_entity_defs *defs, const char *name);

const mc_def_method *mc_defs_method(const mc_entity_type_def *t, mc_part part, uint16_t index);
const mc_def_method *mc_defs_method_by_name(const mc_entity_type_def *t, mc_part part,
                                            const char *name);
/* The method a client calls by exposed index; NULL if that index is not exposed (a server
 * must refuse the call). */
const mc_def_method *mc_defs_exposed_method(const mc_entity_type_def *t, mc_part part,
                                            uint16_t exposed_index);
const mc_def_property *mc_defs_property_by_name(const mc_entity_type_def *t, const char *name);
/* The property a part holds at part_index (its index in that part's stream), or NULL. */
const mc_def_property *mc_defs_part_property(const mc_entity_type_def *t, mc_part part,
                                             uint16_t part_index);

/* Publish read-only watchers under dir (e.g. "defs"): digest, typeCount, aliasCount and per
 * type types/<Name>/{id,clientServer,properties,baseMethods,cellMethods,clientMethods,
 * exposedBase,exposedCell}. The defs must outlive the watchers. Returns MC_WATCH_OK or the
 * first failure. */
mc_watch_status mc_defs_add_watchers(const mc_entity_defs *defs, mc_watchers *w,
                                     const char *dir);

const char *mc_part_name(mc_part part);
const char *mc_prop_flags_name(mc_prop_flags flags);
/* Which parts hold a property with these flags. */
bool mc_prop_flags_on_part(mc_prop_flags flags, mc_part part);

/* Limits for decoding a property's value / a method argument. */
mc_value_limits mc_defs_property_limits(const mc_entity_defs *defs, const mc_def_property *p);
mc_value_limits mc_defs_value_limits(const mc_entity_defs *defs);

/* Encode a method's arguments (args[nargs] checked against the def) / decode them (the
 * caller frees each with mc_value_free; args must have room for m->nargs; all bytes must be
 * consumed). Return 0 or -1 with the reason in why. */
int mc_defs_encode_args(const mc_entity_defs *defs, const mc_def_method *m,
                        const mc_value *args, mc_ostream *os, char *why, size_t whylen);
int mc_defs_decode_args(const mc_entity_defs *defs, const mc_def_method *m, mc_istream *is,
                        mc_value *args, char *why, size_t whylen);
/* The same for return values (m->nreturns). */
int mc_defs_encode_returns(const mc_entity_defs *defs, const mc_def_method *m,
                           const mc_value *vals, mc_ostream *os, char *why, size_t whylen);
int mc_defs_decode_returns(const mc_entity_defs *defs, const mc_def_method *m,
                           mc_istream *is, mc_value *vals, char *why, size_t whylen);

#endif
