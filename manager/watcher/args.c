/* Parsing the watcher tool's command line. */
#include "args.h"
#include "common/cluster_file.h"

#include "common/config.h"
#include "common/error.h"
#include "mercury/address.h"
#include "mercury/auth.h"
#include "mercury/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A one-line reason into err; returns -1. */
#define bad(err, errlen, ...) (mc_set_error((err), (errlen), __VA_ARGS__), -1)

const char *wt_command_name(wt_command c)
{
    switch (c) {
    case WT_CMD_LS: return "ls";
    case WT_CMD_GET: return "get";
    case WT_CMD_SET: return "set";
    case WT_CMD_CALL: return "call";
    case WT_CMD_STATUS: return "status";
    }
    return "?";
}

void wt_args_usage(const char *program)
{
    printf("usage: %s [--manager IP:PORT] [--json] [--timeout MS] COMMAND\n"
           "Read and change the live values (watchers) of a running Mercury Cluster.\n"
           "\n"
           "commands:\n"
           "  ls   TARGET [PATH]          list a directory (the root when PATH is omitted)\n"
           "  get  TARGET [PATH]          read a value; a directory reads recursively\n"
           "  set  TARGET PATH VALUE      write a read-write value\n"
           "  call TARGET PATH [ARG...]   run a callable watcher (e.g. command/shutdown)\n"
           "  status                      every process the manager knows, with state and load\n"
           "\n"
           "TARGET: a process name (baseapp01, manager), a role (loginapps, baseapps,\n"
           "cellapps), or all.\n"
           "\n"
           "options:\n"
           "  --manager IP:PORT    the manager's internal address (default: $MC_MANAGER, else\n"
           "                       the cluster file $MC_RUN_DIR/cluster.conf or <repo>/run/\n"
           "                       cluster.conf that deploy/cluster up writes, else %s)\n"
           "  --secretFile FILE    the cluster secret (default: $MC_SECRET_FILE, else the\n"
           "                       cluster file's secretFile line)\n"
           "  --json               machine-readable output\n"
           "  --timeout MS         how long to wait for each answer (default %u)\n"
           "  --help               this text\n"
           "\n"
           "exit codes: 0 ok, 1 other failure, 2 usage, 3 unknown process, 4 unknown path,\n"
           "5 read-only, 6 bad value, 7 no answer in time, 8 wrong kind of watcher,\n"
           "9 refused by the process\n",
           program, WT_DEFAULT_MANAGER, WT_DEFAULT_TIMEOUT_MS);
}

/* Take an option's value: "--name=value" or "--name value". */
static const char *opt_value(int argc, char **argv, int *i, const char *name, char *err,
                             size_t errlen)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (arg[n] == '=')
        return arg + n + 1;
    if (*i + 1 >= argc) {
        mc_set_error(err, errlen, "%s needs a value", name);
        return NULL;
    }
    return argv[++*i];
}

static bool is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

int wt_args_parse(wt_args *a, int argc, char **argv, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    const char *env = getenv("MC_MANAGER");
    a->manager = NULL;
    a->timeout_ms = WT_DEFAULT_TIMEOUT_MS;
    a->path = "";
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(arg, "--help") == 0) {
            a->help = true;
            return 0;
        } else if (strcmp(arg, "--json") == 0) {
            a->json = true;
        } else if (is_opt(arg, "--manager")) {
            const char *v = opt_value(argc, argv, &i, "--manager", err, errlen);
            if (!v)
                return -1;
            a->manager = v;
            snprintf(a->manager_source, sizeof a->manager_source, "--manager");
        } else if (is_opt(arg, "--secretFile")) {
            const char *v = opt_value(argc, argv, &i, "--secretFile", err, errlen);
            if (!v)
                return -1;
            a->secret_file = v;
        } else if (is_opt(arg, "--timeout")) {
            const char *v = opt_value(argc, argv, &i, "--timeout", err, errlen);
            uint64_t ms;
            if (!v)
                return -1;
            if (!mc_parse_uint(v, &ms) || ms == 0 || ms > 600000)
                return bad(err, errlen, "--timeout needs milliseconds (1..600000), not '%s'", v);
            a->timeout_ms = (unsigned)ms;
        } else {
            return bad(err, errlen, "unknown option '%s' (try --help)", arg);
        }
    }
    if (!a->manager && env && *env) {
        a->manager = env;
        snprintf(a->manager_source, sizeof a->manager_source, "$MC_MANAGER");
    }
    char path[400];
    bool have_file = mc_cluster_file_find(path, sizeof path);
    if (!a->secret_file)
        a->secret_file = mc_auth_secret_file(NULL);
    if (!a->secret_file && have_file) {
        int rc = mc_cluster_file_get(path, "secretFile", a->secret_buf, sizeof a->secret_buf,
                                     err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 1)
            a->secret_file = a->secret_buf;
    }
    if (!a->manager && have_file) {
        int rc = mc_cluster_file_get(path, "manager", a->manager_buf, sizeof a->manager_buf, err,
                                     errlen);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return bad(err, errlen, "the cluster file %s names no manager (a 'manager IP:PORT' "
                       "line); pass --manager", path);
        a->manager = a->manager_buf;
        snprintf(a->manager_source, sizeof a->manager_source, "the cluster file %s", path);
    }
    if (!a->manager) {
        a->manager = WT_DEFAULT_MANAGER;
        snprintf(a->manager_source, sizeof a->manager_source, "the default");
    }
    mc_address m;
    if (mc_address_parse(a->manager, &m) != MC_OK || m.port == 0)
        return bad(err, errlen, "the manager's address must be IP:PORT, not '%s' (from %s)",
                   a->manager, a->manager_source);
    if (i >= argc)
        return bad(err, errlen, "missing command: ls, get, set, call or status (try --help)");
    const char *cmd = argv[i++];
    int rest = argc - i;
    if (strcmp(cmd, "status") == 0) {
        a->command = WT_CMD_STATUS;
        if (rest != 0)
            return bad(err, errlen, "status takes no arguments");
        return 0;
    }
    if (strcmp(cmd, "ls") == 0)
        a->command = WT_CMD_LS;
    else if (strcmp(cmd, "get") == 0)
        a->command = WT_CMD_GET;
    else if (strcmp(cmd, "set") == 0)
        a->command = WT_CMD_SET;
    else if (strcmp(cmd, "call") == 0)
        a->command = WT_CMD_CALL;
    else
        return bad(err, errlen, "unknown command '%s': ls, get, set, call or status", cmd);
    if (rest < 1)
        return bad(err, errlen, "%s needs a TARGET (a process name, a role such as baseapps, or all)",
                   cmd);
    a->target = argv[i++];
    rest--;
    if (!*a->target)
        return bad(err, errlen, "TARGET must not be empty");
    switch (a->command) {
    case WT_CMD_LS:
    case WT_CMD_GET:
        if (rest > 1)
            return bad(err, errlen, "%s takes TARGET [PATH], got %d extra arguments", cmd, rest - 1);
        if (rest == 1)
            a->path = argv[i];
        break;
    case WT_CMD_SET:
        if (rest != 2)
            return bad(err, errlen, "set takes TARGET PATH VALUE");
        a->path = argv[i];
        a->nargs = 1;
        a->args = &argv[i + 1];
        break;
    case WT_CMD_CALL:
        if (rest < 1)
            return bad(err, errlen, "call takes TARGET PATH [ARG...]");
        a->path = argv[i];
        a->nargs = rest - 1;
        a->args = &argv[i + 1];
        break;
    case WT_CMD_STATUS:
        break;
    }
    return 0;
}
