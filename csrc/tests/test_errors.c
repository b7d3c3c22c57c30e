/* test_errors.c -- invalid input is reported by status, argument and index,
 * and nothing is written. */
#include "kb_internal.h"
#include "kb_test.h"
#include "test_helpers.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

static const double T4[4] = {0.0, 1.0, 2.0, 3.0};
static const double X4[4] = {0.0, 1.0, 0.5, 2.0};

static kb_status build_error(track *tr, kb_error *err)
{
    return kb_tcb_build(&tr->keys, tr->tin, tr->tout, tr->coef, NULL, err);
}

KB_TEST(test_errors_unsorted_and_repeated_times)
{
    track tr;
    kb_error err;
    double t[4] = {0.0, 1.0, 1.0, 3.0};
    track_init(&tr, 4, 1, t, X4, KB_TIMING_KB, KB_ENDS_NATURAL);
    tr.tout[0] = 42.0;
    KB_ASSERT(build_error(&tr, &err) == KB_ENOTSORTED);
    KB_ASSERT(err.arg == KB_ARG_TIMES && err.track == 0 && err.index == 2);
    KB_ASSERT(tr.tout[0] == 42.0);
}

KB_TEST(test_errors_non_finite)
{
    track tr;
    kb_error err;
    double x[4] = {0.0, 1.0, NAN, 2.0};
    track_init(&tr, 4, 1, T4, x, KB_TIMING_KB, KB_ENDS_NATURAL);
    KB_ASSERT(build_error(&tr, &err) == KB_ENONFINITE);
    KB_ASSERT(err.arg == KB_ARG_VALUES && err.index == 2);
    track_init(&tr, 4, 1, T4, X4, KB_TIMING_KB, KB_ENDS_NATURAL);
    tr.bias[3] = INFINITY;
    KB_ASSERT(build_error(&tr, &err) == KB_ENONFINITE);
    KB_ASSERT(err.arg == KB_ARG_BIAS && err.index == 3);
}

KB_TEST(test_errors_too_few_keys)
{
    track tr;
    kb_error err;
    track_init(&tr, 3, 1, T4, X4, KB_TIMING_KB, KB_ENDS_PHANTOM);
    KB_ASSERT(build_error(&tr, &err) == KB_ETOOFEW);
    track_init(&tr, 1, 1, T4, X4, KB_TIMING_KB, KB_ENDS_NATURAL);
    KB_ASSERT(build_error(&tr, &err) == KB_ETOOFEW);
}

KB_TEST(test_errors_open_loop_as_closed)
{
    track tr;
    kb_error err;
    track_init(&tr, 4, 1, T4, X4, KB_TIMING_KB, KB_ENDS_CLOSED);
    KB_ASSERT(build_error(&tr, &err) == KB_ENOTCLOSED);
    KB_ASSERT(err.arg == KB_ARG_VALUES && err.index == 3);
}

KB_TEST(test_errors_bad_options_and_ease)
{
    track tr;
    kb_error err;
    track_init(&tr, 4, 1, T4, X4, (kb_timing)9, KB_ENDS_NATURAL);
    KB_ASSERT(build_error(&tr, &err) == KB_EBADOPTION);
    track_init(&tr, 4, 1, T4, X4, KB_TIMING_KB, KB_ENDS_NATURAL);
    tr.ease_to[1] = -0.1;
    KB_ASSERT(build_error(&tr, &err) == KB_ERANGE);
    KB_ASSERT(err.arg == KB_ARG_EASE_TO && err.index == 1);
}

KB_TEST(test_errors_queries)
{
    track tr;
    kb_error err;
    track_init(&tr, 4, 1, T4, X4, KB_TIMING_KB, KB_ENDS_NATURAL);
    KB_ASSERT(track_build(&tr, KB_EXTRAP_ERROR, 0) == KB_OK);
    double t[3] = {0.5, 3.0 + 1e-13, 3.1}, out[3] = {7, 7, 7};
    KB_ASSERT(kb_curve_eval(&tr.curve, 0, t, 3, 0, 0, 1, out, NULL, &err) == KB_EDOMAIN);
    KB_ASSERT(err.arg == KB_ARG_T && err.index == 2);
    KB_ASSERT(out[0] == 7 && out[1] == 7 && out[2] == 7);
    /* within 1e-12 of the span: inside, evaluated at the end */
    KB_ASSERT(kb_curve_eval(&tr.curve, 0, t, 2, 0, 0, 1, out, NULL, &err) == KB_OK);
    KB_ASSERT_NEAR(out[1], 2.0, 1e-15);
    t[0] = NAN;
    KB_ASSERT(kb_curve_eval(&tr.curve, 0, t, 1, 0, 0, 1, out, NULL, &err) == KB_ENONFINITE);
    KB_ASSERT(kb_curve_eval(&tr.curve, 3, t + 1, 1, 0, 0, 1, out, NULL, &err) ==
              KB_EBADOPTION);
}

KB_TEST(test_errors_subnormal_key_spacing)
{
    track tr;
    kb_error err;
    double t[4] = {0.0, 1e-310, 1.0, 2.0};
    track_init(&tr, 4, 1, t, X4, KB_TIMING_KB, KB_ENDS_NATURAL);
    tr.tout[0] = 42.0;
    KB_ASSERT(build_error(&tr, &err) == KB_ERANGE);
    KB_ASSERT(err.arg == KB_ARG_TIMES && err.track == 0 && err.index == 1);
    KB_ASSERT(tr.tout[0] == 42.0);
    /* the smallest normal spacing still builds, with finite coefficients */
    t[1] = DBL_MIN;
    track_init(&tr, 4, 1, t, X4, KB_TIMING_KB, KB_ENDS_NATURAL);
    KB_ASSERT(build_error(&tr, &err) == KB_OK);
    for (int i = 0; i < 3 * 4; i++)
        KB_ASSERT(isfinite(tr.coef[i]));
}

KB_TEST(test_errors_sizes_that_overflow)
{
    track tr;
    kb_error err;
    double t = 0.5, out[3] = {7, 7, 7}, times[4];
    /* counts whose arrays could not be addressed are refused before any
     * array is read: these point at arrays of one track of four keys */
    track_init(&tr, 4, 1, T4, X4, KB_TIMING_KB, KB_ENDS_NATURAL);
    tr.tout[0] = 42.0;
    tr.keys.n_tracks = PTRDIFF_MAX / 16;
    KB_ASSERT(build_error(&tr, &err) == KB_EBADSHAPE && err.arg == KB_ARG_VALUES);
    tr.keys.n_tracks = 0;  /* no tracks, but a workspace of K times dim */
    tr.keys.dim = PTRDIFF_MAX / 32;
    KB_ASSERT(build_error(&tr, &err) == KB_EBADSHAPE && err.arg == KB_ARG_VALUES);
    KB_ASSERT(tr.tout[0] == 42.0);

    track_init(&tr, 4, 1, T4, X4, KB_TIMING_KB, KB_ENDS_NATURAL);
    KB_ASSERT(track_build(&tr, KB_EXTRAP_CLAMP, 0) == KB_OK);
    const kb_curve ok = tr.curve;
    kb_curve c = ok;
    c.n_tracks = PTRDIFF_MAX / 16;
    KB_ASSERT(kb_curve_eval(&c, 0, &t, 1, 0, 0, 1, out, NULL, &err) == KB_EBADSHAPE);
    c = ok;
    c.dim = PTRDIFF_MAX / 2;
    KB_ASSERT(kb_curve_eval(&c, 0, &t, 1, 0, 0, 1, out, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_curve_eval(&ok, 0, &t, PTRDIFF_MAX / 4, 0, 0, 1, out, NULL, &err) ==
              KB_EBADSHAPE);
    KB_ASSERT(out[0] == 7 && out[1] == 7 && out[2] == 7);
    KB_ASSERT(kb_alpha_times(PTRDIFF_MAX / 4, 4, 1, X4, 0.5, times, &err) == KB_EBADSHAPE);

    /* the rule itself: a * b * c * d doubles within ptrdiff_t */
    const ptrdiff_t most = PTRDIFF_MAX / (ptrdiff_t)sizeof(double);
    KB_ASSERT(kb_doubles_fit(most, 1, 1, 1) && !kb_doubles_fit(most + 1, 1, 1, 1));
    KB_ASSERT(kb_doubles_fit(most / 8, 2, 2, 2) && !kb_doubles_fit(most / 8 + 1, 2, 2, 2));
    KB_ASSERT(kb_doubles_fit(0, PTRDIFF_MAX, PTRDIFF_MAX, 1) && !kb_doubles_fit(-1, 1, 1, 1));
}

KB_TEST(test_errors_alpha_times_of_tiny_and_huge_distances)
{
    kb_error err;
    double t[3];
    /* distances whose squares under- or overflow are still distances */
    const double tiny[3] = {0.0, 1e-170, 1.0}, huge[3] = {0.0, 1e170, 3e170};
    KB_ASSERT(kb_alpha_times(1, 3, 1, tiny, 0.5, t, &err) == KB_OK);
    KB_ASSERT(t[1] == sqrt(1e-170) && t[2] > t[1]);
    KB_ASSERT(kb_alpha_times(1, 3, 1, huge, 1.0, t, &err) == KB_OK);
    KB_ASSERT_NEAR(t[2], 3e170, 1e155);
    const double xy[4] = {0.0, 0.0, 3e-200, 4e-200};
    KB_ASSERT(kb_alpha_times(1, 2, 2, xy, 1.0, t, &err) == KB_OK);
    KB_ASSERT_NEAR(t[1], 5e-200, 1e-214);
    /* a distance that overflows, and a time step below DBL_MIN */
    const double far[3] = {0.0, 1e308, -1e308}, near[3] = {0.0, 1e-320, 1.0};
    KB_ASSERT(kb_alpha_times(1, 3, 1, far, 0.5, t, &err) == KB_ERANGE);
    KB_ASSERT(err.arg == KB_ARG_VALUES && err.track == 0 && err.index == 2);
    KB_ASSERT(kb_alpha_times(1, 3, 1, near, 1.0, t, &err) == KB_ERANGE);
    KB_ASSERT(err.arg == KB_ARG_VALUES && err.index == 1);
    KB_ASSERT(kb_alpha_times(1, 3, 1, near, 0.5, t, &err) == KB_OK);
}
