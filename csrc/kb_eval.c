/* kb_eval.c -- evaluation of built piecewise cubics: search, extrapolation,
 * ease, and the position / velocity / acceleration kernel. */
#include "kb_internal.h"

/* Queries located per block when every track shares knots and times. */
#define KB_CHUNK 256

/* Where a query falls: segment, local parameter, and for linear
 * extrapolation how far beyond the domain end it lies. */
typedef struct {
    ptrdiff_t seg;
    double u;
    double inv_dt;
    double excess;
    int outside;
} kb_loc;

/*
 * Segment n with knots[n] <= t < knots[n+1] (the last segment is closed),
 * for t in [knots[0], knots[n_seg]].  Gallops from the previous answer, so
 * sorted queries cost O(1) each and unsorted ones O(log n_seg).
 */
static ptrdiff_t find_segment(const double *k, ptrdiff_t n_seg, double t, ptrdiff_t hint)
{
    ptrdiff_t lo, hi, step = 1;
    if (hint < 0 || hint >= n_seg)
        hint = 0;
    if (t >= k[hint]) {
        lo = hint;
        hi = lo + 1;
        while (hi < n_seg && k[hi] <= t) {
            lo = hi;
            step *= 2;
            hi = lo + step;
        }
        if (hi > n_seg)
            hi = n_seg;
    } else {
        hi = hint;
        lo = hi - 1;
        while (lo > 0 && k[lo] > t) {
            hi = lo;
            step *= 2;
            lo = hi - step;
        }
        if (lo < 0)
            lo = 0;
    }
    /* k[lo] <= t, and t < k[hi] unless hi == n_seg */
    while (hi - lo > 1) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        if (k[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static inline void locate(const double *k, ptrdiff_t n_seg, kb_extrap extrap, double t,
                          ptrdiff_t *hint, kb_loc *loc)
{
    const double t0 = k[0], t1 = k[n_seg];
    loc->excess = 0.0;
    loc->outside = 0;
    if (t < t0 || t > t1) {
        if (extrap == KB_EXTRAP_PERIODIC) {
            double w = fmod(t - t0, t1 - t0);
            if (w < 0.0)
                w += t1 - t0;
            t = fmin(t0 + w, t1);
        } else {
            /* clamp, error (validated: within tolerance) and linear */
            double end = t < t0 ? t0 : t1;
            if (extrap == KB_EXTRAP_LINEAR) {
                loc->excess = t - end;
                loc->outside = 1;
            }
            t = end;
        }
    }
    ptrdiff_t n = find_segment(k, n_seg, t, *hint);
    *hint = n;
    loc->seg = n;
    loc->inv_dt = 1.0 / (k[n + 1] - k[n]);
    /* u from t - knot locally: large absolute times lose no precision */
    loc->u = (t - k[n]) * loc->inv_dt;
    if (t == t1)
        loc->u = 1.0;
}

/* The nu-th time derivative of one segment at one location, written to
 * out64[off + j] or out32[off + j] for j < dim. */
static inline void eval_segment(const double *cf, ptrdiff_t dim, const double *ease,
                                const kb_loc *loc, int nu, double *out64, float *out32,
                                ptrdiff_t off)
{
    double e = loc->u, de = 1.0, dde = 0.0;
    if (ease)
        kb_ease(loc->u, ease[0], ease[1], &e, &de, &dde);
    const double s1 = de * loc->inv_dt;  /* d(e)/dt */
    const double s2 = dde * loc->inv_dt * loc->inv_dt;
    for (ptrdiff_t j = 0; j < dim; j++) {
        const double c0 = cf[j], c1 = cf[dim + j], c2 = cf[2 * dim + j],
                     c3 = cf[3 * dim + j];
        const double dp = c1 + e * (2.0 * c2 + 3.0 * e * c3);
        double v;
        if (nu == 0) {
            v = c0 + e * (c1 + e * (c2 + e * c3));
            if (loc->outside)
                v += loc->excess * dp * s1;
        } else if (nu == 1) {
            v = dp * s1;
        } else {
            const double ddp = 2.0 * c2 + 6.0 * e * c3;
            v = loc->outside ? 0.0 : ddp * s1 * s1 + dp * s2;
        }
        if (out64)
            out64[off + j] = v;
        else
            out32[off + j] = (float)v;
    }
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

    const ptrdiff_t S = c->n_seg, D = c->dim, seg_size = 4 * D;

    if (c->knots_stride == 0 && t_stride == 0) {
        /* Shared knots and times: locate a block of queries once, then
         * sweep every track over it. */
        kb_loc locs[KB_CHUNK];
        ptrdiff_t hint = 0;
        for (ptrdiff_t q0 = 0; q0 < n_eval; q0 += KB_CHUNK) {
            const ptrdiff_t n = n_eval - q0 < KB_CHUNK ? n_eval - q0 : KB_CHUNK;
            for (ptrdiff_t i = 0; i < n; i++)
                locate(c->knots, S, c->extrap, t[q0 + i], &hint, &locs[i]);
            for (ptrdiff_t tr = track_begin; tr < track_end; tr++) {
                const double *cf = c->coef + tr * S * seg_size;
                const double *ez = c->ease ? c->ease + tr * S * 2 : NULL;
                for (ptrdiff_t i = 0; i < n; i++) {
                    const kb_loc *L = &locs[i];
                    eval_segment(cf + L->seg * seg_size, D, ez ? ez + 2 * L->seg : NULL,
                                 L, nu, out64, out32, (tr * n_eval + q0 + i) * D);
                }
            }
        }
        return kb_ok(err);
    }

    for (ptrdiff_t tr = track_begin; tr < track_end; tr++) {
        const double *k = c->knots + tr * c->knots_stride;
        const double *tt = t + tr * t_stride;
        const double *cf = c->coef + tr * S * seg_size;
        const double *ez = c->ease ? c->ease + tr * S * 2 : NULL;
        ptrdiff_t hint = 0;
        for (ptrdiff_t i = 0; i < n_eval; i++) {
            kb_loc L;
            locate(k, S, c->extrap, tt[i], &hint, &L);
            eval_segment(cf + L.seg * seg_size, D, ez ? ez + 2 * L.seg : NULL, &L, nu,
                         out64, out32, (tr * n_eval + i) * D);
        }
    }
    return kb_ok(err);
}
