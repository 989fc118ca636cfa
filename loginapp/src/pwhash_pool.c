/* Password hashing on worker threads (pwhash_pool.h). */
#include "pwhash_pool.h"
#include "source_counts.h"

#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct job {
    struct job *next;
    bool verify;
    char *password;           /* sodium_malloc'd, wiped on free */
    size_t len;
    char stored[MC_PWHASH_STR_MAX];
    mc_pwhash_done_fn fn;
    void *ud;
    uint64_t source;          /* 0: none */
    /* results */
    int status;
    bool match;
    char hash[MC_PWHASH_STR_MAX];
} job;

struct mc_pwhash_pool {
    mc_pwhash_cost cost;
    size_t queue_max;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *todo_head, *todo_tail; /* waiting for a worker */
    job *done_head, *done_tail; /* finished, waiting for the loop */
    size_t in_flight;           /* queued + running + finished not yet delivered */
    bool stopping;
    pthread_t *threads;
    unsigned nthreads;
    int efd;
    struct event *ev;
    mc_pwhash_stats st;
    size_t per_source;          /* 0: unbounded */
    mc_source_counts *sources;  /* jobs per source (on the loop only) */
};

bool mc_pwhash_cost_named(const char *name, mc_pwhash_cost *out)
{
    if (!name)
        return false;
    if (!strcmp(name, "dev")) {
        *out = (mc_pwhash_cost){crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_MEMLIMIT_MIN};
    } else if (!strcmp(name, "interactive")) {
        *out = (mc_pwhash_cost){crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                crypto_pwhash_MEMLIMIT_INTERACTIVE};
    } else if (!strcmp(name, "moderate")) {
        *out = (mc_pwhash_cost){crypto_pwhash_OPSLIMIT_MODERATE, crypto_pwhash_MEMLIMIT_MODERATE};
    } else {
        return false;
    }
    return true;
}

static void job_free(job *j)
{
    if (!j)
        return;
    if (j->password)
        sodium_free(j->password); /* wipes */
    sodium_memzero(j, sizeof *j);
    free(j);
}

static void run_job(const mc_pwhash_cost *cost, job *j)
{
    if (j->verify) {
        int rc = crypto_pwhash_str_verify(j->stored, j->password, j->len);
        /* a stored string libsodium cannot read is a failure, not a mismatch */
        if (rc == 0) {
            j->status = MC_PWHASH_OK;
            j->match = true;
        } else if (strncmp(j->stored, "$argon2", 7) == 0) {
            j->status = MC_PWHASH_OK;
            j->match = false;
        } else {
            j->status = MC_PWHASH_FAILED;
        }
    } else {
        j->status = crypto_pwhash_str_alg(j->hash, j->password, j->len, cost->opslimit,
                                          cost->memlimit, crypto_pwhash_ALG_ARGON2ID13) == 0
                        ? MC_PWHASH_OK
                        : MC_PWHASH_FAILED;
    }
    sodium_free(j->password);
    j->password = NULL;
}

static void *worker(void *arg)
{
    mc_pwhash_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stopping && !p->todo_head)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stopping)
            break;
        job *j = p->todo_head;
        p->todo_head = j->next;
        if (!p->todo_head)
            p->todo_tail = NULL;
        pthread_mutex_unlock(&p->mu);
        run_job(&p->cost, j);
        pthread_mutex_lock(&p->mu);
        j->next = NULL;
        if (p->done_tail)
            p->done_tail->next = j;
        else
            p->done_head = j;
        p->done_tail = j;
        uint64_t one = 1;
        ssize_t w = write(p->efd, &one, sizeof one);
        (void)w; /* the counter cannot overflow: at most queue_max jobs are in flight */
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* On the loop: deliver finished jobs. */
static void on_done(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    mc_pwhash_pool *p = arg;
    uint64_t n;
    ssize_t r = read(fd, &n, sizeof n);
    (void)r;
    pthread_mutex_lock(&p->mu);
    job *list = p->done_head;
    p->done_head = p->done_tail = NULL;
    pthread_mutex_unlock(&p->mu);
    while (list) {
        job *j = list;
        list = j->next;
        pthread_mutex_lock(&p->mu);
        p->in_flight--;
        p->st.queued = p->in_flight;
        pthread_mutex_unlock(&p->mu);
        p->st.done++;
        if (j->source && p->sources)
            mc_source_counts_sub(p->sources, j->source);
        if (j->status != MC_PWHASH_OK)
            p->st.failed++;
        j->fn(j->ud, j->status, !j->verify && j->status == MC_PWHASH_OK ? j->hash : NULL,
              j->match);
        job_free(j);
    }
}

mc_pwhash_pool *mc_pwhash_pool_new(struct event_base *base, unsigned threads, size_t queue_max,
                                   mc_pwhash_cost cost)
{
    if (!base || threads < 1 || threads > 16 || queue_max < 1 || sodium_init() < 0)
        return NULL;
    mc_pwhash_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->cost = cost;
    p->queue_max = queue_max;
    p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    p->threads = calloc(threads, sizeof *p->threads);
    if (p->efd < 0 || !p->threads || pthread_mutex_init(&p->mu, NULL) != 0) {
        if (p->efd >= 0)
            close(p->efd);
        free(p->threads);
        free(p);
        return NULL;
    }
    pthread_cond_init(&p->cv, NULL);
    p->ev = event_new(base, p->efd, EV_READ | EV_PERSIST, on_done, p);
    if (!p->ev || event_add(p->ev, NULL) != 0) {
        mc_pwhash_pool_free(p);
        return NULL;
    }
    for (unsigned i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
            mc_pwhash_pool_free(p);
            return NULL;
        }
        p->nthreads++;
    }
    return p;
}

void mc_pwhash_pool_free(mc_pwhash_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    for (job *j = p->todo_head; j;) {
        job *next = j->next;
        job_free(j);
        j = next;
    }
    for (job *j = p->done_head; j;) {
        job *next = j->next;
        job_free(j);
        j = next;
    }
    if (p->ev)
        event_free(p->ev);
    if (p->efd >= 0)
        close(p->efd);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    mc_source_counts_free(p->sources);
    free(p->threads);
    free(p);
}

int mc_pwhash_set_per_source(mc_pwhash_pool *p, size_t per_source)
{
    if (!p || per_source < 1 || p->sources)
        return -1;
    p->sources = mc_source_counts_new(p->queue_max);
    if (!p->sources)
        return -1;
    p->per_source = per_source;
    return 0;
}

static int submit(mc_pwhash_pool *p, job *j)
{
    /* the source's share first (the counts live on the loop, like this call) */
    if (j->source && p->sources &&
        mc_source_counts_get(p->sources, j->source) >= p->per_source) {
        p->st.refused_source++;
        job_free(j);
        return MC_PWHASH_SOURCE_BUSY;
    }
    pthread_mutex_lock(&p->mu);
    if (p->in_flight >= p->queue_max) {
        pthread_mutex_unlock(&p->mu);
        p->st.refused_busy++;
        job_free(j);
        return MC_PWHASH_BUSY;
    }
    if (j->source && p->sources && mc_source_counts_add(p->sources, j->source) != 0) {
        pthread_mutex_unlock(&p->mu); /* cannot happen: at most queue_max sources */
        p->st.refused_source++;
        job_free(j);
        return MC_PWHASH_SOURCE_BUSY;
    }
    p->in_flight++;
    p->st.queued = p->in_flight;
    j->next = NULL;
    if (p->todo_tail)
        p->todo_tail->next = j;
    else
        p->todo_head = j;
    p->todo_tail = j;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return MC_PWHASH_OK;
}

static job *new_job(const char *password, size_t len, mc_pwhash_done_fn fn, void *ud, int *rc)
{
    if (len > MC_PWHASH_MAX_PASSWORD) {
        *rc = MC_PWHASH_TOO_LONG;
        return NULL;
    }
    job *j = calloc(1, sizeof *j);
    if (j)
        j->password = sodium_malloc(len ? len : 1);
    if (!j || !j->password) {
        job_free(j);
        *rc = MC_PWHASH_NO_MEMORY;
        return NULL;
    }
    if (len)
        memcpy(j->password, password, len);
    j->len = len;
    j->fn = fn;
    j->ud = ud;
    return j;
}

int mc_pwhash_hash_from(mc_pwhash_pool *p, uint64_t source, const char *password, size_t len,
                        mc_pwhash_done_fn fn, void *ud)
{
    int rc = MC_PWHASH_OK;
    job *j = new_job(password, len, fn, ud, &rc);
    if (!j)
        return rc;
    j->source = source;
    return submit(p, j);
}

int mc_pwhash_verify_from(mc_pwhash_pool *p, uint64_t source, const char *stored,
                          const char *password, size_t len, mc_pwhash_done_fn fn, void *ud)
{
    int rc = MC_PWHASH_OK;
    job *j = new_job(password, len, fn, ud, &rc);
    if (!j)
        return rc;
    j->verify = true;
    j->source = source;
    size_t sl = strnlen(stored, MC_PWHASH_STR_MAX);
    if (sl == MC_PWHASH_STR_MAX)
        sl = 0; /* too long to be a libsodium string: verification fails */
    memcpy(j->stored, stored, sl);
    j->stored[sl] = '\0';
    return submit(p, j);
}

int mc_pwhash_hash(mc_pwhash_pool *p, const char *password, size_t len, mc_pwhash_done_fn fn,
                   void *ud)
{
    return mc_pwhash_hash_from(p, 0, password, len, fn, ud);
}

int mc_pwhash_verify(mc_pwhash_pool *p, const char *stored, const char *password, size_t len,
                     mc_pwhash_done_fn fn, void *ud)
{
    return mc_pwhash_verify_from(p, 0, stored, password, len, fn, ud);
}

int mc_pwhash_dummy(const mc_pwhash_pool *p, char out[MC_PWHASH_STR_MAX])
{
    uint8_t pw[32];
    randombytes_buf(pw, sizeof pw);
    int rc = crypto_pwhash_str_alg(out, (const char *)pw, sizeof pw, p->cost.opslimit,
                                   p->cost.memlimit, crypto_pwhash_ALG_ARGON2ID13);
    sodium_memzero(pw, sizeof pw);
    return rc == 0 ? 0 : -1;
}

bool mc_pwhash_needs_rehash(const mc_pwhash_pool *p, const char *stored)
{
    return crypto_pwhash_str_needs_rehash(stored, p->cost.opslimit, p->cost.memlimit) != 0;
}

void mc_pwhash_get_stats(const mc_pwhash_pool *p, mc_pwhash_stats *out)
{
    pthread_mutex_lock((pthread_mutex_t *)&p->mu);
    *out = p->st;
    out->queued = p->in_flight;
    pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
}
