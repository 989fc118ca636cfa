/* Test harness for integration tests: real processes on 127.0.0.1 with random free ports.
 *
 * Every process started here gets PR_SET_PDEATHSIG(SIGKILL), so it dies with the test
 * process whatever happens; its pid is also remembered and killed (SIGKILL) by
 * h_kill_all(), which the harness registers with atexit() (Check's forked tests exit()
 * on failure, so cleanup runs on failure too). Every wait is bounded.
 */
#ifndef MC_TEST_HARNESS_H
#define MC_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A port on 127.0.0.1 free for both UDP and TCP (tcp is kept for readability at call
 * sites), picked at random below the ephemeral range and never twice per process; -1 if
 * none is found. */
int h_free_port(bool tcp);
/* build/bin/<name> (from MC_BIN_DIR) and the repository root (MC_SOURCE_DIR). */
const char *h_bin(const char *name, char *buf, size_t buflen);
const char *h_source_dir(void);
/* A fresh directory for this test's logs and run dirs: <build>/test-runs/it-XXXXXX. */
const char *h_tmpdir(void);

/* Start argv[0] (a path) with stdout and stderr appended to log_path; returns the pid
 * (or -1). The pid is killed by h_kill_all. */
pid_t h_spawn(char *const argv[], const char *log_path);
/* Remember a pid started some other way (deploy scripts) so h_kill_all kills it. */
void h_track(pid_t pid);
/* Wait up to timeout_ms for pid to exit; returns its exit status (0..255), 128+signal, or
 * -1 on timeout. */
int h_wait_exit(pid_t pid, int timeout_ms);
bool h_alive(pid_t pid);
void h_kill(pid_t pid, int sig);
void h_kill_all(void);

/* Run a command (argv[0] a path) to completion with a time limit, capturing stdout and
 * stderr (merged) into out[outlen]. Returns the exit status, or -1 on timeout/failure. */
int h_run(char *const argv[], char *out, size_t outlen, int timeout_ms);

/* The watcher tool against `manager` ("IP:PORT"): h_watcher(out, n, mgr, "get", "all",
 * "pid", NULL). Returns its exit status. */
int h_watcher(char *out, size_t outlen, const char *manager, ...);

/* Poll `watcher get TARGET PATH` until its output contains `want` (or timeout_ms). */
bool h_wait_watch(const char *manager, const char *target, const char *path, const char *want,
                  int timeout_ms);

/* Start a manager with the repository's defs at addr ("IP:PORT"; when addr is "", a free
 * port on 127.0.0.1 is chosen and written there), the extra options given (a NULL-ended
 * list), logging to log; wait (15 s) until it answers. Returns its pid, or -1. */
pid_t h_start_manager(char *addr, size_t addrlen, const char *log, ...);

/* Run a Check suite; returns the exit code for main (0 when every test passed). */
struct Suite;
int h_run_suite(struct Suite *suite);

/* Does the file contain the text? */
bool h_file_contains(const char *path, const char *text);

/* Sleep for ms milliseconds (tests only). */
void h_sleep_ms(int ms);

#endif
