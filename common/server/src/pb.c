/* Building, packing and freeing protobuf-c messages. */
#include "server/pb.h"

#include <stdlib.h>
#include <string.h>

char *mc_pb_strdup(const char *s)
{
    return strdup(s ? s : "");
}

void mc_pb_free(void *msg)
{
    if (msg)
        protobuf_c_message_free_unpacked((ProtobufCMessage *)msg, NULL);
}

uint8_t *mc_pb_pack(const void *msg, size_t *len)
{
    const ProtobufCMessage *m = msg;
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return NULL;
    *len = protobuf_c_message_pack(m, buf);
    return buf;
}
