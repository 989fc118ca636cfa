/* The manager's cellapp-manager part (docs/WORLD.md "Cells"): it learns from cellapps which
 * spaces they hold (SPACE_NOTICE), keeps each space's partition into cells (cells.h), tells
 * every cellapp of a space the whole layout whenever it changes (CELL_LAYOUT), splits a
 * space onto another cellapp on an operator's word (command/splitSpace SPACE [CELLAPP
 * [AT]]), and merges away the cell of a cellapp that dies or stops. Watchers cells/... */
#ifndef MC_MANAGER_CELLS_GLUE_H
#define MC_MANAGER_CELLS_GLUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cells.h"
#include "registry.h"

struct mc_manager;
struct mc_config;

typedef struct mc_manager_cells mc_manager_cells;

/* Options (in the manager's table) and their check. */
#define MC_MANAGER_CELLS_OPTIONS                                                           \
    {"cellSpacesMax", MC_OPT_UINT, "65536",                                                \
     "spaces whose partition into cells the manager keeps (16..10000000): beyond, a new "  \
     "space is not partitioned (it stays on its one cellapp)"},                            \
    {"cellsPerSpaceMax", MC_OPT_UINT, "64",                                                \
     "the most cells (cellapps) one space may be split into (2..256)"},                    \
    {"cellBalanceMs", MC_OPT_UINT, "1000",                                                 \
     "how often the boundaries of split spaces move toward the less loaded side (0: never; " \
     "100..600000; also settable: cells/balanceMs)"},                                       \
    {"cellBalanceStepM", MC_OPT_FLOAT, "2",                                                \
     "the most a boundary moves each time, metres (0.01..1000)"},                          \
    {"cellBalanceHysteresis", MC_OPT_FLOAT, "0.1",                                         \
     "a boundary moves only when the loads of its sides differ by more than this (0..100)"}
bool mc_manager_cells_check(const struct mc_config *cfg, char *err, size_t errlen);

/* on_ready: the state and its watchers (false: out of memory). */
bool mc_manager_cells_init(struct mc_manager *m);
void mc_manager_cells_free(struct mc_manager *m);
/* SPACE_NOTICE from src. */
void mc_manager_cells_on_notice(struct mc_manager *m, const char *src, const uint8_t *data,
                                size_t len);
/* The manager shuts down or is freed: the balancing timer goes (the event base lives). */
void mc_manager_cells_stop(struct mc_manager *m);
/* A cellapp died or stopped: its cells merge into their neighbours. */
void mc_manager_cells_process_gone(struct mc_manager *m, uint32_t process_id);

/* Where a lost cell of space is restored (QUERY_SPACE_HOME) when the space is partitioned:
 * `held` (the home picked before) while it still serves a cell of it, else the least loaded
 * live cellapp serving one, so that a restored real lands inside the partition and is
 * offloaded from there to the cell holding its position. NULL: the space is not partitioned
 * (any cellapp will do) or no live cellapp serves it. */
mc_reg_entry *mc_manager_cells_home(struct mc_manager *m, int32_t space, uint32_t held);

/* What the automatic splits (cells_auto.c, which sits on this file) know of each cellapp
 * from its load reports, given to this part when they start (a function left NULL: nothing
 * known): whether it said it is retiring (it is given no cell), the tick load it
 * reported lately (-1 when none), and the load of its cell of a space as it reported it
 * lately (0 for a cell its fresh report does not list, -1 when no fresh report). */
typedef struct {
    bool (*retiring)(struct mc_manager *m, uint32_t process_id);
    double (*tick_load)(struct mc_manager *m, uint32_t process_id);
    double (*cell_load)(struct mc_manager *m, int32_t space, uint32_t process_id);
} mc_manager_cells_loads;
void mc_manager_cells_set_loads(struct mc_manager *m, mc_manager_cells_loads loads);

/* For the automatic splits and merges (cells_auto.h). */
mc_cells *mc_manager_cells_partition(struct mc_manager *m);
/* Split from's cell of space, its upper half to `to` (mc_cells_split), log it as done by
 * `who`, tell the space's cellapps; the outcome in text. */
mc_cells_status mc_manager_cells_split_onto(struct mc_manager *m, int32_t space, uint32_t from, uint32_t to,
                                            bool has_at, float at, const char *who,
                                            char *text, size_t textlen);
/* process's cell of space merges into its sibling; the space's cellapps and process (which
 * hands its reals to the cells they are in) are told. False when it served no cell. */
bool mc_manager_cells_merge_away(struct mc_manager *m, int32_t space, uint32_t process_id,
                                 const char *why);

#endif
