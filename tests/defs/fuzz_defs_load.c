/* libFuzzer target: the def loader on arbitrary entity_defs/E.def and alias.xml contents
 * (split at the first NUL byte). Loading must succeed or fail with errors, never crash or
 * leak. Each run writes its files into its own temporary folder and removes it. */
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
    mc_log_set_level(MC_LOG_CRITICAL);
    const uint8_t *nul = memchr(data, 0, size);
    size_t def_len = nul ? (size_t)(nul - data) : size;
    char *dir = tu_mkdtemp();
    if (!dir)
        return 0;
    if (tu_write(dir, "entities.xml",
                 "<root><ClientServerEntities><E/></ClientServerEntities></root>") == 0 &&
        write_bytes(dir, "entity_defs/E.def", data, def_len) == 0 &&
        (!nul || write_bytes(dir, "entity_defs/alias.xml", nul + 1, size - def_len - 1) == 0)) {
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
