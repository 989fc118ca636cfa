/* The watcher registry: a tree of named live values a process publishes.
 *
 * Paths are '/'-separated names ("nub/packetsSent", "config/tickRate"); the empty path or "/"
 * is the root. Interior nodes are directories; leaves are typed values (int, uint, float,
 * bool, string) in one of three modes:
 *   - read-only: a getter;
 *   - read-write: a getter and a setter that may refuse a value with a reason;
 *   - callable: a function taking string arguments and producing a string result.
 * A callable may also be asynchronous (mc_watch_add_async_callable): it answers later,
 * from the event loop, through the mc_watch_done it was handed.
 * Every instance is independent (two nubs in one process each have their own registry or
 * their own subtree). Operations return an mc_watch_status; a detail line is written to the
 * caller's error buffer.
 */
#ifndef MC_COMMON_WATCHER_H
#define MC_COMMON_WATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    MC_WATCH_OK = 0,
    MC_WATCH_ERR_NOT_FOUND = -1,     /* no such path */
    MC_WATCH_ERR_NOT_DIRECTORY = -2, /* path names a value where a directory was needed */
    MC_WATCH_ERR_IS_DIRECTORY = -3,  /* path names a directory where a value was needed */
    MC_WATCH_ERR_READ_ONLY = -4,     /* set on a read-only value or a callable */
    MC_WATCH_ERR_BAD_VALUE = -5,     /* text does not parse as the value's type */
    MC_WATCH_ERR_REFUSED = -6,       /* the setter or callable refused */
    MC_WATCH_ERR_NOT_CALLABLE = -7,  /* call on something that is not callable */
    MC_WATCH_ERR_EXISTS = -8,        /* add over an existing path */
    MC_WATCH_ERR_BAD_PATH = -9,      /* empty component, bad character, too long */
    MC_WATCH_ERR_NO_MEMORY = -10,
    MC_WATCH_ERR_PENDING = -11,      /* mc_watch_call on an asynchronous callable that did not
                                      * complete at once (use mc_watch_call_async) */
} mc_watch_status;

typedef enum {
    MC_WATCH_INT,
    MC_WATCH_UINT,
    MC_WATCH_FLOAT,
    MC_WATCH_BOOL,
    MC_WATCH_STRING,
} mc_watch_type;

typedef enum {
    MC_WATCH_READ_ONLY,
    MC_WATCH_READ_WRITE,
    MC_WATCH_CALLABLE,
} mc_watch_mode;

/* A typed value. A string value owns its text (mc_watch_value_clear frees it). */
typedef struct {
    mc_watch_type type;
    union {
        int64_t i;
        uint64_t u;
        double f;
        bool b;
        char *s;
    } as;
} mc_watch_value;

#define MC_WATCH_MAX_PATH 256
#define MC_WATCH_MAX_NAME 64

typedef struct mc_watchers mc_watchers;

/* Getter: fill *out (its type is preset to the leaf's type). */
typedef void (*mc_watch_get_fn)(void *ctx, mc_watch_value *out);
/* Setter: accept (return true) or refuse with a reason in why[whylen]. The value has the
 * leaf's type. */
typedef bool (*mc_watch_set_fn)(void *ctx, const mc_watch_value *value, char *why,
                                size_t whylen);
/* Callable: returns true with a heap string in *result (may be NULL for "no output"), or
 * false with a reason in why[whylen]. */
typedef bool (*mc_watch_call_fn)(void *ctx, int argc, const char *const *argv, char **result,
                                 char *why, size_t whylen);

/* An asynchronous call in flight. The callable that receives it owns it until it calls
 * mc_watch_complete (which frees it). */
typedef struct mc_watch_done mc_watch_done;
/* An asynchronous callable: must eventually call mc_watch_complete(done, ...) exactly once,
 * from inside fn or later from the event loop (also when its owner is torn down: complete
 * with ok=false then). */
typedef void (*mc_watch_async_fn)(void *ctx, int argc, const char *const *argv,
                                  mc_watch_done *done);
/* The outcome of a call: st is MC_WATCH_OK with result (may be NULL: no output), or
 * MC_WATCH_ERR_REFUSED with a one-line err. Both strings are valid during the call only. */
typedef void (*mc_watch_result_fn)(void *ctx, mc_watch_status st, const char *result,
                                   const char *err);

mc_watchers *mc_watchers_new(void);
/* Free the registry. Asynchronous calls still pending are detached: their result
 * functions are never called, and the owner's later mc_watch_complete only frees the
 * done (it stays valid until then). */
void mc_watchers_free(mc_watchers *w);

const char *mc_watch_status_name(mc_watch_status status);
const char *mc_watch_type_name(mc_watch_type type);
const char *mc_watch_mode_name(mc_watch_mode mode);

/* Registration. Intermediate directories are created. Adding over an existing path fails. */
mc_watch_status mc_watch_add(mc_watchers *w, const char *path, mc_watch_type type,
                             mc_watch_mode mode, mc_watch_get_fn get, mc_watch_set_fn set,
                             void *ctx);
mc_watch_status mc_watch_add_callable(mc_watchers *w, const char *path, mc_watch_call_fn call,
                                      void *ctx, const char *help);
/* An asynchronous callable (listed, typed and shown like any callable). */
mc_watch_status mc_watch_add_async_callable(mc_watchers *w, const char *path,
                                            mc_watch_async_fn fn, void *ctx, const char *help);
/* Convenience: expose a variable directly. Read-write ones accept any value of the type. */
mc_watch_status mc_watch_add_int(mc_watchers *w, const char *path, int64_t *var,
                                 mc_watch_mode mode);
mc_watch_status mc_watch_add_uint(mc_watchers *w, const char *path, uint64_t *var,
                                  mc_watch_mode mode);
mc_watch_status mc_watch_add_float(mc_watchers *w, const char *path, double *var,
                                   mc_watch_mode mode);
mc_watch_status mc_watch_add_bool(mc_watchers *w, const char *path, bool *var,
                                  mc_watch_mode mode);
/* A read-only string; the pointer must stay valid. */
mc_watch_status mc_watch_add_const_string(mc_watchers *w, const char *path, const char *text);
/* Create an (empty) directory. Succeeds if it already exists as a directory. */
mc_watch_status mc_watch_add_directory(mc_watchers *w, const char *path);
/* Remove a value or a whole directory subtree. */
mc_watch_status mc_watch_remove(mc_watchers *w, const char *path);

/* Listing a directory (children in name order). */
typedef struct {
    const char *name;
    bool is_directory;
    mc_watch_type type; /* leaves only */
    mc_watch_mode mode; /* leaves only */
} mc_watch_entry;
typedef void (*mc_watch_list_fn)(void *ctx, const mc_watch_entry *entry);
mc_watch_status mc_watch_list(const mc_watchers *w, const char *path, mc_watch_list_fn fn,
                              void *ctx, char *err, size_t errlen);
/* Visit every leaf under path (or the leaf itself) depth-first in name order with its full
 * path and current value (callables are listed with a NULL value). */
typedef void (*mc_watch_walk_fn)(void *ctx, const char *path, mc_watch_mode mode,
                                 const mc_watch_value *value);
mc_watch_status mc_watch_walk(const mc_watchers *w, const char *path, mc_watch_walk_fn fn,
                              void *ctx, char *err, size_t errlen);
bool mc_watch_is_directory(const mc_watchers *w, const char *path);

/* Read a leaf value. The caller clears *out. */
mc_watch_status mc_watch_get(const mc_watchers *w, const char *path, mc_watch_value *out,
                             char *err, size_t errlen);
/* Set a read-write leaf from text parsed as its type. */
mc_watch_status mc_watch_set(mc_watchers *w, const char *path, const char *text, char *err,
                             size_t errlen);
/* Run a callable. *result receives a heap string (or NULL); the caller frees it. An
 * asynchronous callable that does not complete before its function returns gives
 * MC_WATCH_ERR_PENDING (its later result is discarded). */
mc_watch_status mc_watch_call(mc_watchers *w, const char *path, int argc,
                              const char *const *argv, char **result, char *err,
                              size_t errlen);
/* Run a callable, synchronous or asynchronous. MC_WATCH_OK: it ran, and on_result is called
 * exactly once with the outcome (for a synchronous callable, or an asynchronous one that
 * completes at once, before this returns; otherwise when it completes, unless the registry
 * is freed first). Any other status (no such path, not callable, bad path, out of memory):
 * nothing ran and on_result is not called; a detail is in err. */
mc_watch_status mc_watch_call_async(mc_watchers *w, const char *path, int argc,
                                    const char *const *argv, mc_watch_result_fn on_result,
                                    void *ctx, char *err, size_t errlen);
/* Deliver an asynchronous call's outcome: ok with result (may be NULL), or !ok with a
 * reason in why. Frees done; calling it twice on one done is a use-after-free. */
void mc_watch_complete(mc_watch_done *done, bool ok, const char *result, const char *why);
/* Is path an asynchronous callable? */
bool mc_watch_is_async(const mc_watchers *w, const char *path);
/* Asynchronous calls started and not completed yet. */
size_t mc_watch_pending(const mc_watchers *w);

/* Value helpers. */
void mc_watch_value_clear(mc_watch_value *v);
/* Render as text into a new heap string: integers in decimal, floats with %.17g trimmed,
 * bools as true/false, strings as-is. */
char *mc_watch_value_to_text(const mc_watch_value *v);
/* Parse text as the given type into *out. */
bool mc_watch_value_parse(mc_watch_type type, const char *text, mc_watch_value *out);
/* Set a string value (copies). */
void mc_watch_value_set_string(mc_watch_value *v, const char *text);

#endif
