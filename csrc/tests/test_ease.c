/* test_ease.c -- seed 002's Ease and its derivatives. */
#include "kb_test.h"
#include "kbspline/kbspline.h"
#include "kb_internal.h"

static double ease_e(double u, double a, double b)
{
    double e, de, dde;
    kb_ease(u, a, b, &e, &de, &dde);
    return e;
}

KB_TEST(test_ease_identity_without_ease)
{
    double e, de, dde;
    kb_ease(0.37, 0, 0, &e, &de, &dde);
    KB_ASSERT_NEAR(e, 0.37, 0);
    KB_ASSERT_NEAR(de, 1.0, 0);
    KB_ASSERT_NEAR(dde, 0.0, 0);
}

/* Ends fixed, monotone, and finite where the seed divides by zero. */
KB_TEST(test_ease_end_points_and_monotone)
{
    const double ab[5][2] = {{0.3, 0.0}, {0.0, 0.4}, {0.25, 0.5}, {0.8, 0.9}, {1, 1}};
    for (int k = 0; k < 5; k++) {
        double a = ab[k][0], b = ab[k][1], prev = -1.0;
        KB_ASSERT_NEAR(ease_e(0.0, a, b), 0.0, 1e-15);
        KB_ASSERT_NEAR(ease_e(1.0, a, b), 1.0, 1e-15);
        for (int i = 0; i <= 1000; i++) {
            double e = ease_e(i / 1000.0, a, b);
            KB_ASSERT(isfinite(e) && e >= prev);
            prev = e;
        }
    }
}

/* de and dde against central differences, away from the breakpoints. */
KB_TEST(test_ease_derivatives_match_differences)
{
    const double a = 0.2, b = 0.35, h = 1e-6;
    const double us[5] = {0.05, 0.15, 0.5, 0.7, 0.95};
    for (int i = 0; i < 5; i++) {
        double e, de, dde, ep, dep, ddep, em, dem, ddem;
        kb_ease(us[i], a, b, &e, &de, &dde);
        kb_ease(us[i] + h, a, b, &ep, &dep, &ddep);
        kb_ease(us[i] - h, a, b, &em, &dem, &ddem);
        KB_ASSERT_NEAR(de, (ep - em) / (2 * h), 1e-8);
        KB_ASSERT_NEAR(dde, (dep - dem) / (2 * h), 1e-6);
    }
}

/* C1 at the two breakpoints. */
KB_TEST(test_ease_c1_at_breakpoints)
{
    const double a = 0.2, b = 0.35, eps = 1e-12;
    const double bp[2] = {a, 1 - b};
    for (int i = 0; i < 2; i++) {
        double e1, de1, dd1, e2, de2, dd2;
        kb_ease(bp[i] - eps, a, b, &e1, &de1, &dd1);
        kb_ease(bp[i] + eps, a, b, &e2, &de2, &dd2);
        KB_ASSERT_NEAR(e1, e2, 1e-11);
        KB_ASSERT_NEAR(de1, de2, 1e-10);
    }
}

/* The fuzzer's first find: a denormal ease made k / a overflow to NaN. */
KB_TEST(test_ease_vanishing_piece_is_none)
{
    double e, de, dde;
    kb_ease(0.0, 1e-320, 0.5, &e, &de, &dde);
    KB_ASSERT(isfinite(e) && isfinite(de) && isfinite(dde));
    KB_ASSERT_NEAR(e, 0.0, 0);
    kb_ease(1.0, 0.3, 4e-324, &e, &de, &dde);
    KB_ASSERT(isfinite(e) && isfinite(de) && isfinite(dde));
    KB_ASSERT_NEAR(e, 1.0, 1e-15);
}
