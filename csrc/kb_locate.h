/* kb_locate.h -- private: where a query time falls in a table of knots,
 * after extrapolation; shared by position and rotation evaluation. */
#ifndef KB_LOCATE_H
#define KB_LOCATE_H

#include <stdlib.h>

#include "kb_internal.h"

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
static inline ptrdiff_t find_segment(const double *k, ptrdiff_t n_seg, double t, ptrdiff_t hint)
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

/*
 * A guess of each query's segment from a uniform grid over the domain:
 * first[g] is the segment where cell g starts, so a query's segment is
 * first[g] or a few after it, and random queries cost O(1) each instead of
 * a binary search.  Only a hint for locate(), which finds the segment from
 * any hint: results never depend on it.
 */
typedef struct {
    ptrdiff_t cells;
    double t0, per_cell;
    ptrdiff_t *first;   /* (cells,) or NULL: no grid, the previous segment */
} seg_grid;

/* A grid of two cells a segment, where queries outnumber segments enough
 * to pay for it; else (or without memory) none.  Free g->first after. */
static inline void grid_alloc(seg_grid *g, ptrdiff_t n_seg, ptrdiff_t n_eval)
{
    g->cells = 2 * n_seg;
    g->t0 = g->per_cell = 0.0;
    g->first = n_eval >= 2 * n_seg && n_seg > 1 ? malloc((size_t)g->cells * sizeof *g->first)
                                                : NULL;
}

static inline void grid_build(seg_grid *g, const double *k, ptrdiff_t n_seg)
{
    if (!g->first)
        return;
    g->t0 = k[0];
    g->per_cell = (double)g->cells / (k[n_seg] - k[0]);
    ptrdiff_t seg = 0;
    for (ptrdiff_t j = 0; j < g->cells; j++) {
        const double start = k[0] + (double)j / g->per_cell;
        while (seg + 1 < n_seg && k[seg + 1] <= start)
            seg++;
        g->first[j] = seg;
    }
}

static inline ptrdiff_t grid_hint(const seg_grid *g, const double *k, ptrdiff_t n_seg,
                                  double t, ptrdiff_t previous)
{
    if (!g->first)
        return previous;
    const double x = (t - g->t0) * g->per_cell;
    const ptrdiff_t j = x <= 0.0 ? 0 : x >= (double)g->cells ? g->cells - 1 : (ptrdiff_t)x;
    ptrdiff_t s = g->first[j];
    /* a cell spans few knots: step past two at or below t without branches,
     * which random queries would mispredict half the time (k[s + 1] exists:
     * s < n_seg) */
    s += (s + 1 < n_seg) & (k[s + 1] <= t);
    s += (s + 1 < n_seg) & (k[s + 1] <= t);
    return s;
}

#endif /* KB_LOCATE_H */
