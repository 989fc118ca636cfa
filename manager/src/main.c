/* manager: the registry every other process registers with. */
#include "manager.h"

int main(int argc, char **argv)
{
    mc_manager *m = mc_manager_new();
    if (!m)
        return 1;
    mc_server_desc desc;
    mc_manager_describe(m, &desc);
    int code = mc_server_main(&desc, argc, argv);
    mc_manager_free(m);
    return code;
}
