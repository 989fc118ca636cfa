/* cellapp: runs spaces and cell entities (common/entity's engine with the cellapp's part). */
#include "cellapp.h"

int main(int argc, char **argv)
{
    return mc_engine_main(MC_ROLE_CELLAPP,
                          "The Mercury Cluster cellapp: runs spaces and the cell entities in "
                          "them.",
                          false, &cell_role_part, argc, argv);
}
