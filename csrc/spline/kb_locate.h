/* kb_locate.h -- private: where a query time falls in a table of knots,
 * after extrapolation; shared by position and rotation evaluation. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
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

/* kb_rot_eval's unit quaternions (nu 0, scalar first) of track 0 of a
 * rotation curve at n queries t located in loc (by locate), into out (n,
 * 4), without checks: for callers that evaluate one curve many times
 * (kb_reduce_errors.c, kb_reduce_sweep_fit.c). */
void kb_rot_values_at(const kb_rot_curve *c, const double *t, const kb_loc *loc, ptrdiff_t n,
                      double *out);

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

/* Whether queries t[0 .. n) never descend: each is then found from the
 * one before it in O(1), and a grid would only cost its building. */
static inline int queries_ascend(const double *t, ptrdiff_t n)
{
    for (ptrdiff_t i = 1; i < n; i++)
        if (t[i] < t[i - 1])
            return 0;
    return 1;
}

/* A grid of two cells a segment where queries outnumber segments enough
 * to pay for it.  Where they are fewer but unsorted (a long track queried
 * at random, where each search would gallop from a random segment through
 * a table that has left the caches), a grid too, of at most one cell per
 * ten of n_values, the values one track's queries produce (its bytes at
 * most a tenth of a float64 output's; not every track's where the queries
 * are located once for all of them, whose grid would cost more to build
 * than it saves), each cell then spanning a few segments; locate() finds
 * the segment from any hint.  None where it would not pay, or without
 * memory.  Free g->first after. */
static inline void grid_alloc(seg_grid *g, ptrdiff_t n_seg, const double *t, ptrdiff_t n_eval,
                              ptrdiff_t n_values)
{
    g->cells = n_eval >= 2 * n_seg ? 2 * n_seg : 0;
    if (g->cells == 0 && n_seg > 64 && !queries_ascend(t, n_eval))
        g->cells = n_values / 10 < 2 * n_seg ? n_values / 10 : 2 * n_seg;
    g->t0 = g->per_cell = 0.0;
    g->first = g->cells > 1 && n_seg > 1 ? malloc((size_t)g->cells * sizeof *g->first) : NULL;
}

static inline void grid_build(seg_grid *g, const double *k, ptrdiff_t n_seg)
{
    if (!g->first)
        return;
    g->t0 = k[0];
    g->per_cell = (double)g->cells / (k[n_seg] - k[0]);
    ptrdiff_t seg = 0;
    for (ptrdiff_t j = 0; j < g->cells; j++) {  /* from the cell before: O(1) or O(log) */
        const double start = k[0] + (double)j / g->per_cell;
        seg = find_segment(k, n_seg, start < k[n_seg] ? start : k[n_seg], seg);
        g->first[j] = seg;
    }
}

/* The cell of a grid (g->first not NULL) where t falls, clamped. */
static inline ptrdiff_t grid_cell(const seg_grid *g, double t)
{
    const double x = (t - g->t0) * g->per_cell;
    return x <= 0.0 ? 0 : x >= (double)g->cells ? g->cells - 1 : (ptrdiff_t)x;
}

static inline ptrdiff_t grid_hint(const seg_grid *g, const double *k, ptrdiff_t n_seg,
                                  double t, ptrdiff_t previous)
{
    if (!g->first)
        return previous;
    ptrdiff_t s = g->first[grid_cell(g, t)];
    /* a cell spans few knots: step past two at or below t without branches,
     * which random queries would mispredict half the time (k[s + 1] exists:
     * s < n_seg) */
    s += (s + 1 < n_seg) & (k[s + 1] <= t);
    s += (s + 1 < n_seg) & (k[s + 1] <= t);
    return s;
}

#endif /* KB_LOCATE_H */
