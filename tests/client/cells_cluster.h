/* The processes and players of the client tests of one space over two cellapps (issue 22
 * item 5, test_client_cells.c): a manager (boundaries fixed until a test sets
 * cells/balanceMs; when it does they follow any load difference, 3 m a step), a baseapp, two
 * cellapps (cellapp01, cellapp02) with the example game on loopback, and players: clients of
 * the library over real sockets, each logged in to its own Avatar in the "world" space, with
 * a log of everything its client heard. Every process is stopped by cells_cluster_stop (and
 * killed by the harness when a check fails first). */
#ifndef MC_TESTS_CELLS_CLUSTER_H
#define MC_TESTS_CELLS_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client_cluster.h"
#include "client_player.h"

typedef struct {
    client_cluster cc;          /* the manager, baseapp, cellapp01; the defs; the watcher */
    pid_t cpid2;                /* cellapp02 */
    char clog2[600];
    pid_t cpid3;                /* cellapp03 (cells_cluster_start_n with 3) */
    char clog3[600];
    char cell_addr[3][32];      /* the cellapps' internal addresses */
} cells_cluster;

/* A player: client_player.h's (its log, its entity). */
typedef client_player cells_player;

void cells_cluster_start(cells_cluster *c);
/* The same with n cellapps (2 or 3). */
void cells_cluster_start_n(cells_cluster *c, int n);
void cells_cluster_stop(cells_cluster *c);
/* The cellapp's name ("cellapp01", "cellapp02", "cellapp03") by index. */
const char *cells_cellapp(int i);

/* Create the world (a Space) and log the players in, each to a new Avatar that entered it
 * (at the origin); returns the Space's base id when every player's client knows its own cell
 * entity. */
int32_t cells_enter_world(cells_cluster *c, cells_player *ps, int n);
/* Log every player off and free its client. */
void cells_leave_world(cells_player *ps, int n);

/* Tick every player's client for ms, or until cond(ps, n, arg) holds (true then). */
typedef bool (*cells_cond)(cells_player *ps, int n, const void *arg);
bool cells_pump(cells_player *ps, int n, int ms, cells_cond cond, const void *arg);

/* Index of the cellapp holding entity id real, with its base naming that cellapp and the
 * other cellapp holding its ghost (a move settled), or -1. */
int cells_settled_holder(cells_cluster *c, int32_t id);
/* Pump until entity id is settled on cellapp i; fails the test after 30 s. */
void cells_wait_settled_on(cells_cluster *c, cells_player *ps, int n, int32_t id, int i);
/* The space the entity is in (from whichever cellapp holds it), and which holds its real. */
int32_t cells_space_of(cells_cluster *c, int32_t id, int *holder);
/* command/splitSpace SPACE CELLAPP AT; fails the test when refused. */
void cells_split(cells_cluster *c, int32_t space, int to, const char *at);

/* Walk player p's client to (x, z) in steps of at most 10 m every 300 ms (the cellapps take
 * 50 m/s), facing yaw, pumping every player. */
void cells_walk(cells_player *ps, int n, cells_player *p, float x, float z, float yaw);

#endif
