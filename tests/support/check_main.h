/* The one main() every Check suite uses: runs the suite, prints Check's summary, and fails
 * when any test failed or when the suite ran no test at all (an empty suite proves nothing).
 *
 *   static Suite *my_suite(void) { ... }
 *   MC_CHECK_MAIN(my_suite)
 */
#ifndef MC_TESTS_CHECK_MAIN_H
#define MC_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static inline int mc_check_run(Suite *suite)
{
    SRunner *sr = srunner_create(suite);
    srunner_run_all(sr, CK_NORMAL);
    int ran = srunner_ntests_run(sr);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (ran == 0) {
        fprintf(stderr, "no test ran: an empty suite is a failure\n");
        return EXIT_FAILURE;
    }
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#define MC_CHECK_MAIN(make_suite)                                                           \
    int main(void) { return mc_check_run(make_suite()); }

#endif
