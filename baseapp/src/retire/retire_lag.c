/* The late senders' table (retire_lag.h). */
#include "retire_lag.h"

#include <stdlib.h>

bool retire_lags_has(const retire_lags *l, const mc_address *from, const mc_address *sender)
{
    for (size_t i = 0; i < l->n; i++)
        if (mc_address_equal(&l->v[i].from, from) && mc_address_equal(&l->v[i].sender, sender))
            return true;
    return false;
}

void retire_lags_drop(retire_lags *l, const mc_address *from, const mc_address *sender)
{
    for (size_t i = 0; i < l->n;) {
        if (mc_address_equal(&l->v[i].from, from) &&
            (!sender || mc_address_equal(&l->v[i].sender, sender)))
            l->v[i] = l->v[--l->n];
        else
            i++;
    }
}

int retire_lags_replace(retire_lags *l, const mc_address *from, const mc_address *senders,
                        size_t n, size_t max)
{
    retire_lags_drop(l, from, NULL);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (retire_lags_has(l, from, &senders[i]))
            continue;
        if (l->n >= max) {
            rc = -1;
            break;
        }
        retire_lag *v = realloc(l->v, (size_t)(l->n + 1) * sizeof *v);
        if (!v) {
            rc = -1;
            break;
        }
        l->v = v;
        l->v[l->n++] = (retire_lag){.from = *from, .sender = senders[i]};
    }
    return rc;
}

void retire_lags_free(retire_lags *l)
{
    free(l->v);
    l->v = NULL;
    l->n = 0;
}
