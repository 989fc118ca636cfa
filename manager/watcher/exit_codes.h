/* Exit codes of the watcher tool: one per kind of failure, so scripts can tell them apart.
 * When several processes fail differently, the first failing process (in name order)
 * decides the code. */
#ifndef MC_WATCHER_EXIT_CODES_H
#define MC_WATCHER_EXIT_CODES_H

enum {
    WT_EXIT_OK = 0,
    WT_EXIT_FAILURE = 1,         /* anything else: network setup, refused by the process */
    WT_EXIT_USAGE = 2,           /* bad command line */
    WT_EXIT_UNKNOWN_PROCESS = 3, /* TARGET names no process (or no live one) */
    WT_EXIT_UNKNOWN_PATH = 4,    /* PATH does not exist (or is malformed) */
    WT_EXIT_READ_ONLY = 5,       /* set on a read-only value or a callable */
    WT_EXIT_BAD_VALUE = 6,       /* the value does not parse as the watcher's type */
    WT_EXIT_TIMEOUT = 7,         /* the manager or a process did not answer in time */
    WT_EXIT_WRONG_KIND = 8,      /* call on a value, get/set on the wrong kind of node */
    WT_EXIT_REFUSED = 9,         /* the setter or callable refused */
};

#endif
