/* The cellapp's view update (the AoI tick, docs/WORLD.md "The tick"), run as a sliced job
 * (server/sliced.h) so that no loop turn lasts longer than --aoiSliceMs however many
 * witnesses and entities there are: heartbeats, watcher requests and the network run between
 * slices.
 *
 * Every 1/--aoiHz seconds a tick starts, unless the last one is still running: then the next
 * one starts as soon as it ends (ticks never overlap; aoi/ticksLate counts them). A tick has
 * the three phases the whole-tick update always had, in order, each over a list of ids taken
 * when the phase begins: (1) every witness's view is updated (onEnteredAoI / onLeftAoI);
 * (2) every entity some witness tracks has its client-visible properties diffed; (3) every
 * witness's client is sent its updates. Whatever changes between slices (entities created,
 * moved or destroyed, witnesses turned off) is what game callbacks in a tick could always do:
 * a gone entity or witness is skipped, a new one waits for the next tick.
 *
 * Watchers: aoi/sliceMs (settable), aoi/slices (all ticks), aoi/lastSlices, aoi/mostSlices
 * (settable: reset), aoi/maxSliceUs (settable: reset), aoi/lastWorkUs, aoi/ticksLate; and,
 * as before, aoi/updates, aoi/lastUpdateUs (now the tick's wall time, start to end) and
 * aoi/maxUpdateUs. */
#ifndef MC_CELLAPP_AOI_TICK_H
#define MC_CELLAPP_AOI_TICK_H

#include "entity/engine.h"
#include "common/stream.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cell_aoi_tick cell_aoi_tick;

/* Read --aoiSliceMs, publish the watchers, start the tick timer (0, or -1 with why). */
int cell_aoi_tick_init(mc_engine *e, char *err, size_t errlen);
void cell_aoi_tick_free(mc_engine *e);

/* aoi.c: the tick's units of work. */
size_t cell_aoi_witness_ids(mc_engine *e, int32_t *out, size_t max);
size_t cell_aoi_entity_count(mc_engine *e);
size_t cell_aoi_entity_ids(mc_engine *e, int32_t *out, size_t max);
/* Update witness `id`'s view (nothing when it is no longer a watching witness). */
void cell_aoi_update_view(mc_engine *e, int32_t id);
/* Diff entity `id`'s client-visible properties (when some witness tracks it). */
void cell_aoi_diff_one(mc_engine *e, int32_t id, mc_ostream *scratch);
/* Send witness `id`'s client its updates; the size of its view (0 when gone). */
size_t cell_aoi_send_one(mc_engine *e, int32_t id);

#endif
