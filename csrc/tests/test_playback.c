/* test_playback.c -- the playback check against curves whose linear
 * playback error is known in closed form: a parabola and a rotation whose
 * angle grows with u^2. */
#include "kb_test.h"
#include "kbspline/kbspline.h"
#include "motion/kb_playback.h"

#define M 5  /* u = 0, 1/4, 1/2, 3/4, 1 */
static const double u[M] = {0.0, 0.25, 0.5, 0.75, 1.0};

/* f(u) = a u^2 against the lerp from 0 to a: e(u) = a u (1 - u), largest
 * |a| / 4 at u = 1/2, second difference 2 |a| h^2 with h = 1/4. */
KB_TEST(test_playback_lerp_of_a_parabola)
{
    const double a[3] = {1.0, -2.0, 0.5};   /* float32 exactly */
    double samples[M * 3], largest, bend, unused;
    kb_error err;
    for (int j = 0; j < M; j++)
        for (int k = 0; k < 3; k++)
            samples[j * 3 + k] = a[k] * u[j] * u[j];
    double size = sqrt(1.0 + 4.0 + 0.25);
    KB_ASSERT(kb_playback_check(1, M, 3, 0, samples, u, &largest, &bend, &unused, &err) == KB_OK);
    KB_ASSERT_NEAR(largest, size / 4.0, 1e-15);
    KB_ASSERT_NEAR(bend, 2.0 * size / 16.0, 1e-15);
}

/* A turn about z by phi(u) = c u^2 against the slerp to its end, whose
 * angle is c u: the error is a turn by c u (1 - u) about z; the samples
 * sweep c.  The end key's float32 rounding moves it by ~1e-8. */
KB_TEST(test_playback_slerp_of_an_accelerating_turn)
{
    const double c = 1.3;
    double samples[2][M * 4], largest[2], bend[2], swept[2];
    kb_error err;
    for (int j = 0; j < M; j++) {
        double half = 0.5 * c * u[j] * u[j];
        double q[4] = {cos(half), 0.0, 0.0, sin(half)};
        for (int k = 0; k < 4; k++) {
            samples[0][j * 4 + k] = q[k];
            samples[1][j * 4 + k] = j == M - 1 ? -q[k] : q[k];  /* the other sign: same arc */
        }
    }
    KB_ASSERT(kb_playback_check(2, M, 4, 1, &samples[0][0], u, largest, bend, swept, &err)
              == KB_OK);
    for (int i = 0; i < 2; i++) {
        KB_ASSERT_NEAR(largest[i], c / 4.0, 1e-7);
        KB_ASSERT_NEAR(bend[i], 2.0 * c / 16.0, 1e-7);
        KB_ASSERT_NEAR(swept[i], c, 1e-12);
    }
}

KB_TEST(test_playback_non_finite_and_bad_shapes)
{
    double samples[M * 3] = {0}, largest, bend, swept;
    kb_error err;
    samples[7] = NAN;
    KB_ASSERT(kb_playback_check(1, M, 3, 0, samples, u, &largest, &bend, &swept, &err) == KB_OK);
    KB_ASSERT(isnan(largest) && isnan(bend));
    KB_ASSERT(kb_playback_check(1, 2, 3, 0, samples, u, &largest, &bend, &swept, &err)
              == KB_EBADSHAPE);
    KB_ASSERT(kb_playback_check(1, M, 3, 1, samples, u, &largest, &bend, &swept, &err)
              == KB_EBADSHAPE);
}
