/* test_pool.c -- the worker pool behind the *_threaded calls: many jobs in
 * a row, several callers at once (one gets the pool, the others threads of
 * their own), and a shutdown between jobs; every result equals the serial
 * one. */
#include <pthread.h>
#include <string.h>

#include "kb_test.h"
#include "kbspline.h"

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
                     KB_ENDS_NATURAL};
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
