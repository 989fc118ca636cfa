/* The standard options every server process takes, and finding the res folder. */
#include "server_internal.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const mc_option common_options[] = {
    {"res", MC_OPT_STRING, "",
     "entity definitions folder (default: the repository's defs/ next to the build)"},
    {"internal", MC_OPT_STRING, "127.0.0.1:0",
     "IP:PORT of the internal (cluster) interface; port 0 picks a free one; a specific IP, "
     "not 0.0.0.0 (the manager takes a registration only from the address it names)"},
    {"logLevel", MC_OPT_STRING, "info", "trace, debug, info, warning, error or critical"},
    {"channelTimeoutMs", MC_OPT_UINT, "60000",
     "a channel on the internal interface that receives nothing this long is dead"},
    {"shutdownTimeoutMs", MC_OPT_UINT, "2000",
     "how long a graceful shutdown waits for the manager and for channels to flush"},
    {"secretFile", MC_OPT_STRING, "",
     "the cluster secret (64 hex characters, mode 0600) that authenticates every internal "
     "packet; required (default: $MC_SECRET_FILE; deploy/cluster makes one per cluster)"},
    {"metrics", MC_OPT_STRING, "",
     "IP:PORT of the HTTP port serving /metrics (Prometheus) and, on the manager, the web "
     "console; a specific IP (the internal one); empty: off"},
    {"httpMaxConnections", MC_OPT_UINT, "32",
     "HTTP connections served at once on --metrics; more wait (1..4096)"},
    {"httpMaxRequestBytes", MC_OPT_UINT, "16384",
     "largest HTTP request headers, and body, accepted on --metrics (256..16777216)"},
    {"httpTimeoutS", MC_OPT_UINT, "10", "an idle HTTP connection is closed after (1..3600)"},
    {"portableAuth", MC_OPT_BOOL, "false",
     "tag internal packets with ChaCha20-Poly1305 instead of AES-GCM (every host verifies "
     "both; set it on every process of a cluster with hosts whose CPU lacks AES-NI)"},
};

static const mc_option external_option = {
    "external", MC_OPT_STRING, "127.0.0.1:0",
    "IP:PORT of the external (client) interface; port 0 picks a free one"};

static const mc_option client_options[] = {
    {"manager", MC_OPT_STRING, "127.0.0.1:21000", "IP:PORT of the manager's internal interface"},
    {"registerTimeoutMs", MC_OPT_UINT, "10000",
     "give up (exit 1) if the first registration with the manager takes longer"},
    {"leaseHeldMax", MC_OPT_UINT, "10000",
     "entity messages held at most while out of touch with the manager (the lease ran out); "
     "beyond, a call fails at once (1..10000000)"},
    {"leaseHeldBytes", MC_OPT_UINT, "16777216",
     "bytes of entity messages held at most while the lease has run out (1024..4294967296)"},
};

int mc_server_build_options(mc_server *s)
{
    size_t n = sizeof common_options / sizeof common_options[0] + 1 +
               sizeof client_options / sizeof client_options[0] + s->desc.option_count;
    s->options = calloc(n, sizeof *s->options);
    if (!s->options)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < sizeof common_options / sizeof common_options[0]; i++)
        s->options[k++] = common_options[i];
    if (s->desc.has_external)
        s->options[k++] = external_option;
    if (s->desc.role != MC_ROLE_MANAGER)
        for (size_t i = 0; i < sizeof client_options / sizeof client_options[0]; i++)
            s->options[k++] = client_options[i];
    for (size_t i = 0; i < s->desc.option_count; i++)
        s->options[k++] = s->desc.options[i];
    s->option_count = k;
    return 0;
}

bool mc_server_check_options(const mc_config *cfg, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        uint64_t min, max;
    } ranges[] = {
        {"channelTimeoutMs", 100, 3600000},
        {"shutdownTimeoutMs", 100, 600000},
        {"registerTimeoutMs", 100, 3600000},
        {"leaseHeldMax", 1, 10000000},
        {"leaseHeldBytes", 1024, 4294967296ull},
        {"httpMaxConnections", 1, 4096},
        {"httpMaxRequestBytes", 256, 16777216},
        {"httpTimeoutS", 1, 3600},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        if (!mc_config_has(cfg, ranges[i].name))
            continue;
        uint64_t v = mc_config_get_uint(cfg, ranges[i].name);
        if (v < ranges[i].min || v > ranges[i].max) {
            snprintf(err, errlen, "--%s: %llu is outside %llu..%llu", ranges[i].name,
                     (unsigned long long)v, (unsigned long long)ranges[i].min,
                     (unsigned long long)ranges[i].max);
            return false;
        }
    }
    return true;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A folder of entity defs (its entities.xml), not just any folder named defs (a build
 * directory has one of its own). */
static bool is_defs(const char *path)
{
    char f[PATH_MAX + 64];
    snprintf(f, sizeof f, "%s/entities.xml", path);
    return is_dir(path) && access(f, R_OK) == 0;
}

bool mc_server_resolve_res(const char *given, char *out, size_t outlen, char *err,
                           size_t errlen)
{
    if (given && *given) {
        if (!is_dir(given)) {
            snprintf(err, errlen, "--res %s: not a directory", given);
            return false;
        }
        snprintf(out, outlen, "%s", given);
        return true;
    }
    /* The binary lives in <build>/bin; the repository's defs/ is usually <build>/../defs. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(err, errlen, "cannot find the defs folder (no /proc/self/exe): pass --res DIR");
        return false;
    }
    exe[n] = '\0';
    const char *dir = dirname(exe);
    const char *candidates[] = {"../../defs", "../defs", "../../../defs"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", dir, candidates[i]);
        char real[PATH_MAX];
        if (is_defs(path) && realpath(path, real)) {
            snprintf(out, outlen, "%s", real);
            return true;
        }
    }
    /* a build directory outside the checkout: the checkout it was built from */
    char path[PATH_MAX + 32], real[PATH_MAX];
    snprintf(path, sizeof path, "%s/defs", MC_SOURCE_ROOT);
    if (is_defs(path) && realpath(path, real)) {
        snprintf(out, outlen, "%s", real);
        return true;
    }
    snprintf(err, errlen, "no defs folder found near %s: pass --res DIR", dir);
    return false;
}
