/* kb_tcb.c -- Kochanek-Bartels tangents, end conditions and Hermite segments. */
#include "kb_internal.h"

#include <float.h>
#include <string.h>
#include <stdlib.h>

/*
 * Every timing convention makes the per-time tangents linear in the two
 * chords: out = w_out_m d_im1 + w_out_p d_i, in = w_in_m d_im1 + w_in_p d_i.
 * Only the four weights differ (SPEC section 4).
 */
void kb_key_weights(kb_timing timing, double tension, double continuity, double bias,
                    double dt_im1, double dt_i, double w[4])
{
    double omt = 1.0 - tension;
    double a = omt * (1.0 + continuity) * (1.0 + bias);
    double b = omt * (1.0 - continuity) * (1.0 - bias);
    double c = omt * (1.0 - continuity) * (1.0 + bias);
    double d = omt * (1.0 + continuity) * (1.0 - bias);
    double sum = dt_im1 + dt_i;
    double w_out_m, w_out_p, w_in_m, w_in_p;

    switch (timing) {
    case KB_TIMING_3DS: {
        /* Per-u multipliers 2 dt_i / sum (out) and 2 dt_im1 / sum (in),
         * pulled towards 1 by |continuity| as 3D Studio's CompDeriv does. */
        double ac = fabs(continuity);
        double f_out = 2.0 * dt_i / sum, f_in = 2.0 * dt_im1 / sum;
        f_out = f_out + ac - ac * f_out;
        f_in = f_in + ac - ac * f_in;
        w_out_m = 0.5 * f_out * a / dt_i;
        w_out_p = 0.5 * f_out * b / dt_i;
        w_in_m = 0.5 * f_in * c / dt_im1;
        w_in_p = 0.5 * f_in * d / dt_im1;
        break;
    }
    case KB_TIMING_PARABOLIC:
        w_out_m = a * dt_i / (dt_im1 * sum);
        w_out_p = b * dt_im1 / (dt_i * sum);
        w_in_m = c * dt_i / (dt_im1 * sum);
        w_in_p = d * dt_im1 / (dt_i * sum);
        break;
    case KB_TIMING_AVERAGE:
        w_out_m = 0.5 * a / dt_im1;
        w_out_p = 0.5 * b / dt_i;
        w_in_m = 0.5 * c / dt_im1;
        w_in_p = 0.5 * d / dt_i;
        break;
    default: /* KB_TIMING_KB: per-u 2 dt_i / sum * (a d_im1 + b d_i) / 2 */
        w_out_m = a / sum;
        w_out_p = b / sum;
        w_in_m = c / sum;
        w_in_p = d / sum;
        break;
    }
    w[0] = w_out_m;
    w[1] = w_out_p;
    w[2] = w_in_m;
    w[3] = w_in_p;
}

/* The tangents of one key from its weights (kb_key_weights). */
KB_INLINE void apply_weights(const double w[4], const double *d_im1, const double *d_i,
                             ptrdiff_t dim, double *tan_in, double *tan_out)
{
    for (ptrdiff_t j = 0; j < dim; j++) {
        tan_out[j] = w[0] * d_im1[j] + w[1] * d_i[j];
        tan_in[j] = w[2] * d_im1[j] + w[3] * d_i[j];
    }
}

void kb_key_tangents(kb_timing timing, double tension, double continuity,
                     double bias, const double *d_im1, double dt_im1,
                     const double *d_i, double dt_i, ptrdiff_t dim,
                     double *tan_in, double *tan_out)
{
    double w[4];
    kb_key_weights(timing, tension, continuity, bias, dt_im1, dt_i, w);
    apply_weights(w, d_im1, d_i, dim, tan_in, tan_out);
}

int kb_timing_ok(kb_timing t)
{
    return t == KB_TIMING_KB || t == KB_TIMING_3DS || t == KB_TIMING_PARABOLIC ||
           t == KB_TIMING_AVERAGE;
}

int kb_ends_ok(kb_ends e)
{
    return e == KB_ENDS_NATURAL || e == KB_ENDS_PHANTOM || e == KB_ENDS_REFLECT ||
           e == KB_ENDS_CLAMPED || e == KB_ENDS_CLOSED;
}

/* Index of the first non-finite (or, with lo <= hi, out-of-range) entry of
 * a per-key parameter, or -1. */
static ptrdiff_t bad_param(kb_param p, ptrdiff_t track, ptrdiff_t n, double lo,
                           double hi, kb_status *why)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double v = kb_param_at(p, track, i);
        if (!isfinite(v)) {
            *why = KB_ENONFINITE;
            return i;
        }
        if (lo <= hi && (v < lo || v > hi)) {
            *why = KB_ERANGE;
            return i;
        }
    }
    return -1;
}

/* Times, per-key parameters, end tangents (k->dim of them), and for
 * closed splines that the last key's parameters repeat the first's. */
kb_status kb_validate_common(const kb_tcb_keys *k, ptrdiff_t tr, kb_error *err)
{
    const ptrdiff_t K = k->n_keys, D = k->dim;
    kb_status why = KB_OK;
    ptrdiff_t i;

    if (tr == 0 || k->times.stride != 0) {
        for (i = 0; i < K; i++) {
            double t = kb_param_at(k->times, tr, i);
            if (!isfinite(t))
                return kb_fail(err, KB_ENONFINITE, KB_ARG_TIMES, tr, i);
            if (i > 0 && !(t > kb_param_at(k->times, tr, i - 1)))
                return kb_fail(err, KB_ENOTSORTED, KB_ARG_TIMES, tr, i);
            /* a subnormal spacing has lost bits, and its reciprocal (in
             * every per-time rate) overflows */
            if (i > 0 && t - kb_param_at(k->times, tr, i - 1) < DBL_MIN)
                return kb_fail(err, KB_ERANGE, KB_ARG_TIMES, tr, i);
        }
        /* every difference of times must be finite too (1e308 - -1e308 is not) */
        if (!isfinite(kb_param_at(k->times, tr, K - 1) - kb_param_at(k->times, tr, 0)))
            return kb_fail(err, KB_ERANGE, KB_ARG_TIMES, tr, K - 1);
    }
    const struct { kb_param p; kb_arg arg; double lo, hi; } params[] = {
        {k->tension, KB_ARG_TENSION, 1.0, 0.0},
        {k->continuity, KB_ARG_CONTINUITY, 1.0, 0.0},
        {k->bias, KB_ARG_BIAS, 1.0, 0.0},
        {k->ease_from, KB_ARG_EASE_FROM, 0.0, 1.0},
        {k->ease_to, KB_ARG_EASE_TO, 0.0, 1.0},
    };
    for (size_t j = 0; j < sizeof params / sizeof params[0]; j++) {
        if (tr > 0 && params[j].p.stride == 0)
            continue;
        i = bad_param(params[j].p, tr, K, params[j].lo, params[j].hi, &why);
        if (i >= 0)
            return kb_fail(err, why, params[j].arg, tr, i);
        if (k->ends == KB_ENDS_CLOSED &&
            fabs(kb_param_at(params[j].p, tr, K - 1) - kb_param_at(params[j].p, tr, 0)) > 1e-9)
            return kb_fail(err, KB_ENOTCLOSED, params[j].arg, tr, K - 1);
    }
    for (i = 0; k->given_in && i < 2 * K * D; i++) {
        const double *given = i < K * D ? k->given_in : k->given_out;
        if (!isfinite(given[tr * K * D + i % (K * D)]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_TANGENTS, tr, i % (K * D) / D);
    }
    if (k->ends == KB_ENDS_CLAMPED) {
        const kb_param ends[2] = {k->start_tangent, k->end_tangent};
        for (int j = 0; j < 2; j++) {
            if (!ends[j].data || (tr > 0 && ends[j].stride == 0))
                continue;
            i = bad_param(ends[j], tr, D, 1.0, 0.0, &why);
            if (i >= 0)
                return kb_fail(err, why, j ? KB_ARG_END_TANGENT : KB_ARG_START_TANGENT,
                               tr, i);
        }
    }
    return KB_OK;
}

kb_status kb_validate_given(const kb_tcb_keys *k, kb_error *err)
{
    if (!k->given_in != !k->given_out)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_TANGENTS, -1, -1);
    if (k->given_in && k->ends != KB_ENDS_NATURAL)
        return kb_fail(err, KB_EBADOPTION, KB_ARG_TANGENTS, -1, -1);
    return KB_OK;
}

static kb_status validate_track(const kb_tcb_keys *k, ptrdiff_t tr, kb_error *err)
{
    const ptrdiff_t K = k->n_keys, D = k->dim;
    const double *x = k->values + tr * K * D;
    ptrdiff_t i;
    kb_status s = kb_validate_common(k, tr, err);
    if (s != KB_OK)
        return s;
    double nan_if_not_finite = 0.0;  /* one pass the compiler vectorises */
    for (i = 0; i < K * D; i++)
        nan_if_not_finite += x[i] - x[i];
    if (!(nan_if_not_finite == 0.0))
        for (i = 0; i < K * D; i++)
            if (!isfinite(x[i]))
                return kb_fail(err, KB_ENONFINITE, KB_ARG_VALUES, tr, i / D);
    if (k->ends == KB_ENDS_CLOSED) {
        double scale = 0.0;
        for (i = 0; i < K * D; i++)
            scale = fmax(scale, fabs(x[i]));
        for (i = 0; i < D; i++)
            if (fabs(x[(K - 1) * D + i] - x[i]) > 1e-9 * scale)
                return kb_fail(err, KB_ENOTCLOSED, KB_ARG_VALUES, tr, K - 1);
    }
    return KB_OK;
}

kb_status kb_tcb_validate(const kb_tcb_keys *k, kb_error *err)
{
    if (!k || !k->times.data || !k->values || !k->tension.data ||
        !k->continuity.data || !k->bias.data || !k->ease_from.data || !k->ease_to.data)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    if (!kb_timing_ok(k->timing) || !kb_ends_ok(k->ends))
        return kb_fail(err, KB_EBADOPTION, KB_ARG_NONE, -1, -1);
    if (k->n_tracks < 0 || k->dim < 1)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_VALUES, -1, -1);
    if (k->n_keys < kb_min_keys(k->ends))
        return kb_fail(err, KB_ETOOFEW, KB_ARG_VALUES, -1, k->n_keys);
    kb_status given = kb_validate_given(k, err);
    if (given != KB_OK)
        return given;
    /* values, tangents and coefficients of n_tracks * K * D doubles (and
     * 4 times that), a workspace of under 8 K D even for no tracks */
    if (!kb_doubles_fit(8, k->n_tracks > 1 ? k->n_tracks : 1, k->n_keys, k->dim))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_VALUES, -1, -1);
    for (ptrdiff_t tr = 0; tr < k->n_tracks; tr++) {
        kb_status s = validate_track(k, tr, err);
        if (s != KB_OK)
            return s;
    }
    return kb_ok(err);
}

void kb_track_tangents(const kb_tcb_keys *k, ptrdiff_t tr, const double *chord,
                       const double *dt, double *tin, double *tout)
{
    const ptrdiff_t K = k->n_keys, D = k->dim;
    if (k->given_in) {  /* Hermite keys */
        memcpy(tin, k->given_in + tr * K * D, (size_t)(K * D) * sizeof(double));
        memcpy(tout, k->given_out + tr * K * D, (size_t)(K * D) * sizeof(double));
        return;
    }
    for (ptrdiff_t i = 1; i < K - 1; i++) {
        double w[4];
        kb_key_weights(k->timing, kb_param_at(k->tension, tr, i),
                       kb_param_at(k->continuity, tr, i), kb_param_at(k->bias, tr, i),
                       dt[i - 1], dt[i], w);
        apply_weights(w, chord + (i - 1) * D, chord + i * D, D, tin + i * D, tout + i * D);
    }
    kb_end_tangents(k, tr, chord, dt, tin, tout);
}

void kb_end_tangents(const kb_tcb_keys *k, ptrdiff_t tr, const double *chord,
                     const double *dt, double *tin, double *tout)
{
    const ptrdiff_t K = k->n_keys, D = k->dim, S = K - 1;
    double T, C, B;
    ptrdiff_t j;

#define TCB_AT(n) (T = kb_param_at(k->tension, tr, n), \
                   C = kb_param_at(k->continuity, tr, n), \
                   B = kb_param_at(k->bias, tr, n))
    double *tin0 = tin, *tout0 = tout;
    double *tinN = tin + (K - 1) * D, *toutN = tout + (K - 1) * D;
    const double *d0 = chord, *dN = chord + (S - 1) * D;

    switch (k->ends) {
    case KB_ENDS_NATURAL:
        /* Zero second derivative: out(0) = 3/2 d0/dt0 - in(1) / 2, and the
         * mirror image at the end; with two keys both are the chord slope. */
        for (j = 0; j < D; j++) {
            if (K == 2) {
                tout0[j] = tinN[j] = d0[j] / dt[0];
            } else {
                tout0[j] = 1.5 * d0[j] / dt[0] - 0.5 * tin[D + j];
                tinN[j] = 1.5 * dN[j] / dt[S - 1] - 0.5 * tout[(K - 2) * D + j];
            }
        }
        break;
    case KB_ENDS_PHANTOM:
        for (j = 0; j < D; j++)
            tin0[j] = tout0[j] = tinN[j] = toutN[j] = NAN;
        return;
    case KB_ENDS_REFLECT:
        /* The mirrored key repeats the end chord and its duration. */
        TCB_AT(0);
        kb_key_tangents(k->timing, T, C, B, d0, dt[0], d0, dt[0], D, tin0, tout0);
        TCB_AT(K - 1);
        kb_key_tangents(k->timing, T, C, B, dN, dt[S - 1], dN, dt[S - 1], D, tinN,
                        toutN);
        break;
    case KB_ENDS_CLAMPED:
        for (j = 0; j < D; j++) {
            tout0[j] = k->start_tangent.data ? kb_param_at(k->start_tangent, tr, j) : 0.0;
            tinN[j] = k->end_tangent.data ? kb_param_at(k->end_tangent, tr, j) : 0.0;
        }
        break;
    case KB_ENDS_CLOSED:
        /* The seam key sees the last chord before it and the first after. */
        TCB_AT(0);
        kb_key_tangents(k->timing, T, C, B, dN, dt[S - 1], d0, dt[0], D, tin0, tout0);
        for (j = 0; j < D; j++) {
            tinN[j] = tin0[j];
            toutN[j] = tout0[j];
        }
        return;
    }
#undef TCB_AT
    /* An end key has one segment: its unused side repeats the used one. */
    for (j = 0; j < D; j++) {
        tin0[j] = tout0[j];
        toutN[j] = tinN[j];
    }
}

/* Hermite segments [first, first + S) of one track, in power form: with
 * m0 = tout_n dt_n, m1 = tin_(n+1) dt_n, c = (x_n, m0, 3 d_n - 2 m0 - m1,
 * -2 d_n + m0 + m1).  Returns whether every coefficient is finite (finite
 * keys can still overflow: 1e308 - -1e308).  Inlined with constant dim. */
KB_INLINE int track_segments(const double *x, const double *chord, const double *dt,
                             const double *tin, const double *tout, ptrdiff_t S,
                             ptrdiff_t first, ptrdiff_t dim, double *coef)
{
    double nan_if_not_finite = 0.0;  /* v - v is 0 for finite v, NaN otherwise */
    for (ptrdiff_t s_ = 0; s_ < S; s_++) {
        const ptrdiff_t n = first + s_;
        double *c = coef + s_ * 4 * dim;
        for (ptrdiff_t j = 0; j < dim; j++) {
            const double d = chord[n * dim + j];
            const double m0 = tout[n * dim + j] * dt[n];
            const double m1 = tin[(n + 1) * dim + j] * dt[n];
            const double c2 = 3.0 * d - 2.0 * m0 - m1, c3 = -2.0 * d + m0 + m1;
            c[j] = x[n * dim + j];
            c[dim + j] = m0;
            c[2 * dim + j] = c2;
            c[3 * dim + j] = c3;
            nan_if_not_finite += (m0 - m0) + (c2 - c2) + (c3 - c3);
        }
    }
    return nan_if_not_finite == 0.0;
}

/* The first of S segments with a coefficient that is not finite. */
static ptrdiff_t first_overflow(const double *coef, ptrdiff_t S, ptrdiff_t dim)
{
    for (ptrdiff_t s_ = 0; s_ < S; s_++)
        for (ptrdiff_t j = 0; j < 4 * dim; j++)
            if (!isfinite(coef[s_ * 4 * dim + j]))
                return s_;
    return S;
}

/* What overflows segment n's coefficients: its keys' values, or with
 * given tangents those where they, times the segment's duration, reach
 * the values' size. */
static kb_arg overflow_arg(const kb_tcb_keys *k, const double *x, const double *dt,
                           const double *tin, const double *tout, ptrdiff_t n, ptrdiff_t dim)
{
    double value = 0.0, tangent = 0.0;
    for (ptrdiff_t j = 0; k->given_in && j < dim; j++) {
        value = fmax(value, fmax(fabs(x[n * dim + j]), fabs(x[(n + 1) * dim + j])));
        double fastest = fmax(fabs(tout[n * dim + j]), fabs(tin[(n + 1) * dim + j]));
        tangent = fmax(tangent, fastest * dt[n]);
    }
    return k->given_in && tangent >= value ? KB_ARG_TANGENTS : KB_ARG_VALUES;
}

/* One track of build_tracks, inlined with constant dim: chords (and, for
 * per-track times, durations), tangents, segments.  weights: the inner
 * keys' tangent weights when times and TCB are shared, else NULL. */
KB_INLINE kb_status build_track(const kb_tcb_keys *k, ptrdiff_t tr, ptrdiff_t dim,
                                const double (*weights)[4], double *chord, double *dt,
                                double *tin, double *tout, double *coef, kb_error *err)
{
    const ptrdiff_t K = k->n_keys;
    const ptrdiff_t S = kb_num_segments(k->ends, K), first = kb_first_segment_key(k->ends);
    const double *x = k->values + tr * K * dim;
    for (ptrdiff_t n = 0; n < K - 1; n++) {
        /* closed: key K-1 is key 0 exactly, so the loop has no gap */
        const double *x_ip1 = (k->ends == KB_ENDS_CLOSED && n == K - 2) ? x : x + (n + 1) * dim;
        for (ptrdiff_t j = 0; j < dim; j++)
            chord[n * dim + j] = x_ip1[j] - x[n * dim + j];
        if (!weights)
            dt[n] = kb_param_at(k->times, tr, n + 1) - kb_param_at(k->times, tr, n);
    }
    if (weights) {
        for (ptrdiff_t i = 1; i < K - 1; i++)
            apply_weights(weights[i], chord + (i - 1) * dim, chord + i * dim, dim,
                          tin + i * dim, tout + i * dim);
        kb_end_tangents(k, tr, chord, dt, tin, tout);
    } else {
        kb_track_tangents(k, tr, chord, dt, tin, tout);
    }
    double *c = coef + tr * S * 4 * dim;
    if (!track_segments(x, chord, dt, tin, tout, S, first, dim, c)) {
        const ptrdiff_t n = first + first_overflow(c, S, dim);
        return kb_fail(err, KB_ERANGE, overflow_arg(k, x, dt, tin, tout, n, dim), tr, n);
    }
    return KB_OK;
}

/* Builds tracks [begin, end) of validated keys (see kb_tcb_build).  When
 * times and TCB are shared, each inner key's tangent weights are computed
 * once for all tracks; the arithmetic is the same either way. */
static kb_status build_tracks(const kb_tcb_keys *k, ptrdiff_t begin, ptrdiff_t end,
                              double *tan_in, double *tan_out, double *coef, double *ease,
                              kb_error *err)
{
    const ptrdiff_t K = k->n_keys, D = k->dim;
    const ptrdiff_t S = kb_num_segments(k->ends, K), first = kb_first_segment_key(k->ends);
    const int keep = tan_in != NULL;
    const int shared = !k->given_in && k->times.stride == 0 && k->tension.stride == 0 &&
                       k->continuity.stride == 0 && k->bias.stride == 0;
    /* workspace: chords (K - 1, D), durations (K - 1,), inner keys' weights
     * (K, 4) when shared, then one track's tangents (2, K, D) when the
     * caller does not keep them */
    double *work = malloc((size_t)((K - 1) * (D + 1) + (shared ? 4 * K : 0) +
                                   (keep ? 0 : 2 * K * D)) * sizeof(double));
    if (!work)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    double *chord = work, *dt = work + (K - 1) * D;
    double (*weights)[4] = shared ? (double (*)[4])(dt + (K - 1)) : NULL;
    double *scratch = dt + (K - 1) + (shared ? 4 * K : 0);

    if (shared) {
        for (ptrdiff_t n = 0; n < K - 1; n++)
            dt[n] = k->times.data[n + 1] - k->times.data[n];
        for (ptrdiff_t i = 1; i < K - 1; i++)
            kb_key_weights(k->timing, k->tension.data[i], k->continuity.data[i],
                           k->bias.data[i], dt[i - 1], dt[i], weights[i]);
    }
    kb_status status = KB_OK;
    for (ptrdiff_t tr = begin; tr < end && status == KB_OK; tr++) {
        double *tin = keep ? tan_in + tr * K * D : scratch;
        double *tout = keep ? tan_out + tr * K * D : scratch + K * D;
        const double (*w)[4] = (const double (*)[4])weights;
#define KB_BUILD(dim) build_track(k, tr, dim, w, chord, dt, tin, tout, coef, err)
        switch (D) {
        case 1: status = KB_BUILD(1); break;
        case 2: status = KB_BUILD(2); break;
        case 3: status = KB_BUILD(3); break;
        case 4: status = KB_BUILD(4); break;
        default: status = KB_BUILD(D); break;
        }
#undef KB_BUILD
        if (ease && status == KB_OK)
            for (ptrdiff_t s_ = 0; s_ < S; s_++) {
                ease[(tr * S + s_) * 2] = kb_param_at(k->ease_from, tr, first + s_);
                ease[(tr * S + s_) * 2 + 1] = kb_param_at(k->ease_to, tr, first + s_ + 1);
            }
    }
    free(work);
    return status == KB_OK ? kb_ok(err) : status;
}

typedef struct {
    const kb_tcb_keys *k;
    double *tan_in, *tan_out, *coef, *ease;
} build_job;

static kb_status build_job_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, kb_error *err)
{
    const build_job *j = ctx;
    return build_tracks(j->k, begin, end, j->tan_in, j->tan_out, j->coef, j->ease, err);
}

kb_status kb_tcb_build_threaded(const kb_tcb_keys *k, double *tan_in, double *tan_out,
                                double *coef, double *ease, int n_threads, kb_error *err)
{
    kb_status s = kb_tcb_validate(k, err);
    if (s != KB_OK)
        return s;
    if ((tan_in == NULL) != (tan_out == NULL) || !coef)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    build_job job = {k, tan_in, tan_out, coef, ease};
    const double work = (double)k->n_tracks * (double)k->n_keys * (double)k->dim;
    return kb_build_parallel(k->n_tracks, work, n_threads, build_job_range, &job, err);
}

kb_status kb_tcb_build(const kb_tcb_keys *k, double *tan_in, double *tan_out,
                       double *coef, double *ease, kb_error *err)
{
    return kb_tcb_build_threaded(k, tan_in, tan_out, coef, ease, 1, err);
}
