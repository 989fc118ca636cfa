/* manager: the registry every other process registers with. */
#include "manager.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    mc_manager *m = mc_manager_new();
    if (!m)
        return 1;
    mc_server_desc desc;
    mc_manager_describe(m, &desc);
    int code = 1;
    mc_server *s = mc_server_new(&desc, argc, argv, &code);
    if (s) {
        char why[1024];
        if (mc_manager_open_state(m, mc_server_config(s), why, sizeof why)) {
            code = mc_server_run(s);
        } else {
            fprintf(stderr, "manager: %s\n", why);
            code = 1;
        }
        mc_server_free(s);
    }
    mc_manager_free(m);
    return code;
}
