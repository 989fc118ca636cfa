/* loginapp: a server process on the framework (common/server). It registers with the
 * manager, heartbeats its load, publishes the standard watchers and shuts down cleanly.
 * Its role-specific work arrives in later issues. */
#include "server/server.h"

#include <string.h>

int main(int argc, char **argv)
{
    mc_server_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.role = MC_ROLE_LOGINAPP;
    desc.summary = "The Mercury Cluster loginapp: the door clients log in through (logins arrive in the next issues).";
    desc.has_external = true;
    return mc_server_main(&desc, argc, argv);
}
