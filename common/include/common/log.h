/* Logging: one line per event, "<UTC timestamp> <process> <LEVEL> [file:line: ]message".
 *
 * Errors and critical messages carry file:line. The level is settable at run time (the
 * `config/logLevel` watcher uses mc_log_set_level). Output goes to stderr unless a sink is
 * installed (tests capture lines that way). The process name and level are per process,
 * which is what they describe; nothing else here is global.
 */
#ifndef MC_COMMON_LOG_H
#define MC_COMMON_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    MC_LOG_TRACE = 0,
    MC_LOG_DEBUG,
    MC_LOG_INFO,
    MC_LOG_WARNING,
    MC_LOG_ERROR,
    MC_LOG_CRITICAL,
} mc_log_level;

/* Receives each formatted line (without trailing newline). */
typedef void (*mc_log_sink)(void *ctx, mc_log_level level, const char *line);

void mc_log_set_process_name(const char *name);
const char *mc_log_process_name(void);

void mc_log_set_level(mc_log_level level);
mc_log_level mc_log_get_level(void);
bool mc_log_enabled(mc_log_level level);

/* "trace", "debug", "info", "warning" (or "warn"), "error", "critical"; case-insensitive.
 * Returns 0 and sets *out, or -1 for an unknown name. */
int mc_log_level_parse(const char *text, mc_log_level *out);
const char *mc_log_level_name(mc_log_level level);

/* Install a sink (NULL restores stderr). */
void mc_log_set_sink(mc_log_sink sink, void *ctx);

void mc_log_write(mc_log_level level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void mc_log_vwrite(mc_log_level level, const char *file, int line, const char *fmt, va_list ap);

#define MC_LOG(level, ...)                                                                  \
    do {                                                                                    \
        if (mc_log_enabled(level))                                                          \
            mc_log_write((level), __FILE__, __LINE__, __VA_ARGS__);                         \
    } while (0)

#define MC_TRACE(...) MC_LOG(MC_LOG_TRACE, __VA_ARGS__)
#define MC_DEBUG(...) MC_LOG(MC_LOG_DEBUG, __VA_ARGS__)
#define MC_INFO(...) MC_LOG(MC_LOG_INFO, __VA_ARGS__)
#define MC_WARNING(...) MC_LOG(MC_LOG_WARNING, __VA_ARGS__)
#define MC_ERROR(...) MC_LOG(MC_LOG_ERROR, __VA_ARGS__)
#define MC_CRITICAL(...) MC_LOG(MC_LOG_CRITICAL, __VA_ARGS__)

#endif
