/* kb_rot_build.c -- squad rotation splines with Kochanek-Bartels tangents:
 * building their segments (evaluation is in kb_rot_eval.c). */
#include <stdlib.h>

#include "kb_internal.h"
#include "spline/kb_locate.h"
#include "quat/kb_quat.h"
#include "rotation/kb_cumulative.h"
#include "rotation/kb_rot_chords.h"
#include "rotation/kb_rot_segment.h"

/* The position-key view of a rotation track: 3-vector chords (the logs)
 * with the same times, parameters and options. */
static kb_tcb_keys log_view(const kb_rot_keys *k)
{
    kb_tcb_keys v = {k->n_tracks, k->n_keys, 3, k->times, NULL, k->tension,
                     k->continuity, k->bias, k->ease_from, k->ease_to,
                     k->start_omega, k->end_omega, k->timing, k->ends, k->given_in,
                     k->given_out};
    return v;
}

/* |q| without overflow or underflow for any finite q. */
static double norm4(const double *q)
{
    double m = 0.0;
    for (int j = 0; j < 4; j++)
        m = fmax(m, fabs(q[j]));
    if (m == 0.0)
        return 0.0;
    const double s[4] = {q[0] / m, q[1] / m, q[2] / m, q[3] / m};
    return m * sqrt(kb_qdot(s, s));
}

kb_status kb_rot_validate(const kb_rot_keys *k, kb_error *err)
{
    if (!k || !k->times.data || !k->quats || !k->tension.data || !k->continuity.data ||
        !k->bias.data || !k->ease_from.data || !k->ease_to.data)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    if (!kb_timing_ok(k->timing) || !kb_ends_ok(k->ends))
        return kb_fail(err, KB_EBADOPTION, KB_ARG_NONE, -1, -1);
    if (k->n_tracks < 0)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_QUATERNIONS, -1, -1);
    if (k->n_keys < kb_min_keys(k->ends))
        return kb_fail(err, KB_ETOOFEW, KB_ARG_QUATERNIONS, -1, k->n_keys);
    const kb_tcb_keys view = log_view(k);
    kb_status given = kb_validate_given(&view, err);
    if (given != KB_OK)
        return given;
    const ptrdiff_t K = k->n_keys;
    for (ptrdiff_t tr = 0; tr < k->n_tracks; tr++) {
        kb_status s = kb_validate_common(&view, tr, err);
        if (s != KB_OK)
            return s;
        const double *q = k->quats + tr * K * 4;
        for (ptrdiff_t i = 0; i < K; i++) {
            for (int j = 0; j < 4; j++)
                if (!isfinite(q[4 * i + j]))
                    return kb_fail(err, KB_ENONFINITE, KB_ARG_QUATERNIONS, tr, i);
            if (norm4(q + 4 * i) == 0.0)
                return kb_fail(err, KB_EZERONORM, KB_ARG_QUATERNIONS, tr, i);
        }
        for (ptrdiff_t i = 0; k->chords && i < 3 * (K - 1); i++)
            if (!isfinite(k->chords[tr * 3 * (K - 1) + i]))
                return kb_fail(err, KB_ENONFINITE, KB_ARG_QUATERNIONS, tr, i / 3 + 1);
        if (k->ends == KB_ENDS_CLOSED) {
            const double *last = q + 4 * (K - 1);
            double c = kb_qdot(q, last) / (norm4(q) * norm4(last));
            if (fabs(c) < 1.0 - 1e-9)
                return kb_fail(err, KB_ENOTCLOSED, KB_ARG_QUATERNIONS, tr, K - 1);
        }
    }
    return kb_ok(err);
}

/* v rotated by q* (into q's body frame), halved: the log-space tangent of
 * a world angular velocity at q. */
static void omega_to_log_tangent(const double *q, const double *omega, double *out)
{
    const double w[4] = {0.0, omega[0], omega[1], omega[2]};
    double t[4], r[4];
    kb_qmul_conj_left(q, w, t);
    kb_qmul(t, q, r);
    for (int j = 0; j < 3; j++)
        out[j] = 0.5 * r[j + 1];
}

/* One segment from q0 to q1 with log L and per-u log tangents T0, T1:
 * squad where it is proven well-conditioned, else the cumulative cubic (on
 * the whole spin, for a segment of more than half a turn). */
static unsigned char build_segment(const double *q0, const double *q1, const double *L,
                                   const double *T0, const double *T1, double *c, double *lg)
{
    const double half_angle = sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
    if (half_angle > 0.5 * KB_PI) {
        kb_cumulative_segment(q0, q1, L, 1, T0, T1, c, lg);
        return KB_SEG_CUMULATIVE;
    }
    double ha[3], hb[3], ea[4], eb[4], r[4];
    for (int j = 0; j < 3; j++) {
        ha[j] = 0.5 * (T0[j] - L[j]);
        hb[j] = 0.5 * (L[j] - T1[j]);
    }
    kb_qexp(ha, ea);
    kb_qexp(hb, eb);
    for (int j = 0; j < 4; j++) {
        c[j] = q0[j];
        c[12 + j] = q1[j];
    }
    kb_qmul(q0, ea, c + 4);
    kb_qmul(q1, eb, c + 8);
    for (int j = 0; j < 3; j++)
        lg[j] = L[j];
    kb_qmul_conj_left(c + 4, c + 8, r);
    kb_qlog(r, lg + 3);
    for (int j = 6; j < 12; j++)
        lg[j] = 0.0;
    if (kb_squad_is_certified(L, T0, T1, lg + 3))
        return KB_SEG_SQUAD;
    kb_cumulative_segment(q0, q1, L, 0, T0, T1, c, lg);
    return KB_SEG_CUMULATIVE;
}

/* Unit keys (K, 4) of track tr: each on the side of its predecessor, or
 * with multi-turn chords as given (q_(n+1) = q_n exp(L_n) fixes the sign);
 * a closed track's last key is the first rotation exactly. */
static void unit_keys(const kb_rot_keys *k, ptrdiff_t tr, double *q)
{
    const ptrdiff_t K = k->n_keys;
    const double *src = k->quats + tr * K * 4;
    for (ptrdiff_t i = 0; i < K; i++) {
        double u[4];
        const double n = norm4(src + 4 * i);
        for (int j = 0; j < 4; j++)
            u[j] = src[4 * i + j] / n;
        /* q and -q are one rotation (-x / n is -(x / n) to the bit) */
        const int flip = !k->chords && i > 0 && kb_qdot(src + 4 * i, q + 4 * (i - 1)) < 0.0;
        for (int j = 0; j < 4; j++)
            q[4 * i + j] = flip ? -u[j] : u[j];
    }
    if (k->ends == KB_ENDS_CLOSED) {
        const double sign = kb_qdot(q + 4 * (K - 1), q) < 0.0 ? -1.0 : 1.0;
        for (int j = 0; j < 4; j++)
            q[4 * (K - 1) + j] = sign * q[j];
    }
}

/* The chord L from unit key n to n + 1 (q). */
static void chord_of(const double *q, ptrdiff_t n, double *L)
{
    double r[4];
    kb_qmul_conj_left(q + 4 * n, q + 4 * (n + 1), r);
    kb_qlog(r, L);
}

static int finite_record(const double *rec)
{
    /* a NaN or infinity anywhere makes its lane's sum NaN; four lanes, so
     * that the sums need not wait on one another */
    double sum[4] = {0.0, 0.0, 0.0, 0.0};
    for (int j = 0; j < KB_ROT_SEG; j += 4)
        for (int l = 0; l < 4; l++)
            sum[l] += 0.0 * rec[j + l];
    return (sum[0] + sum[1]) + (sum[2] + sum[3]) == 0.0;
}

/* Track tr's unit keys q (K, 4), chords (K - 1, 3), the chords its
 * tangents are taken from (tchord, K - 1, 3) and durations dt (K - 1). */
static void track_chords(const kb_rot_keys *k, ptrdiff_t tr, double *q, double *chord,
                         double *tchord, double *dt)
{
    const ptrdiff_t K = k->n_keys;
    unit_keys(k, tr, q);
    for (ptrdiff_t n = 0; n < K - 1; n++) {
        double *L = chord + 3 * n, *C = tchord + 3 * n;
        if (k->chords) {
            for (int j = 0; j < 3; j++)
                L[j] = k->chords[(tr * (K - 1) + n) * 3 + j];
        } else {
            chord_of(q, n, L);
        }
        if (k->chords && k->timing == KB_TIMING_3DS)
            kb_compab_chord(L, C);
        else
            for (int j = 0; j < 3; j++)
                C[j] = L[j];
        dt[n] = kb_param_at(k->times, tr, n + 1) - kb_param_at(k->times, tr, n);
    }
}

/* Track tr's per-time log tangents tin, tout (K, 3) from its chords. */
static void track_tangents(const kb_rot_keys *k, ptrdiff_t tr, const double *q,
                           const double *tchord, const double *dt, double *tin, double *tout)
{
    const ptrdiff_t K = k->n_keys;
    if (k->given_in) {  /* given tangents: kb_track_tangents copies them */
        memcpy(tin, k->given_in + tr * K * 3, (size_t)(K * 3) * sizeof(double));
        memcpy(tout, k->given_out + tr * K * 3, (size_t)(K * 3) * sizeof(double));
        return;
    }
    double start[3] = {0, 0, 0}, end[3] = {0, 0, 0};
    if (k->ends == KB_ENDS_CLAMPED) {
        if (k->start_omega.data)
            omega_to_log_tangent(q, k->start_omega.data + tr * k->start_omega.stride, start);
        if (k->end_omega.data)
            omega_to_log_tangent(q + 4 * (K - 1), k->end_omega.data + tr * k->end_omega.stride,
                                 end);
    }
    kb_tcb_keys view = log_view(k);
    view.start_tangent.data = start;
    view.start_tangent.stride = 0;
    view.end_tangent.data = end;
    view.end_tangent.stride = 0;
    kb_track_tangents(&view, tr, tchord, dt, tin, tout);
}

/* Segments [s0, s1) of track tr (records at tr * S + s) from its unit
 * keys, chords, durations and tangents (track_chords, track_tangents). */
static kb_status track_segments(const kb_rot_keys *k, ptrdiff_t tr, const double *q,
                                const double *chord, const double *dt, const double *tin,
                                const double *tout, ptrdiff_t s0, ptrdiff_t s1, double *seg,
                                double *ctrl, unsigned char *kind, double *ease, kb_error *err)
{
    const ptrdiff_t S = kb_num_segments(k->ends, k->n_keys);
    const ptrdiff_t first = kb_first_segment_key(k->ends);
    for (ptrdiff_t s_ = s0; s_ < s1; s_++) {
        const ptrdiff_t n = first + s_, i = tr * S + s_;
        double T0[3], T1[3], c[16], lg[12];
        for (int j = 0; j < 3; j++) {
            T0[j] = tout[3 * n + j] * dt[n];  /* per unit u */
            T1[j] = tin[3 * (n + 1) + j] * dt[n];
        }
        kind[i] = build_segment(q + 4 * n, q + 4 * (n + 1), chord + 3 * n, T0, T1, c, lg);
        rot_segment_pack(kind[i], c, lg, seg + i * KB_ROT_SEG);
        if (!finite_record(seg + i * KB_ROT_SEG))  /* tangents too large to exp */
            return kb_fail(err, KB_ERANGE, k->given_in ? KB_ARG_TANGENTS : KB_ARG_VALUES, tr, n);
        if (ctrl)
            memcpy(ctrl + i * 16, c, sizeof c);
        if (ease) {
            ease[i * 2] = kb_param_at(k->ease_from, tr, n);
            ease[i * 2 + 1] = kb_param_at(k->ease_to, tr, n + 1);
        }
    }
    return KB_OK;
}

/* Builds tracks [begin, end) of validated keys (see kb_rot_build). */
static kb_status build_tracks(const kb_rot_keys *k, ptrdiff_t begin, ptrdiff_t end,
                              double *tan_in, double *tan_out, double *seg, double *ctrl,
                              unsigned char *kind, double *ease, kb_error *err)
{
    const ptrdiff_t K = k->n_keys, S = kb_num_segments(k->ends, K);
    /* workspace: unit keys (K, 4), chords and the chords tangents are taken
     * from (K - 1, 3) each, durations (K - 1,) */
    double *work = malloc((size_t)(4 * K + 7 * (K - 1)) * sizeof(double));
    if (!work)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    double *q = work, *chord = work + 4 * K, *tchord = chord + 3 * (K - 1);
    double *dt = tchord + 3 * (K - 1);
    kb_status status = KB_OK;
    for (ptrdiff_t tr = begin; tr < end && status == KB_OK; tr++) {
        double *tin = tan_in + tr * K * 3, *tout = tan_out + tr * K * 3;
        track_chords(k, tr, q, chord, tchord, dt);
        track_tangents(k, tr, q, tchord, dt, tin, tout);
        status = track_segments(k, tr, q, chord, dt, tin, tout, 0, S, seg, ctrl, kind, ease,
                                err);
    }
    free(work);
    return status == KB_OK ? kb_ok(err) : status;
}

void kb_rot_chords_of(const kb_rot_keys *k, const kb_rot_chords *c)
{
    track_chords(k, 0, c->q, c->chord, c->tchord, c->dt);
}

kb_status kb_rot_build_segments(const kb_rot_keys *k, const kb_rot_chords *c,
                                const kb_loc *loc, ptrdiff_t m, double *tan_in,
                                double *tan_out, double *seg, unsigned char *kind,
                                kb_error *err)
{
    track_tangents(k, 0, c->q, c->tchord, c->dt, tan_in, tan_out);
    kb_status status = KB_OK;
    for (ptrdiff_t j = 0; j < m && status == KB_OK;) {
        /* each run of neighbouring segments that queries lie in (they ascend) */
        ptrdiff_t s0 = loc[j].seg, s1 = s0 + 1;
        for (j++; j < m && loc[j].seg <= s1; j++)
            s1 = loc[j].seg + 1;
        status = track_segments(k, 0, c->q, c->chord, c->dt, tan_in, tan_out, s0, s1, seg, NULL,
                                kind, NULL, err);
    }
    return status;
}

typedef struct {
    const kb_rot_keys *k;
    double *tan_in, *tan_out, *seg, *ctrl;
    unsigned char *kind;
    double *ease;
} build_job;

static kb_status build_job_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, kb_error *err)
{
    const build_job *j = ctx;
    return build_tracks(j->k, begin, end, j->tan_in, j->tan_out, j->seg, j->ctrl, j->kind,
                        j->ease, err);
}

kb_status kb_rot_build_threaded(const kb_rot_keys *k, double *tan_in, double *tan_out,
                                double *seg, double *ctrl, unsigned char *kind, double *ease,
                                int n_threads, kb_error *err)
{
    kb_status s = kb_rot_validate(k, err);
    if (s != KB_OK)
        return s;
    if (!tan_in || !tan_out || !seg || !kind)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    build_job job = {k, tan_in, tan_out, seg, ctrl, kind, ease};
    const double work = (double)k->n_tracks * (double)k->n_keys * 4.0;
    return kb_build_parallel(k->n_tracks, work, n_threads, build_job_range, &job, err);
}

kb_status kb_rot_build(const kb_rot_keys *k, double *tan_in, double *tan_out, double *seg,
                       double *ctrl, unsigned char *kind, double *ease, kb_error *err)
{
    return kb_rot_build_threaded(k, tan_in, tan_out, seg, ctrl, kind, ease, 1, err);
}
