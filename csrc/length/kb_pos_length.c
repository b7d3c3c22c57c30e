/* kb_pos_length.c -- arc length along position curves and its inverse
 * (tables in kb_integrate.c). */
#include "length/kb_integrate.h"

/* Component j of P'(e) of a segment's coefficients cf (4, D). */
static inline double derivative(const double *cf, ptrdiff_t D, ptrdiff_t j, double e)
{
    return cf[D + j] + e * (2.0 * cf[2 * D + j] + 3.0 * e * cf[3 * D + j]);
}

/* |dX/du| = |P'(e)| de/du on segment seg of track tr: the norm summed
 * as it is, or where its square leaves the normal range (a speed above
 * about 1e150 or below 1e-145, whose square overflows or loses digits)
 * over its largest component. */
static double position_speed(const void *ctx, ptrdiff_t tr, ptrdiff_t seg, double u)
{
    const kb_curve *c = ctx;
    const ptrdiff_t D = c->dim, i = tr * c->n_seg + seg;
    const double *cf = c->coef + i * 4 * D;
    double e = u, de = 1.0, dde, sq = 0.0, big = 0.0;
    if (c->ease)
        kb_ease(u, c->ease[2 * i], c->ease[2 * i + 1], &e, &de, &dde);
    for (ptrdiff_t j = 0; j < D; j++) {
        const double d = derivative(cf, D, j, e);
        sq += d * d;
        big = fmax(big, fabs(d));
    }
    if ((sq <= 1e300 && sq >= 1e-290) || big == 0.0 || !isfinite(big))
        return sqrt(sq) * de;
    sq = 0.0;
    for (ptrdiff_t j = 0; j < D; j++) {
        const double d = derivative(cf, D, j, e) / big;
        sq += d * d;
    }
    return big * sqrt(sq) * de;
}

/* The largest of segment seg's derivative coefficients (1 where all are
 * zero): the minima below take them over it, as their squares and
 * products leave the doubles above about 1e154 and below 1e-154, while
 * where the speed's minima lie does not depend on its scale. */
static double derivative_scale(const kb_curve *c, const double *cf)
{
    const ptrdiff_t D = c->dim;
    double big = 0.0;
    for (ptrdiff_t j = D; j < 4 * D; j++)
        big = fmax(big, fabs(cf[j]));
    return big > 0.0 && isfinite(big) ? big : 1.0;
}

/* P'(e) . P''(e) of segment seg of track tr, with P'(e) = A + B e + C e^2,
 * over the square of derivative_scale (its sign and zeros are P'.P''s). */
static double position_slope(const void *ctx, ptrdiff_t tr, ptrdiff_t seg, double e)
{
    const kb_curve *c = ctx;
    const ptrdiff_t D = c->dim;
    const double *cf = c->coef + (tr * c->n_seg + seg) * 4 * D;
    const double k = 1.0 / derivative_scale(c, cf);
    double g = 0.0;
    for (ptrdiff_t j = 0; j < D; j++) {
        const double A = k * cf[D + j], B = 2.0 * k * cf[2 * D + j], C = 3.0 * k * cf[3 * D + j];
        g += (A + e * (B + e * C)) * (B + 2.0 * e * C);
    }
    return g;
}

/* The real roots in (0, 1) of a + b e + c e^2, ascending (the formula
 * without cancellation); returns their count. */
static int quadratic_roots(double a, double b, double c, double r[2])
{
    double x[2];
    int n = 0, kept = 0;
    if (c == 0.0) {
        if (b != 0.0)
            x[n++] = -a / b;
    } else if (b * b - 4.0 * a * c >= 0.0) {
        const double q = -0.5 * (b + copysign(sqrt(b * b - 4.0 * a * c), b));
        x[n++] = q / c;
        if (q != 0.0)
            x[n++] = a / q;
    }
    for (int j = 0; j < n; j++)
        if (x[j] > 0.0 && x[j] < 1.0)
            r[kept++] = x[j];
    if (kept == 2 && r[0] > r[1]) {
        const double t = r[0];
        r[0] = r[1];
        r[1] = t;
    }
    return kept;
}

/*
 * The local minima of |P'(e)| in (0, 1), among them every zero of the
 * speed (cusps; for D = 1 every turning point).  The slope P'.P'' is a
 * cubic in e, monotone between the zeros of its derivative
 * |P''|^2 + P'.P''', so each interval between them holds at most one
 * rising zero, which bisection finds to the last bit.
 */
static int position_minima(const void *ctx, ptrdiff_t tr, ptrdiff_t seg, double *out)
{
    const kb_curve *c = ctx;
    const ptrdiff_t D = c->dim;
    const double *cf = c->coef + (tr * c->n_seg + seg) * 4 * D;
    const double k = 1.0 / derivative_scale(c, cf);  /* see derivative_scale */
    double BB = 0.0, AC = 0.0, BC = 0.0, CC = 0.0;
    for (ptrdiff_t j = 0; j < D; j++) {
        const double A = k * cf[D + j], B = 2.0 * k * cf[2 * D + j], C = 3.0 * k * cf[3 * D + j];
        BB += B * B;
        AC += A * C;
        BC += B * C;
        CC += C * C;
    }
    double ends[4] = {0.0};
    const int n_mono = quadratic_roots(BB + 2.0 * AC, 6.0 * BC, 6.0 * CC, ends + 1) + 1;
    ends[n_mono] = 1.0;
    int n = 0;
    double g_lo = position_slope(ctx, tr, seg, 0.0);
    for (int k = 0; k < n_mono; k++) {
        const double g_hi = position_slope(ctx, tr, seg, ends[k + 1]);
        if (g_lo < 0.0 && g_hi >= 0.0)
            out[n++] = kb_rising_zero(position_slope, ctx, tr, seg, ends[k], ends[k + 1]);
        g_lo = g_hi;
    }
    return n;
}

/* The speed and domain views the tables take. */
static int views(const kb_curve *c, kb_speed *sp, kb_domain *dom)
{
    if (!c || !c->coef || !c->knots || c->n_seg < 1 || c->dim < 1 || c->n_tracks < 0)
        return 0;
    sp->fn = position_speed;
    sp->minima = position_minima;
    sp->ctx = c;
    sp->ease = c->ease;
    dom->n_tracks = c->n_tracks;
    dom->n_seg = c->n_seg;
    dom->knots = c->knots;
    dom->knots_stride = c->knots_stride;
    dom->extrap = c->extrap;
    return 1;
}

kb_status kb_pos_length_table(const kb_curve *c, kb_table *table, kb_error *err)
{
    kb_speed sp;
    kb_domain dom;
    if (!views(c, &sp, &dom) || !table)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    return kb_table_build(&sp, c->n_tracks, c->n_seg, table, err);
}

kb_status kb_pos_length(const kb_curve *c, const kb_table *table, const double *t,
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

kb_status kb_pos_time_at_length(const kb_curve *c, const kb_table *table, const double *s,
                                ptrdiff_t n_eval, ptrdiff_t s_stride, ptrdiff_t track_begin,
                                ptrdiff_t track_end, double *out, kb_error *err)
{
    kb_speed sp;
    kb_domain dom;
    if (!views(c, &sp, &dom))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    return kb_table_time_at(&sp, &dom, table, s, n_eval, s_stride, track_begin, track_end,
                            out, err);
}
