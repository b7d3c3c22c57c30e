/* kb_pos_length.c -- arc length along position curves and its inverse
 * (tables in kb_integrate.c). */
#include "kb_integrate.h"

/* |dX/du| = |P'(e)| de/du on segment seg of track tr. */
static double position_speed(const void *ctx, ptrdiff_t tr, ptrdiff_t seg, double u)
{
    const kb_curve *c = ctx;
    const ptrdiff_t D = c->dim, i = tr * c->n_seg + seg;
    const double *cf = c->coef + i * 4 * D;
    double e = u, de = 1.0, dde, sq = 0.0;
    if (c->ease)
        kb_ease(u, c->ease[2 * i], c->ease[2 * i + 1], &e, &de, &dde);
    for (ptrdiff_t j = 0; j < D; j++) {
        const double d = cf[D + j] + e * (2.0 * cf[2 * D + j] + 3.0 * e * cf[3 * D + j]);
        sq += d * d;
    }
    return sqrt(sq) * de;
}

/* The speed and domain views the tables take. */
static int views(const kb_curve *c, kb_speed *sp, kb_domain *dom)
{
    if (!c || !c->coef || !c->knots || c->n_seg < 1 || c->dim < 1 || c->n_tracks < 0)
        return 0;
    sp->fn = position_speed;
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
