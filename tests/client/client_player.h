/* A player of the client tests that logs what its client hears (client_cluster.h's
 * processes): a client of the library over real sockets, logged in to an Account, with a log
 * of the world records, own-client calls and properties it heard, for tests to search. */
#ifndef MC_TESTS_CLIENT_PLAYER_H
#define MC_TESTS_CLIENT_PLAYER_H

#include <stdbool.h>
#include <stdint.h>

#include "client_cluster.h"

#define CLIENT_PLAYER_LOG 32768

typedef struct {
    mc_client *c;
    int32_t id;                 /* its player entity (Account, then Avatar) */
    uint16_t type;
    int players;                /* player records heard (2 once in the world: Account, Avatar) */
    int enters, leaves;         /* ENTER and LEAVE records heard, of anything */
    char log[CLIENT_PLAYER_LOG]; /* world records as "KIND:id name=value...;" (a CALL's
                                  * arguments as "arg=value"), own-client calls and properties
                                  * as "own-call M id arg=value...;", "prop id name=value;"; the
                                  * oldest half goes when it is full */
} client_player;

/* Log p in to the base `account` (its fields cleared first). */
void client_player_connect(client_player *p, const client_cluster *c, int32_t account);

/* Whether the player's client heard a change of entity id's property `name` (PROPS, or its
 * own PROPERTY), and with this value text when `value` is not NULL. */
bool client_player_heard(const client_player *p, int32_t id, const char *name,
                         const char *value);

#endif
