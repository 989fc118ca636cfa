/* The Tagged interface's behaviour, shared by Avatar and Space. */
#include "tagged.h"

#include <string.h>

int tagged_add(mc_value *tags, const char *tag)
{
    mc_value v;
    if (mc_value_set_bytes(&v, MC_TYPE_STRING, tag, strlen(tag)) != 0)
        return -1;
    int rc = mc_value_append(tags, &v);
    mc_value_free(&v);
    return rc;
}
