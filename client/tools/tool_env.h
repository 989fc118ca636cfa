/* What mc-client and bots share: finding the cluster (the cluster file deploy/cluster up
 * writes: loginapp address, login public key, manager; flags override it), the client's defs
 * (the res folder the cluster runs, <repo>/defs by default) and their digest, the monotonic
 * clock, and the exit codes of a login status.
 */
#ifndef MC_CLIENT_TOOL_ENV_H
#define MC_CLIENT_TOOL_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "secure/login.h"

/* Exit codes (docs/tools/mc-client.md). A failed login exits TOOL_EXIT_LOGIN + status. */
enum {
    TOOL_EXIT_OK = 0,
    TOOL_EXIT_ERROR = 1,      /* a failure of the tool itself (out of memory, no socket) */
    TOOL_EXIT_USAGE = 2,      /* bad option or configuration */
    TOOL_EXIT_LOGIN = 10,     /* + login status 1..10 */
    TOOL_EXIT_REJECTED = 30,  /* the baseapp refused the session */
    TOOL_EXIT_HANDSHAKE = 31, /* no answer to the channel's handshake */
    TOOL_EXIT_DISCONNECTED = 32, /* the baseapp said goodbye (taken over, destroyed, ...) */
    TOOL_EXIT_LOST = 33,      /* the baseapp went silent */
    TOOL_EXIT_EXPECT = 40,    /* an `expect` of the script timed out */
    TOOL_EXIT_SCRIPT = 41,    /* a script line was wrong or its call refused on this side */
};

typedef struct {
    char loginapp[64];                              /* "a.b.c.d:port" */
    uint8_t public_key[MC_LOGIN_PUBLIC_KEY_BYTES];
    char manager[64];                               /* "" when unknown */
    char res[1024];                                 /* the defs folder */
    char source[1100];                              /* where the loginapp came from */
} tool_cluster;

/* Fill c from the flags given (NULL when not given) and the cluster file ($MC_RUN_DIR/
 * cluster.conf, else <repo>/run/cluster.conf). 0, or -1 with a one-line reason. */
int tool_cluster_find(tool_cluster *c, const char *loginapp, const char *public_key_hex,
                      const char *manager, const char *res, char *err, size_t errlen);

/* Load the defs of c->res and their digest. NULL with a reason. */
mc_entity_defs *tool_defs_load(const tool_cluster *c, uint8_t digest[MC_LOGIN_DIGEST_BYTES],
                               char *err, size_t errlen);

/* Monotonic milliseconds. */
uint64_t tool_now_ms(void);

/* Read a password: the first line of the file (path "-": standard input). 0 or -1. */
int tool_read_password(const char *path, char *out, size_t outlen, char *err, size_t errlen);

/* A strictly parsed number; 0 or -1. */
int tool_parse_double(const char *s, double lo, double hi, double *out);

#endif
