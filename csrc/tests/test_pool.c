/* test_pool.c -- the worker pool behind the *_threaded calls: many jobs in
 * a row, several callers at once (one gets the pool, the others threads of
 * their own), and a shutdown between jobs; every result equals the serial
 * one.  Jobs are taken in chunks: every item exactly once, and a thread
 * held up by one chunk leaves the rest to the others. */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "kb_internal.h"
#include "kb_test.h"
#include "kbspline/kbspline.h"

enum { NT = 64, K = 6, D = 2, S = K - 1, M = 900, CALLERS = 4, ROUNDS = 60 };

static const double TIMES[K] = {0.0, 0.7, 1.5, 2.0, 3.1, 4.0};
static double coef[NT * S * 4 * D], ts[M], serial[NT * M * D];

static void build(void)
{
    static double values[NT * K * D], zeros[K];
    for (int i = 0; i < NT * K * D; i++)
        values[i] = sin(0.53 * i);
    for (int i = 0; i < M; i++)
        ts[i] = 4.2 * i / M - 0.1;
    kb_tcb_keys k = {NT, K, D, {TIMES, 0}, values, {zeros, 0}, {zeros, 0}, {zeros, 0},
                     {zeros, 0}, {zeros, 0}, {NULL, 0}, {NULL, 0}, KB_TIMING_KB,
                     KB_ENDS_NATURAL, NULL, NULL};
    kb_error err;
    kb_tcb_build(&k, NULL, NULL, coef, NULL, &err);
}

/* ROUNDS threaded evaluations (large enough to be split: NT * M * D > 1e5);
 * returns the number that differ from the serial result. */
static void *caller(void *arg)
{
    static double out[CALLERS][NT * M * D];
    double *mine = out[(ptrdiff_t)arg];
    const kb_curve c = {NT, S, D, TIMES, 0, coef, NULL, KB_EXTRAP_CLAMP};
    ptrdiff_t wrong = 0;
    for (int r = 0; r < ROUNDS; r++) {
        kb_error err;
        memset(mine, 0, sizeof out[0]);
        if (kb_curve_eval_threaded(&c, 0, ts, M, 0, 2 + r % 3, mine, NULL, &err) != KB_OK ||
            memcmp(mine, serial, sizeof serial) != 0)
            wrong++;
    }
    return (void *)wrong;
}

KB_TEST(test_pool_many_jobs_and_callers)
{
    build();
    const kb_curve c = {NT, S, D, TIMES, 0, coef, NULL, KB_EXTRAP_CLAMP};
    kb_error err;
    KB_ASSERT(kb_curve_eval(&c, 0, ts, M, 0, 0, NT, serial, NULL, &err) == KB_OK);
    KB_ASSERT(caller((void *)0) == NULL);  /* one caller, one job after another */
    kb_threads_shutdown();
    KB_ASSERT(caller((void *)0) == NULL);  /* the pool starts again */

    pthread_t ids[CALLERS];
    for (ptrdiff_t i = 0; i < CALLERS; i++)
        KB_ASSERT(pthread_create(&ids[i], NULL, caller, (void *)i) == 0);
    ptrdiff_t wrong = 0;
    for (int i = 0; i < CALLERS; i++) {
        void *w;
        pthread_join(ids[i], &w);
        wrong += (ptrdiff_t)w;
    }
    KB_ASSERT(wrong == 0);
}

enum { MOST_ITEMS = 1001 };

typedef struct {
    ptrdiff_t n;
    int hold;                     /* the range with item 0 waits for all others */
    atomic_int visits[MOST_ITEMS];
    atomic_long done;             /* items visited */
    atomic_int timed_out;
    atomic_long held;             /* items in the range that waited */
    atomic_long smallest;         /* items in the smallest range */
} visit_job;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void visit(void *ctx, ptrdiff_t begin, ptrdiff_t end)
{
    visit_job *j = ctx;
    if (j->hold && begin == 0)
        atomic_store(&j->held, end - begin);
    /* the range with item 0 waits until every other item is done (giving
     * up after 10 s: with equal shares fixed in advance, never) */
    for (const double until = seconds() + 10.0;
         j->hold && begin == 0 && atomic_load(&j->done) < j->n - end;) {
        if (seconds() > until) {
            atomic_store(&j->timed_out, 1);
            break;
        }
        sched_yield();
    }
    long smallest = atomic_load(&j->smallest);
    while (end - begin < smallest &&
           !atomic_compare_exchange_weak(&j->smallest, &smallest, (long)(end - begin)))
        continue;
    for (ptrdiff_t i = begin; i < end; i++)
        atomic_fetch_add(&j->visits[i], 1);
    atomic_fetch_add(&j->done, end - begin);
}

/* One job of n items on `threads` threads; 1 if it went as it should. */
static int visit_job_ok(visit_job *j, ptrdiff_t n, int threads, ptrdiff_t min_chunk)
{
    j->n = n;
    j->hold = threads > 1;
    for (ptrdiff_t i = 0; i < MOST_ITEMS; i++)
        atomic_store(&j->visits[i], 0);
    atomic_store(&j->done, 0);
    atomic_store(&j->timed_out, 0);
    atomic_store(&j->held, 0);
    atomic_store(&j->smallest, MOST_ITEMS);
    kb_parallel_for(n, threads, min_chunk, visit, j);
    for (ptrdiff_t i = 0; i < MOST_ITEMS; i++)
        if (atomic_load(&j->visits[i]) != (i < n))
            return 0;
    /* the others did all the rest, more than their equal shares: the range
     * that waited was smaller than one share */
    if (atomic_load(&j->timed_out) ||
        (j->hold && min_chunk == 1 && n > threads && atomic_load(&j->held) * threads >= n))
        return 0;
    /* no range under min_chunk items, unless that would leave a thread none */
    const ptrdiff_t share = n / threads;
    return n == 0 || atomic_load(&j->smallest) >= (share < min_chunk ? share : min_chunk);
}

/* Jobs of several sizes on 1 to 4 threads, in chunks of any size or of at
 * least 30 items; 1 if all went as they should. */
static int visit_jobs(void)
{
    static const ptrdiff_t sizes[] = {0, 1, 2, 3, 5, 8, 9, 100, MOST_ITEMS};
    static visit_job j;
    for (int threads = 1; threads <= 4; threads++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            if (!visit_job_ok(&j, sizes[s], threads, 1) ||
                !visit_job_ok(&j, sizes[s], threads, 30))
                return 0;
    return 1;
}

static atomic_int nested_ok;

/* Inside a job the pool is busy: the same checks on threads of their own. */
static void visit_jobs_inside_a_job(void *ctx, ptrdiff_t begin, ptrdiff_t end)
{
    (void)ctx;
    if (begin == 0 && end > 0)
        atomic_store(&nested_ok, visit_jobs());
}

KB_TEST(test_pool_chunks_taken_in_turn)
{
    KB_ASSERT(visit_jobs());
    atomic_store(&nested_ok, 0);
    kb_parallel_for(2, 2, 1, visit_jobs_inside_a_job, NULL);
    KB_ASSERT(atomic_load(&nested_ok));
}
