/* Interface table lookup and validation. */
#include "mercury/interface.h"

#include <stdio.h>
#include <string.h>

#include "mercury/status.h"

const mc_message_def *mc_interface_find(const mc_interface *iface, uint8_t id)
{
    if (!iface)
        return NULL;
    for (size_t i = 0; i < iface->count; i++)
        if (iface->defs[i].id == id)
            return &iface->defs[i];
    return NULL;
}

const mc_message_def *mc_interface_find_name(const mc_interface *iface, const char *name)
{
    if (!iface || !name)
        return NULL;
    for (size_t i = 0; i < iface->count; i++)
        if (iface->defs[i].name && strcmp(iface->defs[i].name, name) == 0)
            return &iface->defs[i];
    return NULL;
}

int mc_interface_validate(const mc_interface *iface, char *err, size_t errlen)
{
    if (!iface || (iface->count > 0 && !iface->defs)) {
        snprintf(err, errlen, "no interface table");
        return MC_ERR_INVALID;
    }
    bool seen[256] = {false};
    for (size_t i = 0; i < iface->count; i++) {
        const mc_message_def *d = &iface->defs[i];
        const char *nm = d->name ? d->name : "?";
        if (d->id == MC_REPLY_MESSAGE_ID) {
            snprintf(err, errlen, "%s: message %s uses the reserved reply id 255",
                     iface->name ? iface->name : "?", nm);
            return MC_ERR_INVALID;
        }
        if (seen[d->id]) {
            snprintf(err, errlen, "%s: message %s reuses id %u", iface->name ? iface->name : "?",
                     nm, d->id);
            return MC_ERR_INVALID;
        }
        seen[d->id] = true;
        if (d->style == MC_MSG_FIXED) {
            if (d->length > MC_MAX_MESSAGE_SIZE) {
                snprintf(err, errlen, "message %s: fixed length %u too large", nm, d->length);
                return MC_ERR_INVALID;
            }
        } else if (d->style == MC_MSG_VARIABLE) {
            if (d->length != 1 && d->length != 2 && d->length != 4) {
                snprintf(err, errlen, "message %s: length field must be 1, 2 or 4 bytes, not %u",
                         nm, d->length);
                return MC_ERR_INVALID;
            }
        } else {
            snprintf(err, errlen, "message %s: unknown length style %d", nm, (int)d->style);
            return MC_ERR_INVALID;
        }
    }
    return MC_OK;
}

size_t mc_message_header_size(const mc_message_def *def, bool is_request)
{
    size_t n = 1 + (is_request ? 6u : 0u);
    if (def->style == MC_MSG_VARIABLE)
        n += def->length;
    return n;
}
