/* Reading the cluster file deploy/cluster writes (cluster_file.h). */
#include "common/cluster_file.h"

#include "common/error.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool readable(const char *path) { return access(path, R_OK) == 0; }

bool mc_cluster_file_find(char *path, size_t pathlen)
{
    const char *run = getenv("MC_RUN_DIR");
    if (run && *run) {
        int n = snprintf(path, pathlen, "%s/%s", run, MC_CLUSTER_FILE_NAME);
        if (n > 0 && (size_t)n < pathlen && readable(path))
            return true;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    /* <repo>/<build>/bin/<tool>: two levels up from the binary's folder. */
    char *dir = dirname(exe);
    int k = snprintf(path, pathlen, "%s/../../run/%s", dir, MC_CLUSTER_FILE_NAME);
    if (k > 0 && (size_t)k < pathlen && readable(path))
        return true;
    /* a build directory outside the checkout: the checkout it was built from */
    k = snprintf(path, pathlen, "%s/run/%s", MC_SOURCE_ROOT, MC_CLUSTER_FILE_NAME);
    return k > 0 && (size_t)k < pathlen && readable(path);
}

int mc_cluster_file_get(const char *path, const char *key, char *out, size_t outlen, char *err,
                        size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        mc_set_error(err, errlen, "cannot read the cluster file %s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    size_t klen = strlen(key);
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (!strchr(line, '\n') && !feof(f)) {
            /* never a value cut short: a line longer than this is refused */
            fclose(f);
            mc_set_error(err, errlen, "%s: a line longer than %zu bytes", path,
                         sizeof line - 2);
            return -1;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, key, klen) != 0 || (p[klen] != ' ' && p[klen] != '\t'))
            continue;
        p += klen;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, "\r\n");
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0)
            continue;
        if (len >= outlen) {
            fclose(f);
            mc_set_error(err, errlen, "%s: the value of '%s' is too long", path, key);
            return -1;
        }
        memcpy(out, p, len);
        out[len] = '\0';
        found = 1;
    }
    fclose(f);
    return found;
}
