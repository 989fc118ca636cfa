/* Automatic splits and merges (docs/WORLD.md "Automatic splits"): the manager's
 * cellapp-manager part splits a space onto another cellapp when load asks for it, and
 * merges a cell it split back when load is low enough for long enough.
 *
 * Every cellapp reports its load each second (CELL_LOAD: its smoothed tick load, its reals
 * and its costliest cells: each one's load, its space's reals there and their median
 * position). Every --cellAutoMs the manager looks: a cellapp whose tick load has been at
 * least --cellSplitLoad for --cellSplitHoldMs has its costliest split-able cell (the highest
 * cell load, most reals among equals; at least --cellSplitMinReals reals there) split at the
 * median of those reals onto the least loaded live cellapp not serving the
 * space whose load is below half the threshold; a cell made so whose cellapp and sibling
 * have both been at most --cellMergeLoad for --cellMergeHoldMs merges back. At most one
 * split or merge per --cellAutoGapMs, cluster-wide. A cellapp's first report (its birth)
 * starts a look at once, so a new cellapp takes a share of a space over the threshold. */
#ifndef MC_MANAGER_CELLS_AUTO_H
#define MC_MANAGER_CELLS_AUTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mc_manager;
struct mc_config;

typedef struct mc_cells_auto mc_cells_auto;

#define MC_CELLS_AUTO_OPTIONS                                                               \
    {"cellAutoMs", MC_OPT_UINT, "1000",                                                     \
     "how often the manager looks for a space to split or a cell to merge by load (0: "     \
     "never; 100..600000; settable: cells/auto/checkMs)"},                                  \
    {"cellSplitLoad", MC_OPT_FLOAT, "0.8",                                                  \
     "a cellapp whose reported tick load (a view update's work over its period) is at "     \
     "least this for cellSplitHoldMs has its busiest space's cell split (0.01..100)"},       \
    {"cellSplitHoldMs", MC_OPT_UINT, "5000",                                                \
     "how long a cellapp's load must stay over cellSplitLoad before a split (0..3600000)"}, \
    {"cellSplitMinReals", MC_OPT_UINT, "200",                                               \
     "a cell is split only when its cellapp has at least this many reals of the space "     \
     "(2..1000000000)"},                                                                    \
    {"cellMergeLoad", MC_OPT_FLOAT, "0.2",                                                  \
     "a cell an automatic split made merges back when its cellapp and its sibling's both "  \
     "report at most this for cellMergeHoldMs (0: never; 0..100, below half of "            \
     "cellSplitLoad)"},                                                                     \
    {"cellMergeHoldMs", MC_OPT_UINT, "30000",                                               \
     "how long both loads must stay under cellMergeLoad before a merge (1000..3600000)"},   \
    {"cellAutoGapMs", MC_OPT_UINT, "10000",                                                 \
     "the least time between two automatic splits or merges, cluster-wide (0..3600000)"}
#define MC_CELLS_AUTO_OPTION_COUNT 7

/* A cellapp's load report (CELL_LOAD), decoded and checked. */
#define MC_CELLS_LOAD_SPACES 16 /* = MC_CELL_LOAD_SPACES_MAX */
typedef struct {
    int32_t space;
    uint32_t reals;
    float x, z; /* the median position of those reals */
    float load; /* the load of the sender's cell of the space, 0..1000 */
} mc_cells_space_load;
typedef struct {
    double tick_load;
    uint32_t reals;
    mc_cells_space_load spaces[MC_CELLS_LOAD_SPACES];
    size_t nspaces;
    bool retiring; /* the cellapp is stopping: it takes no cell */
} mc_cells_load;
/* Pure (unit-tested): false with a one-line reason for a payload that does not parse, a
 * tick load or a cell load not within 0..1000 (NaN included), more than 16 spaces, a space
 * id <= 0, a space named twice or a position that is not finite. */
bool mc_cells_auto_parse_load(const uint8_t *data, size_t len, mc_cells_load *out, char *why,
                              size_t whylen);

/* Pure (unit-tested): the order in which a busy cellapp's cells are tried for a split: the
 * indices into spaces[0..n) of those with at least min_reals reals, the highest cell load
 * first, most reals among equals (then the report's order). Returns how many (<= n,
 * written to order[]). */
size_t mc_cells_auto_split_order(const mc_cells_space_load *spaces, size_t n, uint32_t min_reals,
                                 size_t *order);

bool mc_cells_auto_check(const struct mc_config *cfg, char *err, size_t errlen);
/* The state, its timer and its watchers (false: out of memory). */
bool mc_cells_auto_init(struct mc_manager *m);
/* The timer goes (shutdown); free everything. */
void mc_cells_auto_stop(struct mc_manager *m);
void mc_cells_auto_free(struct mc_manager *m);
/* CELL_LOAD from src. */
void mc_cells_auto_on_load(struct mc_manager *m, const char *src, const uint8_t *data,
                           size_t len);
/* The cellapp said it is retiring (a graceful stop under way): it is given no cell, by a
 * split, an operator's default choice or a restore. */
bool mc_cells_auto_retiring(struct mc_manager *m, uint32_t process_id);
/* The tick load the cellapp reported lately (within 3 s), or -1 when none. */
double mc_cells_auto_tick_load(struct mc_manager *m, uint32_t process_id);
/* The load of the cellapp's cell of space as it reported it lately (within 3 s): 0 for a
 * cell the report does not list (none of its 16 costliest), -1 when no fresh report. */
double mc_cells_auto_cell_load(struct mc_manager *m, int32_t space, uint32_t process_id);
/* A cellapp died or stopped: its report goes. */
void mc_cells_auto_process_gone(struct mc_manager *m, uint32_t process_id);

#endif
