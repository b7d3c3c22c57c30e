/*
 * kb_reduce_sweep.c -- tangent keys of one joint in one forward sweep.
 * A tangent key's segment hangs on its two keys alone, so each segment is
 * settled once, left to right: from the last key s, a candidate end e gets
 * its tangents by least squares on cubic Hermite models (the rotation's in
 * log space relative to s), weighing a lookahead segment and a weak pull
 * towards the frames' own tangent (kb_reduce_sweep_fit.c); the end is
 * doubled then bisected on the models, then checked once on the real
 * splines (one Gauss-Newton step allowed), bisected down where it fails.
 */
#include <float.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "motion/reduce/kb_reduce_sweep.h"

/* The model's fit and the real check together. */
static int fit_real(sweep *w, ptrdiff_t e, fit *r, double *sign_e)
{
    return kb_sw_fit_model(w, e, r) && kb_sw_check_real(w, e, r, sign_e);
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
    int ok = kb_sw_check_real(w, e, r, sign_e);
    if (!ok) {
        memset(r->tq, 0, sizeof r->tq);
        memset(r->tx, 0, sizeof r->tx);
        ok = kb_sw_check_real(w, e, r, sign_e);
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
        if (kb_sw_fit_model(w, e, &r)) {  /* double while it passes */
            lo = e;
            best = r;
            while (lo < F - 1) {
                e = s + 2 * (lo - s) < F - 1 ? s + 2 * (lo - s) : F - 1;
                if (!kb_sw_fit_model(w, e, &r)) {
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
                if (kb_sw_fit_model(w, e, &r)) {
                    lo = e;
                    best = r;
                    break;
                }
                hi = e;
            }
        }
        while (hi - lo > 1) {  /* bisect on the model */
            ptrdiff_t mid = lo + (hi - lo) / 2;
            if (kb_sw_fit_model(w, mid, &r)) {
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
        } else if (!real && !kb_sw_check_real(w, lo, &best, &sign_best)) {
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
    double *block = malloc(30 * n * sizeof(double) + n * sizeof(kb_loc));
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
    w.loc = (kb_loc *)(block + 30 * n);
    ptrdiff_t *runs = malloc(4 * n * sizeof(ptrdiff_t));
    if (!runs) {
        free(block);
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    }
    w.run_q = runs;
    w.run_x = runs + n;
    w.hs_q = runs + 2 * n;
    w.hs_x = runs + 3 * n;
    prepare(&w);
    memset(rotation_rows, 0, 3 * n * sizeof(double));
    memset(translation_rows, 0, 3 * n * sizeof(double));
    status = sweep_keys(&w, keys, n_keys, rotation_rows, translation_rows, err);
    free(runs);
    free(block);
    return status == KB_OK ? kb_ok(err) : status;
}
