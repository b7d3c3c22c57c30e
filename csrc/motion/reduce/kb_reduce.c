/*
 * kb_reduce.c -- key reduction of one joint's frames: few keys whose squad
 * rotation spline and KB translation spline (KB timing, natural ends) stay
 * within tolerances of every frame (kbspline.motion.reduce_keys).
 *
 * Greedy keys (kb_reduce_greedy: KB tangents from the neighbours, so a
 * key shapes the segments from two keys before it to two after it) and
 * tangent keys (kb_reduce_drop: each key's own tangent, fitted, so a key
 * shapes only the two segments beside it): every step below evaluates
 * again only the frames it can change.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kbspline/kbspline.h"
#include "motion/reduce/reduce_internal.h"
#include "spline/kb_locate.h"
#include "rotation/kb_rot_chords.h"
#include "quat/kb_quat.h"

/* The fits' constants; docs/benchmarks.md ("Tuning notes") says what was
 * tried for each and how to measure it. */
#define FIT_SMALLEST_STEP 1e-5  /* a step shorter than this has converged */
#define FIT_MODEL_STEPS 2       /* Levenberg-Marquardt steps on the model per step asked */
#define FIT_MODEL_GAIN 0.01     /* ... until one lowers its squared error by less than this */
#define FIT_PER_SEGMENT 4       /* frames a fit weighs per segment besides its first */
#define FIT_FIRST_DAMPING 3e-2  /* then a third after a step taken, tenfold after one refused */
#define BAND 6          /* a frame's residual depends on its segment's 2 keys' 3 parameters */

/* Scratch for a spline through up to n_frames keys evaluated at up to
 * n_frames frames, and the per-frame arrays of one joint. */
typedef struct {
    double *t, *q, *x, *tcb3, *tan_in, *tan_out, *seg, *coef, *out;
    kb_rot_chords chords;  /* of the rotation keys in q (prepare_keys) */
    kb_loc *loc;           /* the frames evaluated, located on the keys' times */
    /* joint_errors' frames that are not keys, their times and errors */
    ptrdiff_t *between;
    double *between_times, *between_error;
    int keys_checked;      /* any keys with finite TCB pass kb_rot_validate (keys_pass) */
    int signs_follow;      /* cleared where the rotation keys' signs do not (signs_follow) */
    /* set where the greedy selection scores the rotation alone: rotation_errors
     * then writes each frame's half angle's sine into angle, its cosine into
     * cosine and their ratio into score (see segment_worst) */
    int halves;
    int given;             /* s->tcb3 holds the keys' tangents (n, 3), not TCB rows (gather_tcb) */
    unsigned char *kind;
    double *angle, *distance, *score, *residual, *moved, *zeros, *cosine;
} space;

static void *space_alloc(space *s, ptrdiff_t F, size_t extra_bytes)
{
    size_t n = (size_t)F;
    double *d = malloc(73 * n * sizeof(double) + n * sizeof(kb_loc) + n * sizeof(ptrdiff_t)
                       + n + 8 + extra_bytes);
    if (!d)  /* 8 above: alignment */
        return NULL;
    s->t = d;           s->q = d + n;          s->x = d + 5 * n;     s->tcb3 = d + 8 * n;
    s->tan_in = d + 11 * n;  s->tan_out = d + 14 * n;  s->seg = d + 17 * n;
    s->coef = d + 33 * n;    s->out = d + 45 * n;      s->angle = d + 49 * n;
    s->distance = d + 50 * n; s->score = d + 51 * n;   s->residual = d + 52 * n;
    s->moved = d + 55 * n;   s->zeros = d + 58 * n;    s->cosine = d + 59 * n;
    s->chords = (kb_rot_chords){d + 60 * n, d + 64 * n, d + 67 * n, d + 70 * n};
    memset(s->zeros, 0, n * sizeof(double));
    s->between_times = d + 71 * n;
    s->between_error = d + 72 * n;
    s->loc = (kb_loc *)(d + 73 * n);
    s->between = (ptrdiff_t *)(s->loc + n);
    s->kind = (unsigned char *)(s->between + n);
    s->keys_checked = 0;
    s->signs_follow = 1;
    s->halves = 0;
    s->given = 0;
    return d;
}

/* Whether kb_rot_validate passes any keys of jt's validated frames (see
 * validate: finite, no zero quaternion) with finite TCB, so that the many
 * splines of a reduction need not check theirs: it fails then only on a
 * spacing of times below DBL_MIN or on a span that overflows, and a
 * spacing or span of keys is at least that of neighbouring frames and at
 * most the clip's (rounding is monotonic). */
static int keys_pass(const kb_reduce_joint *jt)
{
    ptrdiff_t F = jt->n_frames;
    if (!isfinite(jt->times[F - 1] - jt->times[0]))
        return 0;
    for (ptrdiff_t f = 1; f < F; f++)
        if (jt->times[f] - jt->times[f - 1] < DBL_MIN)
            return 0;
    return 1;
}

/* The TCB (n, 3) of the keys (NULL: zero) into s->tcb3 as three rows, or
 * with jt->tangent_keys their tangents (n, 3) as they are. */
static void gather_tcb(const kb_reduce_joint *jt, ptrdiff_t n, const double *tcb, space *s)
{
    s->given = jt->tangent_keys && tcb;
    if (s->given) {
        memcpy(s->tcb3, tcb, (size_t)(3 * n) * sizeof(double));
        return;
    }
    for (int p = 0; p < 3; p++)
        for (ptrdiff_t i = 0; i < n; i++)
            s->tcb3[p * n + i] = tcb ? tcb[3 * i + p] : 0.0;
}

/* The rotation keys in s (prepare_keys) with the TCB in s->tcb3. */
static kb_rot_keys rotation_keys(ptrdiff_t n, space *s)
{
    kb_param zero = {s->zeros, n}, none = {NULL, 0}, times = {s->t, n};
    kb_param T = {s->tcb3, n}, C = {s->tcb3 + n, n}, B = {s->tcb3 + 2 * n, n};
    if (s->given)
        T = C = B = zero;
    return (kb_rot_keys){.n_tracks = 1, .n_keys = n, .times = times, .quats = s->q,
                         .tension = T, .continuity = C, .bias = B, .ease_from = zero,
                         .ease_to = zero, .start_omega = none, .end_omega = none,
                         .timing = KB_TIMING_KB, .ends = KB_ENDS_NATURAL, .chords = NULL,
                         .given_in = s->given ? s->tcb3 : NULL,
                         .given_out = s->given ? s->tcb3 : NULL};
}

/* Whether the unit keys' signs (each on its predecessor's side) follow the
 * first key's: flipping it flips them all, so that a window of keys and
 * all of them give each segment up to its sign.  A dot of exactly zero
 * keeps a key's sign whichever side its predecessor is on. */
static int signs_follow(ptrdiff_t n, const space *s)
{
    for (ptrdiff_t i = 1; i < n; i++)
        if (kb_qdot(s->q + 4 * i, s->chords.q + 4 * (i - 1)) == 0.0)
            return 0;
    return 1;
}

/*
 * One channel's keys, frames keys[0..n) with TCB tcb (n, 3; NULL: zero),
 * gathered into s and checked as kb_rot_build / kb_tcb_build check them;
 * for rotations also their chords (s->chords) and the m frames at
 * ascending times at_times located on them (s->loc).  What spline_errors needs of the
 * keys, so that a fit, which moves only the TCB, takes it once.
 */
static void gather_keys(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                        ptrdiff_t n, space *s)
{
    for (ptrdiff_t i = 0; i < n; i++)
        s->t[i] = jt->times[keys[i]];
    for (ptrdiff_t i = 0; rotation && i < n; i++)  /* copies of constant size: no calls */
        memcpy(s->q + 4 * i, jt->rotations + 4 * keys[i], 4 * sizeof(double));
    for (ptrdiff_t i = 0; !rotation && i < n; i++)
        memcpy(s->x + 3 * i, jt->translations + 3 * keys[i], 3 * sizeof(double));
}

static kb_status prepare_keys(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                              ptrdiff_t n, const double *tcb, const double *at_times,
                              ptrdiff_t m, space *s, kb_error *err)
{
    gather_keys(jt, rotation, keys, n, s);
    if (!rotation)
        return KB_OK;  /* kb_tcb_build checks them (spline_errors) */
    gather_tcb(jt, n, tcb, s);
    kb_rot_keys k = rotation_keys(n, s);
    kb_status status = s->keys_checked ? KB_OK : kb_rot_validate(&k, err);
    if (status != KB_OK)
        return status;
    kb_rot_chords_of(&k, &s->chords);
    s->signs_follow &= signs_follow(n, s);
    ptrdiff_t hint = 0;
    for (ptrdiff_t j = 0; j < m; j++)
        locate(s->t, n - 1, KB_EXTRAP_CLAMP, at_times[j], &hint, &s->loc[j]);
    return KB_OK;
}

/* The rotation spline of the prepared keys with the TCB in s->tcb3 at the
 * m located frames, into s->out: only the segments they lie in are built
 * (the greedy selection's windows evaluate 4 of their 6, fewer where no
 * frame between keys lies in one: see joint_errors). */
static kb_status rotation_at(ptrdiff_t n, const double *at_times, ptrdiff_t m, space *s,
                             kb_error *err)
{
    kb_rot_keys k = rotation_keys(n, s);
    kb_status status = kb_rot_build_segments(&k, &s->chords, s->loc, m, s->tan_in, s->tan_out,
                                             s->seg, s->kind, err);
    kb_rot_curve c = {.n_tracks = 1, .n_seg = n - 1, .knots = s->t, .knots_stride = n,
                      .seg = s->seg, .ease = NULL, .extrap = KB_EXTRAP_CLAMP, .kind = s->kind};
    if (status == KB_OK)
        kb_rot_values_at(&c, at_times, s->loc, m, s->out);
    return status;
}

/* The translation keys in s (prepare_keys) with the TCB in s->tcb3. */
static kb_tcb_keys translation_keys(ptrdiff_t n, space *s)
{
    kb_param zero = {s->zeros, n}, none = {NULL, 0}, times = {s->t, n};
    kb_param T = {s->tcb3, n}, C = {s->tcb3 + n, n}, B = {s->tcb3 + 2 * n, n};
    if (s->given)
        T = C = B = zero;
    return (kb_tcb_keys){.n_tracks = 1, .n_keys = n, .dim = 3, .times = times, .values = s->x,
                         .tension = T, .continuity = C, .bias = B, .ease_from = zero,
                         .ease_to = zero, .start_tangent = none, .end_tangent = none,
                         .timing = KB_TIMING_KB, .ends = KB_ENDS_NATURAL,
                         .given_in = s->given ? s->tcb3 : NULL,
                         .given_out = s->given ? s->tcb3 : NULL};
}

/* The translation spline of the prepared keys with the TCB in s->tcb3 at
 * the m frames at_times, into s->out. */
static kb_status translation_at(ptrdiff_t n, const double *at_times, ptrdiff_t m, space *s,
                                kb_error *err)
{
    kb_tcb_keys k = translation_keys(n, s);
    kb_status status = kb_tcb_build(&k, s->tan_in, s->tan_out, s->coef, NULL, err);
    kb_curve c = {.n_tracks = 1, .n_seg = n - 1, .dim = 3, .knots = s->t, .knots_stride = n,
                  .coef = s->coef, .ease = NULL, .extrap = KB_EXTRAP_CLAMP};
    if (status == KB_OK)
        status = kb_curve_eval(&c, 0, at_times, m, m, 0, 1, s->out, NULL, err);
    return status;
}

/* fmax(a, b) inline, where the library's is a call: the larger, or the
 * one not NaN; the same bits but for zeros of both signs, which none of
 * its uses below has (errors, scores, their squares and sizes: +0 or more). */
static inline double larger(double a, double b)
{
    return a > b || b != b ? a : b;
}

/* conj(f) p: its scalar part, and its vector part into v. */
static inline double relative_rotation(const double *f, const double *p, double v[3])
{
    v[0] = f[0] * p[1] - p[0] * f[1] - (f[2] * p[3] - f[3] * p[2]);
    v[1] = f[0] * p[2] - p[0] * f[2] - (f[3] * p[1] - f[1] * p[3]);
    v[2] = f[0] * p[3] - p[0] * f[3] - (f[1] * p[2] - f[2] * p[1]);
    return f[0] * p[0] + f[1] * p[1] + f[2] * p[2] + f[3] * p[3];
}

/* The norm of v (3,) as sqrt(v . v) where that neither underflows nor
 * overflows; else (frames far from unit length, 1e-200 or 1e200: the
 * rotation's v and w scale with the frame) the norm of v and *w both
 * divided by the largest of them, *w so divided too, so that their ratio,
 * the error, is kept (rotation: w the dot; translation: w NULL).  Frames
 * of unit length (or translations of ordinary size) keep the first form,
 * bit for bit, whatever their error. */
static inline double robust_norm(double v[3], double *w)
{
    double n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if (n2 >= 1e-280 && n2 <= 1e280)
        return sqrt(n2);
    double m = fmax(fmax(fabs(v[0]), fabs(v[1])), fmax(fabs(v[2]), w ? fabs(*w) : 0.0));
    if (!(m > 0.0) || !isfinite(m) || (w && m >= 1e-100 && m <= 1e100) ||
        (!w && n2 > 0.0 && n2 < 1e-280 && m >= 1e-140))
        return sqrt(n2);
    for (int c = 0; c < 3; c++)
        v[c] /= m;
    n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if (w) {
        *w /= m;
        return sqrt(n2);
    }
    return m * sqrt(n2);
}

/* The rotation errors and residuals (see errors_at) of the spline values
 * (m, 4) at the m frames at[j] (NULL: first + j); with s->halves, the
 * sine and cosine of each error's half instead of the error, and their
 * ratio as the frame's score (at the frame's index). */
static void rotation_errors(const kb_reduce_joint *jt, const double *values, const ptrdiff_t *at,
                            ptrdiff_t first, ptrdiff_t m, double *error, double *residual,
                            const space *s)
{
    for (ptrdiff_t j = 0; s->halves && j < m; j++) {
        ptrdiff_t f = at ? at[j] : first + j;
        double v[3], w = relative_rotation(jt->rotations + 4 * f, values + 4 * j, v);
        error[j] = robust_norm(v, &w);
        s->cosine[f] = fabs(w);
        s->score[f] = error[j] / fabs(w);
    }
    for (ptrdiff_t j = 0; !s->halves && j < m; j++) {
        double v[3];
        double w = relative_rotation(jt->rotations + 4 * (at ? at[j] : first + j),
                                     values + 4 * j, v);
        double sign = w < 0 ? -2.0 : 2.0;
        for (int c = 0; residual && c < 3; c++)
            residual[3 * j + c] = v[c] * sign;
        if (error) {
            double n = robust_norm(v, &w);
            error[j] = kb_rotation_angle(n, fabs(w));
        }
    }
}

/* The translation errors and residuals, likewise. */
static void translation_errors(const kb_reduce_joint *jt, const double *values,
                               const ptrdiff_t *at, ptrdiff_t first, ptrdiff_t m, double *error,
                               double *residual)
{
    for (ptrdiff_t j = 0; j < m; j++) {
        const double *p = values + 3 * j, *f = jt->translations + 3 * (at ? at[j] : first + j);
        double v[3] = {p[0] - f[0], p[1] - f[1], p[2] - f[2]};
        if (residual)
            memcpy(residual + 3 * j, v, sizeof v);
        if (error)
            error[j] = robust_norm(v, NULL);
    }
}

/* errors_at of keys prepared by prepare_keys (with the same frames), with
 * TCB tcb. */
static kb_status spline_errors(const kb_reduce_joint *jt, int rotation, ptrdiff_t n,
                               const double *tcb, const ptrdiff_t *at, const double *at_times,
                               ptrdiff_t first, ptrdiff_t m, double *error, double *residual,
                               space *s, kb_error *err)
{
    gather_tcb(jt, n, tcb, s);
    kb_status status = rotation ? rotation_at(n, at_times, m, s, err)
                                : translation_at(n, at_times, m, s, err);
    if (status != KB_OK || (!error && !residual))
        return status;
    if (rotation)
        rotation_errors(jt, s->out, at, first, m, error, residual, s);
    else
        translation_errors(jt, s->out, at, first, m, error, residual);
    return status;
}

/*
 * The errors at m frames, at[0..m) (their times at_times, ascending) or
 * where at is NULL first .. first + m - 1, of one channel's spline through
 * frames keys[0..n) with TCB tcb (n, 3) (NULL: zero): error[j] for the
 * j-th frame is the rotation angle (rotation != 0) or the translation
 * distance (NULL to skip: the fit needs only residuals), and residual
 * (NULL to skip) its vector: twice the vector part of frame* spline on the
 * side w >= 0 (about the rotation vector), or spline - frame.
 */
static kb_status errors_at(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                           ptrdiff_t n, const double *tcb, const ptrdiff_t *at,
                           const double *at_times, ptrdiff_t first, ptrdiff_t m, double *error,
                           double *residual, space *s, kb_error *err)
{
    kb_status status = prepare_keys(jt, rotation, keys, n, tcb, at_times, m, s, err);
    if (status == KB_OK)
        status = spline_errors(jt, rotation, n, tcb, at, at_times, first, m, error, residual, s,
                               err);
    return status;
}

/* errors_at at frames [first, last]. */
static kb_status channel_errors(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                                ptrdiff_t n, const double *tcb, ptrdiff_t first, ptrdiff_t last,
                                double *error, double *residual, space *s, kb_error *err)
{
    return errors_at(jt, rotation, keys, n, tcb, NULL, jt->times + first, first,
                     last - first + 1, error, residual, s, err);
}

/* The errors of each channel of finite tolerance at the m ascending frames
 * at (their times in s->between_times) into s->angle and s->distance at
 * those frames, and with residual (NULL: none) each one's residuals at
 * them into residual[c] (c: 0 translation, 1 rotation; see errors_at). */
static kb_status errors_into(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                             const double *rotation_tcb, const double *translation_tcb,
                             const ptrdiff_t *at, ptrdiff_t m, double *const *residual,
                             space *s, kb_error *err)
{
    const double tolerance[2] = {jt->distance_tolerance, jt->angle_tolerance};
    kb_status status = KB_OK;
    /* with no frame, only the keys' check where they need one (keys_checked) */
    for (int c = 1; c >= 0 && (m || !s->keys_checked) && status == KB_OK; c--) {
        double *error = c ? s->angle : s->distance;
        if (!isfinite(tolerance[c]))
            continue;
        status = errors_at(jt, c, keys, n, c ? rotation_tcb : translation_tcb, at,
                           s->between_times, 0, m, s->between_error,
                           residual ? residual[c] : NULL, s, err);
        for (ptrdiff_t j = 0; j < m; j++)
            error[at[j]] = s->between_error[j];
    }
    return status;
}

/* Both channels' errors at frames [first, last] into s->angle, s->distance
 * and their worst ratio to the tolerances into s->score (with s->halves,
 * the rotation's halves and their ratio: see rotation_errors).  The splines
 * pass through their keys, so a key frame's errors are zero and only the
 * frames between keys are evaluated (keys, ascending, has every key in
 * [first, last]): where nearly every frame is a key, as on short clips, a
 * window then builds few of its segments.  A channel of infinite tolerance
 * cannot raise a score, so it is skipped here (its errors are left as they
 * were) and evaluated once at the end by skipped_errors.  With residual
 * (NULL: none), each such channel's residuals at the frames between keys
 * too (see errors_into; in s->between's order). */
static kb_status window_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                               const double *rotation_tcb, const double *translation_tcb,
                               ptrdiff_t first, ptrdiff_t last, double *const *residual,
                               space *s, kb_error *err)
{
    int rotation = isfinite(jt->angle_tolerance), translation = isfinite(jt->distance_tolerance);
    ptrdiff_t m = 0;
    for (ptrdiff_t f = first, k = 0; f <= last; f++) {
        while (k < n && keys[k] < f)
            k++;
        if (k < n && keys[k] == f) {
            if (rotation)
                s->angle[f] = 0.0;
            if (translation)
                s->distance[f] = 0.0;
            s->cosine[f] = 1.0;
            s->score[f] = 0.0;
        } else {
            s->between[m] = f;
            s->between_times[m++] = jt->times[f];
        }
    }
    kb_status status = errors_into(jt, keys, n, rotation_tcb, translation_tcb, s->between, m,
                                   residual, s, err);
    for (ptrdiff_t f = first; status == KB_OK && !s->halves && f <= last; f++)
        s->score[f] = larger(rotation ? s->angle[f] / jt->angle_tolerance : 0.0,
                             translation ? s->distance[f] / jt->distance_tolerance : 0.0);
    return status;
}

static kb_status joint_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                              const double *rotation_tcb, const double *translation_tcb,
                              ptrdiff_t first, ptrdiff_t last, space *s, kb_error *err)
{
    return window_errors(jt, keys, n, rotation_tcb, translation_tcb, first, last, NULL, s, err);
}

/* The errors joint_errors takes as zero, at the key frames, as the splines
 * give them (rounding's), for the final keys' errors at every frame. */
static kb_status key_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                            const double *rotation_tcb, const double *translation_tcb,
                            space *s, kb_error *err)
{
    for (ptrdiff_t j = 0; j < n; j++)
        s->between_times[j] = jt->times[keys[j]];
    return errors_into(jt, keys, n, rotation_tcb, translation_tcb, keys, n, NULL, s, err);
}

/* The errors joint_errors skipped, at every frame, for the final keys. */
static kb_status skipped_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                                const double *rotation_tcb, const double *translation_tcb,
                                space *s, kb_error *err)
{
    ptrdiff_t last = jt->n_frames - 1;
    kb_status status = KB_OK;
    if (!isfinite(jt->angle_tolerance))
        status = channel_errors(jt, 1, keys, n, rotation_tcb, 0, last, s->angle, NULL, s, err);
    if (status == KB_OK && !isfinite(jt->distance_tolerance))
        status = channel_errors(jt, 0, keys, n, translation_tcb, 0, last, s->distance, NULL, s,
                                err);
    return status;
}

static kb_status validate(const kb_reduce_joint *jt, kb_error *err)
{
    ptrdiff_t F = jt ? jt->n_frames : 0;
    if (!jt || F < 2 || !kb_doubles_fit(F, 64, 1, 1) || !jt->times || !jt->rotations ||
        !jt->translations)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_VALUES, -1, -1);
    if (!(jt->angle_tolerance > 0) || !(jt->distance_tolerance > 0))
        return kb_fail(err, KB_ERANGE, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t f = 0; f < F; f++) {
        const double *q = jt->rotations + 4 * f, *x = jt->translations + 3 * f;
        if (!isfinite(jt->times[f]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_TIMES, 0, f);
        if (f && !(jt->times[f] > jt->times[f - 1]))
            return kb_fail(err, KB_ENOTSORTED, KB_ARG_TIMES, 0, f);
        if (!isfinite(q[0] + q[1] + q[2] + q[3]) || !isfinite(x[0] + x[1] + x[2]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_VALUES, 0, f);
        if (q[0] == 0.0 && q[1] == 0.0 && q[2] == 0.0 && q[3] == 0.0)  /* no rotation */
            return kb_fail(err, KB_EZERONORM, KB_ARG_VALUES, 0, f);
    }
    return KB_OK;
}

/* Key frames must rise from the first frame to the last. */
static kb_status check_keys(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K,
                            kb_error *err)
{
    if (K < 2 || K > jt->n_frames || keys[0] != 0 || keys[K - 1] != jt->n_frames - 1)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_TIMES, 0, -1);
    for (ptrdiff_t k = 1; k < K; k++)
        if (keys[k] <= keys[k - 1])
            return kb_fail(err, KB_ENOTSORTED, KB_ARG_TIMES, 0, k);
    return KB_OK;
}

kb_status kb_reduce_rebuild(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n_keys,
                            const double *rotation_tcb, const double *translation_tcb,
                            double *rotations, double *translations, double *angle,
                            double *distance, kb_error *err)
{
    kb_status status = validate(jt, err);
    if (status == KB_OK)
        status = check_keys(jt, keys, n_keys, err);
    if (status != KB_OK)
        return status;
    ptrdiff_t F = jt->n_frames;
    space s;
    void *block = space_alloc(&s, F, 0);
    if (!block)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    status = channel_errors(jt, 1, keys, n_keys, rotation_tcb, 0, F - 1, angle, NULL, &s, err);
    if (status == KB_OK) {
        memcpy(rotations, s.out, (size_t)(4 * F) * sizeof(double));
        if (translations || distance)
            status = channel_errors(jt, 0, keys, n_keys, translation_tcb, 0, F - 1, distance,
                                    NULL, &s, err);
    }
    if (status == KB_OK && translations)
        memcpy(translations, s.out, (size_t)(3 * F) * sizeof(double));
    free(block);
    return status == KB_OK ? kb_ok(err) : status;
}

kb_status kb_reduce_errors(const kb_reduce_joint *jt, const double *rotations,
                           const double *translations, double *angle, double *distance,
                           kb_error *err)
{
    kb_status status = validate(jt, err);
    if (status != KB_OK)
        return status;
    const space plain = {.halves = 0};  /* the errors themselves */
    if (angle)
        rotation_errors(jt, rotations, NULL, 0, jt->n_frames, angle, NULL, &plain);
    if (translations && distance)
        translation_errors(jt, translations, NULL, 0, jt->n_frames, distance, NULL);
    return kb_ok(err);
}

void kb_reduce_errors_unchecked(const kb_reduce_joint *jt, const double *rotations,
                                const double *translations, double *angle, double *distance)
{
    const space plain = {.halves = 0};
    if (angle)
        rotation_errors(jt, rotations, NULL, 0, jt->n_frames, angle, NULL, &plain);
    if (translations && distance)
        translation_errors(jt, translations, NULL, 0, jt->n_frames, distance, NULL);
}

/* Refuses row i / 3 of a fit's parameters (track `track`), entry i % 3:
 * a TCB outside [-1, 1] named by its parameter, a tangent
 * key's that is not finite as a tangent. */
static kb_status refuse_row(const kb_reduce_joint *jt, ptrdiff_t i, ptrdiff_t track,
                            kb_error *err)
{
    if (jt->tangent_keys)
        return kb_fail(err, KB_ENONFINITE, KB_ARG_TANGENTS, track, i / 3);
    return kb_fail(err, KB_ERANGE, (kb_arg)(KB_ARG_TENSION + i % 3), track, i / 3);
}

/* How many keys on each side of a key its tangent hangs on: KB tangents
 * on one (the chords to its neighbours), a tangent key's on none (given),
 * so that a tangent key's segment is shaped by its own two keys alone
 * and every window below is that much narrower.  Only where the keys
 * have rows: keys without (NULL: greedy keys) have KB tangents, whatever
 * jt says.  The fits' keys always have them. */
static ptrdiff_t tangent_reach(const kb_reduce_joint *jt, const double *rows)
{
    return jt->tangent_keys && rows ? 0 : 1;
}

/* Whether two neighbouring keys' quaternions are orthogonal within
 * rounding, so that a window's signs may not follow the whole spline's
 * (see signs_follow, whose dot is with the unit key before: zero only
 * where this one is within rounding of it). */
static int orthogonal_neighbours(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K)
{
    for (ptrdiff_t k = 1; k < K; k++) {
        const double *a = jt->rotations + 4 * keys[k - 1], *b = jt->rotations + 4 * keys[k];
        double dot = kb_qdot(a, b);
        if (!(dot * dot > 1e-24 * kb_qdot(a, a) * kb_qdot(b, b)))
            return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- */
/* Greedy selection                                                  */
/* ---------------------------------------------------------------- */

/* A segment's worst frame; the heap pops the worst score first, then the
 * earliest frame.  `entry` tells a segment's latest record from stale ones. */
typedef struct {
    double score;
    ptrdiff_t worst, start;
    ptrdiff_t entry;
} candidate;

static int pops_first(const candidate *a, const candidate *b)
{
    if (a->score != b->score)
        return a->score > b->score;
    return a->worst != b->worst ? a->worst < b->worst : a->entry < b->entry;
}

static void heap_push(candidate *heap, ptrdiff_t *size, candidate c)
{
    ptrdiff_t i = (*size)++;
    while (i > 0 && pops_first(&c, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = c;
}

static candidate heap_pop(candidate *heap, ptrdiff_t *size)
{
    candidate top = heap[0], last = heap[--*size];
    ptrdiff_t i = 0, n = *size;
    for (;;) {
        ptrdiff_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && pops_first(&heap[child + 1], &heap[child]))
            child++;
        if (!pops_first(&heap[child], &last))
            break;
        heap[i] = heap[child];
        i = child;
    }
    if (n)
        heap[i] = last;
    return top;
}

typedef struct {
    ptrdiff_t *prev, *next, *latest;
    candidate *heap;
    ptrdiff_t heap_size, entries;
    double floor;
} greedy_state;

/* A frame's score from the halves of its rotation error (s->halves). */
static double halves_score(const kb_reduce_joint *jt, const space *s, ptrdiff_t f)
{
    return fmax(kb_rotation_angle(s->angle[f], s->cosine[f]) / jt->angle_tolerance, 0.0);
}

/* The first frame of the highest score in [a, end); with s->halves, of the
 * highest ratio of sine to cosine (the angles' order, without an
 * arctangent a frame), and by score where its score is within rounding
 * below the floor, so that no frame a rounding above it is left unkeyed. */
static ptrdiff_t segment_worst(const kb_reduce_joint *jt, const space *s, double floor,
                               ptrdiff_t a, ptrdiff_t end)
{
    ptrdiff_t worst = a;
    for (ptrdiff_t f = a + 1; f < end; f++)
        if (s->score[f] > s->score[worst])
            worst = f;
    if (!s->halves)
        return worst;
    double worst_score = halves_score(jt, s, worst);
    if (!(worst_score <= floor && worst_score >= floor * (1 - 1e-9)))
        return worst;
    worst_score = halves_score(jt, s, worst = a);
    for (ptrdiff_t f = a + 1; f < end; f++) {
        double score = halves_score(jt, s, f);
        if (score > worst_score) {
            worst = f;
            worst_score = score;
        }
    }
    return worst;
}

/* Pushes the worst frame of each segment between keys a and b. */
static void push_segments(greedy_state *g, const kb_reduce_joint *jt, const space *s,
                          ptrdiff_t a, ptrdiff_t b)
{
    for (; a != b; a = g->next[a]) {
        ptrdiff_t worst = segment_worst(jt, s, g->floor, a, g->next[a]);
        double score = s->halves ? halves_score(jt, s, worst) : s->score[worst];
        g->latest[a] = ++g->entries;
        heap_push(g->heap, &g->heap_size, (candidate){score, worst, a, g->entries});
    }
}

/* Links the keys of the first and last frames and of order[0..n) (interior
 * frames, each once: else 0) and writes them ascending into sorted;
 * their count. */
static ptrdiff_t link_keys(greedy_state *g, ptrdiff_t F, const ptrdiff_t *order, ptrdiff_t n,
                           ptrdiff_t *sorted)
{
    memset(sorted, 0, (size_t)F * sizeof(ptrdiff_t));  /* marks, then the keys */
    sorted[0] = sorted[F - 1] = 1;
    for (ptrdiff_t i = 0; i < n; i++) {
        if (order[i] <= 0 || order[i] >= F - 1 || sorted[order[i]])
            return 0;
        sorted[order[i]] = 1;
    }
    ptrdiff_t K = 0;
    for (ptrdiff_t f = 0; f < F; f++)
        if (sorted[f])
            sorted[K++] = f;
    for (ptrdiff_t k = 0; k + 1 < K; k++) {
        g->next[sorted[k]] = sorted[k + 1];
        g->prev[sorted[k + 1]] = sorted[k];
    }
    return K;
}

/* The greedy selection until no score is above `floor`: the keys and their
 * count (keys, n_keys; NULL to skip), the frames in the order they were
 * keyed and each one's score then (order, order_score, n_order; NULL to
 * skip; on entry the first *n_order of order are keyed already, as a run
 * to a higher floor keyed them), and the final errors (angle, distance;
 * NULL to skip).  A run continued from an earlier one's keys is that run
 * carried on: the errors of splines through all its keys at once are
 * those its windows gave, bit for bit, and the heap then holds the same
 * worst frame of each segment. */
static kb_status greedy(const kb_reduce_joint *jt, double floor, ptrdiff_t *keys,
                        ptrdiff_t *n_keys, ptrdiff_t *order, double *order_score,
                        ptrdiff_t *n_order, double *angle, double *distance, kb_error *err)
{
    kb_status status = validate(jt, err);
    if (status != KB_OK)
        return status;
    if (!(floor > 0))
        return kb_fail(err, KB_ERANGE, KB_ARG_NONE, -1, -1);
    ptrdiff_t F = jt->n_frames, n_keyed = order ? *n_order : 0;
    if (n_keyed < 0 || n_keyed > F - 2)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_TIMES, 0, -1);
    space s;
    size_t extra = (size_t)F * (4 * sizeof(ptrdiff_t) + 5 * sizeof(candidate));
    void *block = space_alloc(&s, F, extra);
    if (!block)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    s.keys_checked = keys_pass(jt);  /* its TCB are zero */
    /* the ratios order the angles as the arctangents do (up to rounding,
     * which segment_worst minds near the floor) but for ratios below the
     * normal range: so not where they could matter, scores of angles below
     * 2^-900 radians */
    s.halves = isfinite(jt->angle_tolerance) && !isfinite(jt->distance_tolerance) &&
               jt->angle_tolerance * floor > 0x1p-900;
    greedy_state g = {.heap_size = 0, .entries = 0, .floor = floor};
    g.prev = (ptrdiff_t *)(s.kind + F + (8 - (size_t)F % 8) % 8);
    g.next = g.prev + F;
    g.latest = g.next + F;
    ptrdiff_t *sorted = g.latest + F;
    g.heap = (candidate *)(sorted + F);
    ptrdiff_t window[7], K = link_keys(&g, F, order, n_keyed, sorted);
    if (!K) {
        free(block);
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_TIMES, 0, -1);
    }
    status = joint_errors(jt, sorted, K, NULL, NULL, 0, F - 1, &s, err);
    /* Where two neighbouring keys' rotations have a dot of exactly zero,
     * the second keeps its sign whatever the first's (unit_keys), so the
     * chord between them turns with the signs of all the keys before: a
     * key added anywhere before may change the segments beside them, and
     * a window of keys is no longer the whole spline (signs_follow).  From
     * the first such pair on, every key added evaluates the whole spline. */
    int whole = !s.signs_follow;
    if (status == KB_OK)
        push_segments(&g, jt, &s, 0, F - 1);
    while (status == KB_OK && g.heap_size) {
        candidate c = heap_pop(g.heap, &g.heap_size);
        if (g.latest[c.start] != c.entry)
            continue;  /* the segment was split or scored again since */
        if (!(c.score > floor) || c.worst == c.start)
            break;
        ptrdiff_t w = c.worst, b = g.next[c.start];
        if (order) {
            order[n_keyed] = w;
            order_score[n_keyed] = c.score;
        }
        n_keyed++;
        g.next[c.start] = w;
        g.prev[w] = c.start;
        g.next[w] = b;
        g.prev[b] = w;
        /* the keys that shape the changed frames: three on each side */
        ptrdiff_t lo = w, hi = w, before = 0, after = 0, n = 0;
        while (before < 3 && lo != 0) {
            lo = g.prev[lo];
            before++;
        }
        while (after < 3 && hi != F - 1) {
            hi = g.next[hi];
            after++;
        }
        for (ptrdiff_t k = lo;; k = g.next[k]) {
            window[n++] = k;
            if (k == hi)
                break;
        }
        ptrdiff_t first = window[before >= 2 ? before - 2 : 0];
        ptrdiff_t last = window[after >= 2 ? before + 2 : n - 1];
        if (!whole) {
            s.signs_follow = 1;
            status = joint_errors(jt, window, n, NULL, NULL, first, last, &s, err);
            whole = status == KB_OK && !s.signs_follow;
        }
        if (whole && status == KB_OK) {
            ptrdiff_t all = 0;
            for (ptrdiff_t k = 0;; k = g.next[k]) {
                sorted[all++] = k;
                if (k == F - 1)
                    break;
            }
            first = 0;
            last = F - 1;
            status = joint_errors(jt, sorted, all, NULL, NULL, first, last, &s, err);
            g.heap_size = 0;  /* every segment is pushed again: the heap's records are stale */
        }
        if (status == KB_OK)
            push_segments(&g, jt, &s, first, last);
    }
    ptrdiff_t n = 0, *found = g.latest;  /* the heap's records are no longer needed */
    for (ptrdiff_t k = 0; status == KB_OK; k = g.next[k]) {
        found[n++] = k;
        if (k == F - 1)
            break;
    }
    if (status == KB_OK && (angle || distance))
        status = skipped_errors(jt, found, n, NULL, NULL, &s, err);
    if (status == KB_OK && (angle || distance))
        status = key_errors(jt, found, n, NULL, NULL, &s, err);
    if (status == KB_OK) {
        if (keys) {
            memcpy(keys, found, (size_t)n * sizeof(ptrdiff_t));
            *n_keys = n;
        }
        if (order)
            *n_order = n_keyed;
        for (ptrdiff_t f = 0; angle && f < F; f++)
            angle[f] = s.halves ? kb_rotation_angle(s.angle[f], s.cosine[f]) : s.angle[f];
        if (distance)
            memcpy(distance, s.distance, (size_t)F * sizeof(double));
    }
    free(block);
    return status == KB_OK ? kb_ok(err) : status;
}

kb_status kb_reduce_greedy(const kb_reduce_joint *jt, ptrdiff_t *keys, ptrdiff_t *n_keys,
                           double *angle, double *distance, kb_error *err)
{
    return greedy(jt, 1.0, keys, n_keys, NULL, NULL, NULL, angle, distance, err);
}

kb_status kb_reduce_greedy_order(const kb_reduce_joint *jt, double floor, ptrdiff_t *order,
                                 double *order_score, ptrdiff_t *n_order, kb_error *err)
{
    return greedy(jt, floor, NULL, NULL, order, order_score, n_order, NULL, NULL, err);
}

/* ---------------------------------------------------------------- */
/* Fitted keys                                                       */
/* ---------------------------------------------------------------- */

/* Work of the Levenberg-Marquardt fit of one channel with up to F keys. */
typedef struct {
    double *slope;    /* (K - 1, 2, 6, 3): d (T0, T1) / d TCB of keys s and s + 1 (closed_jacobian) */
    double *basis;    /* (m, 2): each weighed frame's tangent bases (tangent_bases) */
    double *sums;     /* (K - 1, 3): each segment's sums of their products */
    double *normal;   /* (3K, BAND) lower band of the normal matrix: [i][d] = N(i, i - d) */
    double *chol;     /* (3K, BAND) its damped LDL^T factor, same layout (damped_solve) */
    double *gradient, *diagonal, *step, *trial;  /* (3K) each */
    ptrdiff_t *at;         /* (m) the frames the fit weighs (weigh_frames) */
    double *at_times;      /* (m) their times */
    ptrdiff_t *seg_start;  /* (K) the first of them in each segment; [K - 1] = m */
    const double *chord, *dt;  /* (K - 1, 3), (K - 1): each segment's chord and duration (chords) */
    double *chord_store, *dt_store;  /* the translation's */
    ptrdiff_t per_segment; /* frames weighed per segment besides its first */
    double *model_tcb;     /* (3F): model_fit's TCB */
} fit_space;

/* damped_solve for tangent keys, whose normal matrix (tangent_normal) is
 * not zero only on its diagonal and between the like components of
 * neighbouring keys (3 apart): three tridiagonal systems, a component's
 * each, interleaved (so three chains of dependent operations, not one).
 * The general solve's other terms are products with zeros: the same bits,
 * but for a zero step's sign, which no tangent plus the step sees (none is
 * -0: the fits' starts are not, nor is any sum with a +0 in it). */
static int tangent_solve(const fit_space *w, ptrdiff_t first, ptrdiff_t last, double damping)
{
    double *L = w->chol, *x = w->step;  /* L[i * BAND] = 1 / D(i), L[i * BAND + 3] = L(i, i - 3) */
    const double *N = w->normal;
    /* the factor and L y = -g row by row (a failed factor's rows of y are
     * written again by the next solve, and only those) */
    for (ptrdiff_t i = first; i < last; i++) {
        double d = N[i * BAND] + damping * w->diagonal[i], y = -w->gradient[i];
        if (i - first >= 3) {
            L[i * BAND + 3] = N[i * BAND + 3] * L[(i - 3) * BAND];
            d -= N[i * BAND + 3] * L[i * BAND + 3];
            y -= L[i * BAND + 3] * x[i - 3];
        }
        if (!(d > 0 && d <= DBL_MAX))  /* positive and finite */
            return 0;
        L[i * BAND] = 1.0 / d;
        x[i] = y;
    }
    for (ptrdiff_t i = last - 1; i >= first; i--)  /* L^T x = D^-1 y */
        x[i] = i + 3 < last ? x[i] * L[i * BAND] - L[(i + 3) * BAND + 3] * x[i + 3]
                            : x[i] * L[i * BAND];
    return 1;
}

static double sum_squares(const double *x, ptrdiff_t n)
{
    double s = 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        s += x[i] * x[i];
    return s;
}

/* The part of a fit that moves: the TCB of keys [lo, hi] (the others fixed)
 * against the frames [first, last] they shape. */
typedef struct {
    ptrdiff_t lo, hi, first, last;
} fit_range;

/* How many of a segment's `inner` frames between its keys a fit weighs,
 * per_segment at most, and the i-th's offset among them (see weigh_frames). */
static ptrdiff_t weighed_count(ptrdiff_t inner, ptrdiff_t per_segment)
{
    return inner > per_segment ? per_segment : inner;
}

static ptrdiff_t weighed_offset(ptrdiff_t inner, ptrdiff_t count, ptrdiff_t i)
{
    return inner == count ? i : (2 * i + 1) * inner / (2 * count);
}

/* The frames of range r a fit weighs, into w->at (and their times,
 * segments and each segment's first, w->seg_start): of each segment up to
 * w->per_segment frames between its keys, evenly spaced (every one where
 * it has no more).  Frames a few apart move together, so a few fit the
 * TCB about as well as all (see FIT_PER_SEGMENT); kb_reduce_fit checks
 * the tolerances at every frame.  The keys themselves carry no weight:
 * the curve passes through them whatever the TCB.  Returns how many. */
static ptrdiff_t weigh_frames(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K,
                              fit_range r, fit_space *w)
{
    ptrdiff_t m = 0;
    for (ptrdiff_t s = 0; s + 1 < K; s++) {
        w->seg_start[s] = m;
        ptrdiff_t start = keys[s], inner = keys[s + 1] - start - 1;
        ptrdiff_t count = weighed_count(inner, w->per_segment);
        for (ptrdiff_t i = 0; i < count; i++) {
            ptrdiff_t f = start + 1 + weighed_offset(inner, count, i);
            if (f < r.first || f > r.last)
                continue;
            w->at[m] = f;
            w->at_times[m++] = jt->times[f];
        }
    }
    w->seg_start[K - 1] = m;
    return m;
}

/* Each segment's chord in its tangents' space and duration, as w->chord
 * and w->dt: the rotation's logs as prepare_keys took them (s->chords),
 * the translation's differences here. */
static void chords(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys, ptrdiff_t K,
                   const space *s, fit_space *w)
{
    if (rotation) {
        w->chord = s->chords.tchord;
        w->dt = s->chords.dt;
        return;
    }
    w->chord = w->chord_store;
    w->dt = w->dt_store;
    for (ptrdiff_t i = 0; i + 1 < K; i++) {
        const double *a = jt->translations + 3 * keys[i], *b = jt->translations + 3 * keys[i + 1];
        w->dt_store[i] = jt->times[keys[i + 1]] - jt->times[keys[i]];
        for (int c = 0; c < 3; c++)
            w->chord_store[3 * i + c] = b[c] - a[c];
    }
}

/* Each weighed frame's Hermite bases of its segment's start and end
 * tangents (per u), h0 = u (1 - u)^2 and h1 = -u^2 (1 - u), into w->basis,
 * and each segment's sums of h0^2, h0 h1 and h1^2 into w->sums: the curve
 * at a frame moves by h0 dT0 + h1 dT1 as the tangents do. */
static void tangent_bases(const double *times, const ptrdiff_t *keys, ptrdiff_t K, fit_space *w)
{
    for (ptrdiff_t seg = 0; seg + 1 < K; seg++) {
        double t0 = times[keys[seg]], *sum = w->sums + 3 * seg;
        sum[0] = sum[1] = sum[2] = 0.0;
        for (ptrdiff_t j = w->seg_start[seg]; j < w->seg_start[seg + 1]; j++) {
            double u = (w->at_times[j] - t0) / w->dt[seg], v = 1.0 - u;
            double h0 = u * v * v, h1 = -u * u * v;
            w->basis[2 * j] = h0;
            w->basis[2 * j + 1] = h1;
            sum[0] += h0 * h0;
            sum[1] += h0 * h1;
            sum[2] += h1 * h1;
        }
    }
}

/* Whether key k of K moves in a fit of range r: not a fixed key, nor a
 * natural end (which takes no TCB of its own; a tangent key's end has its
 * tangent). */
static int key_moves(ptrdiff_t k, ptrdiff_t K, fit_range r, const fit_space *w)
{
    (void)K, (void)w;
    return k >= r.lo && k <= r.hi;
}

/* Segment seg's share of closed_jacobian's J^T J with tangent keys, its
 * rows_from to rows_to (see there): their derivatives are h times the
 * identity, so each component of a tangent pairs with its own alone, and
 * only the diagonal and the two keys' like components (3 apart) are not
 * zero.  The general products' sums without their zero terms: the same
 * bits, as adding zeros (all +0 or -0 products of the bases' finite sums)
 * to these changes none. */
static void tangent_normal(ptrdiff_t seg, const double *sum, double h, int rows_from,
                           int rows_to, fit_space *w)
{
    const double hh = h * h;
    for (int a = rows_from; a < rows_to; a++)
        w->normal[(3 * seg + a) * BAND] += (a < 3 ? sum[0] : sum[2]) * hh;
    for (int c = 0; rows_from == 0 && rows_to == 6 && c < 3; c++)
        w->normal[(3 * seg + 3 + c) * BAND + 3] += sum[1] * hh;
}

/* Segment seg's share of closed_jacobian with tangent keys: its slopes, h
 * times the identity for a key that moves (else zero), of which gradient
 * reads the diagonals alone (d0[a][a], d1[3 + a][a]: h as h * 1.0 is, or
 * the general path's zero; the others are not written), and its share of
 * J^T J (tangent_normal; none where no frame of it is weighed). */
static void tangent_slopes(ptrdiff_t seg, ptrdiff_t K, double h, fit_range r, fit_space *w)
{
    double (*d0)[3] = (double (*)[3])(w->slope + 36 * seg), (*d1)[3] = d0 + 6;
    int from = key_moves(seg, K, r, w), to = key_moves(seg + 1, K, r, w);
    for (int a = 0; a < 3; a++) {
        d0[a][a] = from ? h : 0.0;
        d1[3 + a][a] = to ? h : 0.0;
    }
    if (w->seg_start[seg] != w->seg_start[seg + 1])
        tangent_normal(seg, w->sums + 3 * seg, h, from ? 0 : 3, to ? 6 : 3, w);
}

/* The residual's derivatives in the free keys' tangents, and from them the
 * normal matrix J^T J (lower band).  The translation's Hermite cubic is
 * linear in its tangents (exact); the rotation's squad is taken as that
 * cubic in log space, exact at the keys and to first order in the
 * segment's angle; scale is the residual's change per change of the curve
 * (2 for rotations: twice the log).  A frame's row is h0 dT0 + h1 dT1
 * (tangent_bases), so J^T J needs only each segment's sums of the bases'
 * products (tangent_slopes). */
static void closed_jacobian(ptrdiff_t K, double scale, fit_range r, fit_space *w)
{
    memset(w->normal, 0, (size_t)(3 * K * BAND) * sizeof(double));
    for (ptrdiff_t seg = 0; seg + 1 < K; seg++)
        tangent_slopes(seg, K, scale * w->dt[seg], r, w);
}

/* The gradient J^T r at the frames weighed (closed_jacobian): per segment,
 * its tangents' derivatives against the residuals summed with the bases
 * as weights.  A fixed key's rows stay zero, so its step is zero.  Tangent
 * keys' rows take their own component's product alone, the others' being
 * zeros (at a residual not finite, NaN, where no step lowers the error). */
static void gradient(ptrdiff_t K, const double *residual, fit_space *w)
{
    memset(w->gradient, 0, (size_t)(3 * K) * sizeof(double));
    for (ptrdiff_t seg = 0; seg + 1 < K; seg++) {
        double r0[3] = {0, 0, 0}, r1[3] = {0, 0, 0};
        for (ptrdiff_t j = w->seg_start[seg]; j < w->seg_start[seg + 1]; j++)
            for (int c = 0; c < 3; c++) {
                r0[c] += w->basis[2 * j] * residual[3 * j + c];
                r1[c] += w->basis[2 * j + 1] * residual[3 * j + c];
            }
        const double (*d0)[3] = (const double (*)[3])(w->slope + 36 * seg), (*d1)[3] = d0 + 6;
        for (int a = 0; a < 3; a++) {  /* h I: see tangent_normal */
            w->gradient[3 * seg + a] += d0[a][a] * r0[a];
            w->gradient[3 * seg + 3 + a] += d1[3 + a][a] * r1[a];
        }
    }
}

/* What a fit of one channel works on: its rows that move [first, last)
 * of n, its m residuals (three per frame weighed, in s->residual at the
 * TCB it starts from) and their squared sum. */
typedef struct {
    ptrdiff_t n, m, first, last;
    double error;
} fit_problem;

/* A fit's start (for fit_channel and model_fit): the frames it weighs,
 * the keys prepared, the residual at tcb, each segment's chord and the
 * frames' bases; 0 where there is nothing to fit (no key that moves, no
 * frame between keys to weigh) or *status is not KB_OK. */
static int fit_begin(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                     ptrdiff_t K, const double *tcb, fit_range r, fit_space *w, space *s,
                     fit_problem *p, kb_status *status, kb_error *err)
{
    ptrdiff_t frames = weigh_frames(jt, keys, K, r, w);
    p->n = 3 * K;
    p->m = 3 * frames;
    /* the keys stay: their chords and the frames' places are taken once */
    *status = prepare_keys(jt, rotation, keys, K, tcb, w->at_times, frames, s, err);
    if (*status == KB_OK)
        *status = spline_errors(jt, rotation, K, tcb, w->at, w->at_times, 0, frames, NULL,
                                s->residual, s, err);
    p->error = sum_squares(s->residual, p->m);
    chords(jt, rotation, keys, K, s, w);
    tangent_bases(jt->times, keys, K, w);
    p->first = 3 * r.lo;  /* the rows of the keys that move */
    p->last = 3 * (r.hi < K - 1 ? r.hi + 1 : K);
    memset(w->step, 0, (size_t)p->n * sizeof(double));
    return *status == KB_OK && p->first < p->last && frames;
}

/* The normal equations' damping weights (their diagonal, kept off zero). */
static void damping_weights(const fit_problem *p, fit_space *w)
{
    double trace = 0.0;
    for (ptrdiff_t i = 0; i < p->n; i++)
        trace += w->normal[i * BAND];
    for (ptrdiff_t i = 0; i < p->n; i++)
        w->diagonal[i] = w->normal[i * BAND] + 1e-12 * (trace / (double)p->n + 1e-300);
}

/* The damped step from the tangents tcb into
 * w->trial: 1, or 0 where the damped matrix is not positive definite, or
 * -1 where the step is shorter than FIT_SMALLEST_STEP (converged). */
static int damped_trial(const fit_problem *p, const double *tcb, double damping, fit_space *w)
{
    if (!tangent_solve(w, p->first, p->last, damping))
        return 0;
    double largest = 0.0;
    for (ptrdiff_t i = 0; i < p->n; i++) {
        w->trial[i] = tcb[i] + w->step[i];
        largest = larger(largest, fabs(w->trial[i] - tcb[i]));
    }
    return largest < FIT_SMALLEST_STEP ? -1 : 1;
}

/* model_residual with tangent keys, whose change is the tangent's own on
 * both sides of a key and which have no natural ends' terms: the same
 * products and sums, each key's change taken in its two segments. */
static void tangent_model_residual(ptrdiff_t K, const double *from, const double *to,
                                   const double *from_residual, double scale, fit_range r,
                                   const fit_space *w, double *moved)
{
    int moves[2] = {0, key_moves(0, K, r, w)};
    for (ptrdiff_t seg = 0; seg + 1 < K; seg++) {
        const ptrdiff_t first = w->seg_start[seg], last = w->seg_start[seg + 1];
        moves[0] = moves[1];
        moves[1] = key_moves(seg + 1, K, r, w);
        if (!(moves[0] || moves[1])) {  /* nothing moves these frames */
            memcpy(moved + 3 * first, from_residual + 3 * first,
                   (size_t)(3 * (last - first)) * sizeof(double));
            continue;
        }
        const double h = scale * w->dt[seg], *a = from + 3 * seg, *b = to + 3 * seg;
        double T0[3], T1[3];
        for (int c = 0; c < 3; c++) {
            T0[c] = moves[0] ? h * (b[c] - a[c]) : 0.0;
            T1[c] = moves[1] ? h * (b[3 + c] - a[3 + c]) : 0.0;
        }
        for (ptrdiff_t j = first; j < last; j++)
            for (int c = 0; c < 3; c++)
                moved[3 * j + c] = from_residual[3 * j + c] + w->basis[2 * j] * T0[c]
                                 + w->basis[2 * j + 1] * T1[c];
    }
}

/* One channel's tangents (K, 3) fitted from their values in tcb:
 * Levenberg-Marquardt steps on the residual's model
 * (tangent_model_residual), whose Jacobian is closed_jacobian's, each
 * taken only where the model's squared error falls, up to `steps` or until
 * a step lowers it by less than `gain` of it.  The model's optimum is kept
 * unchecked: the drops evaluate every frame a fit changes against the
 * tolerances anyway.  With worst (NULL to skip), the largest norm of the
 * model's residual at the frames weighed, at the tangents kept (0 where
 * nothing is fitted). */
static kb_status model_fit(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                           ptrdiff_t K, double *tcb, fit_range r, int steps, double gain,
                           fit_space *w, space *s, double *worst, kb_error *err)
{
    fit_problem p;
    kb_status status;
    if (worst)
        *worst = 0.0;
    if (!fit_begin(jt, rotation, keys, K, tcb, r, w, s, &p, &status, err))
        return status;
    const double scale = rotation ? 2.0 : 1.0;  /* the residual is twice the rotation's log */
    /* the model's residual starts as the spline's (fit_begin's) */
    double *at = w->model_tcb, *model = s->residual, *moved = s->moved;
    memcpy(at, tcb, (size_t)p.n * sizeof(double));
    double error = p.error, damping = FIT_FIRST_DAMPING;
    int stepped = 0;
    for (int it = 0; it < steps; it++) {
        if (it == 0) {  /* the same at any tangents */
            closed_jacobian(K, scale, r, w);
            damping_weights(&p, w);
        }
        gradient(K, model, w);
        int taken = 0, settled = 0;
        for (; damping < 1e9; damping *= 10) {
            int trial = damped_trial(&p, at, damping, w);
            if (trial < 0) {
                settled = 1;
                break;
            }
            if (!trial)
                continue;
            tangent_model_residual(K, at, w->trial, model, scale, r, w, moved);
            double lower = sum_squares(moved, p.m);
            if (lower < error) {
                settled = error - lower < gain * error;
                memcpy(at, w->trial, (size_t)p.n * sizeof(double));
                double *swap = model;
                model = moved;
                moved = swap;
                error = lower;
                damping = fmax(damping / 3, 1e-9);
                taken = stepped = 1;
                break;
            }
        }
        if (!taken || settled)
            break;
    }
    for (ptrdiff_t i = 0; worst && i < p.m; i += 3)
        *worst = larger(*worst, model[i] * model[i] + model[i + 1] * model[i + 1]
                                   + model[i + 2] * model[i + 2]);
    if (worst)
        *worst = sqrt(*worst);
    if (stepped)
        memcpy(tcb, at, (size_t)p.n * sizeof(double));
    return status;
}

/* The bytes of a fit_space of F frames (fit_place). */
static size_t fit_bytes(ptrdiff_t F)
{
    size_t n = (size_t)F;
    return (41 * n + 2 * 3 * n * BAND + 5 * 3 * n + n + 4 * n) * sizeof(double)
           + 2 * n * sizeof(ptrdiff_t);
}

/* A fit_space for jt in fit_bytes(n_frames) at d (aligned for doubles). */
static void fit_place(fit_space *w, const kb_reduce_joint *jt, ptrdiff_t per_segment, double *d)
{
    w->per_segment = per_segment;
    size_t n = (size_t)jt->n_frames;
    w->slope = d;
    w->basis = w->slope + 36 * n;
    w->sums = w->basis + 2 * n;
    w->normal = w->sums + 3 * n;
    w->chol = w->normal + 3 * n * BAND;
    w->gradient = w->chol + 3 * n * BAND;
    w->diagonal = w->gradient + 3 * n;
    w->step = w->diagonal + 3 * n;
    w->trial = w->step + 3 * n;
    w->at_times = w->trial + 3 * n;
    w->chord_store = w->at_times + n;
    w->dt_store = w->chord_store + 3 * n;
    w->model_tcb = w->dt_store + n;
    w->at = (ptrdiff_t *)(w->model_tcb + 3 * n);
    w->seg_start = w->at + n;
}

/* The fit of one joint: its keys, their TCB per channel, and the work. */
typedef struct {
    const kb_reduce_joint *jt;
    ptrdiff_t *keys, K;
    double *tcb[2];         /* (K, 3): rotation, translation */
    ptrdiff_t *spare_keys;
    double *spare_tcb[2];
    int channels;           /* 1: rotation only (distance_tolerance infinite), 2: both */
    unsigned char *mark;    /* (F): keys to fit again (refit_near) */
    unsigned char *near;    /* (F): frames of keys beside a dropped one */
    ptrdiff_t *backup_keys; /* (F) and (F, 3) each: the keys before a trial (drop_refitted) */
    double *backup_tcb[2];
    unsigned char *restore; /* (F): keys whose TCB a failed trial restores */
    kb_drop_memory *memory; /* drops that failed: the caller's, or this call's alone */
    double *model_worst;    /* (F, 2): the drops' refits' (refit_near) */
    space s;
    fit_space w;
} joint_fit;

/* Each frame's worst error relative to its tolerance, into s.score (the
 * errors of each channel of finite tolerance in s.angle, s.distance), for
 * these keys and tangents, and the worst of them. */
static kb_status fit_score(joint_fit *j, const ptrdiff_t *keys, ptrdiff_t K, double *const tcb[2],
                           double *worst, kb_error *err)
{
    ptrdiff_t F = j->jt->n_frames;
    kb_status status = joint_errors(j->jt, keys, K, tcb[0], j->channels > 1 ? tcb[1] : NULL, 0,
                                    F - 1, &j->s, err);
    *worst = 0.0;
    for (ptrdiff_t f = 0; f < F; f++)
        *worst = larger(*worst, j->s.score[f]);
    return status;
}

/* Whether any frame of the whole spline through these keys is out of
 * tolerance (0 on an error, in *status).  Where two neighbouring keys'
 * rotations are (about) orthogonal, the chord between them turns with the
 * signs of every key before (see signs_follow), so a change of keys
 * anywhere may move frames far from it: the drops check the whole spline
 * then, and undo what leaves a frame out of tolerance. */
static int worse_than_tolerance(joint_fit *j, const ptrdiff_t *keys, ptrdiff_t K,
                                double *const tcb[2], kb_status *status, kb_error *err)
{
    double worst;
    *status = fit_score(j, keys, K, tcb, &worst, err);
    return *status == KB_OK && !(worst <= 1.0);
}

/* Fits again only the keys within `near` of a marked one (mark[i]), each
 * run of them against the frames they shape, on the window of keys two
 * beyond the run (one for tangent keys): a key's tangent hangs on its
 * neighbours alone (tangent_reach), so the window's spline is the whole
 * one there (up to a sign of every key, which the residual does not see).
 * The other keys' TCB stay.  With model_worst (NULL to skip), each refitted
 * key's run's worst error per channel (F, 2: rotation, translation) as the
 * fits' models give it at the frames they weigh (see DROP_MODEL_MARGIN). */
static kb_status refit_near(joint_fit *j, double *const tcb[2], const unsigned char *mark,
                            ptrdiff_t near, int steps, double *model_worst, kb_error *err)
{
    const ptrdiff_t K = j->K, beyond = 1 + tangent_reach(j->jt, j->tcb[0]);
    kb_status status = KB_OK;
    for (ptrdiff_t i = 0; i < K && status == KB_OK; i++) {
        if (!mark[i])
            continue;
        ptrdiff_t lo = i >= near ? i - near : 0, hi = i + near;
        for (ptrdiff_t k = i + 1; k < K && k <= hi + 1; k++)  /* runs that touch merge */
            if (mark[k])
                hi = k + near;
        hi = hi < K - 1 ? hi : K - 1;
        i = hi;
        ptrdiff_t a = lo >= beyond ? lo - beyond : 0;
        ptrdiff_t b = hi + beyond < K - 1 ? hi + beyond : K - 1;
        fit_range r = {lo - a, hi - a, j->keys[lo >= 1 ? lo - 1 : 0],
                       j->keys[hi + 1 < K - 1 ? hi + 1 : K - 1]};
        double worst[2] = {0.0, 0.0};
        for (int c = 0; c < j->channels && status == KB_OK; c++)
            status = model_fit(j->jt, c == 0, j->keys + a, b - a + 1, tcb[c] + 3 * a, r,
                               FIT_MODEL_STEPS * steps, FIT_MODEL_GAIN, &j->w, &j->s,
                               model_worst ? worst + c : NULL, err);
        for (ptrdiff_t k = lo; model_worst && k <= hi; k++)
            memcpy(model_worst + 2 * k, worst, sizeof worst);
    }
    return status;
}

/* The step of one channel from frame f to f + 1 per time: for rotations
 * the log of the relative rotation on the short side. */
static void frame_slope(const kb_reduce_joint *jt, int rotation, ptrdiff_t f, double d[3])
{
    double dt = jt->times[f + 1] - jt->times[f];
    if (rotation) {
        double rel[4];
        kb_qmul_conj_left(jt->rotations + 4 * f, jt->rotations + 4 * (f + 1), rel);
        if (rel[0] < 0)
            for (int c = 0; c < 4; c++)
                rel[c] = -rel[c];
        kb_qlog(rel, d);
    } else {
        for (int c = 0; c < 3; c++)
            d[c] = jt->translations[3 * (f + 1) + c] - jt->translations[3 * f + c];
    }
    for (int c = 0; c < 3; c++)
        d[c] /= dt;
}

/* The harmonic mean of the steps on either side of frame f, per component
 * (Fritsch and Butland's, as PCHIP takes it), zero where they differ in
 * sign or one is zero: at a hold's edge, the hold's tangent. */
static void monotone_tangent(const kb_reduce_joint *jt, int rotation, ptrdiff_t f,
                             double *param)
{
    double before[3], after[3];
    frame_slope(jt, rotation, f - 1, before);
    frame_slope(jt, rotation, f, after);
    double h0 = jt->times[f] - jt->times[f - 1], h1 = jt->times[f + 1] - jt->times[f];
    double w0 = 2.0 * h1 + h0, w1 = h1 + 2.0 * h0;
    for (int p = 0; p < 3; p++)
        param[p] = before[p] * after[p] > 0.0 ? (w0 + w1) / (w0 / before[p] + w1 / after[p])
                                              : 0.0;
}

/* Before the refit of a drop's neighbours, keys m and m + 1 (now one
 * segment apart): a rotation tangent key's tangent that turns it more than
 * a radian over that longer segment is beyond the reach of the refit's
 * model (a cubic in log space), which then misses the tangent the frames
 * need; it starts from monotone_tangent instead (a failed drop restores
 * it).  A hold, 90 degrees over two frames, and a hold kept 6 keys where
 * 4 are exact (4 now); a blocking pass of 17 such steps 58-66 keys where
 * 36 are (36-44 now); the real clips as many keys as before, to 0.1%. */
static void restart_far(joint_fit *j, ptrdiff_t m)
{
    const kb_reduce_joint *jt = j->jt;
    double dt = jt->times[j->keys[m + 1]] - jt->times[j->keys[m]];
    for (ptrdiff_t k = m; k <= m + 1; k++) {
        ptrdiff_t f = j->keys[k];
        double *T = j->tcb[0] + 3 * k;
        double turn = sqrt(T[0] * T[0] + T[1] * T[1] + T[2] * T[2]) * dt;
        if (f > 0 && f + 1 < jt->n_frames && turn > 1.0)
            monotone_tangent(jt, 1, f, T);
    }
}

/* Copies keys and TCB without those where drop[i], into the spares;
 * returns how many are left. */
static ptrdiff_t without(joint_fit *j, const unsigned char *drop)
{
    ptrdiff_t n = 0;
    ptrdiff_t *keys = j->spare_keys;
    for (ptrdiff_t i = 0; i < j->K; i++) {
        if (drop[i])
            continue;
        keys[n] = j->keys[i];
        for (int c = 0; c < j->channels; c++)
            memcpy(j->spare_tcb[c] + 3 * n, j->tcb[c] + 3 * i, 3 * sizeof(double));
        n++;
    }
    return n;
}

static void take_spares(joint_fit *j, ptrdiff_t n)
{
    memcpy(j->keys, j->spare_keys, (size_t)n * sizeof(ptrdiff_t));
    for (int c = 0; c < j->channels; c++)
        memcpy(j->tcb[c], j->spare_tcb[c], (size_t)(3 * n) * sizeof(double));
    j->K = n;
}

/* A hash of the keys from `span` before key i of these K to as many after
 * (-1 past an end), the rows of all but key i, and the channels scored:
 * what a drop of key i hangs on.  Equal hashes of different keys (about
 * 2^-64) would only skip a drop that could hold. */
static ptrdiff_t without_hash(const joint_fit *j, const ptrdiff_t *keys, double *const tcb[2],
                              ptrdiff_t K, ptrdiff_t i, ptrdiff_t span)
{
    uint64_t h = (uint64_t)(j->channels + 2 * isfinite(j->jt->angle_tolerance));
    for (ptrdiff_t k = i - span; k <= i + span; k++) {
        uint64_t words[7] = {k >= 0 && k < K ? (uint64_t)keys[k] : UINT64_MAX};
        int n = 1;
        for (int c = 0; k >= 0 && k < K && k != i && c < j->channels; c++, n += 3)
            memcpy(words + n, tcb[c] + 3 * k, 3 * sizeof(double));
        for (int w = 0; w < n; w++) {  /* a 64-bit multiply-xorshift mix */
            h = (h ^ words[w]) * 0x9E3779B97F4A7C15u;
            h ^= h >> 29;
        }
    }
    return (ptrdiff_t)h;
}

/* drop_refitted's constants (docs/benchmarks.md, "Tuning notes"): the keys
 * refitted on each side of a dropped one and their steps; the spacing of
 * the keys dropped at once, so that no two drops' refits shape a frame in
 * common; a drop that failed is not tried again (kb_drop_memory) while the
 * tolerances are below 1 / DROP_HOPELESS of those it needed, nor from the
 * same keys and tangents under tolerances below the least it could hold
 * under; a refit whose own model leaves a weighed frame out of tolerance
 * (the rotation's beyond DROP_MODEL_MARGIN) fails without evaluating the
 * spline. */
#define DROP_NEAR 1
#define DROP_STEPS 4
#define DROP_SPACING (2 * DROP_NEAR + 7)
#define DROP_HOPELESS 1.5
#define DROP_MODEL_MARGIN 1.05

/* The two keys on each side of key i of these K (-1 past an end). */
static void keys_around(const ptrdiff_t *keys, ptrdiff_t K, ptrdiff_t i, ptrdiff_t around[4])
{
    for (int d = 0; d < 4; d++) {
        ptrdiff_t k = i + (d < 2 ? d - 2 : d - 1);
        around[d] = k >= 0 && k < K ? keys[k] : -1;
    }
}

/* The keys on each side of a dropped one that drop_context hashes. */
static ptrdiff_t context_span(const joint_fit *j, double *const tcb[2])
{
    return DROP_NEAR + 2 + tangent_reach(j->jt, tcb[0]);
}

/* A hash of what the refit after dropping key i of these K starts from
 * (see drop_refitted): the keys from DROP_NEAR + 2 before it to as many
 * after (and one more each way for TCB keys: tangent_reach), the rows of
 * all but key i, and the channels scored (see without_hash): nearly all
 * that the refit, and so its errors, hang on (see DROP_HOPELESS). */
static ptrdiff_t drop_context(const joint_fit *j, const ptrdiff_t *keys, double *const tcb[2],
                              ptrdiff_t K, ptrdiff_t i)
{
    return without_hash(j, keys, tcb, K, i, context_span(j, tcb));
}

/* Whether dropping key i of these K (TCB tcb) fails for certain or failed
 * before between the same keys: from the same start (drop_context) under
 * a tolerance below the least it could hold under, or from any start
 * where it needed tolerances that the joint's now are more than
 * DROP_HOPELESS times too tight for (in every channel of finite
 * tolerance); a skip from the same start updates the needed tolerances. */
static int hopeless(const joint_fit *j, const ptrdiff_t *keys, double *const tcb[2],
                    ptrdiff_t K, ptrdiff_t i)
{
    kb_drop_memory *m = j->memory;
    const double *needed = m->needed + 2 * keys[i], *least = m->least + 2 * keys[i];
    const double tolerance[2] = {j->jt->angle_tolerance, j->jt->distance_tolerance};
    ptrdiff_t around[4];
    keys_around(keys, K, i, around);
    if ((needed[0] == 0.0 && needed[1] == 0.0) ||  /* none failed: around unset */
        memcmp(around, m->around + 4 * keys[i], sizeof around))
        return 0;
    double grown = 0.0;  /* the tolerances now over those needed, the most */
    for (int c = 0; c < 2; c++)
        if (isfinite(tolerance[c]))
            grown = fmax(grown, tolerance[c] / needed[c]);
    if (grown * DROP_HOPELESS < 1.0)
        return 1;
    if (!((least[0] / tolerance[0] > 1.0 || least[1] / tolerance[1] > 1.0) &&
          m->context[keys[i]] == drop_context(j, keys, tcb, K, i)))
        return 0;
    /* the needed tolerances as the failure it stands for would record them
     * (its worst score is the larger of least / tolerance), so that later
     * calls at other tolerances weigh the margin as they would have */
    double worst = fmax(least[0] / tolerance[0], least[1] / tolerance[1]);
    for (int c = 0; c < 2; c++)
        m->needed[2 * keys[i] + c] = worst * tolerance[c];
    return 1;
}

/* Records that dropping key i of these K (TCB tcb, as the refit started)
 * failed with this worst score, and the least tolerances it could hold
 * under from that start (0, 0: unknown). */
static void remember_failed(joint_fit *j, const ptrdiff_t *keys, double *const tcb[2],
                            ptrdiff_t K, ptrdiff_t i, double worst, const double least[2])
{
    kb_drop_memory *m = j->memory;
    if (!(worst > 1.0 && worst < INFINITY))
        return;
    m->needed[2 * keys[i]] = worst * j->jt->angle_tolerance;
    m->needed[2 * keys[i] + 1] = worst * j->jt->distance_tolerance;
    keys_around(keys, K, i, m->around + 4 * keys[i]);
    /* orthogonal neighbours in the context, with key i or without it (its
     * two beside it), take their relative sign from keys beyond it: there
     * the least tolerances are unknown */
    const ptrdiff_t span = context_span(j, tcb);
    const ptrdiff_t lo = i > span ? i - span : 0, hi = i + span < K - 1 ? i + span : K - 1;
    const ptrdiff_t beside[2] = {keys[i > 0 ? i - 1 : 0], keys[i + 1 < K ? i + 1 : K - 1]};
    const double unknown[2] = {0.0, 0.0};
    int orthogonal = orthogonal_neighbours(j->jt, keys + lo, hi - lo + 1) ||
                     orthogonal_neighbours(j->jt, beside, 2);
    memcpy(m->least + 2 * keys[i], orthogonal ? unknown : least, 2 * sizeof(double));
    m->context[keys[i]] = drop_context(j, keys, tcb, K, i);
}

/* The worst score of the frames that the refit after dropping the key
 * between keys m and m + 1 changed (those of the segments from key m -
 * DROP_NEAR - 1 to m + DROP_NEAR + 2; NaN at a NaN), evaluated on the
 * window of keys two beyond them (one for tangent keys: see refit_near),
 * whose spline is the whole one there, and least[c] the worst error of
 * each channel scored (0 for another, and for both where the window's
 * rotation signs did not follow: then the whole spline's). */
static kb_status drop_worst(joint_fit *j, ptrdiff_t m, double *worst, double least[2],
                            kb_error *err)
{
    ptrdiff_t K = j->K;
    ptrdiff_t lo = m > DROP_NEAR ? m - DROP_NEAR : 0;
    ptrdiff_t hi = m + 1 + DROP_NEAR < K - 1 ? m + 1 + DROP_NEAR : K - 1;
    ptrdiff_t first = j->keys[lo > 0 ? lo - 1 : 0], last = j->keys[hi + 1 < K ? hi + 1 : K - 1];
    ptrdiff_t beyond = 1 + tangent_reach(j->jt, j->tcb[0]);
    ptrdiff_t a = lo > beyond ? lo - beyond : 0, b = hi + beyond < K - 1 ? hi + beyond : K - 1;
    j->s.signs_follow = 1;
    kb_status status = window_errors(j->jt, j->keys + a, b - a + 1, j->tcb[0] + 3 * a,
                                     j->channels > 1 ? j->tcb[1] + 3 * a : NULL, first, last,
                                     NULL, &j->s, err);
    int window = j->s.signs_follow;
    if (status == KB_OK && !window)  /* see score_segments */
        status = joint_errors(j->jt, j->keys, K, j->tcb[0], j->channels > 1 ? j->tcb[1] : NULL,
                              first, last, &j->s, err);
    *worst = least[0] = least[1] = 0.0;
    for (ptrdiff_t f = first; f <= last && !isnan(*worst); f++)
        if (!(j->s.score[f] <= *worst))  /* larger, or NaN */
            *worst = j->s.score[f];
    const double *errors[2] = {j->s.angle, j->s.distance};
    for (int c = 0; c < 2 && window; c++)
        for (ptrdiff_t f = first; f <= last && isfinite(c ? j->jt->distance_tolerance
                                                           : j->jt->angle_tolerance); f++)
            least[c] = fmax(least[c], errors[c][f]);
    return status;
}

/* Whether the keys of a phase of drop_refitted (j->keys: the K backup
 * keys without those where drop[o], which is set only from `first` on,
 * DROP_SPACING apart) have orthogonal neighbours, where the backup keys
 * have none: the keys beside each drop kept are the only new neighbours
 * (drops are never next to one another, nor at an end). */
static int joined_orthogonal(const joint_fit *j, const unsigned char *drop, ptrdiff_t first,
                             ptrdiff_t K)
{
    for (ptrdiff_t o = first; o + 1 < K; o += DROP_SPACING) {
        const ptrdiff_t beside[2] = {j->backup_keys[o - 1], j->backup_keys[o + 1]};
        if (drop[o] && orthogonal_neighbours(j->jt, beside, 2))
            return 1;
    }
    return 0;
}

/* Drops keys DROP_SPACING apart at once (but the hopeless ones) and
 * refits the DROP_NEAR keys on each side of each, keeping each drop whose
 * changed frames all stay within tolerance (drop_worst); a failed one
 * gets its key back and its neighbours' TCB as they were, so its frames
 * are as they were, and is remembered.  Every phase of the spacing in
 * turn. */
static kb_status drop_refitted(joint_fit *j, unsigned char *drop, kb_error *err)
{
    kb_status status = KB_OK;
    int clear = 0;  /* j->keys known to have no orthogonal neighbours */
    for (int phase = 0; phase < DROP_SPACING && status == KB_OK && j->K > 2; phase++) {
        ptrdiff_t K = j->K, count = 0;
        memset(drop, 0, (size_t)K);
        for (ptrdiff_t i = 1 + phase; i < K - 1; i += DROP_SPACING)
            if (!hopeless(j, j->keys, j->tcb, K, i)) {
                drop[i] = 1;
                count++;
            }
        if (!count)
            continue;
        memcpy(j->backup_keys, j->keys, (size_t)K * sizeof(ptrdiff_t));
        for (int c = 0; c < j->channels; c++)
            memcpy(j->backup_tcb[c], j->tcb[c], (size_t)(3 * K) * sizeof(double));
        ptrdiff_t n = without(j, drop);
        take_spares(j, n);
        memset(j->mark, 0, (size_t)n);
        for (ptrdiff_t o = 1 + phase, d = 0; o < K; o += DROP_SPACING)  /* drop is set there alone */
            if (drop[o]) {
                ptrdiff_t m = o - 1 - d++;  /* the left neighbour's index now */
                j->mark[m] = j->mark[m + 1] = 1;
                restart_far(j, m);
            }
        status = refit_near(j, j->tcb, j->mark, DROP_NEAR, DROP_STEPS, j->model_worst, err);
        memset(j->restore, 0, (size_t)K);
        int failed = 0;
        for (ptrdiff_t o = 1 + phase, d = 0; o < K && status == KB_OK; o += DROP_SPACING) {
            if (!drop[o])
                continue;
            ptrdiff_t m = o - 1 - d++;
            const double *model = j->model_worst + 2 * m;  /* 0 / inf: 0 */
            double least[2] = {model[0] / DROP_MODEL_MARGIN, model[1]};
            double worst = fmax(model[0] / j->jt->angle_tolerance / DROP_MODEL_MARGIN,
                                model[1] / j->jt->distance_tolerance);
            if (worst <= 1.0)  /* else failed by the model, remembered with its score */
                status = drop_worst(j, m, &worst, least, err);
            if (!(worst <= 1.0)) {  /* back: the key, and its neighbours' TCB */
                remember_failed(j, j->backup_keys, j->backup_tcb, K, o, worst, least);
                drop[o] = 0;
                failed = 1;
                for (ptrdiff_t k = o - 1 - DROP_NEAR; k <= o + 1 + DROP_NEAR; k++)
                    if (k >= 0 && k < K)
                        j->restore[k] = 1;
            }
        }
        if (status == KB_OK && failed) {  /* the drops kept with their refits, the others as before */
            ptrdiff_t out = 0;
            for (ptrdiff_t o = 0, p = 0; o < K; o++) {
                if (drop[o])
                    continue;
                int restored = p >= n || j->keys[p] != j->backup_keys[o];  /* a failed drop */
                j->spare_keys[out] = j->backup_keys[o];
                for (int c = 0; c < j->channels; c++)
                    memcpy(j->spare_tcb[c] + 3 * out,
                           j->restore[o] || restored ? j->backup_tcb[c] + 3 * o
                                                     : j->tcb[c] + 3 * p,
                           3 * sizeof(double));
                out++;
                p += !restored;
            }
            take_spares(j, out);
        }
        int orthogonal = status == KB_OK && (clear ? joined_orthogonal(j, drop, 1 + phase, K)
                                                   : orthogonal_neighbours(j->jt, j->keys, j->K));
        if (orthogonal && worse_than_tolerance(j, j->keys, j->K, j->tcb, &status, err)) {
            memcpy(j->keys, j->backup_keys, (size_t)K * sizeof(ptrdiff_t));  /* the phase undone */
            for (int c = 0; c < j->channels; c++)
                memcpy(j->tcb[c], j->backup_tcb[c], (size_t)(3 * K) * sizeof(double));
            j->K = K;
        } else {
            clear = !orthogonal;
        }
    }
    return status;
}

/* kb_reduce_drop. */
static kb_status reduce_joint(const kb_reduce_joint *jt, ptrdiff_t *keys, ptrdiff_t *n_keys,
                              double *rotation_tcb, double *translation_tcb, double *angle,
                              double *distance, kb_drop_memory *memory, kb_error *err)
{
    kb_status status = validate(jt, err);
    if (status != KB_OK)
        return status;
    kb_reduce_joint tangent = *jt;  /* the rows are tangents, whatever jt says */
    tangent.tangent_keys = 1;
    jt = &tangent;
    ptrdiff_t F = jt->n_frames, K = *n_keys;
    status = check_keys(jt, keys, K, err);
    if (status != KB_OK)
        return status;
    int channels = isfinite(jt->distance_tolerance) ? 2 : 1;
    for (ptrdiff_t i = 0; i < 3 * K; i++)
        for (int c = 0; c < channels; c++)
            if (!(fabs((c ? translation_tcb : rotation_tcb)[i]) <= DBL_MAX))
                return refuse_row(jt, i, c, err);
    joint_fit j = {.jt = jt, .keys = keys, .K = K, .tcb = {rotation_tcb, translation_tcb},
                   .channels = channels, .memory = memory};
    /* the spare and backup keys and rows, the drops' model errors, this
     * call's own memory of failed drops, the fit's space, and per key
     * frame the drop, mark, near and restore flags: one allocation */
    size_t n = (size_t)F;
    void *block = space_alloc(&j.s, F, 0);
    double *d = malloc(18 * n * sizeof(double) + fit_bytes(F) + 7 * n * sizeof(ptrdiff_t) + 4 * n);
    if (!block || !d) {
        free(block);
        free(d);
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    }
    j.s.keys_checked = keys_pass(jt);
    j.spare_tcb[0] = d;
    j.spare_tcb[1] = d + 3 * n;
    j.backup_tcb[0] = d + 6 * n;
    j.backup_tcb[1] = d + 9 * n;
    j.model_worst = d + 12 * n;
    fit_place(&j.w, jt, FIT_PER_SEGMENT, d + 18 * n);
    ptrdiff_t *x = (ptrdiff_t *)((char *)(d + 18 * n) + fit_bytes(F));
    j.spare_keys = x;
    j.backup_keys = x + n;
    kb_drop_memory local = {d + 14 * n, x + 2 * n, d + 16 * n, x + 6 * n};
    unsigned char *drop = (unsigned char *)(x + 7 * n);
    j.mark = drop + n;
    j.near = j.mark + n;
    j.restore = j.near + n;
    if (!memory) {  /* a key whose drop failed may come up again in a later phase */
        memset(local.needed, 0, 2 * (size_t)F * sizeof(double));
        j.memory = &local;
    }
    memset(j.near, 0, (size_t)F);
    if (channels == 1)
        memset(translation_tcb, 0, (size_t)(3 * F) * sizeof(double));
    status = drop_refitted(&j, drop, err);
    double worst;
    int errors = angle || distance;  /* a whole spline's evaluation: only where asked for */
    if (status == KB_OK && errors)
        status = fit_score(&j, j.keys, j.K, j.tcb, &worst, err);
    if (status == KB_OK && errors)
        status = skipped_errors(jt, j.keys, j.K, j.tcb[0], j.tcb[1], &j.s, err);
    if (status == KB_OK && errors)
        status = key_errors(jt, j.keys, j.K, j.tcb[0], j.tcb[1], &j.s, err);
    if (status == KB_OK) {
        *n_keys = j.K;
        /* the rows of keys dropped; a channel not scored (c >= channels)
         * was zeroed whole above and never written since */
        for (int c = 0; c < j.channels; c++)
            memset(j.tcb[c] + 3 * j.K, 0, (size_t)(3 * (F - j.K)) * sizeof(double));
        if (angle)
            memcpy(angle, j.s.angle, (size_t)F * sizeof(double));
        if (distance)
            memcpy(distance, j.s.distance, (size_t)F * sizeof(double));
    }
    free(block);
    free(d);
    return status == KB_OK ? kb_ok(err) : status;
}

kb_status kb_reduce_drop(const kb_reduce_joint *jt, ptrdiff_t *keys, ptrdiff_t *n_keys,
                         double *rotation_tcb, double *translation_tcb, double *angle,
                         double *distance, kb_drop_memory *memory, kb_error *err)
{
    return reduce_joint(jt, keys, n_keys, rotation_tcb, translation_tcb, angle, distance, memory,
                        err);
}
