/* kb_integrate.h -- private: integrals of a speed along piecewise curves
 * (arc length of positions, swept angle of rotations), as tables of panels
 * built once, and the queries on them in both directions. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_INTEGRATE_H
#define KB_INTEGRATE_H

#include "kb_internal.h"

/* Error target of every integral, relative to its segment's total. */
#define KB_INTEGRAL_RTOL 1e-13

/* At most this many local minima of a segment's speed are split at. */
#define KB_MAX_MINIMA 8

/* d/de of half the squared speed of segment `seg` of track `track` in the
 * curve's own parameter e (before ease): zero where the speed has a local
 * extremum, rising through zero at its minima. */
typedef double (*kb_slope_fn)(const void *ctx, ptrdiff_t track, ptrdiff_t seg, double e);

/* A nonnegative speed d(quantity)/du on segment `seg` of track `track`,
 * u in [0, 1].  Smooth but where ease changes piece (at a and 1 - b of
 * ease (n_tracks, n_seg, 2), when given) and where it touches zero (|.| of
 * a zero crossing, a kink).  Integrals are split at both, and at every
 * local minimum of the speed that `minima` returns (in e, in any order,
 * at most KB_MAX_MINIMA): a kink that falls between a panel's last node and
 * its end is invisible to every rule on that panel. */
typedef struct {
    double (*fn)(const void *ctx, ptrdiff_t track, ptrdiff_t seg, double u);
    int (*minima)(const void *ctx, ptrdiff_t track, ptrdiff_t seg, double *e);
    const void *ctx;
    const double *ease;
} kb_speed;

/* The point in (lo, hi] where slope rises through zero, to the last bit by
 * bisection, given slope(lo) < 0 <= slope(hi). */
double kb_rising_zero(kb_slope_fn slope, const void *ctx, ptrdiff_t track, ptrdiff_t seg,
                      double lo, double hi);

/* Where the curve lives in time, for the queries' extrapolation. */
typedef struct {
    ptrdiff_t n_tracks, n_seg;
    const double *knots;
    ptrdiff_t knots_stride;
    kb_extrap extrap;
} kb_domain;

/* Builds `table` (allocating its two arrays; kb_table_free releases them):
 * each segment is cut into panels on which 10-point Gauss-Legendre meets
 * KB_INTEGRAL_RTOL of the segment's total. */
kb_status kb_table_build(const kb_speed *sp, ptrdiff_t n_tracks, ptrdiff_t n_seg,
                         kb_table *table, kb_error *err);

/* The integral from the domain start to each t (n_tracks | 1, n_eval), and
 * the time at which it reaches each s; both validate their queries first. */
kb_status kb_table_value_at(const kb_speed *sp, const kb_domain *dom, const kb_table *tab,
                            const double *t, ptrdiff_t n_eval, ptrdiff_t t_stride,
                            ptrdiff_t track_begin, ptrdiff_t track_end, double *out,
                            kb_error *err);
kb_status kb_table_time_at(const kb_speed *sp, const kb_domain *dom, const kb_table *tab,
                           const double *s, ptrdiff_t n_eval, ptrdiff_t s_stride,
                           ptrdiff_t track_begin, ptrdiff_t track_end, double *out,
                           kb_error *err);

#endif /* KB_INTEGRATE_H */
