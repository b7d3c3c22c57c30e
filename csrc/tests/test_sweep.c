/* test_sweep.c -- the shared-query sweep's outputs, small (stored through
 * the caches, a run's last vector overlapping the next run) and large
 * (written past the caches, in whole aligned vectors), hold the values of
 * the per-track path, at any alignment, and nothing around them is written. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kb_test.h"
#include "kbspline/kbspline.h"

/* Output sizes below and above the core's streaming thresholds for the
 * 24 MB last-level cache test_main sets (12 MB of float64, 24 MB of
 * float32). */
#define SMALL_BYTES (64 << 10)
#define LARGE_BYTES(f32) ((f32) ? 32 << 20 : 12 << 20)
#define GUARD 8  /* elements checked on each side of the output */
#define SENTINEL (-7.25)

/* One case: n_keys keys (many: runs of one query; few: long runs), D
 * components, at least out_bytes of float32 or float64 output placed
 * `shift` elements past an aligned address, on `threads` threads.  1 if
 * every value equals the per-track path's. */
static int sweep_case(ptrdiff_t n_keys, ptrdiff_t dim, ptrdiff_t n_eval, int f32,
                      ptrdiff_t shift, ptrdiff_t out_bytes, int threads)
{
    const size_t size = f32 ? sizeof(float) : sizeof(double);
    const ptrdiff_t n_tracks = out_bytes / (ptrdiff_t)(n_eval * dim * size) + 1;
    const ptrdiff_t n_seg = n_keys - 1, n_out = n_tracks * n_eval * dim;
    double *times = malloc(n_keys * sizeof *times), *zeros = calloc(n_keys, sizeof *zeros);
    double *values = malloc(n_tracks * n_keys * dim * sizeof *values);
    double *coef = malloc(n_tracks * n_seg * 4 * dim * sizeof *coef);
    double *t = malloc(n_eval * sizeof *t), *t_rows = malloc(n_tracks * n_eval * sizeof *t);
    double *knot_rows = malloc(n_tracks * n_keys * sizeof *knot_rows);
    double *rows = malloc(n_out * sizeof *rows);
    char *buffer = malloc((n_out + 2 * GUARD) * size);
    int ok = times && zeros && values && coef && t && t_rows && knot_rows && rows && buffer;
    if (ok) {
        for (ptrdiff_t i = 0; i < n_keys; i++)
            times[i] = i + 0.3 * sin(1.7 * i);
        for (ptrdiff_t i = 0; i < n_tracks * n_keys * dim; i++)
            values[i] = sin(0.61 * i) + 0.01 * (i % 7);
        for (ptrdiff_t i = 0; i < n_eval; i++)  /* sorted, all inside the domain */
            t[i] = times[0] + (times[n_keys - 1] - times[0]) * pow((i + 0.5) / n_eval, 1.3);
        for (ptrdiff_t tr = 0; tr < n_tracks; tr++) {
            memcpy(t_rows + tr * n_eval, t, n_eval * sizeof *t);
            memcpy(knot_rows + tr * n_keys, times, n_keys * sizeof *times);
        }
        kb_tcb_keys k = {n_tracks, n_keys, dim, {times, 0}, values, {zeros, 0}, {zeros, 0},
                         {zeros, 0}, {zeros, 0}, {zeros, 0}, {NULL, 0}, {NULL, 0},
                         KB_TIMING_KB, KB_ENDS_NATURAL, NULL, NULL};
        kb_error err;
        ok = kb_tcb_build(&k, NULL, NULL, coef, NULL, &err) == KB_OK;
        kb_curve shared = {n_tracks, n_seg, dim, times, 0, coef, NULL, KB_EXTRAP_CLAMP};
        kb_curve per_track = {n_tracks, n_seg, dim, knot_rows, n_keys, coef, NULL,
                              KB_EXTRAP_CLAMP};
        ok = ok && kb_curve_eval(&per_track, 0, t_rows, n_eval, n_eval, 0, n_tracks, rows,
                                 NULL, &err) == KB_OK;
        for (ptrdiff_t i = 0; i < n_out + 2 * GUARD; i++) {
            if (f32)
                ((float *)buffer)[i] = (float)SENTINEL;
            else
                ((double *)buffer)[i] = SENTINEL;
        }
        double *out64 = f32 ? NULL : (double *)buffer + GUARD + shift;
        float *out32 = f32 ? (float *)buffer + GUARD + shift : NULL;
        ok = ok && kb_curve_eval_threaded(&shared, 0, t, n_eval, 0, threads, out64, out32,
                                          &err) == KB_OK;
        for (ptrdiff_t i = -GUARD - shift; ok && i < n_out + GUARD - shift; i++) {
            const int inside = i >= 0 && i < n_out;
            const double got = f32 ? (double)out32[i] : out64[i];
            const double want = !inside ? SENTINEL : f32 ? (double)(float)rows[i] : rows[i];
            if (got != want) {
                printf("  keys %td dim %td float%d shift %td threads %d: element %td of %td"
                       " is %.17g, not %.17g\n",
                       n_keys, dim, f32 ? 32 : 64, shift, threads, i, n_out, got, want);
                ok = 0;
            }
        }
    }
    free(times);
    free(zeros);
    free(values);
    free(coef);
    free(t);
    free(t_rows);
    free(knot_rows);
    free(rows);
    free(buffer);
    return ok;
}

KB_TEST(test_sweep_outputs_equal_per_track_path)
{
    for (ptrdiff_t dim = 1; dim <= 5; dim++)
        for (int f32 = 0; f32 <= 1; f32++)
            for (ptrdiff_t shift = 0; shift <= 3; shift++) {
                /* 700 keys over 1100 queries: runs of one or two queries, so
                 * vectors reach across runs, and two blocks of queries */
                KB_ASSERT(sweep_case(700, dim, 1100, f32, shift, SMALL_BYTES, 1));
                /* 30 keys over 2500 queries: long runs, three blocks */
                KB_ASSERT(sweep_case(30, dim, 2500, f32, shift, SMALL_BYTES, 1));
            }
    /* Streamed: fewer cases, each large (valgrind runs these tests).  Every
     * dimension that streams in float64, off 16-byte alignment (the first
     * element alone); float32, larger still, for D = 2 and 3 two elements
     * off.  One thread and two. */
    for (ptrdiff_t dim = 1; dim <= 4; dim++)
        KB_ASSERT(sweep_case(700, dim, 1100, 0, 1, LARGE_BYTES(0), 1 + dim % 2));
    KB_ASSERT(sweep_case(30, 3, 2500, 0, 0, LARGE_BYTES(0), 2));
    KB_ASSERT(sweep_case(700, 2, 1100, 1, 2, LARGE_BYTES(1), 1));
    KB_ASSERT(sweep_case(700, 3, 1100, 1, 2, LARGE_BYTES(1), 2));
}
