/* test_reduce.c -- key reduction on synthetic tracks: a uniform turn and a
 * line need only their end keys; on a wiggling track the greedy and swept
 * keys keep every frame within tolerance, as a spline through all of them
 * built and evaluated whole (not window by window) confirms; dropping keys
 * with refits keeps
 * fewer, within tolerance, and a failed drop restores what it changed;
 * bad input is refused; the error angle's series agrees with atan2. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kb_test.h"
#include "kbspline/kbspline.h"
#include "quat/kb_quat.h"
#include "motion/reduce/reduce_internal.h"

#define F 120

static double times[F], rot[F * 4], tr[F * 3];

/* A turn about an axis that wobbles, and a translation on a Lissajous curve. */
static void wiggle(double amplitude)
{
    for (int f = 0; f < F; f++) {
        double t = f / 60.0, half = 0.5 * (t + amplitude * sin(5.0 * t));
        double axis[3] = {amplitude * sin(3.0 * t), amplitude * cos(2.0 * t), 1.0};
        double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + 1.0);
        times[f] = t;
        rot[4 * f] = cos(half);
        for (int k = 0; k < 3; k++)
            rot[4 * f + 1 + k] = sin(half) * axis[k] / n;
        tr[3 * f] = t;
        tr[3 * f + 1] = amplitude * sin(4.0 * t);
        tr[3 * f + 2] = amplitude * cos(7.0 * t);
    }
}

/* Set where the rows splines_at_frames takes as TCB are each key's
 * tangent (tangent keys: the same arriving and leaving). */
static int tangent_rows;

/* The splines through these keys (n of them) with these TCB (NULL: zero),
 * each built whole, at every frame: q (F, 4) and x (F, 3). */
static int splines_at_frames(const ptrdiff_t *keys, ptrdiff_t n, const double *rtcb,
                             const double *ttcb, double *q, double *x)
{
    double kt[F], kq[F * 4], kx[F * 3], T[2][F], C[2][F], B[2][F], zero[F] = {0};
    double tin[F * 3], tout[F * 3], seg[F * KB_ROT_SEG], coef[F * 12];
    unsigned char kind[F];
    kb_error err;
    for (ptrdiff_t i = 0; i < n; i++) {
        kt[i] = times[keys[i]];
        for (int k = 0; k < 4; k++)
            kq[4 * i + k] = rot[4 * keys[i] + k];
        for (int k = 0; k < 3; k++)
            kx[3 * i + k] = tr[3 * keys[i] + k];
        for (int c = 0; c < 2; c++) {
            const double *tcb = c ? ttcb : rtcb;
            int as_tcb = tcb && !tangent_rows;
            T[c][i] = as_tcb ? tcb[3 * i] : 0.0;
            C[c][i] = as_tcb ? tcb[3 * i + 1] : 0.0;
            B[c][i] = as_tcb ? tcb[3 * i + 2] : 0.0;
        }
    }
    kb_param z = {zero, 0}, none = {NULL, 0}, kt_p = {kt, 0};
    const double *given[2] = {tangent_rows ? rtcb : NULL, tangent_rows ? ttcb : NULL};
    kb_rot_keys rk = {1, n, kt_p, kq, {T[0], 0}, {C[0], 0}, {B[0], 0}, z, z, none, none,
                      KB_TIMING_KB, KB_ENDS_NATURAL, NULL, given[0], given[0]};
    kb_tcb_keys pk = {1, n, 3, kt_p, kx, {T[1], 0}, {C[1], 0}, {B[1], 0}, z, z, none, none,
                      KB_TIMING_KB, KB_ENDS_NATURAL, given[1], given[1]};
    kb_rot_curve rc = {1, n - 1, kt, 0, seg, NULL, KB_EXTRAP_CLAMP, kind};
    kb_curve pc = {1, n - 1, 3, kt, 0, coef, NULL, KB_EXTRAP_CLAMP};
    return !(kb_rot_build(&rk, tin, tout, seg, NULL, kind, NULL, &err) ||
             kb_rot_eval(&rc, 0, 0, 1, times, F, 0, 0, 1, q, NULL, &err) ||
             kb_tcb_build(&pk, tin, tout, coef, NULL, &err) ||
             kb_curve_eval(&pc, 0, times, F, 0, 0, 1, x, NULL, &err));
}

/* The largest angle and distance, at every frame, of the splines through
 * these keys with these TCB (NULL: zero), each built whole; and the sums
 * of the squared residuals a fit of each channel weighs there (NULL: not
 * wanted): of the rotation, |2 vec(frame* spline)|^2 = 4 (1 - dot^2); of
 * the translation, |spline - frame|^2. */
static int frame_misfits(const ptrdiff_t *keys, ptrdiff_t n, const double *rtcb,
                         const double *ttcb, double *angle, double *distance, double squares[2])
{
    double q[F * 4], x[F * 3], sums[2] = {0.0, 0.0};
    if (!splines_at_frames(keys, n, rtcb, ttcb, q, x))
        return 0;
    *angle = *distance = 0.0;
    for (int f = 0; f < F; f++) {
        double dot = 0.0, d = 0.0;
        for (int k = 0; k < 4; k++)
            dot += q[4 * f + k] * rot[4 * f + k];
        for (int k = 0; k < 3; k++)
            d += (x[3 * f + k] - tr[3 * f + k]) * (x[3 * f + k] - tr[3 * f + k]);
        *angle = fmax(*angle, 2.0 * acos(fmin(fabs(dot), 1.0)));
        *distance = fmax(*distance, sqrt(d));
        sums[0] += 4.0 * (1.0 - dot * dot);
        sums[1] += d;
    }
    if (squares)
        memcpy(squares, sums, sizeof sums);
    return 1;
}

static int whole_errors(const ptrdiff_t *keys, ptrdiff_t n, const double *rtcb,
                        const double *ttcb, double *angle, double *distance)
{
    return frame_misfits(keys, n, rtcb, ttcb, angle, distance, NULL);
}

KB_TEST(test_reduce_a_uniform_turn_and_a_line)
{
    wiggle(0.0);
    kb_reduce_joint jt = {F, times, rot, tr, 1e-10, 1e-10, 0};
    ptrdiff_t keys[F], n = 0;
    double angle[F], distance[F];
    kb_error err;
    KB_ASSERT(kb_reduce_greedy(&jt, keys, &n, angle, distance, &err) == KB_OK);
    KB_ASSERT(n == 2 && keys[0] == 0 && keys[1] == F - 1);
}

KB_TEST(test_reduce_greedy_and_fitted_keep_every_frame)
{
    wiggle(0.3);
    kb_reduce_joint jt = {F, times, rot, tr, 5e-3, 3e-3, 0};
    ptrdiff_t keys[F], n = 0;
    double angle[F], distance[F], worst_angle, worst_distance;
    double *rtcb = calloc(3 * F, sizeof(double)), *ttcb = calloc(3 * F, sizeof(double));
    kb_error err;
    KB_ASSERT(rtcb && ttcb);
    KB_ASSERT(kb_reduce_greedy(&jt, keys, &n, angle, distance, &err) == KB_OK);
    KB_ASSERT(n > 2 && n < F / 3);
    KB_ASSERT(whole_errors(keys, n, NULL, NULL, &worst_angle, &worst_distance));
    KB_ASSERT(worst_angle <= 5e-3 + 1e-7 && worst_distance <= 3e-3);
    ptrdiff_t greedy = n;
    /* swept tangent keys: fewer */
    KB_ASSERT(kb_reduce_sweep(&jt, keys, &n, rtcb, ttcb, &err) == KB_OK);
    KB_ASSERT(n >= 2 && n < greedy);
    tangent_rows = 1;
    int whole = whole_errors(keys, n, rtcb, ttcb, &worst_angle, &worst_distance);
    tangent_rows = 0;
    KB_ASSERT(whole && worst_angle <= 5e-3 + 1e-7 && worst_distance <= 3e-3);
    free(rtcb);
    free(ttcb);
}

/* Tangent keys (each key's own tangent fitted, C1): every frame within
 * the tolerances by the public splines with those tangents built whole,
 * kb_reduce_rebuild's curves those splines', and kb_reduce_drop under
 * looser tolerances drops more, still within them. */
KB_TEST(test_reduce_fit_tangent_keys_keep_every_frame)
{
    wiggle(0.3);
    kb_reduce_joint jt = {F, times, rot, tr, 5e-3, 3e-3, 1};
    ptrdiff_t keys[F], n = 0;
    double angle[F], distance[F], worst_angle, worst_distance, q[F * 4], x[F * 3], q2[F * 4];
    double *rows = calloc(6 * F, sizeof(double)), *rtan = rows, *ttan = rows + 3 * F;
    kb_error err;
    KB_ASSERT(rows);
    KB_ASSERT(kb_reduce_sweep(&jt, keys, &n, rtan, ttan, &err) == KB_OK);
    KB_ASSERT(n >= 2);
    tangent_rows = 1;
    int built = splines_at_frames(keys, n, rtan, ttan, q, x);
    int whole = whole_errors(keys, n, rtan, ttan, &worst_angle, &worst_distance);
    tangent_rows = 0;
    KB_ASSERT(built && whole);
    KB_ASSERT(worst_angle <= 5e-3 + 1e-7 && worst_distance <= 3e-3);
    KB_ASSERT(kb_reduce_rebuild(&jt, keys, n, rtan, ttan, q2, NULL, NULL, NULL, &err) == KB_OK);
    for (int i = 0; i < 4 * F; i++)  /* up to sign, which no error sees */
        KB_ASSERT_NEAR(fabs(q2[i]), fabs(q[i]), 1e-12);
    kb_reduce_joint looser = {F, times, rot, tr, 3e-2, 2e-2, 1};
    ptrdiff_t before = n;
    KB_ASSERT(kb_reduce_drop(&looser, keys, &n, rtan, ttan, angle, distance, &err) ==
              KB_OK);
    KB_ASSERT(n < before);
    tangent_rows = 1;
    whole = whole_errors(keys, n, rtan, ttan, &worst_angle, &worst_distance);
    tangent_rows = 0;
    KB_ASSERT(whole && worst_angle <= 3e-2 + 1e-7 && worst_distance <= 2e-2);
    free(rows);
}

/* kb_reduce_drop from swept keys under looser tolerances: fewer keys, a
 * subset of them, every frame still within tolerance by splines built
 * whole; under a tolerance no frame meets, every drop fails and restores
 * keys and tangents to the bit. */
KB_TEST(test_reduce_drop_refits_and_restores)
{
    wiggle(0.3);
    kb_reduce_joint jt = {F, times, rot, tr, 5e-3, 3e-3, 1};
    kb_reduce_joint tighter = {F, times, rot, tr, 2e-3, 1e-3, 1};
    ptrdiff_t keys[F], start[F], n = 0;
    double angle[F], distance[F], worst_angle, worst_distance;
    double *rtcb = calloc(3 * F, sizeof(double)), *ttcb = calloc(3 * F, sizeof(double));
    double *copy = calloc(3 * F, sizeof(double));
    kb_error err;
    KB_ASSERT(rtcb && ttcb && copy);
    KB_ASSERT(kb_reduce_sweep(&tighter, keys, &n, rtcb, ttcb, &err) == KB_OK);
    ptrdiff_t greedy = n;
    memcpy(start, keys, (size_t)n * sizeof(ptrdiff_t));
    KB_ASSERT(kb_reduce_drop(&jt, keys, &n, rtcb, ttcb, angle, distance, &err) == KB_OK);
    KB_ASSERT(n >= 2 && n < greedy && keys[0] == 0 && keys[n - 1] == F - 1);
    for (ptrdiff_t i = 0, k = 0; i < n; i++) {  /* a subset of the greedy keys */
        while (k < greedy && start[k] < keys[i])
            k++;
        KB_ASSERT(k < greedy && start[k] == keys[i]);
    }
    tangent_rows = 1;
    int whole = whole_errors(keys, n, rtcb, ttcb, &worst_angle, &worst_distance);
    tangent_rows = 0;
    KB_ASSERT(whole && worst_angle <= 5e-3 + 1e-7 && worst_distance <= 3e-3);
    for (ptrdiff_t i = 3 * n; i < 3 * F; i++)  /* the rows past the keys: zero */
        KB_ASSERT(rtcb[i] == 0.0 && ttcb[i] == 0.0);
    /* every drop fails: the same keys, the same TCB */
    kb_reduce_joint tight = {F, times, rot, tr, 1e-12, 1e-12, 1};
    for (ptrdiff_t i = 0; i < 3 * n; i++)
        rtcb[i] = ttcb[i] = copy[i] = 0.5 * sin((double)i);
    ptrdiff_t before = n;
    memcpy(start, keys, (size_t)n * sizeof(ptrdiff_t));
    KB_ASSERT(kb_reduce_drop(&tight, keys, &n, rtcb, ttcb, angle, distance, &err) == KB_OK);
    KB_ASSERT(n == before && !memcmp(keys, start, (size_t)n * sizeof(ptrdiff_t)));
    KB_ASSERT(!memcmp(rtcb, copy, (size_t)(3 * n) * sizeof(double)));
    KB_ASSERT(!memcmp(ttcb, copy, (size_t)(3 * n) * sizeof(double)));
    /* a tangent not finite is refused */
    rtcb[4] = INFINITY;
    KB_ASSERT(kb_reduce_drop(&jt, keys, &n, rtcb, ttcb, angle, distance, &err) ==
              KB_ENONFINITE);
    free(rtcb);
    free(ttcb);
    free(copy);
}

/* The shortcuts kept for speed switched off (kb_reduce_shortcuts): the
 * sweep keeps the same keys and rows, the drops still hold the tolerances. */
KB_TEST(test_reduce_shortcuts_switched_off)
{
    wiggle(0.3);
    kb_reduce_joint jt = {F, times, rot, tr, 5e-3, 3e-3, 1};
    kb_reduce_joint tighter = {F, times, rot, tr, 2e-3, 1e-3, 1};
    static ptrdiff_t keys[2][F], n[2];
    static double rows[2][2][3 * F], angle[F], distance[F];
    kb_error err;
    for (int off = 0; off < 2; off++) {
        kb_reduce_shortcuts = !off;
        KB_ASSERT(kb_reduce_sweep(&tighter, keys[off], &n[off], rows[off][0], rows[off][1],
                                  &err) == KB_OK);
    }
    KB_ASSERT(n[0] == n[1] && !memcmp(keys[0], keys[1], sizeof keys[0]) &&
              !memcmp(rows[0], rows[1], sizeof rows[0]));
    for (int off = 0; off < 2; off++) {
        kb_reduce_shortcuts = !off;
        KB_ASSERT(kb_reduce_drop(&jt, keys[off], &n[off], rows[off][0], rows[off][1], angle,
                                 distance, &err) == KB_OK);
        double worst_angle, worst_distance;
        tangent_rows = 1;
        int whole = whole_errors(keys[off], n[off], rows[off][0], rows[off][1], &worst_angle,
                                 &worst_distance);
        tangent_rows = 0;
        KB_ASSERT(whole && worst_angle <= 5e-3 + 1e-7 && worst_distance <= 3e-3);
    }
    kb_reduce_shortcuts = 1;
    KB_ASSERT(n[1] <= n[0] + 2 && n[1] < F / 4);
}

/* The greedy keys under s times the tolerances are a prefix of the order
 * kept at a tighter floor: the first and last frames and the frames keyed
 * before the first whose score was at most s. */
KB_TEST(test_reduce_greedy_order_gives_every_looser_scale)
{
    wiggle(0.3);
    kb_reduce_joint jt = {F, times, rot, tr, 1e-3, 6e-4, 0};
    ptrdiff_t order[F], n_order = 0, keys[F], n = 0;
    double score[F], angle[F], distance[F];
    kb_error err;
    KB_ASSERT(kb_reduce_greedy_order(&jt, 0.75, order, score, &n_order, &err) == KB_OK);
    KB_ASSERT(n_order > 10 && n_order <= F - 2);
    const double scales[] = {0.75, 1.0, 2.0, 4.0, 16.0, 1048576.0};  /* exact */
    for (int i = 0; i < 6; i++) {
        double s = scales[i];
        kb_reduce_joint scaled = {F, times, rot, tr, s * 1e-3, s * 6e-4, 0};
        KB_ASSERT(kb_reduce_greedy(&scaled, keys, &n, angle, distance, &err) == KB_OK);
        ptrdiff_t m = 0;
        while (m < n_order && score[m] > s)
            m++;
        KB_ASSERT(n == m + 2);
        unsigned char keyed[F] = {0};
        keyed[0] = keyed[F - 1] = 1;
        for (ptrdiff_t k = 0; k < m; k++)
            keyed[order[k]] = 1;
        for (ptrdiff_t k = 0; k < n; k++)
            KB_ASSERT(keyed[keys[k]]);
    }
    KB_ASSERT(kb_reduce_greedy_order(&jt, 0.0, order, score, &n_order, &err) == KB_ERANGE);
    KB_ASSERT(kb_reduce_greedy_order(&jt, NAN, order, score, &n_order, &err) == KB_ERANGE);
}

/* A run carried on from the frames an earlier one keyed at a higher floor
 * is one run to the lower floor: the same order and scores, bit for bit;
 * frames keyed already that are not distinct interior frames are refused. */
KB_TEST(test_reduce_greedy_order_carries_on_from_a_higher_floor)
{
    wiggle(0.3);
    kb_reduce_joint jt = {F, times, rot, tr, 1e-3, 6e-4, 0};
    ptrdiff_t order[F], carried[F], n_order = 0, n_carried = 0;
    double score[F], carried_score[F];
    kb_error err;
    KB_ASSERT(kb_reduce_greedy_order(&jt, 0.75, order, score, &n_order, &err) == KB_OK);
    KB_ASSERT(kb_reduce_greedy_order(&jt, 4.0, carried, carried_score, &n_carried, &err) ==
              KB_OK);
    KB_ASSERT(n_carried > 2 && n_carried < n_order);
    ptrdiff_t first = n_carried;
    KB_ASSERT(kb_reduce_greedy_order(&jt, 0.75, carried, carried_score, &n_carried, &err) ==
              KB_OK);
    KB_ASSERT(n_carried == n_order);
    KB_ASSERT(memcmp(carried, order, (size_t)n_order * sizeof(ptrdiff_t)) == 0);
    KB_ASSERT(memcmp(carried_score + first, score + first,
                     (size_t)(n_order - first) * sizeof(double)) == 0);
    /* a floor above the last one keyed: nothing more */
    KB_ASSERT(kb_reduce_greedy_order(&jt, 8.0, carried, carried_score, &n_carried, &err) ==
              KB_OK && n_carried == n_order);
    const ptrdiff_t bad[][2] = {{0, 5}, {F - 1, 5}, {5, 5}, {-1, 5}, {F, 5}};
    for (int i = 0; i < 5; i++) {
        ptrdiff_t two = 2;
        memcpy(carried, bad[i], sizeof bad[i]);
        KB_ASSERT(kb_reduce_greedy_order(&jt, 0.75, carried, carried_score, &two, &err) ==
                  KB_EBADSHAPE);
    }
    ptrdiff_t too_many = F - 1, none = -1;
    KB_ASSERT(kb_reduce_greedy_order(&jt, 0.75, carried, carried_score, &too_many, &err) ==
              KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_greedy_order(&jt, 0.75, carried, carried_score, &none, &err) ==
              KB_EBADSHAPE);
}

/* A channel of infinite tolerance is skipped while choosing keys, yet its
 * errors are reported; the rebuilt curves and errors are those of splines
 * built whole. */
KB_TEST(test_reduce_reports_every_channel_and_rebuilds_and_errors_of_curves)
{
    wiggle(0.3);
    kb_reduce_joint jt = {F, times, rot, tr, 4e-3, INFINITY, 0};
    ptrdiff_t keys[F], n = 0;
    double angle[F], distance[F], q[F * 4], x[F * 3], a2[F], d2[F], worst[2], rtcb[3 * F];
    kb_error err;
    KB_ASSERT(kb_reduce_greedy(&jt, keys, &n, angle, distance, &err) == KB_OK);
    KB_ASSERT(whole_errors(keys, n, NULL, NULL, &worst[0], &worst[1]));
    double max_angle = 0.0, max_distance = 0.0;
    for (int f = 0; f < F; f++) {
        max_angle = fmax(max_angle, angle[f]);
        max_distance = fmax(max_distance, distance[f]);
    }
    KB_ASSERT(max_angle <= 4e-3 && fabs(max_angle - worst[0]) <= 1e-7);
    KB_ASSERT(max_distance > 1e-3 && fabs(max_distance - worst[1]) <= 1e-12);
    for (ptrdiff_t i = 0; i < 3 * n; i++)
        rtcb[i] = 0.1 * sin((double)i);
    KB_ASSERT(kb_reduce_rebuild(&jt, keys, n, rtcb, NULL, q, x, a2, d2, &err) == KB_OK);
    KB_ASSERT(whole_errors(keys, n, rtcb, NULL, &worst[0], &worst[1]));
    max_angle = max_distance = 0.0;
    for (int f = 0; f < F; f++) {
        max_angle = fmax(max_angle, a2[f]);
        max_distance = fmax(max_distance, d2[f]);
        KB_ASSERT(fabs(q[4 * f] * q[4 * f] + q[4 * f + 1] * q[4 * f + 1] +
                       q[4 * f + 2] * q[4 * f + 2] + q[4 * f + 3] * q[4 * f + 3] - 1.0) < 1e-12);
    }
    KB_ASSERT(fabs(max_angle - worst[0]) <= 1e-7 && fabs(max_distance - worst[1]) <= 1e-12);
    KB_ASSERT(fabs(x[3 * 7] - tr[3 * 7]) <= d2[7] + 1e-15);
    for (int f = 0; f < F; f++)  /* the errors of the curves, and of either sign */
        for (int k = 0; f % 3 == 0 && k < 4; k++)
            q[4 * f + k] = -q[4 * f + k];
    KB_ASSERT(kb_reduce_errors(&jt, q, x, angle, distance, &err) == KB_OK);
    KB_ASSERT(memcmp(angle, a2, sizeof angle) == 0 && memcmp(distance, d2, sizeof distance) == 0);
    ptrdiff_t unsorted[3] = {0, 5, 5}, short_keys[2] = {0, F - 2};
    KB_ASSERT(kb_reduce_rebuild(&jt, short_keys, 2, NULL, NULL, q, x, a2, d2, &err) ==
              KB_EBADSHAPE);
    unsorted[2] = F - 1;
    unsorted[1] = 0;
    KB_ASSERT(kb_reduce_rebuild(&jt, unsorted, 3, NULL, NULL, q, x, a2, d2, &err) ==
              KB_ENOTSORTED);
}

KB_TEST(test_reduce_bad_input)
{
    wiggle(0.3);
    ptrdiff_t keys[F], n = 0;
    double angle[F], distance[F], tcb[6] = {0};
    kb_error err;
    kb_reduce_joint nan_tolerance = {F, times, rot, tr, NAN, 1.0, 0};
    KB_ASSERT(kb_reduce_greedy(&nan_tolerance, keys, &n, angle, distance, &err) == KB_ERANGE);
    kb_reduce_joint one = {1, times, rot, tr, 1.0, 1.0, 0};
    KB_ASSERT(kb_reduce_greedy(&one, keys, &n, angle, distance, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_greedy(NULL, keys, &n, angle, distance, &err) == KB_EBADSHAPE);
    kb_reduce_joint jt = {F, times, rot, tr, 1.0, 1.0, 0};
    ptrdiff_t bad[2] = {0, F - 2};
    n = 2;
    KB_ASSERT(kb_reduce_drop(&jt, bad, &n, tcb, tcb, angle, distance, &err) ==
              KB_EBADSHAPE);
    rot[4 * 7 + 2] = INFINITY;
    KB_ASSERT(kb_reduce_greedy(&jt, keys, &n, angle, distance, &err) == KB_ENONFINITE);
    KB_ASSERT(err.index == 7);
    for (int k = 0; k < 4; k++)  /* a zero quaternion is no rotation, key or not */
        rot[4 * 9 + k] = 0.0;
    rot[4 * 7 + 2] = 0.0;
    KB_ASSERT(kb_reduce_greedy(&jt, keys, &n, angle, distance, &err) == KB_EZERONORM);
    KB_ASSERT(err.index == 9);
    KB_ASSERT(kb_reduce_errors(&jt, rot, tr, angle, distance, &err) == KB_EZERONORM);
}

/* kb_rotation_angle, whose series stands in for atan2 at small angles,
 * within two ulps of 2 atan2(s, c) (glibc's, within one ulp itself) at
 * ratios s / c from 2^-1000 to 2^10, across the series' edge at 2^-4. */
KB_TEST(test_reduce_rotation_angle_is_atan2s)
{
    unsigned long long state = 0x9E3779B97F4A7C15ull;
    KB_ASSERT(kb_rotation_angle(0.0, 1.0) == 0.0 && kb_rotation_angle(0.0, 0.0) == 0.0);
    for (int i = 0; i < 200000; i++) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        double u = (double)(state >> 11) / 9007199254740992.0;  /* [0, 1) */
        double c = 0.05 + 0.95 * u;
        double exponent = i % 2 ? -1000.0 + 1010.0 * u : -4.0 + 0.002 * (u - 0.5);
        double s = c * exp2(exponent), want = 2.0 * atan2(s, c);
        KB_ASSERT(fabs(kb_rotation_angle(s, c) - want) <= 2.0 * DBL_EPSILON * want);
    }
}

/* The splines through a window of keys, two beyond a run of segments, are
 * the whole splines on that run, bit for bit (rotations up to the sign of
 * every key): a key's tangent hangs on its neighbours alone.  The greedy
 * selection and the fit's refits near new or dropped keys rest on this. */
KB_TEST(test_reduce_window_of_keys_is_the_whole_spline)
{
    enum { K = 12 };
    const ptrdiff_t keys[K] = {0, 5, 9, 20, 31, 33, 47, 60, 71, 90, 104, F - 1};
    double rtcb[3 * K], ttcb[3 * K], q[F * 4], x[F * 3], wq[F * 4], wx[F * 3];
    unsigned long long state = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < 3 * K; i++)
        for (int c = 0; c < 2; c++) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (c ? ttcb : rtcb)[i] = 1.8 * ((double)(state >> 11) / 9007199254740992.0) - 0.9;
        }
    wiggle(0.6);
    for (int k = 0; k < 4; k++)  /* keys on both sides: the splines flip them */
        rot[4 * keys[4] + k] = -rot[4 * keys[4] + k];
    KB_ASSERT(splines_at_frames(keys, K, rtcb, ttcb, q, x));
    int compared = 0;
    for (int a = 0; a < K; a++)
        for (int b = a + 3; b < K; b++) {
            KB_ASSERT(splines_at_frames(keys + a, b - a + 1, rtcb + 3 * a, ttcb + 3 * a, wq,
                                        wx));
            for (ptrdiff_t f = keys[a + 1]; f <= keys[b - 1]; f++) {  /* segments a+1..b-2 */
                double dot = 0.0;
                for (int k = 0; k < 4; k++)
                    dot += wq[4 * f + k] * q[4 * f + k];
                for (int k = 0; k < 4; k++)
                    KB_ASSERT((dot < 0 ? -wq[4 * f + k] : wq[4 * f + k]) == q[4 * f + k]);
                for (int k = 0; k < 3; k++)
                    KB_ASSERT(wx[3 * f + k] == x[3 * f + k]);
                compared++;
            }
        }
    KB_ASSERT(compared > 1000);
}
