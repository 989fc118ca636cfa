/* baseapp: hosts base entities (common/entity's engine with the baseapp's part). */
#include "baseapp.h"

int main(int argc, char **argv)
{
    return mc_engine_main(MC_ROLE_BASEAPP,
                          "The Mercury Cluster baseapp: hosts base entities, creates their "
                          "cells and relays calls to them.",
                          true, &base_role_part, argc, argv);
}
