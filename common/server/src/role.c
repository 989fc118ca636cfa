/* Role and process-state names. */
#include "server/role.h"

#include <string.h>

static const struct {
    mc_role role;
    const char *name;
    const char *plural;
} roles[] = {
    {MC_ROLE_MANAGER, "manager", "managers"},    {MC_ROLE_LOGINAPP, "loginapp", "loginapps"},
    {MC_ROLE_BASEAPP, "baseapp", "baseapps"},    {MC_ROLE_CELLAPP, "cellapp", "cellapps"},
    {MC_ROLE_TOOL, "tool", "tools"},
};

#define NROLES (sizeof roles / sizeof roles[0])

const char *mc_role_name(mc_role role)
{
    for (size_t i = 0; i < NROLES; i++)
        if (roles[i].role == role)
            return roles[i].name;
    return "unknown";
}

const char *mc_role_plural(mc_role role)
{
    for (size_t i = 0; i < NROLES; i++)
        if (roles[i].role == role)
            return roles[i].plural;
    return "unknown";
}

bool mc_role_parse(const char *text, mc_role *out)
{
    for (size_t i = 0; text && i < NROLES; i++)
        if (strcmp(text, roles[i].name) == 0) {
            *out = roles[i].role;
            return true;
        }
    return false;
}

bool mc_role_parse_plural(const char *text, mc_role *out)
{
    for (size_t i = 0; text && i < NROLES; i++)
        if (strcmp(text, roles[i].plural) == 0) {
            *out = roles[i].role;
            return true;
        }
    return false;
}

bool mc_role_registers(mc_role role)
{
    return role == MC_ROLE_LOGINAPP || role == MC_ROLE_BASEAPP || role == MC_ROLE_CELLAPP;
}

const char *mc_state_name(Mc__Control__ProcessState state)
{
    switch (state) {
    case MC__CONTROL__PROCESS_STATE__STATE_ALIVE: return "alive";
    case MC__CONTROL__PROCESS_STATE__STATE_DEAD: return "dead";
    case MC__CONTROL__PROCESS_STATE__STATE_STOPPED: return "stopped";
    case MC__CONTROL__PROCESS_STATE__STATE_FENCED: return "fenced";
    default: return "unknown";
    }
}
