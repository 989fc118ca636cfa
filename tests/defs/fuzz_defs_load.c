/* libFuzzer target: the def loader on arbitrary contents of entity_defs/E.def, alias.xml,
 * entity_defs/P.def (a possible Parent) and interfaces/I.def (a possible interface), split
 * at NUL bytes in that order. Loading must succeed or fail with errors, never crash or leak.
 * Each run writes its files into its own temporary folder and removes it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/defs.h"
#include "common/log.h"
#include "defs_test_util.h"

static int write_bytes(const char *dir, const char *rel, const uint8_t *p, size_t n)
{
    char *text = malloc(n + 1);
    if (!text)
        return -1;
    memcpy(text, p, n);
    text[n] = '\0';
    int rc = tu_write(dir, rel, text);
    free(text);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {"entity_defs/E.def", "entity_defs/alias.xml",
                                        "entity_defs/P.def", "entity_defs/interfaces/I.def"};
    mc_log_set_level(MC_LOG_CRITICAL);
    char *dir = tu_mkdtemp();
    if (!dir)
        return 0;
    int rc = tu_write(dir, "entities.xml",
                      "<root><ClientServerEntities><E/></ClientServerEntities></root>");
    const uint8_t *p = data, *end = data + size;
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]) && rc == 0 && p <= end; f++) {
        const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
        size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);
        rc = write_bytes(dir, files[f], p, len);
        if (!nul)
            break;
        p = nul + 1;
    }
    if (rc == 0) {
        char err[4096];
        mc_entity_defs *d = mc_defs_load(dir, err, sizeof(err));
        if (d) {
            if (strlen(mc_defs_digest_hex(d)) != 64)
                abort();
            mc_defs_free(d);
        } else if (!err[0]) {
            abort(); /* a refusal always says why */
        }
    }
    tu_rmtree(dir);
    free(dir);
    return 0;
}
