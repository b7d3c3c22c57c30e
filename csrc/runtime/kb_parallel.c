/* kb_parallel.c -- splitting a batch of tracks over threads.
 *
 * A pool of POSIX worker threads, started on the first call that splits
 * and kept, so that a call costs a wake-up (microseconds) rather than
 * thread starts (tens of microseconds each).  POSIX threads rather than
 * OpenMP, because a wheel then needs no OpenMP runtime bundled (and macOS's
 * compiler has none); elsewhere calls run serially.
 *
 * One caller uses the pool at a time; a caller that finds it busy (another
 * Python thread, say) starts threads of its own for that call, so callers
 * never wait on each other.  After fork() the child starts a new pool.
 * kb_threads_shutdown() joins the workers.
 *
 * Waking a sleeping thread and being woken by its reply took 14-16
 * microseconds on the development machine (README), a quarter to a half
 * of a threaded call of W1's kind, so workers, and a caller waiting for
 * them, spin for a short while before they sleep: calls made one after
 * another (a loop over batches) find the workers awake.
 *
 * A job is cut into a few chunks per thread, which the threads take in
 * turn, so that a thread on a slower or busier core (shared with another
 * process, or another guest of the same host) does less of it; with one
 * fixed share each, the call would wait on that core. */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime, sched_yield */
#include "kb_internal.h"

#include <stdlib.h>

#if (defined(__unix__) || defined(__APPLE__)) && !defined(__STDC_NO_ATOMICS__)
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#define KB_HAVE_PTHREADS 1
#endif

/* Chunks per thread: enough for the fast threads to take over a slow one's
 * share, few enough that per-chunk setup stays small. */
#define KB_CHUNKS_PER_THREAD 4

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

#ifdef KB_HAVE_PTHREADS

/* How many chunks a job over [0, n) on `threads` threads is cut into: a
 * few per thread, of at least min_chunk items, but one per thread at least. */
static long chunk_count(ptrdiff_t n, int threads, ptrdiff_t min_chunk)
{
    long chunks = (long)threads * KB_CHUNKS_PER_THREAD;
    if (min_chunk > 1 && chunks > n / min_chunk)
        chunks = (long)(n / min_chunk);
    if (chunks < threads)
        chunks = threads;
    return chunks < n ? chunks : (long)n;
}

/* fn over [0, n) in `chunks` chunks, which every thread running the job
 * takes in turn. */
typedef struct {
    kb_range_fn fn;
    void *ctx;
    ptrdiff_t n;
    long chunks;
    atomic_long next;  /* the next chunk to take */
} kb_job;

/* Takes the job's chunks until none are left. */
static void *run_job(void *arg)
{
    kb_job *job = arg;
    for (long i; (i = atomic_fetch_add(&job->next, 1)) < job->chunks;)
        job->fn(job->ctx, job->n * i / job->chunks, job->n * (i + 1) / job->chunks);
    return NULL;
}

/* ---- threads started for one call (the pool is busy) ------------------- */

static void parallel_for_own_threads(ptrdiff_t n, int threads, ptrdiff_t min_chunk,
                                     kb_range_fn fn, void *ctx)
{
    kb_job job = {fn, ctx, n, chunk_count(n, threads, min_chunk), 0};
    pthread_t ids[KB_MAX_THREADS];
    int started = 1;
    while (started < threads && pthread_create(&ids[started], NULL, run_job, &job) == 0)
        started++;  /* threads that cannot be had leave their chunks to the others */
    run_job(&job);
    for (int i = 1; i < started; i++)
        pthread_join(ids[i], NULL);
}

/* ---- spinning ----------------------------------------------------------- */

/* How long a thread spins before it sleeps: long enough to bridge the gap
 * between calls of a loop, short next to a call worth splitting. */
#define KB_SPIN_NANOSECONDS 200000L

static long long nanoseconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One step of a spin: a few pauses, then the CPU to any other thread that
 * wants it (the thread being waited for may share this CPU).  Whether to
 * go on spinning: until `deadline` (nanoseconds()), then sleep instead. */
static int spin_step(long long deadline)
{
    for (int i = 0; i < 16; i++) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
        __builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
        __asm__ volatile("yield");
#endif
    }
    sched_yield();
    return nanoseconds() < deadline;
}

/* ---- the pool ---------------------------------------------------------- */

static struct {
    pthread_mutex_t lock;  /* guards every field (the atomic ones are also
                              read without it, by spinning threads) */
    pthread_cond_t wake;   /* workers: a new job (generation) was posted */
    pthread_cond_t done;   /* the last worker of a job finished, or a caller let go */
    pthread_t ids[KB_MAX_THREADS];
    unsigned long born[KB_MAX_THREADS];  /* the generation when each was started */
    int n_workers;         /* running; worker i (1-based) helps jobs of more than i threads */
    int busy;              /* a caller owns the pool */
    int stop;              /* workers: exit (kb_threads_shutdown) */
    atomic_ulong generation;  /* counts the jobs posted */
    kb_job job;            /* the job posted */
    int threads;           /* how many threads it runs on, the caller's included */
    atomic_int pending;    /* workers still running it */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;

/* fork() happens with the lock held, so the child's copy of the pool is
 * consistent; the child has none of the parent's workers and starts afresh. */
static void pool_before_fork(void)
{
    pthread_mutex_lock(&pool.lock);
}

static void pool_after_fork_in_parent(void)
{
    pthread_mutex_unlock(&pool.lock);
}

static void pool_after_fork_in_child(void)
{
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.n_workers = pool.busy = pool.stop = 0;
    atomic_store(&pool.pending, 0);
    pthread_mutex_unlock(&pool.lock);
}

static void register_fork_handlers(void)
{
    pthread_atfork(pool_before_fork, pool_after_fork_in_parent, pool_after_fork_in_child);
}

static void *worker(void *arg)
{
    const int part = (int)(ptrdiff_t)arg;
    pthread_mutex_lock(&pool.lock);
    /* not pool.generation: the job this worker was started for may have
     * been posted before it got the lock */
    unsigned long seen = pool.born[part - 1];
    for (;;) {
        pthread_mutex_unlock(&pool.lock);
        for (const long long end = nanoseconds() + KB_SPIN_NANOSECONDS;
             atomic_load(&pool.generation) == seen && spin_step(end);)
            continue;
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.generation) == seen && !pool.stop)
            pthread_cond_wait(&pool.wake, &pool.lock);
        if (pool.stop)
            break;
        seen = atomic_load(&pool.generation);
        if (part >= pool.threads)
            continue;  /* not needed for this job */
        pthread_mutex_unlock(&pool.lock);
        run_job(&pool.job);
        pthread_mutex_lock(&pool.lock);
        if (atomic_fetch_sub(&pool.pending, 1) == 1)
            pthread_cond_broadcast(&pool.done);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* Starts workers until there are `want` (or no more can be had); under lock. */
static void grow_pool(int want)
{
    pthread_once(&fork_handlers_once, register_fork_handlers);
    pthread_attr_t attr;
    const int have_attr = pthread_attr_init(&attr) == 0;
    /* the core's frames are small, but some C libraries (musl) default to
     * 128 KB stacks: ask for a size that holds whatever calls into it */
    if (have_attr)
        pthread_attr_setstacksize(&attr, (size_t)1 << 20);
    while (pool.n_workers < want) {
        const ptrdiff_t part = pool.n_workers + 1;
        pool.born[pool.n_workers] = atomic_load(&pool.generation);
        if (pthread_create(&pool.ids[pool.n_workers], have_attr ? &attr : NULL, worker,
                           (void *)part) != 0)
            break;
        pool.n_workers++;
    }
    if (have_attr)
        pthread_attr_destroy(&attr);
}

void kb_parallel_for(ptrdiff_t n, int n_threads, ptrdiff_t min_chunk, kb_range_fn fn,
                     void *ctx)
{
    if (n_threads > KB_MAX_THREADS)
        n_threads = KB_MAX_THREADS;
    if (n_threads <= 1 || n <= 1) {
        fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    if (pool.busy) {
        pthread_mutex_unlock(&pool.lock);
        parallel_for_own_threads(n, n_threads, min_chunk, fn, ctx);
        return;
    }
    pool.busy = 1;
    grow_pool(n_threads - 1);
    const int threads = pool.n_workers + 1 < n_threads ? pool.n_workers + 1 : n_threads;
    pool.job.fn = fn;
    pool.job.ctx = ctx;
    pool.job.n = n;
    pool.job.chunks = chunk_count(n, threads, min_chunk);
    atomic_store(&pool.job.next, 0);
    pool.threads = threads;
    atomic_store(&pool.pending, threads - 1);
    atomic_fetch_add(&pool.generation, 1);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    run_job(&pool.job);

    for (const long long end = nanoseconds() + KB_SPIN_NANOSECONDS;
         atomic_load(&pool.pending) != 0 && spin_step(end);)
        continue;
    pthread_mutex_lock(&pool.lock);
    while (atomic_load(&pool.pending) > 0)
        pthread_cond_wait(&pool.done, &pool.lock);
    pool.busy = 0;
    pthread_cond_broadcast(&pool.done);  /* for kb_threads_shutdown */
    pthread_mutex_unlock(&pool.lock);
}

void kb_threads_shutdown(void)
{
    pthread_mutex_lock(&pool.lock);
    while (pool.busy)  /* let a running call finish */
        pthread_cond_wait(&pool.done, &pool.lock);
    pool.busy = 1;
    pool.stop = 1;
    pthread_cond_broadcast(&pool.wake);
    const int n_workers = pool.n_workers;
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < n_workers; i++)
        pthread_join(pool.ids[i], NULL);
    pthread_mutex_lock(&pool.lock);
    pool.n_workers = 0;
    pool.stop = 0;
    pool.busy = 0;
    pthread_cond_broadcast(&pool.done);
    pthread_mutex_unlock(&pool.lock);
}

#else /* no threads */

void kb_parallel_for(ptrdiff_t n, int n_threads, ptrdiff_t min_chunk, kb_range_fn fn,
                     void *ctx)
{
    (void)n_threads;
    (void)min_chunk;
    fn(ctx, 0, n);
}

void kb_threads_shutdown(void)
{
}

#endif

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
    kb_parallel_for(n, threads, 1, build_range, &job);
    /* From the first range that stopped (an error, or no memory for its
     * workspace), the rest again on this thread: the error, if any, is then
     * exactly that of one serial call. */
    ptrdiff_t first = 0;
    while (first < n && !stopped[first])
        first++;
    free(stopped);
    return first == n ? kb_ok(err) : fn(ctx, first, n, err);
}

