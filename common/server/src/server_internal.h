/* The mc_server instance and the framework's internal modules (not a public API). */
#ifndef MC_SERVER_INTERNAL_H
#define MC_SERVER_INTERNAL_H

#include "common/clock.h"
#include "common/config.h"
#include "common/watcher.h"
#include "common/defs.h"
#include "mercury/mercury.h"
#include "server/backup_ring.h"
#include "server/control.h"
#include "server/histogram.h"
#include "server/http.h"
#include "server/lease.h"
#include "server/load.h"
#include "server/server.h"

#include <event2/event.h>
#include <sys/types.h>

#include <stdbool.h>
#include <stdint.h>

struct event;

typedef enum {
    REG_NONE,        /* the manager itself, or not started */
    REG_WAITING,     /* a RegisterRequest is outstanding */
    REG_BACKOFF,     /* waiting before the next attempt */
    REG_REGISTERED,
} reg_state;

/* Latency histograms a process keeps at most (mc_server_histogram). */
#define MC_SERVER_MAX_HISTOGRAMS 8

/* Peers remembered at most; beyond, a dead or stopped one's slot is reused. */
#define MC_SERVER_MAX_PEERS 2048

/* Asynchronous watcher calls waiting at once; beyond, calls are refused ("busy"). */
#define MC_SERVER_MAX_WATCH_CALLS 256
typedef struct server_watch_call server_watch_call;

/* Entity id ranges held at most (the current one and the next). */
#define MC_SERVER_ID_RANGES_HELD 4
typedef struct {
    struct {
        uint64_t next, end; /* ids next .. end-1 are unused */
    } ranges[MC_SERVER_ID_RANGES_HELD];
    size_t n;
    bool asking;          /* an ID_RANGE request is outstanding */
    mc_time_us retry_at;  /* after a failure, not before */
    uint64_t received;    /* ranges received */
    uint64_t used;        /* ids handed out */
} server_entity_ids;

/* A global name this process registered (globals_kept.c). */
typedef struct {
    char name[MC_GLOBAL_NAME_MAX + 1];
    mc_mailbox_ref mb;
} server_kept_name;

/* A peer the manager told us about. */
typedef struct {
    uint32_t id;
    char name[32];
    mc_role role;
    char internal_addr[MC_ADDRESS_STRLEN];
    char external_addr[MC_ADDRESS_STRLEN];
    Mc__Control__ProcessState state;
} server_peer;

struct mc_server {
    mc_server_desc desc;
    mc_config *cfg;
    mc_option *options; /* standard + role options */
    struct server_cfg_watch *cfg_watches;
    char res_dir[4096];
    size_t option_count;
    mc_watchers *watchers;
    struct event_base *base;
    struct event *sigterm_ev;
    struct event *sigint_ev;
    struct event *tick_ev;       /* heartbeat / registration / load timer */
    struct event *shutdown_ev;   /* drives the graceful shutdown */
    mc_entity_defs *defs;
    char digest[65];
    char name[32];
    pid_t pid;
    uint64_t incarnation;        /* random per start (libsodium), never 0 */
    mc_time_us started_at;
    mc_load_meter load;
    double load_value;
    char hostname[64];

    /* Interfaces, and the channels in use on the internal one (for the shutdown flush). */
    mc_channel **channels;
    size_t nchannels;
    size_t channels_cap;
    mc_nub *internal;
    mc_message_def *iface_defs; /* control + role messages */
    mc_interface iface;
    mc_nub *external;
    char internal_addr[MC_ADDRESS_STRLEN];
    char external_addr[MC_ADDRESS_STRLEN];

    /* Registration with the manager (not used by the manager itself). */
    mc_address manager;
    char manager_addr[MC_ADDRESS_STRLEN];
    reg_state reg;
    uint32_t id;
    mc_time_us reg_started;      /* first attempt */
    mc_time_us next_attempt;
    mc_time_us last_heartbeat_sent;
    uint64_t heartbeat_ms;       /* interval the manager asked for */
    uint64_t dead_after_ms;
    uint64_t heartbeats_sent;
    uint64_t registrations;
    uint64_t reg_refusals;
    uint64_t reg_attempt;        /* numbers registration requests; stale replies are ignored */
    bool ever_registered;
    char refusal[256];
    uint64_t manager_instance;   /* the manager instance that gave id (fencing) */
    mc_time_us reg_sent_at;      /* when the outstanding registration request was sent */
    uint64_t reg_probes;         /* registrations sent while the lease had run out */
    mc_time_us probe_sent_at;    /* the last of them */
    /* The manager lease (lease.c; NULL for the manager): renewed by answered heartbeats and
     * registrations; entity messages wait in it while it has run out. */
    mc_lease *lease;
    bool lease_logged_valid;     /* for the one warning when it runs out (server.c) */
    size_t (*writes_held_fn)(void *ctx); /* the role's writes held by the lease (gauge) */
    void *writes_held_ctx;
    void *lease_watch_refs;      /* the lease/ counters' watcher contexts (lease_watchers.c) */

    /* Peers (births and deaths). */
    server_peer **peers;         /* stable pointers: watchers point at them */
    size_t npeers;
    size_t peers_cap;
    uint64_t births_seen;
    uint64_t deaths_seen;
    mc_backup_ring ring;         /* the manager's latest backup ring (backup_ring.h) */
    uint64_t ring_updates;       /* rings received */

    /* Watcher requests served; control messages dropped (too long, wrong sender). */
    uint64_t watcher_requests;
    uint64_t control_rejected;
    /* Watcher calls waiting for an asynchronous callable (watcher_calls.c). */
    server_watch_call *watch_calls;
    size_t nwatch_calls;
    bool freeing; /* mc_server_free has begun: nothing is sent any more */
    /* What control.c hands up to the parts that sit on it (set by server.c before the
     * interfaces open): watcher requests (watcher_calls.c); the manager's process events,
     * unknown-process notices and the death of the channel to it (registration.c). */
    struct {
        void (*watcher_request)(mc_server *s, const mc_message_info *info,
                                const uint8_t *data, size_t len);
        void (*process_event)(mc_server *s, const uint8_t *data, size_t len);
        void (*unknown_process)(mc_server *s, const uint8_t *data, size_t len);
        void (*manager_dead)(mc_server *s, bool restarted);
    } up;
    /* Entity ids (entity_ids.c). */
    server_entity_ids ids;
    /* The global names this process registered (globals_kept.c): registered again with a
     * restarted manager, which starts with none. */
    server_kept_name *kept;
    size_t nkept;
    size_t kept_cap;
    uint64_t globals_again;     /* registered again with a new manager instance */
    uint64_t globals_clashes;   /* taken by another process meanwhile: dropped */
    uint64_t globals_again_failed; /* not registered again (no answer, refused) */

    /* How late the loop runs a due timer (loop_lag.c; watchers loop/). */
    struct {
        struct event *ev;
        mc_time_us due;          /* when the probe is due */
        mc_time_us window_start; /* of the current 10 s window */
        uint64_t window_max, prev_window_max; /* the longest lag in it, in the one before */
        uint64_t max_ms;         /* the longest since started (settable: reset) */
        uint64_t stalls;         /* lags of a second or more */
    } lag;

    /* The HTTP port (--metrics; metrics_endpoint.c) and the latency histograms it serves. */
    mc_http *http;
    mc_histogram *hists[MC_SERVER_MAX_HISTOGRAMS];
    size_t nhists;

    /* Shutdown. */
    bool shutting_down;
    bool retiring;      /* mc_server_set_retiring: told in every registration */
    bool draining;      /* desc.draining still says so: not deregistered yet */
    bool deregistered;
    bool deregister_confirmed;  /* the manager answered the deregistration OK */
    int exit_code;
    mc_time_us shutdown_started;
    char shutdown_reason[128];
};

/* Graceful shutdown (shutdown.c): the shutdown event's step and the signal handler (SIGTERM,
 * SIGINT) server.c arms. */
void mc_server_on_shutdown_step(evutil_socket_t fd, short what, void *ctx);
void mc_server_on_signal(evutil_socket_t sig, short what, void *ctx);

/* The HTTP port (metrics_endpoint.c): open it when --metrics names one (0 or -1 with a
 * reason); free it and the histograms. */
int mc_server_http_open(mc_server *s, char *err, size_t errlen);
void mc_server_http_free(mc_server *s);

/* Options (server_options.c). */
int mc_server_build_options(mc_server *s);
/* The standard options' ranges (timeouts); false with a one-line reason. */
bool mc_server_check_options(const mc_config *cfg, char *err, size_t errlen);
bool mc_server_resolve_res(const char *given, char *out, size_t outlen, char *err,
                           size_t errlen);

/* Standard watchers (std_watchers.c). */
int mc_server_add_std_watchers(mc_server *s);

/* The control interface (control.c). */
int mc_server_open_interfaces(mc_server *s, char *err, size_t errlen);
void mc_server_close_interfaces(mc_server *s);
/* A request to `to`: on the channel to it, or off-channel (reliable once-off) when
 * off_channel, which works whatever state an old channel to that address is in. */
int mc_server_send_request(mc_server *s, const mc_address *to, uint8_t msg_id, const void *msg,
                           void (*on_reply)(mc_server *s, int status, const uint8_t *data,
                                            size_t len, void *arg),
                           void *arg, mc_time_us timeout_us, bool off_channel);
/* The channel to addr (created if needed) dies after timeout_us without traffic. */
void mc_server_set_channel_timeout(mc_server *s, const mc_address *addr, mc_time_us timeout_us);
/* Unacked reliable data left on any channel (for the shutdown flush). */
bool mc_server_channels_idle(mc_server *s);

/* Watcher requests (watcher_calls.c): answer one (a call perhaps later); free the records
 * of calls still waiting (after the watchers are freed, which detaches their dones). */
void mc_server_watcher_request(mc_server *s, const mc_message_info *info, const uint8_t *data,
                               size_t len);
void mc_server_watch_calls_free(mc_server *s);

/* The lease/ watchers (lease_watchers.c; nothing on the manager). */
int mc_server_lease_publish(mc_server *s);

/* Entity id ranges (entity_ids.c): ask when registered and running low; the watchers. */
void mc_server_ids_tick(mc_server *s, mc_time_us now);
int mc_server_ids_publish(mc_server *s);

/* Global names (globals_client.c, globals_kept.c, globals_again.c): a register that is not
 * kept again (the re-registration itself); keep a name the manager took, forget one
 * deregistered; register every kept name again (with a new manager instance); the watchers
 * globals/...; free. */
int mc_server_global_register_again(mc_server *s, const char *name, const mc_mailbox_ref *mb,
                                    mc_server_global_fn fn, void *ctx);
void mc_server_globals_keep(mc_server *s, const char *name, const mc_mailbox_ref *mb);
void mc_server_globals_forget(mc_server *s, const char *name, const mc_mailbox_ref *mb);
/* Whether name is kept with this mailbox (globals_kept.c). */
bool mc_server_globals_kept(mc_server *s, const char *name, const mc_mailbox_ref *mb);
void mc_server_globals_register_again(mc_server *s);
int mc_server_globals_publish(mc_server *s);
void mc_server_globals_free(mc_server *s);

/* The loop lag probe (loop_lag.c): its event and watchers (0 or -1); armed when the loop
 * starts running; freed. */
int mc_server_lag_init(mc_server *s);
void mc_server_lag_start(mc_server *s);
void mc_server_lag_free(mc_server *s);

/* Registration and heartbeats (registration.c). */
void mc_server_reg_tick(mc_server *s, mc_time_us now);
void mc_server_reg_on_event(mc_server *s, const uint8_t *data, size_t len);
/* Keep the manager's backup ring (NULL: none given). */
void mc_server_take_ring(mc_server *s, const Mc__Control__BackupRing *ring);
void mc_server_reg_on_unknown(mc_server *s, const uint8_t *data, size_t len);
/* The channel to the manager died; restarted: the manager opened a new one (it restarted). */
void mc_server_reg_on_manager_dead(mc_server *s, bool restarted);
void mc_server_deregister(mc_server *s);

/* Peers (peers.c): remember (or update) the peer info describes, publishing peers/<name>
 * (NULL when it has no name or the table is full of live peers). */
server_peer *mc_server_peer_upsert(mc_server *s, const Mc__Control__ProcessInfo *info);

#endif
