/* test_reduce_sweep.c -- kb_reduce_sweep: every frame within the
 * tolerances by the splines through its keys with its tangents built whole
 * (kb_rot_build / kb_tcb_build, evaluated by kb_rot_eval / kb_curve_eval)
 * and by kb_reduce_rebuild; a uniform turn on a line needs its end keys
 * alone; two frames, constant channels and infinite tolerances; frames
 * negated every other one give the same keys and tangents to the bit;
 * bad input refused as kb_reduce_drop refuses it; the unchecked errors its
 * real check takes are kb_reduce_errors' to the bit, on any run of frames. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "kb_internal.h"
#include "kb_test.h"
#include "kbspline/kbspline.h"
#include "motion/reduce/reduce_internal.h"

#define N 200

static double times[N], rot[N * 4], tr[N * 3];

/* A wobbling turn and a Lissajous translation (amplitude 0: a uniform turn
 * about z and a line), with a hold from frame 120 to 150 and a step in the
 * translation at frame 170 where `rough`. */
static void track(double amplitude, int rough)
{
    for (int f = 0; f < N; f++) {
        double t = f / 60.0, u = rough && f >= 120 && f <= 150 ? 2.0 : t;
        double half = 0.5 * (u + amplitude * sin(5.0 * u));
        double axis[3] = {amplitude * sin(3.0 * u), amplitude * cos(2.0 * u), 1.0};
        double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + 1.0);
        times[f] = t;
        rot[4 * f] = cos(half);
        for (int k = 0; k < 3; k++)
            rot[4 * f + 1 + k] = sin(half) * axis[k] / n;
        tr[3 * f] = u + (rough && f >= 170 ? 0.5 : 0.0);
        tr[3 * f + 1] = amplitude * sin(4.0 * u);
        tr[3 * f + 2] = amplitude * cos(7.0 * u);
    }
}

/* The worst angle and distance at every frame of the splines through the
 * keys with these tangents, each built whole; 0 where they do not build. */
static int whole_errors(int F, const ptrdiff_t *keys, ptrdiff_t n, const double *rrows,
                        const double *trows, double *angle, double *distance)
{
    double kt[N], kq[N * 4], kx[N * 3], zero[N] = {0}, q[N * 4], x[N * 3];
    double tin[N * 3], tout[N * 3], seg[N * KB_ROT_SEG], coef[N * 12];
    unsigned char kind[N];
    kb_error err;
    for (ptrdiff_t i = 0; i < n; i++) {
        kt[i] = times[keys[i]];
        memcpy(kq + 4 * i, rot + 4 * keys[i], 4 * sizeof(double));
        memcpy(kx + 3 * i, tr + 3 * keys[i], 3 * sizeof(double));
    }
    kb_param z = {zero, 0}, none = {NULL, 0}, kt_p = {kt, 0};
    kb_rot_keys rk = {1, n, kt_p, kq, z, z, z, z, z, none, none, KB_TIMING_KB,
                      KB_ENDS_NATURAL, NULL, rrows, rrows};
    kb_tcb_keys pk = {1, n, 3, kt_p, kx, z, z, z, z, z, none, none, KB_TIMING_KB,
                      KB_ENDS_NATURAL, trows, trows};
    kb_rot_curve rc = {1, n - 1, kt, 0, seg, NULL, KB_EXTRAP_CLAMP, kind};
    kb_curve pc = {1, n - 1, 3, kt, 0, coef, NULL, KB_EXTRAP_CLAMP};
    if (kb_rot_build(&rk, tin, tout, seg, NULL, kind, NULL, &err) ||
        kb_rot_eval(&rc, 0, 0, 1, times, F, 0, 0, 1, q, NULL, &err) ||
        kb_tcb_build(&pk, tin, tout, coef, NULL, &err) ||
        kb_curve_eval(&pc, 0, times, F, 0, 0, 1, x, NULL, &err))
        return 0;
    *angle = *distance = 0.0;
    for (int f = 0; f < F; f++) {
        double dot = 0.0, norm = 0.0, d = 0.0;
        for (int k = 0; k < 4; k++) {
            dot += q[4 * f + k] * rot[4 * f + k];
            norm += rot[4 * f + k] * rot[4 * f + k];
        }
        for (int k = 0; k < 3; k++)
            d += (x[3 * f + k] - tr[3 * f + k]) * (x[3 * f + k] - tr[3 * f + k]);
        *angle = fmax(*angle, 2.0 * acos(fmin(fabs(dot) / sqrt(norm), 1.0)));
        *distance = fmax(*distance, sqrt(d));
    }
    return 1;
}

/* The sweep's keys at these tolerances on the first F frames, checked:
 * ascending from 0 to F - 1, rows past the keys zero, every frame within
 * the tolerances by kb_reduce_rebuild (its errors, exactly) and by the
 * splines built whole (within rounding of the angle's acos). */
static int sweep_within(int F, double angle_tol, double distance_tol, ptrdiff_t *keys,
                        ptrdiff_t *n, double *rrows, double *trows)
{
    kb_reduce_joint jt = {F, times, rot, tr, angle_tol, distance_tol};
    double angle[N], distance[N], q[N * 4], x[N * 3], worst_angle, worst_distance;
    kb_error err;
    if (kb_reduce_sweep(&jt, keys, n, rrows, trows, &err) != KB_OK || err.status != KB_OK)
        return 0;
    if (*n < 2 || keys[0] != 0 || keys[*n - 1] != F - 1)
        return 0;
    for (ptrdiff_t i = 1; i < *n; i++)
        if (keys[i] <= keys[i - 1])
            return 0;
    for (ptrdiff_t i = 3 * *n; i < 3 * F; i++)
        if (rrows[i] != 0.0 || trows[i] != 0.0)
            return 0;
    if (kb_reduce_rebuild(&jt, keys, *n, rrows, trows, q, x, angle, distance, &err) != KB_OK)
        return 0;
    for (int f = 0; f < F; f++)
        if (angle[f] > angle_tol || distance[f] > distance_tol)
            return 0;
    if (!whole_errors(F, keys, *n, rrows, trows, &worst_angle, &worst_distance))
        return 0;
    return worst_angle <= angle_tol + 1e-7 && worst_distance <= distance_tol;
}

KB_TEST(test_reduce_sweep_keeps_every_frame_within_the_tolerances)
{
    ptrdiff_t keys[N], n = 0;
    double rrows[3 * N], trows[3 * N];
    for (int rough = 0; rough < 2; rough++) {
        track(0.3, rough);
        const double tolerances[4][2] = {{5e-3, 3e-3}, {1e-4, 1e-4}, {0.05, INFINITY},
                                         {INFINITY, 1e-3}};
        for (int i = 0; i < 4; i++) {
            KB_ASSERT(sweep_within(N, tolerances[i][0], tolerances[i][1], keys, &n, rrows,
                                   trows));
            KB_ASSERT(n < N);
        }
        KB_ASSERT(sweep_within(N, 5e-3, 3e-3, keys, &n, rrows, trows));
        KB_ASSERT(n > 2 && n < N / 4);
    }
}

KB_TEST(test_reduce_sweep_a_uniform_turn_on_a_line_is_two_keys)
{
    track(0.0, 0);
    ptrdiff_t keys[N], n = 0;
    double rrows[3 * N], trows[3 * N];
    KB_ASSERT(sweep_within(120, 1e-8, 1e-8, keys, &n, rrows, trows));  /* under half a turn */
    KB_ASSERT(n == 2);
    KB_ASSERT_NEAR(rrows[5], 0.5, 1e-6);  /* half the turn's speed about z */
    KB_ASSERT_NEAR(trows[3], 1.0, 1e-9);
}

KB_TEST(test_reduce_sweep_two_frames_constant_channels_and_no_tolerance)
{
    track(0.3, 0);
    ptrdiff_t keys[N], n = 0;
    double rrows[3 * N], trows[3 * N];
    for (int F = 2; F <= 3; F++) {
        KB_ASSERT(sweep_within(F, 1e-12, 1e-12, keys, &n, rrows, trows));
        KB_ASSERT(n == F);
    }
    KB_ASSERT(sweep_within(N, INFINITY, INFINITY, keys, &n, rrows, trows) && n == 2);
    for (int f = 0; f < N; f++) {  /* constant channels: two keys, zero tangents */
        rot[4 * f] = 0.6;
        rot[4 * f + 1] = 0.0;
        rot[4 * f + 2] = 0.0;
        rot[4 * f + 3] = -0.8;
        tr[3 * f] = tr[3 * f + 1] = tr[3 * f + 2] = 2.5;
    }
    KB_ASSERT(sweep_within(N, 1e-12, 1e-12, keys, &n, rrows, trows) && n == 2);
    for (int i = 0; i < 6; i++)
        KB_ASSERT(rrows[i] == 0.0 && trows[i] == 0.0);
}

KB_TEST(test_reduce_sweep_ignores_the_frames_signs)
{
    track(0.3, 1);
    ptrdiff_t keys[N], flipped_keys[N], n = 0, m = 0;
    double rrows[3 * N], trows[3 * N], rrows2[3 * N], trows2[3 * N];
    KB_ASSERT(sweep_within(N, 2e-3, 2e-3, keys, &n, rrows, trows));
    for (int f = 1; f < N; f += 2)
        for (int k = 0; k < 4; k++)
            rot[4 * f + k] = -rot[4 * f + k];
    KB_ASSERT(sweep_within(N, 2e-3, 2e-3, flipped_keys, &m, rrows2, trows2));
    KB_ASSERT(m == n);
    KB_ASSERT(!memcmp(keys, flipped_keys, (size_t)n * sizeof(ptrdiff_t)));
    KB_ASSERT(!memcmp(rrows, rrows2, sizeof rrows) && !memcmp(trows, trows2, sizeof trows));
}

KB_TEST(test_reduce_sweep_unchecked_errors_are_kb_reduce_errors)
{
    track(0.3, 1);
    double q[N * 4], x[N * 3], angle[N], distance[N], angle2[N], distance2[N];
    for (int f = 0; f < N; f++) {  /* curves a little off the frames */
        for (int k = 0; k < 4; k++)
            q[4 * f + k] = rot[4 * f + (k + f % 2) % 4] + 1e-3 * k;
        for (int k = 0; k < 3; k++)
            x[3 * f + k] = tr[3 * f + k] + 1e-3 * sin(f + k);
    }
    kb_error err;
    kb_reduce_joint jt = {N, times, rot, tr, 1e-3, 1e-3};
    KB_ASSERT(kb_reduce_errors(&jt, q, x, angle, distance, &err) == KB_OK);
    const ptrdiff_t runs[][2] = {{0, N}, {17, 5}, {40, 1}, {90, 0}};
    for (int i = 0; i < 4; i++) {
        const ptrdiff_t a = runs[i][0], n = runs[i][1];
        kb_reduce_joint part = {n, times + a, rot + 4 * a, tr + 3 * a, 1e-3, 1e-3};
        memset(angle2, 0, sizeof angle2);
        memset(distance2, 0, sizeof distance2);
        kb_reduce_errors_unchecked(&part, q + 4 * a, x + 3 * a, angle2, distance2);
        KB_ASSERT(!memcmp(angle + a, angle2, (size_t)n * sizeof(double)));
        KB_ASSERT(!memcmp(distance + a, distance2, (size_t)n * sizeof(double)));
    }
}

KB_TEST(test_reduce_sweep_bad_input)
{
    track(0.3, 0);
    ptrdiff_t keys[N], n = 0;
    double rrows[3 * N], trows[3 * N];
    kb_error err;
    kb_reduce_joint nan_tolerance = {N, times, rot, tr, NAN, 1.0};
    KB_ASSERT(kb_reduce_sweep(&nan_tolerance, keys, &n, rrows, trows, &err) == KB_ERANGE);
    kb_reduce_joint zero_tolerance = {N, times, rot, tr, 1.0, 0.0};
    KB_ASSERT(kb_reduce_sweep(&zero_tolerance, keys, &n, rrows, trows, &err) == KB_ERANGE);
    kb_reduce_joint one = {1, times, rot, tr, 1.0, 1.0};
    KB_ASSERT(kb_reduce_sweep(&one, keys, &n, rrows, trows, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_sweep(NULL, keys, &n, rrows, trows, &err) == KB_EBADSHAPE);
    kb_reduce_joint jt = {N, times, rot, tr, 1e-3, 1e-3};
    KB_ASSERT(kb_reduce_sweep(&jt, NULL, &n, rrows, trows, &err) == KB_EBADSHAPE);
    times[5] = times[4];
    KB_ASSERT(kb_reduce_sweep(&jt, keys, &n, rrows, trows, &err) == KB_ENOTSORTED);
    KB_ASSERT(err.index == 5 && err.arg == KB_ARG_TIMES);
    times[5] = NAN;
    KB_ASSERT(kb_reduce_sweep(&jt, keys, &n, rrows, trows, &err) == KB_ENONFINITE);
    track(0.3, 0);
    tr[3 * 11 + 1] = INFINITY;
    KB_ASSERT(kb_reduce_sweep(&jt, keys, &n, rrows, trows, &err) == KB_ENONFINITE);
    KB_ASSERT(err.index == 11 && err.arg == KB_ARG_VALUES);
    track(0.3, 0);
    for (int k = 0; k < 4; k++)
        rot[4 * 9 + k] = 0.0;
    KB_ASSERT(kb_reduce_sweep(&jt, keys, &n, rrows, trows, &err) == KB_EZERONORM);
    KB_ASSERT(err.index == 9);
}
