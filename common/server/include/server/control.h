/* The control-plane interface: message ids on every process's internal mercury interface.
 * Each message is variable-length (4-byte length field) and carries one protobuf-c message
 * from proto/control.proto. Requests are sent with mercury's request/reply; the reply
 * carries the protobuf-c reply message.
 *
 *   id  message            direction                     payload -> reply
 *   1   REGISTER           process -> manager, request   RegisterRequest -> RegisterReply
 *   2   HEARTBEAT          process -> manager            Heartbeat
 *   3   DEREGISTER         process -> manager, request   Deregister -> DeregisterReply
 *   4   PROCESS_EVENT      manager -> process            ProcessEvent
 *   5   QUERY              anyone -> manager, request    QueryRequest -> QueryReply
 *   6   WATCHER            anyone -> process, request    WatcherRequest -> WatcherReply
 *   7   UNKNOWN_PROCESS    manager -> process            UnknownProcess
 *   8   ID_RANGE           process -> manager, request   IdRangeRequest -> IdRangeReply
 *   9   GLOBAL_REGISTER    process -> manager, request   GlobalEntry -> GlobalReply
 *   10  GLOBAL_DEREGISTER  process -> manager, request   GlobalEntry -> GlobalReply
 *   11  GLOBAL_LOOKUP      anyone -> manager, request    GlobalLookup -> GlobalReply
 *   20  SPACE_NOTICE       cellapp -> manager            SpaceNotice
 *   21  CELL_LAYOUT        manager -> cellapp            CellLayout
 *   22  CELL_LOAD          cellapp -> manager            CellLoad
 *
 * Ids 12..31 are free for the framework; roles use 32 and up.
 */
#ifndef MC_SERVER_CONTROL_H
#define MC_SERVER_CONTROL_H

#include "mercury/interface.h"

enum {
    MC_CTL_REGISTER = 1,
    MC_CTL_HEARTBEAT = 2,
    MC_CTL_DEREGISTER = 3,
    MC_CTL_PROCESS_EVENT = 4,
    MC_CTL_QUERY = 5,
    MC_CTL_WATCHER = 6,
    MC_CTL_UNKNOWN_PROCESS = 7,
    MC_CTL_ID_RANGE = 8,
    MC_CTL_GLOBAL_REGISTER = 9,
    MC_CTL_GLOBAL_DEREGISTER = 10,
    MC_CTL_GLOBAL_LOOKUP = 11,
    MC_CTL_SPACE_NOTICE = 20,
    MC_CTL_CELL_LAYOUT = 21,
    MC_CTL_CELL_LOAD = 22,
};

/* Cells of a space (docs/WORLD.md "Cells"): the most cells a CellLayout may carry. */
#define MC_CELLS_PER_SPACE_MAX 256u
/* The most spaces a CELL_LOAD may name. */
#define MC_CELL_LOAD_SPACES_MAX 16u

/* Entity id ranges: the most a process may ask for at once. */
#define MC_ID_RANGE_MAX_COUNT 65536u
/* The largest entity id (ids are 1 .. 2^31-1). */
#define MC_ENTITY_ID_MAX 0x7FFFFFFFu
/* Global names: 1..MC_GLOBAL_NAME_MAX bytes of printable ASCII without spaces. */
#define MC_GLOBAL_NAME_MAX 64u

/* Largest control payload a process accepts (bytes of protobuf). Anything longer is
 * dropped unparsed and counted (watcher controlRejected); senders refuse to build one. */
#define MC_CTL_MAX_PAYLOAD (64u * 1024u)

/* The interface table (every message variable-length with a 4-byte length field). A
 * sender may use it to look up defs; the handlers belong to mc_server and expect an
 * mc_server as the nub's handler context. */
const mc_interface *mc_control_interface(void);

/* "REGISTER", ... or "?" */
const char *mc_control_name(unsigned id);

#endif
