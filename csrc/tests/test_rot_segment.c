/* test_rot_segment.c -- kb_squad_is_certified's quick acceptance changes
 * no decision: on random segments, short and long, small and large
 * tangents, it decides as the sampled certification alone (transcribed
 * here from the version before the quick test). */
#include <math.h>
#include <stdlib.h>

#include "kb_test.h"
#include "kb_internal.h"
#include "quat/kb_quat.h"
#include "rotation/kb_rot_segment.h"

#define N_SAMPLES 8

static double length(const double *v)
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static double sampled_angle(const double *L, const double *A, const double *Lab, double u)
{
    const double mu[3] = {-u * L[0], -u * L[1], -u * L[2]};
    const double ub[3] = {u * Lab[0], u * Lab[1], u * Lab[2]};
    double p[4], q[4], t[4], r[4];
    kb_qexp(mu, p);
    kb_qexp(ub, q);
    kb_qmul(p, A, t);
    kb_qmul(t, q, r);
    return atan2(length(r + 1), r[0]);
}

static int sampled_certificate(const double *L, const double *T0, const double *T1,
                               const double *Lab)
{
    double ha[3], hb[3];
    for (int j = 0; j < 3; j++) {
        ha[j] = 0.5 * (T0[j] - L[j]);
        hb[j] = 0.5 * (L[j] - T1[j]);
    }
    if (!(length(ha) < KB_PI && length(hb) < KB_PI))
        return 0;
    const double limit = 2.0 * fmax(length(T0), length(T1)) + KB_PI;
    const double nL = length(L), rho = nL + length(Lab);
    double A[4];
    kb_qexp(ha, A);
    double prev = sampled_angle(L, A, Lab, 0.0);
    for (int k = 0; k < N_SAMPLES; k++) {
        const double u0 = (double)k / N_SAMPLES, u1 = (double)(k + 1) / N_SAMPLES;
        const double next = sampled_angle(L, A, Lab, u1);
        const double theta = fmin(0.5 * (prev + next + rho / N_SAMPLES), KB_PI);
        prev = next;
        if (!(theta < 0.95 * KB_PI))
            return 0;
        const double dh = fmax(fabs(2.0 - 4.0 * u0), fabs(2.0 - 4.0 * u1));
        const double mid = fmin(fmax(0.5, u0), u1), h = 2.0 * mid * (1.0 - mid);
        const double stretch = theta > 1e-8 ? theta / sin(theta) : 1.0;
        if (!(nL + dh * theta + h * stretch * rho <= limit))
            return 0;
    }
    return 1;
}

static double uniform(double a, double b)
{
    return a + (b - a) * ((double)rand() / RAND_MAX);
}

KB_TEST(test_squad_certificate_decides_as_the_sampled_one)
{
    srand(12345);
    int accepted = 0, refused = 0;
    for (int i = 0; i < 200000; i++) {
        /* scales from mocap's small steps to near half a turn */
        const double scale = pow(10.0, uniform(-6.0, 0.3)), spread = pow(10.0, uniform(-3, 1));
        double L[3], T0[3], T1[3], Lab[3];
        for (int j = 0; j < 3; j++) {
            L[j] = uniform(-scale, scale);
            T0[j] = L[j] + uniform(-spread, spread) * scale * 3;
            T1[j] = L[j] + uniform(-spread, spread) * scale * 3;
            Lab[j] = L[j] + uniform(-spread, spread) * scale * 3;
        }
        const int want = sampled_certificate(L, T0, T1, Lab);
        KB_ASSERT(kb_squad_is_certified(L, T0, T1, Lab) == want);
        accepted += want;
        refused += !want;
    }
    KB_ASSERT(accepted > 1000 && refused > 1000);  /* both sides exercised */
}
