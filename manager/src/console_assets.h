/* The console's pages, script and style, built into the manager from manager/console/
 * (console_assets.c is generated at build time by manager/embed_assets.cmake). */
#ifndef MC_MANAGER_CONSOLE_ASSETS_H
#define MC_MANAGER_CONSOLE_ASSETS_H

#include <stddef.h>

typedef struct {
    const char *name; /* "index.html", "console.js"... */
    const unsigned char *data;
    size_t len;
} mc_console_asset;

extern const mc_console_asset mc_console_assets[];
extern const size_t mc_console_asset_count;

/* The asset of that name, or NULL. */
const mc_console_asset *mc_console_asset_find(const char *name);

#endif
