/* kb_rot_angle.c -- the rotation angle swept along a squad spline, and its
 * inverse, for constant angular speed. */
#include "kb_integrate.h"
#include "kb_locate.h"
#include "kb_squad.h"

/* |w| per unit of the segment parameter u: 2 |dS/de| de/du for unit S. */
static double angular_speed(const void *ctx, ptrdiff_t tr, ptrdiff_t seg, double u)
{
    const kb_rot_curve *c = ctx;
    const ptrdiff_t i = tr * c->n_seg + seg;
    double e = u, de = 1.0, dde, J[3][4];
    if (c->ease)
        kb_ease(u, c->ease[2 * i], c->ease[2 * i + 1], &e, &de, &dde);
    squad_jet(c->ctrl + 16 * i, c->logs + 6 * i, e, J);
    return 2.0 * sqrt(kb_qdot(J[1], J[1])) * de;
}

static kb_speed speed_of(const kb_rot_curve *c, ptrdiff_t tr, ptrdiff_t seg)
{
    kb_speed sp = {angular_speed, c, tr, seg, {-1.0, -1.0}};
    kb_speed_set_ease(&sp, c->ease ? c->ease + 2 * (tr * c->n_seg + seg) : NULL);
    return sp;
}

kb_status kb_rot_angle_table(const kb_rot_curve *c, ptrdiff_t track_begin,
                             ptrdiff_t track_end, double *cum, kb_error *err)
{
    if (!c || !c->ctrl || !c->logs || !cum || c->n_seg < 1 || track_begin < 0 ||
        track_end > c->n_tracks || track_begin > track_end)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t tr = track_begin; tr < track_end; tr++) {
        double *row = cum + tr * (c->n_seg + 1);
        row[0] = 0.0;
        for (ptrdiff_t s = 0; s < c->n_seg; s++) {
            kb_speed sp = speed_of(c, tr, s);
            row[s + 1] = row[s] + kb_segment_total(&sp);
        }
    }
    return kb_ok(err);
}

/* Angular speed per unit time at an end of the domain (0: start). */
static double end_rate(const kb_rot_curve *c, const double *k, ptrdiff_t tr, int at_end)
{
    const ptrdiff_t seg = at_end ? c->n_seg - 1 : 0;
    return angular_speed(c, tr, seg, at_end ? 1.0 : 0.0) / (k[seg + 1] - k[seg]);
}

static double angle_at(const kb_rot_curve *c, const double *k, const double *cum,
                       ptrdiff_t tr, double t)
{
    const ptrdiff_t S = c->n_seg;
    const double t0 = k[0], t1 = k[S], span = t1 - t0;
    double turns = 0.0;
    if (c->extrap == KB_EXTRAP_PERIODIC && (t < t0 || t > t1)) {
        turns = floor((t - t0) / span);
        t = fmin(fmax(t - turns * span, t0), t1);
    }
    ptrdiff_t hint = 0;
    kb_loc L;
    locate(k, S, c->extrap, t, &hint, &L);
    kb_speed sp = speed_of(c, tr, L.seg);
    double a = cum[L.seg] + kb_segment_partial(&sp, L.u, cum[L.seg + 1] - cum[L.seg]);
    if (L.outside)
        a += L.excess * end_rate(c, k, tr, L.excess > 0.0);
    return turns * cum[S] + a;
}

kb_status kb_rot_angle(const kb_rot_curve *c, const double *cum, const double *t,
                       ptrdiff_t n_eval, ptrdiff_t t_stride, ptrdiff_t track_begin,
                       ptrdiff_t track_end, double *out, kb_error *err)
{
    if (!c || !c->ctrl || !c->logs || !cum || !out)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    const kb_curve view = {c->n_tracks, c->n_seg, 1, c->knots, c->knots_stride, c->ctrl,
                           c->ease, c->extrap};
    kb_status s = kb_curve_validate(&view, 0, t, n_eval, t_stride, err);
    if (s != KB_OK)
        return s;
    if (track_begin < 0 || track_end > c->n_tracks || track_begin > track_end)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t tr = track_begin; tr < track_end; tr++) {
        const double *k = c->knots + tr * c->knots_stride;
        const double *row = cum + tr * (c->n_seg + 1);
        for (ptrdiff_t i = 0; i < n_eval; i++)
            out[tr * n_eval + i] = angle_at(c, k, row, tr, t[tr * t_stride + i]);
    }
    return kb_ok(err);
}

static double time_at(const kb_rot_curve *c, const double *k, const double *cum,
                      ptrdiff_t tr, double s)
{
    const ptrdiff_t S = c->n_seg;
    const double total = cum[S], t0 = k[0], t1 = k[S];
    double shift = 0.0;
    if (s < 0.0 || s > total) {
        if (c->extrap == KB_EXTRAP_PERIODIC && total > 0.0) {
            const double turns = floor(s / total);
            s = fmin(fmax(s - turns * total, 0.0), total);
            shift = turns * (t1 - t0);
        } else if (c->extrap == KB_EXTRAP_LINEAR) {
            const int after = s > total;
            const double rate = end_rate(c, k, tr, after);
            if (rate > 0.0)
                return after ? t1 + (s - total) / rate : t0 + s / rate;
            return after ? t1 : t0;
        } else {
            return s > total ? t1 : t0;  /* clamp, and error within tolerance */
        }
    }
    /* the ends exactly, whatever rests next to them */
    if (s <= 0.0)
        return t0 + shift;
    if (s >= total)
        return t1 + shift;
    const ptrdiff_t seg = kb_table_segment(cum, S, s);
    kb_speed sp = speed_of(c, tr, seg);
    const double u = kb_segment_inverse(&sp, s - cum[seg], cum[seg + 1] - cum[seg]);
    const double t = u >= 1.0 ? k[seg + 1] : k[seg] + u * (k[seg + 1] - k[seg]);
    return t + shift;
}

kb_status kb_rot_time_at_angle(const kb_rot_curve *c, const double *cum, const double *s,
                               ptrdiff_t n_eval, ptrdiff_t s_stride, ptrdiff_t track_begin,
                               ptrdiff_t track_end, double *out, kb_error *err)
{
    if (!c || !c->ctrl || !c->logs || !cum || !out || (s_stride != 0 && s_stride != n_eval) ||
        track_begin < 0 || track_end > c->n_tracks || track_begin > track_end ||
        (n_eval > 0 && !s))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t tr = track_begin; tr < track_end; tr++) {
        const double total = cum[tr * (c->n_seg + 1) + c->n_seg];
        for (ptrdiff_t i = 0; i < n_eval; i++) {
            const double v = s[tr * s_stride + i];
            if (!isfinite(v))
                return kb_fail(err, KB_ENONFINITE, KB_ARG_T, s_stride ? tr : -1, i);
            if (c->extrap == KB_EXTRAP_ERROR &&
                (v < -1e-12 * total || v > total * (1.0 + 1e-12)))
                return kb_fail(err, KB_EDOMAIN, KB_ARG_T, tr, i);
        }
    }
    for (ptrdiff_t tr = track_begin; tr < track_end; tr++) {
        const double *k = c->knots + tr * c->knots_stride;
        const double *row = cum + tr * (c->n_seg + 1);
        for (ptrdiff_t i = 0; i < n_eval; i++)
            out[tr * n_eval + i] = time_at(c, k, row, tr, s[tr * s_stride + i]);
    }
    return kb_ok(err);
}
