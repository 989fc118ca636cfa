/* Command line of the watcher tool:
 *   watcher [--manager IP:PORT] [--secretFile FILE] [--json] [--timeout MS]
 *           ls|get|set|call|status ...
 */
#ifndef MC_WATCHER_ARGS_H
#define MC_WATCHER_ARGS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { WT_CMD_LS, WT_CMD_GET, WT_CMD_SET, WT_CMD_CALL, WT_CMD_STATUS } wt_command;

typedef struct {
    const char *manager;   /* "IP:PORT" (checked) */
    /* Where manager came from: "--manager", "$MC_MANAGER", "the cluster file PATH" or
     * "the default" (for messages). */
    char manager_source[512];
    char manager_buf[64];  /* the address read from the cluster file */
    /* The cluster secret's file (every internal packet is authenticated with it):
     * --secretFile, else $MC_SECRET_FILE, else the cluster file's `secretFile` line; NULL
     * when none names one (wt_client_new then refuses). */
    const char *secret_file;
    char secret_buf[400];
    bool json;
    unsigned timeout_ms;   /* per request */
    bool help;
    wt_command command;
    const char *target;    /* process name, plural role, "manager" or "all" */
    const char *path;      /* "" for the root */
    int nargs;             /* set: 1 value; call: the arguments */
    char **args;
} wt_args;

#define WT_DEFAULT_MANAGER "127.0.0.1:21000"
#define WT_DEFAULT_TIMEOUT_MS 5000u

/* Parse argv. Returns 0, or -1 with a one-line reason in err. The manager's address is
 * --manager, else the environment variable MC_MANAGER (IP:PORT), else the `manager` line of
 * the cluster file (cluster_file.h: $MC_RUN_DIR/cluster.conf, then <repo>/run/cluster.conf),
 * else WT_DEFAULT_MANAGER. */
int wt_args_parse(wt_args *a, int argc, char **argv, char *err, size_t errlen);
void wt_args_usage(const char *program);
const char *wt_command_name(wt_command c);

#endif
