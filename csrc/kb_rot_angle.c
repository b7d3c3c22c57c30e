/* kb_rot_angle.c -- the rotation angle swept along a squad spline and its
 * inverse, for constant angular speed (tables in kb_integrate.c). */
#include "kb_integrate.h"
#include "kb_cumulative.h"

/* |w| per unit of the segment parameter u: 2 |dS/de| de/du for unit S. */
static double angular_speed(const void *ctx, ptrdiff_t tr, ptrdiff_t seg, double u)
{
    const kb_rot_curve *c = ctx;
    const ptrdiff_t i = tr * c->n_seg + seg;
    double e = u, de = 1.0, dde, J[3][4];
    if (c->ease)
        kb_ease(u, c->ease[2 * i], c->ease[2 * i + 1], &e, &de, &dde);
    rot_segment_jet(c->kind ? c->kind[i] : KB_SEG_SQUAD, c->ctrl + 16 * i, c->logs + 12 * i, e,
                    J);
    return 2.0 * sqrt(kb_qdot(J[1], J[1])) * de;
}

/* The speed and domain views the tables take. */
static int views(const kb_rot_curve *c, kb_speed *sp, kb_domain *dom)
{
    if (!c || !c->ctrl || !c->logs || !c->knots || c->n_seg < 1 || c->n_tracks < 0)
        return 0;
    sp->fn = angular_speed;
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
