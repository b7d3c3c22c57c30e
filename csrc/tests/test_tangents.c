/* test_tangents.c -- the tangent formulas of every timing convention. */
#include "kb_test.h"
#include "kbspline/kbspline.h"
#include "kb_internal.h"

static const kb_timing all_timings[4] = {KB_TIMING_KB, KB_TIMING_3DS, KB_TIMING_PARABOLIC,
                                         KB_TIMING_AVERAGE};

/* Catmull-Rom: with TCB 0 and uniform keys every convention gives the
 * central difference (x(n+1) - x(n-1)) / 2h on both sides. */
KB_TEST(test_tangents_catmull_rom_uniform)
{
    double dm[2] = {1.0, -2.0}, dp[2] = {3.0, 0.5}, tin[2], tout[2];
    for (int i = 0; i < 4; i++) {
        kb_key_tangents(all_timings[i], 0, 0, 0, dm, 0.5, dp, 0.5, 2, tin, tout);
        for (int j = 0; j < 2; j++) {
            KB_ASSERT_NEAR(tout[j], (dm[j] + dp[j]) / 1.0, 1e-14);
            KB_ASSERT_NEAR(tin[j], (dm[j] + dp[j]) / 1.0, 1e-14);
        }
    }
}

/* Parabolic timing differentiates a parabola exactly on uneven keys. */
KB_TEST(test_tangents_parabolic_exact_on_parabola)
{
    double t0 = -0.3, t1 = 0.4, t2 = 1.9;
    double dm = t1 * t1 - t0 * t0, dp = t2 * t2 - t1 * t1, tin, tout;
    kb_key_tangents(KB_TIMING_PARABOLIC, 0, 0, 0, &dm, t1 - t0, &dp, t2 - t1, 1, &tin,
                    &tout);
    KB_ASSERT_NEAR(tout, 2 * t1, 1e-14);
    KB_ASSERT_NEAR(tin, 2 * t1, 1e-14);
}

/* KB timing, written out per u as in SPEC section 4 for random-ish TCB. */
KB_TEST(test_tangents_kb_formula)
{
    double T = 0.3, C = -0.4, B = 0.7, dtm = 0.5, dtp = 2.0;
    double dm = 1.5, dp = -0.7, tin, tout;
    double a = (1 - T) * (1 + C) * (1 + B), b = (1 - T) * (1 - C) * (1 - B);
    double c = (1 - T) * (1 - C) * (1 + B), d = (1 - T) * (1 + C) * (1 - B);
    kb_key_tangents(KB_TIMING_KB, T, C, B, &dm, dtm, &dp, dtp, 1, &tin, &tout);
    double T0 = 2 * dtp / (dtm + dtp) * 0.5 * (a * dm + b * dp);
    double T1 = 2 * dtm / (dtm + dtp) * 0.5 * (c * dm + d * dp);
    KB_ASSERT_NEAR(tout * dtp, T0, 1e-14);
    KB_ASSERT_NEAR(tin * dtm, T1, 1e-14);
}

/* 3ds equals kb when continuity is 0 and moves the multipliers to 1 as
 * |continuity| grows. */
KB_TEST(test_tangents_3ds_continuity_correction)
{
    double dm = 1.5, dp = -0.7, dtm = 0.5, dtp = 2.0, in_kb, out_kb, in_3, out_3;
    kb_key_tangents(KB_TIMING_KB, 0.2, 0, -0.3, &dm, dtm, &dp, dtp, 1, &in_kb, &out_kb);
    kb_key_tangents(KB_TIMING_3DS, 0.2, 0, -0.3, &dm, dtm, &dp, dtp, 1, &in_3, &out_3);
    KB_ASSERT_NEAR(in_kb, in_3, 1e-14);
    KB_ASSERT_NEAR(out_kb, out_3, 1e-14);
    /* continuity 1: multiplier 1, so T0 = a dm / 2 per u with b = 0 */
    kb_key_tangents(KB_TIMING_3DS, 0, 1, 0, &dm, dtm, &dp, dtp, 1, &in_3, &out_3);
    KB_ASSERT_NEAR(out_3 * dtp, 0.5 * 2.0 * dm, 1e-14);
    KB_ASSERT_NEAR(in_3 * dtm, 0.5 * 2.0 * dp, 1e-14);
}

/* Average timing: the KB-weighted mean of the two slopes. */
KB_TEST(test_tangents_average_formula)
{
    double dm = 2.0, dp = 1.0, dtm = 0.5, dtp = 4.0, tin, tout;
    kb_key_tangents(KB_TIMING_AVERAGE, 0, 0, 0, &dm, dtm, &dp, dtp, 1, &tin, &tout);
    KB_ASSERT_NEAR(tout, 0.5 * (dm / dtm + dp / dtp), 1e-14);
    KB_ASSERT_NEAR(tin, tout, 1e-14);
}

/* Tension 1 stops the curve at the key. */
KB_TEST(test_tangents_full_tension_is_zero)
{
    double dm = 2.0, dp = 1.0, tin, tout;
    for (int i = 0; i < 4; i++) {
        kb_key_tangents(all_timings[i], 1, 0.3, -0.2, &dm, 0.7, &dp, 1.1, 1, &tin, &tout);
        KB_ASSERT_NEAR(tin, 0.0, 1e-15);
        KB_ASSERT_NEAR(tout, 0.0, 1e-15);
    }
}

/* Centripetal times: cumulative square roots of the key distances. */
KB_TEST(test_alpha_times_centripetal)
{
    const double x[8] = {0, 0, 3, 4, 3, 4, 3, 13};  /* (4, 2): distances 5, 0, 9 */
    double t[4];
    kb_error err;
    KB_ASSERT(kb_alpha_times(1, 4, 2, x, 0.5, t, &err) == KB_ENOTSORTED);
    KB_ASSERT(err.index == 2);
    const double y[6] = {0, 0, 3, 4, 3, 13};  /* distances 5, 9 */
    KB_ASSERT(kb_alpha_times(1, 3, 2, y, 0.5, t, &err) == KB_OK);
    KB_ASSERT_NEAR(t[0], 0.0, 0);
    KB_ASSERT_NEAR(t[1], sqrt(5.0), 1e-15);
    KB_ASSERT_NEAR(t[2], sqrt(5.0) + 3.0, 1e-15);
    KB_ASSERT(kb_alpha_times(1, 4, 2, x, 0.0, t, &err) == KB_OK);
    KB_ASSERT_NEAR(t[3], 3.0, 0);
}
