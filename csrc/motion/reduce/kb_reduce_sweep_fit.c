/* kb_reduce_sweep_fit.c -- one segment of the sweep (kb_reduce_sweep.c says how): a
 * candidate end's tangents fitted on the models with the lookahead; the real check. */
#include <float.h>
#include <stdlib.h>

#include "motion/reduce/reduce_internal.h"

static void hermite(double u, double h[4])
{
    double u2 = u * u, u3 = u2 * u;
    h[0] = 2.0 * u3 - 3.0 * u2 + 1.0;
    h[1] = u3 - 2.0 * u2 + u;
    h[2] = -2.0 * u3 + 3.0 * u2;
    h[3] = u3 - u2;
}

/* 3x3 inverse (row-major) by cofactors; 0 where singular or not finite.  Where
 * the determinant overflows or underflows (entries of dt^2, frames 1e60 or 1e-60 s
 * apart), the inverse of a / max |a|, divided again. */
static int inverse3(const double *a, double *inv)
{
    double m = 0.0, b[9];
    for (int i = 0; i < 9; i++)
        m = fmax(m, fabs(a[i]));
    for (int scaled = 0; scaled < 2; scaled++) {
        const double by = scaled ? m : 1.0;
        for (int i = 0; i < 9; i++)
            b[i] = a[i] / by;
        double c[9] = {b[4] * b[8] - b[5] * b[7], b[5] * b[6] - b[3] * b[8],
                       b[3] * b[7] - b[4] * b[6], b[2] * b[7] - b[1] * b[8],
                       b[0] * b[8] - b[2] * b[6], b[1] * b[6] - b[0] * b[7],
                       b[1] * b[5] - b[2] * b[4], b[2] * b[3] - b[0] * b[5],
                       b[0] * b[4] - b[1] * b[3]};
        double det = b[0] * c[0] + b[1] * c[1] + b[2] * c[2];
        int ok = fabs(det) > 0.0 && isfinite(det);
        for (int i = 0; i < 9; i++) {
            inv[i] = c[3 * (i % 3) + i / 3] / det / by;
            ok &= isfinite(inv[i]);
        }
        if (ok)
            return 1;
    }
    return 0;
}

/* The 3x3 row-major a times v, or a's transpose times v where `transposed`. */
static void mat_vec(const double *a, const double *v, double *out, int transposed)
{
    const int row = transposed ? 1 : 3, col = transposed ? 3 : 1;
    for (int i = 0; i < 3; i++)
        out[i] = a[row * i] * v[0] + a[row * i + col] * v[1] + a[row * i + 2 * col] * v[2];
}

/* The Jacobian of q_s exp(v) in the half-angle convention: the body
 * log-space tangent is jr_half(v) v'. */
static void jr_half(const double *v, double *J)
{
    double p[3] = {2.0 * v[0], 2.0 * v[1], 2.0 * v[2]};
    double th2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2], th = sqrt(th2), a, b;
    double K[9] = {0.0, -p[2], p[1], p[2], 0.0, -p[0], -p[1], p[0], 0.0}, KK[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            KK[3 * i + j] = K[3 * i] * K[j] + K[3 * i + 1] * K[3 + j] + K[3 * i + 2] * K[6 + j];
    if (th < 1e-6) {
        a = 0.5;
        b = 1.0 / 6.0;
    } else {
        a = (1.0 - cos(th)) / th2;
        b = (th - sin(th)) / (th2 * th);
    }
    for (int i = 0; i < 9; i++)
        J[i] = (i % 4 == 0 ? 1.0 : 0.0) - a * K[i] + b * KK[i];
}

/* Frame f's value in channel ch's models: its rotation's log relative to
 * the last key (into w->logs at f), or its translation. */
static const double *value_at(sweep *w, ptrdiff_t f, int ch)
{
    if (ch == 1)
        return w->jt->translations + 3 * f;
    double *v = w->logs + 3 * f;
    short_log(w->q + 4 * w->s, w->q + 4 * f, v);
    return v;
}

/* The inverse of the Jacobian of the log map (jr_half) at frame f's log
 * into inv; 0 where singular. */
static int jinv_at(sweep *w, ptrdiff_t f, double *inv)
{
    double J[9];
    jr_half(value_at(w, f, 0), J);
    return inverse3(J, inv);
}

/* A channel's cubic Hermite model of the frames strictly between frames a
 * and b with one of its two tangents fitted: the segment's (at b, the last
 * key's fixed at a) or the lookahead's (at a, the frames' own fixed at b). */
typedef struct {
    ptrdiff_t a, b;
    int ch, fit_at_b;
    const double *va, *vb;     /* the values at a (NULL: zero, a log at the last key) and b */
    const double *d;           /* the fixed tangent, per time */
} model;

/* A row's radius in apart: the tolerance r, grown (see there). */
KB_INLINE double radius(const double *row, double r)
{
    return r + 1e-9 * (fabs(row[0]) + fabs(row[1]) + fabs(row[2]) + r);
}

/* Whether no tangent v brings both rows i and j within tolerance r (gj: j's radius):
 * the v with |res_i - c_i v| <= gi form a ball about res_i / c_i of radius gi / |c_i|,
 * and the two balls do not meet.  The radii grow by far more than residuals_within's
 * rounding (1e-16 relative, d2's underflow where r >= 1e-100): no frames it passes. */
KB_INLINE int apart(const double *ri, const double *rj, double r, double gj)
{
    double gi = radius(ri, r), d2 = 0.0;
    for (int c = 0; c < 3; c++) {
        double d = rj[3] * ri[c] - ri[3] * rj[c];
        d2 += d * d;
    }
    double reach = gi * fabs(rj[3]) + gj * fabs(ri[3]);
    /* and d2 well above underflow and finite, so that its own rounding is relative */
    return d2 > reach * reach * (1.0 + 1e-6) && d2 > 1e-290 && d2 <= DBL_MAX;
}

/* Row i of a model's residuals (frame a + 1 + i's): ta the time at a, dt
 * the model's span, k its values at a and b and its fixed tangent. */
KB_INLINE void model_row(sweep *w, const model *md, double ta, double dt, const double *k,
                         ptrdiff_t i, double *row)
{
    const double *v = value_at(w, md->a + 1 + i, md->ch);
    double h[4];
    hermite((w->jt->times[md->a + 1 + i] - ta) / dt, h);
    const double hd = (md->fit_at_b ? h[1] : h[3]) * dt;  /* the fixed tangent's term */
    for (int c = 0; c < 3; c++)
        row[c] = v[c] - h[0] * k[c] - h[2] * k[3 + c] - hd * k[6 + c];
    row[3] = (md->fit_at_b ? h[3] : h[1]) * dt;
}

/* The model's residuals into res (row i, frame a + 1 + i's: the residual before the
 * fitted tangent's term, and its coefficient); 0, some rows left out, where two frames
 * are apart (no tangent fits both within r) from the one where that term peaks. */
static int model_residuals(sweep *w, const model *md, double r, double *res)
{
    const ptrdiff_t m = md->b - md->a, n = m - 1;
    if (n < 1)
        return 1;
    const double ta = w->jt->times[md->a], dt = w->jt->times[md->b] - ta;
    double k[9], anchor[4];
    for (int c = 0; c < 3; c++) {
        k[c] = md->va ? md->va[c] : 0.0;
        k[3 + c] = md->vb[c];
        k[6 + c] = md->d[c];
    }
    ptrdiff_t ia = (md->fit_at_b ? 2 * m + 1 : m + 1) / 3 - 1;
    ia = ia < 0 ? 0 : ia > n - 1 ? n - 1 : ia;
    model_row(w, md, ta, dt, k, ia, anchor);
    memcpy(res + 4 * ia, anchor, sizeof anchor);
    const double ga = radius(anchor, r);
    const int look = r >= 1e-100 && kb_reduce_shortcuts;
    for (ptrdiff_t odd = 0; odd < 2; odd++)
        for (ptrdiff_t i = odd; i < n; i += 2) {
            if (i == ia)
                continue;
            model_row(w, md, ta, dt, k, i, res + 4 * i);
            if (look && apart(res + 4 * i, anchor, r, ga))
                return 0;
        }
    return 1;
}

/* The normal-equation sums (rhs, *nn) of n residuals (model_residuals')
 * for the fitted tangent. */
static void tangent_sums(const double *res, ptrdiff_t n, double *rhs, double *nn)
{
    for (ptrdiff_t i = 0; i < n; i++, res += 4) {
        for (int c = 0; c < 3; c++)
            rhs[c] += res[3] * res[c];
        *nn += res[3] * res[3];
    }
}

/* The virtual next segment's frames after e: SWEEP_LOOK times this
 * segment's, at least SWEEP_LOOK_LEAST, not past the last frame nor across
 * a hold's edge (from held steps to moving ones or back) in channel ch. */
static ptrdiff_t look_frames(const sweep *w, ptrdiff_t e, int ch)
{
    ptrdiff_t m = (ptrdiff_t)ceil(SWEEP_LOOK * (double)(e - w->s));
    if (m < SWEEP_LOOK_LEAST)
        m = SWEEP_LOOK_LEAST;
    if (m > w->F - 1 - e)
        m = w->F - 1 - e;
    if (e + 1 < w->F && m > w->run[ch][e + 1] - e)  /* not across a hold's edge */
        m = w->run[ch][e + 1] - e;
    return m;
}

/* Whether n frames' residuals (res: each a model's residual before the
 * fitted tangent's term, and that term's coefficient), less the term with
 * tangent v, are all within sqrt(lim) (none NaN). */
static int residuals_within(const double *res, ptrdiff_t n, const double *v, double lim)
{
    for (ptrdiff_t i = 0; i < n; i++, res += 4) {
        double d2 = 0.0;
        for (int c = 0; c < 3; c++) {
            double d = res[c] - res[3] * v[c];
            d2 += d * d;
        }
        if (!(d2 <= lim))
            return 0;
    }
    return 1;
}

/* The lookahead after e added to channel ch's sums rhs, *n for the tangent at e: the
 * frames e .. e + look_frames, halved until a cubic fitting that tangent alone fits
 * them within the tolerance; none below 2 frames or where the Jacobian at their end
 * is singular.  The rotation's are log-space slopes relative to the last key, its
 * model's end tangent the frames' own through that Jacobian. */
static void add_lookahead(sweep *w, ptrdiff_t e, int ch, double *rhs, double *n)
{
    const double tol = ch == 0 ? 0.5 * w->tol[0] : w->tol[1], lim = tol * tol;
    for (ptrdiff_t m = look_frames(w, e, ch); m >= 2; m /= 2) {
        const ptrdiff_t b = e + m;
        double db[3], jbinv[9], lr[3] = {0.0, 0.0, 0.0}, ln = 0.0, tl[3];
        model md = {e, b, ch, 0, value_at(w, e, ch), value_at(w, b, ch), db};
        if (ch == 1)
            memcpy(db, w->d[1] + 3 * b, sizeof db);
        else if (jinv_at(w, b, jbinv))
            mat_vec(jbinv, w->d[0] + 3 * b, db, 0);
        else
            return;
        if (!model_residuals(w, &md, sqrt(lim), w->res_look))
            continue;
        tangent_sums(w->res_look, m - 1, lr, &ln);
        for (int c = 0; c < 3; c++)
            tl[c] = lr[c] / ln;
        if (residuals_within(w->res_look, m - 1, tl, lim)) {
            for (int c = 0; c < 3; c++)
                rhs[c] += lr[c];
            *n += ln;
            return;
        }
    }
}

/* Channel ch's tangent at e by least squares on its model (the rotation's in log
 * space, through the Jacobian at e), pulled towards the frames' own; 0 where a
 * frame's model residual then exceeds the tolerance (twice the log's) or not finite. */
static int fit_channel(sweep *w, ptrdiff_t e, fit *r, int ch)
{
    double *tan = r->t[ch];
    const double *d = w->d[ch] + 3 * e;
    if (!w->fits[ch]) {
        memcpy(tan, d, 3 * sizeof(double));
        return 1;
    }
    const double *t = w->jt->times, *x = w->jt->translations;
    const ptrdiff_t s = w->s;
    const double dt = t[e] - t[s], lam = SWEEP_ALPHA * dt * dt;
    /* the rotation's residual is a log: half the angle */
    const double tol = ch == 0 ? 0.5 * w->tol[0] : w->tol[1], lim = tol * tol;
    model md = {s, e, ch, 1, ch ? x + 3 * s : NULL, value_at(w, e, ch), w->t_s[ch]};
    if (!model_residuals(w, &md, sqrt(lim), w->res_seg))
        return 0;
    if (ch == 0 && !jinv_at(w, e, r->jinv))
        return 0;
    double rhs[3], n = ch ? lam : 0.0, slope[3];
    for (int c = 0; c < 3; c++)
        rhs[c] = ch ? lam * d[c] : 0.0;
    tangent_sums(w->res_seg, e - s - 1, rhs, &n);
    add_lookahead(w, e, ch, rhs, &n);
    if (ch == 1) {
        for (int c = 0; c < 3; c++)
            tan[c] = rhs[c] / n;
    } else {  /* the normal equations of the tangent, whose slope is jinv tan */
        const double *J = r->jinv;
        double b[3], normal[9];
        for (int i = 0; i < 9; i++) {
            const int p = i / 3, q = i % 3;
            double jtj = J[p] * J[q] + J[3 + p] * J[3 + q] + J[6 + p] * J[6 + q];
            normal[i] = n * jtj + (p == q ? lam : 0.0);
        }
        mat_vec(J, rhs, b, 1);
        for (int c = 0; c < 3; c++)
            b[c] += lam * d[c];
        if (!inverse3(normal, r->ninv))
            return 0;
        mat_vec(r->ninv, b, tan, 0);
        r->lam = lam;
    }
    if (!isfinite(tan[0] + tan[1] + tan[2]))
        return 0;
    memcpy(slope, tan, sizeof slope);
    if (ch == 0)  /* the log-space slope at e, per time */
        mat_vec(r->jinv, tan, slope, 0);
    return residuals_within(w->res_seg, e - s - 1, slope, lim);
}

/* Both channels' fit of the segment from the last key to e, on the models. */
int kb_sw_fit_model(sweep *w, ptrdiff_t e, fit *r)
{
    return fit_channel(w, e, r, 1) && fit_channel(w, e, r, 0);
}

/* Channel ch's segment from the last key to e with tangents t_s and tan, as
 * kb_reduce_rebuild builds it (the rotation's the same bits up to one sign), at the
 * frames strictly between: values into w->curve_q or w->curve_x (row j frame s + j's,
 * each independent of the others), errors into w->angle or w->distance; *sign_e the
 * sign the rotation's gives frame e.  0 where it cannot be built. */
static int real_segment(sweep *w, ptrdiff_t e, int ch, const double *tan, double *sign_e)
{
    const kb_reduce_joint *jt = w->jt;
    const ptrdiff_t s = w->s, m = e - s + 1;
    double kt[2] = {jt->times[s], jt->times[e]}, given[6], zero[2] = {0.0, 0.0};
    double tin[6], tout[6], coef[12], kv[8], uq[8], chord[3], tchord[3], dt[1], seg[KB_ROT_SEG];
    memcpy(given, w->t_s[ch], 3 * sizeof(double));
    memcpy(given + 3, tan, 3 * sizeof(double));
    kb_param zeros = {zero, 2}, none = {NULL, 0}, times = {kt, 2};
    kb_error err;
    /* the frames between as a joint of their own: kb_reduce_errors' errors,
     * whose check of the frames s .. e always passed at entry */
    kb_reduce_joint view = {e - s - 1, jt->times + s + 1, jt->rotations + 4 * (s + 1),
                            jt->translations + 3 * (s + 1), jt->angle_tolerance,
                            jt->distance_tolerance};
    if (ch == 1) {
        memcpy(kv, jt->translations + 3 * s, 3 * sizeof(double));
        memcpy(kv + 3, jt->translations + 3 * e, 3 * sizeof(double));
        kb_tcb_keys k = {.n_tracks = 1, .n_keys = 2, .dim = 3, .times = times, .values = kv,
                         .tension = zeros, .continuity = zeros, .bias = zeros,
                         .ease_from = zeros, .ease_to = zeros, .start_tangent = none,
                         .end_tangent = none, .timing = KB_TIMING_KB, .ends = KB_ENDS_NATURAL,
                         .given_in = given, .given_out = given};
        kb_curve c = {.n_tracks = 1, .n_seg = 1, .dim = 3, .knots = kt, .knots_stride = 2,
                      .coef = coef, .ease = NULL, .extrap = KB_EXTRAP_CLAMP};
        if (kb_tcb_build(&k, tin, tout, coef, NULL, &err) != KB_OK ||
            kb_curve_eval(&c, 0, jt->times + s + 1, m - 2, m - 2, 0, 1, w->curve_x + 3, NULL,
                          &err) != KB_OK)
            return 0;
        kb_reduce_errors_unchecked(&view, NULL, w->curve_x + 3, NULL, w->distance + 1);
        return 1;
    }
    unsigned char kind[1];
    for (int c = 0; c < 4; c++) {
        kv[c] = w->sign_s * jt->rotations[4 * s + c];
        kv[4 + c] = jt->rotations[4 * e + c];
    }
    kb_rot_keys k = {.n_tracks = 1, .n_keys = 2, .times = times, .quats = kv,
                     .tension = zeros, .continuity = zeros, .bias = zeros, .ease_from = zeros,
                     .ease_to = zeros, .start_omega = none, .end_omega = none,
                     .timing = KB_TIMING_KB, .ends = KB_ENDS_NATURAL, .chords = NULL,
                     .given_in = given, .given_out = given};
    kb_rot_chords chords = {uq, chord, tchord, dt};
    kb_rot_chords_of(&k, &chords);
    ptrdiff_t hint = 0;
    for (ptrdiff_t j = 0; j < m; j++)
        locate(kt, 1, KB_EXTRAP_CLAMP, jt->times[s + j], &hint, &w->loc[j]);
    if (kb_rot_build_segments(&k, &chords, w->loc, m, tin, tout, seg, kind, &err) != KB_OK)
        return 0;
    kb_rot_curve c = {.n_tracks = 1, .n_seg = 1, .knots = kt, .knots_stride = 2, .seg = seg,
                      .ease = NULL, .extrap = KB_EXTRAP_CLAMP, .kind = kind};
    kb_rot_values_at(&c, jt->times + s + 1, w->loc + 1, m - 2, w->curve_q + 4);
    /* the unit key e is frame e divided by its norm, negated or not:
     * compare the signs of their largest component */
    const double *src = jt->rotations + 4 * e;
    int big = 0;
    for (int c = 1; c < 4; c++)
        if (fabs(src[c]) > fabs(src[big]))
            big = c;
    *sign_e = (uq[4 + big] < 0.0) == (src[big] < 0.0) ? 1.0 : -1.0;
    kb_reduce_errors_unchecked(&view, w->curve_q + 4, NULL, w->angle + 1, NULL);
    return 1;
}

/* The real check of a fitted end e (r's rotation tangent perhaps moved by one
 * Gauss-Newton step on the real log residual): 1 where every frame of the segment
 * is within the tolerances on kb_reduce_rebuild's splines.  *sign_e: real_segment's. */
int kb_sw_check_real(sweep *w, ptrdiff_t e, fit *r, double *sign_e)
{
    const ptrdiff_t s = w->s, m = e - s + 1;
    *sign_e = 1.0;
    if (w->checks[1] && (!real_segment(w, e, 1, r->t[1], sign_e) ||
                         !(kb_rd_worst(w->distance + 1, m - 2) <= w->tol[1])))
        return 0;
    if (!w->checks[0])
        return 1;
    for (int step = 0;; step++) {
        if (!real_segment(w, e, 0, r->t[0], sign_e))
            return 0;
        double worst = kb_rd_worst(w->angle + 1, m - 2);  /* the frames between */
        if (worst <= w->tol[0])
            return 1;
        if (step == 1 || !w->fits[0] || !(worst <= 2.0 * w->tol[0]))
            return 0;
        /* one Gauss-Newton step: the frames' logs from the curve's, relative
         * to the start key, through the model's Jacobian */
        const double *t = w->jt->times, dt = t[e] - t[s];
        const double *q0 = w->q + 4 * s;
        double acc[3] = {0.0, 0.0, 0.0}, rhs[3], step_v[3];
        for (ptrdiff_t f = s + 1; f < e; f++) {
            double h[4], v[3];
            hermite((t[f] - t[s]) / dt, h);
            const double *lf = value_at(w, f, 0);
            short_log(q0, w->curve_q + 4 * (f - s), v);
            for (int c = 0; c < 3; c++)
                acc[c] += h[3] * dt * (lf[c] - v[c]);
        }
        mat_vec(r->jinv, acc, rhs, 1);
        for (int c = 0; c < 3; c++)
            rhs[c] += r->lam * (w->d[0][3 * e + c] - r->t[0][c]);
        mat_vec(r->ninv, rhs, step_v, 0);
        for (int c = 0; c < 3; c++)
            r->t[0][c] += step_v[c];
        if (!isfinite(r->t[0][0] + r->t[0][1] + r->t[0][2]))
            return 0;
    }
}
