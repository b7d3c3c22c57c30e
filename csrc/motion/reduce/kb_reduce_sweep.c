/* kb_reduce_sweep.c -- tangent keys of one joint in one forward sweep.  A tangent
 * key's segment hangs on its two keys alone, so each segment is settled once, left
 * to right: from the last key s, a candidate end e gets its tangents by least squares
 * on cubic Hermite models (the rotation's in log space relative to s), weighing a
 * lookahead segment and a weak pull towards the frames' own tangent (sweep_fit.c);
 * the end is doubled then bisected on the models, then checked once on the real
 * splines (one Gauss-Newton step allowed), bisected down where it fails.  Channel 0
 * is the rotation, 1 the translation. */
#include <stdlib.h>

#include "motion/reduce/reduce_internal.h"

/* The model's fit and the real check together. */
static int fit_real(sweep *w, ptrdiff_t e, fit *r, double *sign_e)
{
    return kb_sw_fit_model(w, e, r) && kb_sw_check_real(w, e, r, sign_e);
}

/* The next frame as the end (no frame between to fail, but it must build): its fit,
 * else the frames' tangents, else zero ones; 0 where none builds. */
static int next_frame(sweep *w, fit *r, double *sign_e)
{
    ptrdiff_t e = w->s + 1;
    if (fit_real(w, e, r, sign_e))
        return 1;
    int saved = w->fits[0], ok = 0;
    w->fits[0] = 0;  /* no Gauss-Newton step */
    for (int zero = 0; zero < 2 && !ok; zero++) {
        for (int ch = 0; ch < 2; ch++)
            for (int c = 0; c < 3; c++)
                r->t[ch][c] = zero ? 0.0 : w->d[ch][3 * e + c];
        ok = kb_sw_check_real(w, e, r, sign_e);
    }
    w->fits[0] = saved;
    return ok;
}

/* Channel ch's step from frame f to frame g in frame f's terms: the
 * rotation's log of q_f* q_g on the short arc, the translation's difference. */
static void step_to(const sweep *w, int ch, ptrdiff_t f, ptrdiff_t g, double *v)
{
    const double *x = w->jt->translations;
    if (ch == 0)
        short_log(w->q + 4 * f, w->q + 4 * g, v);
    else
        for (int c = 0; c < 3; c++)
            v[c] = x[3 * g + c] - x[3 * f + c];
}

/* Frame f's tangent per time in channel ch into d: central differences, zero per
 * component where one side's step is zero (a hold's edge), at the ends PCHIP's
 * three-point formula; the rotation's in log space, half the body angular velocity. */
static void frame_tangent(const sweep *w, int ch, ptrdiff_t f, double *d)
{
    const double *t = w->jt->times;
    const ptrdiff_t F = w->F, lo = f > 0 ? f - 1 : f, hi = f + 1 < F ? f + 1 : f;
    double a[3], b[3];
    step_to(w, ch, lo, f, a);  /* the step from lo, negated below */
    step_to(w, ch, f, hi, b);
    for (int c = 0; c < 3; c++) {
        a[c] = -a[c];
        d[c] = (b[c] - a[c]) / (t[hi] - t[lo]);
        if (hi - lo == 2 && (a[c] == 0.0 || b[c] == 0.0))  /* a hold's edge */
            d[c] = 0.0;
    }
    if (F < 3 || hi - lo == 2)
        return;
    /* an end: the three-point formula on the two steps there */
    const ptrdiff_t n1 = f == 0 ? 1 : F - 2, n2 = f == 0 ? 2 : F - 3;
    const double h0 = fabs(t[n1] - t[f]), h1 = fabs(t[n2] - t[n1]), sg = f == 0 ? 1.0 : -1.0;
    step_to(w, ch, f, n1, a);
    step_to(w, ch, f, n2, b);
    for (int c = 0; c < 3; c++) {
        double s0 = sg * a[c] / h0, s1 = sg * (b[c] - a[c]) / h1;
        double v = ((2.0 * h0 + h1) * s0 - h0 * s1) / (h0 + h1);
        if (v * s0 <= 0.0)
            v = 0.0;
        else if (s0 * s1 <= 0.0 && fabs(v) > 3.0 * fabs(s0))
            v = 3.0 * s0;
        d[c] = v;
    }
}

/* Whether channel ch holds still from frame f - 1 to f: the same bits,
 * rotations up to sign. */
static int held(const sweep *w, int ch, ptrdiff_t f)
{
    const kb_reduce_joint *jt = w->jt;
    if (ch == 0)
        return same_rotation(jt->rotations + 4 * f, jt->rotations + 4 * (f - 1));
    return same_bits(jt->translations + 3 * f, jt->translations + 3 * (f - 1), 3, 0);
}

/* The frames' unit quaternions and tangents (frame_tangent), which
 * channels vary and the runs of held and moving steps (look_frames'). */
static void prepare(sweep *w)
{
    const kb_reduce_joint *jt = w->jt;
    const ptrdiff_t F = w->F;
    for (ptrdiff_t f = 0; f < F; f++)
        unit_quat(jt->rotations + 4 * f, w->q + 4 * f);
    for (int ch = 0; ch < 2; ch++) {
        int varies = 0;
        for (ptrdiff_t f = 0; f < F; f++) {
            double v[3];
            frame_tangent(w, ch, f, w->d[ch] + 3 * f);
            step_to(w, ch, 0, f, v);
            varies |= v[0] != 0.0 || v[1] != 0.0 || v[2] != 0.0;
        }
        /* run[f]: the last frame g >= f with the steps to f .. g all held or all moving */
        ptrdiff_t *run = w->run[ch];
        int after = held(w, ch, F - 1);
        run[0] = 0;
        run[F - 1] = F - 1;
        for (ptrdiff_t f = F - 2; f >= 1; f--) {
            int here = held(w, ch, f);
            run[f] = here == after ? run[f + 1] : f;
            after = here;
        }
        w->checks[ch] = isfinite(w->tol[ch]);
        w->fits[ch] = w->checks[ch] && varies;
    }
}

/* The segment's end from the last key s into *end with its fit: the last to pass the
 * model (doubled from s + guess, else halved, then bisected), checked on the real
 * splines, else bisected down on both. */
static int next_key(sweep *w, ptrdiff_t guess, ptrdiff_t *end, fit *best, double *sign)
{
    const ptrdiff_t s = w->s, F = w->F;
    ptrdiff_t lo = s + 1, hi = F, e = s + guess < F - 1 ? s + guess : F - 1;
    fit r;
    while (e > lo) {  /* lo: passed (or the next frame); hi: failed */
        if (kb_sw_fit_model(w, e, &r)) {
            lo = e;
            *best = r;
        } else {
            hi = e;
        }
        if (hi == F)  /* double while it passes */
            e = s + 2 * (lo - s) < F - 1 ? s + 2 * (lo - s) : F - 1;
        else if (lo == s + 1 && s + (hi - s) / 2 > lo)  /* halve until it does */
            e = s + (hi - s) / 2;
        else
            e = lo + (hi - lo) / 2;
    }
    *sign = 1.0;
    if (lo > s + 1 && kb_sw_check_real(w, lo, best, sign)) {
        *end = lo;
        return 1;
    }
    hi = lo;
    lo = s + 1;
    if (!next_frame(w, best, sign))
        return 0;
    while (hi - lo > 1) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        double sign_mid;
        if (fit_real(w, mid, &r, &sign_mid)) {
            lo = mid;
            *best = r;
            *sign = sign_mid;
        } else {
            hi = mid;
        }
    }
    *end = lo;
    return 1;
}

/* The sweep itself (see the top of the file). */
static kb_status sweep_keys(sweep *w, ptrdiff_t *keys, ptrdiff_t *n_keys, double *const rows[2],
                            kb_error *err)
{
    const ptrdiff_t F = w->F;
    ptrdiff_t K = 1, guess = SWEEP_FIRST_GUESS;
    keys[0] = 0;
    w->s = 0;
    w->sign_s = 1.0;
    for (int ch = 0; ch < 2; ch++) {
        memcpy(w->t_s[ch], w->d[ch], sizeof w->t_s[ch]);
        memcpy(rows[ch], w->t_s[ch], sizeof w->t_s[ch]);
    }
    while (w->s < F - 1) {
        fit best;
        double sign;
        ptrdiff_t e;
        if (!next_key(w, guess, &e, &best, &sign))
            return kb_fail(err, KB_ERANGE, KB_ARG_TANGENTS, 0, w->s);
        keys[K] = e;
        for (int ch = 0; ch < 2; ch++) {
            memcpy(rows[ch] + 3 * K, best.t[ch], sizeof best.t[ch]);
            memcpy(w->t_s[ch], best.t[ch], sizeof w->t_s[ch]);
        }
        K++;
        guess = e - w->s > 2 ? e - w->s : 2;
        w->s = e;
        w->sign_s = w->checks[0] ? sign : 1.0;
    }
    for (ptrdiff_t i = 1; i + 1 < K; i++)  /* a key between keys on the frames beside it */
        if (keys[i - 1] == keys[i] - 1 && keys[i + 1] == keys[i] + 1)
            for (int ch = 0; ch < 2; ch++)
                kb_rd_monotone_tangent(w->jt, ch, keys[i], rows[ch] + 3 * i);
    /* a tangent too large for a double (frames far closer in time than
     * they are apart in value) is refused, as kb_reduce_drop refuses it */
    for (ptrdiff_t i = 0; i < 3 * K; i++)
        if (!isfinite(rows[0][i]) || !isfinite(rows[1][i]))
            return kb_fail(err, KB_ERANGE, KB_ARG_TANGENTS, 0, i / 3);
    *n_keys = K;
    return KB_OK;
}

kb_status kb_reduce_sweep(const kb_reduce_joint *jt, ptrdiff_t *keys, ptrdiff_t *n_keys,
                          double *rotation_rows, double *translation_rows, kb_error *err)
{
    kb_status status = kb_rd_validate(jt, err);
    if (status != KB_OK)
        return status;
    if (!keys || !n_keys || !rotation_rows || !translation_rows)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    const ptrdiff_t F = jt->n_frames;  /* kb_rd_validate bounds its block's size */
    size_t n = (size_t)F;
    double *block = malloc(n * (30 * sizeof(double) + sizeof(kb_loc) + 2 * sizeof(ptrdiff_t)));
    if (!block)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    sweep w = {.jt = jt, .F = F, .tol = {jt->angle_tolerance, jt->distance_tolerance}};
    w.q = block;
    w.d[0] = w.q + 4 * n;
    w.d[1] = w.d[0] + 3 * n;
    w.logs = w.d[1] + 3 * n;
    w.curve_q = w.logs + 3 * n;
    w.curve_x = w.curve_q + 4 * n;
    w.angle = w.curve_x + 3 * n;
    w.distance = w.angle + n;
    w.res_seg = w.distance + n;
    w.res_look = w.res_seg + 4 * n;
    w.loc = (kb_loc *)(w.res_look + 4 * n);
    w.run[0] = (ptrdiff_t *)(w.loc + n);
    w.run[1] = w.run[0] + n;
    prepare(&w);
    memset(rotation_rows, 0, 3 * n * sizeof(double));
    memset(translation_rows, 0, 3 * n * sizeof(double));
    double *const rows[2] = {rotation_rows, translation_rows};
    status = sweep_keys(&w, keys, n_keys, rows, err);
    free(block);
    return status == KB_OK ? kb_ok(err) : status;
}
