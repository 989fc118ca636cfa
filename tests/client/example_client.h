/* What the example game's generated client handlers heard (example_client.c). */
#ifndef MC_TESTS_EXAMPLE_CLIENT_H
#define MC_TESTS_EXAMPLE_CLIENT_H

#include "game.h"

typedef struct {
    int avatar_lists, last_avatar_count;
    char account_name[64];
    char select_failed[64];
    int select_failed_count;
    char chat[64];
    int32_t health;
} example_client_log;

example_client_log *example_client_heard(void);

#endif
