/* persist-bench's child processes: start one (dying with the bench), run one to completion
 * capturing its output, read a process's CPU time, stop one. Blocking calls: the bench is a
 * one-shot tool, not a server process. */
#ifndef MC_PERSIST_BENCH_PROC_H
#define MC_PERSIST_BENCH_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A port of 127.0.0.1 free for both TCP and UDP, or -1. */
int pb_free_port(void);
/* Start argv (argv[0] looked up in PATH when it has no '/') with stdout and stderr to log
 * (NULL: /dev/null); it gets SIGKILL when the bench dies. The pid, or -1. */
pid_t pb_spawn(char *const argv[], const char *log);
/* Run argv to completion within timeout_ms, stdout and stderr in out. Its exit status, or -1
 * (could not start, or killed at the timeout). */
int pb_run(char *const argv[], char *out, size_t outlen, int timeout_ms);
/* User + system CPU time of a running process, microseconds (-1 when unknown). */
double pb_cpu_us(pid_t pid);
/* SIGTERM, wait up to timeout_ms, then SIGKILL; reaps it. The exit status or -1. */
int pb_stop(pid_t pid, int timeout_ms);
/* Sleep (setup and polling only, never inside a measured loop of the bench's own). */
void pb_sleep_ms(int ms);

#endif
