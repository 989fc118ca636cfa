/* The cluster secret of the test run (MC_SECRET_FILE, which CTest sets for every test, see
 * cmake/Testing.cmake): a test's own nub that talks to real processes as a cluster member
 * authenticates with it; one that plays a stranger leaves it out. */
#ifndef MC_TESTS_TEST_SECRET_H
#define MC_TESTS_TEST_SECRET_H

#include <stdio.h>
#include <stdlib.h>

#include "mercury/auth.h"
#include "mercury/nub.h"

/* Make cfg authenticate with the run's secret; exits the test program when there is none
 * (a test run outside CTest must set MC_SECRET_FILE). */
static inline void mc_test_secret_apply(mc_nub_config *cfg)
{
    char err[256];
    const char *path = mc_auth_secret_file(NULL);
    if (!path || mc_auth_load_secret(path, cfg->auth_secret, err, sizeof err) != 0) {
        fprintf(stderr, "test: no cluster secret (set MC_SECRET_FILE): %s\n",
                path ? err : "MC_SECRET_FILE is not set");
        exit(2);
    }
    cfg->authenticate = true;
}

#endif
