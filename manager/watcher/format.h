/* Output of the watcher tool: aligned plain text for people, --json for scripts, and the
 * mapping from failures to exit codes. */
#ifndef MC_WATCHER_FORMAT_H
#define MC_WATCHER_FORMAT_H

#include "args.h"
#include "proto/control.pb-c.h"

#include <stdbool.h>
#include <stdio.h>

/* What one process answered (reply NULL when it did not answer: see `error`). */
typedef struct {
    const char *process;
    Mc__Control__WatcherReply *reply;
    int exit_code;        /* WT_EXIT_OK or the failure's code */
    char error[320];      /* one line when exit_code != 0 */
} wt_result;

/* Exit code for a watcher status. */
int wt_exit_for_status(Mc__Control__WatcherStatus st);

/* Print results of ls/get/set/call. Errors go to `err` as "watcher: NAME: reason" lines in
 * text mode, or inside the JSON document. Returns the exit code (first failure's). */
int wt_print_results(FILE *out, FILE *err, const wt_args *a, const wt_result *results,
                     size_t n);
/* Print the registry (status command). */
void wt_print_status(FILE *out, bool json, const Mc__Control__QueryReply *reply);
/* Print a failure that happened before any process was asked (unknown target, manager
 * silent). */
void wt_print_error(FILE *out, FILE *err, bool json, int code, const char *message);

/* JSON string literal of s (with quotes) to out. */
void wt_json_string(FILE *out, const char *s);

#endif
