/* kb_eval.c -- evaluation of built piecewise cubics: search, extrapolation,
 * ease, and the position / velocity / acceleration kernel. */
#include "kb_internal.h"
#include "kb_locate.h"

#include <string.h>

/* The sweep's helpers are inlined into each compiled copy of
 * sweep_dispatch, so that they are compiled for its instruction set. */
#if defined(__GNUC__)
#define KB_INLINE static inline __attribute__((always_inline))
#else
#define KB_INLINE static inline
#endif

/* Queries located per block when every track shares knots and times: a
 * block large enough that each track's coefficients are read about once. */
#define KB_CHUNK 1024

/*
 * Every result is linear in the segment's coefficients: out = sum_k w[k] c_k.
 * The weights depend only on where the query falls (and the track's ease),
 * so with shared knots and times they are computed once per query for all
 * tracks.  With e = Ease(u): position (1, e, e^2, e^3); velocity
 * de/dt (0, 1, 2e, 3e^2); acceleration (de/dt)^2 (0, 0, 2, 6e) +
 * d2e/dt2 (0, 1, 2e, 3e^2).  Linear extrapolation adds excess * velocity.
 */
static inline void segment_weights(const kb_loc *loc, const double *ease, int nu,
                                   double w[4])
{
    double e = loc->u, de = 1.0, dde = 0.0;
    if (ease)
        kb_ease(loc->u, ease[0], ease[1], &e, &de, &dde);
    const double s1 = de * loc->inv_dt;  /* de/dt */
    const double s2 = dde * loc->inv_dt * loc->inv_dt;
    const double d1[4] = {0.0, 1.0, 2.0 * e, 3.0 * e * e};
    if (nu == 0) {
        const double x = loc->outside ? loc->excess * s1 : 0.0;
        w[0] = 1.0;
        w[1] = e + x * d1[1];
        w[2] = e * e + x * d1[2];
        w[3] = e * e * e + x * d1[3];
    } else if (nu == 1) {
        for (int k = 0; k < 4; k++)
            w[k] = s1 * d1[k];
    } else {
        const double d2[4] = {0.0, 0.0, 2.0, 6.0 * e};
        for (int k = 0; k < 4; k++)
            w[k] = loc->outside ? 0.0 : s1 * s1 * d2[k] + s2 * d1[k];
    }
}

/* out[off + j] = sum_k w[k] cf[k * dim + j] for j < dim, into whichever of
 * out64 / out32 is given.  Called with constant dim and output type so that
 * each instance compiles to straight-line code. */
KB_INLINE void combine(const double *cf, ptrdiff_t dim, const double w[4],
                       double *out64, float *out32, ptrdiff_t off)
{
    for (ptrdiff_t j = 0; j < dim; j++) {
        const double v = w[0] * cf[j] + w[1] * cf[dim + j] + w[2] * cf[2 * dim + j] +
                         w[3] * cf[3 * dim + j];
        if (out64)
            out64[off + j] = v;
        else
            out32[off + j] = (float)v;
    }
}

#if defined(__GNUC__)
/* D = 3 or 4 as one vector of four doubles: the same products and sums, in
 * the same order, as combine(), so the results are bit-identical. */
typedef double kb_v4 __attribute__((vector_size(32)));
#define KB_HAVE_V4 1
#endif

/* Results of queries [i, end) on one segment (its coefficients in seg) for
 * one track, written from out[i * dim].  With dim 3 each vector store also
 * writes the next query's first value, which is then overwritten, so the
 * last query of the block takes the scalar path. */
KB_INLINE ptrdiff_t run_results(const double *seg, ptrdiff_t dim, const double (*w)[4],
                                ptrdiff_t i, ptrdiff_t end, ptrdiff_t n, double *out)
{
#if defined(KB_HAVE_V4)
    if (dim == 3 || dim == 4) {
        kb_v4 cv[4];
        for (int k = 0; k < 4; k++)
            cv[k] = (kb_v4){seg[k * dim], seg[k * dim + 1], seg[k * dim + 2],
                            dim == 4 ? seg[k * dim + 3] : 0.0};
        const ptrdiff_t vec_end = dim == 4 || end < n ? end : end - 1;
        for (; i < vec_end; i++) {
            const kb_v4 v = w[i][0] * cv[0] + w[i][1] * cv[1] + w[i][2] * cv[2] +
                            w[i][3] * cv[3];
            memcpy(out + i * dim, &v, sizeof v);
        }
    }
#else
    (void)n;
#endif
    for (; i < end; i++)
        combine(seg, dim, w[i], out, NULL, i * dim);
    return i;
}

/* Shared knots, times and no ease: one block of located queries, with
 * their weights, swept over tracks [tb, te).  Sorted queries come in runs
 * on one segment; each run's coefficients are copied once into locals the
 * compiler keeps in registers (stores to out could alias the table). */
KB_INLINE void sweep_block(const kb_curve *c, const ptrdiff_t *seg_of, const double (*w)[4],
                           const ptrdiff_t *run_end, ptrdiff_t n, ptrdiff_t q0,
                           ptrdiff_t n_eval, ptrdiff_t tb, ptrdiff_t te, ptrdiff_t dim,
                           double *out64, float *out32)
{
    const ptrdiff_t seg_size = 4 * dim;
    for (ptrdiff_t tr = tb; tr < te; tr++) {
        const double *cf = c->coef + tr * c->n_seg * seg_size;
        const ptrdiff_t base = (tr * n_eval + q0) * dim;
        ptrdiff_t i = 0;
        while (i < n) {
            const ptrdiff_t end = run_end[i];
            double local[16];
            const double *seg = cf + seg_of[i] * seg_size;
            if (dim <= 4) {
                for (ptrdiff_t k = 0; k < seg_size; k++)
                    local[k] = seg[k];
                seg = local;
            }
            if (out32)
                for (; i < end; i++)
                    combine(seg, dim, w[i], NULL, out32, base + i * dim);
            else
                i = run_results(seg, dim, w, i, end, n, out64 + base);
        }
    }
}

/* Compiled twice on x86-64 Linux with GCC, for the baseline and for AVX2,
 * and chosen at load time (ifunc): wheels stay portable.  FMA is not used:
 * ISO C mode does not contract a * b + c, so both copies round alike. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
__attribute__((target_clones("default", "avx2")))
#endif
static void sweep_dispatch(const kb_curve *c, const ptrdiff_t *seg_of, const double (*w)[4],
                           const ptrdiff_t *run_end, ptrdiff_t n, ptrdiff_t q0,
                           ptrdiff_t n_eval, ptrdiff_t tb, ptrdiff_t te, double *out64,
                           float *out32)
{
#define KB_SWEEP(D)                                                                       \
    (out64 ? sweep_block(c, seg_of, w, run_end, n, q0, n_eval, tb, te, D, out64, NULL)     \
           : sweep_block(c, seg_of, w, run_end, n, q0, n_eval, tb, te, D, NULL, out32))
    switch (c->dim) {
    case 1: KB_SWEEP(1); break;
    case 2: KB_SWEEP(2); break;
    case 3: KB_SWEEP(3); break;
    case 4: KB_SWEEP(4); break;
    default: KB_SWEEP(c->dim); break;
    }
#undef KB_SWEEP
}

kb_status kb_curve_validate(const kb_curve *c, int nu, const double *t,
                            ptrdiff_t n_eval, ptrdiff_t t_stride, kb_error *err)
{
    if (!c || !c->knots || !c->coef || c->n_seg < 1 || c->dim < 1 || c->n_tracks < 0 ||
        n_eval < 0 || (n_eval > 0 && !t))
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

/* Tracks [track_begin, track_end) of a validated call. */
static void eval_range(const kb_curve *c, int nu, const double *t, ptrdiff_t n_eval,
                       ptrdiff_t t_stride, ptrdiff_t track_begin, ptrdiff_t track_end,
                       double *out64, float *out32)
{
    const ptrdiff_t S = c->n_seg, D = c->dim, seg_size = 4 * D;
    ptrdiff_t seg_of[KB_CHUNK];   /* each query's segment */
    double w[KB_CHUNK][4];
    ptrdiff_t run_end[KB_CHUNK];  /* where each query's run on one segment ends */

    if (c->knots_stride == 0 && t_stride == 0 && !c->ease) {
        /* Shared knots and times: locate a block of queries once, then
         * sweep every track over it. */
        ptrdiff_t hint = 0;
        for (ptrdiff_t q0 = 0; q0 < n_eval; q0 += KB_CHUNK) {
            const ptrdiff_t n = n_eval - q0 < KB_CHUNK ? n_eval - q0 : KB_CHUNK;
            for (ptrdiff_t i = 0; i < n; i++) {
                kb_loc L;
                locate(c->knots, S, c->extrap, t[q0 + i], &hint, &L);
                segment_weights(&L, NULL, nu, w[i]);
                seg_of[i] = L.seg;
            }
            for (ptrdiff_t i = n - 1; i >= 0; i--)
                run_end[i] = i + 1 < n && seg_of[i + 1] == seg_of[i] ? run_end[i + 1] : i + 1;
            sweep_dispatch(c, seg_of, (const double (*)[4])w, run_end, n, q0, n_eval,
                           track_begin, track_end, out64, out32);
        }
        return;
    }

    for (ptrdiff_t tr = track_begin; tr < track_end; tr++) {
        const double *k = c->knots + tr * c->knots_stride;
        const double *tt = t + tr * t_stride;
        const double *cf = c->coef + tr * S * seg_size;
        const double *ez = c->ease ? c->ease + tr * S * 2 : NULL;
        ptrdiff_t hint = 0;
        for (ptrdiff_t i = 0; i < n_eval; i++) {
            kb_loc L;
            double wi[4];
            locate(k, S, c->extrap, tt[i], &hint, &L);
            segment_weights(&L, ez ? ez + 2 * L.seg : NULL, nu, wi);
            combine(cf + L.seg * seg_size, D, wi, out64, out32, (tr * n_eval + i) * D);
        }
    }
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
    eval_job job = {c, nu, t, n_eval, t_stride, out64, out32};
    const double work = (double)c->n_tracks * (double)n_eval * (double)c->dim;
    kb_parallel_for(c->n_tracks, kb_threads_for(c->n_tracks, work, n_threads), eval_job_range,
                    &job);
    return kb_ok(err);
}
