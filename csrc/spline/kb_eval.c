/* kb_eval.c -- evaluation of built piecewise cubics: query checks, the
 * per-track loop (per-track knots or times, ease), and the entry points,
 * one thread or several.  Shared knots and times go to kb_sweep.c. */
#include <stdlib.h>
#include <string.h>

#include "spline/kb_cubic.h"

kb_status kb_curve_validate(const kb_curve *c, int nu, const double *t,
                            ptrdiff_t n_eval, ptrdiff_t t_stride, kb_error *err)
{
    if (!c || !c->knots || !c->coef || c->n_seg < 1 || c->dim < 1 || c->n_tracks < 0 ||
        n_eval < 0 || (n_eval > 0 && !t))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    /* coefficients (n_tracks, n_seg, 4, dim), knots of up to as many rows,
     * outputs (n_tracks, n_eval, dim) */
    if (!kb_doubles_fit(c->n_tracks > 1 ? c->n_tracks : 1, c->n_seg, 4, c->dim) ||
        !kb_doubles_fit(c->n_tracks, n_eval, c->dim, 1))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    if (c->knots_stride != 0 && c->knots_stride != c->n_seg + 1)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    if (t_stride != 0 && t_stride != n_eval)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_T, -1, -1);
    if (nu < 0 || nu > 2 || c->extrap < KB_EXTRAP_CLAMP || c->extrap > KB_EXTRAP_ERROR)
        return kb_fail(err, KB_EBADOPTION, KB_ARG_NONE, -1, -1);

    const ptrdiff_t t_rows = t_stride ? c->n_tracks : (c->n_tracks > 0);
    for (ptrdiff_t r = 0; r < t_rows; r++)
        for (ptrdiff_t i = 0; i < n_eval; i++)
            if (!isfinite(t[r * t_stride + i]))
                return kb_fail(err, KB_ENONFINITE, KB_ARG_T, t_stride ? r : -1, i);

    if (c->extrap == KB_EXTRAP_ERROR) {
        const int shared = c->knots_stride == 0 && t_stride == 0;
        const ptrdiff_t rows = shared ? (c->n_tracks > 0) : c->n_tracks;
        for (ptrdiff_t r = 0; r < rows; r++) {
            const double *k = c->knots + r * c->knots_stride;
            const double t0 = k[0], t1 = k[c->n_seg], tol = 1e-12 * (t1 - t0);
            for (ptrdiff_t i = 0; i < n_eval; i++) {
                double v = t[r * t_stride + i];
                if (v < t0 - tol || v > t1 + tol)
                    return kb_fail(err, KB_EDOMAIN, KB_ARG_T, shared ? -1 : r, i);
            }
        }
    }
    return kb_ok(err);
}

/* Knots and query times shared by every track, and no ease: the sweep's case. */
static int sweepable(const kb_curve *c, ptrdiff_t t_stride)
{
    return c->knots_stride == 0 && t_stride == 0 && !c->ease;
}

/* One query, located in L, into element i * D of the output: a position
 * inside the domain in Horner form, else as weights of the coefficients. */
KB_INLINE void eval_located(const kb_loc *L, int nu, const double *cf, const double *ez,
                            ptrdiff_t i, ptrdiff_t D, double *out64, float *out32)
{
    const double *seg = cf + L->seg * 4 * D;
    if (nu == 0 && !L->outside) {
        double e = L->u, de, dde;
        if (ez)
            kb_ease(L->u, ez[2 * L->seg], ez[2 * L->seg + 1], &e, &de, &dde);
        horner_store(seg, D, e, out64, out32, i * D);
    } else {
        double wi[4];
        segment_weights(L, ez ? ez + 2 * L->seg : NULL, nu, wi);
        combine(seg, D, wi, out64, out32, i * D);
    }
}

/* Queries located this far ahead of the one evaluated (see eval_ahead). */
#define KB_AHEAD 16

/*
 * One track's unsorted queries on a table larger than the caches: each
 * query's segment is found KB_AHEAD queries before it is evaluated and its
 * coefficients asked for then, so that the wait on memory overlaps the
 * work of the queries between (a search's mispredicted branches would
 * otherwise keep the next query's loads from starting early).  The same
 * located segments, so the same results, as eval_track's loop.
 */
KB_INLINE void eval_ahead(const kb_curve *c, int nu, const double *k, const double *cf,
                          const double *ez, const double *tt, ptrdiff_t n_eval,
                          const seg_grid *grid, ptrdiff_t D, double *out64, float *out32)
{
    const ptrdiff_t S = c->n_seg;
    kb_loc ring[KB_AHEAD];
    ptrdiff_t hint = 0;
    for (ptrdiff_t i = 0; i < n_eval + KB_AHEAD; i++) {
        kb_loc *slot = &ring[i % KB_AHEAD];
        if (i >= KB_AHEAD)
            eval_located(slot, nu, cf, ez, i - KB_AHEAD, D, out64, out32);
        if (i + KB_AHEAD < n_eval && grid->first)  /* the grid cell of a query further on */
            kb_prefetch(grid->first + grid_cell(grid, tt[i + KB_AHEAD]), sizeof *grid->first);
        if (i < n_eval) {
            hint = grid_hint(grid, k, S, tt[i], hint);
            locate(k, S, c->extrap, tt[i], &hint, slot);
            kb_prefetch(cf + slot->seg * 4 * D, 4 * D * sizeof *cf);
        }
    }
}

/*
 * One track's queries, each by eval_located.  Inlined with constant dim
 * and output type (see track_dispatch), so each instance is straight-line
 * code.
 */
KB_INLINE void eval_track(const kb_curve *c, int nu, const double *k, const double *cf,
                          const double *ez, const double *tt, ptrdiff_t n_eval,
                          const seg_grid *grid, ptrdiff_t D, double *out64, float *out32)
{
    const ptrdiff_t S = c->n_seg, seg_size = 4 * D;
    /* tables past about a megabyte: L2's size on common processors */
    if ((double)S * (double)seg_size * sizeof(double) > (double)(1 << 20) &&
        n_eval > KB_AHEAD && !queries_ascend(tt, n_eval)) {
        eval_ahead(c, nu, k, cf, ez, tt, n_eval, grid, D, out64, out32);
        return;
    }
    /* runs of queries in one segment are looked for while the queries
     * ascend: on random ones the test would cost more than it saves */
    int runs = nu == 0 && !ez;
    ptrdiff_t hint = 0;
    for (ptrdiff_t i = 0; i < n_eval;) {
        kb_loc L;
        if (runs && i > 0 && tt[i] < tt[i - 1])
            runs = 0;
        hint = grid_hint(grid, k, S, tt[i], hint);
        locate(k, S, c->extrap, tt[i], &hint, &L);
        const double *seg = cf + L.seg * seg_size;
        eval_located(&L, nu, cf, ez, i, D, out64, out32);
        i++;
        if (runs && !L.outside) {
            /* the queries that follow in the same segment, with the u
             * locate() would give them, and no search */
            const double lo = k[L.seg], hi = k[L.seg + 1];
            double local[16];   /* the coefficients where stores cannot alias them */
            const double *cfs = seg;
            if (seg_size <= 16) {
                memcpy(local, seg, (size_t)seg_size * sizeof *local);
                cfs = local;
            }
            for (; i < n_eval && tt[i] >= lo && tt[i] < hi; i++)
                horner_store(cfs, D, (tt[i] - lo) * L.inv_dt, out64, out32, i * D);
        }
    }
}

/* eval_track for dimensions 1 to 4 and each output type as constants. */
static void track_dispatch(const kb_curve *c, int nu, const double *k, const double *cf,
                           const double *ez, const double *tt, ptrdiff_t n_eval,
                           const seg_grid *grid, double *out64, float *out32)
{
#define KB_TRACK(D)                                                                \
    (out64 ? eval_track(c, nu, k, cf, ez, tt, n_eval, grid, D, out64, NULL)        \
           : eval_track(c, nu, k, cf, ez, tt, n_eval, grid, D, NULL, out32))
    switch (c->dim) {
    case 1: KB_TRACK(1); break;
    case 2: KB_TRACK(2); break;
    case 3: KB_TRACK(3); break;
    case 4: KB_TRACK(4); break;
    default: KB_TRACK(c->dim); break;
    }
#undef KB_TRACK
}

/* Tracks [track_begin, track_end) of a validated call. */
static void eval_range(const kb_curve *c, int nu, const double *t, ptrdiff_t n_eval,
                       ptrdiff_t t_stride, ptrdiff_t track_begin, ptrdiff_t track_end,
                       double *out64, float *out32)
{
    const ptrdiff_t S = c->n_seg, D = c->dim;
    if (track_begin >= track_end || n_eval == 0)
        return;  /* no queries to read: a batch of no tracks may have none */

    /* The sweep over several tracks, unless its workspace cannot be had
     * (then the loop below: the same results, slower).  One track goes
     * through the loop, which is faster for it than the sweep's blocks
     * (docs/benchmarks.md, Tuning notes). */
    if (sweepable(c, t_stride) && track_end - track_begin > 1 &&
        kb_sweep_shared(c, nu, t, n_eval, track_begin, track_end, out64, out32))
        return;

    seg_grid grid;  /* from the first track's queries: a hint, so any tracks' will do */
    grid_alloc(&grid, S, t + track_begin * t_stride, n_eval, n_eval * D);
    int built = 0;
    for (ptrdiff_t tr = track_begin; tr < track_end; tr++) {
        const double *k = c->knots + tr * c->knots_stride;
        if (!built || c->knots_stride != 0)
            grid_build(&grid, k, S);
        built = 1;
        const ptrdiff_t off = tr * n_eval * D;
        track_dispatch(c, nu, k, c->coef + tr * S * 4 * D,
                       c->ease ? c->ease + tr * S * 2 : NULL, t + tr * t_stride, n_eval, &grid,
                       out64 ? out64 + off : NULL, out32 ? out32 + off : NULL);
    }
    free(grid.first);
}

kb_status kb_curve_eval(const kb_curve *c, int nu, const double *t, ptrdiff_t n_eval,
                        ptrdiff_t t_stride, ptrdiff_t track_begin, ptrdiff_t track_end,
                        double *out64, float *out32, kb_error *err)
{
    kb_status s = kb_curve_validate(c, nu, t, n_eval, t_stride, err);
    if (s != KB_OK)
        return s;
    if ((out64 == NULL) == (out32 == NULL) || track_begin < 0 ||
        track_end > c->n_tracks || track_begin > track_end)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    eval_range(c, nu, t, n_eval, t_stride, track_begin, track_end, out64, out32);
    return kb_ok(err);
}

typedef struct {
    const kb_curve *c;
    int nu;
    const double *t;
    ptrdiff_t n_eval, t_stride;
    double *out64;
    float *out32;
} eval_job;

static void eval_job_range(void *ctx, ptrdiff_t begin, ptrdiff_t end)
{
    const eval_job *j = ctx;
    eval_range(j->c, j->nu, j->t, j->n_eval, j->t_stride, begin, end, j->out64, j->out32);
}

kb_status kb_curve_eval_threaded(const kb_curve *c, int nu, const double *t,
                                 ptrdiff_t n_eval, ptrdiff_t t_stride, int n_threads,
                                 double *out64, float *out32, kb_error *err)
{
    kb_status s = kb_curve_validate(c, nu, t, n_eval, t_stride, err);
    if (s != KB_OK)
        return s;
    if ((out64 == NULL) == (out32 == NULL))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    const double work = (double)c->n_tracks * (double)n_eval * (double)c->dim;
    eval_job job = {c, nu, t, n_eval, t_stride, out64, out32};
    kb_parallel_for(c->n_tracks, kb_threads_for(c->n_tracks, work, n_threads),
                    sweepable(c, t_stride) ? KB_SWEEP_MIN_VALUES / c->dim + 1 : 1,
                    eval_job_range, &job);
    return kb_ok(err);
}
