/* test_quatops.c -- the quaternion utilities through the C API: any finite
 * scale, refused input, outputs computed in place. */
#include <float.h>

#include "kb_test.h"
#include "kbspline/kbspline.h"

static const double unit_q[4] = {0.5, -0.5, 0.5, 0.5};  /* 120 degrees about (-1, 1, 1) */

/* Rotation matrices of unit_q times 2^-1074 .. 2^1023 (subnormal to largest)
 * equal those of unit_q bit for bit: power-of-two scales are exact. */
KB_TEST(test_quatops_matrix_at_every_binary_scale)
{
    double want[9], got[9], q[4];
    kb_error err;
    KB_ASSERT(kb_quat_to_matrix(1, unit_q, want, &err) == KB_OK);
    for (int e = -1074; e <= 1023; e++) {
        for (int j = 0; j < 4; j++)
            q[j] = ldexp(unit_q[j], e + 1);  /* |components| = 2^e */
        KB_ASSERT(kb_quat_to_matrix(1, q, got, &err) == KB_OK);
        for (int r = 0; r < 9; r++)
            KB_ASSERT(got[r] == want[r]);
    }
}

/* ln|q| exact from the subnormal minimum to the largest double; log(-s) has
 * norm pi about x. */
KB_TEST(test_quatops_log_over_the_float_range)
{
    const double s[4] = {4.9406564584124654e-324, 1e-300, 1.0, DBL_MAX};
    kb_error err;
    for (int i = 0; i < 4; i++) {
        const double q[4] = {-s[i], 0.0, 0.0, 0.0};
        double out[4];
        KB_ASSERT(kb_quat_log(1, q, out, &err) == KB_OK);
        KB_ASSERT_NEAR(out[0], log(s[i]), 1e-15 * fabs(log(s[i])) + 1e-16);
        KB_ASSERT(out[1] == 3.14159265358979323846 && out[2] == 0.0 && out[3] == 0.0);
    }
}

/* Non-finite input is KB_ENONFINITE naming operand and element; a product or
 * exponential too large for a double is KB_ERANGE. */
KB_TEST(test_quatops_refuse_non_finite_and_overflow)
{
    double a[8] = {1, 0, 0, 0, 1, 0, 0, 0}, out[8];
    const double big[8] = {1, 0, 0, 0, 1e200, 0, 0, 0};
    kb_error err;
    a[6] = NAN;
    KB_ASSERT(kb_quat_multiply(2, big, a, out, &err) == KB_ENONFINITE);
    KB_ASSERT(err.track == 1 && err.index == 1);
    KB_ASSERT(kb_quat_conjugate(2, a, out, &err) == KB_ENONFINITE && err.index == 1);
    KB_ASSERT(kb_quat_exp(2, a, out, &err) == KB_ENONFINITE && err.index == 1);
    a[6] = 0.0;
    KB_ASSERT(kb_quat_multiply(2, big, big, out, &err) == KB_ERANGE && err.index == 1);
    a[4] = 710.0;
    KB_ASSERT(kb_quat_exp(2, a, out, &err) == KB_ERANGE && err.index == 1);
    a[4] = 709.0;
    KB_ASSERT(kb_quat_exp(2, a, out, &err) == KB_OK && isfinite(out[4]));
}

/* An output that is the very array of an input of its width gives what a
 * separate output does. */
KB_TEST(test_quatops_in_place)
{
    const double p[8] = {0.5, -0.5, 0.5, 0.5, 0.9, 0.1, -0.3, 0.2};
    const double q[8] = {0.1, 0.7, -0.7, 0.1, -0.6, 0.0, 0.8, 0.0};
    const double u[2] = {0.25, 0.75};
    double want[8], got[8];
    kb_error err;
    for (int op = 0; op < 5; op++)
        for (int alias = 0; alias < 2; alias++) {
            for (int j = 0; j < 8; j++)
                got[j] = alias ? q[j] : p[j];
            const double *x = alias ? p : got, *y = alias ? got : q;
            kb_status s1 = KB_OK, s2 = KB_OK;
            switch (op) {
            case 0:
                s1 = kb_quat_multiply(2, p, q, want, &err);
                s2 = kb_quat_multiply(2, x, y, got, &err);
                break;
            case 1:
                s1 = kb_quat_slerp(2, p, q, u, want, &err);
                s2 = kb_quat_slerp(2, x, y, u, got, &err);
                break;
            case 2:
                s1 = kb_quat_squad(2, p, q, p, q, u, want, &err);
                s2 = kb_quat_squad(2, x, y, x, y, u, got, &err);
                break;
            case 3:
                s1 = kb_quat_log(2, alias ? q : p, want, &err);
                s2 = kb_quat_log(2, got, got, &err);
                break;
            default:
                s1 = kb_quat_exp(2, alias ? q : p, want, &err);
                s2 = kb_quat_exp(2, got, got, &err);
            }
            KB_ASSERT(s1 == KB_OK && s2 == KB_OK);
            for (int j = 0; j < 8; j++)
                KB_ASSERT(got[j] == want[j]);
        }
}
