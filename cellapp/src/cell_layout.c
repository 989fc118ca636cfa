/* CELL_LAYOUT decoding and checking (cell_layout.h). */
#include "cell_layout.h"
#include "proto/control.pb-c.h"
#include "server/control.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cell_layout_clear(cell_layout *l)
{
    free(l->cells);
    memset(l, 0, sizeof *l);
    l->own = -1;
}

static bool check_rect(const Mc__Control__CellRect *c, cell_rect *out, char *why, size_t whylen)
{
    if (isnan(c->x_min) || isnan(c->x_max) || isnan(c->z_min) || isnan(c->z_max) ||
        !(c->x_min < c->x_max) || !(c->z_min < c->z_max)) {
        snprintf(why, whylen, "a cell's rectangle is empty or not a number");
        return false;
    }
    if (!c->addr || mc_address_parse(c->addr, &out->addr) != 0 || out->addr.port == 0) {
        snprintf(why, whylen, "a cell's address is not IP:PORT");
        return false;
    }
    out->x_min = c->x_min;
    out->x_max = c->x_max;
    out->z_min = c->z_min;
    out->z_max = c->z_max;
    out->process_id = c->process_id;
    return true;
}

bool cell_layout_parse(const uint8_t *data, size_t len, const mc_address *self,
                       cell_layout *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    out->own = -1;
    Mc__Control__CellLayout *m = mc__control__cell_layout__unpack(NULL, len, data);
    if (!m) {
        snprintf(why, whylen, "not a CellLayout");
        return false;
    }
    bool ok = false;
    if (m->space_id <= 0) {
        snprintf(why, whylen, "space id %d", (int)m->space_id);
    } else if (m->n_cells > MC_CELLS_PER_SPACE_MAX) {
        snprintf(why, whylen, "%zu cells (at most %u)", m->n_cells, MC_CELLS_PER_SPACE_MAX);
    } else {
        out->space = m->space_id;
        out->version = m->version;
        out->manager_instance = m->manager_instance;
        out->cells = calloc(m->n_cells ? m->n_cells : 1, sizeof *out->cells);
        if (!out->cells) {
            snprintf(why, whylen, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < m->n_cells; i++) {
            cell_rect *r = &out->cells[i];
            if (!check_rect(m->cells[i], r, why, whylen))
                goto done;
            for (size_t j = 0; j < i; j++)
                if (out->cells[j].process_id == r->process_id ||
                    mc_address_equal(&out->cells[j].addr, &r->addr)) {
                    snprintf(why, whylen, "a cellapp serves two cells");
                    goto done;
                }
            if (self && mc_address_equal(&r->addr, self))
                out->own = (int)i;
            out->n = i + 1;
        }
        ok = true;
    }
done:
    mc__control__cell_layout__free_unpacked(m, NULL);
    if (!ok)
        cell_layout_clear(out);
    return ok;
}

bool cell_rect_contains(const cell_rect *r, float x, float z)
{
    return x >= r->x_min && x < r->x_max && z >= r->z_min && z < r->z_max;
}

static void bound(char *out, size_t n, float lo, float hi)
{
    char a[24], b[24];
    if (isinf(lo))
        snprintf(a, sizeof a, "-inf");
    else
        snprintf(a, sizeof a, "%g", lo);
    if (isinf(hi))
        snprintf(b, sizeof b, "inf");
    else
        snprintf(b, sizeof b, "%g", hi);
    snprintf(out, n, "[%s,%s)", a, b);
}

void cell_rect_text(const cell_rect *r, char *out, size_t n)
{
    char x[56], z[56];
    bound(x, sizeof x, r->x_min, r->x_max);
    bound(z, sizeof z, r->z_min, r->z_max);
    snprintf(out, n, "x%s z%s", x, z);
}
