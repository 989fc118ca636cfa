/* baseapp: hosts base entities (common/entity's engine with the baseapp's part). */
#include "app.h"
#include "backup/backup.h"
#include "db/db.h"
#include "bases/bases.h"
#include "clients/proxy.h"
#include "retire/retire.h"

#include <string.h>

int main(int argc, char **argv)
{
    /* the role's options: each part's */
    mc_option opts[BASE_DB_OPTION_COUNT + BASEAPP_PART_OPTION_COUNT + APP_SESSION_OPTION_COUNT +
                   PROXY_OPTION_COUNT + BASE_RESTORE_OPTION_COUNT + PROXY_RESUME_OPTION_COUNT];
    size_t n = 0;
    memcpy(opts + n, base_db_options, sizeof base_db_options);
    n += BASE_DB_OPTION_COUNT;
    memcpy(opts + n, baseapp_part_options, BASEAPP_PART_OPTION_COUNT * sizeof opts[0]);
    n += BASEAPP_PART_OPTION_COUNT;
    memcpy(opts + n, app_session_options, sizeof app_session_options);
    n += APP_SESSION_OPTION_COUNT;
    memcpy(opts + n, proxy_options, sizeof proxy_options);
    n += PROXY_OPTION_COUNT;
    memcpy(opts + n, base_restore_options, sizeof base_restore_options);
    n += BASE_RESTORE_OPTION_COUNT;
    memcpy(opts + n, proxy_resume_options, sizeof proxy_resume_options);
    n += PROXY_RESUME_OPTION_COUNT;
    mc_role_part part = base_role_part;
    part.options = opts;
    part.option_count = n;
    return mc_engine_main(MC_ROLE_BASEAPP,
                          "The Mercury Cluster baseapp: hosts base entities, creates their "
                          "cells, relays calls to them and holds its players' client "
                          "channels.",
                          true, &part, argc, argv);
}
