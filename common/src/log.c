/* Line-oriented logging with timestamp, process name and level. */
#include "common/log.h"
#include "common/clock.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static char g_process[64] = "mercury";
static mc_log_level g_level = MC_LOG_INFO;
static mc_log_sink g_sink;
static void *g_sink_ctx;

static const char *const LEVEL_NAMES[] = {"TRACE", "DEBUG", "INFO", "WARNING", "ERROR",
                                          "CRITICAL"};

void mc_log_set_process_name(const char *name)
{
    snprintf(g_process, sizeof g_process, "%s", name ? name : "");
}

const char *mc_log_process_name(void) { return g_process; }

void mc_log_set_level(mc_log_level level)
{
    if (level >= MC_LOG_TRACE && level <= MC_LOG_CRITICAL)
        g_level = level;
}

mc_log_level mc_log_get_level(void) { return g_level; }

bool mc_log_enabled(mc_log_level level) { return level >= g_level; }

int mc_log_level_parse(const char *text, mc_log_level *out)
{
    if (!text)
        return -1;
    for (int i = MC_LOG_TRACE; i <= MC_LOG_CRITICAL; i++) {
        if (strcasecmp(text, LEVEL_NAMES[i]) == 0) {
            *out = (mc_log_level)i;
            return 0;
        }
    }
    if (strcasecmp(text, "warn") == 0) {
        *out = MC_LOG_WARNING;
        return 0;
    }
    return -1;
}

const char *mc_log_level_name(mc_log_level level)
{
    if (level < MC_LOG_TRACE || level > MC_LOG_CRITICAL)
        return "UNKNOWN";
    return LEVEL_NAMES[level];
}

void mc_log_set_sink(mc_log_sink sink, void *ctx)
{
    g_sink = sink;
    g_sink_ctx = ctx;
}

void mc_log_vwrite(mc_log_level level, const char *file, int line, const char *fmt, va_list ap)
{
    if (!mc_log_enabled(level))
        return;
    char buf[2048];
    int64_t secs;
    int32_t micros;
    mc_clock_wall(&secs, &micros);
    time_t t = (time_t)secs;
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    int w = snprintf(buf + n, sizeof buf - n, ".%03dZ %s %s ", (int)(micros / 1000), g_process,
                     mc_log_level_name(level));
    if (w > 0)
        n += (size_t)w;
    if (level >= MC_LOG_ERROR && file && n < sizeof buf) {
        const char *base = strrchr(file, '/');
        w = snprintf(buf + n, sizeof buf - n, "%s:%d: ", base ? base + 1 : file, line);
        if (w > 0)
            n += (size_t)w;
    }
    if (n < sizeof buf)
        vsnprintf(buf + n, sizeof buf - n, fmt, ap);
    buf[sizeof buf - 1] = '\0';
    /* One event, one line: fold any newline the message carried. */
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (g_sink) {
        g_sink(g_sink_ctx, level, buf);
        return;
    }
    fprintf(stderr, "%s\n", buf);
}

void mc_log_write(mc_log_level level, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mc_log_vwrite(level, file, line, fmt, ap);
    va_end(ap);
}
