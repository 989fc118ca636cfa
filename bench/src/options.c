/* Option table and checks for mercury-bench. */
#include "options.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/log.h"
#include "payload.h"

static const mc_option bench_option_table[] = {
    {"messages", MC_OPT_UINT, "1000000", "number of reliable messages each side sends"},
    {"size", MC_OPT_UINT, "32", "bytes per message (8 to 1048576)"},
    {"loss", MC_OPT_FLOAT, "0", "relay: probability a datagram is dropped (0 to 0.9)"},
    {"dup", MC_OPT_FLOAT, "0", "relay: probability a datagram is duplicated (0 to 1)"},
    {"reorder", MC_OPT_FLOAT, "0", "relay: probability a datagram is held back behind 1-3 later ones (0 to 1)"},
    {"time-limit", MC_OPT_FLOAT, "60", "seconds each side may run before it is stopped and reported as unfinished"},
    {"seed", MC_OPT_UINT, "1", "relay PRNG seed"},
    {"listen", MC_OPT_STRING, NULL, "ADDR:PORT: run only the receivers, here (start this first)"},
    {"connect", MC_OPT_STRING, NULL, "ADDR:PORT: run only the senders, to a --listen process"},
    {"only", MC_OPT_STRING, NULL,
     "run one side only: mercury, mercury-auth (authenticated packets) or enet"},
    {"latency", MC_OPT_BOOL, "false", "latency mode: --channels channels each sending --rate messages/s for --duration s through the relay (see docs/tools/mercury-bench.md)"},
    {"channels", MC_OPT_UINT, "100", "latency mode: channels (1 to 255)"},
    {"rate", MC_OPT_UINT, "30", "latency mode: messages per second per channel (1 to 1000)"},
    {"duration", MC_OPT_FLOAT, "10", "latency mode: seconds of sending (0.1 to 600)"},
    {"delay", MC_OPT_UINT, "0", "relay: one-way latency added to every datagram, in ms (0 to 1000)"},
    {"log-level", MC_OPT_STRING, "warning", "log level of the transports (trace..critical)"},
};

int bench_parse_addr(const char *text, struct sockaddr_in *out)
{
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || (size_t)(colon - text) >= 64)
        return -1;
    char host[64];
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    uint64_t port;
    if (!mc_parse_uint(colon + 1, &port) || port == 0 || port > 65535)
        return -1;
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    out->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &out->sin_addr) != 1)
        return -1;
    return 0;
}

static int check_prob(const char *name, double v, double max, char *err, size_t errlen)
{
    if (!(v >= 0 && v <= max)) {
        snprintf(err, errlen, "--%s must be between 0 and %g, got %g", name, max, v);
        return -1;
    }
    return 0;
}

static int fill(const mc_config *cfg, bench_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (mc_config_positional_count(cfg) > 0) {
        snprintf(err, errlen, "unexpected argument '%s' (see --help)", mc_config_positional(cfg, 0));
        return -1;
    }
    o->messages = mc_config_get_uint(cfg, "messages");
    if (o->messages == 0 || o->messages > UINT32_MAX) {
        snprintf(err, errlen, "--messages must be between 1 and %u", UINT32_MAX);
        return -1;
    }
    uint64_t size = mc_config_get_uint(cfg, "size");
    if (size < BENCH_PAYLOAD_MIN || size > BENCH_PAYLOAD_MAX) {
        snprintf(err, errlen, "--size must be between %u and %u bytes, got %llu", BENCH_PAYLOAD_MIN,
                 BENCH_PAYLOAD_MAX, (unsigned long long)size);
        return -1;
    }
    o->size = (size_t)size;
    o->loss = mc_config_get_float(cfg, "loss");
    o->dup = mc_config_get_float(cfg, "dup");
    o->reorder = mc_config_get_float(cfg, "reorder");
    if (check_prob("loss", o->loss, 0.9, err, errlen) || check_prob("dup", o->dup, 1, err, errlen) ||
        check_prob("reorder", o->reorder, 1, err, errlen))
        return -1;
    o->time_limit_s = mc_config_get_float(cfg, "time-limit");
    if (!(o->time_limit_s > 0 && o->time_limit_s <= 3600)) {
        snprintf(err, errlen, "--time-limit must be more than 0 and at most 3600 seconds");
        return -1;
    }
    o->seed = mc_config_get_uint(cfg, "seed");
    const char *listen = mc_config_get_string(cfg, "listen");
    const char *connect = mc_config_get_string(cfg, "connect");
    if (*listen && *connect) {
        snprintf(err, errlen, "--listen and --connect exclude each other");
        return -1;
    }
    o->mode = BENCH_MODE_LOCAL;
    if (*listen || *connect) {
        const char *a = *listen ? listen : connect;
        if (bench_parse_addr(a, &o->addr) != 0) {
            snprintf(err, errlen, "--%s: '%s' is not an IPv4 ADDR:PORT (port 1-65535)",
                     *listen ? "listen" : "connect", a);
            return -1;
        }
        o->mode = *listen ? BENCH_MODE_LISTEN : BENCH_MODE_CONNECT;
    }
    if (o->mode == BENCH_MODE_LISTEN && bench_options_impaired(o)) {
        snprintf(err, errlen, "--loss/--dup/--reorder go with --connect (the relay runs on the sending side)");
        return -1;
    }
    const char *only = mc_config_get_string(cfg, "only");
    o->run_mercury = !*only || strcmp(only, "mercury") == 0;
    o->run_mercury_auth = !*only || strcmp(only, "mercury-auth") == 0;
    o->run_enet = !*only || strcmp(only, "enet") == 0;
    if (*only && !o->run_mercury && !o->run_mercury_auth && !o->run_enet) {
        snprintf(err, errlen, "--only must be 'mercury', 'mercury-auth' or 'enet', got '%s'",
                 only);
        return -1;
    }
    o->latency = mc_config_get_bool(cfg, "latency");
    uint64_t channels = mc_config_get_uint(cfg, "channels");
    uint64_t rate = mc_config_get_uint(cfg, "rate");
    uint64_t delay = mc_config_get_uint(cfg, "delay");
    o->duration_s = mc_config_get_float(cfg, "duration");
    if (channels < 1 || channels > 255) {
        snprintf(err, errlen, "--channels must be between 1 and 255, got %llu",
                 (unsigned long long)channels);
        return -1;
    }
    if (rate < 1 || rate > 1000) {
        snprintf(err, errlen, "--rate must be between 1 and 1000, got %llu",
                 (unsigned long long)rate);
        return -1;
    }
    if (!(o->duration_s >= 0.1 && o->duration_s <= 600)) {
        snprintf(err, errlen, "--duration must be between 0.1 and 600 seconds");
        return -1;
    }
    if (delay > 1000) {
        snprintf(err, errlen, "--delay must be at most 1000 ms, got %llu", (unsigned long long)delay);
        return -1;
    }
    o->channels = (uint32_t)channels;
    o->rate = (uint32_t)rate;
    o->delay_ms = (uint32_t)delay;
    if (o->latency && o->mode != BENCH_MODE_LOCAL) {
        snprintf(err, errlen, "--latency runs locally (no --listen/--connect)");
        return -1;
    }
    if (o->latency && o->size < BENCH_LATENCY_MIN_SIZE) {
        snprintf(err, errlen, "--latency needs --size of at least %u bytes", BENCH_LATENCY_MIN_SIZE);
        return -1;
    }
    if (!o->latency && delay) {
        snprintf(err, errlen, "--delay goes with --latency");
        return -1;
    }
    mc_log_level level;
    if (mc_log_level_parse(mc_config_get_string(cfg, "log-level"), &level) != 0) {
        snprintf(err, errlen, "--log-level: unknown level '%s'", mc_config_get_string(cfg, "log-level"));
        return -1;
    }
    mc_log_set_level(level);
    return 0;
}

int bench_options_parse(int argc, char **argv, bench_options *o, char *err, size_t errlen)
{
    mc_config *cfg = mc_config_new(
        "mercury-bench",
        "Sends N reliable messages of S bytes from one process to another over mercury and over "
        "ENet, checks exactly-once in-order delivery, and compares throughput, CPU and memory.",
        bench_option_table, sizeof bench_option_table / sizeof bench_option_table[0]);
    if (!cfg) {
        snprintf(err, errlen, "internal error: bad option table");
        return -1;
    }
    int rc;
    mc_config_status st = mc_config_parse_args(cfg, argc, argv, err, errlen);
    if (st == MC_CONFIG_HELP)
        rc = 1;
    else if (st == MC_CONFIG_ERROR)
        rc = -1;
    else
        rc = fill(cfg, o, err, errlen);
    mc_config_free(cfg);
    return rc;
}

bool bench_options_impaired(const bench_options *o)
{
    return o->loss > 0 || o->dup > 0 || o->reorder > 0;
}
