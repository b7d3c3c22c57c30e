/* test_spline.c -- building and evaluating whole tracks through the C API. */
#include <string.h>

#include "kb_test.h"
#include "test_helpers.h"

static const double T5[5] = {0.0, 0.5, 1.5, 1.75, 3.0};
static const double X5[10] = {0, 0, 1, 2, 3, 1, 4, -1, 6, 0.5};  /* (5, 2) */

static const kb_ends all_ends[5] = {KB_ENDS_NATURAL, KB_ENDS_PHANTOM, KB_ENDS_REFLECT,
                                    KB_ENDS_CLAMPED, KB_ENDS_CLOSED};

/* A closed copy of X5: the last key repeats the first. */
static void closed_values(double *x)
{
    memcpy(x, X5, sizeof X5);
    x[8] = x[0];
    x[9] = x[1];
}

KB_TEST(test_spline_interpolates_keys)
{
    double xc[10];
    closed_values(xc);
    for (int e = 0; e < 5; e++) {
        track tr;
        const double *x = all_ends[e] == KB_ENDS_CLOSED ? xc : X5;
        track_init(&tr, 5, 2, T5, x, KB_TIMING_KB, all_ends[e]);
        tr.tension[2] = 0.5;
        tr.bias[1] = -0.3;
        KB_ASSERT(track_build(&tr, KB_EXTRAP_CLAMP, 0) == KB_OK);
        int first = all_ends[e] == KB_ENDS_PHANTOM, last = first ? 3 : 4;
        for (int i = first; i <= last; i++) {
            double p[2];
            KB_ASSERT(track_eval(&tr, 0, T5[i], p) == KB_OK);
            KB_ASSERT_NEAR(p[0], x[2 * i], 1e-13);
            KB_ASSERT_NEAR(p[1], x[2 * i + 1], 1e-13);
        }
    }
}

/* Tangents are optional outputs: without them the coefficients are the same. */
KB_TEST(test_spline_build_without_tangents)
{
    double xc[10];
    closed_values(xc);
    for (int e = 0; e < 5; e++) {
        track tr;
        track_init(&tr, 5, 2, T5, all_ends[e] == KB_ENDS_CLOSED ? xc : X5, KB_TIMING_KB,
                   all_ends[e]);
        tr.tension[3] = -0.4;
        tr.bias[2] = 0.6;
        KB_ASSERT(track_build(&tr, KB_EXTRAP_CLAMP, 0) == KB_OK);
        double coef[MAXK * 4 * MAXD];
        const ptrdiff_t n = kb_num_segments(all_ends[e], 5) * 4 * 2;
        kb_error err;
        KB_ASSERT(kb_tcb_build(&tr.keys, NULL, NULL, coef, NULL, &err) == KB_OK);
        KB_ASSERT(memcmp(coef, tr.coef, (size_t)n * sizeof(double)) == 0);
        KB_ASSERT(kb_tcb_build(&tr.keys, tr.tin, NULL, coef, NULL, &err) == KB_EBADSHAPE);
    }
}

/* Velocity and acceleration are the derivatives of position and velocity. */
KB_TEST(test_spline_derivatives_match_differences)
{
    track tr;
    track_init(&tr, 5, 2, T5, X5, KB_TIMING_3DS, KB_ENDS_NATURAL);
    tr.continuity[2] = 0.4;
    tr.ease_from[1] = 0.3;
    tr.ease_to[2] = 0.2;
    KB_ASSERT(track_build(&tr, KB_EXTRAP_CLAMP, 1) == KB_OK);
    const double h = 1e-6, ts[4] = {0.2, 0.7, 1.25, 2.2};  /* off the ease breakpoints */
    for (int i = 0; i < 4; i++) {
        double pp[2], pm[2], vp[2], vm[2], v[2], a[2];
        track_eval(&tr, 0, ts[i] + h, pp);
        track_eval(&tr, 0, ts[i] - h, pm);
        track_eval(&tr, 1, ts[i] + h, vp);
        track_eval(&tr, 1, ts[i] - h, vm);
        track_eval(&tr, 1, ts[i], v);
        track_eval(&tr, 2, ts[i], a);
        for (int j = 0; j < 2; j++) {
            KB_ASSERT_NEAR(v[j], (pp[j] - pm[j]) / (2 * h), 1e-6);
            KB_ASSERT_NEAR(a[j], (vp[j] - vm[j]) / (2 * h), 1e-5);
        }
    }
}

KB_TEST(test_spline_natural_ends_have_zero_acceleration)
{
    track tr;
    track_init(&tr, 5, 2, T5, X5, KB_TIMING_PARABOLIC, KB_ENDS_NATURAL);
    tr.tension[1] = 0.6;
    KB_ASSERT(track_build(&tr, KB_EXTRAP_CLAMP, 0) == KB_OK);
    double a0[2], a1[2];
    track_eval(&tr, 2, T5[0], a0);
    track_eval(&tr, 2, T5[4], a1);
    for (int j = 0; j < 2; j++) {
        KB_ASSERT_NEAR(a0[j], 0.0, 1e-12);
        KB_ASSERT_NEAR(a1[j], 0.0, 1e-12);
    }
}

KB_TEST(test_spline_clamped_ends_have_given_velocity)
{
    track tr;
    track_init(&tr, 5, 2, T5, X5, KB_TIMING_AVERAGE, KB_ENDS_CLAMPED);
    tr.start[0] = 2.0;
    tr.start[1] = -1.0;
    tr.end[0] = 0.5;
    KB_ASSERT(track_build(&tr, KB_EXTRAP_CLAMP, 0) == KB_OK);
    double v0[2], v1[2];
    track_eval(&tr, 1, T5[0], v0);
    track_eval(&tr, 1, T5[4], v1);
    KB_ASSERT_NEAR(v0[0], 2.0, 1e-13);
    KB_ASSERT_NEAR(v0[1], -1.0, 1e-13);
    KB_ASSERT_NEAR(v1[0], 0.5, 1e-13);
    KB_ASSERT_NEAR(v1[1], 0.0, 1e-13);
}

/* Given tangents are the velocities on each side of every key; the
 * options that shape computed tangents are refused beside them. */
KB_TEST(test_spline_given_tangents_are_the_key_velocities)
{
    double gin[10], gout[10];
    for (int i = 0; i < 10; i++) {
        gin[i] = 0.5 * i - 2.0;
        gout[i] = (i % 3) - 1.5;
    }
    track tr;
    track_init(&tr, 5, 2, T5, X5, KB_TIMING_KB, KB_ENDS_NATURAL);
    tr.keys.given_in = gin;
    tr.keys.given_out = gout;
    KB_ASSERT(track_build(&tr, KB_EXTRAP_CLAMP, 0) == KB_OK);
    const double h = 1e-5;  /* one-sided differences of second order */
    for (int i = 0; i < 5; i++) {
        double p[2], a1[2], a2[2], b1[2], b2[2];
        track_eval(&tr, 0, T5[i], p);
        track_eval(&tr, 0, T5[i] + h, a1);
        track_eval(&tr, 0, T5[i] + 2 * h, a2);
        track_eval(&tr, 0, T5[i] - h, b1);
        track_eval(&tr, 0, T5[i] - 2 * h, b2);
        for (int j = 0; j < 2; j++) {
            KB_ASSERT_NEAR(p[j], X5[2 * i + j], 1e-13);
            if (i < 4)
                KB_ASSERT_NEAR((4 * a1[j] - a2[j] - 3 * p[j]) / (2 * h), gout[2 * i + j], 1e-7);
            if (i > 0)
                KB_ASSERT_NEAR((3 * p[j] - 4 * b1[j] + b2[j]) / (2 * h), gin[2 * i + j], 1e-7);
        }
    }
    kb_error err;
    gout[7] = NAN;
    KB_ASSERT(kb_tcb_build(&tr.keys, tr.tin, tr.tout, tr.coef, NULL, &err) == KB_ENONFINITE);
    KB_ASSERT(err.arg == KB_ARG_TANGENTS && err.index == 3);
    gout[7] = 0.0;
    tr.keys.ends = KB_ENDS_CLAMPED;
    KB_ASSERT(kb_tcb_build(&tr.keys, tr.tin, tr.tout, tr.coef, NULL, &err) == KB_EBADOPTION);
    tr.keys.ends = KB_ENDS_NATURAL;
    tr.keys.given_in = NULL;
    KB_ASSERT(kb_tcb_build(&tr.keys, tr.tin, tr.tout, tr.coef, NULL, &err) == KB_EBADSHAPE);
}

/* A closed loop is C1 across its seam and periodic. */
KB_TEST(test_spline_closed_seam_is_c1_and_periodic)
{
    track tr;
    double xc[10];
    closed_values(xc);
    track_init(&tr, 5, 2, T5, xc, KB_TIMING_KB, KB_ENDS_CLOSED);
    KB_ASSERT(track_build(&tr, KB_EXTRAP_PERIODIC, 0) == KB_OK);
    double v0[2], v1[2], p[2], q[2];
    track_eval(&tr, 1, T5[0], v0);
    track_eval(&tr, 1, T5[4], v1);
    track_eval(&tr, 0, 0.3, p);
    track_eval(&tr, 0, 0.3 + 2 * 3.0, q);
    for (int j = 0; j < 2; j++) {
        KB_ASSERT_NEAR(v0[j], v1[j], 1e-12);
        KB_ASSERT_NEAR(p[j], q[j], 1e-12);
    }
}

KB_TEST(test_spline_phantom_domain_is_inner_keys)
{
    track tr;
    track_init(&tr, 5, 2, T5, X5, KB_TIMING_KB, KB_ENDS_PHANTOM);
    KB_ASSERT(track_build(&tr, KB_EXTRAP_CLAMP, 0) == KB_OK);
    KB_ASSERT(tr.curve.n_seg == 2);
    double p[2];
    track_eval(&tr, 0, -10.0, p);  /* clamps to t(1) */
    KB_ASSERT_NEAR(p[0], X5[2], 1e-14);
    KB_ASSERT(isnan(tr.tin[0]) && isnan(tr.tout[8]));
}

/* linear extrapolation continues with the end velocity; acceleration 0. */
KB_TEST(test_spline_linear_extrapolation)
{
    track tr;
    track_init(&tr, 5, 2, T5, X5, KB_TIMING_KB, KB_ENDS_NATURAL);
    KB_ASSERT(track_build(&tr, KB_EXTRAP_LINEAR, 0) == KB_OK);
    double p_end[2], v_end[2], p[2], v[2], a[2];
    track_eval(&tr, 0, 3.0, p_end);
    track_eval(&tr, 1, 3.0, v_end);
    track_eval(&tr, 0, 5.0, p);
    track_eval(&tr, 1, 5.0, v);
    track_eval(&tr, 2, 5.0, a);
    for (int j = 0; j < 2; j++) {
        KB_ASSERT_NEAR(p[j], p_end[j] + 2.0 * v_end[j], 1e-12);
        KB_ASSERT_NEAR(v[j], v_end[j], 1e-12);
        KB_ASSERT_NEAR(a[j], 0.0, 0);
    }
}

/* Keys at 1e9 + t give the same curve as keys at t. */
KB_TEST(test_spline_large_absolute_times)
{
    track near, far;
    double shifted[5];
    for (int i = 0; i < 5; i++)
        shifted[i] = T5[i] + 1e9;
    track_init(&near, 5, 2, T5, X5, KB_TIMING_KB, KB_ENDS_NATURAL);
    track_init(&far, 5, 2, shifted, X5, KB_TIMING_KB, KB_ENDS_NATURAL);
    KB_ASSERT(track_build(&near, KB_EXTRAP_CLAMP, 0) == KB_OK);
    KB_ASSERT(track_build(&far, KB_EXTRAP_CLAMP, 0) == KB_OK);
    for (int i = 0; i <= 24; i++) {
        double p[2], q[2], t = i * 0.125;
        track_eval(&near, 1, t, p);
        track_eval(&far, 1, t + 1e9, q);
        KB_ASSERT_NEAR(p[0], q[0], 1e-12);
        KB_ASSERT_NEAR(p[1], q[1], 1e-12);
    }
}

/* Unsorted queries, shared or per-track times, float32 output: same values. */
KB_TEST(test_spline_query_paths_agree)
{
    enum { NT = 3, M = 600 };
    static double times[NT * 5], values[NT * 10], tin[NT * 10], tout[NT * 10];
    static double coef[NT * 4 * 4 * 2], ts[M], ts_rows[NT * M];
    static double shared[NT * M * 2], rows[NT * M * 2];
    static float single[NT * M * 2];
    static double zeros[5], one_t[5];
    for (int tr = 0; tr < NT; tr++)
        for (int i = 0; i < 5; i++) {
            times[tr * 5 + i] = T5[i];
            values[tr * 10 + 2 * i] = X5[2 * i] * (tr + 1);
            values[tr * 10 + 2 * i + 1] = X5[2 * i + 1] - tr;
        }
    memcpy(one_t, T5, sizeof one_t);
    for (int i = 0; i < M; i++) {
        ts[i] = -0.5 + 4.0 * ((i * 7919) % M) / M;  /* scrambled, some outside */
        for (int tr = 0; tr < NT; tr++)
            ts_rows[tr * M + i] = ts[i];
    }
    kb_tcb_keys k = {NT, 5, 2, {one_t, 0}, values, {zeros, 0}, {zeros, 0}, {zeros, 0},
                     {zeros, 0}, {zeros, 0}, {NULL, 0}, {NULL, 0}, KB_TIMING_KB,
                     KB_ENDS_NATURAL, NULL, NULL};
    kb_error err;
    KB_ASSERT(kb_tcb_build(&k, tin, tout, coef, NULL, &err) == KB_OK);
    kb_curve c = {NT, 4, 2, one_t, 0, coef, NULL, KB_EXTRAP_LINEAR};
    kb_curve c_rows = {NT, 4, 2, times, 5, coef, NULL, KB_EXTRAP_LINEAR};
    KB_ASSERT(kb_curve_eval(&c, 0, ts, M, 0, 0, NT, shared, NULL, &err) == KB_OK);
    KB_ASSERT(kb_curve_eval(&c_rows, 0, ts_rows, M, M, 0, NT, rows, NULL, &err) == KB_OK);
    KB_ASSERT(kb_curve_eval(&c, 0, ts, M, 0, 0, NT, NULL, single, &err) == KB_OK);
    for (int i = 0; i < NT * M * 2; i++) {
        KB_ASSERT_NEAR(shared[i], rows[i], 0);
        KB_ASSERT_NEAR((double)single[i], (double)(float)shared[i], 0);
    }
    /* and each against a one-at-a-time evaluation */
    for (int tr = 0; tr < NT; tr++)
        for (int i = 0; i < M; i += 37) {
            double p[2];
            KB_ASSERT(kb_curve_eval(&c, 0, &ts[i], 1, 0, tr, tr + 1,
                                    p - tr * 2, NULL, &err) == KB_OK);
            KB_ASSERT_NEAR(p[0], shared[(tr * M + i) * 2], 0);
        }
}

/* Split over threads, a large call writes exactly what one thread does. */
KB_TEST(test_spline_threaded_equals_serial)
{
    enum { NT = 64, M = 2000 };
    static double values[NT * 5 * 2], tin[NT * 10], tout[NT * 10], coef[NT * 4 * 4 * 2];
    static double ts[M], one[NT * M * 2], many[NT * M * 2];
    static double zeros[5];
    for (int i = 0; i < NT * 10; i++)
        values[i] = sin(0.37 * i);
    for (int i = 0; i < M; i++)
        ts[i] = 3.5 * i / M;
    kb_tcb_keys k = {NT, 5, 2, {T5, 0}, values, {zeros, 0}, {zeros, 0}, {zeros, 0},
                     {zeros, 0}, {zeros, 0}, {NULL, 0}, {NULL, 0}, KB_TIMING_KB,
                     KB_ENDS_NATURAL, NULL, NULL};
    kb_error err;
    KB_ASSERT(kb_tcb_build(&k, tin, tout, coef, NULL, &err) == KB_OK);
    kb_curve c = {NT, 4, 2, T5, 0, coef, NULL, KB_EXTRAP_LINEAR};
    KB_ASSERT(kb_curve_eval_threaded(&c, 1, ts, M, 0, 1, one, NULL, &err) == KB_OK);
    KB_ASSERT(kb_curve_eval_threaded(&c, 1, ts, M, 0, 3, many, NULL, &err) == KB_OK);
    for (int i = 0; i < NT * M * 2; i++)
        KB_ASSERT(one[i] == many[i]);
}

/* Building on several threads gives the serial tables, and the serial
 * error (the first overflowing track, and its key) when keys overflow. */
KB_TEST(test_build_threaded_equals_serial)
{
    enum { NT = 4000, K = 10, D = 3, S = K - 1 };  /* large enough to be split */
    static double times[K], values[NT * K * D], params[K], one[NT * S * 4 * D],
        many[NT * S * 4 * D];
    for (int i = 0; i < K; i++) {
        times[i] = i + 0.25 * sin(i);
        params[i] = 0.1 * i - 0.4;
    }
    for (int i = 0; i < NT * K * D; i++)
        values[i] = cos(0.91 * i);
    kb_tcb_keys k = {NT, K, D, {times, 0}, values, {params, 0}, {params, 0}, {params, 0},
                     {NULL, 0}, {NULL, 0}, {NULL, 0}, {NULL, 0}, KB_TIMING_3DS,
                     KB_ENDS_REFLECT, NULL, NULL};
    static double zeros[K];
    k.ease_from.data = k.ease_to.data = zeros;
    kb_error e1, e2;
    KB_ASSERT(kb_tcb_build(&k, NULL, NULL, one, NULL, &e1) == KB_OK);
    KB_ASSERT(kb_tcb_build_threaded(&k, NULL, NULL, many, NULL, 4, &e2) == KB_OK);
    KB_ASSERT(memcmp(one, many, sizeof one) == 0);

    values[(3100 * K + 6) * D + 1] = 1.5e308;  /* finite, but its chords overflow */
    values[(3100 * K + 7) * D + 1] = -1.5e308;
    values[(1900 * K + 2) * D] = 1.7e308;  /* another range, earlier */
    values[(1900 * K + 3) * D] = -1.7e308;
    KB_ASSERT(kb_tcb_build(&k, NULL, NULL, one, NULL, &e1) == KB_ERANGE);
    KB_ASSERT(kb_tcb_build_threaded(&k, NULL, NULL, many, NULL, 4, &e2) == KB_ERANGE);
    KB_ASSERT(e1.track == 1900 && e2.track == 1900 && e1.index == e2.index);
}

