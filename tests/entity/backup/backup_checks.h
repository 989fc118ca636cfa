/* Checks shared by the backup and retirement tests (test_backup.c, test_retire.c) on the
 * routing tests' cluster (tests/entity/routing/cluster.h): each waits with a bound
 * (BC_WAIT_MS) and fails the test with what it saw. */
#ifndef MC_TESTS_BACKUP_CHECKS_H
#define MC_TESTS_BACKUP_CHECKS_H

#include "cluster.h"
#include "common/defs.h"
#include "mcclient/client.h"

#include <stdbool.h>
#include <stdint.h>

#define BC_WAIT_MS 60000

/* The manager's name of a slot's process. */
const char *bc_name(const rc_cluster *c, int slot);
/* command/call ID METHOD JSON on a slot's process; fails the test unless it ran. */
void bc_invoke(const rc_cluster *c, int slot, int32_t id, const char *method, const char *json);
/* command/createBase Probe props on a slot; fails the test without a new id. */
int32_t bc_create(const rc_cluster *c, int slot, const char *props);
/* A number at path on a slot's process; fails the test when it is not one. */
int64_t bc_num(const rc_cluster *c, int slot, const char *path);
/* Wait until an entity's property is want (fails the test otherwise). */
void bc_expect_prop(const rc_cluster *c, int slot, int32_t id, const char *prop, int64_t want);
/* Wait until the text at path holds needle (fails the test otherwise). */
void bc_expect_text(const rc_cluster *c, int slot, const char *path, const char *needle);
/* The Probe's label of entity id on a slot is the string want (fails the test otherwise). */
void bc_expect_label(const rc_cluster *c, int slot, int32_t id, const char *want);
/* A client for base id on a slot's baseapp, connected with a session it issued
 * (command/issueSession); fails the test when it cannot connect. */
mc_client *bc_connect_client(const rc_cluster *c, int slot, int32_t id,
                             const mc_entity_defs *defs);
/* Whether the number at path, or an entity's numeric property, reaches want in time. */
bool bc_wait_at_least(const rc_cluster *c, int slot, const char *path, int64_t want);
bool bc_wait_prop_at_least(const rc_cluster *c, int slot, int32_t id, const char *prop,
                           int64_t want);

#endif
