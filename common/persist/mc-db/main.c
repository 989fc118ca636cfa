/* mc-db: list, show, delete, check, export and import the entities a cluster keeps in Redis
 * (docs/tools/mc-db.md). */
#include <getopt.h>
#include <libgen.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cluster_file.h"
#include "common/log.h"
#include "mcdb.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mc-db [options] COMMAND [ARGS]\n"
        "\n"
        "commands:\n"
        "  types                      entity types in Redis and their counts\n"
        "  list TYPE                  the database ids of a type\n"
        "  show TYPE DBID             an entity with every property decoded\n"
        "  show TYPE --id VALUE       the same, found by its identifier\n"
        "  delete TYPE DBID [--force] delete an entity (--force: even while checked out)\n"
        "  check                      compare the stored schemas with the defs (--res) and\n"
        "                             look for stale identifier index entries;\n"
        "                             exit 0 same, 1 compatible changes or stale entries,\n"
        "                             2 incompatible\n"
        "  unindex TYPE VALUE         remove a stale identifier index entry\n"
        "  export [TYPE...]           every entity (of the types) as JSON lines on stdout\n"
        "  import [--replace] [FILE]  JSON lines (stdin by default) back into Redis\n"
        "\n"
        "options:\n"
        "  --redis IP:PORT            one Redis\n"
        "  --cluster IP:PORT[,...]    a Redis Cluster (seed nodes)\n"
        "  --user NAME                ACL user\n"
        "  --password-file FILE       the password (first line)\n"
        "  --prefix P                 key prefix (default mc)\n"
        "  --res DIR                  the game's defs (default $MC_RES, else the cluster file's\n"
        "                             res, else <repo>/defs)\n"
        "  --timeout S                seconds to wait for Redis (default 10)\n"
        "  --help\n"
        "\n"
        "Without --redis or --cluster, the cluster file of the running cluster\n"
        "($MC_RUN_DIR/cluster.conf, else <repo>/run/cluster.conf) names Redis and its\n"
        "credentials; else 127.0.0.1:6379. Exit codes: 0 ok, 1 failed, 2 incompatible schema,\n"
        "3 usage or configuration, 4 Redis unavailable or credentials refused.\n");
}

static const char *default_res(char *buf, size_t len)
{
    const char *env = getenv("MC_RES");
    if (env && *env)
        return env;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return "defs";
    exe[n] = '\0';
    snprintf(buf, len, "%s/../../defs", dirname(exe));
    struct stat sb;
    if (stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode))
        snprintf(buf, len, "%s/defs", MC_SOURCE_ROOT); /* built outside the checkout */
    return buf;
}

typedef struct {
    const char *redis, *cluster, *user, *password_file, *prefix, *res;
    unsigned timeout_s;
    char redis_buf[256], cluster_buf[1024], user_buf[128], pw_buf[1024], res_buf[PATH_MAX];
} db_opts;

/* Fill unset Redis options from the cluster file, when there is one. */
static int from_cluster_file(db_opts *o)
{
    char path[PATH_MAX], err[256];
    if (!mc_cluster_file_find(path, sizeof path))
        return 0;
    /* the defs the cluster runs (deploy/cluster writes them as `res`), as the client tools */
    if (!o->res && mc_cluster_file_get(path, "res", o->res_buf, sizeof o->res_buf, err,
                                       sizeof err) == 1)
        o->res = o->res_buf;
    if (o->redis || o->cluster)
        return 0;
    if (mc_cluster_file_get(path, "redis", o->redis_buf, sizeof o->redis_buf, err,
                            sizeof err) == 1)
        o->redis = o->redis_buf;
    if (mc_cluster_file_get(path, "redisCluster", o->cluster_buf, sizeof o->cluster_buf, err,
                            sizeof err) == 1)
        o->cluster = o->cluster_buf;
    if (!o->user && mc_cluster_file_get(path, "redisUser", o->user_buf, sizeof o->user_buf, err,
                                        sizeof err) == 1)
        o->user = o->user_buf;
    if (!o->password_file && mc_cluster_file_get(path, "redisPasswordFile", o->pw_buf,
                                                 sizeof o->pw_buf, err, sizeof err) == 1)
        o->password_file = o->pw_buf;
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(db_ctx *, int, char **);
} commands[] = {
    {"types", db_cmd_types}, {"list", db_cmd_list},     {"show", db_cmd_show},
    {"delete", db_cmd_delete}, {"check", db_cmd_check}, {"export", db_cmd_export},
    {"import", db_cmd_import}, {"unindex", db_cmd_unindex},
};

int main(int argc, char **argv)
{
    mc_log_set_process_name("mc-db");
    mc_log_set_level(MC_LOG_ERROR);
    db_opts o = {.timeout_s = 10};
    static const struct option longopts[] = {
        {"redis", required_argument, NULL, 'r'},   {"cluster", required_argument, NULL, 'c'},
        {"user", required_argument, NULL, 'u'},    {"password-file", required_argument, NULL, 'p'},
        {"prefix", required_argument, NULL, 'P'},  {"res", required_argument, NULL, 'R'},
        {"timeout", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    /* "+": options stop at the command; the command parses its own. */
    while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'r': o.redis = optarg; break;
        case 'c': o.cluster = optarg; break;
        case 'u': o.user = optarg; break;
        case 'p': o.password_file = optarg; break;
        case 'P': o.prefix = optarg; break;
        case 'R': o.res = optarg; break;
        case 't': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v <= 0 || v > 3600) {
                fprintf(stderr, "mc-db: --timeout wants seconds (1..3600)\n");
                return DB_EXIT_USAGE;
            }
            o.timeout_s = (unsigned)v;
            break;
        }
        case 'h': usage(stdout); return DB_EXIT_OK;
        default: usage(stderr); return DB_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return DB_EXIT_USAGE;
    }
    const char *cmd = argv[optind];
    int (*fn)(db_ctx *, int, char **) = NULL;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, cmd) == 0)
            fn = commands[i].fn;
    if (!fn) {
        fprintf(stderr, "mc-db: unknown command '%s' (see --help)\n", cmd);
        return DB_EXIT_USAGE;
    }
    if (o.redis && o.cluster) {
        fprintf(stderr, "mc-db: --redis and --cluster exclude each other\n");
        return DB_EXIT_USAGE;
    }
    const char *res_env = getenv("MC_RES");
    if (!o.res && res_env && *res_env)
        o.res = res_env;
    from_cluster_file(&o);
    if (!o.res)
        o.res = default_res(o.res_buf, sizeof o.res_buf);

    char err[4096];
    db_ctx c = {.out = stdout, .prefix = o.prefix && o.prefix[0] ? o.prefix : "mc"};
    c.defs = mc_defs_load(o.res, err, sizeof err);
    if (!c.defs) {
        fprintf(stderr, "mc-db: cannot load the defs in %s: %s\n", o.res, err);
        return DB_EXIT_USAGE;
    }
    c.base = event_base_new();
    mc_persist_config cfg = {
        .process_name = "mc-db",
        .address = o.redis,
        .user = o.user,
        .password_file = o.password_file,
        .prefix = o.prefix,
        .defs = c.defs,
        .request_timeout_ms = o.timeout_s * 1000u,
        .backoff_min_ms = 100,
        .backoff_max_ms = 1000,
        .schema_readonly = true,
    };
    char seeds_buf[1024];
    if (o.cluster) {
        snprintf(seeds_buf, sizeof seeds_buf, "%s", o.cluster);
        char *save = NULL;
        for (char *tok = strtok_r(seeds_buf, ",", &save); tok && cfg.nseeds < MC_PERSIST_MAX_SEEDS;
             tok = strtok_r(NULL, ",", &save))
            cfg.seeds[cfg.nseeds++] = tok;
    }
    c.store = c.base ? mc_persist_store_new(c.base, &cfg, err, sizeof err) : NULL;
    if (!c.store) {
        fprintf(stderr, "mc-db: %s\n", c.base ? err : "cannot create an event loop");
        mc_defs_free(c.defs);
        if (c.base)
            event_base_free(c.base);
        return DB_EXIT_USAGE;
    }
    int rc = fn(&c, argc - optind - 1, argv + optind + 1);
    mc_persist_store_free(c.store);
    event_base_free(c.base);
    mc_defs_free(c.defs);
    return rc;
}
