/* libFuzzer target for CELL_LAYOUT's receive side (cellapp/src/cell_layout.c): arbitrary
 * bytes as the payload, checked against an own address; a layout taken is checked for what
 * the parser promises (rectangles not empty, own index in range). Nothing may crash or leak. */
#include "cell_layout.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mc_address self;
    if (mc_address_parse("127.0.0.1:4000", &self) != 0)
        abort();
    cell_layout l;
    char why[160];
    if (cell_layout_parse(data, size, &self, &l, why, sizeof why)) {
        if (l.space <= 0 || l.own >= (int)l.n)
            abort();
        for (size_t i = 0; i < l.n; i++)
            if (!(l.cells[i].x_min < l.cells[i].x_max) || !(l.cells[i].z_min < l.cells[i].z_max))
                abort();
        cell_layout_clear(&l);
    }
    return 0;
}
