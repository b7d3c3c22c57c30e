/*
 * fuzz_kbspline.c -- a libFuzzer target over the C API's construction and
 * evaluation entry points: positions (build, evaluate, arc length both
 * ways), rotations (build, evaluate, angles both ways) and the quaternion
 * utilities, on counts, option codes and raw doubles taken from the input
 * (NaN, infinities and huge values included).
 *
 *   make -C csrc fuzz && csrc/build/fuzz/fuzz_kbspline -max_total_time=600 csrc/fuzz/corpus
 *
 * Sanitizers find memory and undefined-behaviour errors; the target itself
 * aborts when a call that reported success wrote a non-finite number for
 * tame input (values, times and queries of moderate size and spacing), or
 * a rotation that is not a unit quaternion.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kbspline/kbspline.h"

typedef struct {
    const uint8_t *data;
    size_t size, pos;
} reader;

static unsigned take_byte(reader *r)
{
    return r->pos < r->size ? r->data[r->pos++] : 0;
}

/* A double from eight input bytes: raw bits half the time (so NaN, inf and
 * subnormals appear), a tame value in [-8, 8) otherwise. */
static double take_double(reader *r, int *tame)
{
    uint64_t bits = 0;
    unsigned mode = take_byte(r);
    for (int i = 0; i < 8; i++)
        bits = bits << 8 | take_byte(r);
    if (mode & 1) {
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!(fabs(v) < 1e3))
            *tame = 0;
        return v;
    }
    return (double)(bits % 4096) / 256.0 - 8.0;
}

static int all_finite(const double *x, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

static void fuzz_positions(reader *r)
{
    int tame = 1;
    const ptrdiff_t B = 1 + take_byte(r) % 3, K = take_byte(r) % 10, D = 1 + take_byte(r) % 4;
    const ptrdiff_t M = take_byte(r) % 24;
    const kb_timing timing = (kb_timing)(take_byte(r) % 5);
    const kb_ends ends = (kb_ends)(take_byte(r) % 6);
    const kb_extrap extrap = (kb_extrap)(take_byte(r) % 5);
    const int nu = take_byte(r) % 4, per_track = take_byte(r) & 1;
    const ptrdiff_t TK = per_track ? B * K : K;
    double *times = calloc((size_t)TK + 1, sizeof(double));
    double *values = calloc((size_t)(B * K * D) + 1, sizeof(double));
    double *params = calloc((size_t)(5 * K) + 1, sizeof(double));
    double *ends_v = calloc((size_t)(2 * D), sizeof(double));
    double *t = calloc((size_t)M + 1, sizeof(double));
    const ptrdiff_t S = K > 3 ? K - 1 : 3;
    double *tin = calloc((size_t)(B * K * D) + 1, sizeof(double));
    double *tout = calloc((size_t)(B * K * D) + 1, sizeof(double));
    double *coef = calloc((size_t)(B * S * 4 * D), sizeof(double));
    double *ease = calloc((size_t)(B * S * 2), sizeof(double));
    double *out = calloc((size_t)(B * M * D) + 1, sizeof(double));
    double *knots = calloc((size_t)TK + 1, sizeof(double));
    for (ptrdiff_t i = 0; i < TK; i++) {
        /* mostly increasing by a tame step, sometimes raw */
        double step = take_double(r, &tame);
        times[i] = (i % (K ? K : 1) ? times[i - 1] : 0.0) + (take_byte(r) & 1 ? fabs(step) + 0.01 : step);
    }
    for (ptrdiff_t i = 0; i < B * K * D; i++)
        values[i] = take_double(r, &tame);
    for (ptrdiff_t i = 0; i < 5 * K; i++)
        params[i] = take_double(r, &tame) / 8.0;
    for (ptrdiff_t i = 3 * K; i < 5 * K; i++)
        params[i] = fabs(params[i]);  /* ease: mostly valid */
    for (ptrdiff_t i = 0; i < 2 * D; i++)
        ends_v[i] = take_double(r, &tame);
    for (ptrdiff_t i = 0; i < M; i++)
        t[i] = take_double(r, &tame);

    const ptrdiff_t ts = per_track ? K : 0;
    kb_tcb_keys keys = {B, K, D, {times, ts}, values, {params, 0}, {params + K, 0},
                        {params + 2 * K, 0}, {params + 3 * K, 0}, {params + 4 * K, 0},
                        {ends_v, 0}, {ends_v + D, 0}, timing, ends};
    kb_error err;
    const int keep_tangents = M & 1;  /* the tangent table is optional */
    if (K > 0 && kb_tcb_build(&keys, keep_tangents ? tin : NULL, keep_tangents ? tout : NULL,
                              coef, ease, &err) == KB_OK) {
        const ptrdiff_t n_seg = kb_num_segments(ends, K), first = kb_first_segment_key(ends);
        for (ptrdiff_t tr = 0; tr < (per_track ? B : 1); tr++)
            for (ptrdiff_t i = 0; i <= n_seg; i++)
                knots[tr * (n_seg + 1) + i] = times[tr * ts + first + i];
        kb_curve c = {B, n_seg, D, knots, per_track ? n_seg + 1 : 0, coef, ease, extrap};
        if (kb_curve_eval_threaded(&c, nu, t, M, 0, 2, out, NULL, &err) == KB_OK && tame &&
            !all_finite(out, B * M * D))
            abort();
        kb_table table;
        if (extrap <= KB_EXTRAP_ERROR && kb_pos_length_table(&c, &table, &err) == KB_OK) {
            if (kb_pos_length(&c, &table, t, M, 0, 0, B, out, &err) == KB_OK && tame &&
                !all_finite(out, B * M))
                abort();
            if (kb_pos_time_at_length(&c, &table, t, M, 0, 0, B, out, &err) == KB_OK &&
                tame && !all_finite(out, B * M))
                abort();
            kb_table_free(&table);
        }
    }
    free(times);
    free(values);
    free(params);
    free(ends_v);
    free(t);
    free(tin);
    free(tout);
    free(coef);
    free(ease);
    free(out);
    free(knots);
}

static void fuzz_rotations(reader *r)
{
    int tame = 1;
    const ptrdiff_t K = take_byte(r) % 9, M = take_byte(r) % 16;
    const kb_timing timing = (kb_timing)(take_byte(r) % 5);
    const kb_ends ends = (kb_ends)(take_byte(r) % 6);
    const kb_extrap extrap = (kb_extrap)(take_byte(r) % 4);
    const int nu = take_byte(r) % 3, body = take_byte(r) & 1;
    double times[9], q[36], params[45], omega[6], t[16], out[64];
    double tin[27], tout[27], seg[8 * KB_ROT_SEG], ease[16];
    unsigned char kind[8];
    for (ptrdiff_t i = 0; i < K; i++)
        times[i] = (i ? times[i - 1] : 0.0) + fabs(take_double(r, &tame)) + 0.05;
    for (ptrdiff_t i = 0; i < 4 * K; i++)
        q[i] = take_double(r, &tame);
    for (ptrdiff_t i = 0; i < 5 * K; i++)
        params[i] = fabs(take_double(r, &tame)) / 8.0;
    for (int i = 0; i < 6; i++)
        omega[i] = take_double(r, &tame);
    for (ptrdiff_t i = 0; i < M; i++)
        t[i] = take_double(r, &tame);
    kb_rot_keys keys = {1, K, {times, 0}, q, {params, 0}, {params + K, 0}, {params + 2 * K, 0},
                        {params + 3 * K, 0}, {params + 4 * K, 0}, {omega, 0}, {omega + 3, 0},
                        timing, ends, NULL};
    kb_error err;
    if (K == 0 || kb_rot_build(&keys, tin, tout, seg, NULL, kind, ease, &err) != KB_OK)
        return;
    const ptrdiff_t n_seg = kb_num_segments(ends, K), first = kb_first_segment_key(ends);
    kb_rot_curve c = {1, n_seg, times + first, 0, seg, ease, extrap, kind};
    if (kb_rot_eval_threaded(&c, nu, body, 1, t, M, 0, 1, out, NULL, &err) == KB_OK && tame) {
        if (!all_finite(out, M * (nu ? 3 : 4)))
            abort();
        for (ptrdiff_t i = 0; nu == 0 && i < M; i++) {
            const double *o = out + 4 * i;
            if (fabs(o[0] * o[0] + o[1] * o[1] + o[2] * o[2] + o[3] * o[3] - 1.0) > 1e-12)
                abort();
        }
    }
    kb_table table;
    if (kb_rot_angle_table(&c, &table, &err) == KB_OK) {
        if (kb_rot_angle(&c, &table, t, M, 0, 0, 1, out, &err) == KB_OK && tame &&
            !all_finite(out, M))
            abort();
        if (kb_rot_time_at_angle(&c, &table, t, M, 0, 0, 1, out, &err) == KB_OK && tame &&
            !all_finite(out, M))
            abort();
        kb_table_free(&table);
    }
}

static void fuzz_utilities(reader *r)
{
    int tame = 1;
    double a[16], b[16], m[9], out[16], out2[4];
    int axes[3];
    for (int i = 0; i < 16; i++) {
        a[i] = take_double(r, &tame);
        b[i] = take_double(r, &tame);
    }
    for (int i = 0; i < 9; i++)
        m[i] = take_double(r, &tame);
    for (int i = 0; i < 3; i++)
        axes[i] = (int)(take_byte(r) % 4);
    kb_error err;
    kb_quat_multiply(4, a, b, out, &err);
    kb_quat_conjugate(4, a, out, &err);
    kb_quat_log(4, a, out, &err);
    kb_quat_exp(4, a, out, &err);
    kb_quat_slerp(4, a, b, a, out, &err);
    kb_quat_squad(1, a, a + 4, b, b + 4, a + 8, out, &err);
    kb_quat_from_axis_angle(4, a, b, out, &err);
    kb_quat_to_axis_angle(4, a, out, out2, &err);
    kb_quat_to_matrix(1, a, out, &err);
    kb_quat_from_matrix(1, m, out, &err);
    kb_quat_from_euler(4, a, axes, take_byte(r) & 1, out, &err);
    kb_quat_to_euler(4, a, axes, take_byte(r) & 1, out, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    switch (take_byte(&r) % 3) {
    case 0: fuzz_positions(&r); break;
    case 1: fuzz_rotations(&r); break;
    default: fuzz_utilities(&r); break;
    }
    return 0;
}
