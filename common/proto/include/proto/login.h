/* The login messages between a loginapp and a baseapp on the internal interface: the
 * message id (a role message, beside the entity messages 32..38 of entity/wire.h and
 * entity/persist_wire.h) and the protobuf-c payloads of login.proto.
 *
 *   39  PREPARE_LOGIN   loginapp -> baseapp, request  PrepareLoginRequest -> PrepareLoginReply
 *   60  RESUME_PREPARE  loginapp -> baseapp, request  ResumePrepareRequest -> ResumePrepareReply
 *
 * Variable-length with a 4-byte length field, like the control messages. docs/PROTOCOL.md
 * "PrepareLogin".
 */
#ifndef MC_PROTO_LOGIN_H
#define MC_PROTO_LOGIN_H

#include "proto/login.pb-c.h"

enum { MC_MSG_PREPARE_LOGIN = 39, MC_MSG_RESUME_PREPARE = 60 };

/* The largest PrepareLogin payload either side accepts. */
#define MC_PREPARE_LOGIN_MAX_PAYLOAD 1024u

#endif
