/* What the cellapps say each witness sees: `watcher get cellapps entities` run as a child
 * process (the loop never waits: its output is read as it comes, through a pipe the host
 * polls), parsed into (entity id -> aoi/inView and aoi/viewIds) for the witnesses.
 */
#ifndef MC_CLIENT_VIEW_CHECK_H
#define MC_CLIENT_VIEW_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define VIEW_CHECK_MAX_OUTPUT (64u * 1024u * 1024u)

typedef struct {
    pid_t pid;
    int fd;            /* the pipe to poll, -1 when not running */
    char *out;
    size_t len, cap;
    bool done;
    int status;        /* the watcher's exit status once done (-1: killed or not run) */
    /* parsed once done: sorted by id */
    size_t n;
    int32_t *ids;
    uint32_t *in_view;
    const char **view_ids; /* the witness's aoi/viewIds text (into out), NULL when absent */
} view_check;

/* Start `WATCHER [--manager M] --timeout 15000 get cellapps entities`. 0 or -1 (err). */
int view_check_start(view_check *v, const char *watcher, const char *manager, char *err,
                     size_t errlen);
/* Read what is there (call when v->fd is readable); sets done at the end. */
void view_check_read(view_check *v);
/* The cellapps' view count of witness id: 0 and *out, or -1 when not known. */
int view_check_in_view(const view_check *v, int32_t id, uint32_t *out);
/* Whether the cellapps' view of witness id (aoi/viewIds) holds exactly the n ids given
 * (sorted ascending): 1 yes, 0 no, -1 not known (no such witness or no viewIds watcher). */
int view_check_same_ids(const view_check *v, int32_t id, const int32_t *ids, size_t n);
/* Stop (kill the child if it still runs) and free. */
void view_check_free(view_check *v);

#endif
