/* kb_reduce_errors.c -- the splines through keys and their errors at the
 * frames, of a window of keys or a whole joint; validation. */
#include <float.h>
#include <stdlib.h>

#include "motion/reduce/reduce_internal.h"

void *kb_rd_space_alloc(space *s, ptrdiff_t F, size_t extra_bytes)
{
    size_t n = (size_t)F;
    double *d = malloc(70 * n * sizeof(double) + n * sizeof(kb_loc) + n * sizeof(ptrdiff_t)
                       + n + 8 + extra_bytes);
    if (!d)  /* 8 above: alignment */
        return NULL;
    s->t = d;
    s->q = d + n;
    s->x = d + 5 * n;
    s->tan_in = d + 8 * n;
    s->tan_out = d + 11 * n;
    s->seg = d + 14 * n;
    s->coef = d + 30 * n;
    s->out = d + 42 * n;
    s->angle = d + 46 * n;
    s->distance = d + 47 * n;
    s->score = d + 48 * n;
    s->residual = d + 49 * n;
    s->moved = d + 52 * n;
    s->zeros = d + 55 * n;
    memset(s->zeros, 0, n * sizeof(double));
    s->chords = (kb_rot_chords){d + 57 * n, d + 61 * n, d + 64 * n, d + 67 * n};
    s->between_times = d + 68 * n;
    s->between_error = d + 69 * n;
    s->loc = (kb_loc *)(d + 70 * n);
    s->between = (ptrdiff_t *)(s->loc + n);
    s->kind = (unsigned char *)(s->between + n);
    s->signs_follow = 1;
    s->given = NULL;
    return d;
}

/* The rotation keys in s (kb_rd_prepare_keys) with the tangents s->given. */
static kb_rot_keys rotation_keys(ptrdiff_t n, space *s)
{
    kb_param zero = {s->zeros, n}, none = {NULL, 0}, times = {s->t, n};
    return (kb_rot_keys){.n_tracks = 1, .n_keys = n, .times = times, .quats = s->q,
                         .tension = zero, .continuity = zero, .bias = zero, .ease_from = zero,
                         .ease_to = zero, .start_omega = none, .end_omega = none,
                         .timing = KB_TIMING_KB, .ends = KB_ENDS_NATURAL, .chords = NULL,
                         .given_in = s->given, .given_out = s->given};
}

/* Whether the unit keys' signs (each on its predecessor's side) follow the first's:
 * flipping it flips them all, so a window of keys and all of them give each segment
 * up to its sign.  A dot of exactly zero keeps a key's sign whichever side. */
static int signs_follow(ptrdiff_t n, const space *s)
{
    for (ptrdiff_t i = 1; i < n; i++)
        if (kb_qdot(s->q + 4 * i, s->chords.q + 4 * (i - 1)) == 0.0)
            return 0;
    return 1;
}

/* One channel's keys gathered into s (rotations: their chords, and the m
 * frames at_times located on them): prepared once for a fit's many tries. */
kb_status kb_rd_prepare_keys(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                             ptrdiff_t n, const double *tcb, const double *at_times,
                             ptrdiff_t m, space *s, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++)
        s->t[i] = jt->times[keys[i]];
    for (ptrdiff_t i = 0; rotation && i < n; i++)  /* copies of constant size: no calls */
        memcpy(s->q + 4 * i, jt->rotations + 4 * keys[i], 4 * sizeof(double));
    for (ptrdiff_t i = 0; !rotation && i < n; i++)
        memcpy(s->x + 3 * i, jt->translations + 3 * keys[i], 3 * sizeof(double));
    if (!rotation)
        return KB_OK;  /* kb_tcb_build checks them (kb_rd_spline_errors) */
    s->given = tcb;
    kb_rot_keys k = rotation_keys(n, s);
    kb_status status = kb_rot_validate(&k, err);
    if (status != KB_OK)
        return status;
    kb_rot_chords_of(&k, &s->chords);
    s->signs_follow &= signs_follow(n, s);
    ptrdiff_t hint = 0;
    for (ptrdiff_t j = 0; j < m; j++)
        locate(s->t, n - 1, KB_EXTRAP_CLAMP, at_times[j], &hint, &s->loc[j]);
    return KB_OK;
}

/* The rotation spline of the prepared keys with tangents s->given at the m located
 * frames into s->out, building only the segments they lie in (the greedy windows'
 * 4 of 6, fewer where no frame between keys lies in one: kb_rd_joint_errors). */
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

/* The translation spline of the prepared keys with the tangents s->given at
 * the m frames at_times, into s->out. */
static kb_status translation_at(ptrdiff_t n, const double *at_times, ptrdiff_t m, space *s,
                                kb_error *err)
{
    kb_param zero = {s->zeros, n}, none = {NULL, 0}, times = {s->t, n};
    kb_tcb_keys k = {.n_tracks = 1, .n_keys = n, .dim = 3, .times = times, .values = s->x,
                     .tension = zero, .continuity = zero, .bias = zero, .ease_from = zero,
                     .ease_to = zero, .start_tangent = none, .end_tangent = none,
                     .timing = KB_TIMING_KB, .ends = KB_ENDS_NATURAL,
                     .given_in = s->given, .given_out = s->given};
    kb_status status = kb_tcb_build(&k, s->tan_in, s->tan_out, s->coef, NULL, err);
    kb_curve c = {.n_tracks = 1, .n_seg = n - 1, .dim = 3, .knots = s->t, .knots_stride = n,
                  .coef = s->coef, .ease = NULL, .extrap = KB_EXTRAP_CLAMP};
    if (status == KB_OK)
        status = kb_curve_eval(&c, 0, at_times, m, m, 0, 1, s->out, NULL, err);
    return status;
}

/* The norm of v, by hypot where its square under- or overflows. */
static inline double robust_norm(const double v[3])
{
    double n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    return n2 >= 1e-280 && n2 <= 1e280 ? sqrt(n2) : hypot(hypot(v[0], v[1]), v[2]);
}

/* The rotation errors and residuals (see errors_at) of the spline values
 * (m, 4) at the m frames at[j] (NULL: first + j). */
static void rotation_errors(const kb_reduce_joint *jt, const double *values, const ptrdiff_t *at,
                            ptrdiff_t first, ptrdiff_t m, double *error, double *residual)
{
    for (ptrdiff_t j = 0; j < m; j++) {
        double r[4];
        kb_qmul_conj_left(jt->rotations + 4 * (at ? at[j] : first + j), values + 4 * j, r);
        double sign = r[0] < 0 ? -2.0 : 2.0;
        for (int c = 0; residual && c < 3; c++)
            residual[3 * j + c] = r[c + 1] * sign;
        if (error)
            error[j] = kb_rotation_angle(robust_norm(r + 1), fabs(r[0]));
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
            error[j] = robust_norm(v);
    }
}

/* errors_at of keys prepared by kb_rd_prepare_keys (with the same frames). */
kb_status kb_rd_spline_errors(const kb_reduce_joint *jt, int rotation, ptrdiff_t n,
                              const double *tcb, const ptrdiff_t *at, const double *at_times,
                              ptrdiff_t first, ptrdiff_t m, double *error, double *residual,
                              space *s, kb_error *err)
{
    s->given = tcb;
    kb_status status = rotation ? rotation_at(n, at_times, m, s, err)
                                : translation_at(n, at_times, m, s, err);
    if (status != KB_OK || (!error && !residual))
        return status;
    (rotation ? rotation_errors : translation_errors)(jt, s->out, at, first, m, error, residual);
    return status;
}

/* One channel's errors (angle or distance) and residuals (twice the vector
 * part of frame* spline, or spline - frame) at m frames (at NULL: from first). */
static kb_status errors_at(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                           ptrdiff_t n, const double *tcb, const ptrdiff_t *at,
                           const double *at_times, ptrdiff_t first, ptrdiff_t m, double *error,
                           double *residual, space *s, kb_error *err)
{
    kb_status status = kb_rd_prepare_keys(jt, rotation, keys, n, tcb, at_times, m, s, err);
    if (status == KB_OK)
        status = kb_rd_spline_errors(jt, rotation, n, tcb, at, at_times, first, m, error,
                                     residual, s, err);
    return status;
}

/* errors_at at every frame, without residuals. */
static kb_status channel_errors(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                                ptrdiff_t n, const double *tcb, double *error, space *s,
                                kb_error *err)
{
    return errors_at(jt, rotation, keys, n, tcb, NULL, jt->times, 0, jt->n_frames, error, NULL,
                     s, err);
}

/* Both channels' errors at frames [first, last] and their score, with residual (NULL:
 * none) each one's residuals at the non-key frames into residual[c] (0 translation,
 * 1 rotation; errors_at's); key frames are zero, an infinite tolerance's channel skipped. */
kb_status kb_rd_joint_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                             const double *rotation_tcb, const double *translation_tcb,
                             ptrdiff_t first, ptrdiff_t last, double *const *residual,
                             space *s, kb_error *err)
{
    int finite[2] = {isfinite(jt->distance_tolerance), isfinite(jt->angle_tolerance)};
    ptrdiff_t m = 0;
    for (ptrdiff_t f = first, k = 0; f <= last; f++) {
        while (k < n && keys[k] < f)
            k++;
        if (k < n && keys[k] == f) {
            s->angle[f] = s->distance[f] = 0.0;  /* scored 0 below */
            continue;
        }
        s->between[m] = f;
        s->between_times[m++] = jt->times[f];
    }
    kb_status status = KB_OK;
    for (int c = 1; c >= 0 && status == KB_OK; c--) {
        double *error = c ? s->angle : s->distance;
        if (!finite[c])
            continue;
        status = errors_at(jt, c, keys, n, c ? rotation_tcb : translation_tcb, s->between,
                           s->between_times, 0, m, s->between_error,
                           residual ? residual[c] : NULL, s, err);
        for (ptrdiff_t j = 0; j < m; j++)
            error[s->between[j]] = s->between_error[j];
    }
    for (ptrdiff_t f = first; status == KB_OK && f <= last; f++)
        s->score[f] = larger(finite[1] ? s->angle[f] / jt->angle_tolerance : 0.0,
                             finite[0] ? s->distance[f] / jt->distance_tolerance : 0.0);
    return status;
}

/* The final keys' errors at every frame of the whole splines, key frames
 * too (rounding's), into angle and distance (each NULL to skip). */
kb_status kb_rd_final_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                             const double *rotation_tcb, const double *translation_tcb,
                             double *angle, double *distance, space *s, kb_error *err)
{
    kb_status status = channel_errors(jt, 1, keys, n, rotation_tcb, angle, s, err);
    if (status == KB_OK)
        status = channel_errors(jt, 0, keys, n, translation_tcb, distance, s, err);
    return status;
}

/* The largest of v (n >= 0) and 0, or NaN where one is, as NumPy's max. */
double kb_rd_worst(const double *v, ptrdiff_t n)
{
    double m = 0.0;
    for (ptrdiff_t i = 0; i < n && !isnan(m); i++)
        if (!(v[i] <= m))
            m = v[i];
    return m;
}

kb_status kb_rd_validate(const kb_reduce_joint *jt, kb_error *err)
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

/* The joint valid (kb_rd_validate) and its key frames rising from the
 * first frame to the last. */
kb_status kb_rd_check_keys(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K,
                           kb_error *err)
{
    kb_status status = kb_rd_validate(jt, err);
    if (status != KB_OK)
        return status;
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
    kb_status status = kb_rd_check_keys(jt, keys, n_keys, err);
    if (status != KB_OK)
        return status;
    ptrdiff_t F = jt->n_frames;
    space s;
    void *block = kb_rd_space_alloc(&s, F, 0);
    if (!block)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    status = channel_errors(jt, 1, keys, n_keys, rotation_tcb, angle, &s, err);
    if (status == KB_OK) {
        memcpy(rotations, s.out, (size_t)(4 * F) * sizeof(double));
        if (translations || distance)
            status = channel_errors(jt, 0, keys, n_keys, translation_tcb, distance, &s, err);
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
    kb_status status = kb_rd_validate(jt, err);
    if (status != KB_OK)
        return status;
    kb_reduce_errors_unchecked(jt, rotations, translations, angle, distance);
    return kb_ok(err);
}

void kb_reduce_errors_unchecked(const kb_reduce_joint *jt, const double *rotations,
                                const double *translations, double *angle, double *distance)
{
    if (angle)
        rotation_errors(jt, rotations, NULL, 0, jt->n_frames, angle, NULL);
    if (translations && distance)
        translation_errors(jt, translations, NULL, 0, jt->n_frames, distance, NULL);
}

/* Whether two neighbouring keys' quaternions are orthogonal within rounding, so a
 * window's signs may not follow the whole spline's (signs_follow's dot, with the unit
 * key before, is zero only where this one is within rounding of it). */
int kb_rd_orthogonal_neighbours(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K)
{
    for (ptrdiff_t k = 1; k < K; k++) {
        const double *a = jt->rotations + 4 * keys[k - 1], *b = jt->rotations + 4 * keys[k];
        double dot = kb_qdot(a, b);
        if (!(dot * dot > 1e-24 * kb_qdot(a, a) * kb_qdot(b, b)))
            return 1;
    }
    return 0;
}
