/*
 * kb_playback.c -- how far linear playback between two keys strays from a
 * sampled curve: the check of the exporters' adaptive keys.
 *
 * glTF and USD store keys as float32 and replay rotations by slerp along
 * the shorter arc and vectors by lerp.  For each interval, the curve's
 * samples at fractions u[0] = 0 < ... < u[m-1] = 1 are compared with that
 * playback between its first and last sample rounded to float32; the error
 * at a sample is a vector e_j (the rotation vector of conj(playback) times
 * the sample, or playback minus sample), whose largest norm and largest
 * second difference bound the error between samples.
 */
#include <math.h>

#include "kbspline/kbspline.h"
#include "kb_internal.h"
#include "motion/kb_playback.h"

/* The larger of a and b, NaN if either is: a non-finite sample must not
 * pass as a small error. */
static double worse(double a, double b)
{
    return (a > b || a != a) ? a : b;
}

/* Slerp of unit quaternions a, b (b on a's side) at fraction u. */
static void slerp_unit(const double *a, const double *b, double half, double u, double *out)
{
    double wa, wb;
    if (half < 1e-9) {          /* sin(theta) ~ theta: the weights' limits */
        wa = 1.0 - u;
        wb = u;
    } else {
        double theta = 2.0 * half, s = sin(theta);
        wa = sin((1.0 - u) * theta) / s;
        wb = sin(u * theta) / s;
    }
    for (int k = 0; k < 4; k++)
        out[k] = wa * a[k] + wb * b[k];
}

/* Rotation vector of conj(p) q for unit quaternions, on the side w >= 0. */
static void rotation_vector(const double *p, const double *q, double *e)
{
    double w = p[0] * q[0] + p[1] * q[1] + p[2] * q[2] + p[3] * q[3];
    double v[3] = {p[0] * q[1] - q[0] * p[1] - (p[2] * q[3] - p[3] * q[2]),
                   p[0] * q[2] - q[0] * p[2] - (p[3] * q[1] - p[1] * q[3]),
                   p[0] * q[3] - q[0] * p[3] - (p[1] * q[2] - p[2] * q[1])};
    double sign = w < 0 ? -1.0 : 1.0;
    double s = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    double scale = s > 0 ? 2.0 * atan2(s, fabs(w)) / s : 2.0;
    for (int k = 0; k < 3; k++)
        e[k] = sign * scale * v[k];
}

static double norm(const double *x, ptrdiff_t width)
{
    double s = 0.0;
    for (ptrdiff_t k = 0; k < width; k++)
        s += x[k] * x[k];
    return sqrt(s);
}

/* Unit quaternion of q / |q|; zero stays zero. */
static void unit(const double *q, double *out)
{
    double n = norm(q, 4);
    for (int k = 0; k < 4; k++)
        out[k] = n > 0 ? q[k] / n : 0.0;
}

/* q as stored in float32, then normalised as a player does. */
static void unit_float32(const double *q, double *out)
{
    double stored[4];
    for (int k = 0; k < 4; k++)
        stored[k] = (double)(float)q[k];
    unit(stored, out);
}

/* The angle between unit quaternions as rotations (chord form). */
static double rotation_angle(const double *p, const double *q)
{
    double d[4], s[4];
    for (int k = 0; k < 4; k++) {
        d[k] = p[k] - q[k];
        s[k] = p[k] + q[k];
    }
    double chord = fmin(norm(d, 4), norm(s, 4));
    return 4.0 * asin(fmin(chord / 2.0, sqrt(0.5)));
}

/* Lerp between the float32 ends of one interval's samples (n_samples,
 * width), any width: the error components are recomputed where needed
 * rather than stored, so no width limit and no allocation. */
static double lerp_error(const double *x, ptrdiff_t width, const double *u, ptrdiff_t j,
                         ptrdiff_t m, ptrdiff_t k)
{
    double lo = (double)(float)x[k], hi = (double)(float)x[(m - 1) * width + k];
    return (1.0 - u[j]) * lo + u[j] * hi - x[j * width + k];
}

static void check_vector(const double *x, ptrdiff_t m, ptrdiff_t width, const double *u,
                         double *largest, double *bend)
{
    *largest = *bend = 0.0;
    for (ptrdiff_t j = 0; j < m; j++) {
        double size = 0.0, second = 0.0;
        for (ptrdiff_t k = 0; k < width; k++) {
            double e = lerp_error(x, width, u, j, m, k);
            size += e * e;
            if (j >= 2) {
                double d = lerp_error(x, width, u, j - 2, m, k)
                           - 2.0 * lerp_error(x, width, u, j - 1, m, k) + e;
                second += d * d;
            }
        }
        *largest = worse(sqrt(size), *largest);
        if (j >= 2)
            *bend = worse(sqrt(second), *bend);
    }
}

static void check_rotation(const double *x, ptrdiff_t m, const double *u, double *largest,
                           double *bend, double *swept)
{
    double lo[4], hi[4], d[4], s[4];
    unit_float32(x, lo);
    unit_float32(x + (m - 1) * 4, hi);
    if (lo[0] * hi[0] + lo[1] * hi[1] + lo[2] * hi[2] + lo[3] * hi[3] < 0)
        for (int k = 0; k < 4; k++)
            hi[k] = -hi[k];
    for (int k = 0; k < 4; k++) {
        d[k] = lo[k] - hi[k];
        s[k] = lo[k] + hi[k];
    }
    double half = atan2(norm(d, 4), norm(s, 4));
    double e[3][3];              /* a rolling window of three error vectors */
    *largest = *bend = *swept = 0.0;
    for (ptrdiff_t j = 0; j < m; j++) {
        double played[4], q[4];
        double *next = e[j % 3];
        slerp_unit(lo, hi, half, u[j], played);
        unit(x + j * 4, q);
        rotation_vector(played, q, next);
        *largest = worse(norm(next, 3), *largest);
        if (j >= 2) {
            const double *prev = e[(j - 2) % 3], *mid = e[(j - 1) % 3];
            double second[3];
            for (int k = 0; k < 3; k++)
                second[k] = prev[k] - 2.0 * mid[k] + next[k];
            *bend = worse(norm(second, 3), *bend);
        }
        if (j >= 1) {
            double a[4];
            unit(x + (j - 1) * 4, a);
            *swept += rotation_angle(a, q);
        }
    }
}

kb_status kb_playback_check(ptrdiff_t n, ptrdiff_t m, ptrdiff_t width, int rotation,
                            const double *samples, const double *u, double *err_max,
                            double *bend_max, double *swept, kb_error *err)
{
    if (n < 0 || m < 3 || width < 1 || (rotation && width != 4)
        || !kb_doubles_fit(n, m, width, 1))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_VALUES, -1, -1);
    for (ptrdiff_t i = 0; i < n; i++) {
        const double *x = samples + i * m * width;
        if (rotation)
            check_rotation(x, m, u, &err_max[i], &bend_max[i], &swept[i]);
        else {
            check_vector(x, m, width, u, &err_max[i], &bend_max[i]);
            swept[i] = 0.0;
        }
    }
    return kb_ok(err);
}
