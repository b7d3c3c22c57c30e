/* kb_parallel.c -- splitting a batch of tracks over threads.
 *
 * Threads are started per call and joined before it returns: the core keeps
 * no global state (no pool to own, nothing to shut down, safe under any
 * number of callers), and a thread start costs tens of microseconds, so
 * only calls with enough work are split (see kb_threads_for).  POSIX
 * threads rather than OpenMP, because a wheel then needs no OpenMP runtime
 * bundled (and macOS's compiler has none); elsewhere calls run serially. */
#include "kb_internal.h"

#include <stdlib.h>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define KB_HAVE_PTHREADS 1
#endif

#define KB_MAX_THREADS 256

typedef struct {
    kb_range_fn fn;
    void *ctx;
    ptrdiff_t begin, end;
} kb_job;

#ifdef KB_HAVE_PTHREADS
static void *run_job(void *arg)
{
    kb_job *job = arg;
    job->fn(job->ctx, job->begin, job->end);
    return NULL;
}
#endif

int kb_threads_for(ptrdiff_t n_items, double work, int n_threads)
{
    /* below about 1e5 outputs a thread costs more than it saves */
    int most = work < 1e5 ? 1 : n_threads;
    if (most > n_items)
        most = (int)(n_items > 0 ? n_items : 1);
    if (most > KB_MAX_THREADS)
        most = KB_MAX_THREADS;
    return most < 1 ? 1 : most;
}

void kb_parallel_for(ptrdiff_t n, int n_threads, kb_range_fn fn, void *ctx)
{
#ifdef KB_HAVE_PTHREADS
    if (n_threads > 1 && n > 1) {
        kb_job jobs[KB_MAX_THREADS];
        pthread_t ids[KB_MAX_THREADS];
        int started[KB_MAX_THREADS];
        if (n_threads > KB_MAX_THREADS)
            n_threads = KB_MAX_THREADS;
        for (int i = 0; i < n_threads; i++) {
            jobs[i].fn = fn;
            jobs[i].ctx = ctx;
            jobs[i].begin = n * i / n_threads;
            jobs[i].end = n * (i + 1) / n_threads;
        }
        for (int i = 1; i < n_threads; i++)
            started[i] = pthread_create(&ids[i], NULL, run_job, &jobs[i]) == 0;
        fn(ctx, jobs[0].begin, jobs[0].end);
        for (int i = 1; i < n_threads; i++) {
            if (started[i])
                pthread_join(ids[i], NULL);
            else  /* no thread to be had: do its share here */
                fn(ctx, jobs[i].begin, jobs[i].end);
        }
        return;
    }
#else
    (void)n_threads;
#endif
    fn(ctx, 0, n);
}

typedef struct {
    kb_build_fn fn;
    void *ctx;
    unsigned char *stopped;  /* per item: 1 at the start of a range that failed */
} build_job;

static void build_range(void *ctx, ptrdiff_t begin, ptrdiff_t end)
{
    const build_job *j = ctx;
    kb_error err;
    if (j->fn(j->ctx, begin, end, &err) != KB_OK)
        j->stopped[begin] = 1;
}

kb_status kb_build_parallel(ptrdiff_t n, double work, int n_threads, kb_build_fn fn,
                            void *ctx, kb_error *err)
{
    const int threads = kb_threads_for(n, work, n_threads);
    unsigned char *stopped = threads > 1 ? calloc((size_t)n, 1) : NULL;
    if (!stopped)  /* one thread, or no memory to split with */
        return fn(ctx, 0, n, err);
    build_job job = {fn, ctx, stopped};
    kb_parallel_for(n, threads, build_range, &job);
    /* From the first range that stopped (an error, or no memory for its
     * workspace), the rest again on this thread: the error, if any, is then
     * exactly that of one serial call. */
    ptrdiff_t first = 0;
    while (first < n && !stopped[first])
        first++;
    free(stopped);
    return first == n ? kb_ok(err) : fn(ctx, first, n, err);
}

