/* The Lua scripts the store runs (EVALSHA after SCRIPT LOAD at each connection; EVAL when
 * Redis answers NOSCRIPT). Each touches only the keys of one hash slot (its KEYS), so each
 * also runs unchanged on a Redis Cluster node. Every script answers an array whose first
 * element is a status word ("OK", "FENCED", ...); docs/PERSISTENCE.md describes them. */
#ifndef MC_PERSIST_SCRIPTS_H
#define MC_PERSIST_SCRIPTS_H

typedef enum {
    MC_SCRIPT_CHECKOUT,      /* KEYS e,o   ARGV owner inc token identfield identjson
                              * (STALE: the entity does not hold identjson; checked out) */
    MC_SCRIPT_MARK_LIVE,     /* KEYS o     ARGV token mailbox */
    MC_SCRIPT_RELEASE,       /* KEYS o     ARGV token */
    MC_SCRIPT_RELEASE_OWNER, /* KEYS o     ARGV owner inc ("0" = any) */
    MC_SCRIPT_WRITE,         /* KEYS e,o   ARGV token claimed identfield identjson f v ... */
    MC_SCRIPT_CREATE,        /* KEYS e,o   ARGV token owner inc f v ... */
    MC_SCRIPT_IMPORT,        /* KEYS e,o   ARGV replace f v ... */
    MC_SCRIPT_DELETE,        /* KEYS e,o   ARGV token force identfield */
    MC_SCRIPT_CLAIM,         /* KEYS id    ARGV dbid */
    MC_SCRIPT_UNCLAIM,       /* KEYS id    ARGV dbid */
    MC_SCRIPT_SCHEMA_PUT,    /* KEYS s     ARGV f v ... */
    MC_SCRIPT_RAISE,         /* KEYS dbid  ARGV n */
    MC_SCRIPT_TAKE_OVER,     /* KEYS o     ARGV oldtoken owner inc token mailbox */
    MC_SCRIPT_COUNT,
} mc_script_id;

/* The Lua source of a script. */
const char *mc_script_source(mc_script_id id);

#endif
