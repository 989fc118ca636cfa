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

#endif
