/* test_vmath.c -- the vector sine, cosine and atan2 of squad's values
 * against the C library, lane by lane. */
#include "kb_test.h"
#include "simd/kb_vmath.h"

#include <float.h>

/* |got - want| within `ulps` units in the last place of want, or within
 * 1e-19 where want is so near zero that the absolute error is what counts
 * (sines near multiples of pi: the reduction is exact to about 1e-27). */
static int close_ulps(double got, double want, double ulps)
{
    const double ulp = fmax(fabs(want), 1e-3) * DBL_EPSILON;
    return fabs(got - want) <= ulps * ulp || fabs(got - want) <= 1e-19;
}

KB_TEST(test_vmath_sincos_matches_libm)
{
#if defined(KB_HAVE_VMATH)
    /* dense over [-3 pi, 3 pi], quadrant edges, and large arguments */
    for (int i = -200000; i <= 200000; i += 4) {
        const kb_v4 x = {i * 4.712388980384690e-5, i * 4.712388980384690e-5 + 1e-9,
                         (i / 4) * 1.5707963267948966, (double)i * 0.49};
        kb_v4 s, c;
        kb_v4_sincos(x, &s, &c);
        for (int l = 0; l < 4; l++) {
            KB_ASSERT(close_ulps(s[l], sin(x[l]), 1.0));
            KB_ASSERT(close_ulps(c[l], cos(x[l]), 1.0));
        }
    }
    const kb_v4 tiny = {0.0, -0.0, 1e-300, 1e-8};
    kb_v4 s, c;
    kb_v4_sincos(tiny, &s, &c);
    for (int l = 0; l < 4; l++) {
        KB_ASSERT(s[l] == tiny[l] && c[l] == 1.0);
    }
#endif
}

KB_TEST(test_vmath_atan2_matches_libm)
{
#if defined(KB_HAVE_VMATH)
    for (int i = 0; i <= 2000; i++)
        for (int j = -40; j <= 40; j++) {
            /* y >= 0 from 0 to 2, x on both sides; j = +-i / 20 is the diagonal */
            const double y = i * 1e-3, x = j * 0.05;
            const kb_v4 yv = {y, y * 1e-200, y + 1e-300, 1.0},
                        xv = {x, x * 1e-200, x, x * 1e-17};
            if (y == 0.0 && x == 0.0)
                continue;
            const kb_v4 a = kb_v4_atan2_upper(yv, xv);
            for (int l = 0; l < 4; l++)
                KB_ASSERT(close_ulps(a[l], atan2(yv[l], xv[l]), 2.0));
        }
    const kb_v4 y = {0.0, 0.0, 1.0, 1.0}, x = {1.0, -1.0, 0.0, -0.0};
    const kb_v4 a = kb_v4_atan2_upper(y, x);
    KB_ASSERT(a[0] == 0.0 && a[1] == atan2(0.0, -1.0) && a[2] == atan2(1.0, 0.0));
    KB_ASSERT(a[3] == atan2(1.0, 0.0));
#endif
}
