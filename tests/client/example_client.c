/* The example game's client handlers for the typed-client test (test_client_proxy.c): each
 * records what it heard, with the player's client-part struct it was given. */
#include "example_client.h"

#include <stdio.h>
#include <string.h>

static example_client_log the_log;

example_client_log *example_client_heard(void) { return &the_log; }

int Account_client_onAvatarList(const mc_call_ctx *call, Account_client *self,
                                const mc_value *avatars)
{
    the_log.avatar_lists++;
    the_log.last_avatar_count = (int)AVATAR_LIST_count(avatars);
    snprintf(the_log.account_name, sizeof the_log.account_name, "%s",
             self->accountName ? self->accountName : "");
    return 0;
}

int Account_client_onSelectFailed(const mc_call_ctx *call, Account_client *self,
                                  const char *reason)
{
    snprintf(the_log.select_failed, sizeof the_log.select_failed, "%s", reason);
    the_log.select_failed_count++;
    return 0;
}

int Avatar_client_onChat(const mc_call_ctx *call, Avatar_client *self, int32_t speaker,
                         const char *text)
{
    snprintf(the_log.chat, sizeof the_log.chat, "%s", text);
    return 0;
}

int Avatar_client_onHealthChanged(const mc_call_ctx *call, Avatar_client *self, int32_t health)
{
    the_log.health = health;
    return 0;
}
