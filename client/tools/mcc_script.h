/* mc-client's commands, one a line (typed on stdin or read from --script FILE):
 *   base METHOD [JSON-ARGS]   an exposed base method of the player
 *   cell METHOD [JSON-ARGS]   an exposed cell method of the player
 *   move X Y Z [DX DY DZ]     move the player's cell entity
 *   wait MS                   let MS milliseconds pass (printing what arrives)
 *   expect NAME [TEXT]        wait (at most --timeout) for a client call named NAME (whose
 *                             arguments, as JSON, contain TEXT when given)
 *   quit                      log off and exit 0
 * Blank lines and lines starting with '#' are skipped.
 */
#ifndef MC_CLIENT_MCC_SCRIPT_H
#define MC_CLIENT_MCC_SCRIPT_H

#include <stddef.h>

#include "common/game_module.h"

#define MCC_LINE_MAX 4096

typedef enum {
    MCC_NONE = 0, /* blank or comment */
    MCC_BASE,
    MCC_CELL,
    MCC_MOVE,
    MCC_WAIT,
    MCC_EXPECT,
    MCC_QUIT,
} mcc_kind;

typedef struct {
    mcc_kind kind;
    char name[128];           /* BASE/CELL: the method; EXPECT: the call's name */
    char text[256];           /* EXPECT: what its arguments' JSON must contain ("": any) */
    const char *json;         /* BASE/CELL: the arguments (points into the line; "" = none) */
    mc_vector3 pos, dir;      /* MOVE */
    unsigned long ms;         /* WAIT */
} mcc_command;

/* Parse one line (modified in place: trailing newline removed). 0, or -1 with a reason. */
int mcc_parse(char *line, mcc_command *out, char *err, size_t errlen);

#endif
