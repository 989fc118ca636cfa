/* Checks shared by the backup and retirement tests (backup_checks.h). */
#include "backup_checks.h"
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

const char *bc_name(const rc_cluster *c, int slot) { return c->name[slot]; }

void bc_invoke(const rc_cluster *c, int slot, int32_t id, const char *method, const char *json)
{
    char out[4096];
    int rc = rc_invoke(c, bc_name(c, slot), id, method, json, out, sizeof out);
    ck_assert_msg(rc == 0, "%s: call %d %s %s: exit %d: %s", bc_name(c, slot), (int)id, method,
                  json, rc, out);
}

int32_t bc_create(const rc_cluster *c, int slot, const char *props)
{
    int32_t id = rc_create(c, slot, props);
    ck_assert_msg(id > 0, "createBase on %s failed", bc_name(c, slot));
    return id;
}

int64_t bc_num(const rc_cluster *c, int slot, const char *path)
{
    int64_t v = rc_num(c, bc_name(c, slot), path);
    ck_assert_msg(v != RC_NO_NUMBER, "%s %s: no number", bc_name(c, slot), path);
    return v;
}

void bc_expect_prop(const rc_cluster *c, int slot, int32_t id, const char *prop, int64_t want)
{
    int64_t got;
    ck_assert_msg(rc_wait_prop(c, bc_name(c, slot), id, prop, want, BC_WAIT_MS, &got),
                  "%s entity %d %s: %lld, expected %lld", bc_name(c, slot), (int)id, prop,
                  (long long)got, (long long)want);
}

void bc_expect_text(const rc_cluster *c, int slot, const char *path, const char *needle)
{
    char v[4096] = "";
    bool ok = rc_wait_text(c, bc_name(c, slot), path, needle, BC_WAIT_MS);
    if (!ok)
        rc_get(c, bc_name(c, slot), path, v, sizeof v);
    ck_assert_msg(ok, "%s %s: '%s' does not hold '%s'", bc_name(c, slot), path, v, needle);
}

void bc_expect_label(const rc_cluster *c, int slot, int32_t id, const char *want)
{
    char v[4096] = "", quoted[256];
    snprintf(quoted, sizeof quoted, "\"%s\"", want);
    ck_assert_msg(rc_prop(c, bc_name(c, slot), id, "label", v, sizeof v), "%s entity %d: no label",
                  bc_name(c, slot), (int)id);
    ck_assert_msg(strcmp(v, quoted) == 0, "%s entity %d label %s, expected %s", bc_name(c, slot),
                  (int)id, v, quoted);
}

mc_client *bc_connect_client(const rc_cluster *c, int slot, int32_t id,
                             const mc_entity_defs *defs)
{
    char out[1024], ids[16];
    snprintf(ids, sizeof ids, "%d", (int)id);
    ck_assert_int_eq(rc_call(c, out, sizeof out, bc_name(c, slot), "command/issueSession", ids,
                             NULL),
                     0);
    const char *v = strstr(out, "command/issueSession");
    ck_assert_ptr_nonnull(v);
    v += strlen("command/issueSession");
    unsigned long long sid;
    char hex[80], addr[64];
    ck_assert_msg(sscanf(v, " %llx %79s %63s", &sid, hex, addr) == 3, "issueSession: %s", out);
    mc_client_config cfg = {.baseapp = addr, .session_id = sid, .defs = defs,
                            .timeout_ms = 5000};
    for (int i = 0; i < 32; i++) {
        unsigned b;
        ck_assert(sscanf(hex + 2 * i, "%2x", &b) == 1);
        cfg.session_key[i] = (uint8_t)b;
    }
    char err[4096];
    mc_client *client = mc_client_connect(&cfg, err, sizeof err);
    ck_assert_msg(client != NULL, "%s", err);
    return client;
}

/* Poll until the number (a watcher's, or else an entity's property) reaches want. */
static bool wait_num(const rc_cluster *c, int slot, int32_t id, const char *what, int64_t want)
{
    long deadline = rc_now_ms() + BC_WAIT_MS;
    while (rc_now_ms() < deadline) {
        int64_t v = id ? rc_prop_num(c, bc_name(c, slot), id, what)
                       : rc_num(c, bc_name(c, slot), what);
        if (v != RC_NO_NUMBER && v >= want)
            return true;
        h_sleep_ms(100);
    }
    return false;
}

bool bc_wait_at_least(const rc_cluster *c, int slot, const char *path, int64_t want)
{
    return wait_num(c, slot, 0, path, want);
}

bool bc_wait_prop_at_least(const rc_cluster *c, int slot, int32_t id, const char *prop,
                           int64_t want)
{
    return wait_num(c, slot, id, prop, want);
}
