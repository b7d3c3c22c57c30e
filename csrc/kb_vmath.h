/*
 * kb_vmath.h -- private: sine, cosine and atan2 of four doubles at once,
 * for squad's values, without branches (GCC / Clang vector extensions).
 *
 * The kernels are fdlibm's (k_sin.c, k_cos.c, s_atan.c: Sun Microsystems,
 * freely distributable), errors below one ulp on their intervals; the
 * argument reductions are exact enough for the arguments squad passes
 * (angles of at most a few pi).  Every lane is computed independently, so
 * a value never depends on which other values share its vector.
 */
#ifndef KB_VMATH_H
#define KB_VMATH_H

#include <math.h>
#include <string.h>

#include "kb_internal.h"

#if defined(__GNUC__)
#define KB_HAVE_VMATH 1

/* Vectors are passed and returned only between always-inlined functions,
 * so the ABI GCC warns about (32-byte vectors without AVX) never applies.
 * GCC reports it at the end of the translation unit, so the pragma cannot
 * be popped: it holds for the (private) files that include this one.  Its
 * companion note is not a warning and ignores pragmas: the builds pass
 * -Wno-psabi. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef double kb_v4 __attribute__((vector_size(32)));
typedef long long kb_m4 __attribute__((vector_size(32)));  /* lane masks: -1 or 0 */

/* Where the reduction by multiples of pi/2 stays exact (k * PIO2_1 exact). */
#define KB_VMATH_MAX_ARG 1e5

KB_INLINE kb_v4 kb_v4_splat(double x)
{
    return (kb_v4){x, x, x, x};
}

/* m ? a : b, lane by lane (C has no vector ?:) */
KB_INLINE kb_v4 kb_v4_select(kb_m4 m, kb_v4 a, kb_v4 b)
{
    return (kb_v4)(((kb_m4)a & m) | ((kb_m4)b & ~m));
}

/* sin and cos of |r| <= pi/4 (fdlibm __kernel_sin / __kernel_cos, tail 0) */
KB_INLINE void kb_v4_sincos_kernel(kb_v4 r, kb_v4 *s, kb_v4 *c)
{
    const kb_v4 z = r * r, v = z * r;
    const kb_v4 ps = 8.33333333332248946124e-03 +
                     z * (-1.98412698298579493134e-04 +
                          z * (2.75573137070700676789e-06 +
                               z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
    *s = r + v * (-1.66666666666666324348e-01 + z * ps);

    const kb_v4 pc = z * (4.16666666666666019037e-02 +
                          z * (-1.38888888888741095749e-03 +
                               z * (2.48015872894767294178e-05 +
                                    z * (-2.75573143513906633035e-07 +
                                         z * (2.08757232129817482790e-09 +
                                              z * -1.13596475577881948265e-11)))));
    /* 1 - z/2 + z pc, with the rounding of 1 - z/2 put back */
    const kb_v4 hz = 0.5 * z, w = 1.0 - hz;
    *c = w + (((1.0 - w) - hz) + z * pc);
}

/* s = sin x, c = cos x for |x| <= KB_VMATH_MAX_ARG (the caller's to ensure). */
KB_INLINE void kb_v4_sincos(kb_v4 x, kb_v4 *s, kb_v4 *c)
{
    /* k = nearest integer to x * 2/pi, by the 1.5 * 2^52 rounding trick;
     * its low bits are the quadrant */
    const double shift = 6755399441055744.0;
    const kb_v4 kf = (x * 6.36619772367581382433e-01 + shift) - shift;
    const kb_m4 quadrant = (kb_m4)(kf + shift) & 3;
    /* r = x - k pi/2 in two steps: k * pio2_1 is exact for |k| < 2^20 */
    const kb_v4 r = (x - kf * 1.57079632673412561417e+00) - kf * 6.07710050650619224932e-11;
    kb_v4 sr, cr;
    kb_v4_sincos_kernel(r, &sr, &cr);
    /* quadrant 1: (cos r, -sin r), 2: (-sin r, -cos r), 3: (-cos r, sin r) */
    const kb_m4 odd = (quadrant & 1) != 0;
    const kb_v4 s0 = kb_v4_select(odd, cr, sr), c0 = kb_v4_select(odd, sr, cr);
    const kb_m4 neg_s = (quadrant & 2) != 0, neg_c = ((quadrant + 1) & 2) != 0;
    *s = kb_v4_select(neg_s, -s0, s0);
    *c = kb_v4_select(neg_c, -c0, c0);
}

/* atan(t) for |t| <= 7/16 (fdlibm's polynomial) */
KB_INLINE kb_v4 kb_v4_atan_kernel(kb_v4 t)
{
    const kb_v4 z = t * t, w = z * z;
    const kb_v4 s1 = z * (3.33333333333329318027e-01 +
                          w * (1.42857142725034663711e-01 +
                               w * (9.09088713343650656196e-02 +
                                    w * (6.66107313738753120669e-02 +
                                         w * (4.97687799461593236017e-02 +
                                              w * 1.62858201153657823623e-02)))));
    const kb_v4 s2 = w * (-1.99999999998764832476e-01 +
                          w * (-1.11111104054623557880e-01 +
                               w * (-7.69187620504482999495e-02 +
                                    w * (-5.83357013379057348645e-02 +
                                         w * -3.65315727442169155270e-02))));
    return t - t * (s1 + s2);
}

/* atan2(y, x) for y >= 0 and (x, y) != (0, 0), finite: in [0, pi]. */
KB_INLINE kb_v4 kb_v4_atan2_upper(kb_v4 y, kb_v4 x)
{
    const double pio4_hi = 7.85398163397448278999e-01, pio4_lo = 3.06161699786838301793e-17;
    const double pio2_hi = 1.57079632679489655800e+00, pio2_lo = 6.12323399573676603587e-17;
    const double pi_hi = 3.14159265358979311600e+00, pi_lo = 1.22464679914735317720e-16;
    const kb_v4 ax = kb_v4_select(x < 0.0, -x, x);
    const kb_m4 steep = y > ax;  /* then atan2 = pi/2 -+ atan(|x| / y) */
    const kb_v4 a = kb_v4_select(steep, ax, y), b = kb_v4_select(steep, y, ax);
    const kb_v4 z = a / b;  /* in [0, 1] */
    /* above tan(pi/8): atan z = pi/4 + atan((z - 1) / (z + 1)) */
    const kb_m4 upper = z > 0.41421356237309503;
    const kb_v4 t = kb_v4_select(upper, (z - 1.0) / (z + 1.0), z);
    const kb_v4 at = kb_v4_atan_kernel(t);
    const kb_v4 theta = kb_v4_select(upper, pio4_hi + (at + pio4_lo), at);
    /* theta = atan(a / b) in [0, pi/4]; now place it */
    const kb_m4 left = x < 0.0;
    const kb_v4 flat = kb_v4_select(left, pi_hi - (theta - pi_lo), theta);
    const kb_v4 steep_angle =
        kb_v4_select(left, pio2_hi + (theta + pio2_lo), pio2_hi - (theta - pio2_lo));
    return kb_v4_select(steep, steep_angle, flat);
}

KB_INLINE kb_v4 kb_v4_sqrt(kb_v4 x)
{
    /* lane by lane: sqrt is correctly rounded everywhere, and compilers
     * turn this into one vector instruction where they can */
    kb_v4 r;
    for (int l = 0; l < 4; l++)
        r[l] = sqrt(x[l]);
    return r;
}

#endif /* __GNUC__ */

#endif /* KB_VMATH_H */
