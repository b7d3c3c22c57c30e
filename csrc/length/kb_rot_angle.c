/* kb_rot_angle.c -- the rotation angle swept along a squad spline and its
 * inverse, for constant angular speed (tables in kb_integrate.c). */
#include "length/kb_integrate.h"
#include "rotation/kb_cumulative.h"

/* The jet along e of segment seg of track tr, squad or cumulative. */
static void segment_jet(const kb_rot_curve *c, ptrdiff_t tr, ptrdiff_t seg, double e,
                        double J[3][4])
{
    const ptrdiff_t i = tr * c->n_seg + seg;
    rot_segment_jet(c->kind ? c->kind[i] : KB_SEG_SQUAD, c->seg + KB_ROT_SEG * i, e, J);
}

/* |w| per unit of the segment parameter u: 2 |dS/de| de/du for unit S. */
static double angular_speed(const void *ctx, ptrdiff_t tr, ptrdiff_t seg, double u)
{
    const kb_rot_curve *c = ctx;
    const ptrdiff_t i = tr * c->n_seg + seg;
    double e = u, de = 1.0, dde, J[3][4];
    if (c->ease)
        kb_ease(u, c->ease[2 * i], c->ease[2 * i + 1], &e, &de, &dde);
    segment_jet(c, tr, seg, e, J);
    return 2.0 * sqrt(kb_qdot(J[1], J[1])) * de;
}

/* S'(e) . S''(e) of segment seg of track tr: a quarter of d/de |w|^2 / 2. */
static double angular_slope(const void *ctx, ptrdiff_t tr, ptrdiff_t seg, double e)
{
    double J[3][4];
    segment_jet(ctx, tr, seg, e, J);
    return kb_qdot(J[1], J[2]);
}

#define KB_MINIMA_GRID 16  /* cells in which the slope is sampled */
#define KB_MINIMA_SCAN 24  /* samples on each side of a minimum, sqrt(2) apart */

/* Adds x to the n minima in out unless one is within 1e-12 of it. */
static int add_minimum(double x, double *out, int n)
{
    for (int j = 0; j < n; j++)
        if (fabs(out[j] - x) <= 1e-12)
            return n;
    out[n] = x;
    return n + 1;
}

/*
 * A cell of the grid may hold two minima and the maximum between them, so
 * the slope is sampled again outward from each minimum x found (side +1 or
 * -1), at distances 2^(-k/2) of a cell, and bisected where it rises
 * through zero between samples.  For a segment whose angle is a cubic (one
 * fixed axis), the slope beyond the maximum, seen from a minimum at
 * distance d, keeps its sign over (d/2, d), where a sample falls.
 */
static int scan_beside(const void *ctx, ptrdiff_t tr, ptrdiff_t seg, double x, int side,
                       double *out, int n)
{
    double prev = x, g_prev = 0.0;
    for (int k = 2 * KB_MINIMA_SCAN; k >= 0 && n < KB_MAX_MINIMA; k--) {
        const double e = fmin(fmax(x + side * pow(2.0, -0.5 * k) / KB_MINIMA_GRID, 0.0), 1.0);
        const double g = angular_slope(ctx, tr, seg, e);
        const double g_lo = side > 0 ? g_prev : g, g_hi = side > 0 ? g : g_prev;
        if (prev != x && g_lo < 0.0 && g_hi >= 0.0)
            n = add_minimum(kb_rising_zero(angular_slope, ctx, tr, seg, fmin(prev, e),
                                           fmax(prev, e)),
                            out, n);
        if (e == 0.0 || e == 1.0)
            break;
        prev = e;
        g_prev = g;
    }
    return n;
}

/* The local minima of |w| in (0, 1): rising zeros of the slope between
 * samples on a grid, then beside each minimum found. */
static int angular_minima(const void *ctx, ptrdiff_t tr, ptrdiff_t seg, double *out)
{
    int n = 0;
    double g_lo = angular_slope(ctx, tr, seg, 0.0);
    for (int k = 1; k <= KB_MINIMA_GRID && n < KB_MAX_MINIMA; k++) {
        const double lo = (k - 1.0) / KB_MINIMA_GRID, hi = (double)k / KB_MINIMA_GRID;
        const double g_hi = angular_slope(ctx, tr, seg, hi);
        if (g_lo < 0.0 && g_hi >= 0.0)
            out[n++] = kb_rising_zero(angular_slope, ctx, tr, seg, lo, hi);
        g_lo = g_hi;
    }
    for (int j = 0; j < n; j++) {
        n = scan_beside(ctx, tr, seg, out[j], +1, out, n);
        n = scan_beside(ctx, tr, seg, out[j], -1, out, n);
    }
    return n;
}

/* The speed and domain views the tables take. */
static int views(const kb_rot_curve *c, kb_speed *sp, kb_domain *dom)
{
    if (!c || !c->seg || !c->knots || c->n_seg < 1 || c->n_tracks < 0)
        return 0;
    sp->fn = angular_speed;
    sp->minima = angular_minima;
    sp->ctx = c;
    sp->ease = c->ease;
    dom->n_tracks = c->n_tracks;
    dom->n_seg = c->n_seg;
    dom->knots = c->knots;
    dom->knots_stride = c->knots_stride;
    dom->extrap = c->extrap;
    return 1;
}

kb_status kb_rot_angle_table(const kb_rot_curve *c, kb_table *table, kb_error *err)
{
    kb_speed sp;
    kb_domain dom;
    if (!views(c, &sp, &dom) || !table)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    return kb_table_build(&sp, c->n_tracks, c->n_seg, table, err);
}

kb_status kb_rot_angle(const kb_rot_curve *c, const kb_table *table, const double *t,
                       ptrdiff_t n_eval, ptrdiff_t t_stride, ptrdiff_t track_begin,
                       ptrdiff_t track_end, double *out, kb_error *err)
{
    kb_speed sp;
    kb_domain dom;
    if (!views(c, &sp, &dom))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    return kb_table_value_at(&sp, &dom, table, t, n_eval, t_stride, track_begin, track_end,
                             out, err);
}

kb_status kb_rot_time_at_angle(const kb_rot_curve *c, const kb_table *table,
                               const double *s, ptrdiff_t n_eval, ptrdiff_t s_stride,
                               ptrdiff_t track_begin, ptrdiff_t track_end, double *out,
                               kb_error *err)
{
    kb_speed sp;
    kb_domain dom;
    if (!views(c, &sp, &dom))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    return kb_table_time_at(&sp, &dom, table, s, n_eval, s_stride, track_begin, track_end,
                            out, err);
}
