/* mc-client's output: one line per thing the client hears (text, or JSON lines with --json).
 * Text:  player ID TYPE {props}        | call ID TYPE.METHOD [args]
 *        property ID TYPE.NAME VALUE   | enter ID TYPE at X Y Z {props}
 *        leave ID | props ID {props} | moved ID to X Y Z | correction ID to X Y Z
 *        end HOW REASON: TEXT
 * JSON:  {"event":"player|call|property|enter|leave|props|moved|correction|end", ...}
 */
#ifndef MC_CLIENT_MCC_PRINT_H
#define MC_CLIENT_MCC_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "mcclient/client.h"

typedef struct {
    FILE *out;
    bool json;
    const mc_entity_defs *defs;
} mcc_printer;

void mcc_print_player(const mcc_printer *p, const mc_cw_player *pl);
void mcc_print_call(const mcc_printer *p, int32_t id, uint16_t type, const mc_def_method *m,
                    const mc_value *args);
void mcc_print_property(const mcc_printer *p, int32_t id, uint16_t type,
                        const mc_def_property *prop, const mc_value *v);
/* type: the entity's type as the client's view knows it (for CALL and PROPS records) */
void mcc_print_world(const mcc_printer *p, const mc_world_record *r, uint16_t type);
void mcc_print_end(const mcc_printer *p, int how, int reason, const char *text);
/* A line of the tool's own (text: as is; JSON: {"event":"info","text":...}). */
void mcc_print_info(const mcc_printer *p, const char *event, const char *text);

#endif
