/*
 * kb_vmath_lanes.h -- private: the body of kb_vmath.h's functions, included
 * once per vector width by kb_lanes.h (which defines KB_V, KB_M, KB_LANES
 * and KB_VFN).
 * Every width runs the same operations lane by lane, so lanes agree bit for
 * bit whatever the width.  No include guard: meant to be included twice.
 */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif

KB_INLINE KB_V KB_VFN(splat)(double x)
{
    return x - (KB_V){0};  /* x - 0 is x exactly, -0 included: one broadcast */
}

/* m ? a : b, lane by lane (C has no vector ?:) */
KB_INLINE KB_V KB_VFN(select)(KB_M m, KB_V a, KB_V b)
{
    return (KB_V)(((KB_M)a & m) | ((KB_M)b & ~m));
}

/* sin and cos of |r| <= pi/4 (fdlibm __kernel_sin / __kernel_cos, tail 0) */
KB_INLINE void KB_VFN(sincos_kernel)(KB_V r, KB_V *s, KB_V *c)
{
    const KB_V z = r * r, v = z * r;
    const KB_V ps = 8.33333333332248946124e-03 +
                     z * (-1.98412698298579493134e-04 +
                          z * (2.75573137070700676789e-06 +
                               z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
    *s = r + v * (-1.66666666666666324348e-01 + z * ps);

    const KB_V pc = z * (4.16666666666666019037e-02 +
                          z * (-1.38888888888741095749e-03 +
                               z * (2.48015872894767294178e-05 +
                                    z * (-2.75573143513906633035e-07 +
                                         z * (2.08757232129817482790e-09 +
                                              z * -1.13596475577881948265e-11)))));
    /* 1 - z/2 + z pc, with the rounding of 1 - z/2 put back */
    const KB_V hz = 0.5 * z, w = 1.0 - hz;
    *c = w + (((1.0 - w) - hz) + z * pc);
}

/* s = sin x, c = cos x for |x| <= KB_VMATH_MAX_ARG (the caller's to ensure). */
KB_INLINE void KB_VFN(sincos)(KB_V x, KB_V *s, KB_V *c)
{
    /* k = nearest integer to x * 2/pi, by the 1.5 * 2^52 rounding trick;
     * its low bits are the quadrant */
    const double shift = 6755399441055744.0;
    const KB_V kf = (x * 6.36619772367581382433e-01 + shift) - shift;
    const KB_M quadrant = (KB_M)(kf + shift) & 3;
    /* r = x - k pi/2 in two steps: k * pio2_1 is exact for |k| < 2^20 */
    const KB_V r = (x - kf * 1.57079632673412561417e+00) - kf * 6.07710050650619224932e-11;
    KB_V sr, cr;
    KB_VFN(sincos_kernel)(r, &sr, &cr);
    /* quadrant 1: (cos r, -sin r), 2: (-sin r, -cos r), 3: (-cos r, sin r) */
    const KB_M odd = (quadrant & 1) != 0;
    const KB_V s0 = KB_VFN(select)(odd, cr, sr), c0 = KB_VFN(select)(odd, sr, cr);
    const KB_M neg_s = (quadrant & 2) != 0, neg_c = ((quadrant + 1) & 2) != 0;
    *s = KB_VFN(select)(neg_s, -s0, s0);
    *c = KB_VFN(select)(neg_c, -c0, c0);
}

/* atan(t) for |t| <= 7/16 (fdlibm's polynomial) */
KB_INLINE KB_V KB_VFN(atan_kernel)(KB_V t)
{
    const KB_V z = t * t, w = z * z;
    const KB_V s1 = z * (3.33333333333329318027e-01 +
                          w * (1.42857142725034663711e-01 +
                               w * (9.09088713343650656196e-02 +
                                    w * (6.66107313738753120669e-02 +
                                         w * (4.97687799461593236017e-02 +
                                              w * 1.62858201153657823623e-02)))));
    const KB_V s2 = w * (-1.99999999998764832476e-01 +
                          w * (-1.11111104054623557880e-01 +
                               w * (-7.69187620504482999495e-02 +
                                    w * (-5.83357013379057348645e-02 +
                                         w * -3.65315727442169155270e-02))));
    return t - t * (s1 + s2);
}

/* atan2(y, x) for y >= 0 and (x, y) != (0, 0), finite: in [0, pi]. */
KB_INLINE KB_V KB_VFN(atan2_upper)(KB_V y, KB_V x)
{
    const double pio4_hi = 7.85398163397448278999e-01, pio4_lo = 3.06161699786838301793e-17;
    const double pio2_hi = 1.57079632679489655800e+00, pio2_lo = 6.12323399573676603587e-17;
    const double pi_hi = 3.14159265358979311600e+00, pi_lo = 1.22464679914735317720e-16;
    const KB_V ax = KB_VFN(select)(x < 0.0, -x, x);
    const KB_M steep = y > ax;  /* then atan2 = pi/2 -+ atan(|x| / y) */
    const KB_V a = KB_VFN(select)(steep, ax, y), b = KB_VFN(select)(steep, y, ax);
    /* a / b in [0, 1]; above tan(pi/8), atan(a / b) = pi/4 + atan(t) with
     * t = (a / b - 1) / (a / b + 1) = (a - b) / (a + b): one division either
     * way (the divider is squad's narrowest port) */
    const KB_M upper = a > 0.41421356237309503 * b;
    const KB_V t = KB_VFN(select)(upper, a - b, a) / KB_VFN(select)(upper, a + b, b);
    const KB_V at = KB_VFN(atan_kernel)(t);
    const KB_V theta = KB_VFN(select)(upper, pio4_hi + (at + pio4_lo), at);
    /* theta = atan(a / b) in [0, pi/4]; now place it */
    const KB_M left = x < 0.0;
    const KB_V flat = KB_VFN(select)(left, pi_hi - (theta - pi_lo), theta);
    const KB_V steep_angle =
        KB_VFN(select)(left, pio2_hi + (theta + pio2_lo), pio2_hi - (theta - pio2_lo));
    return KB_VFN(select)(steep, steep_angle, flat);
}

KB_INLINE KB_V KB_VFN(sqrt)(KB_V x)
{
    /* lane by lane: sqrt is correctly rounded everywhere, and compilers
     * turn this into one vector instruction where they can */
    KB_V r;
    for (int l = 0; l < KB_LANES; l++)
        r[l] = sqrt(x[l]);
    return r;
}

