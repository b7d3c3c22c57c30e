/*
 * kb_reduce_sweep.c -- tangent keys (C1 Hermite keys, kb_reduce_joint's
 * tangent_keys) of one joint in a single forward sweep: from the last key,
 * whose tangent is fixed, the farthest frame that can end a segment within
 * the tolerances, its tangent fitted in closed form.
 *
 * A tangent key's segment is shaped by its two keys and their tangents
 * alone, so each segment is settled once, left to right, and both channels
 * share its keys.  From the last key s:
 *   - a candidate end e is fitted (fit_model): its translation tangent by
 *     linear least squares on the segment's exact cubic Hermite; its
 *     rotation tangent likewise on the segment taken as a cubic Hermite in
 *     log space relative to key s (the logs cached per start key), the
 *     fitted log-space slope at e turned into the key's tangent by the
 *     exact 3x3 Jacobian of the log map.  The fit also weighs a virtual
 *     next segment (a lookahead, so that the tangent suits the segment
 *     after it as well) ending on the frames' value and tangent (see
 *     prepare): 3 times this one (at least 2 frames), not across a hold's
 *     edge, halved until a cubic with its start tangent alone fitted keeps
 *     its frames within the tolerance (none below 2 frames: a step, a
 *     kink or a bounce ahead then pulls no tangent), and pulls weakly
 *     (weight SWEEP_ALPHA dt^2) towards the frames' own tangent at e;
 *   - the candidate passes where every frame of the segment is within the
 *     tolerances on these models (for the rotation twice the log-space
 *     residual, about the angle); a model two of whose frames no tangent
 *     fits together fails without its fit, most after a few frames
 *     (model_residuals), as the fit would;
 *   - the search starts at the previous segment's length, doubles until a
 *     candidate fails, then bisects, on the models alone;
 *   - the chosen end is then checked once on the real splines, as
 *     kb_reduce_rebuild evaluates them (check_real: the same segment
 *     construction, squad or the cumulative cubic, and the same errors as
 *     kb_reduce_errors'), with at most one Gauss-Newton step on the rotation
 *     where it is off by at most twice the tolerance; where it still fails,
 *     the end is bisected down on the model and the real splines together.
 * An end inside a hold of every channel fitted, the hold begun after the
 * last key, moves back to the hold's first frame where that segment passes
 * too (a turn between two holds then keys the holds' edges, zero
 * tangents).  A segment to the next frame has no frame to fail and always
 * ends the search; a key whose neighbours are both the frames beside it
 * shapes no frame, and takes the Fritsch-Butland tangent at the end (as
 * a fitted one there can spin the curve
 * between frames).  The real check decides every key, so every frame is within the
 * tolerances by the splines kb_reduce_rebuild builds from the result.
 */
#include <float.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kbspline/kbspline.h"
#include "motion/reduce/reduce_internal.h"
#include "spline/kb_locate.h"
#include "rotation/kb_rot_chords.h"
#include "quat/kb_quat.h"

#define SWEEP_ALPHA 0.006      /* the pull towards the frames' tangent, times dt^2 */
#define SWEEP_LOOK 3.0         /* the virtual next segment, in this one's frames, at most */
#define SWEEP_LOOK_LEAST 2     /* ... and at least this many */
#define SWEEP_FIRST_GUESS 4    /* the first segment's first candidate length */

typedef struct {
    const kb_reduce_joint *jt;
    ptrdiff_t F;
    double angle_tol, distance_tol;
    int rot_fit, tr_fit;       /* channels the fit shapes: finite tolerance, not constant */
    int rot_check, tr_check;   /* channels the real check measures: finite tolerance */
    double *q;                 /* (F, 4) unit frames */
    double *dq, *dx;           /* (F, 3) the frames' tangents (central differences) */
    double *logs;              /* (F, 3) log(q_s* q_f), short arc, where logs_of[f] is s */
    ptrdiff_t *logs_of;        /* (F,) the last key frame f's log is relative to (-1: none) */
    double *jinv;              /* (F, 9) jinv_at's, where jinv_of[f] is s */
    ptrdiff_t *jinv_of;
    double *curve_q, *curve_x, *angle, *distance;  /* (F, 4), (F, 3), (F,), (F,) */
    kb_loc *loc;               /* (F,) */
    /* (F, 4) scratch, a model's residual before the fitted tangent's term
     * and that term's coefficient per frame, so that its check after the
     * fit takes no Hermite basis again: the segment's and the lookahead's */
    double *res_seg, *res_look;
    ptrdiff_t *run_q, *run_x;  /* (F,) the last frame g >= f with held the same over f..g */
    ptrdiff_t *hs_q, *hs_x;    /* (F,) the first frame of the run of frames equal to frame f */
    /* the last key: its frame, tangents and the sign kb_reduce_rebuild's
     * rotation spline gives its quaternion (each key on its predecessor's
     * side, from the first key as given) */
    ptrdiff_t s;
    double tq_s[3], tx_s[3], sign_s;
} sweep;

/* A candidate end's fit: its tangents, and what a Gauss-Newton step on
 * the rotation needs (the normal matrix, the inverse Jacobian at the
 * segment's log, the pull's weight). */
typedef struct {
    double tq[3], tx[3];
    double normal[9], jinv[9], lam;
} fit;

static void hermite(double u, double h[4])
{
    double u2 = u * u, u3 = u2 * u;
    h[0] = 2.0 * u3 - 3.0 * u2 + 1.0;
    h[1] = u3 - 2.0 * u2 + u;
    h[2] = -2.0 * u3 + 3.0 * u2;
    h[3] = u3 - u2;
}

/* inverse3's plain cofactors (see there), inlined into it. */
KB_INLINE int inverse3_plain(const double *a, double *inv)
{
    double c[9] = {a[4] * a[8] - a[5] * a[7], a[5] * a[6] - a[3] * a[8],
                   a[3] * a[7] - a[4] * a[6], a[2] * a[7] - a[1] * a[8],
                   a[0] * a[8] - a[2] * a[6], a[1] * a[6] - a[0] * a[7],
                   a[1] * a[5] - a[2] * a[4], a[2] * a[3] - a[0] * a[5],
                   a[0] * a[4] - a[1] * a[3]};
    double det = a[0] * c[0] + a[1] * c[1] + a[2] * c[2];
    if (!(fabs(det) > 0.0) || !isfinite(det))
        return 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            inv[3 * i + j] = c[3 * j + i] / det;
    return 1;
}

/* 3x3 inverse (row-major) by cofactors; 0 where singular or not finite.
 * Where the determinant (cubic in the entries) overflows or underflows,
 * as the normal matrices' entries of dt^2 do for frames 1e60 or 1e-60 s
 * apart, the inverse of the matrix divided by its largest entry, so
 * divided again; elsewhere the plain cofactors, bit for bit. */
static int inverse3(const double *a, double *inv)
{
    if (inverse3_plain(a, inv))
        return 1;
    double m = 0.0, b[9];
    for (int i = 0; i < 9; i++)
        m = fmax(m, fabs(a[i]));
    if (!(m > 0.0) || !isfinite(m))
        return 0;
    for (int i = 0; i < 9; i++)
        b[i] = a[i] / m;
    if (!inverse3_plain(b, inv))
        return 0;
    for (int i = 0; i < 9; i++)
        inv[i] /= m;
    for (int i = 0; i < 9; i++)
        if (!isfinite(inv[i]))
            return 0;
    return 1;
}

static void mat_vec(const double *a, const double *v, double *out)
{
    for (int i = 0; i < 3; i++)
        out[i] = a[3 * i] * v[0] + a[3 * i + 1] * v[1] + a[3 * i + 2] * v[2];
}

static void mat_t_vec(const double *a, const double *v, double *out)
{
    for (int i = 0; i < 3; i++)
        out[i] = a[i] * v[0] + a[3 + i] * v[1] + a[6 + i] * v[2];
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

/* log(a* b) on the short arc (the scalar part made >= 0). */
static void short_log(const double *a, const double *b, double *v)
{
    double r[4];
    kb_qmul_conj_left(a, b, r);
    if (r[0] < 0.0)
        for (int c = 0; c < 4; c++)
            r[c] = -r[c];
    kb_qlog(r, v);
}

/* Unit quaternions without overflow or underflow (as kb_rot's keys). */
static void unit_quat(const double *src, double *q)
{
    double m = 0.0;
    for (int c = 0; c < 4; c++)  /* fmax's, not its library call */
        m = fabs(src[c]) > m ? fabs(src[c]) : m;
    double s[4] = {src[0] / m, src[1] / m, src[2] / m, src[3] / m};
    double n = sqrt(kb_qdot(s, s));
    for (int c = 0; c < 4; c++)
        q[c] = s[c] / n;
}

/* Whether n doubles are the same bit for bit (b negated where `negate`):
 * by their bits inline, as memcmp's library call cost prepare a tenth of
 * the sweep's time on 131_01. */
static int same_bits(const double *a, const double *b, int n, int negate)
{
    int same = 1;
    for (int c = 0; c < n; c++) {
        double v = negate ? -b[c] : b[c];
        uint64_t x, y;
        memcpy(&x, a + c, sizeof x);
        memcpy(&y, &v, sizeof y);
        same &= x == y;
    }
    return same;
}

/* Whether two frames' rotations are the same, bit for bit, up to sign. */
static int same_rotation(const double *a, const double *b)
{
    return same_bits(a, b, 4, 0) || same_bits(a, b, 4, 1);
}

/* Frame f's value in a channel's models: its translation, or its
 * rotation's log relative to the last key (taken once per last key, and
 * only where a model reaches it: a failing one stops early). */
static const double *value_at(sweep *w, ptrdiff_t f, int rotation)
{
    if (!rotation)
        return w->jt->translations + 3 * f;
    double *v = w->logs + 3 * f;
    if (w->logs_of[f] != w->s) {
        short_log(w->q + 4 * w->s, w->q + 4 * f, v);
        w->logs_of[f] = w->s;
    }
    return v;
}

/* The inverse of the Jacobian of the log map (jr_half) at frame f's log,
 * once per last key: a segment's end and a lookahead's are often another
 * candidate's (20% of them on CMU 131_01 at 0.1 cm).  NULL where singular. */
static const double *jinv_at(sweep *w, ptrdiff_t f)
{
    double *inv = w->jinv + 9 * f;
    if (w->jinv_of[f] != w->s) {
        double J[9];
        jr_half(value_at(w, f, 1), J);
        if (!inverse3(J, inv))
            inv[0] = NAN;  /* an inverse3 that succeeds is never NaN */
        w->jinv_of[f] = w->s;
    }
    return isnan(inv[0]) ? NULL : inv;
}

/* A channel's cubic Hermite model of the frames strictly between frames a
 * and b with one of its two tangents fitted: the segment's (at b, the last
 * key's fixed at a) or the lookahead's (at a, the frames' own fixed at b). */
typedef struct {
    ptrdiff_t a, b;
    int rotation, fit_at_b;
    const double *va, *vb;     /* the values at a (NULL: zero, a log at the last key) and b */
    const double *d;           /* the fixed tangent, per time */
} model;

/* A row's radius in apart: the tolerance r, grown (see there). */
KB_INLINE double radius(const double *row, double r)
{
    return r + 1e-9 * (fabs(row[0]) + fabs(row[1]) + fabs(row[2]) + r);
}

/* Whether no tangent v brings both frames i and j (model_residuals' rows;
 * r, the tolerance; gj, j's radius as below) within the tolerance: those
 * that bring frame i, |res_i - c_i v| <= gi, form a ball about res_i / c_i
 * of radius gi / |c_i|, and the two balls do not meet.  The radii are
 * grown by far more than residuals_within's rounding (relative 1e-16 of
 * the residual's terms, and its d2's underflow where r >= 1e-100), so
 * that no frames it would pass are apart. */
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
 * the model's span, k its values at a and b and its fixed tangent (copies,
 * which the rows' stores cannot alias); fit_at_b and has_va (va not NULL)
 * constants where inlined. */
KB_INLINE void model_row(sweep *w, const model *md, double ta, double dt, const double *k,
                         ptrdiff_t i, int fit_at_b, int has_va, double *row)
{
    const double *v = value_at(w, md->a + 1 + i, md->rotation);
    double h[4];
    hermite((w->jt->times[md->a + 1 + i] - ta) / dt, h);
    const double hd = (fit_at_b ? h[1] : h[3]) * dt;  /* the fixed tangent's term */
    for (int c = 0; c < 3; c++)
        row[c] = (has_va ? v[c] - h[0] * k[c] : v[c]) - h[2] * k[3 + c] - hd * k[6 + c];
    row[3] = (fit_at_b ? h[3] : h[1]) * dt;
}

/* model_residuals for a model whose fit_at_b and has_va (va not NULL) are
 * constants where inlined: no row tests them, nor reloads what its stores
 * could alias. */
KB_INLINE int residuals_as(sweep *w, const model *md, double r, double *res, int fit_at_b,
                           int has_va)
{
    const ptrdiff_t m = md->b - md->a, n = m - 1;
    if (n < 1)
        return 1;
    const double ta = w->jt->times[md->a], dt = w->jt->times[md->b] - ta;
    double k[9], anchor[4];
    for (int c = 0; c < 3; c++) {
        k[c] = has_va ? md->va[c] : 0.0;
        k[3 + c] = md->vb[c];
        k[6 + c] = md->d[c];
    }
    ptrdiff_t ia = (fit_at_b ? 2 * m + 1 : m + 1) / 3 - 1;
    ia = ia < 0 ? 0 : ia > n - 1 ? n - 1 : ia;
    model_row(w, md, ta, dt, k, ia, fit_at_b, has_va, anchor);
    memcpy(res + 4 * ia, anchor, sizeof anchor);
    const double ga = radius(anchor, r);
    const int look = r >= 1e-100;
    for (ptrdiff_t odd = 0; odd < 2; odd++)
        for (ptrdiff_t i = odd; i < n; i += 2) {
            if (i == ia)
                continue;
            model_row(w, md, ta, dt, k, i, fit_at_b, has_va, res + 4 * i);
            if (look && apart(res + 4 * i, anchor, r, ga))
                return 0;
        }
    return 1;
}

/* The model's residuals at its frames into res (row i, frame a + 1 + i's:
 * the residual before the fitted tangent's term, and that term's
 * coefficient), so that the check after the fit takes no basis again; 0,
 * some rows left out, where two frames are apart (no tangent fits both
 * within r, so the fit would fail; not looked for where r < 1e-100).  The
 * frame where the fitted term's basis peaks (u 1/3 or 2/3) first and each
 * other against it, the even rows before the odd: on CMU 131_01 at 0.1 cm
 * that found 94% of the failing lookaheads, in 3 of their 18 frames, and
 * 53% of the failing segments. */
static int model_residuals(sweep *w, const model *md, double r, double *res)
{
    if (md->fit_at_b)
        return md->va ? residuals_as(w, md, r, res, 1, 1) : residuals_as(w, md, r, res, 1, 0);
    return md->va ? residuals_as(w, md, r, res, 0, 1) : residuals_as(w, md, r, res, 0, 0);
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

/* The virtual next segment's frames after e before look_search (0:
 * none): SWEEP_LOOK times this segment's, at least SWEEP_LOOK_LEAST, not
 * past the last frame nor across a hold's edge (from held steps to moving
 * ones or back) in this channel. */
static ptrdiff_t look_frames(const sweep *w, ptrdiff_t e, int rotation)
{
    ptrdiff_t m = (ptrdiff_t)ceil(SWEEP_LOOK * (double)(e - w->s));
    if (m < SWEEP_LOOK_LEAST)
        m = SWEEP_LOOK_LEAST;
    if (m > w->F - 1 - e)
        m = w->F - 1 - e;
    if (e + 1 < w->F) {  /* not across a hold's edge */
        ptrdiff_t g = (rotation ? w->run_q : w->run_x)[e + 1];
        if (m > g - e)
            m = g - e;
    }
    return m >= 2 ? m : 0;
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

/* The lookahead of m frames after e for one channel: its normal-equation
 * sums for the tangent at e (lr, *ln; the rotation's in log-space slope
 * terms relative to the last key), and whether a cubic with that tangent
 * alone fitted fits its frames within the tolerance (-1 where the end's
 * Jacobian is singular; the sums unset where it does not fit). */
static int look_sums(sweep *w, ptrdiff_t e, ptrdiff_t m, int rotation, double *lr, double *ln)
{
    const ptrdiff_t b = e + m;
    double db[3];
    model md = {e, b, rotation, 0, value_at(w, e, rotation), value_at(w, b, rotation), db};
    if (rotation) {
        const double *jbinv = jinv_at(w, b);
        if (!jbinv)
            return -1;
        mat_vec(jbinv, w->dq + 3 * b, db);
    } else {
        memcpy(db, w->dx + 3 * b, sizeof db);
    }
    double tol = rotation ? 0.5 * w->angle_tol : w->distance_tol;
    double lim = tol * tol, tl[3];
    if (!model_residuals(w, &md, sqrt(lim), w->res_look))
        return 0;
    lr[0] = lr[1] = lr[2] = 0.0;
    *ln = 0.0;
    tangent_sums(w->res_look, m - 1, lr, ln);
    for (int c = 0; c < 3; c++)
        tl[c] = lr[c] / *ln;
    return residuals_within(w->res_look, m - 1, tl, lim);
}

/* The lookahead's frames (0: none): m, else halved until a cubic fits
 * them (the next segment is then that short at most); its sums. */
static ptrdiff_t look_search(sweep *w, ptrdiff_t e, ptrdiff_t m, int rotation,
                             double *lr, double *ln)
{
    int ok;
    while ((ok = look_sums(w, e, m, rotation, lr, ln)) == 0) {
        m /= 2;
        if (m < 2)
            return 0;
    }
    return ok < 0 ? 0 : m;
}

/* The lookahead's sums (look_search from m frames; none where m is 0 or
 * no cubic fits) added to a channel's normal-equation sums rhs, *n. */
static void add_lookahead(sweep *w, ptrdiff_t e, ptrdiff_t m, int rotation, double *rhs,
                          double *n)
{
    double lr[3], ln;
    if (m && look_search(w, e, m, rotation, lr, &ln)) {
        for (int c = 0; c < 3; c++)
            rhs[c] += lr[c];
        *n += ln;
    }
}

/* The translation tangent at e by least squares; 0 where a frame of the
 * segment is then beyond the tolerance (or the fit is not finite). */
static int fit_translation(sweep *w, ptrdiff_t e, fit *r)
{
    if (!w->tr_fit) {
        memcpy(r->tx, w->dx + 3 * e, sizeof r->tx);
        return 1;
    }
    const double *t = w->jt->times, *x = w->jt->translations;
    const ptrdiff_t s = w->s;
    const double dt = t[e] - t[s], lam = SWEEP_ALPHA * dt * dt;
    const double lim = w->distance_tol * w->distance_tol;
    model md = {s, e, 0, 1, x + 3 * s, x + 3 * e, w->tx_s};
    if (!model_residuals(w, &md, sqrt(lim), w->res_seg))
        return 0;
    double n = lam, rhs[3];
    for (int c = 0; c < 3; c++)
        rhs[c] = lam * w->dx[3 * e + c];
    tangent_sums(w->res_seg, e - s - 1, rhs, &n);
    add_lookahead(w, e, look_frames(w, e, 0), 0, rhs, &n);
    for (int c = 0; c < 3; c++)
        r->tx[c] = rhs[c] / n;
    if (!isfinite(r->tx[0] + r->tx[1] + r->tx[2]))
        return 0;
    return residuals_within(w->res_seg, e - s - 1, r->tx, lim);
}

/* The rotation tangent at e by least squares on the log-space model; 0
 * where twice a frame's residual is then beyond the tolerance. */
static int fit_rotation(sweep *w, ptrdiff_t e, fit *r)
{
    if (!w->rot_fit) {
        memcpy(r->tq, w->dq + 3 * e, sizeof r->tq);
        return 1;
    }
    const double *t = w->jt->times;
    const ptrdiff_t s = w->s;
    const double dt = t[e] - t[s], lam = SWEEP_ALPHA * dt * dt;
    const double lim = 0.25 * w->angle_tol * w->angle_tol;
    const double *L = value_at(w, e, 1);
    model md = {s, e, 1, 1, NULL, L, w->tq_s};
    if (!model_residuals(w, &md, sqrt(lim), w->res_seg))
        return 0;
    const double *jinv = jinv_at(w, e);
    if (!jinv)
        return 0;
    memcpy(r->jinv, jinv, sizeof r->jinv);
    double jtj[9], rhs[3], cr[3] = {0.0, 0.0, 0.0}, cc = 0.0;
    tangent_sums(w->res_seg, e - s - 1, cr, &cc);
    add_lookahead(w, e, look_frames(w, e, 1), 1, cr, &cc);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            jtj[3 * i + j] = r->jinv[i] * r->jinv[j] + r->jinv[3 + i] * r->jinv[3 + j] +
                             r->jinv[6 + i] * r->jinv[6 + j];
    mat_t_vec(r->jinv, cr, rhs);
    for (int i = 0; i < 9; i++)
        r->normal[i] = cc * jtj[i] + (i % 4 == 0 ? lam : 0.0);
    for (int c = 0; c < 3; c++)
        rhs[c] += lam * w->dq[3 * e + c];
    double ninv[9], slope[3];
    if (!inverse3(r->normal, ninv))
        return 0;
    mat_vec(ninv, rhs, r->tq);
    r->lam = lam;
    if (!isfinite(r->tq[0] + r->tq[1] + r->tq[2]))
        return 0;
    mat_vec(r->jinv, r->tq, slope);  /* the log-space slope at e, per time */
    return residuals_within(w->res_seg, e - s - 1, slope, lim);
}

/* Both channels' fit of the segment from the last key to e, on the models. */
static int fit_model(sweep *w, ptrdiff_t e, fit *r)
{
    return fit_translation(w, e, r) && fit_rotation(w, e, r);
}

/* The joint's frames strictly between s and e as a joint of their own,
 * for kb_reduce_errors_unchecked: kb_reduce_errors' errors, whose check
 * of the frames s .. e always passed (frames of the joint checked at
 * entry), and only those the check scores (not the keys'). */
static kb_reduce_joint inner_frames(const sweep *w, ptrdiff_t s, ptrdiff_t e)
{
    const kb_reduce_joint *jt = w->jt;
    return (kb_reduce_joint){e - s - 1, jt->times + s + 1, jt->rotations + 4 * (s + 1),
                             jt->translations + 3 * (s + 1), jt->angle_tolerance,
                             jt->distance_tolerance, 1};
}

/* The translation spline's segment from the last key to e with tangents
 * tx_s and tx, as kb_reduce_rebuild builds and evaluates it, at frames
 * strictly between s and e (into w->curve_x, row j frame s + j's; each
 * query's value is its own, whatever the others), and their distances
 * (w->distance likewise); 0 where it cannot be built. */
static int real_translation(sweep *w, ptrdiff_t e, const double *tx)
{
    const kb_reduce_joint *jt = w->jt;
    const ptrdiff_t s = w->s, m = e - s + 1;
    double kt[2] = {jt->times[s], jt->times[e]}, kx[6], given[6], zero[2] = {0.0, 0.0};
    double tin[6], tout[6], coef[12];
    memcpy(kx, jt->translations + 3 * s, 3 * sizeof(double));
    memcpy(kx + 3, jt->translations + 3 * e, 3 * sizeof(double));
    memcpy(given, w->tx_s, 3 * sizeof(double));
    memcpy(given + 3, tx, 3 * sizeof(double));
    kb_param zeros = {zero, 2}, none = {NULL, 0}, times = {kt, 2};
    kb_tcb_keys k = {.n_tracks = 1, .n_keys = 2, .dim = 3, .times = times, .values = kx,
                     .tension = zeros, .continuity = zeros, .bias = zeros, .ease_from = zeros,
                     .ease_to = zeros, .start_tangent = none, .end_tangent = none,
                     .timing = KB_TIMING_KB, .ends = KB_ENDS_NATURAL, .given_in = given,
                     .given_out = given};
    kb_error err;
    if (kb_tcb_build(&k, tin, tout, coef, NULL, &err) != KB_OK)
        return 0;
    kb_curve c = {.n_tracks = 1, .n_seg = 1, .dim = 3, .knots = kt, .knots_stride = 2,
                  .coef = coef, .ease = NULL, .extrap = KB_EXTRAP_CLAMP};
    if (kb_curve_eval(&c, 0, jt->times + s + 1, m - 2, m - 2, 0, 1, w->curve_x + 3, NULL,
                      &err) != KB_OK)
        return 0;
    kb_reduce_joint view = inner_frames(w, s, e);
    kb_reduce_errors_unchecked(&view, NULL, w->curve_x + 3, NULL, w->distance + 1);
    return 1;
}

/* The rotation spline's segment likewise (into w->curve_q, w->angle; its
 * segment built as the keys' locations ask, frames s .. e), its
 * keys the last key with the sign the whole spline gives it and frame e
 * (on its side, as the whole spline puts it): the same unit keys, chord,
 * segment and values as kb_reduce_rebuild's to the bit, up to one sign for
 * the segment.  *sign_e: the sign the whole spline gives frame e. */
static int real_rotation(sweep *w, ptrdiff_t e, const double *tq, double *sign_e)
{
    const kb_reduce_joint *jt = w->jt;
    const ptrdiff_t s = w->s, m = e - s + 1;
    double kt[2] = {jt->times[s], jt->times[e]}, kq[8], given[6], zero[2] = {0.0, 0.0};
    double uq[8], chord[3], tchord[3], dt[1], tin[6], tout[6], seg[KB_ROT_SEG];
    unsigned char kind[1];
    for (int c = 0; c < 4; c++) {
        kq[c] = w->sign_s * jt->rotations[4 * s + c];
        kq[4 + c] = jt->rotations[4 * e + c];
    }
    memcpy(given, w->tq_s, 3 * sizeof(double));
    memcpy(given + 3, tq, 3 * sizeof(double));
    kb_param zeros = {zero, 2}, none = {NULL, 0}, times = {kt, 2};
    kb_rot_keys k = {.n_tracks = 1, .n_keys = 2, .times = times, .quats = kq,
                     .tension = zeros, .continuity = zeros, .bias = zeros, .ease_from = zeros,
                     .ease_to = zeros, .start_omega = none, .end_omega = none,
                     .timing = KB_TIMING_KB, .ends = KB_ENDS_NATURAL, .chords = NULL,
                     .given_in = given, .given_out = given};
    kb_rot_chords ch = {uq, chord, tchord, dt};
    kb_rot_chords_of(&k, &ch);
    ptrdiff_t hint = 0;
    for (ptrdiff_t j = 0; j < m; j++)
        locate(kt, 1, KB_EXTRAP_CLAMP, jt->times[s + j], &hint, &w->loc[j]);
    kb_error err;
    if (kb_rot_build_segments(&k, &ch, w->loc, m, tin, tout, seg, kind, &err) != KB_OK)
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
    kb_reduce_joint view = inner_frames(w, s, e);
    kb_reduce_errors_unchecked(&view, w->curve_q + 4, NULL, w->angle + 1, NULL);
    return 1;
}

/* The worst of errors over the frames strictly between the keys. */
static double worst_inside(const double *error, ptrdiff_t m)
{
    double worst = 0.0;
    for (ptrdiff_t j = 1; j + 1 < m; j++)
        if (!(error[j] <= worst))
            worst = isnan(error[j]) ? INFINITY : error[j];
    return worst;
}

/* The real check of a fitted end e (r, the rotation tangent perhaps moved
 * by one Gauss-Newton step on the real spline's log residual): 1 where
 * every frame of the segment is within the tolerances by the splines
 * kb_reduce_rebuild builds.  *sign_e as real_rotation's. */
static int check_real(sweep *w, ptrdiff_t e, fit *r, double *sign_e)
{
    const ptrdiff_t s = w->s, m = e - s + 1;
    *sign_e = 1.0;
    if (w->tr_check &&
        (!real_translation(w, e, r->tx) || worst_inside(w->distance, m) > w->distance_tol))
        return 0;
    if (!w->rot_check)
        return 1;
    for (int step = 0;; step++) {
        if (!real_rotation(w, e, r->tq, sign_e))
            return 0;
        double worst = worst_inside(w->angle, m);
        if (worst <= w->angle_tol)
            return 1;
        if (step == 1 || !w->rot_fit || worst > 2.0 * w->angle_tol)
            return 0;
        /* one Gauss-Newton step: the frames' logs from the curve's, relative
         * to the start key, through the model's Jacobian */
        const double *t = w->jt->times, dt = t[e] - t[s];
        const double *q0 = w->q + 4 * s;
        double acc[3] = {0.0, 0.0, 0.0}, rhs[3], ninv[9], step_v[3];
        for (ptrdiff_t f = s + 1; f < e; f++) {
            double h[4], v[3];
            hermite((t[f] - t[s]) / dt, h);
            const double *lf = value_at(w, f, 1);
            short_log(q0, w->curve_q + 4 * (f - s), v);
            for (int c = 0; c < 3; c++)
                acc[c] += h[3] * dt * (lf[c] - v[c]);
        }
        mat_t_vec(r->jinv, acc, rhs);
        for (int c = 0; c < 3; c++)
            rhs[c] += r->lam * (w->dq[3 * e + c] - r->tq[c]);
        if (!inverse3(r->normal, ninv))
            return 0;
        mat_vec(ninv, rhs, step_v);
        for (int c = 0; c < 3; c++)
            r->tq[c] += step_v[c];
        if (!isfinite(r->tq[0] + r->tq[1] + r->tq[2]))
            return 0;
    }
}

/* The model's fit and the real check together. */
static int fit_real(sweep *w, ptrdiff_t e, fit *r, double *sign_e)
{
    return fit_model(w, e, r) && check_real(w, e, r, sign_e);
}

/* The next frame as the end: no frame between to fail, but the segment
 * must build.  Its fit, else the frames' tangents, else zero ones; 0 where
 * none builds. */
static int next_frame(sweep *w, fit *r, double *sign_e)
{
    ptrdiff_t e = w->s + 1;
    if (fit_real(w, e, r, sign_e))
        return 1;
    memcpy(r->tq, w->dq + 3 * e, sizeof r->tq);
    memcpy(r->tx, w->dx + 3 * e, sizeof r->tx);
    r->lam = 0.0;
    int saved = w->rot_fit;
    w->rot_fit = 0;  /* no Gauss-Newton step */
    int ok = check_real(w, e, r, sign_e);
    if (!ok) {
        memset(r->tq, 0, sizeof r->tq);
        memset(r->tx, 0, sizeof r->tx);
        ok = check_real(w, e, r, sign_e);
    }
    w->rot_fit = saved;
    return ok;
}

/* The frames' unit quaternions and tangents per time (central
 * differences, but zero per component where the step on one side is zero,
 * a hold's edge, and at the ends PCHIP's three-point formula; the
 * rotation's in log space, half the body angular velocity, each step on
 * the short arc), which channels vary, and their holds (runs of frames
 * the same bit for bit, rotations up to sign). */
static void prepare(sweep *w)
{
    const kb_reduce_joint *jt = w->jt;
    const ptrdiff_t F = w->F;
    const double *t = jt->times, *x = jt->translations;
    for (ptrdiff_t f = 0; f < F; f++)
        unit_quat(jt->rotations + 4 * f, w->q + 4 * f);
    int rot_varies = 0, tr_varies = 0;
    double before[3] = {0.0, 0.0, 0.0};  /* log(q_(f-1)* q_f), the last step's b */
    for (ptrdiff_t f = 0; f < F; f++) {
        ptrdiff_t lo = f > 0 ? f - 1 : f, hi = f + 1 < F ? f + 1 : f;
        double a[3], b[3], span = t[hi] - t[lo];
        /* one log per step: log(q_f* q_(f-1)) is -log(q_(f-1)* q_f) to the bit */
        short_log(w->q + 4 * f, w->q + 4 * hi, b);
        for (int c = 0; c < 3; c++) {
            a[c] = -before[c];
            before[c] = b[c];
        }
        for (int c = 0; c < 3; c++) {
            w->dq[3 * f + c] = (b[c] - a[c]) / span;
            w->dx[3 * f + c] = (x[3 * hi + c] - x[3 * lo + c]) / span;
            tr_varies |= x[3 * f + c] != x[c];
        }
        if (F >= 3) {
            /* the steps either side, per component, in frame f's terms */
            double bq[3], aq[3], bx[3], ax[3], h0, h1;
            int end = 0;
            if (f == 0 || f == F - 1) {
                /* the three-point end formula on the two steps at the end */
                ptrdiff_t n1 = f == 0 ? 1 : F - 2, n2 = f == 0 ? 2 : F - 3;
                double l1[3], l2[3];
                short_log(w->q + 4 * f, w->q + 4 * n1, l1);
                short_log(w->q + 4 * f, w->q + 4 * n2, l2);
                h0 = fabs(t[n1] - t[f]);
                h1 = fabs(t[n2] - t[n1]);
                double sg = f == 0 ? 1.0 : -1.0;
                for (int c = 0; c < 3; c++) {
                    aq[c] = sg * l1[c] / h0;                 /* the end step */
                    bq[c] = sg * (l2[c] - l1[c]) / h1;        /* the next */
                    ax[c] = sg * (x[3 * n1 + c] - x[3 * f + c]) / h0;
                    bx[c] = sg * (x[3 * n2 + c] - x[3 * n1 + c]) / h1;
                }
                end = 1;
            } else {
                h0 = t[f] - t[lo];
                h1 = t[hi] - t[f];
                for (int c = 0; c < 3; c++) {
                    aq[c] = -a[c] / h0;
                    bq[c] = b[c] / h1;
                    ax[c] = (x[3 * f + c] - x[3 * lo + c]) / h0;
                    bx[c] = (x[3 * hi + c] - x[3 * f + c]) / h1;
                }
            }
            for (int ch = 0; ch < 2; ch++) {
                double *d = ch ? w->dx + 3 * f : w->dq + 3 * f;
                const double *s0 = ch ? ax : aq, *s1 = ch ? bx : bq;
                for (int c = 0; c < 3; c++) {
                    if (end) {
                        double v = ((2.0 * h0 + h1) * s0[c] - h0 * s1[c]) / (h0 + h1);
                        if (v * s0[c] <= 0.0)
                            v = 0.0;
                        else if (s0[c] * s1[c] <= 0.0 && fabs(v) > 3.0 * fabs(s0[c]))
                            v = 3.0 * s0[c];
                        d[c] = v;
                    } else if (s0[c] * s1[c] == 0.0) {  /* a hold's edge */
                        d[c] = 0.0;
                    }
                }
            }
        }
        double r[4];
        kb_qmul_conj_left(w->q, w->q + 4 * f, r);
        rot_varies |= r[1] != 0.0 || r[2] != 0.0 || r[3] != 0.0;
    }
    /* the holds, and the runs of held (bit-identical) and moving steps:
     * the step to frame f >= 1 is held where hs[f] < f */
    w->hs_q[0] = w->hs_x[0] = 0;
    for (ptrdiff_t f = 1; f < F; f++) {
        int hq = same_rotation(jt->rotations + 4 * f, jt->rotations + 4 * (f - 1));
        int hx = same_bits(x + 3 * f, x + 3 * (f - 1), 3, 0);
        w->hs_q[f] = hq ? w->hs_q[f - 1] : f;
        w->hs_x[f] = hx ? w->hs_x[f - 1] : f;
    }
    w->run_q[0] = w->run_x[0] = 0;
    w->run_q[F - 1] = w->run_x[F - 1] = F - 1;
    for (ptrdiff_t f = F - 2; f >= 1; f--) {
        int same_q = (w->hs_q[f + 1] < f + 1) == (w->hs_q[f] < f);
        int same_x = (w->hs_x[f + 1] < f + 1) == (w->hs_x[f] < f);
        w->run_q[f] = same_q ? w->run_q[f + 1] : f;
        w->run_x[f] = same_x ? w->run_x[f + 1] : f;
    }
    w->rot_check = isfinite(jt->angle_tolerance);
    w->tr_check = isfinite(jt->distance_tolerance);
    w->rot_fit = w->rot_check && rot_varies;
    w->tr_fit = w->tr_check && tr_varies;
}

/* The Fritsch-Butland tangent from the slopes s0, s1 either side, weighed
 * w0, w1: their weighted harmonic mean, zero where they differ in sign.
 * Where that form overflows or its denominator underflows (steps of
 * 1e-250 s: w0 / s0 is 0), the same mean with the weights taken as
 * fractions of their sum, so that a finite tangent is not made infinite. */
static double fritsch_butland(double s0, double s1, double w0, double w1)
{
    if (!(s0 * s1 > 0.0))
        return 0.0;
    double v = (w0 + w1) / (w0 / s0 + w1 / s1);
    if (isfinite(v))
        return v;
    const double sum = w0 + w1;
    return 1.0 / (w0 / sum / s0 + w1 / sum / s1);
}

/* The sweep itself (see the top of the file). */
static kb_status sweep_keys(sweep *w, ptrdiff_t *keys, ptrdiff_t *n_keys, double *rrows,
                            double *trows, kb_error *err)
{
    const ptrdiff_t F = w->F;
    ptrdiff_t K = 1, guess = SWEEP_FIRST_GUESS;
    keys[0] = 0;
    memcpy(w->tq_s, w->dq, sizeof w->tq_s);
    memcpy(w->tx_s, w->dx, sizeof w->tx_s);
    memcpy(rrows, w->tq_s, sizeof w->tq_s);
    memcpy(trows, w->tx_s, sizeof w->tx_s);
    w->s = 0;
    w->sign_s = 1.0;
    while (w->s < F - 1) {
        const ptrdiff_t s = w->s;
        fit best, r;
        memset(&best, 0, sizeof best);
        double sign_best = 1.0, sign_e;
        ptrdiff_t lo, hi = F, e = s + guess < F - 1 ? s + guess : F - 1;
        int real = 0;  /* best has passed the real check */
        if (fit_model(w, e, &r)) {  /* double while it passes */
            lo = e;
            best = r;
            while (lo < F - 1) {
                e = s + 2 * (lo - s) < F - 1 ? s + 2 * (lo - s) : F - 1;
                if (!fit_model(w, e, &r)) {
                    hi = e;
                    break;
                }
                lo = e;
                best = r;
            }
        } else {  /* halve until it passes */
            hi = e;
            for (;;) {
                e = s + (e - s) / 2;
                if (e <= s + 1) {
                    lo = s + 1;
                    if (!next_frame(w, &best, &sign_best))
                        return kb_fail(err, KB_ERANGE, KB_ARG_TANGENTS, 0, s);
                    real = 1;
                    break;
                }
                if (fit_model(w, e, &r)) {
                    lo = e;
                    best = r;
                    break;
                }
                hi = e;
            }
        }
        while (hi - lo > 1) {  /* bisect on the model */
            ptrdiff_t mid = lo + (hi - lo) / 2;
            if (fit_model(w, mid, &r)) {
                lo = mid;
                best = r;
                real = 0;
            } else {
                hi = mid;
            }
        }
        if (lo == s + 1 && !real) {
            if (!next_frame(w, &best, &sign_best))
                return kb_fail(err, KB_ERANGE, KB_ARG_TANGENTS, 0, s);
        } else if (!real && !check_real(w, lo, &best, &sign_best)) {
            /* bisect down on the model and the real splines together */
            hi = lo;
            lo = s + 1;
            if (!next_frame(w, &best, &sign_best))
                return kb_fail(err, KB_ERANGE, KB_ARG_TANGENTS, 0, s);
            while (hi - lo > 1) {
                ptrdiff_t mid = lo + (hi - lo) / 2;
                if (fit_real(w, mid, &r, &sign_e)) {
                    lo = mid;
                    best = r;
                    sign_best = sign_e;
                } else {
                    hi = mid;
                }
            }
        }
        if ((w->rot_fit || w->tr_fit) && lo < F - 1) {
            /* an end inside a hold of every channel fitted that began after
             * the last key: the hold's first frame instead, where it holds
             * (not at the last frame: a key there ends the sweep, and one
             * at the hold's first frame would only need it after) */
            ptrdiff_t a = s;
            int inside = 1;
            if (w->rot_fit) {
                inside &= w->hs_q[lo] < lo;
                a = w->hs_q[lo] > a ? w->hs_q[lo] : a;
            }
            if (w->tr_fit) {
                inside &= w->hs_x[lo] < lo;
                a = w->hs_x[lo] > a ? w->hs_x[lo] : a;
            }
            if (inside && a > s && a < lo) {
                if (a == s + 1) {
                    if (next_frame(w, &r, &sign_e)) {
                        lo = a;
                        best = r;
                        sign_best = sign_e;
                    }
                } else if (fit_real(w, a, &r, &sign_e)) {
                    lo = a;
                    best = r;
                    sign_best = sign_e;
                }
            }
        }
        keys[K] = lo;
        memcpy(rrows + 3 * K, best.tq, sizeof best.tq);
        memcpy(trows + 3 * K, best.tx, sizeof best.tx);
        K++;
        guess = lo - s > 2 ? lo - s : 2;
        w->s = lo;
        memcpy(w->tq_s, best.tq, sizeof w->tq_s);
        memcpy(w->tx_s, best.tx, sizeof w->tx_s);
        w->sign_s = w->rot_check ? sign_best : 1.0;
    }
    for (ptrdiff_t i = 1; i + 1 < K; i++) {
        const ptrdiff_t f = keys[i];
        if (keys[i - 1] != f - 1 || keys[i + 1] != f + 1)
            continue;
        const double *t = w->jt->times, *x = w->jt->translations;
        double a[3], b[3], h0 = t[f] - t[f - 1], h1 = t[f + 1] - t[f];
        double w0 = 2.0 * h1 + h0, w1 = h1 + 2.0 * h0;
        short_log(w->q + 4 * f, w->q + 4 * (f - 1), a);
        short_log(w->q + 4 * f, w->q + 4 * (f + 1), b);
        for (int c = 0; c < 3; c++) {
            double s0 = -a[c] / h0, s1 = b[c] / h1;
            rrows[3 * i + c] = fritsch_butland(s0, s1, w0, w1);
            s0 = (x[3 * f + c] - x[3 * (f - 1) + c]) / h0;
            s1 = (x[3 * (f + 1) + c] - x[3 * f + c]) / h1;
            trows[3 * i + c] = fritsch_butland(s0, s1, w0, w1);
        }
    }
    /* a tangent too large for a double (frames far closer in time than
     * they are apart in value) is refused, as kb_reduce_drop refuses it */
    for (ptrdiff_t i = 0; i < 3 * K; i++)
        if (!isfinite(rrows[i]) || !isfinite(trows[i]))
            return kb_fail(err, KB_ERANGE, KB_ARG_TANGENTS, 0, i / 3);
    *n_keys = K;
    return KB_OK;
}

kb_status kb_reduce_sweep(const kb_reduce_joint *jt, ptrdiff_t *keys, ptrdiff_t *n_keys,
                          double *rotation_rows, double *translation_rows, kb_error *err)
{
    /* kb_reduce_errors checks the joint as every reduction does, and with
     * no outputs does nothing else */
    kb_status status = kb_reduce_errors(jt, NULL, NULL, NULL, NULL, err);
    if (status != KB_OK)
        return status;
    if (!keys || !n_keys || !rotation_rows || !translation_rows)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    const ptrdiff_t F = jt->n_frames;
    if (!kb_doubles_fit(F, 50, 1, 1))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_VALUES, -1, -1);
    size_t n = (size_t)F;
    double *block = malloc(39 * n * sizeof(double) + n * sizeof(kb_loc));
    if (!block)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    sweep w = {.jt = jt, .F = F, .angle_tol = jt->angle_tolerance,
               .distance_tol = jt->distance_tolerance};
    w.q = block;
    w.dq = block + 4 * n;
    w.dx = block + 7 * n;
    w.logs = block + 10 * n;
    w.curve_q = block + 13 * n;
    w.curve_x = block + 17 * n;
    w.angle = block + 20 * n;
    w.distance = block + 21 * n;
    w.res_seg = block + 22 * n;
    w.res_look = block + 26 * n;
    w.jinv = block + 30 * n;
    w.loc = (kb_loc *)(block + 39 * n);
    ptrdiff_t *runs = malloc(6 * n * sizeof(ptrdiff_t));
    if (!runs) {
        free(block);
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    }
    w.run_q = runs;
    w.run_x = runs + n;
    w.hs_q = runs + 2 * n;
    w.hs_x = runs + 3 * n;
    w.logs_of = runs + 4 * n;
    w.jinv_of = runs + 5 * n;
    for (ptrdiff_t f = 0; f < F; f++)
        w.logs_of[f] = w.jinv_of[f] = -1;
    prepare(&w);
    memset(rotation_rows, 0, 3 * n * sizeof(double));
    memset(translation_rows, 0, 3 * n * sizeof(double));
    status = sweep_keys(&w, keys, n_keys, rotation_rows, translation_rows, err);
    free(runs);
    free(block);
    return status == KB_OK ? kb_ok(err) : status;
}
